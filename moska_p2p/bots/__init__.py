"""Bots: the bot API, the built-in bots and the ways to load one by name, path or command.

Every built-in bot lives in this package (``random``, ``greedy``, ``shedder`` in
:mod:`.builtin`, the strong ``ismcts`` in :mod:`.ismcts`), so the installed wheel needs no
other top-level package; the repository's ``bots/`` folder only holds examples loaded by path.
"""

from .api import Bot, BotError, Event, GameResult
from .loader import BUILTIN_BOTS, load_bot

__all__ = ["BUILTIN_BOTS", "Bot", "BotError", "Event", "GameResult", "load_bot"]
