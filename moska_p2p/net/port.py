"""The seat's side of the node: what a :class:`Player` is told and what it may do at the
table through its :class:`GamePort`.

The table layer (:mod:`moska_p2p.table.networked`: a bot or a person) implements
:class:`Player`; the node hands it a :class:`GamePort` when a game begins. The port reads the
node only through :class:`PortOwner`, so this module needs nothing else of the network layer
(the layering test forbids a circle of imports, annotations included).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

import trio

from ..engine import Move, View
from ..protocol import verdict as v
from ..protocol.abandonment import CONTACT
from ..protocol.session import PeerSession
from ..protocol.stages import STAGES


class PortOwner(Protocol):
    """What a :class:`GamePort` uses of its node (the game runner, :mod:`.runner`)."""

    session: PeerSession | None
    over: trio.Event
    paths: FramePaths  # how each peer's frames reach this node

    @property
    def links(self) -> Mapping[bytes, object]:
        """The live game links, by the other peer's key (a peer with none is unreachable)."""
        ...

    async def changed(self) -> None:
        """Return at the session's next change."""
        ...

    def handle(
        self, outputs: Sequence[v.Output], echo_of: tuple[bytes, bytes] | None = None
    ) -> None:
        """Act on the session's outputs: the transcript, the links, the player."""
        ...

    def leave(self, reason: str, *, interrupted: bool = False) -> None:
        """Leave the table with a signed ``leave``."""
        ...


@dataclass(frozen=True)
class TableWait:
    """What the table waits for now, for a screen to say while nothing moves: the stage
    (:data:`~moska_p2p.protocol.stages.STAGES`' names: ``seat``, ``shuffle1``, ``play``...),
    the peers it waits for (their seats, -1 before the seats are drawn, and the names they
    gave), which of them are out of contact (nobody has heard them: their grace runs), and
    the seconds left on the clock that runs out first: the contact clock of those out of
    contact if any ("bob is not answering: the game waits 45 s for them"), else the move
    clock (PROTOCOL.md §15.1)."""

    stage: str
    seats: tuple[int, ...]
    names: tuple[str, ...]
    unreachable: tuple[bool, ...]
    left: float
    through: tuple[tuple[int, int], ...] = ()  # (seat, seat its frames come through)
    cut_off: tuple[tuple[int, float], ...] = ()
    """(seat, seconds since its last frame) for each waited-for peer still within its move
    clock that this peer has no link to and whose frames come through nobody: the protocol
    calls it out of contact only after three missed keep-alives (minutes at a person's
    table), but a person should know at once that its connection is gone."""


class FramePaths:
    """How each peer's frames reach this one: the link that brought its latest new frame,
    and when one last came on its own link. A peer whose own link is gone, or carries
    nothing, is still in contact when a third peer relays its frames (sync by heads,
    PROTOCOL.md §8.3); the screens say so ("bob's frames come through cy")."""

    def __init__(self) -> None:
        self.via: dict[bytes, bytes] = {}  # sender -> the link its latest new frame came on
        self.direct_at: dict[bytes, float] = {}  # sender -> its latest new frame on its link

    def saw(self, sender: bytes, link: bytes, now: float) -> None:
        """A new frame of ``sender`` came on the link to ``link``."""
        self.via[sender] = link
        if sender == link:
            self.direct_at[sender] = now

    def detours(
        self, session: PeerSession, links: Mapping[bytes, object], now: float
    ) -> list[tuple[bytes, bytes]]:
        """(peer, the peer its frames come through) for every peer in contact here that
        nothing has come from on its own link for as long as it takes to be out of contact
        (its link is down, or carries nothing), in roster order."""
        clocks = session.abandonment
        out = []
        for key in session.roster:
            via = self.via.get(key)
            if via is None or via == key or key == session.me or via not in links:
                continue
            if not clocks.in_contact(key, now):
                continue
            if key in links and now - self.direct_at.get(key, -clocks.lapse) <= clocks.lapse:
                continue
            out.append((key, via))
        return out


def table_wait(
    session: PeerSession,
    links: Mapping[bytes, object],
    me: bytes,
    now: float,
    paths: FramePaths | None = None,
) -> TableWait:
    """The one place that reads "who and how long" out of a session (see :class:`TableWait`);
    this peer itself is left out (its own move, its own deck work, is no wait). A peer with
    live ``links`` of its own reads both clocks from the session; an observer (``links`` of
    every seat, no clock of its own, ``now`` its last progress) counts the move clock only."""
    stage = STAGES[session.stage] if session.stage < len(STAGES) else "stopped"
    moves = max(0.0, session.last_progress + session.config.timeout - now)
    if me not in session.peers:  # an observer: nobody's contact is known here
        keys = [key for key in session.waiting_on() if key != me]
        return TableWait(
            stage,
            tuple(session.seat_of.get(key, -1) for key in keys),
            tuple(session.peers[key].name if key in session.peers else "" for key in keys),
            tuple(key not in links for key in keys),
            moves,
        )
    status = session.waiting_status(now)
    gone = [w.left for w in status if w.clock == CONTACT]
    seat = session.seat_of.get
    detours = paths.detours(session, links, now) if paths is not None else []
    detoured = {key for key, _via in detours}
    return TableWait(
        stage,
        tuple(w.seat for w in status),
        tuple(w.name for w in status),
        tuple(w.clock == CONTACT for w in status),
        min(gone) if gone else min((w.left for w in status), default=moves),
        tuple((seat(key, -1), seat(via, -1)) for key, via in detours),
        tuple(
            (w.seat, w.silent_since)
            for w in status
            if w.clock != CONTACT and w.key not in links and w.key not in detoured
        ),
    )


class Player(Protocol):
    """Who plays this peer's seat: the table layer's side of the node (it lives above the
    network: :mod:`moska_p2p.table.networked`). Every method is called in the trio thread."""

    async def play(self, port: GamePort) -> None:
        """Play the game through ``port``, started when the game begins; may return early
        (after leaving). Cancelled when the node stops."""
        ...

    def seated(self, names: Sequence[str], seat: int) -> None:
        """The seats' names (printable) and this peer's seat, once the seats are drawn."""
        ...

    def moved(self, seat: int, move: str) -> None:
        """``seat`` played ``move`` (any seat, this one too), in the order of the game."""
        ...

    def ended(self, end: v.Finished | v.Stopped, moves: int) -> None:
        """The game is over (once): close whatever is open (a prompt), show the end."""
        ...

    def interrupt(self) -> bool:
        """Ctrl-C during the game. True: leave now; False: the player asks first (and, on a
        yes, leaves by :meth:`GamePort.leave`)."""
        ...

    async def closed(self) -> None:
        """Return when the player has shown the end (the node waits a few seconds at most)."""
        ...

    def next_game(self, summary: str) -> bool:
        """Between two games of a session: play the next one? ``summary`` is the session's
        score line. Called in a worker thread (a person may take a while to answer), within
        the table's timeout; a bot always continues, a person is asked (default no)."""
        ...


class GamePort:
    """What a :class:`Player` may do at the table: wait for its turn, see its view, play,
    leave. The node is the dealer: it checks nothing here the session does not check."""

    def __init__(self, node: PortOwner) -> None:
        self._node = node
        self._game = node.session  # a port serves one game of a session

    @property
    def seat(self) -> int:
        return self._session.my_seat

    @property
    def timeout(self) -> float:
        """The table's timeout: a seat that does not move within it loses by the others'
        verdict, so a player's own budget must be shorter."""
        return self._session.config.timeout

    @property
    def over(self) -> bool:
        return self._node.over.is_set() or self._node.session is not self._game

    @property
    def my_turn(self) -> bool:
        return not self.over and self._session.my_turn and self._session.game is not None

    @property
    def _session(self) -> PeerSession:
        session = self._node.session
        assert session is not None
        return session

    async def turn(self) -> bool:
        """Wait until it is this seat's turn (True) or the game is over (False)."""
        while not self.over:
            if self.my_turn:
                return True
            await self._node.changed()
        return False

    def view(self) -> View:
        """This seat's view now, of a copy of the game: a player may read it (search it, for
        a hint) in another thread while the game moves on."""
        game = self._session.game
        assert game is not None
        return game.copy().view(self.seat)

    @property
    def dealt(self) -> bool:
        """Whether the cards are dealt (from then on there is a :meth:`view`)."""
        return not self.over and self._session.game is not None

    def waiting(self) -> TableWait:
        """What the table waits for now (nothing while it is this seat's move)."""
        node, session = self._node, self._session
        return table_wait(session, node.links, session.me, trio.current_time(), node.paths)

    def legal_moves(self) -> list[Move]:
        return self._session.legal_moves()

    def state(self) -> str:
        """A token for the game's state now: :meth:`play` refuses a move chosen in another."""
        game = self._session.game
        assert game is not None
        return game.state_hash()

    def play(self, move: Move, state: str) -> bool:
        """Play ``move``, chosen in ``state``; False (nothing played) if the game moved on
        meanwhile. Raises :class:`~moska_p2p.engine.IllegalMove` (or the session's
        ``LocalError``) for a move the game refuses."""
        if not self.my_turn or self.state() != state:
            return False
        self._node.handle(self._session.play(move, trio.current_time()))
        return True

    def leave(self, reason: str, *, interrupted: bool = False) -> None:
        """Leave the table with a signed ``leave`` saying ``reason`` (a forfeit: the others'
        verdicts name this seat). ``interrupted``: the person asked to (exit code 130)."""
        self._node.leave(reason, interrupted=interrupted)
