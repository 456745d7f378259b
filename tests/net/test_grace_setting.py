"""The grace as a table setting (``moska host --grace``, PROTOCOL.md §15.1): the seconds a
seat that is not answering has to come back before the others may sign that it abandoned the
game. Real ``moska`` processes on 127.0.0.1; every wait is bounded.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from net_harness import Peer, Table

from moska_p2p.protocol.config import default_grace


@pytest.mark.parametrize("grace", [None, 7.0], ids=["default", "chosen"])
def test_the_host_shows_the_grace_and_every_record_carries_it(
    make_table: Callable[..., Table], grace: float | None
) -> None:
    """The ``table open:`` line names the grace next to the timeout (the protocol's rule when
    none is given: twice the timeout, at most 60 s), and it is the table's: every seat's
    transcript holds it in its signed settings."""
    table = make_table(
        "durak", 2, timeout=3, host_args=[] if grace is None else ["--grace", str(grace)]
    )
    expected = default_grace(3) if grace is None else grace
    assert table.finish(60) == [0, 0], table.output()
    assert f"timeout 3 s, grace {expected:g} s;" in table.peers[0].out, table.peers[0].out
    for report in table.reports():
        assert report.valid and report.config is not None, report.fault
        assert report.config.grace == expected


def test_a_grace_below_a_second_is_refused_before_anything_starts(tmp_path: Path) -> None:
    host = Peer("p0", ["host", "--grace", "0.5", "--bot", "random", "--port", "0",
                       "--bind", "127.0.0.1", "--no-announce"], tmp_path)  # fmt: skip
    try:
        assert host.finish(30) == 2, host.out + host.err
        assert "--grace" in host.err and "table open" not in host.out, host.out + host.err
    finally:
        host.kill()


def test_a_seat_back_within_a_long_grace_finishes_the_game(
    make_table: Callable[..., Table],
) -> None:
    """kill -9 a joiner of a 3-seat table (timeout 3 s: the default grace would be 6 s) and
    run its command again 9 s later: with ``--grace 30`` the others still wait for it, it
    resumes its saved game and the game ends with a result in every record."""
    table = make_table("moska", 3, timeout=3, pace=0.02, host_args=["--grace", "30"])
    for peer in table.peers:
        peer.wait_for(re.compile(r"^seats: ", re.M), 30)
    path = table.transcripts[2]
    deadline = time.monotonic() + 20
    while (not path.exists() or path.stat().st_size < 30_000) and time.monotonic() < deadline:
        time.sleep(0.02)
    victim = table.peers[2]
    assert "result:" not in victim.out, "the game ended before the test could interfere"
    victim.kill()
    time.sleep(9.0)  # past the default grace of this timeout, within the one chosen
    victim.start()
    assert table.finish(120) == [0, 0, 0], table.output()
    assert "resumed the game saved in" in victim.out, victim.out
    finals = set()
    for report in table.reports():
        assert report.valid and report.verdict is None, (report.fault, report.verdict)
        finals.add(report.final_state_hash)
    assert len(finals) == 1
