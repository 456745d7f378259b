"""A ``wait`` at the end of a game (found by the chaos relay).

A peer at the result stage that waits for the others' results says so with a ``wait``
(§7.10a), after its own result; and a peer that applies the last results in one batch applies
a ``wait`` queued behind them before it moves to the done stage. Both end up in honest
transcripts, after the owner's result or after the last result, and such a transcript must
verify: before, ``verify`` said "a frame after the owner's result is not a result" or "frame N
is out of order". A trailing frame still has to be a wait of this game signed by its sender.
"""

from __future__ import annotations

from pathlib import Path

from protocol_harness import _msg, all_done, play_out, start, table

from moska_p2p.protocol import messages as m
from moska_p2p.protocol.session import PeerSession
from moska_p2p.protocol.transcript import verify_transcript, write_transcript


def _finished() -> list[PeerSession]:
    net = table("durak", 3, seed=29)
    start(net)
    play_out(net)
    assert all_done(net)
    return net.sessions


def _verify(tmp_path: Path, owner: PeerSession, frames: list[bytes]) -> str | None:
    path = tmp_path / "owner.moska"
    write_transcript(path, owner.me, owner.config, owner.roster, frames)
    report = verify_transcript(path)
    assert report.valid == (report.fault is None)
    return report.fault


def test_the_owners_wait_after_its_result_verifies(tmp_path: Path) -> None:
    owner = _finished()[0]
    frames = owner.transcript
    at = next(
        i for i, f in enumerate(frames) if _msg(f).type == m.RESULT and _msg(f).sender == owner.me
    )
    wait = owner.craft(m.WAIT, {})  # its next message: sent while it waited for the results
    assert _verify(tmp_path, owner, [*frames[: at + 1], wait, *frames[at + 1 :]]) is None


def test_a_wait_applied_with_the_last_results_verifies(tmp_path: Path) -> None:
    owner, other, _ = _finished()
    assert _verify(tmp_path, owner, [*owner.transcript, other.craft(m.WAIT, {})]) is None


def test_a_trailing_frame_that_is_not_a_signed_wait_is_still_a_fault(tmp_path: Path) -> None:
    owner, other, _ = _finished()
    wait = other.craft(m.WAIT, {})
    forged = wait[:-1] + bytes([wait[-1] ^ 1])  # the signature's last byte
    assert _verify(tmp_path, owner, [*owner.transcript, forged])
    leave = other.craft(m.LEAVE, {"reason": "late"})
    assert _verify(tmp_path, owner, [*owner.transcript, leave])
