"""The deck's costly steps run off the session: a driver that sets
``offload`` gets them as jobs, runs them when it likes and hands them back; the protocol is
the same, byte for byte when the jobs come back at once, and a bad pass gets the verdict an
inline check gives, with this seat's pipelined pass never sent."""

from __future__ import annotations

import dataclasses
import random
import secrets
from collections.abc import Sequence

import pytest
from adversary_matrix import FAULTS, run_cell, stages

from moska_p2p.crypto import deck as mp
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.deck_phase import MAKE, VERIFY, DeckJob, DeckPhase
from moska_p2p.protocol.session import PeerSession
from moska_p2p.protocol.simulate import Network, Tamper
from tests.protocol.protocol_harness import _msg, _rewrite, all_done, play_out, start, table


class OffloadNetwork(Network):
    """The in-memory network with every session's deck work handed out as jobs. ``lag``
    0: each job runs right after the call that made it (as an idle worker would); above 0,
    a seeded choice at every step between delivering a frame and finishing a job, so jobs
    come back late and out of step with the frames."""

    def __init__(
        self,
        sessions: Sequence[PeerSession],
        *,
        tamper: Tamper | None = None,
        lag: float = 0.0,
        seed: int = 0,
    ) -> None:
        super().__init__(sessions, tamper=tamper)
        for session in self.sessions:
            session.offload = True
        self.lag = lag
        self.pick = random.Random(seed)
        self.jobs: list[tuple[int, DeckJob]] = []
        self.ran: list[list[DeckJob]] = [[] for _ in self.sessions]

    def handle(self, index: int, outputs: list[v.Output]) -> None:
        super().handle(index, outputs)
        self.jobs += [(index, job) for job in self.sessions[index].take_jobs()]

    def deliver_all(self, limit: int = 1_000_000) -> None:
        for _ in range(limit):
            if not self.queue and not self.jobs:
                return
            if self.jobs and (not self.queue or self.pick.random() >= self.lag):
                index, job = self.jobs.pop(self.pick.randrange(len(self.jobs)) if self.lag else 0)
                self.ran[index].append(job)
                session = self.sessions[index]
                self.handle(index, session.finish_job(job, job.run(), self.clock))
                continue
            source, target, frame = self.queue.popleft()
            for item in self.tamper(source, target, frame) if self.tamper else [frame]:
                self.frames += 1
                self.handle(target, self.sessions[target].receive(item, self.clock))
        raise RuntimeError("the network did not settle")


def _offloaded(net: Network, lag: float = 0.0, seed: int = 0) -> OffloadNetwork:
    return OffloadNetwork(net.sessions, tamper=net.tamper, lag=lag, seed=seed)


def _bodies(sessions: Sequence[PeerSession], kind: str) -> list[bytes]:
    """Every ``kind`` message body in the first transcript, as signed."""
    return [
        m.encode_body(b"", b"", 0, b"", _msg(f).body, [])
        for f in sessions[0].transcript
        if _msg(f).type == kind
    ]


@pytest.mark.parametrize("players", [2, 4])
def test_jobs_back_at_once_give_the_very_same_transcripts(players: int) -> None:
    inline = table("moska", players, seed=21)
    start(inline)
    play_out(inline, seed=21)
    offloaded = _offloaded(table("moska", players, seed=21))
    start(offloaded)
    play_out(offloaded, seed=21)
    assert all_done(inline) and all_done(offloaded)
    for a, b in zip(inline.sessions, offloaded.sessions, strict=True):
        assert a.transcript == b.transcript
    kinds = [job.kind for ran in offloaded.ran for job in ran]
    # Every other seat's pass checked off the session, every own pass made there.
    assert kinds.count(VERIFY) == players * (players - 1) * 2
    assert kinds.count(MAKE) == players * 2


@pytest.mark.parametrize("seed", [3, 4, 5])
def test_late_jobs_out_of_step_with_frames_give_the_same_deck(seed: int) -> None:
    inline = table("durak", 4, seed=seed)
    start(inline)
    late = _offloaded(table("durak", 4, seed=seed), lag=0.7, seed=seed)
    start(late)
    assert all(s.game is not None for s in late.sessions)
    for kind in (m.SHUFFLE1, m.SHUFFLE2):  # the same passes, byte for byte
        assert _bodies(late.sessions, kind) == _bodies(inline.sessions, kind)
    play_out(late, seed=seed)
    assert all_done(late)
    assert len({s.final_hash for s in late.sessions}) == 1


def _forged_pass(kind: str, cheater: int) -> Network:
    def change(body: dict[str, object]) -> None:
        points = list(body["points"])  # type: ignore[call-overload]
        points[0] = mp.card_point(secrets.token_bytes(32), 0)  # a valid point, no card
        body["points"] = points

    box: list[Network] = []
    net = table("moska", 4, seed=31, tamper=_rewrite(box, cheater, kind, change))  # type: ignore[arg-type]
    box.append(net)
    return net


@pytest.mark.parametrize(
    ("kind", "cheater_seat"), [(m.SHUFFLE1, 1), (m.SHUFFLE1, 3), (m.SHUFFLE2, 0)]
)
def test_a_bad_pass_gets_the_inline_verdict_and_the_pipelined_pass_is_never_sent(
    kind: str, cheater_seat: int
) -> None:
    # Seats are drawn: find the cheater's index from an honest run of the same table.
    probe = table("moska", 4, seed=31)
    start(probe)
    cheater = next(i for i, s in enumerate(probe.sessions) if s.my_seat == cheater_seat)
    after = (cheater_seat + 1) % 4
    successor = next(i for i, s in enumerate(probe.sessions) if s.my_seat == after)

    inline = _forged_pass(kind, cheater)
    start(inline)
    offloaded = _offloaded(_forged_pass(kind, cheater))
    start(offloaded)
    for i in range(4):
        if i == cheater:
            continue
        want, got = inline.verdicts[i], offloaded.verdicts[i]
        assert want is not None and got is not None
        assert (got.kind, got.seats, got.reason) == (want.kind, want.seats, want.reason)
        assert got.kind == v.BAD_SHUFFLE and got.seats == (cheater_seat,)
    # The seat after the cheater made its own pass from the forged output, in parallel with
    # the check, and discarded it: it sent no pass after the cheater's.
    evidence = offloaded.verdicts[successor].evidence  # type: ignore[union-attr]
    forged = tuple(_msg(evidence[0]).body.points)
    made = [job for job in offloaded.ran[successor] if job.kind == MAKE and forged in job.key]
    assert made, "the pipeline made no pass ahead of the check"
    sent = [_msg(f) for f in offloaded.sessions[successor].transcript]
    mine = offloaded.sessions[successor].me
    next_kind = m.SHUFFLE2 if (kind, cheater_seat) == (m.SHUFFLE1, 3) else kind
    assert [x for x in sent if x.sender == mine and x.type == next_kind] == []


def _phase(seat: int, players: int = 2) -> DeckPhase:
    game = bytes(32)
    cards = list(range(16, 52))
    return DeckPhase(
        game, players, cards, mp.DeckSecrets.from_seed(bytes([seat + 1]) * 32, game, seat, 36)
    )


def test_a_check_is_a_job_whose_failure_raises_where_the_inline_check_did() -> None:
    first, second = _phase(0), _phase(1)
    made = first.make_pass1(0)
    body = dataclasses.replace(made, proof=bytes(len(made.proof)))
    with pytest.raises(mp.DeckError) as inline:
        _phase(1).accept_pass1(0, body)
    assert second.check(0, "shuffle1", body, b"tag") is False
    jobs = second.take_jobs()
    assert [job.kind for job in jobs] == [VERIFY, MAKE]  # seat 1 is next: the pipeline
    assert second.busy and second.check(0, "shuffle1", body, b"tag") is False
    assert second.take_jobs() == []  # asked again while it runs: no second job
    for job in jobs:
        second.finish(job, job.run())
    with pytest.raises(mp.DeckError) as offloaded:
        second.check(0, "shuffle1", body, b"tag")
    assert str(offloaded.value) == str(inline.value)
    assert second.next_turn() == ("shuffle1", 0)  # nothing accepted


def test_a_pass_made_ahead_is_used_only_for_the_input_it_was_made_from() -> None:
    first, second = _phase(0), _phase(1)
    good = first.make_pass1(0)
    forged = dataclasses.replace(
        good, points=(mp.card_point(bytes([9]) * 32, 0), *good.points[1:])
    )
    assert second.check(0, "shuffle1", forged, b"forged") is False
    for job in second.take_jobs():  # a check that fails and a pass made from the forgery
        second.finish(job, job.run())
    with pytest.raises(mp.DeckError):
        second.check(0, "shuffle1", forged, b"forged")
    assert second.check(0, "shuffle1", good, b"good") is False
    jobs = second.take_jobs()
    assert [job.kind for job in jobs] == [VERIFY, MAKE]  # made again, from the good input
    for job in jobs:
        second.finish(job, job.run())
    assert second.check(0, "shuffle1", good, b"good") is True
    second.accept_pass1(0, good, verified=True)
    body = second.my_pass(1)
    assert second.take_jobs() == [] and not second.busy
    inline = _phase(1)
    inline.accept_pass1(0, good)
    assert body == inline.make_pass1(1)


DECK_CELLS = [
    (stage, fault) for stage in stages(3) if stage.startswith("shuffle") for fault in FAULTS
]


@pytest.mark.parametrize(("stage", "fault"), DECK_CELLS)
def test_the_adversary_matrix_deck_cells_with_jobs_late_and_out_of_step(
    stage: str, fault: str
) -> None:
    """Every cheat at every pass of a 3-seat deal, the deck's jobs coming back late: only the
    cheater is named, by every honest peer, and every honest transcript verifies."""
    result = run_cell(
        3, stage, fault, network=lambda sessions: OffloadNetwork(sessions, lag=0.5, seed=7)
    )
    assert result.applicable and result.error is None, result.error
    assert result.ok, [(o.index, o.ended, o.kind, o.culprits) for o in result.outcomes]
    if fault != "equivocate":
        assert result.convicted == len(result.outcomes)
