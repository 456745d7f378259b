"""Real peers in real processes on 127.0.0.1: start a table, watch its output, kill and
restart peers, check the transcripts. Every wait is bounded; a fixture kills whatever is left.
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest
import trio

from moska_p2p.crypto.identity import Identity, fingerprint_of
from moska_p2p.net.discovery import Settings
from moska_p2p.net.node import Node, NodeOptions
from moska_p2p.net.port import GamePort
from moska_p2p.protocol.transcript import Report, verify_transcript
from moska_p2p.protocol.verdict import ABANDONED
from moska_p2p.table.networked import BotAtTable

ROOT = Path(__file__).resolve().parents[2]
JOIN_LINE = re.compile(r"join with: moska join 127\.0\.0\.1:(\d+)")
LISTEN_LINE = re.compile(r"listening on 127\.0\.0\.1:(\d+)")
HOLD = 30.0
"""Seconds at most a :class:`HeldBot` holds its first move (a table's timeout is longer, so
holding never ends the game with a timeout)."""


class Peer:
    """One ``python -m moska_p2p`` process; its output goes to files (no pipe can fill)."""

    def __init__(
        self,
        name: str,
        args: list[str],
        folder: Path,
        preexec: Callable[[], None] | None = None,
        prefix: list[str] | None = None,
        module: list[str] | None = None,
    ) -> None:
        self.name = name
        self.args = args
        self.folder = folder
        self.preexec = preexec  # run in the child before it starts (e.g. a lower RLIMIT)
        self.prefix = prefix or []  # a command the peer runs under (e.g. nsenter into a netns)
        self.module = module or ["moska_p2p"]  # what ``python -m`` runs, with its own arguments
        self.runs = 0
        self.started = 0.0
        self.popen: subprocess.Popen[bytes] | None = None
        self.config_home = folder / "config"
        self.start()

    @property
    def out_path(self) -> Path:
        return self.folder / f"{self.name}.{self.runs}.out"

    @property
    def err_path(self) -> Path:
        return self.folder / f"{self.name}.{self.runs}.err"

    def start(self) -> None:
        self.runs += 1
        # a config directory of the test's own: the known-peers file goes there, not to ~/.config
        env = dict(os.environ, PYTHONUNBUFFERED="1", XDG_CONFIG_HOME=str(self.config_home))
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.popen = subprocess.Popen(
                [*self.prefix, sys.executable, "-m", *self.module, *self.args],
                cwd=ROOT,
                stdout=out,
                stderr=err,
                env=env,
                preexec_fn=self.preexec,
            )
        self.started = time.monotonic()

    @property
    def out(self) -> str:
        return self.out_path.read_text(errors="replace")

    @property
    def err(self) -> str:
        return self.err_path.read_text(errors="replace")

    def wait_for(self, pattern: re.Pattern[str] | str, timeout: float = 15.0) -> re.Match[str]:
        """The first match of ``pattern`` in this peer's output, within ``timeout`` s."""
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = regex.search(self.out)
            if found:
                return found
            assert self.popen is not None
            if self.popen.poll() is not None:
                found = regex.search(self.out)
                if found:
                    return found
                raise AssertionError(
                    f"{self.name} exited ({self.popen.returncode}) before {regex.pattern!r}:\n"
                    f"{self.out}\n{self.err}"
                )
            time.sleep(0.05)
        raise AssertionError(f"{self.name}: no {regex.pattern!r} in {timeout} s:\n{self.out}")

    def finish(self, timeout: float) -> int:
        """The exit code, within ``timeout`` s (else the process is killed and the test fails)."""
        assert self.popen is not None
        try:
            return self.popen.wait(timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError(
                f"{self.name} did not end within {timeout} s:\n{self.out}\n{self.err}"
            ) from None

    def kill(self, sig: int = signal.SIGKILL) -> None:
        if self.popen is not None and self.popen.poll() is None:
            self.popen.send_signal(sig)
            if sig == signal.SIGKILL:
                self.popen.wait(5)


class Table:
    """A host and its joiners: ``peers[0]`` is the host."""

    def __init__(
        self,
        folder: Path,
        preset: str,
        players: int,
        *,
        timeout: float | None = None,
        pace: float = 0.0,
        host_bot: str = "greedy",
        join_bot: str = "random",
        host_args: list[str] | None = None,
        host_preexec: Callable[[], None] | None = None,
        entrance: Callable[[int, int], int] | None = None,
    ) -> None:
        self.folder = folder
        self.identities = [folder / f"p{i}.pem" for i in range(players)]
        self.fingerprints: list[str] = []
        for path in self.identities:
            identity = Identity.generate()
            identity.save(path)
            self.fingerprints.append(identity.fingerprint)
        self.transcripts = [folder / f"p{i}.moska" for i in range(players)]
        self.preset, self.players, self.timeout, self.pace = preset, players, timeout, pace
        self.host_bot, self.join_bot = host_bot, join_bot
        self.host_args, self.host_preexec = host_args or [], host_preexec
        # the port joiner ``seat`` joins at, from the host's (e.g. a proxy's in front of it)
        self.entrance = entrance or (lambda seat, port: port)
        self.peers: list[Peer] = []
        self.port = 0

    def start(self) -> None:
        """Start the host, wait for its port, start the joiners."""
        self.start_host()
        for i in range(1, self.players):
            self.start_joiner(i)

    def _common(self) -> list[str]:
        return ["--bind", "127.0.0.1", "-q", *(["--pace", str(self.pace)] if self.pace else [])]

    def start_host(self) -> Peer:
        """Start the host and wait for its port."""
        host_args = [
            "host", "--preset", self.preset, "--players", str(self.players), "--port", "0",
            "--bot", self.host_bot, "--identity", str(self.identities[0]),
            "--transcript", str(self.transcripts[0]), "--wait", "30", *self._common(),
        ]  # fmt: skip
        if self.timeout is not None:
            host_args += ["--timeout", str(self.timeout)]
        host_args += self.host_args
        self.peers.append(Peer("p0", host_args, self.folder, self.host_preexec))
        self.port = int(self.peers[0].wait_for(JOIN_LINE).group(1))
        return self.peers[0]

    def start_joiner(self, i: int) -> Peer:
        """Start joiner ``i`` (peers join in the order they are started)."""
        args = [
            "join", f"127.0.0.1:{self.entrance(i, self.port)}", "--bot", self.join_bot,
            "--seed", str(i),
            "--identity", str(self.identities[i]), "--transcript", str(self.transcripts[i]),
            "--wait", "30", "--timeout", "5", *self._common(),
        ]  # fmt: skip
        self.peers.append(Peer(f"p{i}", args, self.folder))
        return self.peers[-1]

    def finish(self, timeout: float) -> list[int]:
        deadline = time.monotonic() + timeout
        return [p.finish(max(0.1, deadline - time.monotonic())) for p in self.peers]

    def reports(self) -> list[Report]:
        return [verify_transcript(path) for path in self.transcripts]

    def kill_all(self) -> None:
        for peer in self.peers:
            peer.kill()

    def output(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.out}\n{p.err}" for p in self.peers)


def moska_verify(*paths: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``moska verify`` over ``paths`` (transcripts or folders), as a person runs it."""
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", "verify", *map(str, paths)],
        cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip


def verified(*paths: Path) -> str:
    """What ``moska verify`` says of ``paths``, which must pass."""
    done = moska_verify(*paths)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def own_folder(folder: Path, seat: int) -> Path:
    """A copy of one peer's files only (its games and its session file, ``p{seat}-*``):
    what that peer could show on its own."""
    mine = folder / f"own{seat}"
    mine.mkdir()
    for path in folder.glob(f"p{seat}-*.moska"):
        shutil.copy(path, mine / path.name)
    return mine


def in_game(peer: Peer, path: Path, number: int, size: int = 60_000, timeout: float = 60) -> None:
    """Wait until ``peer`` plays game ``number`` of its session, past the deal: it says the
    game is dealt (within ``timeout``) and its transcript ``path`` grows past ``size`` bytes,
    the proven shuffle and the keys of the first cards, into the play (within a third of that
    again)."""
    peer.wait_for(rf"game {number} of \d+: seat \d deals", timeout)
    deadline = time.monotonic() + timeout / 3
    while (not path.exists() or path.stat().st_size < size) and time.monotonic() < deadline:
        time.sleep(0.02)


def mid_game(table: Table, watch: int, size: int = 100_000) -> None:
    """Wait until a single game is under way: peer ``watch``'s transcript has grown past the
    proven shuffle and the deal into the play."""
    for peer in table.peers:
        peer.wait_for(re.compile(r"^seats: ", re.M), 30)
    deadline = time.monotonic() + 20
    path = table.transcripts[watch]
    while (not path.exists() or path.stat().st_size < size) and time.monotonic() < deadline:
        time.sleep(0.02)
    for peer in table.peers:
        assert "result:" not in peer.out, "the game ended before the test could interfere"


class Namespaces:
    """Network namespaces of the test's own, each held open by an ``unshare -n sleep``
    process (which ends by itself after ``lifetime`` seconds, should a test leak it) and
    entered with ``nsenter`` (:meth:`prefix`). Killing the holders (:meth:`close`) removes
    the namespaces and the veth pairs in them."""

    def __init__(self, count: int, lifetime: int) -> None:
        self.holders: list[subprocess.Popen[bytes]] = []
        self.holders = [
            subprocess.Popen(["unshare", "-n", "sleep", str(lifetime)]) for _ in range(count)
        ]
        time.sleep(0.2)

    def prefix(self, index: int) -> list[str]:
        """The command that runs another in namespace ``index``."""
        return ["nsenter", "-t", str(self.holders[index].pid), "-n"]

    def run(self, index: int, command: str) -> None:
        subprocess.run([*self.prefix(index), "sh", "-c", command], check=True, timeout=10,
                       capture_output=True)  # fmt: skip

    @staticmethod
    def _ip(*args: str) -> None:
        subprocess.run(["ip", *args], check=True, timeout=10, capture_output=True)

    def veth(self, first: int, first_name: str, second: int, second_name: str) -> None:
        """A veth pair, its end ``first_name`` in namespace ``first``, ``second_name`` in
        ``second`` (both down, without addresses: the caller sets them up)."""
        self._ip("link", "add", first_name, "type", "veth", "peer", "name", second_name)
        self._ip("link", "set", first_name, "netns", str(self.holders[first].pid))
        self._ip("link", "set", second_name, "netns", str(self.holders[second].pid))

    def close(self) -> None:
        for holder in self.holders:  # the veth pairs go with their namespaces
            holder.kill()
            holder.wait(5)


class Hub(Namespaces):
    """A namespace for the relay and one for each peer, each peer's joined to the relay's by
    a veth pair (peer ``i`` is 10.78.i.2, the relay's end 10.78.i.1). The relay's namespace
    forwards nothing, so a peer reaches the relay (at :attr:`RELAY` on its loopback) and
    nothing else: no peer can reach another's port. Namespace -1 is the relay's."""

    RELAY = "10.79.0.1"

    def __init__(self, peers: int) -> None:
        super().__init__(peers + 1, 900)
        tag = f"mr{os.getpid() % 10000}"
        self.run(-1, f"ip link set lo up && ip addr add {self.RELAY}/32 dev lo"
                     " && echo 0 > /proc/sys/net/ipv4/ip_forward")  # fmt: skip
        for i in range(peers):
            hub, end = f"{tag}h{i}", f"{tag}p{i}"
            self.veth(-1, hub, i, end)
            self.run(-1, f"ip addr add 10.78.{i}.1/24 dev {hub} && ip link set {hub} up")
            self.run(
                i,
                f"ip link set lo up && ip addr add {self.address(i)}/24 dev {end}"
                f" && ip link set {end} up && ip route add {self.RELAY}/32 via 10.78.{i}.1",
            )

    @staticmethod
    def address(index: int) -> str:
        return f"10.78.{index}.2"

    def reaches(self, index: int, host: str, port: int) -> bool:
        probe = (
            "import socket,sys\n"
            "try:\n"
            f"    socket.create_connection(({host!r}, {port}), timeout=2).close()\n"
            "except OSError:\n"
            "    sys.exit(1)\n"
        )
        done = subprocess.run([*self.prefix(index), sys.executable, "-c", probe], timeout=20)
        return done.returncode == 0

    def open_paths(self) -> None:
        """Let the peers reach one another directly from now on: the relay's namespace
        forwards between them (each peer routes the others' addresses through it)."""
        for i in range(len(self.holders) - 1):
            self.run(i, f"ip route add 10.78.0.0/16 via 10.78.{i}.1")
        self.run(-1, "echo 1 > /proc/sys/net/ipv4/ip_forward")


class Bridged(Namespaces):
    """A namespace for each peer (peer ``i`` at :meth:`address` ``i``, 10.80.0.i+1) and one
    for the switch (namespace -1), where every peer's veth pair ends on one of two bridges.
    All start on the first; moving peers to the second (:meth:`split`) is a clean partition
    between the two groups: their connections stay open and carry nothing, no reset tells
    anyone, and each group still hears itself."""

    def __init__(self, peers: int) -> None:
        super().__init__(peers + 1, 600)
        tag = f"mb{os.getpid() % 10000}"
        self.ports = [f"{tag}s{i}" for i in range(peers)]
        self.ends = [f"{tag}p{i}" for i in range(peers)]  # each peer's side of its veth pair
        self.run(-1, "ip link set lo up && ip link add br0 type bridge && ip link set br0 up"
                     " && ip link add br1 type bridge && ip link set br1 up")  # fmt: skip
        for i, (port, end) in enumerate(zip(self.ports, self.ends, strict=True)):
            self.veth(-1, port, i, end)
            self.run(-1, f"ip link set {port} master br0 && ip link set {port} up")
            self.run(i, f"ip link set lo up && ip addr add {self.address(i)}/24 dev {end}"
                        f" && ip link set {end} up")  # fmt: skip

    @staticmethod
    def address(index: int) -> str:
        return f"10.80.0.{index + 1}"

    def like_a_lan(self) -> None:
        """Make the switch a LAN's for multicast: every peer routes by default through its
        link to the switch (a group is joined and sent to there with no interface named, as on
        a machine with one network), and the bridges flood multicast to every port (no IGMP
        snooping waiting for a querier nobody runs)."""
        for i, end in enumerate(self.ends):
            self.run(i, f"ip route add default dev {end}")
        for bridge in ("br0", "br1"):
            self.run(-1, f"ip link set {bridge} type bridge mcast_snooping 0")

    def split(self, *apart: int) -> None:
        """Move the peers ``apart`` to the second bridge: they hear each other, and nobody
        else hears them."""
        for i in apart:
            self.run(-1, f"ip link set {self.ports[i]} master br1")


N = TypeVar("N", bound=Namespaces)


@contextlib.contextmanager
def namespaces_or_skip(make: Callable[[], N]) -> Iterator[N]:
    """The namespaces ``make`` makes, closed at the end; the test is skipped where this
    machine cannot make them (no ``ip``, ``unshare`` or ``nsenter``, no right to)."""
    if not all(shutil.which(tool) for tool in ("ip", "unshare", "nsenter")):
        pytest.skip("needs ip, unshare and nsenter")
    try:
        made = make()
    except (subprocess.CalledProcessError, OSError) as error:
        pytest.skip(f"cannot make network namespaces here: {error}")
    try:
        yield made
    finally:
        made.close()


def assert_abandoned(report: Report, culprit: str, witnesses: list[str]) -> None:
    """``report`` (one record) convicts the seat of fingerprint ``culprit`` of abandoning the
    game (PROTOCOL.md §15.5): verdict ``abandoned`` naming it alone, it is the loser (the game
    was not decided before), and the statements that prove it are signed by exactly the seats
    of fingerprints ``witnesses``, every other seat."""
    assert report.valid, report.fault
    assert report.verdict_kind == ABANDONED and report.conviction, report.verdict
    assert [fingerprint_of(key) for key in report.culprits] == [culprit], report.verdict
    seat = [fingerprint_of(key) for key in report.seats].index(culprit)
    assert report.losers == [seat], (report.losers, report.verdict)
    said = re.search(r"\(corroborated by ([^)]*)\)", report.verdict or "")
    assert said and sorted(said.group(1).split(", ")) == sorted(witnesses), report.verdict


# -- nodes in the test's own trio run ---------------------------------------------------------


class HeldBot(BotAtTable):
    """A bot whose first move waits (at most :data:`HOLD` s) until :attr:`release` is set, so
    that a game is still under way while a test looks at it."""

    def __init__(self, bot: object) -> None:
        super().__init__(bot)
        self.release = trio.Event()

    async def play(self, port: GamePort) -> None:
        with trio.move_on_after(HOLD):
            await self.release.wait()
        await super().play(port)


def loopback_node(
    folder: Path,
    index: int,
    player: BotAtTable,
    lines: list[str] | None = None,
    relay: tuple[str, int] | None = None,
) -> Node:
    """A node named ``p{index}`` on 127.0.0.1 with a fresh key, its transcript in ``folder``,
    its lines to ``lines`` (or nowhere) and, if given, the table's relay."""
    return Node(
        NodeOptions(
            identity=Identity.generate(),
            player=player,
            transcript=folder / f"p{index}.moska",
            name=f"p{index}",
            bind="127.0.0.1",
            connect_timeout=5.0,
            lobby_wait=30.0,
            echo=(lambda line: None) if lines is None else lines.append,
            relay=relay,
        )
    )


async def until(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll ``check()`` until it is true, within ``timeout`` s."""
    with trio.move_on_after(timeout) as scope:
        while not check():
            await trio.sleep(0.01)
    assert not scope.cancelled_caught, f"not within {timeout} s: {what}"


# ---------------------------------------------------------------------------- LAN discovery

LOOPBACK = "127.0.0.1"


def free_udp_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind((LOOPBACK, 0))
        return int(probe.getsockname()[1])


def loopback_multicast(group: str, port: int) -> str:
    """Why multicast on loopback does not work here ("" when it does)."""
    try:
        with (
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as rx,
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx,
        ):
            rx.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            rx.bind((group, port))
            membership = socket.inet_aton(group) + socket.inet_aton(LOOPBACK)
            rx.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
            rx.settimeout(2.0)
            tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(LOOPBACK))
            tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
            tx.sendto(b"probe", (group, port))
            rx.recvfrom(64)
    except OSError as error:
        return str(error)
    return ""


def loopback_lan() -> Settings:
    """A multicast group and port of the caller's own, on loopback only; the test is skipped
    when loopback multicast fails (the ``lan`` fixture sets it in the environment)."""
    group = f"239.255.{random.randrange(100, 250)}.{random.randrange(1, 250)}"
    port = free_udp_port()
    why = loopback_multicast(group, port)
    if why:
        pytest.skip(f"multicast on loopback is unavailable in this sandbox: {why}")
    return Settings(group, port, LOOPBACK)


def send_datagrams(settings: Settings, *datagrams: bytes) -> None:
    """Datagrams to the test's group, on loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as tx:
        tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(LOOPBACK))
        tx.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
        for data in datagrams:
            tx.sendto(data, (settings.group, settings.port))
