"""What a phase of the game gets from the session that routes frames to it.

:class:`~.session.PeerSession` takes a frame in (:mod:`.intake`), puts each sender's messages
in order and hands every message to the phase that handles its kind in the current stage (the
table in :mod:`.stages`). A phase (:mod:`.seating`, :mod:`.shuffling`, :mod:`.play_phase` with
:mod:`.reveals`) answers in one of three ways: it applies the message, it raises
:class:`Wait` (the message arrived early: it stays queued), or it raises :class:`Violation`
(a verdict naming the sender). What a phase may read or do of the session is :class:`Host`,
and nothing else, so a phase never imports the session (no import circle) and can be read on
its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from . import messages as m
from . import verdict as v
from .ordering import SenderLog

if TYPE_CHECKING:
    from ..engine import Game
    from .config import TableConfig
    from .deck_phase import DeckPhase


Handler = Callable[["Peer", m.Message, bytes], None]
"""What applies one message (its sender, the message, its signed frame), or raises
:class:`Wait` or :class:`Violation`."""


class Wait(Exception):
    """The message cannot apply yet: keep it in its sender's queue."""


class Violation(Exception):
    """A signed message broke a rule: the session stops with a verdict."""

    def __init__(self, kind: str, sender: bytes, reason: str, evidence: Sequence[bytes] = ()):
        super().__init__(reason)
        self.kind = kind
        self.sender = sender
        self.reason = reason
        self.evidence = tuple(evidence)


@dataclass
class Peer(SenderLog):
    """One roster member: its order (:class:`~.ordering.SenderLog`) and what it said."""

    key: bytes = b""
    index: int = 0
    name: str = ""
    nonce: bytes = b""
    seat_commit: bytes = b""
    seat_secret: bytes = b""
    result: tuple[bytes, tuple[int, ...]] | None = None
    heard_at: float = 0.0  # when its last message applied here (this peer's clock)
    contact_at: float = 0.0  # when a new signed frame of it was last admitted here (§15.1)
    last_act: int = -1  # its last applied message that is not a keep-alive or a statement


class Host(Protocol):
    """The session as its phases see it: the table, the stage, and the way out.

    ``begin_game`` sets the game id once every hello is in (and admits the frames that
    came before it); ``send`` signs a message as this peer (the typed body of its kind, the
    kind read from the body's class), applies it here at once (so the transcript keeps cause
    before effect) and queues it for every other peer; ``send_claim`` sends this peer's D3
    claim for the round under way (the session's own method, so that a test can make a lying
    client by replacing it); ``emit`` adds an event to what the session returns.
    """

    transcript: list[bytes]

    @property
    def stage(self) -> int: ...

    def enter(self, stage: int) -> None:
        """Move to ``stage`` (:mod:`.stages`): only along an edge of ``stages.EDGES``."""

    @property
    def game_id(self) -> bytes | None: ...

    @property
    def config(self) -> TableConfig: ...

    @property
    def me(self) -> bytes: ...

    @property
    def roster(self) -> list[bytes]: ...

    @property
    def peers(self) -> dict[bytes, Peer]: ...

    @property
    def is_observer(self) -> bool: ...

    @property
    def size(self) -> int: ...

    @property
    def seats(self) -> list[bytes]: ...

    @property
    def seat_of(self) -> dict[bytes, int]: ...

    @property
    def my_seat(self) -> int: ...

    @property
    def dealer(self) -> int: ...

    @property
    def deck(self) -> DeckPhase | None: ...

    @property
    def game(self) -> Game | None: ...

    def emit(self, output: v.Output) -> None: ...

    def begin_game(self, game_id: bytes) -> None: ...

    def send(self, body: m.Body) -> None: ...

    def send_claim(self) -> None: ...


class Phase(Protocol):
    """A phase of the game: a small state machine over its stages (:mod:`.stages`)."""

    def begin(self) -> None:
        """Enter the phase's first stage: send what this peer owes there."""

    def advance(self) -> bool:
        """Move on when every peer has done its part: to the phase's next stage, or out of
        the phase (the session then begins the next one). Whether the stage changed."""

    def waiting_on(self) -> list[bytes]:
        """The peers whose messages the current stage waits for."""

    def handlers(self) -> dict[str, Handler]:
        """The message kinds the phase takes, each with its handler (``on_<kind>``)."""
