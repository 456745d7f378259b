"""LAN discovery (``moska_p2p/net/discovery.py``): the signed multicast beacon
in one trio run, the listener's handling of garbage and forgeries, and real processes: a table
opened with ``host`` is listed by ``moska tables`` and joined by ``moska join`` with no address.

Every test uses a multicast group and port of its own, and every datagram goes to loopback
only (``MOSKA_DISCOVERY_IF=127.0.0.1``), except in the last test, which makes a network
namespace of its own to try the defaults (default route plus loopback) without a real network.
Every wait is bounded; a fixture kills whatever process is left.
"""

from __future__ import annotations

import os
import random
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import trio
from net_harness import ROOT, Peer, send_datagrams
from typer.testing import CliRunner

from moska_p2p.cli import app as moska_app
from moska_p2p.crypto.identity import Identity
from moska_p2p.net.discovery import (
    ENV_GROUP,
    ENV_INTERFACE,
    Collector,
    DiscoveryError,
    FoundTable,
    Settings,
    TableStatus,
    announce,
    announcement,
    find_tables,
    pick_table,
)
from moska_p2p.net.node import EXIT_FAILED, Node, NodeOptions
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.frames import signed_frame
from moska_p2p.protocol.transcript import verify_transcript

ALICE = Identity.from_seed(bytes([1]) * 32)
MALLORY = Identity.from_seed(bytes([3]) * 32)
CONFIG = TableConfig("moska", 3, bytes(32), {"deck_kill": "on"}, 10.0)
LOOPBACK = "127.0.0.1"
FOUND_LINE = re.compile(r"found one table: 127\.0\.0\.1:(\d+)")


def _datagram(seats: int = 1, seq: int = 1, port: int = 7777, is_open: bool = True) -> bytes:
    return announcement(ALICE, CONFIG, name="alice", port=port, seats=seats, seq=seq, open=is_open)


# ------------------------------------------------------------------------ in one trio run


@pytest.mark.trio
async def test_an_announced_table_is_found_with_its_verified_fingerprint(lan: Settings) -> None:
    state = TableStatus(2, True)
    lines: list[str] = []
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: announce(
                    ALICE, CONFIG, name="alice\x1b[31m", port=7777, status=lambda: state,
                    bind=LOOPBACK, settings=lan, interval=0.1, ready=lines.append,
                )
            )  # fmt: skip
            found = await find_tables(3.0, lan, enough=lambda c: bool(c.tables()))
            assert len(found.tables) == 1 and found.ignored == 0
            table = found.tables[0]
            assert table.endpoint == "127.0.0.1:7777"
            assert table.fingerprint == ALICE.fingerprint and table.key == ALICE.public_bytes
            assert table.name == "alice?[31m"  # no terminal escape from the network
            assert (table.preset, table.players, table.seats) == ("moska", 3, 2)
            assert table.options == {"deck_kill": "on"} and table.joinable
            assert "127.0.0.1:7777  alice?[31m  moska (deck_kill=on), 2 of 3 seats taken" in (
                table.describe()
            )
            assert lines and "announcing the table" in lines[0]

            # The table fills: the beacon says so once and stops by itself (a bound, not a
            # time: the listening takes 1 s, a busy machine may add to it).
            with trio.fail_after(10):
                async with trio.open_nursery() as listening:
                    heard: list[int] = []

                    async def listen() -> None:
                        after = await find_tables(1.0, lan)
                        heard.extend([after.received, len(after.tables)])

                    listening.start_soon(listen)
                    await trio.sleep(0.3)
                    state = TableStatus(3, False)
            assert heard[0] >= 2 and heard[1] == 0, heard  # open, then closed: not listed
    # the beacon ended on its own (the nursery would otherwise still wait)


@pytest.mark.trio
async def test_a_cancelled_beacon_says_closed(lan: Settings) -> None:
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            beacon = trio.CancelScope()

            async def run() -> None:
                with beacon:
                    await announce(
                        ALICE, CONFIG, name="alice", port=7777, bind=LOOPBACK, settings=lan,
                        status=lambda: TableStatus(1, True), interval=0.1,
                    )  # fmt: skip

            found = []

            async def listen() -> None:
                found.append(await find_tables(1.0, lan))

            nursery.start_soon(listen)
            await trio.sleep(0.2)
            nursery.start_soon(run)
            await trio.sleep(0.4)
            beacon.cancel()
    assert found[0].received >= 3 and found[0].tables == []


@pytest.mark.trio
async def test_garbage_and_forged_datagrams_are_ignored(lan: Settings) -> None:
    genuine = _datagram(seats=1, seq=1)
    forged = signed_frame(MALLORY, "beacon", {**_body(genuine), "seats": 2, "seq": 2})  # Alice's
    tampered = genuine.replace(b"alice", b"alicf")
    junk = [
        b"\x00",
        os.urandom(300),
        b"\x00\x00\x00\x05hello",
        genuine[:-1],  # truncated
        genuine + b"x",  # trailing byte
        b"\xff" * 3000,  # oversized
        signed_frame(ALICE, "net/hi", {"key": ALICE.public_bytes}),  # a lobby message
        signed_frame(ALICE, "net/hi", _body(genuine)),  # a table, signed as another kind
        signed_frame(ALICE, "beacon", {**_body(genuine), "seats": 9}),  # more seats than it has
        signed_frame(ALICE, "beacon", {**_body(genuine), "port": 0}),
        signed_frame(ALICE, "beacon", {**_body(genuine), "key": bytes([1]) + bytes(31)}),
        forged,
        tampered,
    ]
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            result = []

            async def listen() -> None:
                total = len(junk) + 1
                result.append(await find_tables(5.0, lan, enough=lambda c: c.received >= total))

            nursery.start_soon(listen)
            await trio.sleep(0.3)
            send_datagrams(lan, *junk, genuine)
    found = result[0]
    assert found.ignored == len(junk)
    assert [t.seats for t in found.tables] == [1]  # the forged "2 seats" never counted


def _body(datagram: bytes) -> dict[str, object]:
    from moska_p2p.protocol.frames import open_frame, unpack

    _, payload, _ = open_frame(datagram[4:])
    body = unpack(payload)
    assert isinstance(body, dict)
    return body


@pytest.mark.trio
async def test_join_checks_that_the_announced_key_answers(tmp_path: Path) -> None:
    """A replayed announcement can point at another address: the joiner then meets another
    key than the one that announced the table, and refuses."""
    echo: list[str] = []

    def options(name: str) -> NodeOptions:
        from moska_p2p.bots.loader import load_bot
        from moska_p2p.table.networked import BotAtTable

        return NodeOptions(
            identity=Identity.generate(), player=BotAtTable(load_bot("random", seed=1)),
            transcript=tmp_path / f"{name}.moska", name=name, bind=LOOPBACK,
            connect_timeout=3.0, lobby_wait=5.0, echo=echo.append,
        )  # fmt: skip

    host, joiner = Node(options("host")), Node(options("joiner"))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)
            outcome = await joiner.join(LOOPBACK, port, expect=MALLORY.public_bytes)
            nursery.cancel_scope.cancel()
    assert outcome.code == EXIT_FAILED
    assert f"not {MALLORY.fingerprint}, which announced the table" in outcome.message


# ------------------------------------------------------------------------ sans-IO pieces


def test_the_newest_state_of_each_table_wins() -> None:
    collector = Collector()
    for data in (_datagram(seats=2, seq=5), _datagram(seats=1, seq=3)):  # out of order
        collector.feed(data, LOOPBACK)
    collector.feed(_datagram(seats=1, seq=1, port=8888), "192.0.2.9")
    assert [(t.port, t.seats) for t in collector.tables()] == [(7777, 2), (8888, 1)]
    collector.feed(_datagram(seats=3, seq=6, is_open=False), LOOPBACK)  # filled
    assert [t.port for t in collector.tables()] == [8888]
    other = TableConfig("moska", 3, bytes([7]) * 32, {}, 10.0)  # a new table, same key+port
    collector.feed(
        announcement(ALICE, other, name="alice", port=7777, seats=1, seq=1, open=True), LOOPBACK
    )
    assert sorted(t.port for t in collector.tables()) == [7777, 8888]
    assert collector.ignored == 0


def test_settings_come_from_the_environment() -> None:
    assert Settings.from_env({}) == Settings()
    got = Settings.from_env({ENV_GROUP: "239.1.2.3:5000", ENV_INTERFACE: "127.0.0.1"})
    assert got == Settings("239.1.2.3", 5000, "127.0.0.1")
    assert not Settings.from_env({ENV_GROUP: "off"}).enabled
    for bad in ({ENV_GROUP: "10.0.0.1:5000"}, {ENV_GROUP: "239.1.2.3"}, {ENV_INTERFACE: "eth0"}):
        with pytest.raises(DiscoveryError):
            Settings.from_env(bad)


def test_choosing_among_several_tables() -> None:
    collector = Collector()
    for port in (7001, 7002, 7003):
        collector.feed(_datagram(port=port), LOOPBACK)
    tables = collector.tables()

    def answers(*given: str) -> Callable[[str], str]:
        queue = list(given)

        def ask(prompt: str) -> str:
            assert "[1-3" in prompt
            if not queue:
                raise EOFError
            return queue.pop(0)

        return ask

    def port(chosen: FoundTable | None) -> int | None:
        return None if chosen is None else chosen.port

    assert port(pick_table(tables, answers("2"))) == 7002
    assert port(pick_table(tables, answers("9", "x", " 3 "))) == 7003
    assert pick_table(tables, answers("")) is None
    assert pick_table(tables, answers()) is None  # end of input
    assert pick_table(tables, answers("0", "4", "x", "1")) is None  # three wrong answers


def test_no_table_found(lan: Settings, tmp_path: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(moska_app, ["tables", "--wait", "0.5"])
    assert listed.exit_code == 0, listed.output
    assert "no open tables found on the LAN" in listed.output
    files = ["--identity", str(tmp_path / "me.pem"), "--transcript", str(tmp_path / "me.moska")]
    joined = runner.invoke(moska_app, ["join", "--bot", "random", "--look", "0.5", *files])
    assert joined.exit_code == 2, joined.output
    assert "no open table found" in joined.output and "HOST:PORT" in joined.output


# ------------------------------------------------------------------------ real processes


@pytest.fixture
def peers() -> Iterator[list[Peer]]:
    made: list[Peer] = []
    try:
        yield made
    finally:
        for peer in made:
            peer.kill()


def _host_args(folder: Path, name: str, players: int = 2) -> list[str]:
    return [
        "host", "--preset", "moska", "--players", str(players), "--bot", "random",
        "--name", name, "--identity", str(folder / f"{name}.pem"), "--bind", LOOPBACK,
        "--transcript", str(folder / f"{name}.moska"), "--wait", "30", "-q",
    ]  # fmt: skip


def _moska(*args: str, timeout: float = 15.0) -> subprocess.CompletedProcess[str]:
    """The real ``moska`` command line in a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def test_moska_tables_lists_a_hosted_table_and_join_without_address_plays_it(
    lan: Settings, tmp_path: Path, peers: list[Peer]
) -> None:
    peers.append(Peer("host", _host_args(tmp_path, "alice"), tmp_path))
    host = peers[0]
    host.wait_for("announcing the table on the LAN")
    fingerprint = Identity.load(tmp_path / "alice.pem").fingerprint
    port = int(host.wait_for(r"join with: moska join 127\.0\.0\.1:(\d+)").group(1))

    listed = _moska("tables", "--wait", "2.5")
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert "1 open table on the LAN:" in listed.stdout
    assert f"1. 127.0.0.1:{port}  alice  moska, 1 of 2 seats taken  {fingerprint}" in (
        listed.stdout
    )

    join_args = [  # not on a terminal, the one table found is joined when --expect pins it
        "join", "--bot", "random", "--name", "bob", "--look", "2", "--expect", fingerprint,
        "--identity", str(tmp_path / "bob.pem"), "--transcript", str(tmp_path / "bob.moska"),
        "--bind", LOOPBACK, "--wait", "30", "--timeout", "5", "-q",
    ]  # fmt: skip
    joiner = Peer("bob", join_args, tmp_path)
    peers.append(joiner)
    assert int(joiner.wait_for(FOUND_LINE).group(1)) == port
    assert [p.finish(20) for p in peers] == [0, 0], host.out + joiner.out + joiner.err
    reports = [verify_transcript(tmp_path / f"{n}.moska") for n in ("alice", "bob")]
    assert all(r.valid for r in reports) and len({r.final_state_hash for r in reports}) == 1
    assert "transcript verified" in joiner.out

    after = _moska("tables", "--wait", "1")  # the table filled: no longer announced
    assert after.returncode == 0 and "no open tables found" in after.stdout, after.stdout


NETNS_READY = shutil.which("ip") is not None and hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.mark.skipif(not NETNS_READY, reason="needs root and iproute2 for a network namespace")
def test_the_defaults_find_a_table_in_a_namespace_of_our_own(tmp_path: Path) -> None:
    """No MOSKA_DISCOVERY*: the host announces on the default route's interface and on
    loopback. A namespace of the test's own, whose "LAN" is a veth pair with both ends inside
    it, keeps every datagram in it."""
    name = f"moska-disc-{os.getpid()}-{random.randrange(10**6)}"

    def ip(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["ip", *args], capture_output=True, text=True, timeout=10, check=False
        )

    made = ip("netns", "add", name)
    if made.returncode:
        pytest.skip(f"cannot create a network namespace: {made.stderr.strip()}")
    host: subprocess.Popen[bytes] | None = None
    try:
        steps = [
            ["link", "set", "lo", "up"],
            ["link", "add", "lan0", "type", "veth", "peer", "name", "lan1"],  # both ends inside
            ["addr", "add", "10.77.0.1/24", "dev", "lan0"],
            ["link", "set", "lan1", "up"],
            ["link", "set", "lan0", "up"],
            ["route", "add", "default", "dev", "lan0"],
        ]
        for step in steps:
            done = ip("-n", name, *step)
            if done.returncode:
                pytest.skip(f"cannot set up the namespace (ip {' '.join(step)}): {done.stderr}")
        env = {k: v for k, v in os.environ.items() if k not in (ENV_GROUP, ENV_INTERFACE)}
        env["PYTHONUNBUFFERED"] = "1"
        inside = ["ip", "netns", "exec", name, sys.executable]
        args = _host_args(tmp_path, "carol", players=3)
        args[args.index("--bind") + 1] = "0.0.0.0"
        out = tmp_path / "host.out"
        with open(out, "wb") as sink:
            host = subprocess.Popen(
                [*inside, "-m", "moska_p2p", *args, "-v"], cwd=ROOT, env=env,
                stdout=sink, stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + 15
        while "announcing the table" not in out.read_text() and time.monotonic() < deadline:
            assert host.poll() is None, out.read_text()
            time.sleep(0.05)
        listed = subprocess.run(
            [*inside, "-m", "moska_p2p", "tables", "--wait", "2.5"], cwd=ROOT, env=env,
            capture_output=True, text=True, timeout=15, check=False,
        )  # fmt: skip
        assert listed.returncode == 0, listed.stdout + listed.stderr
        line = r"1\. (10\.77\.0\.1|127\.0\.0\.1):\d+  carol  moska, 1 of 3 seats taken"
        assert re.search(line, listed.stdout), listed.stdout
        assert "cannot announce" not in out.read_text()  # both interfaces worked
    finally:
        if host is not None and host.poll() is None:
            host.kill()
            host.wait(5)
        ip("netns", "del", name)
