"""A fake ``phase.Host`` for the phases' own tests: the phases of one peer, no PeerSession.

:class:`FakeHost` holds what a phase may read (:class:`~moska_p2p.protocol.phase.Host`) and
records what it does: the messages it sends (their typed bodies, signed as a peer would, and
applied here at once), the events it emits, the games it begins. Its stage moves through the
same checked edges as a session's. :class:`FakeTable` wires a few of them: it delivers every
sent frame to the other hosts in each sender's order, keeps a message that the stage table or
its handler says must wait for later, and lets the phase of the stage move on, so a test can
bring a table to any stage and then hand one phase a message of its choosing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TypeVar

from moska_p2p.crypto.identity import Identity
from moska_p2p.engine import Game, make_rules
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import stages
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig, table_id
from moska_p2p.protocol.deck_phase import DeckPhase
from moska_p2p.protocol.frames import encode_frame, open_frame
from moska_p2p.protocol.phase import Handler, Peer, Phase, Wait
from moska_p2p.protocol.play_phase import PlayPhase
from moska_p2p.protocol.seating import Seating
from moska_p2p.protocol.shuffling import Shuffling


def identities(n: int) -> list[Identity]:
    return [Identity.from_seed(bytes([40 + i]) * 32) for i in range(n)]


def config_for(players: int, preset: str = "moska", **options: str) -> TableConfig:
    return TableConfig(preset, players, bytes([players]) * 32, options, 30.0)


def secret(label: str, key: bytes) -> bytes:
    """A peer's random bytes, fixed by its key (the tests repeat)."""
    return hashlib.sha256(label.encode() + key).digest()


B = TypeVar("B", bound=m.Body)


def signed(
    identity: Identity,
    body: m.Body,
    *,
    game: bytes,
    seq: int,
    prev: bytes = m.NO_PREVIOUS,
    heads: Sequence[tuple[int, bytes]] = (),
) -> tuple[m.Message, bytes]:
    """A message as ``identity`` signs it, and its frame (length prefix included): a forgery
    is an honest body changed with ``dataclasses.replace``."""
    kind = m.kind_of(body)
    payload = m.encode_body(game, identity.public_bytes, seq, prev, body, heads)
    frame = encode_frame(kind, payload, identity.sign(kind, payload))
    return m.parse_payload(payload), frame


class FakeHost:
    """One peer's phases over a host that records instead of routing (see the module)."""

    def __init__(
        self,
        identity: Identity | None,
        config: TableConfig,
        roster: Sequence[bytes],
        name: str = "",
    ) -> None:
        self.identity = identity
        self.me = identity.public_bytes if identity is not None else b""
        self.config = config
        self.roster = sorted(roster)
        self.peers = {key: Peer(key=key, index=i) for i, key in enumerate(self.roster)}
        self.table_id = table_id(config, self.roster)
        self.game_id: bytes | None = None
        self.transcript: list[bytes] = []
        self.events: list[v.Output] = []
        self.sent: list[m.Body] = []
        self.frames: list[bytes] = []  # every frame this host signed, in order
        self.begun: list[bytes] = []  # the game ids begin_game was given
        self.claims_sent = 0
        self._stage = stages.HELLO
        rules = make_rules(config.preset, **dict(config.options))
        self.size = 52 - 4 * rules.lowest_rank
        cards = list(range(52 - self.size, 52))
        self.seating = Seating(
            self, self.table_id, name, secret("nonce", self.me), secret("seat", self.me)
        )
        self.shuffling = Shuffling(self, secret("deck", self.me), cards)
        self.play_phase = PlayPhase(self)
        self.phases: dict[str, Phase] = {
            stages.SEATING: self.seating,
            stages.SHUFFLING: self.shuffling,
            stages.PLAYING: self.play_phase,
        }
        self.handlers: dict[str, Handler] = {}
        for phase in self.phases.values():
            self.handlers |= phase.handlers()

    # -- phase.Host

    @property
    def stage(self) -> int:
        return self._stage

    def enter(self, stage: int) -> None:
        stages.check_edge(self._stage, stage)
        self._stage = stage

    @property
    def is_observer(self) -> bool:
        return self.identity is None

    @property
    def seats(self) -> list[bytes]:
        return self.seating.seats

    @property
    def seat_of(self) -> dict[bytes, int]:
        return self.seating.seat_of

    @property
    def my_seat(self) -> int:
        return self.seat_of.get(self.me, -1)

    @property
    def dealer(self) -> int:
        return self.seating.dealer

    @property
    def deck(self) -> DeckPhase | None:
        return self.shuffling.deck

    @property
    def game(self) -> Game | None:
        return self.play_phase.game

    def emit(self, output: v.Output) -> None:
        self.events.append(output)

    def begin_game(self, game_id: bytes) -> None:
        self.game_id = game_id
        self.begun.append(game_id)

    def send(self, body: m.Body) -> None:
        """Sign as this peer and apply here at once, as a session does."""
        assert self.identity is not None
        me = self.peers[self.me]
        game = self.table_id if isinstance(body, m.HelloBody) else self.game_id
        assert game is not None
        msg, frame = signed(self.identity, body, game=game, seq=me.next_seq, prev=me.last_hash)
        self.sent.append(body)
        self.frames.append(frame)
        me.accept(msg, frame)
        self.apply(me, msg, frame)

    def send_claim(self) -> None:
        self.claims_sent += 1
        self.play_phase.send_claim()

    # -- what a test drives

    def apply(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        """Hand a message to its phase's handler (the transcript keeps it unless it waits)."""
        at = len(self.transcript)
        self.transcript.append(frame)
        try:
            self.handlers[msg.type](peer, msg, frame)
        except Wait:
            del self.transcript[at]
            raise

    def act(self) -> bool:
        """Let the stage's phase move on, and begin the next phase when it hands over."""
        phase = self.phases.get(stages.PHASE[self.stage])
        if phase is None or not phase.advance():
            return False
        following = self.phases.get(stages.PHASE[self.stage])
        if following is not None and following is not phase:
            following.begin()
        return True

    def last(self, kind: type[B]) -> B:
        """The body of the last message of ``kind`` this host sent."""
        return next(body for body in reversed(self.sent) if isinstance(body, kind))

    def kinds_sent(self) -> list[str]:
        """The message types this host sent, in order."""
        return [m.kind_of(body) for body in self.sent]


class FakeTable:
    """A few fake hosts, every frame delivered to the others in its sender's order."""

    def __init__(self, players: int, preset: str = "moska", **options: str) -> None:
        self.identities = identities(players)
        self.config = config_for(players, preset, **options)
        roster = [i.public_bytes for i in self.identities]
        self.hosts = [
            FakeHost(i, self.config, roster, f"p{n}") for n, i in enumerate(self.identities)
        ]
        self.delivered = [[0] * players for _ in range(players)]  # [to][from]: frames given
        self.held: set[str] = set()  # kinds not delivered (a test's hand on the network)

    def host(self, key: bytes) -> FakeHost:
        return next(h for h in self.hosts if h.me == key)

    def at_seat(self, seat: int) -> FakeHost:
        return next(h for h in self.hosts if h.my_seat == seat)

    def add_observer(self) -> FakeHost:
        roster = [i.public_bytes for i in self.identities]
        observer = FakeHost(None, self.config, roster)
        self.hosts.append(observer)
        for row in self.delivered:
            row.append(0)
        self.delivered.append([0] * len(self.hosts))
        return observer

    def identity(self, key: bytes) -> Identity:
        return next(i for i in self.identities if i.public_bytes == key)

    def start(self) -> None:
        for host in self.hosts:
            if not host.is_observer:  # an observer only follows
                host.seating.begin()
        self.run()

    def run(self, until: Callable[[], bool] = lambda: False, limit: int = 100_000) -> None:
        """Deliver and act until nothing moves (or ``until`` holds)."""
        for _ in range(limit):
            if until() or not self._step():
                return
        raise AssertionError("the table never settled")

    def _step(self) -> bool:
        for to, host in enumerate(self.hosts):
            for sender, source in enumerate(self.hosts):
                if sender == to:
                    continue
                n = self.delivered[to][sender]
                if n < len(source.frames) and self._deliver(host, source, source.frames[n]):
                    self.delivered[to][sender] += 1
                    return True
        return any(host.act() for host in self.hosts)

    def _deliver(self, host: FakeHost, source: FakeHost, frame: bytes) -> bool:
        """Whether the frame applied at ``host`` (a message that waits stays for later)."""
        msg = message_of(frame)
        if msg.type in self.held or stages.rule(host.stage, msg.type) != stages.APPLY:
            return False  # held back, or early for the stage (the stage table's WAIT)
        peer = host.peers[source.me]
        before = (peer.next_seq, peer.last_hash)
        peer.accept(msg, frame)
        try:
            host.apply(peer, msg, frame)
        except Wait:
            peer.unaccept(msg.seq, before)
            return False
        return True

    def play_out(self, limit: int = 2000) -> None:
        """Moves by whoever is to act (its first legal move) until the game is over."""
        for _ in range(limit):
            self.run()
            mover = next((h for h in self.hosts if h.stage == stages.PLAY and _my_turn(h)), None)
            if mover is None:
                return
            assert mover.game is not None
            move = mover.game.legal_moves()[0]
            mover.send(mover.play_phase.move_body(move))
        raise AssertionError("the game did not end")


def _my_turn(host: FakeHost) -> bool:
    g = host.game
    return g is not None and g.to_act_seat == host.my_seat and not g.hidden[host.my_seat]


def message_of(frame: bytes) -> m.Message:
    """The message a frame carries (length prefix included)."""
    return m.parse_payload(open_frame(frame[4:])[1])
