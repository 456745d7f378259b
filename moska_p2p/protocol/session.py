"""The sans-IO peer: frames and local decisions in, frames and events out (h11's model).

A :class:`PeerSession` plays one game for one identity. It never touches a socket or a
clock: :meth:`receive` takes a frame's bytes, :meth:`play` a local move, :meth:`tick` the
time; each returns a list of outputs (frames to send to every other peer, and events). The
same class, with no identity, is the *observer* that ``moska verify`` runs over a transcript.

The session routes; the phases decide (PROTOCOL.md v2). A frame passes :mod:`.intake`
(envelope, signature, game, equivocation, the sender's window) into its sender's order
(:mod:`.ordering`, :mod:`.heads`); when its turn comes the stage table (:mod:`.stages`) says
whether it applies, waits or comes too late, and hands it to the phase of the stage, each a
small state machine of its own module:

1. **seating** (:mod:`.seating`): ``hello`` (nonce, seat commitment), ``seat`` (the secret):
   the seats and the dealer come from every secret together;
2. **the deck** (:mod:`.shuffling`, :mod:`.deck_phase`): ``shuffle1`` and ``shuffle2`` in
   seat order, each proven (a shuffle argument, a re-keying proof) and checked on arrival;
3. **play** (:mod:`.play_phase`, cards opened by :mod:`.reveals`): ``keys`` (the releases a
   draw or a public reveal needs), ``move``, ``claim`` (RULES D3, settled by :mod:`.claims`);
   at the end ``disclose`` (only what a pending D3 denial needs) and ``result`` (every peer
   signs the final state, the losers and its transcript's hash).

Every message is processed in its sender's sequence order; one that cannot apply yet waits in
its sender's queue, inside a bounded window. A message that breaks a rule stops the session
with a :class:`~.verdict.Verdict` naming its sender, the signed frame as evidence; so does
silence past the timeout, and leaving: either costs the culprit the game (a forfeit), and this
peer says so in a signed ``verdict`` message. A frame nobody can be blamed for (bad signature,
malformed, another game, a replay) is only :class:`Rejected`. Nothing raised by a check on
remote data escapes :meth:`receive`; an exception is a bug of this peer (:class:`LocalError`).
"""

from __future__ import annotations

import dataclasses
import secrets as system_random
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from ..crypto import deck as mp
from ..crypto.identity import Identity, is_acceptable_public_key, verify
from ..engine import Game, IllegalMove, Move, make_rules, parse_move
from ..engine.errors import RevealError
from . import messages as m
from . import stages
from . import verdict as v
from .abandonment import CONTACT, Abandonment, Waiting, is_act
from .claims import ClaimBook
from .config import TableConfig, table_id
from .deck_phase import DeckJob, DeckPhase
from .drbg import drbg
from .frames import FrameError, encode_frame, open_frame
from .heads import Heads
from .intake import LIMBO_FRAMES, Intake
from .ordering import WINDOW
from .phase import Handler, Peer, Phase, Violation, Wait
from .play_phase import PlayPhase, transcript_digest
from .seating import Seating
from .shuffling import Shuffling
from .stages import DISCLOSE, DONE, HELLO, PLAY, RESULT, SEAT, SHUFFLE1, SHUFFLE2, STAGES, STOPPED

__all__ = [
    "DISCLOSE", "DONE", "HELLO", "LIMBO_FRAMES", "PLAY", "RESULT", "SEAT", "SHUFFLE1",
    "SHUFFLE2", "STAGES", "STOPPED", "WINDOW", "LocalError", "PeerSession", "drbg",
    "transcript_digest",
]  # fmt: skip


class LocalError(ValueError):
    """This peer asked for something the protocol does not allow now (like h11's
    LocalProtocolError), or hit a bug of its own: nothing was sent."""


# Failures of a check on a sender's data: each becomes a verdict naming that sender.
_REMOTE_FAULTS = (mp.DeckError, RevealError, IllegalMove, m.MessageError)


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
        self.peers = {key: Peer(key=key, index=i) for i, key in enumerate(self.roster)}
        if config.seating and sorted(config.seating) != self.roster:
            raise LocalError("the session's seating does not list this table's players")
        self.table_id = table_id(config, self.roster)
        self.game_id: bytes | None = None
        self._stage = HELLO
        self.verdict: v.Verdict | None = None
        self.transcript: list[bytes] = []
        self.name = name
        self._rng = rng or system_random.token_bytes
        self._out: list[v.Output] = []
        self.heads = Heads(self.roster, self.peers, self._out_frame, identity is not None)
        self.intake = Intake(self)
        self.abandonment = Abandonment(self)
        for peer in self.peers.values():
            peer.contact_at = now
        self._alive_at = -1.0e18  # when this peer last sent anything (a keep-alive is due)
        self.last_progress = now
        self._now = now
        self._clock: float | None = None
        self._suspension: tuple[float, float] | None = None
        """The last gap between two ticks (from, to) longer than ``max_tick_gap``, until an
        accusation of this peer's silence answers it (§15.3): it excuses that one only."""
        self.owner_word: bool | None = None
        """An observer replaying a file: what the file's owner did with the verdict of
        silence it is about to apply (True: took it, False: refused it; None: judge by the
        rules). That hangs on the owner's clock, which a file cannot show (§17); a verdict
        of silence convicts nobody either way (§15.4)."""
        self.relayed_paths: frozenset[bytes] = frozenset()
        """The peers whose link to this one goes through a relay, as the driver last said
        (:meth:`set_relayed_paths`): this peer's verdict says so, signed (§7.11, §23)."""
        self.max_tick_gap: float | None = None
        """Set by a driver that ticks regularly: a longer gap between two ticks means this
        peer was suspended, and the silence it did not watch is not held against anyone."""
        self.size = 52 - 4 * make_rules(config.preset, **dict(config.options)).lowest_rank
        self.cards = list(range(52 - self.size, 52))
        self._nonce = self._rng(32)
        self._seat_secret = self._rng(32)
        self._seed = self._rng(32)
        # The phases, each a state machine over its stages (stages.py), and who handles what.
        self.seating = Seating(self, self.table_id, name, self._nonce, self._seat_secret)
        self.shuffling = Shuffling(self, self._seed, self.cards)
        self.play_phase = play = PlayPhase(self)
        self._phases: dict[str, Phase] = {
            stages.SEATING: self.seating,
            stages.SHUFFLING: self.shuffling,
            stages.PLAYING: play,
        }
        self._handlers: dict[str, Handler] = {
            m.WAIT: self._on_wait,
            m.LEAVE: self._on_leave,
            m.VERDICT: self._on_verdict,
            m.SILENT: self._on_silent,
        }
        for phase in self._phases.values():
            self._handlers |= phase.handlers()

    # ------------------------------------------------------------------ public API

    @property
    def stage(self) -> int:
        """Where the game is (:mod:`.stages`); it changes only through :meth:`enter`."""
        return self._stage

    def enter(self, stage: int) -> None:
        """Move to ``stage``, along an edge of :data:`.stages.EDGES` only: any other step is
        a bug of this peer (a :class:`LocalError`, and the stage stays as it was)."""
        try:
            stages.check_edge(self._stage, stage)
        except stages.EdgeError as error:
            raise LocalError(str(error)) from None
        self._stage = stage

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
            and g.to_act_seat >= 0
            and g.to_act_seat == self.my_seat
            and not g.hidden[self.my_seat]
        )

    # What the phases hold, read here by drivers, tools and tests.

    @property
    def seats(self) -> list[bytes]:
        """The public key of each seat (empty until every seat secret is in)."""
        return self.seating.seats

    @property
    def seat_of(self) -> dict[bytes, int]:
        return self.seating.seat_of

    @property
    def dealer(self) -> int:
        return self.seating.dealer

    @property
    def deck(self) -> DeckPhase | None:
        return self.shuffling.deck

    @property
    def offload(self) -> bool:
        """Whether the driver runs the deck's costly steps itself, off its event loop
        (:meth:`take_jobs`, :meth:`finish_job`; :attr:`.Shuffling.offload`)."""
        return self.shuffling.offload

    @offload.setter
    def offload(self, value: bool) -> None:
        self.shuffling.offload = value

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

    @property
    def game(self) -> Game | None:
        return self.play_phase.game

    @property
    def moves(self) -> list[tuple[int, str]]:
        return self.play_phase.moves

    @property
    def final_hash(self) -> str:
        return self.play_phase.final_hash

    @property
    def losers(self) -> tuple[int, ...]:
        """The game's losers: from the result, or the culprits of the verdict."""
        return self.play_phase.losers

    @property
    def claim_rank(self) -> int:
        return self.play_phase.claim_rank

    @property
    def claims(self) -> dict[int, tuple[int, int] | None]:
        return self.play_phase.claims

    @property
    def claim_book(self) -> ClaimBook:
        return self.play_phase.claim_book

    @property
    def want_face(self) -> dict[int, int]:
        return self.play_phase.reveals.want_face

    @property
    def _seen(self) -> set[bytes]:
        return self.intake.seen

    @property
    def _limbo(self) -> list[tuple[m.Message, bytes]]:
        return self.intake.limbo

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
        self.seating.begin()
        self._pump(now)
        return self._drain()

    def receive(self, frame: bytes, now: float = 0.0) -> list[v.Output]:
        """Take one frame (length prefix included, as on the wire or in a transcript)."""
        self._now = now
        if self.stage in (DONE, STOPPED):
            # The game is over here: a late frame changes nothing, but a peer still playing
            # may lack what this one holds (§8.3): answer it.
            self._answer_after_end(frame)
            return self._drain()
        self._observe_clock(now)
        self.intake.ingest(frame)
        self._pump(now)
        return self._drain()

    def play(self, move: Move | str, now: float = 0.0) -> list[v.Output]:
        """Play this peer's move (it must be its turn); raises IllegalMove or LocalError."""
        self._now = now
        g = self.game
        if not self.my_turn or g is None or self.deck is None:
            raise LocalError("it is not this peer's turn")
        parsed = parse_move(move) if isinstance(move, str) else move
        trial = g.copy()
        trial.play(parsed)  # raises IllegalMove: nothing is sent
        self.send(self.play_phase.move_body(parsed))
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
                self.send(m.LeaveBody(reason=reason[:200]))
            except Violation as violation:
                self.stop_for(violation)
        return self._drain()

    def set_relayed_paths(self, keys: Iterable[bytes]) -> None:
        """The driver's word on the paths: ``keys`` are the peers whose link to this one
        goes through a relay now (the others are direct, or down). The session never looks
        outward for it; it only signs it into its verdict (``relayed``, §7.11), so that a
        record of silence says whether a relay stood between the signer and the silent."""
        relayed = frozenset(keys)
        if not relayed <= set(self.roster) - {self.me}:
            raise LocalError("a relayed path names a key that is not another player's")
        self.relayed_paths = relayed

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

    def frames_lacked_by(self, key: bytes) -> list[bytes]:
        """What peer ``key`` lacks of the frames held here, by the heads of its latest
        message applied here (its own count included): a peer done with the game hands these
        over before its goodbye, since its link may be the only way a third peer's last
        frames (a result) still reach ``key`` (§8.3)."""
        peer = self.peers.get(key)
        if peer is None or key == self.me or not peer.accepted:
            return []
        latest = peer.accepted[max(peer.accepted)][1]
        heads = m.parse_payload(open_frame(latest[4:])[1]).heads
        have = {k: count for k, (count, _) in zip(self.roster, heads, strict=True)}
        have[key] = peer.next_seq
        return self.frames_after(have)

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
            self.heads.mine() if heads is None else heads,
        )
        return encode_frame(kind, payload, self.identity.sign(kind, payload))

    def tick(self, now: float) -> list[v.Output]:
        """Let time pass: the clocks of the seats the game waits for run (§15.1).

        Before the seats are drawn, and at a table of two, a seat that owes an answer past
        its deadline is named in a ``timeout`` (lost contact, §15.4). From the deck on, at
        three seats or more, this peer signs a ``silent`` statement about it instead, and the
        statements of every other seat convict it (``abandoned``, §15.5); a statement no
        quorum followed within the timeout ends the game with an uncorroborated ``timeout``.
        Only silence this peer saw while it was running counts (a jump of its own clock
        restarts every clock). A running peer says so every ``interval`` (a keep-alive).
        """
        self._now = now
        if self.stage in (DONE, STOPPED):
            return self._drain()
        self._observe_clock(now)
        waiting = self.waiting_on()
        since = self.last_progress
        try:
            if self.stage in (HELLO, SEAT) or not self.abandonment.corroborating():
                gone = self._gone(waiting, since, now)
                if gone:
                    self._stop_silent(gone)
            else:
                self._corroborate(waiting, since, now)
        except Violation as violation:
            self.stop_for(violation)
        running = self.stage not in (DONE, STOPPED) and not self.is_observer
        if running and self.game_id and now - self._alive_at >= self.abandonment.interval:
            self.send(m.WaitBody())  # a keep-alive: its heads also ask for what is missing
        return self._drain()

    def _gone(self, waiting: list[bytes], since: float, now: float) -> list[bytes]:
        """The seats waited for past their deadline (before the seats are drawn: the move
        clock only, the timeout since the last progress)."""
        if self.stage in (HELLO, SEAT):
            return list(waiting) if now - since > self.config.timeout else []
        out = [k for k in waiting if k != self.me]
        return [k for k in out if now >= self.abandonment.deadline(k, since, now)[1]]

    def _corroborate(self, waiting: list[bytes], since: float, now: float) -> None:
        """Sign a statement about every seat past its deadline; stop with an uncorroborated
        ``timeout`` once a statement of this peer waited the timeout for its quorum."""
        for key in self.abandonment.due(waiting, since, now):
            self.send(self.abandonment.body(key, now))
            if self.stage == STOPPED:
                return
        # The others' deadlines may lag this peer's by up to the grace (what each was last
        # relayed): a statement waits that long for its quorum.
        window = max(self.config.timeout, self.config.grace)
        stale = [
            k
            for k in waiting
            if (at := self.abandonment.stated(k)) is not None and now - at > window
        ]
        if stale:
            self._stop_silent(stale, " (the table did not corroborate it)")

    def _stop_silent(self, keys: list[bytes], note: str = "") -> None:
        self._stop(
            v.Verdict(
                v.TIMEOUT,
                tuple(self.seat_of.get(k, -1) for k in keys),
                tuple(keys),
                f"did not answer within {self.config.timeout:g} s{note}",
            )
        )

    def waiting_status(self, now: float) -> list[Waiting]:
        """What the table waits for, for the screens ("bob is not answering: the game waits
        45 s for them"): every other seat the game waits for, which clock runs for it (its
        move clock while it is heard, the grace while it is not) and the seconds left."""
        if self.stage in (DONE, STOPPED):
            return []
        return self.abandonment.status(self.waiting_on(), self.last_progress, now)

    def heard_from(self, peer: Peer) -> None:
        """A new signed frame of ``peer`` was admitted (the intake's call): its contact
        clock starts again."""
        self.abandonment.heard(peer, self._now)

    def _observe_clock(self, now: float) -> None:
        """Notice that this peer was not running (its driver ticks every few tenths of a
        second, so a longer gap since the last call means a suspension): the silence it did
        not watch is not held against anyone, and an accusation of its own silence may be
        true. Called on every entry, as frames read after a suspension may come before the
        first tick."""
        gap = self.max_tick_gap
        if gap is not None and self._clock is not None and now - self._clock > gap:
            self.last_progress = now
            self._suspension = (self._clock, now)
            self.abandonment.reset(now)
        self._clock = max(now, self._clock or now)

    def waiting_on(self) -> list[bytes]:
        """The peers this session waits for, in roster order."""
        held_back = self.heads.held_back()
        if held_back:
            # Their heads name a message nobody has shown here: an honest one shows it at
            # once (it answers this peer's copy with the equivocation's proof).
            return held_back
        phase = self._phases.get(stages.PHASE[self.stage])
        return phase.waiting_on() if phase is not None else []

    # ------------------------------------------------------------------ machinery

    def emit(self, output: v.Output) -> None:
        """An event (or a frame to send) for the driver, returned by the current call."""
        self._out.append(output)

    def _out_frame(self, frame: bytes) -> None:
        self._out.append(v.Send(frame))

    def _drain(self) -> list[v.Output]:
        out, self._out = self._out, []
        return out

    def send(self, body: m.Body) -> None:
        """Sign a message, apply it here at once (so the transcript keeps cause before
        effect), and send it."""
        assert self.identity is not None
        kind = m.kind_of(body)
        me = self.peers[self.me]
        gid = self.table_id if kind == m.HELLO else self.game_id
        assert gid is not None
        payload = m.encode_body(gid, self.me, me.next_seq, me.last_hash, body, self.heads.mine())
        frame = encode_frame(kind, payload, self.identity.sign(kind, payload))
        msg = m.parse_payload(payload)
        self.intake.seen.add(msg.hash)
        self._alive_at = self._now
        self._out.append(v.Send(frame))
        self._accept(me, msg, frame)  # first: a message sent while applying it comes next
        try:
            self._apply(me, msg, frame)
        except Wait:  # pragma: no cover - our own messages are made when they apply
            raise LocalError(f"own {kind} message could not apply") from None
        except Violation as violation:  # a modified client convicts itself too
            self.stop_for(violation)

    def _accept(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        if msg.type != m.WAIT:  # a wait says "still here", not "the game moved"
            self.last_progress = self._now  # any message applied, this peer's own included
        peer.heard_at = self._now
        if is_act(msg.type):
            peer.last_act = msg.seq
        peer.accept(msg, frame)

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
                self.stop_for(violation)

    def _step(self, peer: Peer) -> bool:
        """Apply the next message of one sender; whether it applied."""
        msg, frame = peer.inbox[peer.next_seq]
        if self.heads.contradicts(msg):
            return False  # wait for the equivocation's other half (bounded by the timeout)
        if msg.prev != peer.last_hash:
            # This peer's copy of the previous message goes with it: a peer that holds
            # another one under that number has both halves of the equivocation (§14.3).
            previous = peer.accepted.get(msg.seq - 1)
            self.stop_for(
                Violation(
                    v.PROTOCOL,
                    peer.key,
                    f"message {msg.seq} does not follow the sender's previous one",
                    (frame,) if previous is None else (previous[1], frame),
                )
            )
            return False
        # Accept before applying, so that a message this peer sends while applying (its own
        # queued move, on resume) takes the next number.
        before = (peer.next_seq, peer.last_hash)
        clocks = (self.last_progress, peer.heard_at)
        self._accept(peer, msg, frame)
        try:
            self._apply(peer, msg, frame)
        except Wait:
            # Not applied: no progress, and nothing heard from its sender. Counting the try
            # would let any frame that makes this peer try again (a queued sender's `wait`)
            # hold off its timeout and its own `wait`.
            peer.unaccept(msg.seq, before)
            self.last_progress, peer.heard_at = clocks
            return False
        except Violation as violation:
            self.stop_for(violation)
            return False
        except _REMOTE_FAULTS as error:
            self.stop_for(Violation(v.PROTOCOL, peer.key, f"{msg.type}: {error}", (frame,)))
            return False
        except Exception as error:  # a bug here: say so, blame nobody
            raise LocalError(f"this peer failed on a {msg.type} message: {error!r}") from error
        peer.done(msg.seq)
        return True

    def stop_for(self, violation: Violation) -> None:
        """Stop the game with a verdict naming the violation's sender (its evidence kept)."""
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
        """Stop the game. Convicted culprits forfeit it (they are its losers); a peer this
        one only lost contact with is named but loses nothing (§15.4). This peer signs its
        verdict so the transcript ends with what it concluded and why."""
        if not self.is_observer:
            # What this peer can say of its paths when it stops (§23): signed below.
            relayed = tuple(k for k in self.roster if k in self.relayed_paths)
            verdict = dataclasses.replace(verdict, relayed=relayed)
        self.verdict = verdict
        self.play_phase.losers = self.outcome_losers(verdict)
        me = self.peers.get(self.me)
        # Before every hello is in there is no game id: the verdict is then signed for the
        # table (its second message, right after its hello), so a table that ends before its
        # game began still leaves a signed record naming who ended it.
        game = self.game_id or (self.table_id if me is not None and me.next_seq == 1 else None)
        if not self.is_observer and game is not None and self.me not in verdict.keys:
            evidence: list[bytes] = []
            for f in verdict.evidence[: m.MAX_EVIDENCE]:
                if len(f) > m.MAX_EVIDENCE_FRAME:
                    continue
                if sum(len(e) for e in evidence) + len(f) > m.MAX_EVIDENCE_BYTES:
                    break
                evidence.append(f)
            body = m.VerdictBody(
                kind=verdict.kind,
                culprits=tuple(verdict.keys),
                reason=verdict.reason[:400],
                evidence=tuple(evidence),
                relayed=tuple(verdict.relayed),
            )
            assert me is not None
            payload = m.encode_body(
                game, self.me, me.next_seq, me.last_hash, body, self.heads.mine()
            )
            frame = encode_frame(m.VERDICT, payload, self.identity.sign(m.VERDICT, payload))  # type: ignore[union-attr]
            self._accept(me, m.parse_payload(payload), frame)
            self.transcript.append(frame)
            self._out.append(v.Send(frame))
        self.enter(STOPPED)
        self._out.append(v.Stopped(verdict))

    def outcome_losers(self, verdict: v.Verdict) -> tuple[int, ...]:
        """The losers of a game this verdict stops (§15.2): those the engine already made
        losers, once the signed moves have ended the game (nothing anyone withholds, says or
        does afterwards can change that), and every convicted culprit."""
        g = self.game
        decided = g.loser_seats if g is not None and g.is_over else ()
        convicted = tuple(s for s in verdict.seats if s >= 0) if verdict.conviction else ()
        return decided + tuple(s for s in convicted if s not in decided)

    # ---------------------------------------------------------------- applying messages

    def _apply(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        """Run a message's handler. The frame enters the transcript first, so whatever the
        handler sends in answer follows it; a message that must wait leaves no trace."""
        at = len(self.transcript)
        self.transcript.append(frame)
        try:
            self._route(peer, msg, frame)
        except Wait:
            del self.transcript[at]
            raise

    def _route(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        """Hand a message to its handler, as the stage table says (stages.TABLE): a message
        of a kind this stage does not take waits (early) or is refused (too late)."""
        what = stages.rule(self.stage, msg.type)
        if what == stages.WAIT:
            raise Wait
        if what == stages.APPLY:
            self._handlers[msg.type](peer, msg, frame)
        elif what != stages.IGNORE:
            raise Violation(v.PROTOCOL, peer.key, what, (frame,))

    def begin_game(self, game_id: bytes) -> None:
        """Every hello is in: the game id is known, and the frames that came before it are
        admitted now."""
        self.game_id = game_id
        self.intake.release()

    # -- the session's own messages, in every stage

    def _on_wait(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        """Nothing to apply: its heads did their work when it arrived (heads.py)."""

    def _on_leave(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        """Leaving before the result forfeits (after it, the stage table ignores a goodbye)."""
        reason = msg.body_as(m.LeaveBody).reason
        raise Violation(v.LEFT, peer.key, f"left the table: {reason}", (frame,))

    def _on_verdict(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        """Another peer stopped the game. What it proves (its evidence) is checked here as
        if it had arrived on its own, in its senders' order; an accusation of silence is
        adopted only when this peer has itself waited for those peers for half the timeout
        (or knows it was suspended, when it is the one named); otherwise the sender stopped
        the game without proof and is named for it."""
        body = msg.body_as(m.VerdictBody)
        # Done on arrival already; a resumed peer may hold the evidence only now.
        self.intake.take_evidence(msg)
        if self.stage == STOPPED:
            return  # the evidence itself convicted its signer (an equivocation)
        if any(self._pending(evidence) for evidence in body.evidence):
            raise Wait  # let the evidence apply in its own senders' order first
        culprits = body.culprits
        if body.kind == v.ABANDONED and len(culprits) == 1:
            # Proven by its evidence, applied here by now: every other seat's statement.
            proof = self.abandonment.proves(culprits[0], list(body.evidence))
            if proof is not None:
                self._stop(
                    v.Verdict(
                        v.ABANDONED,
                        (self.seat_of.get(culprits[0], -1),),
                        culprits,
                        body.reason,
                        proof,
                    )
                )
                return
        # A departure is proven by its signed leave (evidence, handled above); only silence,
        # which nothing can prove, is taken on another peer's word, and only as below.
        silent = body.kind == v.TIMEOUT and culprits
        if self.is_observer and self.owner_word is not None:
            seen_silent = self.owner_word
        elif self.me in culprits:
            # A running peer never takes an accusation of its own silence: only one that
            # answers a suspension it knows of (its clock jumped), once (§15.3).
            seen_silent = self._answers_suspension()
        else:
            # Others' silence it accepts only once it has seen it itself: a verdict can
            # bring a real timeout forward, never make one up. An observer (a file has no
            # clock) takes the owner's word for the time, not for who.
            waiting = set(self.waiting_on())
            seen_silent = all(k in waiting and self._sees_silence(k) for k in culprits)
        if silent and seen_silent:
            self._stop(
                v.Verdict(
                    body.kind,
                    tuple(self.seat_of.get(k, -1) for k in culprits),
                    culprits,
                    f"{body.reason} (seen by {self.peers[peer.key].name or 'a peer'})",
                    (frame,),
                )
            )
            return
        raise Violation(
            v.LEFT, peer.key, f"stopped the game without proof: {body.reason}", (frame,)
        )

    def _sees_silence(self, key: bytes) -> bool:
        """Whether this peer has itself seen ``key`` silent (§15.3 step 3): it signed its own
        statement about it, or has not heard it for three keep-alives while waiting on it for
        half the timeout (before the seats are drawn, while nothing is heard from it)."""
        if self.is_observer:
            return True
        peer = self.peers.get(key)
        if peer is None:
            return False
        half = self.config.timeout / 2
        if self.stage in (HELLO, SEAT):
            return self._now - peer.heard_at >= half
        if self.abandonment.stated(key) is not None:
            return True
        return (
            not self.abandonment.in_contact(key, self._now)
            and self._now - self.last_progress >= half
        )

    def _on_silent(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        """A statement of silence (§15.5): kept, the quorum checked; and if this peer does
        not hear that seat either, it corroborates at once instead of waiting for its own
        deadline (the peers' contact clocks differ by what each was last relayed)."""
        self.abandonment.on_silent(peer, msg, frame)
        statement = msg.body_as(m.SilentBody)
        key, point = statement.culprit, statement.point
        if (
            self.is_observer
            or peer.key == self.me
            or key == self.me
            or point != self.abandonment.point(key)
            or self.abandonment.stated(key) is not None
            or not self.abandonment.corroborating()
            or key not in self.waiting_on()
        ):
            return
        clock, _ = self.abandonment.deadline(key, self.last_progress, self._now)
        moved = self._now - self.last_progress >= self.config.timeout
        if clock == CONTACT or moved:
            self.send(self.abandonment.body(key, self._now))

    def _answers_suspension(self) -> bool:
        """Whether an accusation of this peer's silence, arriving now, answers the last
        suspension this peer knows of: it comes within half the timeout after this peer woke
        (the others' verdicts were waiting for it then; a verdict signed after the peer woke
        would have heard it). The suspension is used up either way: it excuses the one
        accusation it can explain, never a later one."""
        gap, self._suspension = self._suspension, None
        return gap is not None and self._now - gap[1] <= self.config.timeout / 2

    def _answer_after_end(self, frame: bytes) -> None:
        """A frame reaching a session that is done or stopped: nothing applies, but a peer
        still playing may lack what this one holds (§8.3). A keep-alive's heads get it the
        frames it lacks (a frame lost on one link), and a frame that contradicts this peer's
        copy of the same message gets that copy, the other half of the equivocation."""
        if self.is_observer or self.game_id is None:
            return
        try:
            kind, payload, signature = open_frame(frame[4:])
            msg = m.parse_payload(payload)
        except FrameError:
            return
        sender = self.peers.get(msg.sender)
        if sender is None or msg.game != self.game_id or len(msg.heads) != len(self.roster):
            return
        if msg.hash in self.intake.seen or not verify(msg.sender, kind, payload, signature):
            return  # a copy (relayed again) says nothing new: answering it would echo forever
        self.intake.seen.add(msg.hash)
        held = sender.held(msg.seq)
        if held is not None and held[0] != msg.hash:
            self.heads.relay(msg.sender, msg.seq, held[1])
        self.heads.compare(msg)

    def _pending(self, frame: bytes) -> bool:
        """Whether ``frame`` (evidence in a verdict) is queued here and not applied yet."""
        try:
            _, payload, _ = open_frame(frame[4:])
            msg = m.parse_payload(payload)
        except FrameError:
            return False
        peer = self.peers.get(msg.sender)
        return peer is not None and msg.seq in peer.inbox and msg.seq not in peer.accepted

    def send_claim(self) -> None:
        """This peer's D3 claim for the round under way (a method of the session, so that a
        test can make a lying client by replacing it)."""
        self.play_phase.send_claim()

    # ---------------------------------------------------------------- stage changes

    def _act(self) -> bool:
        """Let the phase of this stage move on when every peer has done its part (sending
        what this peer owes then); when it hands over to the next phase, that one begins."""
        phase = self._phases.get(stages.PHASE[self.stage])
        if phase is None or not phase.advance():
            return False
        following = self._phases.get(stages.PHASE[self.stage])
        if following is not None and following is not phase:
            following.begin()
        return True
