"""Bots: the bot API, the built-in bots and the ways to load one by name, path or command."""

from .api import Bot, BotError, Event, GameResult
from .loader import BUILTIN_BOTS, load_bot

__all__ = ["BUILTIN_BOTS", "Bot", "BotError", "Event", "GameResult", "load_bot"]
