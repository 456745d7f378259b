"""Records that hold under faults from outside: real ``moska`` processes on loopback, a peer
killed, restarted, stopped (SIGSTOP) past the grace or cut off, in single games and in sessions
(``--games N``). Every survivor's folder must verify; a seat every other seat lost contact with
loses by abandonment, corroborated by them all (PROTOCOL.md §15.5), and no seat that stays in
contact with another is ever named.

Every wait is bounded; the fixtures kill whatever still runs at the end.
"""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from net_harness import (
    Namespaces,
    Peer,
    Table,
    assert_abandoned,
    in_game,
    mid_game,
    moska_verify,
    namespaces_or_skip,
    own_folder,
)

from moska_p2p.crypto.identity import Identity, fingerprint_of
from moska_p2p.protocol.transcript import verify_transcript
from moska_p2p.protocol.verdict import TIMEOUT


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


def test_a_joiner_killed_in_game_3_of_5_loses_it_by_abandonment(
    make_table: Callable[..., Table],
) -> None:
    """kill -9 of a joiner in game 3 of ``--games 5``. Past the grace both survivors sign
    that they lost it: game 3 ends ``abandoned``, the killed seat its loser (a forfeit in the
    survivors' session tally), corroborated by both. The survivors neither wait for the
    signature it cannot give nor need it: each folder verifies alone and together."""
    table = make_table("durak", 3, host_args=["--games", "5"], timeout=3, pace=0.02)
    victim = table.peers[2]
    in_game(victim, table.folder / "p2-g3.moska", 3)
    victim.kill()
    codes = [table.peers[i].finish(30) for i in (0, 1)]
    assert codes == [1, 1], table.output()
    killed = table.fingerprints[2]
    for seat in (0, 1):
        out = table.peers[seat].out
        assert re.search(rf"game stopped: abandoned: seat \d \([^)]*{killed}\)", out), out
        assert "no signed session result from" not in out, out
        checked = moska_verify(own_folder(table.folder, seat))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "without a result" not in checked.stdout, checked.stdout  # game 3 counts
        report = verify_transcript(table.folder / f"p{seat}-g3.moska")
        assert_abandoned(report, killed, table.fingerprints[:2])
    both = moska_verify(table.folder / "own0", table.folder / "own1")
    assert both.returncode == 0, both.stdout + both.stderr


def test_a_peer_stopped_past_the_grace_loses_by_abandonment_in_every_record(
    make_table: Callable[..., Table],
) -> None:
    """SIGSTOP a joiner for longer than the grace, then SIGCONT. Both others sign that they
    lost it and stop with ``abandoned``: it is the loser. It wakes, finds the quorum of their
    statements (a proof, not hearsay) and adopts the same verdict: three records that agree
    and verify."""
    table = make_table("moska", 3, timeout=3, pace=0.02)
    mid_game(table, 2, 30_000)
    sleeper = table.peers[2]
    sleeper.kill(signal.SIGSTOP)
    try:
        table.peers[0].wait_for(r"game stopped: abandoned", 30)
        time.sleep(1.0)
    finally:
        sleeper.kill(signal.SIGCONT)
    codes = table.finish(30)
    assert codes == [1, 1, 1], table.output()
    for seat in range(3):
        report = verify_transcript(table.transcripts[seat])
        assert_abandoned(report, table.fingerprints[2], table.fingerprints[:2])
    together = moska_verify(table.folder)
    assert together.returncode == 0, together.stdout + together.stderr


def test_a_joiner_that_refuses_a_changed_key_tells_the_host_why(tmp_path: Path) -> None:
    """Item 5: bob comes back to alice's table with a new key, which alice accepts; carol
    still knows bob's old key and refuses the roster at the start. Alice is told why at once,
    not left with the silence of a peer that never says hello."""
    names = ["alice", "bob", "carol"]
    homes = [tmp_path / name for name in names]
    ids = [Identity.generate() for _ in names]
    for home, identity in zip(homes, ids, strict=True):
        (home / "config" / "moska-p2p").mkdir(parents=True)
        identity.save(home / "key.pem")
    old_bob = Identity.generate()
    known = homes[2] / "config" / "moska-p2p" / "known_peers"
    known.write_text(f"{ids[0].public_bytes.hex()} bob {old_bob.public_bytes.hex()}\n")
    known.chmod(0o600)
    common = ["--bot", "random", "-q", "--bind", "127.0.0.1"]

    def args(i: int) -> list[str]:
        return ["--name", names[i], "--identity", str(homes[i] / "key.pem"),
                "--transcript", str(homes[i] / "game.moska"), *common]  # fmt: skip

    host = Peer("alice", ["host", "--players", "3", "--port", "0", "--timeout", "3", *args(0)],
                homes[0])  # fmt: skip
    peers = [host]
    try:
        port = host.wait_for(r"join with: moska join 127\.0\.0\.1:(\d+)").group(1)
        for i in (1, 2):
            peers.append(Peer(names[i], ["join", f"127.0.0.1:{port}", *args(i)], homes[i]))
        assert peers[2].finish(30) != 0
        assert "a known player's key has changed ('bob'" in peers[2].out + peers[2].err
        assert host.finish(30) == 1, host.out + host.err
        said = re.search(r"carol \([0-9A-F-]+\) refused the table: (.*)", host.out)
        assert said, host.out
        assert "a known player's key has changed ('bob'" in said.group(1)
    finally:
        for peer in peers:
            peer.kill()


class _Netns(Namespaces):
    """Two network namespaces of the test's own joined by a veth pair (10.77.0.1 and
    10.77.0.2): peers run in either, and taking the pair down is a permanent partition."""

    def __init__(self) -> None:
        super().__init__(2, 600)
        tag = f"mk{os.getpid() % 100000}"
        self.devices = [f"{tag}a", f"{tag}b"]
        self.veth(0, self.devices[0], 1, self.devices[1])
        for side in range(2):
            device = self.devices[side]
            up = f"ip addr add {self.address(side)}/24 dev {device} && ip link set {device} up"
            self.run(side, f"ip link set lo up && {up}")

    @staticmethod
    def address(side: int) -> str:
        return f"10.77.0.{side + 1}"

    def cut(self) -> None:
        self.run(0, f"ip link set {self.devices[0]} down")


@pytest.fixture
def netns() -> Iterator[_Netns]:
    with namespaces_or_skip(_Netns) as made:
        yield made


def test_a_partition_of_one_seat_from_two_convicts_the_one_cut_off(
    tmp_path: Path, netns: _Netns
) -> None:
    """A peer cut off for good (its namespace's link taken down mid-game): a 2|1 split. The
    two that still hear each other both sign that they lost the third: ``abandoned``, the one
    cut off is the loser, corroborated by both. Its own record can only say it lost contact
    with them (uncorroborated: it says less, and never names itself); every record
    verifies."""
    keys = [tmp_path / f"p{i}.pem" for i in range(3)]
    for key in keys:
        Identity.generate().save(key)
    sides = [0, 0, 1]
    common = ["--bot", "random", "-q", "--pace", "0.02"]

    def args(i: int) -> list[str]:
        return ["--bind", netns.address(sides[i]), "--identity", str(keys[i]),
                "--transcript", str(tmp_path / f"p{i}.moska"), *common]  # fmt: skip

    host = ["host", "--players", "3", "--port", "0", "--timeout", "3", "--no-announce"]
    peers = [Peer("p0", [*host, *args(0)], tmp_path, prefix=netns.prefix(0))]
    try:
        port = peers[0].wait_for(r"join with: moska join [\d.]+:(\d+)").group(1)
        for i in (1, 2):
            where = f"{netns.address(0)}:{port}"
            peers.append(Peer(f"p{i}", ["join", where, *args(i)], tmp_path,
                              prefix=netns.prefix(sides[i])))  # fmt: skip
        for peer in peers:
            peer.wait_for(re.compile(r"^seats: ", re.M), 30)
        path = tmp_path / "p2.moska"
        deadline = time.monotonic() + 20
        while path.stat().st_size < 30_000 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert all("result:" not in p.out for p in peers), "the game ended too soon"
        netns.cut()
        codes = [p.finish(40) for p in peers]
        assert codes == [1, 1, 1], "\n".join(p.out + p.err for p in peers)
    finally:
        for peer in peers:
            peer.kill()
    reports = [verify_transcript(tmp_path / f"p{i}.moska") for i in range(3)]
    fingerprints = [fingerprint_of(r.owner_key) for r in reports]
    for report in reports[:2]:
        assert_abandoned(report, fingerprints[2], fingerprints[:2])
    alone = reports[2]
    assert alone.valid and alone.verdict_kind == TIMEOUT, (alone.fault, alone.verdict)
    assert alone.losers == [] and not alone.conviction, alone.verdict
    assert alone.culprits and alone.owner_key not in alone.culprits, alone.verdict
    together = moska_verify(tmp_path)
    assert together.returncode == 0, together.stdout + together.stderr


@pytest.mark.parametrize("seat", [0, 2], ids=["host", "joiner"])
def test_a_peer_restarted_in_game_2_of_3_resumes_and_finishes_the_session(
    make_table: Callable[..., Table], seat: int
) -> None:
    """Item 2: kill -9 a peer in game 2 of ``--games 3`` and run the very same command
    again within the timeout: it finds game 2's saved state, its links are of the session's
    table, it finishes game 2 and plays game 3 with the others, and every folder verifies."""
    table = make_table("durak", 3, host_args=["--games", "3"], timeout=8, pace=0.01)
    victim = table.peers[seat]
    in_game(victim, table.folder / f"p{seat}-g2.moska", 2, 40_000)
    victim.kill()
    time.sleep(0.3)
    victim.start()
    codes = table.finish(120)
    assert codes == [0, 0, 0], table.output()
    assert re.search(rf"resumed the game saved in \S*p{seat}-g2\.moska", victim.out), victim.out
    for peer in table.peers:
        assert "session over (all 3 games played); signed by 3 of 3 players" in peer.out, peer.out
    for seat in range(3):
        checked = moska_verify(own_folder(table.folder, seat))
        assert checked.returncode == 0, checked.stdout + checked.stderr
    together = moska_verify(*(table.folder / f"own{seat}" for seat in range(3)))
    assert together.returncode == 0, together.stdout + together.stderr
    assert "result signed by 3 of 3 players" in together.stdout


def test_a_peer_restarted_after_the_others_convicted_it_still_lost(
    make_table: Callable[..., Table],
) -> None:
    """A joiner killed mid-game and started again (``--resume``) only after the others
    convicted it of abandonment and exited: their records say it lost the game, corroborated
    by both. Coming back, it finds nobody: its own record can only say it lost contact
    (uncorroborated, no loser: it says less and contradicts nothing), and every record
    verifies alone and together."""
    table = make_table("moska", 3, timeout=3, pace=0.02)
    mid_game(table, 2, 30_000)
    victim = table.peers[2]
    victim.kill()
    assert [table.peers[i].finish(30) for i in (0, 1)] == [1, 1], table.output()
    victim.args = [*victim.args, "--resume"]
    victim.start()
    assert victim.finish(60) == 1, victim.out + victim.err
    assert "resumed the game saved in" in victim.out, victim.out
    for seat in (0, 1):
        assert_abandoned(
            verify_transcript(table.transcripts[seat]), table.fingerprints[2],
            table.fingerprints[:2],
        )  # fmt: skip
    back = verify_transcript(table.transcripts[2])
    assert back.valid and back.verdict_kind == TIMEOUT, (back.fault, back.verdict)
    assert back.losers == [] and not back.conviction, back.verdict
    together = moska_verify(table.folder)
    assert together.returncode == 0, together.stdout + together.stderr


def test_a_peer_stopped_in_game_2_of_3_loses_it_by_abandonment(
    make_table: Callable[..., Table],
) -> None:
    """SIGSTOP a joiner in game 2 of ``--games 3`` past the grace. The others convict it of
    abandonment (corroborated by both) and end the session; the sleeper wakes, adopts their
    verdict and ends its session too. Every folder verifies alone and all together, and game 2
    is a loss of the sleeper's in every one of them, counted in the session's tally."""
    table = make_table("durak", 3, host_args=["--games", "3"], timeout=3, pace=0.02)
    sleeper = table.peers[2]
    in_game(sleeper, table.folder / "p2-g2.moska", 2)
    sleeper.kill(signal.SIGSTOP)
    try:
        table.peers[0].wait_for(r"game stopped: abandoned", 30)
        time.sleep(1.0)
    finally:
        sleeper.kill(signal.SIGCONT)
    codes = table.finish(40)
    assert codes == [1, 1, 1], table.output()
    for seat in range(3):
        report = verify_transcript(table.folder / f"p{seat}-g2.moska")
        assert_abandoned(report, table.fingerprints[2], table.fingerprints[:2])
        checked = moska_verify(own_folder(table.folder, seat))
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "without a result" not in checked.stdout, checked.stdout
    together = moska_verify(*(table.folder / f"own{seat}" for seat in range(3)))
    assert together.returncode == 0, together.stdout + together.stderr
    assert "no result" not in together.stdout, together.stdout
    as_json = moska_verify(Path("--json"), *(table.folder / f"own{seat}" for seat in range(3)))
    (session,) = [json.loads(line) for line in as_json.stdout.splitlines() if '"session"' in line]
    assert session["valid"], session
