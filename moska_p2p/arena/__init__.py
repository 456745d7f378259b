"""The arena: bots against bots on the engine alone, fast, with statistics."""

from ..table.local import GameRecord, play_game

__all__ = ["GameRecord", "play_game"]
