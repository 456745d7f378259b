"""A game as a list of states (:class:`Replay`): what each reader of a game file makes (an
arena record, a peer transcript, a text record) and what the replay screen, ``moska export``
and the text record read.

Its own module, below both :mod:`.replay` (the readers and the screen) and
:mod:`.record_text` (the text record, which :mod:`.replay` reads files through): with the
class in :mod:`.replay` the two modules imported each other.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..engine import Game


@dataclass
class Replay:
    """A game as a list of states: ``states[0]`` before the first move, ``states[i]``
    after move ``i`` (``moves[i - 1]``)."""

    preset: str
    names: list[str]
    states: list[Game]
    moves: list[tuple[int, str]]
    full: bool  # every face known: any seat's view and open hands are possible
    owner: int = 0  # the seat whose view to show by default (a transcript's writer)
    source: str = ""
    losers: list[int] = field(default_factory=list)
    # Non-empty: the file did not verify (or is an unsigned copy) and this says why; every
    # screen of the replay shows it, so a forgery is never taken for a game.
    warning: str = ""
    # What the source says about the game beyond its moves (the text record's headers:
    # Termination, Table, FingerprintN, Writer, Date...), for ``moska export``.
    headers: dict[str, str] = field(default_factory=dict)
    # The seat whose hidden cards the states hold open (a transcript's writer, opened with
    # its own secret): None when only public cards are known (and every seat when ``full``).
    opened: int | None = None

    @property
    def players(self) -> int:
        return len(self.names)
