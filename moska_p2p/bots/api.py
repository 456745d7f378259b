"""The bot API: a bot is any object with ``choose(view, legal_moves)``.

``choose`` receives the seat's :class:`~moska_p2p.engine.View` (never the full state) and
the list of legal moves, and returns one of them. Three optional hooks let a bot follow the
game: ``start_game(view)``, ``observe(event)`` after every move of any seat, and
``end_game(result)``. A bot that raises, returns a move not in the list or runs past its time
budget forfeits the game (the arena records the reason and goes on).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ..engine import Move, View


@runtime_checkable
class Bot(Protocol):
    """What the arena and the table need of a bot: one method."""

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        """Return one of ``legal_moves`` (the very object or an equal move)."""
        ...


@dataclass(frozen=True)
class Event:
    """A public event: ``seat`` played ``move`` (its text form is ``str(move)``)."""

    seat: int
    move: Move
    decision: str


@dataclass(frozen=True)
class GameResult:
    """How a game ended, as each bot's ``end_game`` hook sees it."""

    seat: int
    losers: tuple[int, ...]
    forfeit: int | None = None
    reason: str = ""
    moves: int = 0

    @property
    def lost(self) -> bool:
        return self.seat in self.losers


class BotError(Exception):
    """A bot failed: it raised, answered an illegal move, or ran out of time."""

    def __init__(self, seat: int, reason: str) -> None:
        super().__init__(f"seat {seat}: {reason}")
        self.seat = seat
        self.reason = reason


class BaseBot:
    """Convenience base class: a name and no-op hooks."""

    name = "bot"

    def start_game(self, view: View) -> None:
        """Called once before the first move, with this seat's view."""

    def observe(self, event: Event) -> None:
        """Called after every move of any seat."""

    def end_game(self, result: GameResult) -> None:
        """Called once when the game is over (or forfeited)."""

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        raise NotImplementedError
