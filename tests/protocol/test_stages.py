"""The stage table (protocol/stages.py): complete, consistent with the phases, and in use.

Every stage names what every message kind does in it; a kind applies only in the stages of
the phase that handles it; and a message of a kind the current stage does not take gets the
verdict (or the wait) the table says, the same as the handlers gave before the table. The
stage itself moves only along the table's edges (``stages.EDGES``), through one checked
method (``PeerSession.enter``).
"""

from __future__ import annotations

import itertools

import pytest
from protocol_harness import _msg, play_out, start, table

from moska_p2p.protocol import messages as m
from moska_p2p.protocol import stages
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.session import (
    DONE,
    HELLO,
    PLAY,
    SHUFFLE2,
    STAGES,
    STOPPED,
    LocalError,
    PeerSession,
)
from moska_p2p.protocol.simulate import Network

ALL_KINDS = {
    m.HELLO, m.SEAT, m.SHUFFLE1, m.SHUFFLE2, m.KEYS, m.MOVE, m.CLAIM, m.DISCLOSE, m.RESULT,
    m.WAIT, m.LEAVE, m.VERDICT, m.SILENT,
}  # fmt: skip
REASONS = {
    stages.HELLO_AGAIN, stages.SEAT_AGAIN, stages.PASS_LATE, stages.NOT_ASKED,
    stages.RESULT_AGAIN,
}  # fmt: skip


def test_every_stage_names_what_every_kind_does() -> None:
    assert sorted(stages.TABLE) == [*range(len(STAGES)), STOPPED]
    for stage, row in stages.TABLE.items():
        assert set(row) == ALL_KINDS, stage
        for kind, what in row.items():
            assert what in {stages.APPLY, stages.WAIT, stages.IGNORE} | REASONS, (stage, kind)
        assert stages.PHASE[stage] in {
            stages.SEATING, stages.SHUFFLING, stages.PLAYING, stages.ENDED
        }  # fmt: skip


def test_each_phase_owns_a_run_of_stages_and_applies_only_its_own_kinds() -> None:
    """A phase's stages follow each other; a phase kind applies only in its phase's stages
    (the session's own kinds in every stage), and each is handled by that phase's object."""
    order = [stages.PHASE[s] for s in range(len(STAGES))]
    runs = [p for i, p in enumerate(order) if i == 0 or order[i - 1] != p]
    assert runs == [stages.SEATING, stages.SHUFFLING, stages.PLAYING, stages.ENDED]
    net = table("moska", 3, seed=3)
    session = net.sessions[0]
    for stage, row in stages.TABLE.items():
        for kind, what in row.items():
            handler = session._handlers[kind]
            if kind in stages.SESSION_KINDS:
                assert handler.__self__ is session  # type: ignore[attr-defined]
            elif what == stages.APPLY and stage != STOPPED:
                owner = session._phases[stages.PHASE[stage]]
                assert handler.__self__ is owner, (STAGES[stage], kind)  # type: ignore[attr-defined]


def _in_play(seed: int = 5) -> Network:
    net = table("moska", 3, seed=seed)
    start(net)
    assert all(s.stage == PLAY for s in net.sessions)
    return net


def _own(session: PeerSession, kind: str) -> dict[str, object]:
    """The body of this peer's own first message of ``kind`` (from its transcript)."""
    for frame in session.transcript:
        msg = _msg(frame)
        if msg.sender == session.me and msg.type == kind:
            return m.to_wire(msg.body)
    raise AssertionError(f"no {kind} sent")


def _send_late(net: Network, cheater: int, kind: str, body: dict[str, object]) -> None:
    """The cheater signs ``kind`` as its next message, for the game under way."""
    s = net.sessions[cheater]
    frame = s.craft(kind, body, game=s.game_id)
    for i, other in enumerate(net.sessions):
        if i != cheater:
            net.handle(i, other.receive(frame, net.clock))
    net.deliver_all()


@pytest.mark.parametrize(
    ("kind", "reason"),
    [
        (m.HELLO, "a second hello"),
        (m.SEAT, "a second seat secret"),
        (m.SHUFFLE1, "a shuffle pass out of its turn"),
        (m.SHUFFLE2, "a shuffle pass out of its turn"),
    ],
)
def test_a_message_too_late_for_the_stage_is_the_violation_it_always_was(
    kind: str, reason: str
) -> None:
    net = _in_play()
    cheater = 1
    _send_late(net, cheater, kind, _own(net.sessions[cheater], kind))
    for i, verdict in enumerate(net.verdicts):
        if i == cheater:
            continue
        assert verdict is not None, f"peer {i} gave no verdict"
        assert (verdict.kind, verdict.reason) == (v.PROTOCOL, reason)
        assert verdict.keys == (net.sessions[cheater].me,)


@pytest.mark.parametrize("kind", [m.DISCLOSE, m.RESULT])
def test_a_message_early_for_the_stage_waits_in_its_senders_queue(kind: str) -> None:
    net = _in_play()
    cheater = 1
    s = net.sessions[cheater]
    body: dict[str, object] = (
        {"keys": [[0, bytes(32)]]}
        if kind == m.DISCLOSE
        else {"state": bytes(32), "losers": [], "transcript": bytes(32)}
    )
    seq = s.peers[s.me].next_seq
    _send_late(net, cheater, kind, body)
    for i, other in enumerate(net.sessions):
        if i != cheater:
            assert net.verdicts[i] is None
            assert other.stage == PLAY
            assert seq in other.peers[s.me].inbox  # queued, not applied
            assert seq not in other.peers[s.me].accepted


def test_the_session_routes_by_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Change one cell and the verdict changes with it: the table is what decides."""
    monkeypatch.setitem(stages.TABLE[PLAY], m.SEAT, "a seat secret at the wrong time")
    net = _in_play()
    _send_late(net, 1, m.SEAT, _own(net.sessions[1], m.SEAT))
    reasons = {verdict.reason for i, verdict in enumerate(net.verdicts) if i != 1 and verdict}
    assert reasons == {"a seat secret at the wrong time"}

    monkeypatch.setitem(stages.TABLE[PLAY], m.SEAT, stages.WAIT)
    net = _in_play()
    _send_late(net, 1, m.SEAT, _own(net.sessions[1], m.SEAT))
    assert all(verdict is None for verdict in net.verdicts)


def _recording_edges(monkeypatch: pytest.MonkeyPatch) -> set[tuple[int, int]]:
    """Every stage change any session makes from now on, as (from, to)."""
    taken: set[tuple[int, int]] = set()
    enter = PeerSession.enter

    def recording(self: PeerSession, stage: int) -> None:
        before = self.stage
        enter(self, stage)
        taken.add((before, stage))

    monkeypatch.setattr(PeerSession, "enter", recording)
    return taken


@pytest.mark.parametrize(("preset", "players", "seed"), [("moska", 2, 1), ("moska", 4, 7)])
def test_every_edge_of_a_whole_game_is_in_the_table(
    monkeypatch: pytest.MonkeyPatch, preset: str, players: int, seed: int
) -> None:
    taken = _recording_edges(monkeypatch)
    net = table(preset, players, seed=seed)
    start(net)
    play_out(net, seed=seed)
    assert all(s.stage == DONE for s in net.sessions), [s.verdict for s in net.sessions]
    line = list(range(len(STAGES)))
    assert taken == set(itertools.pairwise(line))  # hello -> seat -> ... -> done
    assert all(after in stages.EDGES[before] for before, after in taken)


def test_a_stop_is_an_edge_of_the_table(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = _recording_edges(monkeypatch)
    net = _in_play()
    _send_late(net, 1, m.HELLO, _own(net.sessions[1], m.HELLO))
    assert (PLAY, STOPPED) in taken
    assert all(after in stages.EDGES[before] for before, after in taken)


def test_a_step_the_table_lacks_is_refused_and_the_stage_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Drop the edge from the last shuffle pass to the play: the session that would take it
    refuses with a LocalError (its own bug, not a peer's) and stays where it was."""
    monkeypatch.setitem(stages.EDGES, SHUFFLE2, frozenset({STOPPED}))
    net = table("moska", 2, seed=2)
    with pytest.raises(LocalError, match="from stage shuffle2 to play"):
        start(net)
    assert SHUFFLE2 in {s.stage for s in net.sessions}
    assert all(s.stage != PLAY for s in net.sessions)


def test_the_stage_changes_only_through_enter() -> None:
    session = table("moska", 2, seed=4).sessions[0]
    with pytest.raises(AttributeError):
        session.stage = PLAY  # type: ignore[misc]
    with pytest.raises(LocalError, match="from stage hello to done"):
        session.enter(DONE)
    assert session.stage == HELLO
    session.enter(STOPPED)
    assert session.stage == STOPPED
    with pytest.raises(LocalError):
        session.enter(STOPPED)  # stopped once: a second stop is a bug
