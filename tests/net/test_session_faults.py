"""Records that hold under faults from outside (issue 25): real ``moska`` processes on
loopback, a peer killed, restarted, stopped (SIGSTOP) past the timeout or cut off, in single
games and in sessions (``--games N``). Every survivor's folder must verify, and no honest seat
may be named a loser.

Every wait is bounded; the fixtures kill whatever still runs at the end.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from net_harness import ROOT, Peer, Table

from moska_p2p.crypto.identity import Identity, fingerprint_of
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


def _own_folder(table: Table, seat: int) -> Path:
    """A copy of one peer's files only (its games and its session file): what that peer
    could show on its own."""
    mine = table.folder / f"own{seat}"
    mine.mkdir()
    for path in table.folder.glob(f"p{seat}-*.moska"):
        shutil.copy(path, mine / path.name)
    return mine


def _verify(*folders: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", "verify", *map(str, folders)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _in_game(peer: Peer, path: Path, number: int, size: int = 60_000) -> None:
    """Wait until ``peer`` plays game ``number`` of its session, past the deal."""
    peer.wait_for(rf"game {number} of \d+: seat \d deals", 60)
    deadline = time.monotonic() + 20
    while (not path.exists() or path.stat().st_size < size) and time.monotonic() < deadline:
        time.sleep(0.02)


def test_a_joiner_killed_in_game_3_of_5_leaves_sessions_that_verify(
    make_table: Callable[..., Table],
) -> None:
    """Item 1: kill -9 of a joiner in game 3 of ``--games 5``. The survivors neither wait
    for the signature it cannot give nor need it: each survivor's folder verifies alone and
    together, game 3 names only the killed seat, and as a lost contact, not a loss."""
    table = make_table("durak", 3, host_args=["--games", "5"], timeout=3, pace=0.02)
    victim = table.peers[2]
    _in_game(victim, table.folder / "p2-g3.moska", 3)
    victim.kill()
    codes = [table.peers[i].finish(30) for i in (0, 1)]
    assert codes == [1, 1], table.output()
    killed = table.fingerprints[2]
    for seat in (0, 1):
        out = table.peers[seat].out
        assert re.search(rf"game stopped: timeout: seat \d \([^)]*{killed}\)", out), out
        assert "no signed session result from" not in out, out
        checked = _verify(_own_folder(table, seat))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        report = verify_transcript(table.folder / f"p{seat}-g3.moska")
        assert report.valid and report.losers == [], report
        assert [fingerprint_of(k) for k in report.culprits] == [killed]
    both = _verify(table.folder / "own0", table.folder / "own1")
    assert both.returncode == 0, both.stdout + both.stderr
