"""The proven deck of one game, sans-IO: both shuffle passes and every key release.

The session decides *when* a pass or a key is due (turn order, which reveal the engine asked
for); this component decides *whether* what arrived is right, and holds the deck's public
state: every pass's output, every seat's public pass-1 scalar ``A_s`` and key points
``K_s[j]``, and every key released so far (PROTOCOL.md, "The deck").

Every check here is local and immediate: a pass is verified against its proof when it
arrives, a key against its key point when it arrives, so a cheat is named at the message that
carries it, and nothing waits for an end-of-game audit. A failed check raises
:class:`~moska_p2p.crypto.deck.DeckError`; the session turns it into a verdict naming the
sender with the signed frame as evidence.

Offloaded work. Checking a pass and making one are the deal's only
costly steps (tens of milliseconds each). A driver that must stay responsive (the network
peer's event loop) sets its session's ``offload``: those steps then become jobs
(:class:`DeckJob`), pure functions over immutable copies of their inputs, which the driver
runs wherever it likes (a worker thread) and hands back (:meth:`DeckPhase.finish`); the
message they belong to waits in its sender's queue meanwhile, exactly as a pass that came
early waits for its turn. Nothing of the protocol changes: a pass is still accepted only once
its proof verified, in seat order, with the same verdict if it fails, and this seat's own pass
goes out with the same bytes.

What offloading adds is a pipeline: when the pass right before this seat's arrives, this seat
starts its own pass from that (still unverified) output at once, in parallel with the check.
The result is only kept aside: it is signed and sent after the check passed and only if the
input it was made from is the one accepted; a failed check discards it, and the verdict is
the one an inline check gives.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import cast

from ..crypto import deck as mp
from . import messages as m

STAGE_PASS1 = "shuffle1"
STAGE_PASS2 = "shuffle2"

VERIFY = "verify"
MAKE = "make"


@dataclass(frozen=True, eq=False)
class DeckJob:
    """One costly, pure step of the deck for a driver to run, then hand back with
    :meth:`DeckPhase.finish` (see the module docstring).

    ``run`` reads only immutable copies taken when the job was made, touches no state and
    never raises for a peer's bad data: a failed check returns its
    :class:`~moska_p2p.crypto.deck.DeckError`. So it may run in any thread, and the phase
    itself is only ever touched by its driver's thread.
    """

    kind: str
    """:data:`VERIFY` another seat's pass, or :data:`MAKE` this seat's."""
    stage: str
    seat: int
    key: tuple[object, ...]
    run: Callable[[], object]


class DeckPhase:
    """The deck's public state and the local seat's secrets (none for an observer)."""

    def __init__(
        self,
        game_id: bytes,
        seats: int,
        cards: Sequence[int],
        secrets: mp.DeckSecrets | None,
    ) -> None:
        self.game_id = game_id
        self.seats = seats
        self.cards = list(cards)
        self.size = len(self.cards)
        self.initial = mp.card_points(game_id, self.cards)
        self.table = dict(zip(self.initial, self.cards, strict=True))
        self.secrets = secrets
        self.pass1: list[list[bytes]] = []
        self.scalars: list[bytes] = []
        self.pass2: list[list[bytes]] = []
        self.key_points: list[list[bytes]] = []
        self.keys: dict[tuple[int, int], bytes] = {}
        # What this seat's own make_pass1/make_pass2 computed, as an immutable copy: a pass
        # that arrives byte for byte as made here needs no proof check (see _made_here).
        self._made: dict[str, tuple[object, ...]] = {}
        self._jobs: list[DeckJob] = []  # made, not yet taken by the driver
        self._running: set[tuple[object, ...]] = set()
        self._outcomes: dict[tuple[object, ...], object] = {}

    # ------------------------------------------------------------------ the passes

    def context(self, seat: int, stage: str) -> bytes:
        return mp.deck_context(self.game_id, seat, stage)

    @property
    def shuffled(self) -> bool:
        return len(self.pass2) == self.seats

    def next_turn(self) -> tuple[str, int] | None:
        """Which pass is due and whose (seat order, pass 1 first); ``None`` when done."""
        if len(self.pass1) < self.seats:
            return STAGE_PASS1, len(self.pass1)
        if len(self.pass2) < self.seats:
            return STAGE_PASS2, len(self.pass2)
        return None

    def _pass1_input(self) -> list[bytes]:
        return self.pass1[-1] if self.pass1 else self.initial

    def _pass2_input(self) -> list[bytes]:
        return self.pass2[-1] if self.pass2 else self.pass1[-1]

    def accept_pass1(self, seat: int, body: m.Shuffle1Body, *, verified: bool = False) -> None:
        """Check ``seat``'s pass-1 output against its shuffle argument, then keep it
        (``verified``: a :class:`DeckJob` of :meth:`check` did, for this very body)."""
        assert self.next_turn() == (STAGE_PASS1, seat)
        points, scalar, proof = list(body.points), body.scalar, body.proof
        if not verified and not self._made_here(
            STAGE_PASS1, seat, (tuple(self._pass1_input()), body.points, scalar, proof)
        ):
            mp.verify_pass1(
                self.context(seat, STAGE_PASS1), self._pass1_input(), points, scalar, proof
            )
        self.pass1.append(points)
        self.scalars.append(scalar)

    def accept_pass2(self, seat: int, body: m.Shuffle2Body, *, verified: bool = False) -> None:
        """Check ``seat``'s pass-2 output against its re-keying proof, then keep it
        (``verified``: a :class:`DeckJob` of :meth:`check` did, for this very body)."""
        assert self.next_turn() == (STAGE_PASS2, seat)
        points, key_points, proof = list(body.points), list(body.keys), body.proof
        if len(key_points) != self.size:
            raise mp.DeckError(f"{len(key_points)} key points, not {self.size}")
        received = (tuple(self._pass2_input()), body.points, body.keys, proof)
        if not verified and not self._made_here(STAGE_PASS2, seat, received):
            mp.verify_pass2(
                self.context(seat, STAGE_PASS2),
                self._pass2_input(),
                points,
                self.scalars[seat],
                key_points,
                proof,
            )
        self.pass2.append(points)
        self.key_points.append(key_points)

    def make_pass1(
        self, seat: int, made: tuple[Sequence[bytes], bytes] | None = None
    ) -> m.Shuffle1Body:
        """This seat's pass-1 message body: its output, ``A_s`` and the shuffle argument
        (``made``: what a :data:`MAKE` job computed from this very input)."""
        assert self.secrets is not None
        source = self._pass1_input()
        if made is None:
            made = mp.pass1(self.secrets, self.context(seat, STAGE_PASS1), source)
        points, proof = made
        record = (seat, tuple(source), tuple(points), self.secrets.public_scalar, proof)
        self._made[STAGE_PASS1] = record
        return m.Shuffle1Body(scalar=self.secrets.public_scalar, points=tuple(points), proof=proof)

    def make_pass2(
        self, seat: int, made: tuple[Sequence[bytes], Sequence[bytes], bytes] | None = None
    ) -> m.Shuffle2Body:
        """This seat's pass-2 message body: its output, key points and re-keying proof
        (``made``: what a :data:`MAKE` job computed from this very input)."""
        assert self.secrets is not None
        source = self._pass2_input()
        if made is None:
            made = mp.pass2(self.secrets, self.context(seat, STAGE_PASS2), source)
        points, key_points, proof = made
        self._made[STAGE_PASS2] = (seat, tuple(source), tuple(points), tuple(key_points), proof)
        return m.Shuffle2Body(points=tuple(points), keys=tuple(key_points), proof=proof)

    # ------------------------------------------------------------------ offloaded work

    def check(
        self, seat: int, stage: str, body: m.Shuffle1Body | m.Shuffle2Body, tag: bytes
    ) -> bool:
        """For an offloading driver: whether ``seat``'s pass (the message hashed ``tag``, whose
        turn it is) has been checked and may be accepted with ``verified=True``. ``False``:
        its :data:`VERIFY` job is out (made now if need be), so the message must wait. A
        failed check raises its :class:`~moska_p2p.crypto.deck.DeckError` here, where an
        inline check would have.

        When the pass is the one right before this seat's, a :data:`MAKE` job for this seat's
        own pass from that output goes out with the check (the pipeline)."""
        assert self.next_turn() == (stage, seat)
        key: tuple[object, ...] = (VERIFY, stage, seat, tag)
        if key in self._outcomes:
            outcome = self._outcomes.pop(key)
            if isinstance(outcome, mp.DeckError):
                raise outcome
            return True
        if key in self._running:
            return False
        run = self._verifier(seat, stage, body)
        if run is None:  # this seat's own pass, byte for byte: nothing to check
            return True
        self._queue(DeckJob(VERIFY, stage, seat, key, run))
        next_stage, next_seat = self._after(stage, seat)
        if self.secrets is not None and next_seat == self.secrets.seat:
            self._queue_make(next_stage, next_seat, body.points)
        return False

    def my_pass(self, seat: int) -> m.Shuffle1Body | m.Shuffle2Body | None:
        """For an offloading driver: this seat's pass body for the pass due now (its turn), or
        ``None`` while its :data:`MAKE` job runs (made now if none was made from this input,
        by the pipeline or before)."""
        turn = self.next_turn()
        assert self.secrets is not None and turn is not None and turn[1] == seat
        stage = turn[0]
        source = tuple(self._pass1_input() if stage == STAGE_PASS1 else self._pass2_input())
        key: tuple[object, ...] = (MAKE, stage, seat, source)
        if key in self._outcomes:
            made = self._outcomes.pop(key)
            if isinstance(made, mp.DeckError):  # never from an accepted input: say so inline
                made = None
            if stage == STAGE_PASS1:
                return self.make_pass1(seat, cast("tuple[Sequence[bytes], bytes] | None", made))
            return self.make_pass2(
                seat, cast("tuple[Sequence[bytes], Sequence[bytes], bytes] | None", made)
            )
        if key not in self._running:
            self._queue_make(stage, seat, source)
        return None

    @property
    def busy(self) -> bool:
        """Whether a job is out: the deck waits on this peer's own work, not on anyone."""
        return bool(self._running)

    def take_jobs(self) -> list[DeckJob]:
        """The jobs made since the last call, for the driver to run (each once)."""
        jobs, self._jobs = self._jobs, []
        return jobs

    def finish(self, job: DeckJob, outcome: object) -> None:
        """What ``job.run()`` returned; the caller then lets the session move on."""
        self._running.discard(job.key)
        self._outcomes[job.key] = outcome

    def _queue(self, job: DeckJob) -> None:
        self._running.add(job.key)
        self._jobs.append(job)

    def _queue_make(self, stage: str, seat: int, source: tuple[bytes, ...]) -> None:
        key: tuple[object, ...] = (MAKE, stage, seat, source)
        if key in self._running or key in self._outcomes:
            return
        for stale in [k for k in self._outcomes if k[0] == MAKE]:  # an input never accepted
            del self._outcomes[stale]
        secrets, context = self.secrets, self.context(seat, stage)
        assert secrets is not None
        make = mp.pass1 if stage == STAGE_PASS1 else mp.pass2

        def run() -> object:
            try:
                return make(secrets, context, list(source))
            except mp.DeckError as error:
                return error

        self._queue(DeckJob(MAKE, stage, seat, key, run))

    def _after(self, stage: str, seat: int) -> tuple[str, int]:
        """The pass that follows ``seat``'s in ``stage`` (pass 2's seat 0 after the last
        pass 1); past the last pass 2, a seat no one has."""
        if seat + 1 < self.seats:
            return stage, seat + 1
        return (STAGE_PASS2, 0) if stage == STAGE_PASS1 else ("", -1)

    def _verifier(
        self, seat: int, stage: str, body: m.Shuffle1Body | m.Shuffle2Body
    ) -> Callable[[], object] | None:
        """The check of ``seat``'s pass as a pure function over copies (``None`` for this
        seat's own pass, byte for byte); the key-point count is checked here, at once."""
        context = self.context(seat, stage)
        if isinstance(body, m.Shuffle1Body):
            source = tuple(self._pass1_input())
            points, scalar, proof = body.points, body.scalar, body.proof
            if self._made_here(stage, seat, (source, points, scalar, proof)):
                return None

            def verify() -> None:
                mp.verify_pass1(context, list(source), list(points), scalar, proof)

        else:
            source = tuple(self._pass2_input())
            points, keys, proof = body.points, body.keys, body.proof
            if len(keys) != self.size:
                raise mp.DeckError(f"{len(keys)} key points, not {self.size}")
            if self._made_here(stage, seat, (source, points, keys, proof)):
                return None
            scalar = self.scalars[seat]

            def verify() -> None:
                mp.verify_pass2(context, list(source), list(points), scalar, list(keys), proof)

        def run() -> object:
            try:
                verify()
            except mp.DeckError as error:
                return error
            return None

        return run

    def _made_here(self, stage: str, seat: int, received: tuple[object, ...]) -> bool:
        """Whether ``received`` is exactly the pass this seat's own secrets just made for
        ``seat`` and ``stage`` from the same input (an immutable copy, taken before the message
        leaves make_pass*, so nothing done to the message afterwards can change it).

        Such a pass was computed here by the honest code, so its proof holds: checking it
        again is a sixth of a 6-peer deal's verification for nothing. Anything else, a body
        changed on its way out by a modified client included, differs in some byte and is
        checked as every other seat's pass is, so a cheat still convicts itself.
        """
        made = self._made.get(stage)
        return made is not None and made == (seat, *received)

    # ------------------------------------------------------------------ keys and faces

    @property
    def final(self) -> list[bytes]:
        """The dealt deck: position ``j`` is ``card * prod_s k_s[j]``."""
        return self.pass2[-1]

    def my_key(self, pos: int) -> bytes:
        assert self.secrets is not None
        return self.secrets.keys[pos]

    def key_is_valid(self, seat: int, pos: int, key: bytes) -> bool:
        """A released key is valid when ``key * B`` is the key point the seat committed to
        with its pass 2 (whose proof bound that point to the position's masking)."""
        return 0 <= pos < self.size and mp.check_key(key, self.key_points[seat][pos])

    def add_key(self, seat: int, pos: int, key: bytes) -> None:
        self.keys[(seat, pos)] = key

    def keys_for(self, pos: int, extra: dict[int, bytes] | None = None) -> list[bytes] | None:
        """Every seat's key for ``pos`` (from releases, then ``extra``), or ``None`` while
        one is missing."""
        out = []
        for seat in range(self.seats):
            key = (extra or {}).get(seat) or self.keys.get((seat, pos))
            if key is None:
                return None
            out.append(key)
        return out

    def open(self, pos: int, keys: Sequence[bytes]) -> int | None:
        """The card at ``pos`` under every seat's key, or ``None`` if the point is no card
        (impossible after verified passes and checked keys; the caller names a culprit)."""
        try:
            point = mp.unmask(self.final[pos], list(keys))
        except mp.DeckError:
            return None
        return self.table.get(point)
