"""A verdict says, signed, which of its signer's paths went through a relay
(PROTOCOL.md §7.11, §23). The session learns it from its driver (``set_relayed_paths``),
never by looking outward; ``verify`` reads it back; it convicts nobody by itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from protocol_harness import _msg, play_out, start, table

from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.session import STOPPED, LocalError, PeerSession
from moska_p2p.protocol.transcript import verify_transcript, write_transcript


def _stopped_on_silence(relayed_seat: int | None) -> tuple[PeerSession, v.Verdict, list[bytes]]:
    """A 3-seat game in which the seat to act goes silent; the first other peer (told that
    the path to ``relayed_seat`` is relayed) times out. Its session and its verdict frames."""
    net = table("moska", 3, seed=27, timeout=5.0)
    start(net)
    play_out(net, max_moves=2)
    silent = next(s for s in net.sessions if s.waiting_on() == [s.me])
    judge = next(s for s in net.sessions if s is not silent)
    if relayed_seat is not None:
        judge.set_relayed_paths([judge.seats[relayed_seat]])
    judge.tick(net.clock + 100.0)  # past the grace: its statement of the silence (§15.5)
    # Nobody corroborates it (the judge's statement never left): an uncorroborated timeout.
    sent = [o.frame for o in judge.tick(net.clock + 112.0) if isinstance(o, v.Send)]
    assert judge.stage == STOPPED and judge.verdict is not None
    return judge, judge.verdict, [f for f in sent if _msg(f).type == m.VERDICT]


def test_a_timeout_verdict_says_the_silent_peer_was_reached_through_a_relay(
    tmp_path: Path,
) -> None:
    _, direct, _ = _stopped_on_silence(None)
    silent_seat = direct.seats[0]
    judge, verdict, [frame] = _stopped_on_silence(silent_seat)  # the same game, relayed
    assert verdict.kind == v.TIMEOUT and verdict.relayed == verdict.keys
    assert _msg(frame).body_as(m.VerdictBody).relayed == verdict.keys
    assert not verdict.conviction  # a relayed path changes nothing: silence convicts nobody
    assert "went through a relay" in v.relayed_note(verdict)
    path = tmp_path / "judge.moska"
    write_transcript(path, judge.me, judge.config, judge.roster, judge.transcript)
    report = verify_transcript(path)
    assert report.valid and report.losers == [], report.fault
    assert report.relayed_seats == [silent_seat] and report.lost_contact == [silent_seat]
    assert report.to_json()["relayed"] == [silent_seat]


def test_a_verdict_over_direct_paths_says_so_and_one_without_the_field_still_reads() -> None:
    _, verdict, [frame] = _stopped_on_silence(None)
    body = m.to_wire(_msg(frame).body)
    assert body["relayed"] == [] and verdict.relayed == ()
    # A verdict signed before the field existed says nothing of its paths: still a verdict.
    legacy = {k: val for k, val in body.items() if k != "relayed"}
    payload = m.encode_payload(bytes(32), bytes(32), 9, bytes(32), m.VERDICT, legacy, ())
    read = m.parse_payload(payload).body_as(m.VerdictBody)
    assert read.relayed is None
    assert m.to_wire(read) == legacy  # and it goes back on the wire without it


def test_a_relayed_path_must_name_another_player() -> None:
    net = table("moska", 3, seed=28)
    session = net.sessions[0]
    with pytest.raises(LocalError, match="not another player's"):
        session.set_relayed_paths([session.me])
    with pytest.raises(LocalError, match="not another player's"):
        session.set_relayed_paths([bytes(32)])
