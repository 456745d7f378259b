"""The sans-IO peer: frames and local decisions in, frames and events out (h11's model).

A :class:`PeerSession` plays one game for one identity. It never touches a socket or a
clock: :meth:`receive` takes a frame's bytes, :meth:`play` a local move, :meth:`tick` the
time; each returns a list of outputs (frames to send to every other peer, and events). The
same class, with no identity, is the *observer* that ``moska verify`` runs over a transcript.

The phases of a game (PROTOCOL.md v2), each a few handlers below:

1. **seating**: ``hello`` (nonce, seat commitment), ``seat`` (the committed secret): the seats
   and the dealer come from every secret together;
2. **the deck** (:mod:`.deck_phase`): ``shuffle1`` and ``shuffle2`` in seat order, each
   proven (a shuffle argument, a re-keying proof) and checked on arrival;
3. **play**: ``keys`` (the releases a draw or a public reveal needs), ``move``, ``claim``
   (RULES D3, settled by :mod:`.claims`);
4. **disclosure**: at the end, only what a pending D3 denial needs (``disclose``);
5. **result**: every peer signs the final state, the losers and its transcript's hash.

Every message is processed in its sender's sequence order; one that cannot apply yet waits in
its sender's queue, inside a bounded window. A message that breaks a rule stops the session
with a :class:`~.verdict.Verdict` naming its sender, the signed frame as evidence; so does
silence past the timeout, and leaving: either costs the culprit the game (a forfeit), and this
peer says so in a signed ``verdict`` message. A frame nobody can be blamed for (bad signature,
malformed, another game, a replay) is only :class:`Rejected`. Nothing raised by a check on
remote data escapes :meth:`receive`; an exception is a bug of this peer (:class:`LocalError`).
"""

from __future__ import annotations

import hashlib
import secrets as system_random
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from ..cards import CARD_TEXT
from ..crypto import deck as mp
from ..crypto.identity import Identity, is_acceptable_public_key, verify
from ..engine import Game, IllegalMove, Move, new_hidden_game, parse_move
from ..engine.errors import RevealError
from ..engine.moves import ATTACK, BEG, EXCHANGE, KILL, SELF, TRANSFER, TRANSFER_SHOW
from . import messages as m
from . import verdict as v
from .claims import ClaimBook, Denial
from .config import TableConfig, game_id, table_id
from .deck_phase import STAGE_PASS1, STAGE_PASS2, DeckJob, DeckPhase
from .frames import FrameError, encode_frame, open_frame
from .ordering import WINDOW, SenderLog

__all__ = ["WINDOW", "LocalError", "PeerSession", "drbg", "transcript_digest"]

STAGES = ("hello", "seat", "shuffle1", "shuffle2", "play", "disclose", "result", "done")
HELLO, SEAT, SHUFFLE1, SHUFFLE2, PLAY, DISCLOSE, RESULT, DONE = range(8)
STOPPED = 8

RESEND = 32  # frames sent again to a stuck peer, at most, per sender and per wait
LIMBO_FRAMES = 64  # frames held before the game id is known (hellos still missing)
LIMBO_BYTES = 1 << 20


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
    LocalProtocolError), or hit a bug of its own: nothing was sent."""


# Failures of a check on a sender's data: each becomes a verdict naming that sender.
_REMOTE_FAULTS = (mp.DeckError, RevealError, IllegalMove, m.MessageError)


@dataclass
class _Peer(SenderLog):
    """One roster member: its order (:class:`~.ordering.SenderLog`) and what it said."""

    key: bytes = b""
    index: int = 0
    name: str = ""
    nonce: bytes = b""
    seat_commit: bytes = b""
    seat_secret: bytes = b""
    result: tuple[bytes, tuple[int, ...]] | None = None
    heard_at: float = 0.0  # when its last message applied here (this peer's clock)


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
        if not all(is_acceptable_public_key(key) for key in roster):
            raise LocalError("the roster holds a key that is not a valid Ed25519 public key")
        self.identity = identity
        self.me = identity.public_bytes if identity is not None else b""
        if identity is not None and self.me not in roster:
            raise LocalError("this identity is not on the roster")
        self.config = config
        self.roster = sorted(roster)
        self.peers = {key: _Peer(key=key, index=i) for i, key in enumerate(self.roster)}
        if config.seating and sorted(config.seating) != self.roster:
            raise LocalError("the session's seating does not list this table's players")
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
        self._relayed: set[tuple[bytes, int]] = set()
        self._evidence_depth = 0
        self.last_progress = now
        self._now = now
        self._clock: float | None = None
        self._suspended_at: float | None = None
        self._waited_at = -1.0e18
        self.max_tick_gap: float | None = None
        """Set by a driver that ticks regularly: a longer gap between two ticks means this
        peer was suspended, and the silence it did not watch is not held against anyone."""
        # Seating
        self.seats: list[bytes] = []
        self.seat_of: dict[bytes, int] = {}
        self.dealer = -1
        # Deck
        self.size = 52 - 4 * config_rules(config).lowest_rank
        self.cards = list(range(52 - self.size, 52))
        self.deck: DeckPhase | None = None
        self.offload = False
        """Set by a driver that runs the deck's costly steps itself, off its event loop
        (:meth:`take_jobs`, :meth:`finish_job`; :mod:`.deck_phase`)."""
        self.owed: dict[tuple[int, int], float] = {}
        self.want_face: dict[int, int] = {}  # position -> -1 (public) or my seat
        self._nonce = self._rng(32)
        self._seat_secret = self._rng(32)
        self._seed = self._rng(32)
        # Game
        self.game: Game | None = None
        self.moves: list[tuple[int, str]] = []
        self._past_states: set[str] = set()
        self.claim_rank = -1
        self.claims: dict[int, tuple[int, int] | None] = {}  # seat -> (position, card)
        self.claim_book = ClaimBook()
        self.disclosures: dict[int, set[int]] = {}  # seat -> positions it must disclose
        self.final_hash = ""
        self.losers: tuple[int, ...] = ()

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

    @property
    def keys(self) -> dict[tuple[int, int], bytes]:
        """Every key released so far, by (seat, position)."""
        return self.deck.keys if self.deck is not None else {}

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
                "seat_commit": _seat_commitment(self.table_id, self.me, self._seat_secret),
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
        self._observe_clock(now)
        self._ingest(frame)
        self._pump(now)
        return self._drain()

    def _ingest(self, frame: bytes) -> bool:
        """Check a frame's envelope and signature and queue it; whether it was new."""
        try:
            if not isinstance(frame, bytes) or len(frame) < 4:
                raise FrameError("a frame is a 4-byte length prefix and a body")
            body = frame[4:]
            if struct.unpack(">I", frame[:4])[0] != len(body):
                raise FrameError("the length prefix does not match the frame")
            kind, payload, signature = open_frame(body)
            msg = m.parse_payload(payload)
        except FrameError as error:
            self._out.append(v.Rejected(f"malformed frame: {error}"))
            return False
        if msg.hash in self._seen:
            return False  # a copy (relays make copies normal; a replay changes nothing)
        peer = self.peers.get(msg.sender)
        if peer is None:
            self._out.append(v.Rejected("a frame from a key that is not at this table"))
            return False
        if kind != msg.type or not verify(msg.sender, kind, payload, signature):
            self._out.append(v.Rejected(f"a forged signature (claims seq {msg.seq})"))
            return False
        self._admit(msg, frame)
        return True

    def play(self, move: Move | str, now: float = 0.0) -> list[v.Output]:
        """Play this peer's move (it must be its turn); raises IllegalMove or LocalError."""
        self._now = now
        g = self.game
        if not self.my_turn or g is None or self.deck is None:
            raise LocalError("it is not this peer's turn")
        parsed = parse_move(move) if isinstance(move, str) else move
        trial = g.copy()
        trial.play(parsed)  # raises IllegalMove: nothing is sent
        seat = self.my_seat
        cards = []
        for card in _hand_cards(g, parsed):
            if not g.shown[seat] >> card & 1:
                pos = g.pos_of[card]
                cards.append([pos, self.deck.my_key(pos)])
        self._send(
            m.MOVE,
            {"move": str(parsed), "state": bytes.fromhex(g.state_hash()), "cards": cards},
        )
        self._pump(now)
        return self._drain()

    def leave(self, reason: str, now: float = 0.0) -> list[v.Output]:
        """Leave the table: a signed ``leave`` tells the others why, and the game stops (a
        departure before the result is a forfeit)."""
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
        return {key: peer.next_seq + peer.run_length() for key, peer in self.peers.items()}

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
        received (Ed25519 signatures and the proofs' nonces are deterministic), so starting
        again and feeding the transcript regenerates the same frames; the copies in the
        transcript are dropped as duplicates and the peer's own moves apply when their turn
        comes.
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
        heads: Sequence[tuple[int, bytes]] | None = None,
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
            self._heads() if heads is None else heads,
        )
        return encode_frame(kind, payload, self.identity.sign(kind, payload))

    def tick(self, now: float) -> list[v.Output]:
        """Let time pass: a peer that owes an answer for longer than the timeout forfeits.

        Only silence this peer saw while it was running counts: if this peer's own clock
        jumped past the timeout between two calls (it was suspended), it starts counting
        again instead of blaming whoever it was waiting for.
        """
        self._now = now
        if self.stage in (DONE, STOPPED):
            return self._drain()
        self._observe_clock(now)
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
        elif waiting and not self.is_observer and self.me not in waiting and self.game_id:
            self._maybe_wait(now)
        return self._drain()

    def _observe_clock(self, now: float) -> None:
        """Notice that this peer was not running (its driver ticks every few tenths of a
        second, so a longer gap since the last call means a suspension): the silence it did
        not watch is not held against anyone, and an accusation of its own silence may be
        true. Called on every entry, as frames read after a suspension may come before the
        first tick."""
        gap = self.max_tick_gap
        if gap is not None and self._clock is not None and now - self._clock > gap:
            self.last_progress = now
            self._suspended_at = now
        self._clock = max(now, self._clock or now)

    def _maybe_wait(self, now: float) -> None:
        """Stuck for a quarter of the timeout: say so with a ``wait`` (its heads tell every
        peer what this one has), so a peer holding a frame that never reached this one sends
        it (a sender that died half way through a broadcast, a lost frame)."""
        quarter = self.config.timeout / 4
        if now - self.last_progress > quarter and now - self._waited_at > quarter:
            self._waited_at = now
            self._send(m.WAIT, {})

    def waiting_on(self) -> list[bytes]:
        """The peers this session waits for, in roster order."""
        held_back = self._held_back()
        if held_back:
            # Their heads name a message nobody has shown here: an honest one shows it at
            # once (it answers this peer's copy with the equivocation's proof).
            return held_back
        stage = self.stage
        if stage == HELLO:
            return [k for k in self.roster if not self.peers[k].nonce]
        if stage == SEAT:
            return [k for k in self.roster if not self.peers[k].seat_secret]
        if stage in (SHUFFLE1, SHUFFLE2) and self.deck is not None:
            turn = self.deck.next_turn()
            if turn is None or self.deck.busy:  # a pass being checked or made here
                return []
            return [self.seats[turn[1]]]
        if stage == PLAY:
            owing = {seat for seat, _ in self.owed}
            g = self.game
            if g is not None and g.to_act_seat >= 0 and not owing:
                owing.add(g.to_act_seat)
            if g is not None and g.awaiting_lowest_trump:
                owing |= {s for s in range(len(self.seats)) if s not in self.claims}
            return [self.seats[s] for s in sorted(owing)]
        if stage == DISCLOSE:
            return [self.seats[s] for s in sorted(self.disclosures)]
        if stage == RESULT:
            return [k for k in self.roster if self.peers[k].result is None]
        return []

    # ------------------------------------------------------------------ machinery

    def _drain(self) -> list[v.Output]:
        out, self._out = self._out, []
        return out

    def _send(self, kind: str, body: dict[str, Any]) -> None:
        """Sign a message, apply it here at once (so the transcript keeps cause before
        effect), and send it."""
        assert self.identity is not None
        me = self.peers[self.me]
        gid = self.table_id if kind == m.HELLO else self.game_id
        assert gid is not None
        payload = m.encode_payload(
            gid, self.me, me.next_seq, me.last_hash, kind, body, self._heads()
        )
        frame = encode_frame(kind, payload, self.identity.sign(kind, payload))
        msg = m.parse_payload(payload)
        self._seen.add(msg.hash)
        self._out.append(v.Send(frame))
        self._accept(me, msg, frame)  # first: a message sent while applying it comes next
        try:
            self._apply(me, msg, frame)
        except Wait:  # pragma: no cover - our own messages are made when they apply
            raise LocalError(f"own {kind} message could not apply") from None
        except Violation as violation:  # a modified client convicts itself too
            self._violation(violation)

    def _accept(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if msg.type != m.WAIT:  # a wait says "still here", not "the game moved"
            self.last_progress = self._now  # any message applied, this peer's own included
        peer.heard_at = self._now
        peer.accept(msg, frame)

    def _admit(self, msg: m.Message, frame: bytes) -> None:
        """A validly signed message from a roster member: dedupe, check game, queue."""
        expected = self.table_id if msg.seq == 0 else self.game_id
        if msg.seq == 0 and msg.type != m.HELLO:
            self._out.append(v.Rejected("a first message that is not a hello"))
            return
        if msg.type == m.VERDICT:
            # Its evidence counts as if it had arrived on its own, at once and whatever the
            # verdict's own fate (another game's, or queued behind a message that cannot
            # apply): the other half of an equivocation often comes only this way.
            self._take_evidence(msg)
            if self.stage == STOPPED:
                return
            if msg.seq == 1 and msg.game == self.table_id:
                expected = self.table_id  # a verdict signed before its sender knew the game id
        if expected is None or msg.game != expected:
            # Heads that name another copy of a message held here: show ours to everyone (a
            # hello signed twice splits the table into two games that reject each other's
            # frames; this is how each half learns of the other).
            self._show_contradicted(msg)
        if expected is None:
            held = sum(len(f) for _, f in self._limbo)
            if len(self._limbo) >= LIMBO_FRAMES or held + len(frame) > LIMBO_BYTES:
                self._out.append(v.Rejected("too many frames before every hello arrived"))
                return
            self._seen.add(msg.hash)  # a later copy is dropped like any duplicate
            self._limbo.append((msg, frame))  # the game id is not known yet
            return
        if msg.game != expected:
            self._out.append(v.Rejected("a frame from another game or table"))
            return
        peer = self.peers[msg.sender]
        if len(msg.heads) != len(self.roster):
            self._violation(
                Violation(
                    v.PROTOCOL,
                    msg.sender,
                    f"its message {msg.seq} has {len(msg.heads)} heads, not one per player",
                    (frame,),
                )
            )
            return
        earlier = peer.held(msg.seq)
        if earlier is not None:
            self._violation(
                Violation(
                    v.EQUIVOCATION,
                    msg.sender,
                    f"signed two different messages with sequence number {msg.seq}",
                    (earlier[1], frame),
                )
            )
            return
        if msg.seq < peer.next_seq:  # pragma: no cover - caught as equivocation above
            return
        refusal = peer.refusal(msg, frame)
        if refusal is not None:
            self._violation(Violation(v.PROTOCOL, msg.sender, refusal, (frame,)))
            return
        self._seen.add(msg.hash)
        if peer.queue(msg, frame):
            self._relay(msg.sender, msg.seq, frame)
        self._compare_heads(msg)

    # -- equivocation without relaying every frame

    def _heads(self) -> list[tuple[int, bytes]]:
        """What this peer has applied of each roster member: sent in every message."""
        return [self.peers[k].head() for k in self.roster]

    def _compare_heads(self, msg: m.Message) -> None:
        """The sender says which message it holds under each peer's latest number. If this
        peer holds another one, someone signed two: send this peer's copy to everyone, and
        whoever holds the other has both signed frames, the proof of equivocation. A sender
        that says it is stuck (``wait``) and lacks messages this peer has applied gets them."""
        for key, (count, digest) in zip(self.roster, msg.heads, strict=True):
            if key == msg.sender:
                continue
            peer = self.peers[key]
            ours = peer.mismatch(count, digest)
            if ours is not None:
                self._relay(key, count - 1, ours)
            if msg.type == m.WAIT and not self.is_observer:
                for seq in range(count, min(peer.next_seq, count + RESEND)):
                    self._out.append(v.Send(peer.accepted[seq][1]))

    def _show_contradicted(self, msg: m.Message) -> None:
        """Relay this peer's copy of every message ``msg``'s heads name with another hash
        (``msg`` is not queued here: nothing is remembered for messages not held yet)."""
        if len(msg.heads) != len(self.roster):
            return
        for key, (count, digest) in zip(self.roster, msg.heads, strict=True):
            if key == msg.sender or count == 0:
                continue
            held = self.peers[key].held(count - 1)
            if held is not None and held[0][: m.HEAD_HASH] != digest:
                self._relay(key, count - 1, held[1])

    def _contradicts(self, msg: m.Message) -> bool:
        """Whether ``msg``'s heads say its sender built on another message than the one held
        here under some peer's number: one of the two signed both (an equivocation, proven
        once both frames are here) or the sender lies about its heads. Either way ``msg``
        cannot be judged against this peer's copy: judging it would blame the sender for a
        difference it did not make."""
        if len(msg.heads) != len(self.roster):
            return False
        for key, (count, digest) in zip(self.roster, msg.heads, strict=True):
            if key == msg.sender or count == 0:
                continue
            held = self.peers[key].held(count - 1)
            if held is not None and held[0][: m.HEAD_HASH] != digest:
                return True
        return False

    def _held_back(self) -> list[bytes]:
        """Senders whose next message waits for the other half of an equivocation (its
        heads contradict this peer's copy): in roster order."""
        out = []
        for key in self.roster:
            peer = self.peers[key]
            waiting = peer.inbox.get(peer.next_seq)
            if waiting is not None and self._contradicts(waiting[0]):
                out.append(key)
        return out

    def _take_evidence(self, msg: m.Message) -> None:
        """Admit a verdict's evidence frames as if each had just arrived (bounded depth: an
        adopted verdict carries the verdict it adopted, and no deeper)."""
        if self._evidence_depth >= 2:
            return
        self._evidence_depth += 1
        try:
            for evidence in msg.body["evidence"]:
                if self.stage == STOPPED:
                    return
                self._ingest(evidence)
        finally:
            self._evidence_depth -= 1

    def _relay(self, sender: bytes, seq: int, frame: bytes) -> None:
        if not self.is_observer and (sender, seq) not in self._relayed:
            self._relayed.add((sender, seq))
            self._out.append(v.Send(frame))

    def _pump(self, now: float) -> None:
        """Process every queued message that can apply, then act, until nothing moves."""
        progress = True
        while progress and self.stage != STOPPED:
            progress = False
            for key in self.roster:
                peer = self.peers[key]
                while peer.next_seq in peer.inbox and self.stage != STOPPED:
                    if self._step(peer):
                        progress = True
                    else:
                        break
            if self.stage in (DONE, STOPPED):
                break
            try:
                if self._act():
                    progress = True
            except Violation as violation:
                self._violation(violation)

    def _step(self, peer: _Peer) -> bool:
        """Apply the next message of one sender; whether it applied."""
        msg, frame = peer.inbox[peer.next_seq]
        if self._contradicts(msg):
            return False  # wait for the equivocation's other half (bounded by the timeout)
        if msg.prev != peer.last_hash:
            self._violation(
                Violation(
                    v.PROTOCOL,
                    peer.key,
                    f"message {msg.seq} does not follow the sender's previous one",
                    (frame,),
                )
            )
            return False
        # Accept before applying, so that a message this peer sends while applying (its own
        # queued move, on resume) takes the next number.
        before = (peer.next_seq, peer.last_hash)
        self._accept(peer, msg, frame)
        try:
            self._apply(peer, msg, frame)
        except Wait:
            peer.unaccept(msg.seq, before)
            return False
        except Violation as violation:
            self._violation(violation)
            return False
        except _REMOTE_FAULTS as error:
            self._violation(Violation(v.PROTOCOL, peer.key, f"{msg.type}: {error}", (frame,)))
            return False
        except Exception as error:  # a bug here: say so, blame nobody
            raise LocalError(f"this peer failed on a {msg.type} message: {error!r}") from error
        peer.done(msg.seq)
        return True

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
        """Stop the game. The culprits forfeit it (they are its losers), and this peer signs
        its verdict so the transcript ends with what it concluded and why."""
        self.verdict = verdict
        self.losers = tuple(s for s in verdict.seats if s >= 0)
        me = self.peers.get(self.me)
        # Before every hello is in there is no game id: the verdict is then signed for the
        # table (its second message, right after its hello), so a table that ends before its
        # game began still leaves a signed record naming who ended it.
        game = self.game_id or (self.table_id if me is not None and me.next_seq == 1 else None)
        if not self.is_observer and game is not None and self.me not in verdict.keys:
            evidence = [f for f in verdict.evidence if len(f) <= m.MAX_EVIDENCE_FRAME]
            body = {
                "kind": verdict.kind,
                "culprits": list(verdict.keys),
                "reason": verdict.reason[:400],
                "evidence": evidence[: m.MAX_EVIDENCE],
            }
            assert me is not None
            payload = m.encode_payload(
                game, self.me, me.next_seq, me.last_hash, m.VERDICT, body, self._heads()
            )
            frame = encode_frame(m.VERDICT, payload, self.identity.sign(m.VERDICT, payload))  # type: ignore[union-attr]
            self._accept(me, m.parse_payload(payload), frame)
            self.transcript.append(frame)
            self._out.append(v.Send(frame))
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

    # -- seating

    def _on_hello(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if msg.seq != 0 or peer.nonce:
            raise Violation(v.PROTOCOL, peer.key, "a second hello", (frame,))
        body = msg.body
        try:
            config = TableConfig.from_wire(body["config"])
        except (ValueError, TypeError) as error:
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
        if _seat_commitment(self.table_id, peer.key, secret) != peer.seat_commit:
            raise Violation(
                v.PROTOCOL, peer.key, "seat secret does not match its commitment", (frame,)
            )
        peer.seat_secret = secret

    def _draw_seats(self) -> None:
        """Seats and dealer from every peer's revealed secret (commit, then reveal)."""
        joint = hashlib.sha256(b"moska-p2p/joint")
        for key in self.roster:
            joint.update(self.peers[key].seat_secret)
        shared = joint.digest()
        self.seats = sorted(self.roster, key=lambda k: _hash(shared, k))
        # M2: the first dealer is drawn from the shared randomness.
        self.dealer = int.from_bytes(_hash(b"moska-p2p/dealer", shared), "big") % len(self.seats)
        if self.config.seating:  # a session's later game (M24): its seats, the loser deals
            self.seats, self.dealer = list(self.config.seating), self.config.dealer
        self.seat_of = {k: s for s, k in enumerate(self.seats)}
        assert self.game_id is not None
        self._out.append(v.Seated(tuple(self.seats), self.dealer, self.game_id))

    # -- the deck

    def _on_shuffle1(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        self._deck_step(peer, SHUFFLE1, msg, frame)

    def _on_shuffle2(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        self._deck_step(peer, SHUFFLE2, msg, frame)

    def take_jobs(self) -> list[DeckJob]:
        """The deck's costly steps made since the last call (only with :attr:`offload`): run
        each ``job.run()`` anywhere (a worker thread) and hand its return to
        :meth:`finish_job`."""
        return self.deck.take_jobs() if self.deck is not None else []

    def finish_job(self, job: DeckJob, outcome: object, now: float = 0.0) -> list[v.Output]:
        """A job's outcome: the message waiting on it applies now (or is judged)."""
        self._now = now
        if self.deck is None or self.stage in (DONE, STOPPED):
            return self._drain()
        self.deck.finish(job, outcome)
        self._pump(now)
        return self._drain()

    def _deck_step(self, peer: _Peer, stage: int, msg: m.Message, frame: bytes) -> None:
        """Passes go in seat order: a later seat's pass waits for the earlier ones; each is
        checked against its proof before anything builds on it."""
        deck = self.deck
        if self.stage < stage or deck is None:
            raise Wait
        turn = deck.next_turn()
        seat = self.seat_of[peer.key]
        if self.stage == stage and turn is not None and seat > turn[1]:
            raise Wait
        if self.stage != stage or turn is None or turn[1] != seat:
            raise Violation(v.PROTOCOL, peer.key, "a shuffle pass out of its turn", (frame,))
        try:
            body = dict(msg.body)
            verified = False
            if self.offload:  # checked off the loop: wait for the job, then accept
                verified = deck.check(
                    seat, STAGE_PASS1 if stage == SHUFFLE1 else STAGE_PASS2, body, msg.hash
                )
                if not verified:
                    raise Wait
            if stage == SHUFFLE1:
                deck.accept_pass1(seat, body, verified=verified)
            else:
                deck.accept_pass2(seat, body, verified=verified)
        except mp.DeckError as error:
            raise Violation(v.BAD_SHUFFLE, peer.key, f"a bad shuffle: {error}", (frame,)) from None

    def _my_pass(self) -> bool:
        deck = self.deck
        if self.is_observer or deck is None:
            return False
        turn = deck.next_turn()
        if turn is None or turn[1] != self.my_seat:
            return False
        if self.offload:  # made off the loop (or by the pipeline): sent once it is here
            body = deck.my_pass(self.my_seat)
            if body is not None:
                self._send(m.SHUFFLE1 if turn[0] == STAGE_PASS1 else m.SHUFFLE2, body)
            return body is not None
        if turn[0] == STAGE_PASS1:
            self._send(m.SHUFFLE1, deck.make_pass1(self.my_seat))
        else:
            self._send(m.SHUFFLE2, deck.make_pass2(self.my_seat))
        return True

    # -- play

    def _on_keys(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        deck = self.deck
        if self.stage != PLAY or self.game is None or deck is None:
            raise Wait  # before the deal
        seat = self.seat_of[peer.key]
        pairs = [(pos, key) for pos, key in msg.body["keys"]]
        if not pairs:
            raise Violation(v.PROTOCOL, peer.key, "an empty key release", (frame,))
        if any(pos >= self.size for pos, _ in pairs):
            raise Violation(v.PROTOCOL, peer.key, "a key for a position beyond the deck", (frame,))
        if len({pos for pos, _ in pairs}) != len(pairs):
            raise Violation(v.PROTOCOL, peer.key, "a key release naming a position twice", (frame,))
        if any((seat, pos) not in self.owed for pos, _ in pairs):
            raise Wait  # not owed yet: this peer has not reached that draw
        for pos, key in pairs:
            if not deck.key_is_valid(seat, pos, key):
                raise Violation(
                    v.BAD_KEY,
                    peer.key,
                    f"its key for deck position {pos} does not match its key point",
                    (frame,),
                )
        for pos, key in pairs:
            del self.owed[(seat, pos)]
            deck.add_key(seat, pos, key)
        self._learn_faces(peer, frame)

    def _on_move(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        g = self.game
        if self.stage != PLAY or g is None:
            raise Wait  # before the deal
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
        named = set(_hand_cards(g, move))
        shown = []
        for pos, key in msg.body["cards"]:
            card = self._shown_card(peer, seat, pos, key, frame, v.ILLEGAL_MOVE)
            if card not in named:
                raise Violation(
                    v.ILLEGAL_MOVE,
                    peer.key,
                    f"position {pos} holds {CARD_TEXT[card]}, which the move does not name",
                    (frame,),
                )
            shown.append((pos, card, key))
        trial = g.copy()
        for pos, card, _ in shown:
            trial.reveal(pos, card)
        try:
            trial.play(move, seat=seat)
        except IllegalMove as error:
            raise Violation(v.ILLEGAL_MOVE, peer.key, f"{move}: {error}", (frame,)) from None
        for pos, card, key in shown:
            self._publish(seat, pos, card, key, frame)
        self._past_states.add(current)
        g.play(move, seat=seat)
        self.moves.append((seat, str(move)))
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
        wanted = rank * 4 + g.trump
        card = msg.body["card"]
        if card is None:
            # D3 "none": checked later, from what the rules show anyway (claims.py).
            held = frozenset(self._face_down(seat))
            self.claim_book.deny(Denial(rank, seat, wanted, held, frame))
            self.claims[seat] = None
        else:
            pos, key = card
            face = self._shown_card(peer, seat, pos, key, frame, v.FALSE_CLAIM)
            if face != wanted:
                raise Violation(
                    v.FALSE_CLAIM,
                    peer.key,
                    f"claimed {CARD_TEXT[wanted]} but showed {CARD_TEXT[face]} (D3)",
                    (frame,),
                )
            self.claims[seat] = (pos, face)
            self._publish(seat, pos, face, key, frame)
        self._resolve_claims()

    def _on_disclose(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if self.stage != DISCLOSE:
            if self.stage < DISCLOSE:
                raise Wait
            raise Violation(v.PROTOCOL, peer.key, "a disclosure nobody asked for", (frame,))
        seat = self.seat_of[peer.key]
        due = self.disclosures.get(seat)
        pairs = dict(msg.body["keys"])
        if due is None or set(pairs) != due or len(pairs) != len(msg.body["keys"]):
            raise Violation(
                v.PROTOCOL,
                peer.key,
                f"disclosed positions {sorted(pairs)}, not the ones due: {sorted(due or ())}",
                (frame,),
            )
        for pos, key in sorted(pairs.items()):
            card = self._shown_card(peer, seat, pos, key, frame, v.FALSE_CLAIM)
            self._publish(seat, pos, card, key, frame)
            self._mark_shown(seat, card)
        del self.disclosures[seat]

    def _on_result(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if self.stage != RESULT:
            if self.stage < RESULT:
                raise Wait
            raise Violation(v.PROTOCOL, peer.key, "a second result", (frame,))
        if peer.result is not None:
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

    def _on_wait(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        """Nothing to apply: its heads did their work when it arrived (_compare_heads)."""

    def _on_leave(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        if self.stage in (DONE,):
            return  # a goodbye after the result changes nothing
        raise Violation(v.LEFT, peer.key, f"left the table: {msg.body['reason']}", (frame,))

    def _on_verdict(self, peer: _Peer, msg: m.Message, frame: bytes) -> None:
        """Another peer stopped the game. What it proves (its evidence) is checked here as
        if it had arrived on its own, in its senders' order; an accusation of silence is
        adopted only when this peer has itself waited for those peers for half the timeout
        (or knows it was suspended, when it is the one named); otherwise the sender stopped
        the game without proof and is named for it."""
        body = msg.body
        self._take_evidence(msg)  # done on arrival already; a resumed peer may hold it only now
        if self.stage == STOPPED:
            return  # the evidence itself convicted its signer (an equivocation)
        if any(self._pending(evidence) for evidence in body["evidence"]):
            raise Wait  # let the evidence apply in its own senders' order first
        culprits = tuple(body["culprits"])
        # A departure is proven by its signed leave (evidence, handled above); only silence,
        # which nothing can prove, is taken on another peer's word, and only as below.
        silent = body["kind"] == v.TIMEOUT and culprits
        # This peer's own silence it accepts only if it knows it was not running (its clock
        # jumped): otherwise anyone could make a peer concede by accusing it.
        me_asleep = self.me in culprits and self._suspended_at is not None
        # Others' silence it accepts only once it has itself heard nothing from them for half
        # the timeout: a verdict can bring a real timeout forward, never make one up.
        # An observer (a file has no clock) takes the owner's word for the time, not for who.
        half = self.config.timeout / 2
        waited = self.is_observer or all(
            k in self.peers and self._now - self.peers[k].heard_at >= half for k in culprits
        )
        seen_silent = waited and set(culprits) <= set(self.waiting_on())
        if silent and (seen_silent or me_asleep):
            self._stop(
                v.Verdict(
                    body["kind"],
                    tuple(self.seat_of.get(k, -1) for k in culprits),
                    culprits,
                    f"{body['reason']} (seen by {self.peers[peer.key].name or 'a peer'})",
                    (frame,),
                )
            )
            return
        raise Violation(
            v.LEFT, peer.key, f"stopped the game without proof: {body['reason']}", (frame,)
        )

    def _pending(self, frame: bytes) -> bool:
        """Whether ``frame`` (evidence in a verdict) is queued here and not applied yet."""
        try:
            _, payload, _ = open_frame(frame[4:])
            msg = m.parse_payload(payload)
        except FrameError:
            return False
        peer = self.peers.get(msg.sender)
        return peer is not None and msg.seq in peer.inbox and msg.seq not in peer.accepted

    # ---------------------------------------------------------------- cards and keys

    def _face_down(self, seat: int) -> set[int]:
        """The positions in ``seat``'s hand whose faces are not public (the same set at
        every peer, the seat's own included)."""
        g = self.game
        assert g is not None
        out = {pos for pos, owner in g.hidden_owner.items() if owner == seat}
        private = g.hands[seat] & ~g.shown[seat]
        while private:
            low = private & -private
            out.add(g.pos_of[low.bit_length() - 1])
            private ^= low
        return out

    def _shown_card(
        self, peer: _Peer, seat: int, pos: int, key: bytes, frame: bytes, kind: str
    ) -> int:
        """The card ``seat`` shows from its hand at ``pos`` with its own ``key``."""
        deck = self.deck
        assert deck is not None
        if pos >= self.size:
            raise Violation(kind, peer.key, f"deck position {pos} is beyond the deck", (frame,))
        g = self.game
        assert g is not None
        public_in_hand = g.face[pos] >= 0 and g.hands[seat] >> g.face[pos] & 1  # e.g. the trump
        if not public_in_hand and pos not in self._face_down(seat):
            raise Violation(kind, peer.key, f"deck position {pos} is not in its hand", (frame,))
        if not deck.key_is_valid(seat, pos, key):
            raise Violation(
                v.BAD_KEY,
                peer.key,
                f"its key for position {pos} does not match its key point",
                (frame,),
            )
        keys = deck.keys_for(pos, {seat: key})
        if keys is None:
            raise Wait  # another peer's key for that draw has not arrived here yet
        return self._open(pos, keys, peer, frame)

    def _open(self, pos: int, keys: list[bytes], peer: _Peer | None, frame: bytes) -> int:
        """Unmask ``pos``. With every pass proven and every key checked the point is always
        a card not seen elsewhere; if not, the proofs failed us: name who sent the keys."""
        assert self.deck is not None and self.game is not None
        card = self.deck.open(pos, keys)
        g = self.game
        if card is None or (g.pos_of[card] >= 0 and g.pos_of[card] != pos):
            sender = peer.key if peer is not None else b""
            what = "no card" if card is None else f"{CARD_TEXT[card]}, seen twice"
            raise Violation(v.BAD_CARD, sender, f"position {pos} opened to {what}", (frame,))
        return card

    def _publish(self, seat: int, pos: int, card: int, key: bytes, frame: bytes) -> None:
        """``seat`` showed ``card`` at ``pos`` with its key: everyone knows it now; a D3
        denial it refutes is a verdict (claims.py)."""
        g = self.game
        assert g is not None and self.deck is not None
        if g.face[pos] < 0:
            g.reveal(pos, card)
        self.deck.add_key(seat, pos, key)
        denial = self.claim_book.shown(pos, card)
        if denial is not None:
            self._mark_shown(seat, card)
            raise Violation(
                v.FALSE_CLAIM,
                self.seats[denial.seat],
                f"said it had no {CARD_TEXT[denial.card]} (D3), then showed it from "
                f"position {pos}, which it held then",
                (denial.frame, frame),
            )

    def _mark_shown(self, seat: int, card: int) -> None:
        """A card shown with its key that stays in the hand (a disclosure, a refuted
        denial) is public from now on, like a card taken from the table."""
        g = self.game
        assert g is not None
        if g.hands[seat] >> card & 1:
            g.shown[seat] |= 1 << card

    def _learn_faces(self, peer: _Peer | None, frame: bytes) -> None:
        """Unmask every position whose keys are all here and whose face this peer may see."""
        g = self.game
        deck = self.deck
        assert g is not None and deck is not None
        for pos, target in list(self.want_face.items()):
            mine = {self.my_seat: deck.my_key(pos)} if target == self.my_seat >= 0 else None
            keys = deck.keys_for(pos, mine)
            if keys is None:
                continue
            card = self._open(pos, keys, peer, frame)
            del self.want_face[pos]
            if g.face[pos] < 0:
                g.reveal(pos, card)
            if target == -1:
                self.claim_book.seen.add(card)
        self._after_engine_step(learn=False)

    def _after_engine_step(self, learn: bool = True) -> None:
        g = self.game
        deck = self.deck
        assert g is not None and deck is not None
        me = self.my_seat
        mine: dict[int, bytes] = {}
        for pos, target in g.take_reveal_requests():
            for s in range(len(self.seats)):
                if s != target and (s, pos) not in deck.keys:
                    self.owed[(s, pos)] = 0.0
            if target == -1 or target == me:
                self.want_face[pos] = target
            if not self.is_observer and target != me and (me, pos) not in deck.keys:
                mine[pos] = deck.my_key(pos)
        if mine:
            self._send(m.KEYS, {"keys": [[pos, key] for pos, key in sorted(mine.items())]})
        if learn and self.want_face:
            self._learn_faces(None, b"")
        if g.awaiting_lowest_trump and self.claim_rank < 0:
            self.claim_rank = g.rules.lowest_rank
            self.claims = {}
            self._send_claim()
        if g.is_over and self.stage == PLAY and not self.owed:
            self._end_of_play()

    def _send_claim(self) -> None:
        g = self.game
        if self.is_observer or g is None or self.deck is None:
            return
        me = self.my_seat
        card = self.claim_rank * 4 + g.trump
        body: Any = None
        if g.hands[me] >> card & 1:
            pos = g.pos_of[card]
            body = [pos, self.deck.my_key(pos)]
        self._send(m.CLAIM, {"rank": self.claim_rank, "card": body})

    def _resolve_claims(self) -> None:
        g = self.game
        assert g is not None
        if len(self.claims) < len(self.seats):
            return
        shown = [(s, c) for s, c in sorted(self.claims.items()) if c is not None]
        if shown:
            _, (pos, _card) = shown[0]
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

    # ---------------------------------------------------------------- the end

    def _end_of_play(self) -> None:
        """The game is over: settle pending D3 denials by disclosure, then the result."""
        g = self.game
        assert g is not None
        held = {s: self._face_down(s) for s in range(len(self.seats))}
        self.disclosures = self.claim_book.due(held)
        self.stage = DISCLOSE
        if not self.is_observer and self.my_seat in self.disclosures and self.deck is not None:
            due = sorted(self.disclosures[self.my_seat])
            self._send(m.DISCLOSE, {"keys": [[pos, self.deck.my_key(pos)] for pos in due]})

    def _send_result(self) -> None:
        g = self.game
        assert g is not None
        self.final_hash = g.state_hash()
        self.losers = tuple(g.losers)
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

    # ---------------------------------------------------------------- stage changes

    def _act(self) -> bool:
        """Move to the next stage when every peer has spoken; send what this peer owes."""
        stage = self.stage
        if stage == HELLO and all(p.nonce for p in self.peers.values()):
            self.game_id = game_id(self.table_id, [self.peers[k].nonce for k in self.roster])
            self.stage = SEAT
            limbo, self._limbo = self._limbo, []
            for msg, frame in limbo:
                self._admit(msg, frame)
            if not self.is_observer:
                self._send(m.SEAT, {"secret": self._seat_secret})
            return True
        if stage == SEAT and all(p.seat_secret for p in self.peers.values()):
            self._draw_seats()
            assert self.game_id is not None
            secrets = None
            if not self.is_observer:
                secrets = mp.DeckSecrets.from_seed(
                    self._seed, self.game_id, self.my_seat, self.size
                )
            self.deck = DeckPhase(self.game_id, len(self.seats), self.cards, secrets)
            self.stage = SHUFFLE1
            self._my_pass()
            return True
        if stage in (SHUFFLE1, SHUFFLE2) and self.deck is not None:
            turn = self.deck.next_turn()
            if turn is None:
                self.stage = PLAY
                self.game = new_hidden_game(
                    self.config.preset,
                    len(self.seats),
                    dealer=self.dealer,
                    first_game=self.config.game == 1,  # D3: only a session's first game
                    **self._options(),
                )
                self._after_engine_step()
                return True
            if stage == SHUFFLE1 and turn[0] != STAGE_PASS1:
                self.stage = SHUFFLE2
                self._my_pass()
                return True
            return self._my_pass()
        if stage == PLAY and self.game is not None and self.game.is_over and not self.owed:
            self._end_of_play()
            return True
        if stage == DISCLOSE and not self.disclosures:
            self._send_result()
            return True
        if stage == RESULT and all(p.result is not None for p in self.peers.values()):
            self.stage = DONE
            self._out.append(v.Finished(self.losers, self.final_hash))
            return True
        return False


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


def _seat_commitment(table: bytes, sender: bytes, secret: bytes) -> bytes:
    """The hello's commitment to the seat secret, bound to the table and the sender, so it
    cannot be copied to another table or by another peer."""
    return _hash(b"moska-p2p/v2/seat", table, sender, secret)


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
