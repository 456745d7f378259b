"""The sans-IO peer: frames and local decisions in, frames and events out (h11's model).

A :class:`PeerSession` plays one game for one identity. It never touches a socket or a
clock: :meth:`receive` takes a frame's bytes, :meth:`play` a local move, :meth:`tick` the
time; each returns a list of outputs (frames to send to every other peer, and events). The
same class, with no identity, is the *observer* that ``moska verify`` runs over a transcript.

Stages (PROTOCOL.md): hello -> seat -> commit -> shuffle1 -> shuffle2 -> play -> audit ->
result. Every message is processed in its sender's sequence order; one that cannot apply yet
(a key for a draw this peer has not reached) waits in its sender's queue. A message that
breaks a rule stops the session with a :class:`~.verdict.Verdict`; a frame nobody can be
blamed for (bad signature, malformed, another game, a replay) is only :class:`Rejected`.
"""

from __future__ import annotations

import hashlib
import secrets as system_random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cards import CARD_TEXT
from ..crypto import deck as mp
from ..crypto.identity import Identity, verify
from ..engine import Game, IllegalMove, Move, new_game, new_hidden_game, parse_move
from ..engine.moves import ATTACK, BEG, EXCHANGE, KILL, SELF, TRANSFER, TRANSFER_SHOW
from . import messages as m
from . import verdict as v
from .config import TableConfig, game_id, table_id
from .frames import FrameError, encode_frame, open_frame

STAGES = ("hello", "seat", "commit", "shuffle1", "shuffle2", "play", "audit", "result", "done")
HELLO, SEAT, COMMIT, SHUFFLE1, SHUFFLE2, PLAY, AUDIT, RESULT, DONE = range(9)
STOPPED = 9


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


class LocalError(ValueError):
    """This peer asked for something the protocol does not allow now (like h11's
    LocalProtocolError): nothing was sent."""


@dataclass
class _Peer:
    key: bytes
    index: int
    name: str = ""
    nonce: bytes = b""
    seat_commit: bytes = b""
    seat_secret: bytes = b""
    seed_commit: bytes = b""
    seed: bytes = b""
    next_seq: int = 0
    last_hash: bytes = m.NO_PREVIOUS
    inbox: dict[int, tuple[m.Message, bytes]] = field(default_factory=dict)
    accepted: dict[int, tuple[bytes, bytes]] = field(default_factory=dict)  # seq -> hash, frame
    result: tuple[bytes, tuple[int, ...]] | None = None
    claim_rank: int = -1


def transcript_digest(frames: Sequence[bytes]) -> bytes:
    """The hash a peer signs in its result: every frame it processed, in order."""
    h = hashlib.sha256(b"moska-p2p/transcript\n")
    for frame in frames:
        h.update(struct.pack(">I", len(frame)))
        h.update(frame)
    return h.digest()


class PeerSession:
    """One peer of one game (see the module docstring).

    ``identity`` is ``None`` for an observer (a verifier): it sends nothing and checks
    everything. ``roster`` lists every player's public key (order does not matter).
    ``rng`` returns ``n`` random bytes (the OS by default; tests pass a seeded one).
    """

    def __init__(
        self,
        identity: Identity | None,
        config: TableConfig,
        roster: Sequence[bytes],
        *,
        name: str = "",
        rng: Callable[[int], bytes] | None = None,
        now: float = 0.0,
    ) -> None:
        if len(roster) != config.players or len(set(roster)) != len(roster):
            raise LocalError(f"the roster must list {config.players} distinct public keys")
        self.identity = identity
        self.me = identity.public_bytes if identity is not None else b""
        if identity is not None and self.me not in roster:
            raise LocalError("this identity is not on the roster")
        self.config = config
        self.roster = sorted(roster)
        self.peers = {key: _Peer(key, i) for i, key in enumerate(self.roster)}
        self.table_id = table_id(config, self.roster)
        self.game_id: bytes | None = None
        self.stage = HELLO
        self.verdict: v.Verdict | None = None
        self.transcript: list[bytes] = []
        self.name = name
        self._rng = rng or system_random.token_bytes
        self._out: list[v.Output] = []
        self._seen: set[bytes] = set()
        self._limbo: list[tuple[m.Message, bytes]] = []
        self.last_progress = now
        self._now = now
        # Seating
        self.seats: list[bytes] = []
        self.seat_of: dict[bytes, int] = {}
        self.dealer = -1
        # Deck
        rules_size = 52 - 4 * config_rules(config).lowest_rank
        self.size = rules_size
        self.cards = list(range(52 - rules_size, 52))
        self.pass1: list[list[bytes]] = []
        self.pass2: list[list[bytes]] = []
        self.key_commits: list[list[bytes]] = []
        self.deck_points: list[bytes] = []
        self.table_points: dict[bytes, int] = {}
        self.keys: dict[tuple[int, int], bytes] = {}
        self.owed: dict[tuple[int, int], float] = {}
        self.want_face: dict[int, int] = {}  # position -> -1 (public) or my seat
        self._my_secrets: mp.DeckSecrets | None = None
        self._nonce = self._rng(32)
        self._seat_secret = self._rng(32)
        self._seed = self._rng(32)
        # Game
        self.game: Game | None = None
        self.moves: list[tuple[int, str]] = []
        self.state_trail: list[str] = []
        self._past_states: set[str] = set()
        self.claim_rank = -1
        self.claims: dict[int, tuple[int, int] | None] = {}  # seat -> (position, card)
        self.claim_log: list[tuple[int, int, int | None]] = []  # (rank, seat, position)
        self.final_hash = ""
        self.losers: tuple[int, ...] = ()
        self.audit_caller: bytes | None = None

    # ------------------------------------------------------------------ public API

    @property
    def my_seat(self) -> int:
        return self.seat_of.get(self.me, -1)

    @property
    def is_observer(self) -> bool:
        return self.identity is None

    @property
    def my_turn(self) -> bool:
        g = self.game
        return (
            self.stage == PLAY
            and g is not None
            and g.to_act is not None
            and g.to_act == self.my_seat
            and not g.hidden[self.my_seat]
        )

    def legal_moves(self) -> list[Move]:
        if not self.my_turn or self.game is None:
            return []
        return self.game.legal_moves()

    def start(self, now: float = 0.0) -> list[v.Output]:
        """Send this peer's hello (a peer calls it once, at the start)."""
        self._now = now
        if self.identity is None:
            raise LocalError("an observer sends nothing")
        if self.peers[self.me].next_seq:
            raise LocalError("the session has started already")
        self.last_progress = now
        self._send(
            m.HELLO,
            {
                "name": self.name[: m.MAX_NAME],
                "nonce": self._nonce,
                "seat_commit": _hash(b"moska-p2p/seat", self._seat_secret),
                "config": self.config.to_wire(),
                "roster": self.roster,
            },
        )
        self._pump(now)
        return self._drain()

    def receive(self, frame: bytes, now: float = 0.0) -> list[v.Output]:
        """Take one frame (length prefix included, as on the wire or in a transcript)."""
        self._now = now
        if self.stage in (DONE, STOPPED):
            return self._drain()  # the game is over: a late frame (a goodbye) changes nothing
        try:
            body = frame[4:] if len(frame) >= 4 else frame
            if len(frame) < 4 or struct.unpack(">I", frame[:4])[0] != len(body):
                raise FrameError("the length prefix does not match the frame")
            payload, signature = open_frame(body)
            msg = m.parse_payload(payload)
        except FrameError as error:
            self._out.append(v.Rejected(f"malformed frame: {error}"))
            return self._drain()
        if msg.hash in self._seen:
            return self._drain()  # a copy (relays make copies normal; a replay changes nothing)
        peer = self.peers.get(msg.sender)
        if peer is None:
            self._out.append(v.Rejected("a frame from a key that is not at this table"))
            return self._drain()
        if not verify(msg.sender, payload, signature):
            self._out.append(v.Rejected(f"a forged signature (claims seq {msg.seq})"))
            return self._drain()
        self._admit(msg, frame, now)
        self._pump(now)
        return self._drain()

    def play(self, move: Move | str, now: float = 0.0) -> list[v.Output]:
        """Play this peer's move (it must be its turn); raises IllegalMove or LocalError."""
        self._now = now
        g = self.game
        if not self.my_turn or g is None:
            raise LocalError("it is not this peer's turn")
        parsed = parse_move(move) if isinstance(move, str) else move
        trial = g.copy()
        trial.play(parsed)  # raises IllegalMove: nothing is sent
        seat = self.my_seat
        cards = []
        for card in _hand_cards(g, parsed):
            if not g.shown[seat] >> card & 1:
                pos = g.pos_of[card]
                cards.append([pos, self._secrets().keys[pos]])
        self._send(
            m.MOVE,
            {"move": str(parsed), "state": bytes.fromhex(g.state_hash()), "cards": cards},
        )
        self._pump(now)
        return self._drain()

    def leave(self, reason: str, now: float = 0.0) -> list[v.Output]:
        """Leave the table: a signed ``leave`` tells the others why, and the game stops."""
        self._now = now
        if self.identity is None:
            raise LocalError("an observer has no seat to leave")
        if self.stage not in (DONE, STOPPED):
            try:
                self._send(m.LEAVE, {"reason": reason[:200]})
            except Violation as violation:
                self._violation(violation)
        return self._drain()

    def sync_state(self) -> dict[bytes, int]:
        """For each sender, the sequence number of the next message this peer lacks: what
        a reconnecting peer tells the others so they send it what it missed."""
        return {key: peer.next_seq + _run_length(peer) for key, peer in self.peers.items()}

    def frames_after(self, have: dict[bytes, int]) -> list[bytes]:
        """Every frame this peer holds that the other side lacks (by ``have``), in each
        sender's order: the answer to a reconnecting peer's :meth:`sync_state`."""
        out: list[bytes] = []
        for key, peer in self.peers.items():
            start = have.get(key, 0)
            frames = {seq: frame for seq, (_, frame) in peer.accepted.items() if seq >= start}
            frames |= {seq: frame for seq, (_, frame) in peer.inbox.items() if seq >= start}
            out.extend(frames[seq] for seq in sorted(frames))
        return out

    @classmethod
    def resume(
        cls,
        identity: Identity,
        config: TableConfig,
        roster: Sequence[bytes],
        secret: bytes,
        frames: Sequence[bytes],
        *,
        name: str = "",
        now: float = 0.0,
    ) -> tuple[PeerSession, list[v.Output]]:
        """Rebuild a peer after a crash from its per-game secret and its transcript.

        Everything the peer sends is a deterministic function of the secret and what it
        received (Ed25519 signatures are deterministic), so starting again and feeding the
        transcript regenerates the same frames; the copies in the transcript are dropped as
        duplicates and the peer's own moves apply when their turn comes.
        """
        session = cls(identity, config, roster, name=name, rng=drbg(secret), now=now)
        outputs = session.start(now)
        for frame in frames:
            outputs += session.receive(frame, now)
        return session, outputs

    def craft(
        self,
        kind: str,
        body: dict[str, Any],
        *,
        seq: int | None = None,
        prev: bytes | None = None,
        game: bytes | None = None,
    ) -> bytes:
        """Sign a message as this peer would, without applying or sending it.

        For tests and forensics: the harness uses it to make a cheating peer (an illegal
        move, two different moves with one sequence number...). An honest peer never needs it.
        """
        if self.identity is None:
            raise LocalError("an observer signs nothing")
        me = self.peers[self.me]
        gid = game or (self.table_id if kind == m.HELLO else self.game_id)
        assert gid is not None
        payload = m.encode_payload(
            gid,
            self.me,
            me.next_seq if seq is None else seq,
            me.last_hash if prev is None else prev,
            kind,
            body,
        )
        return encode_frame(payload, self.identity.sign(payload))

    def tick(self, now: float) -> list[v.Output]:
        """Let time pass: a peer that owes an answer for longer than the timeout abandons."""
        self._now = now
        if self.stage in (DONE, STOPPED):
            return self._drain()
        waiting = self.waiting_on()
        if waiting and now - self.last_progress > self.config.timeout:
            self._stop(
                v.Verdict(
                    v.TIMEOUT,
                    tuple(self.seat_of.get(k, -1) for k in waiting),
                    tuple(waiting),
                    f"did not answer within {self.config.timeout:g} s",
                )
            )
        return self._drain()

    def waiting_on(self) -> list[bytes]:
        """The peers this session waits for, in roster order."""
        stage = self.stage
        if stage == HELLO:
            return [k for k in self.roster if not self.peers[k].nonce]
        if stage == SEAT:
            return [k for k in self.roster if not self.peers[k].seat_secret]
        if stage == COMMIT:
            return [k for k in self.roster if not self.peers[k].seed_commit]
        if stage == SHUFFLE1:
            return [self.seats[len(self.pass1)]]
        if stage == SHUFFLE2:
            return [self.seats[len(self.pass2)]]
        if stage == PLAY:
            owing = {seat for seat, _ in self.owed}
            g = self.game
            if g is not None and g.to_act_seat >= 0 and not owing:
                owing.add(g.to_act_seat)
            if g is not None and g.awaiting_lowest_trump:
                owing |= {s for s in range(len(self.seats)) if s not in self.claims}
            return [self.seats[s] for s in sorted(owing)]
        if stage == AUDIT:
            return [k for k in self.roster if not self.peers[k].seed]
        if stage == RESULT:
            return [k for k in self.roster if self.peers[k].result is None]
        return []

    # ------------------------------------------------------------------ machinery

    def _drain(self) -> list[v.Output]:
        out, self._out = self._out, []
        return out

    def _secrets(self) -> mp.DeckSecrets:
        if self._my_secrets is None:
            assert self.game_id is not None
            self._my_secrets = mp.DeckSecrets.from_seed(
                self._seed, self.game_id, self.my_seat, self.size
            )
        return self._my_secrets

    def _send(self, kind: str, body: dict[str, Any]) -> None:
        """Sign a message, apply it here at once (so the transcript keeps cause before
        effect), and send it."""
        assert self.identity is not None
        me = self.peers[self.me]
        gid = self.table_id if kind == m.HELLO else self.game_id
        assert gid is not None
        payload = m.encode_payload(gid, self.me, me.next_seq, me.last_hash, kind, body)
        frame = encode_frame(payload, self.identity.sign(payload))
        msg = m.parse_payload(payload)
        self._seen.add(msg.hash)
        self._out.append(v.Send(frame))
        self._accept(me, msg, frame)  # first: a message sent while applying it comes next
        try:
            self._apply(me, msg, frame)
        except Wait:  # pragma: no cover - our own messages are made when they apply
            raise AssertionError(f"own {kind} message could not apply") from None

    def _accept(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        self.last_progress = self._now  # any message applied, this peer's own included
        peer.accepted[msg.seq] = (msg.hash, frame)
        peer.next_seq += 1
        peer.last_hash = msg.hash

    def _admit(self, msg: m.Message, frame: bytes, now: float) -> None:
        """A validly signed message from a roster member: dedupe, check game, queue."""
        expected = self.table_id if msg.seq == 0 else self.game_id
        if msg.seq == 0 and msg.type != m.HELLO:
            self._out.append(v.Rejected("a first message that is not a hello"))
            return
        if expected is None:
            self._seen.add(msg.hash)  # a later copy is dropped like any duplicate
            self._limbo.append((msg, frame))  # the game id is not known yet
            return
        if msg.game != expected:
            self._out.append(v.Rejected("a frame from another game or table"))
            return
        peer = self.peers[msg.sender]
        earlier = peer.accepted.get(msg.seq) or (
            (peer.inbox[msg.seq][0].hash, peer.inbox[msg.seq][1]) if msg.seq in peer.inbox else None
        )
        if earlier is not None:
            raise_equivocation = Violation(
                v.EQUIVOCATION,
                msg.sender,
                f"signed two different messages with sequence number {msg.seq}",
                (earlier[1], frame),
            )
            self._violation(raise_equivocation)
            return
        if msg.seq < peer.next_seq:  # pragma: no cover - caught as equivocation above
            return
        self._seen.add(msg.hash)
        peer.inbox[msg.seq] = (msg, frame)
        if not self.is_observer:
            self._out.append(v.Send(frame))  # relay once: equivocation cannot hide

    def _pump(self, now: float) -> None:
        """Process every queued message that can apply, then act, until nothing moves."""
        progress = True
        while progress and self.stage != STOPPED:
            progress = False
            for key in self.roster:
                peer = self.peers[key]
                while peer.next_seq in peer.inbox and self.stage != STOPPED:
                    msg, frame = peer.inbox[peer.next_seq]
                    if msg.prev != peer.last_hash:
                        self._violation(
                            Violation(
                                v.PROTOCOL,
                                key,
                                f"message {msg.seq} does not follow the sender's previous one",
                                (frame,),
                            )
                        )
                        return
                    # Accept before applying, so that a message this peer sends while
                    # applying (its own queued move, on resume) takes the next number.
                    before = (peer.next_seq, peer.last_hash)
                    self._accept(peer, msg, frame)
                    try:
                        self._apply(peer, msg, frame)
                    except Wait:
                        peer.next_seq, peer.last_hash = before
                        del peer.accepted[msg.seq]
                        break
                    except Violation as violation:
                        self._violation(violation)
                        return
                    del peer.inbox[msg.seq]
                    self.last_progress = now
                    progress = True
            if self.stage != STOPPED and self._act():
                progress = True

    def _violation(self, violation: Violation) -> None:
        seat = self.seat_of.get(violation.sender, -1)
        self._stop(
            v.Verdict(
                violation.kind,
                (seat,),
                (violation.sender,),
                violation.reason,
                violation.evidence,
            )
        )

    def _stop(self, verdict: v.Verdict) -> None:
        self.verdict = verdict
        self.stage = STOPPED
        self._out.append(v.Stopped(verdict))

    # ---------------------------------------------------------------- applying messages

    def _apply(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        """Run a message's handler. The frame enters the transcript first, so whatever the
        handler sends in answer follows it; a message that must wait leaves no trace."""
        at = len(self.transcript)
        self.transcript.append(frame)
        try:
            getattr(self, "_on_" + msg.type)(peer, msg, frame)
        except Wait:
            del self.transcript[at]
            raise

    def _on_hello(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if msg.seq != 0 or peer.nonce:
            raise Violation(v.PROTOCOL, peer.key, "a second hello", (frame,))
        body = msg.body
        try:
            config = TableConfig.from_wire(body["config"])
        except ValueError as error:
            raise Violation(
                v.DISAGREEMENT, peer.key, f"bad table settings: {error}", (frame,)
            ) from None
        if config != self.config or list(body["roster"]) != self.roster:
            raise Violation(
                v.DISAGREEMENT, peer.key, "does not agree on the table settings", (frame,)
            )
        peer.name = body["name"]
        peer.nonce = body["nonce"]
        peer.seat_commit = body["seat_commit"]

    def _on_seat(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if self.stage < SEAT:
            raise Wait
        if peer.seat_secret:
            raise Violation(v.PROTOCOL, peer.key, "a second seat secret", (frame,))
        secret = msg.body["secret"]
        if _hash(b"moska-p2p/seat", secret) != peer.seat_commit:
            raise Violation(
                v.PROTOCOL, peer.key, "seat secret does not match its commitment", (frame,)
            )
        peer.seat_secret = secret

    def _on_commit(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if self.stage < COMMIT:
            raise Wait
        if peer.seed_commit:
            raise Violation(v.PROTOCOL, peer.key, "a second seed commitment", (frame,))
        peer.seed_commit = msg.body["seed"]

    def _on_shuffle1(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        self._check_shuffle_turn(peer, SHUFFLE1, len(self.pass1), frame)
        points = list(msg.body["points"])
        self._check_points(peer, points, frame)
        self.pass1.append(points)

    def _on_shuffle2(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        self._check_shuffle_turn(peer, SHUFFLE2, len(self.pass2), frame)
        points = list(msg.body["points"])
        commits = list(msg.body["keys"])
        if len(commits) != self.size:
            raise Violation(
                v.BAD_SHUFFLE,
                peer.key,
                f"{len(commits)} key commitments, not {self.size}",
                (frame,),
            )
        self._check_points(peer, points, frame)
        self.pass2.append(points)
        self.key_commits.append(commits)

    def _check_shuffle_turn(self, peer: _Peer, stage: int, done: int, frame: bytes) -> None:
        """Shuffle passes go in seat order: a later seat's pass waits for the earlier ones."""
        if self.stage < stage or (self.stage == stage and peer.key in self.seats[done + 1 :]):
            raise Wait
        if self.stage != stage or self.seats[done] != peer.key:
            raise Violation(v.PROTOCOL, peer.key, "a shuffle pass out of its turn", (frame,))

    def _check_points(self, peer: _Peer, points: list[bytes], frame: bytes) -> None:
        if len(points) != self.size:
            raise Violation(
                v.BAD_SHUFFLE, peer.key, f"{len(points)} cards, not {self.size}", (frame,)
            )
        try:
            mp.check_points(points, self.size)
        except mp.DeckError as error:
            raise Violation(v.BAD_SHUFFLE, peer.key, f"a bad shuffle: {error}", (frame,)) from None

    def _on_keys(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if self.stage != PLAY or self.game is None:
            raise Wait  # before the deal, or the game stopped for its audit
        seat = self.seat_of[peer.key]
        pairs = [(pos, key) for pos, key in msg.body["keys"]]
        if not pairs:
            raise Violation(v.PROTOCOL, peer.key, "an empty key release", (frame,))
        if any(pos >= self.size for pos, _ in pairs):
            raise Violation(v.PROTOCOL, peer.key, "a key for a position beyond the deck", (frame,))
        if any((seat, pos) not in self.owed for pos, _ in pairs):
            raise Wait  # not owed yet: this peer has not reached that draw
        assert self.game_id is not None
        for pos, key in pairs:
            if not mp.check_key(self.game_id, seat, pos, key, self.key_commits[seat][pos]):
                raise Violation(
                    v.BAD_KEY,
                    peer.key,
                    f"its key for deck position {pos} does not match its commitment",
                    (frame,),
                )
        for pos, key in pairs:
            del self.owed[(seat, pos)]
            self.keys[(seat, pos)] = key
        self._learn_faces()

    def _on_move(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        g = self.game
        if self.stage != PLAY or g is None:
            raise Wait  # before the deal, or the game stopped for its audit
        state = msg.body["state"].hex()
        current = g.state_hash()
        if state != current:
            if state in self._past_states:
                raise Violation(
                    v.OUT_OF_TURN, peer.key, "a move for a state already past", (frame,)
                )
            raise Wait  # a state this peer has not reached yet
        seat = self.seat_of[peer.key]
        if g.to_act_seat != seat:
            raise Violation(
                v.OUT_OF_TURN,
                peer.key,
                f"moved out of turn (seat {g.to_act_seat} is to act)",
                (frame,),
            )
        try:
            move = parse_move(msg.body["move"])
        except ValueError as error:
            raise Violation(v.ILLEGAL_MOVE, peer.key, str(error), (frame,)) from None
        assert self.game_id is not None
        revealed: list[tuple[int, int]] = []
        named = set(_hand_cards(g, move))
        for pos, key in msg.body["cards"]:
            card = self._shown_card(peer, seat, pos, key, frame, v.ILLEGAL_MOVE)
            if card not in named:
                raise Violation(
                    v.ILLEGAL_MOVE,
                    peer.key,
                    f"position {pos} holds {CARD_TEXT[card]}, which the move does not name",
                    (frame,),
                )
            revealed.append((pos, card))
        trial = g.copy()
        for pos, card in revealed:
            trial.reveal(pos, card)
        try:
            trial.play(move, seat=seat)
        except IllegalMove as error:
            raise Violation(v.ILLEGAL_MOVE, peer.key, f"{move}: {error}", (frame,)) from None
        for pos, card in revealed:
            g.reveal(pos, card)
            self.keys[(seat, pos)] = dict(msg.body["cards"])[pos]
        self._past_states.add(current)
        g.play(move, seat=seat)
        self.moves.append((seat, str(move)))
        self.state_trail.append(current)
        self._out.append(v.Moved(seat, str(move)))
        self._after_engine_step()

    def _on_claim(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        g = self.game
        if self.stage != PLAY or g is None or not g.awaiting_lowest_trump:
            raise Wait
        rank = msg.body["rank"]
        seat = self.seat_of[peer.key]
        if rank > self.claim_rank or seat in self.claims:
            raise Wait
        if rank < self.claim_rank:
            raise Violation(v.PROTOCOL, peer.key, "a claim for a past round", (frame,))
        card = msg.body["card"]
        if card is None:
            self.claims[seat] = None
        else:
            pos, key = card
            face = self._shown_card(peer, seat, pos, key, frame, v.FALSE_CLAIM)
            wanted = rank * 4 + g.trump
            if face != wanted:
                raise Violation(
                    v.FALSE_CLAIM,
                    peer.key,
                    f"claimed {CARD_TEXT[wanted]} but showed {CARD_TEXT[face]} (D3)",
                    (frame,),
                )
            self.keys[(seat, pos)] = key
            self.claims[seat] = (pos, face)
        self._resolve_claims()

    def _on_audit(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        g = self.game
        if self.stage == PLAY and g is not None:
            # The sender names the final state it audits, or no state (all zero bytes) for an
            # early audit: a card did not decrypt and the game stops at once. A final audit
            # waits until this peer has reached that state too; if an early audit finds
            # nothing wrong, its caller is blamed for stopping the game.
            state = msg.body["state"]
            if state != m.NO_PREVIOUS and state.hex() != g.state_hash():
                raise Wait
            if state == m.NO_PREVIOUS or not g.is_over:
                self.audit_caller = peer.key
            self._start_audit()
        if self.stage != AUDIT:
            if self.stage < AUDIT:
                raise Wait
            raise Violation(v.PROTOCOL, peer.key, "a seed after the audit", (frame,))
        seed = msg.body["seed"]
        assert self.game_id is not None
        seat = self.seat_of[peer.key]
        if mp.seed_commitment(seed, self.game_id, seat) != peer.seed_commit:
            raise Violation(
                v.BAD_SEED, peer.key, "its seed does not match its commitment", (frame,)
            )
        peer.seed = seed

    def _on_result(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if self.stage != RESULT:
            if self.stage < RESULT:
                raise Wait
            raise Violation(v.PROTOCOL, peer.key, "a second result", (frame,))
        state = msg.body["state"].hex()
        losers = tuple(msg.body["losers"])
        if state != self.final_hash or losers != self.losers:
            raise Violation(
                v.DISAGREEMENT, peer.key, "its result differs from this peer's", (frame,)
            )
        before = self.transcript[: self.transcript.index(frame)]
        if peer.key == self.me and msg.body["transcript"] != transcript_digest(before):
            raise Violation(v.PROTOCOL, peer.key, "its transcript hash is wrong", (frame,))
        peer.result = (msg.body["transcript"], losers)

    def _on_leave(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if self.stage in (DONE,):
            return  # a goodbye after the result changes nothing
        raise Violation(v.LEFT, peer.key, f"left the table: {msg.body['reason']}", (frame,))

    # ---------------------------------------------------------------- cards and keys

    def _shown_card(
        self, peer: _Peer, seat: int, pos: int, key: bytes, frame: bytes, kind: str
    ) -> int:
        """The card at ``pos`` of ``seat``'s hand, shown with the seat's own key: the key
        must match its commitment and every other peer's key for that draw be here."""
        g = self.game
        assert g is not None and self.game_id is not None
        if pos >= self.size:
            raise Violation(kind, peer.key, f"deck position {pos} is beyond the deck", (frame,))
        in_hand = g.hidden_owner.get(pos) == seat or (
            g.face[pos] >= 0 and g.hands[seat] >> g.face[pos] & 1
        )
        if not in_hand:
            raise Violation(kind, peer.key, f"deck position {pos} is not in its hand", (frame,))
        if not mp.check_key(self.game_id, seat, pos, key, self.key_commits[seat][pos]):
            raise Violation(
                v.BAD_KEY,
                peer.key,
                f"its key for position {pos} does not match its commitment",
                (frame,),
            )
        others = [self.keys.get((s, pos)) for s in range(len(self.seats)) if s != seat]
        if any(k is None for k in others):
            raise Wait  # another peer's key for that draw has not arrived here yet
        return self._unmask(pos, [*others, key], peer, frame)

    def _unmask(self, pos: int, keys: list[bytes | None], peer: _Peer, frame: bytes) -> int:
        point = mp.unmask(self.deck_points[pos], [k for k in keys if k is not None])
        card = self.table_points.get(point)
        if card is None:
            # Keys match their commitments, so a shuffle pass was wrong: the audit names it.
            self._start_audit()
            raise Wait
        return card

    def _learn_faces(self) -> None:
        """Unmask every position whose keys are all here and whose face this peer may see."""
        g = self.game
        assert g is not None
        n = len(self.seats)
        for pos, target in list(self.want_face.items()):
            keys = []
            for s in range(n):
                if s == target and s == self.my_seat:
                    keys.append(self._secrets().keys[pos])
                    continue
                key = self.keys.get((s, pos))
                if key is None:
                    break
                keys.append(key)
            else:
                point = mp.unmask(self.deck_points[pos], keys)
                card = self.table_points.get(point)
                del self.want_face[pos]
                if card is None or (g.pos_of[card] >= 0 and g.pos_of[card] != pos):
                    self._start_audit()  # no card, or a card seen twice: a shuffle cheat
                    return
                if g.face[pos] < 0:
                    g.reveal(pos, card)
        self._after_engine_step(learn=False)

    def _after_engine_step(self, learn: bool = True) -> None:
        g = self.game
        assert g is not None
        me = self.my_seat
        mine: dict[int, bytes] = {}
        for pos, target in g.take_reveal_requests():
            for s in range(len(self.seats)):
                if s != target and (s, pos) not in self.keys:
                    self.owed[(s, pos)] = 0.0
            if target == -1 or target == me:
                self.want_face[pos] = target
            if not self.is_observer and target != me and (me, pos) not in self.keys:
                mine[pos] = self._secrets().keys[pos]
        if mine:
            self._send(m.KEYS, {"keys": [[pos, key] for pos, key in sorted(mine.items())]})
        if learn and self.want_face:
            self._learn_faces()
        if g.awaiting_lowest_trump and self.claim_rank < 0:
            self.claim_rank = g.rules.lowest_rank
            self.claims = {}
            self._send_claim()
        if g.is_over and self.stage == PLAY:
            self._start_audit()

    def _send_claim(self) -> None:
        g = self.game
        if self.is_observer or g is None:
            return
        me = self.my_seat
        card = self.claim_rank * 4 + g.trump
        body: Any = None
        if g.hands[me] >> card & 1:
            pos = g.pos_of[card]
            body = [pos, self._secrets().keys[pos]]
        self._send(m.CLAIM, {"rank": self.claim_rank, "card": body})

    def _resolve_claims(self) -> None:
        g = self.game
        assert g is not None
        if len(self.claims) < len(self.seats):
            return
        shown = [(s, c) for s, c in self.claims.items() if c is not None]
        for s in range(len(self.seats)):
            c = self.claims[s]
            self.claim_log.append((self.claim_rank, s, c[0] if c else None))
        if shown:
            _, (pos, card) = shown[0]
            if g.face[pos] < 0:
                g.reveal(pos, card)
            g.declare_lowest_trump(pos)
        elif self.claim_rank >= 12:
            g.declare_lowest_trump(None)
        else:
            self.claim_rank += 1
            self.claims = {}
            self._send_claim()
            return
        self.claim_rank = -1
        self._after_engine_step()

    # ---------------------------------------------------------------- stage changes

    def _act(self) -> bool:
        """Move to the next stage when every peer has spoken; send what this peer owes."""
        stage = self.stage
        if stage == HELLO and all(p.nonce for p in self.peers.values()):
            self.game_id = game_id(self.table_id, [self.peers[k].nonce for k in self.roster])
            self.stage = SEAT
            limbo, self._limbo = self._limbo, []
            for msg, frame in limbo:
                self._admit(msg, frame, self.last_progress)
            if not self.is_observer:
                self._send(m.SEAT, {"secret": self._seat_secret})
            return True
        if stage == SEAT and all(p.seat_secret for p in self.peers.values()):
            self._draw_seats()
            self.stage = COMMIT
            if not self.is_observer:
                assert self.game_id is not None
                commitment = mp.seed_commitment(self._seed, self.game_id, self.my_seat)
                self._send(m.COMMIT, {"seed": commitment})
            return True
        if stage == COMMIT and all(p.seed_commit for p in self.peers.values()):
            self.stage = SHUFFLE1
            assert self.game_id is not None
            points = [mp.card_point(self.game_id, c) for c in self.cards]
            self.table_points = dict(zip(points, self.cards, strict=True))
            self._initial_points = points
            self._maybe_shuffle()
            return True
        if stage == SHUFFLE1 and len(self.pass1) == len(self.seats):
            self.stage = SHUFFLE2
            self._maybe_shuffle()
            return True
        if stage == SHUFFLE1:
            return self._maybe_shuffle()
        if stage == SHUFFLE2 and len(self.pass2) == len(self.seats):
            self.deck_points = self.pass2[-1]
            self.stage = PLAY
            self.game = new_hidden_game(
                self.config.preset,
                len(self.seats),
                dealer=self.dealer,
                **self._options(),
            )
            self._after_engine_step()
            return True
        if stage == SHUFFLE2:
            return self._maybe_shuffle()
        if stage == AUDIT and all(p.seed for p in self.peers.values()):
            self._audit()
            return True
        if stage == RESULT and all(p.result is not None for p in self.peers.values()):
            self.stage = DONE
            self._out.append(v.Finished(self.losers, self.final_hash))
            return True
        return False

    def _maybe_shuffle(self) -> bool:
        if self.is_observer:
            return False
        if self.stage == SHUFFLE1 and self.seats[len(self.pass1)] == self.me:
            source = self.pass1[-1] if self.pass1 else self._initial_points
            self._send(m.SHUFFLE1, {"points": mp.pass1(self._secrets(), source)})
            return True
        if self.stage == SHUFFLE2 and self.seats[len(self.pass2)] == self.me:
            source = self.pass2[-1] if self.pass2 else self.pass1[-1]
            points, commits = mp.pass2(self._secrets(), source)
            self._send(m.SHUFFLE2, {"points": points, "keys": commits})
            return True
        return False

    def _draw_seats(self) -> None:
        """Seats and dealer from every peer's revealed secret (commit, then reveal)."""
        joint = hashlib.sha256(b"moska-p2p/joint")
        for key in self.roster:
            joint.update(self.peers[key].seat_secret)
        shared = joint.digest()
        self.seats = sorted(self.roster, key=lambda k: _hash(shared, k))
        self.seat_of = {k: s for s, k in enumerate(self.seats)}
        # M2: the first dealer is drawn from the shared randomness.
        self.dealer = int.from_bytes(_hash(b"moska-p2p/dealer", shared), "big") % len(self.seats)
        assert self.game_id is not None
        self._out.append(v.Seated(tuple(self.seats), self.dealer, self.game_id))

    def _start_audit(self) -> None:
        if self.stage not in (PLAY,):
            return
        self.stage = AUDIT
        if not self.is_observer:
            assert self.game is not None
            g = self.game
            state = bytes.fromhex(g.state_hash()) if g.is_over else m.NO_PREVIOUS
            self._send(m.AUDIT, {"seed": self._seed, "state": state})

    def _audit(self) -> None:
        """Every seed is known: replay the shuffle and the whole game with every face."""
        assert self.game_id is not None and self.game is not None
        seeds = [self.peers[k].seed for k in self.seats]
        try:
            faces = mp.replay_shuffle(
                self.game_id,
                seeds,
                [self.peers[k].seed_commit for k in self.seats],
                self.pass1,
                self.pass2,
                self.key_commits,
                self.size,
                self.cards,
            )
        except mp.DeckError as error:
            seat = error.seat if error.seat is not None else -1
            key = self.seats[seat] if seat >= 0 else b""
            evidence = self._frames_of(key, (m.COMMIT, m.SHUFFLE1, m.SHUFFLE2, m.AUDIT))
            kind = v.BAD_SEED if "revealed seed" in str(error) else v.BAD_SHUFFLE
            self._stop(v.Verdict(kind, (seat,), (key,), str(error), evidence))
            return
        fault = self._replay_game(faces)
        if fault is not None:
            self._stop(fault)
            return
        if not self.game.is_over:
            # An early audit found the shuffle sound and every key matching its commitment,
            # so every card decrypts: whoever called it stopped the game without cause.
            caller = self.audit_caller or self.me
            seat = self.seat_of.get(caller, -1)
            evidence = self._frames_of(caller, (m.AUDIT,))
            self._stop(
                v.Verdict(v.PROTOCOL, (seat,), (caller,), "called an audit without cause", evidence)
            )
            return
        self.final_hash = self.game.state_hash()
        self.losers = tuple(self.game.losers)
        self.stage = RESULT
        if not self.is_observer:
            self._send(
                m.RESULT,
                {
                    "state": bytes.fromhex(self.final_hash),
                    "losers": list(self.losers),
                    "transcript": transcript_digest(self.transcript),
                },
            )

    def _options(self) -> dict[str, Any]:
        return dict(self.config.options)

    def _frames_of(self, key: bytes, kinds: tuple[str, ...]) -> tuple[bytes, ...]:
        """The signed frames of one peer, of the given kinds, from this peer's transcript:
        the evidence an audit verdict carries."""
        out = []
        for frame in self.transcript:
            payload, _ = open_frame(frame[4:])
            msg = m.parse_payload(payload)
            if msg.sender == key and msg.type in kinds:
                out.append(frame)
        return tuple(out)

    def _replay_game(self, faces: list[int]) -> v.Verdict | None:
        """Replay every move on a full-information engine; check the D3 claims."""
        assert self.game is not None
        full = new_game(
            self.config.preset,
            len(self.seats),
            deck=faces,
            dealer=self.dealer,
            **self._options(),
        )
        for rank, seat, pos in self.claim_log:
            card = rank * 4 + full.trump
            if pos is None and full.hands[seat] >> card & 1:
                key = self.seats[seat]
                return v.Verdict(
                    v.FALSE_CLAIM,
                    (seat,),
                    (key,),
                    f"held {CARD_TEXT[card]}, the lowest trump, but did not show it (D3)",
                    self._frames_of(key, (m.CLAIM, m.AUDIT)),
                )
        for (seat, text), before in zip(self.moves, self.state_trail, strict=True):
            if full.state_hash() != before:
                return v.Verdict(
                    v.BAD_CARD, (-1,), (b"",), f"the game before {text} does not replay"
                )
            try:
                full.play(text, seat=seat)
            except IllegalMove as error:
                key = self.seats[seat]
                return v.Verdict(v.ILLEGAL_MOVE, (seat,), (key,), f"{text}: {error} (audit)")
        if full.state_hash() != self.game.state_hash():
            return v.Verdict(v.BAD_CARD, (-1,), (b"",), "the end of the game does not replay")
        return None


def _run_length(peer: _Peer) -> int:
    """How many queued messages follow the sender's last applied one without a gap."""
    count = 0
    while peer.next_seq + count in peer.inbox:
        count += 1
    return count


def drbg(secret: bytes) -> Callable[[int], bytes]:
    """A deterministic random byte source from a 32-byte secret (SHA-256 in counter mode):
    a peer that keeps its per-game secret can rebuild every secret it drew (resume)."""
    if len(secret) != 32:
        raise ValueError("the per-game secret must be 32 bytes")
    counter = 0
    buffer = b""

    def draw(size: int) -> bytes:
        nonlocal counter, buffer
        while len(buffer) < size:
            block = counter.to_bytes(8, "big")
            buffer += hashlib.sha256(b"moska-p2p/drbg" + secret + block).digest()
            counter += 1
        out, buffer = buffer[:size], buffer[size:]
        return out

    return draw


def config_rules(config: TableConfig) -> Any:
    from ..engine import make_rules

    return make_rules(config.preset, **dict(config.options))


def _hash(*parts: bytes) -> bytes:
    h = hashlib.sha256()
    for part in parts:
        h.update(struct.pack(">I", len(part)))
        h.update(part)
    return h.digest()


def _hand_cards(g: Game, move: Move) -> list[int]:
    """The cards a move takes from the mover's hand (their faces are shown with it)."""
    kind, cards = move
    if kind == KILL:
        return [] if cards[1] == g.turned else [cards[1]]
    if kind in (ATTACK, SELF, TRANSFER, TRANSFER_SHOW):
        return list(cards)
    if kind == BEG:
        return [cards[1]]
    if kind == EXCHANGE:
        return [g.rules.lowest_rank * 4 + g.trump]
    return []
