"""Levels for people: the opponents ``moska play --level`` seats, from easy to strongest.

A person should not need to know the bots' names and options to find a good game: each
level is one built-in bot with settings chosen and measured against ``expert`` in moska,
durak and mustamaija (docs/LEVELS.md, made by ``scripts/measure_levels.py``). The searching
levels think for a fixed time, not a fixed number of iterations, so that a move never keeps
a person waiting more than about half a second, on any machine; a faster machine (or the
compiled engine) makes them stronger, never slower.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Level:
    """One level: its name, the bot of every other seat, and a line for ``--help``."""

    name: str
    bot: str
    about: str


LEVELS: dict[str, Level] = {
    level.name: level
    for level in (
        Level("easy", "greedy", "the best-looking card each time, for a first game"),
        Level("medium", "expert", "a careful player's rules of thumb, a fair fight"),
        Level("hard", "ismcts:time=0.1", "a search of the game, 0.1 s a move"),
        Level(
            "strongest",
            "ismcts:time=0.5,prior=1",
            "a search of the game, 0.5 s a move, with its learned policy prior",
        ),
    )
}
DEFAULT_LEVEL = "medium"
# The hint command asks the strongest level what it would play.
HINT_BOT = LEVELS["strongest"].bot


class LevelError(ValueError):
    """A level name that is not one of :data:`LEVELS`."""


def level_named(name: str) -> Level:
    """The level called ``name`` (any case), or :class:`LevelError` naming the choices."""
    level = LEVELS.get(name.strip().lower())
    if level is None:
        raise LevelError(f'unknown level "{name}": choose one of {", ".join(LEVELS)}')
    return level
