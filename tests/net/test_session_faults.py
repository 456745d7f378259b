"""Records that hold under faults from outside (issue 25): real ``moska`` processes on
loopback, a peer killed, restarted, stopped (SIGSTOP) past the timeout or cut off, in single
games and in sessions (``--games N``). Every survivor's folder must verify, and no honest seat
may be named a loser.

Every wait is bounded; the fixtures kill whatever still runs at the end.
"""

from __future__ import annotations

import re
from pathlib import Path

from net_harness import Peer

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol.transcript import verify_transcript


def test_an_ipv6_host_prints_a_join_command_that_works(tmp_path: Path) -> None:
    """Item 6: the printed ``moska join`` line is typed back as it is: ``[::1]:PORT``."""
    keys = [tmp_path / f"p{i}.pem" for i in range(2)]
    for key in keys:
        Identity.generate().save(key)
    common = ["--bot", "random", "-q", "--timeout", "10", "--preset", "durak"]
    host = Peer(
        "p0",
        ["host", "--bind", "::1", "--port", "0", "--players", "2", "--identity", str(keys[0]),
         "--transcript", str(tmp_path / "p0.moska"), *common],
        tmp_path,
    )  # fmt: skip
    try:
        printed = host.wait_for(r"join with: moska join (\S+)").group(1)
        assert re.fullmatch(r"\[::1\]:\d+", printed), printed
        joiner = Peer(
            "p1",
            ["join", printed, "--bind", "::1", "--identity", str(keys[1]),
             "--transcript", str(tmp_path / "p1.moska"), *common[:-2]],
            tmp_path,
        )  # fmt: skip
        assert joiner.finish(45) == 0, joiner.out + joiner.err
        assert host.finish(15) == 0, host.out + host.err
        assert f"table at {printed}:" in joiner.out
        assert re.search(r"listening on \[::1\]:\d+ ", joiner.out), joiner.out
        assert all(verify_transcript(tmp_path / f"p{i}.moska").valid for i in range(2))
    finally:
        host.kill()
