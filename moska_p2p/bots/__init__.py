"""Bots: the bot API, the built-in bots and the ways to load one by name, path or command.

Every built-in bot lives in this package (``random``, ``greedy``, ``shedder`` in
:mod:`.builtin`, ``expert`` in :mod:`.expert`, the strong ``ismcts`` in :mod:`.ismcts` with
its learned value network in :mod:`.network`), so the installed wheel needs no other
top-level package; the repository's ``bots/`` folder only holds examples loaded by path.
:mod:`.levels` names the strengths of ``moska play --level``, :mod:`.encoding` gives views
and moves as numbers (the network's input, the ``rl`` environment's ids).

``__all__`` is what the other packages use.
"""

from .api import BaseBot, Bot, BotError, Event, GameResult
from .builtin import GreedyBot, RandomBot, ShedderBot
from .encoding import DENSE_MOVE_IDS, VIEW_SIZE, encode_view, move_id
from .levels import DEFAULT_LEVEL, HINT_BOT, LEVELS, LevelError, level_named
from .loader import BUILTIN_BOTS, BotLoadError, load_bot

__all__ = [
    "BUILTIN_BOTS",
    "DEFAULT_LEVEL",
    "DENSE_MOVE_IDS",
    "HINT_BOT",
    "LEVELS",
    "VIEW_SIZE",
    "BaseBot",
    "Bot",
    "BotError",
    "BotLoadError",
    "Event",
    "GameResult",
    "GreedyBot",
    "LevelError",
    "RandomBot",
    "ShedderBot",
    "encode_view",
    "level_named",
    "load_bot",
    "move_id",
]
