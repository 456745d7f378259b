"""Hardening over loopback with real processes: a host flooded by 500 connections
each sending a 1 MiB length prefix stays under 100 MB and its game finishes; a host out of
file descriptors (a low RLIMIT_NOFILE and hundreds of idle connections) logs it once, no
traceback, and its game and ``--stats`` finish; a joiner behind a relay that replays the host's
``hi`` is refused; a changed key for a known name is refused with a clear message.

Every wait is bounded; the fixture kills whatever process is left. Measurements are printed
(run with ``-s`` to see them).
"""

from __future__ import annotations

import contextlib
import json
import re
import resource
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from net_harness import JOIN_LINE, Peer, Table, assert_abandoned

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol.config import default_grace
from moska_p2p.protocol.transcript import verify_transcript

LOOPBACK = "127.0.0.1"
MB = 1024 * 1024


def _status_kb(pid: int, field: str) -> int:
    """A ``VmRSS``/``VmHWM`` line of /proc/PID/status, in kB (0 once the process is gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    found = re.search(rf"^{field}:\s+(\d+) kB", text, re.M)
    return int(found.group(1)) if found else 0


def _fds(pid: int) -> int:
    try:
        return len(list(Path(f"/proc/{pid}/fd").iterdir()))
    except OSError:
        return 0


class _Sampler:
    """Samples a process's peak RSS (VmHWM) every 20 ms in a thread until stopped."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.peak_kb = 0
        self.rss_kb = 0
        self.max_fds = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(0.02):
            self.peak_kb = max(self.peak_kb, _status_kb(self.pid, "VmHWM"))
            self.rss_kb = max(self.rss_kb, _status_kb(self.pid, "VmRSS"))
            self.max_fds = max(self.max_fds, _fds(self.pid))

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def _mid_game(table: Table, size: int = 30_000) -> None:
    for peer in table.peers:
        peer.wait_for(re.compile(r"^seats: ", re.M))
    deadline = time.monotonic() + 20
    path = table.transcripts[0]
    while (not path.exists() or path.stat().st_size < size) and time.monotonic() < deadline:
        time.sleep(0.02)


def _flood(port: int, count: int, data: bytes, source: str = LOOPBACK) -> list[socket.socket]:
    """``count`` connections that each send as much of ``data`` as the kernel takes at once
    (non-blocking); returned open."""
    sockets = []
    for _ in range(count):
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.bind((source, 0))
            sock.settimeout(2.0)
            sock.connect((LOOPBACK, port))
            sock.setblocking(False)
            if data:
                with contextlib.suppress(OSError):
                    sock.send(data)
        except OSError:
            pass
        sockets.append(sock)
    return sockets


def _close(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def test_a_flooded_host_stays_under_100_mb_and_its_game_finishes(
    make_table: Callable[..., Table],
) -> None:
    """The issue's flood (a 1 MiB length prefix and then body bytes, on 500 connections) took
    a host from 64 MB to 611 MB. Now each connection is closed at its length prefix."""
    table = make_table("moska", 4, pace=0.02)
    host = table.peers[0]
    assert host.popen is not None
    sampler = _Sampler(host.popen.pid)
    try:
        _mid_game(table)
        before = _status_kb(host.popen.pid, "VmRSS")
        prefix = (1 << 20).to_bytes(4, "big")
        started = time.monotonic()
        sockets: list[socket.socket] = []
        for _ in range(5):
            sockets += _flood(table.port, 100, prefix + bytes(MB - 1))
        flood_seconds = time.monotonic() - started
        time.sleep(1.0)
        _close(sockets)
        codes = table.finish(60)
    finally:
        sampler.stop()
    print(
        f"\nflood: 500 connections in {flood_seconds:.1f} s; host RSS before {before / 1024:.0f}"
        f" MB, peak {sampler.peak_kb / 1024:.0f} MB, max {sampler.max_fds} descriptors"
    )
    assert codes == [0, 0, 0, 0], table.output()
    assert sampler.peak_kb < 100 * 1024, sampler.peak_kb
    assert "Traceback" not in host.err, host.err
    assert len(host.err.splitlines()) < 30, host.err  # rate-limited, not 500 lines


def test_a_host_out_of_descriptors_backs_off_and_its_game_and_stats_finish(
    make_table: Callable[..., Table], tmp_path: Path
) -> None:
    """With RLIMIT_NOFILE just above what the game needs and 300 idle connections, accept
    fails with EMFILE: one warning, no traceback (trio's serve_listeners printed 115-160),
    the game goes on and ``--stats`` is written (it crashed the host before)."""
    stats = tmp_path / "host-stats.json"
    probe = make_table("moska", 4, pace=0.01)
    assert probe.peers[0].popen is not None
    _mid_game(probe)
    needed = _fds(probe.peers[0].popen.pid)
    assert probe.finish(60) == [0, 0, 0, 0], probe.output()
    limit = needed + 6  # fewer than the 16 strangers the host would otherwise let wait

    def lower_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    folder = tmp_path / "table"
    folder.mkdir()
    table = Table(folder, "moska", 4, pace=0.02, host_args=["--stats", str(stats)],
                  host_preexec=lower_limit)  # fmt: skip
    try:
        table.start()
        _mid_game(table)
        sockets: list[socket.socket] = []
        for index in range(75):  # 300 idle connections from 75 addresses
            sockets += _flood(table.port, 4, b"", source=f"127.0.1.{index + 1}")
        time.sleep(3.0)
        _close(sockets)
        codes = table.finish(60)
    finally:
        table.kill_all()
    host = table.peers[0]
    print(f"\nEMFILE: limit {limit} descriptors (the game needs {needed}); stderr:\n{host.err}")
    assert codes == [0, 0, 0, 0], table.output()
    assert "Traceback" not in host.err, host.err
    accept_lines = [line for line in host.err.splitlines() if "cannot accept" in line]
    assert 1 <= len(accept_lines) <= 3, host.err
    figures = json.loads(stats.read_text())
    assert figures["code"] == 0 and figures["accept_errors"] > 0, figures


def _relay_replaying(captured: bytes, upstream_port: int) -> tuple[int, Callable[[], None]]:
    """A TCP relay on loopback that greets each client with the ``captured`` hi, then passes
    the client's answer to the host on a connection of its own and the host's reply back."""
    server = socket.create_server((LOOPBACK, 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def frame(sock: socket.socket) -> bytes:
        head = b""
        while len(head) < 4:
            chunk = sock.recv(4 - len(head))
            if not chunk:
                return b""
            head += chunk
        length = int.from_bytes(head, "big")
        body = b""
        while len(body) < length:
            chunk = sock.recv(length - len(body))
            if not chunk:
                return b""
            body += chunk
        return head + body

    def serve() -> None:
        while not stop.is_set():
            try:
                client, _ = server.accept()
            except TimeoutError:
                continue
            with client, socket.create_connection((LOOPBACK, upstream_port), 5) as upstream:
                client.settimeout(5)
                upstream.settimeout(5)
                try:
                    client.sendall(captured)
                    answer = frame(client)  # the joiner's join, for the captured nonce
                    frame(upstream)  # the host's fresh hi: not passed on
                    upstream.sendall(answer)
                    client.sendall(frame(upstream))  # the host's reply
                    time.sleep(0.5)
                except OSError:
                    pass
        server.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def close() -> None:
        stop.set()
        thread.join(5)

    return int(server.getsockname()[1]), close


def test_a_joiner_behind_a_relay_that_replays_the_hosts_hi_is_refused(tmp_path: Path) -> None:
    identity = tmp_path / "host.pem"
    Identity.generate().save(identity)
    joiner_key = tmp_path / "joiner.pem"
    Identity.generate().save(joiner_key)
    common = ["--bind", LOOPBACK, "-q", "--bot", "random"]
    host = Peer("host", ["host", "--players", "3", "--port", "0", "--identity", str(identity),
                         "--transcript", str(tmp_path / "h.moska"), "--wait", "20",
                         "--no-announce", *common], tmp_path)  # fmt: skip
    joiner: Peer | None = None
    close = None
    try:
        port = int(host.wait_for(JOIN_LINE).group(1))
        with socket.create_connection((LOOPBACK, port), 5) as sock:
            sock.settimeout(5)
            data = b""
            while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
                data += sock.recv(65536)
            captured = data[: 4 + int.from_bytes(data[:4], "big")]
        relay_port, close = _relay_replaying(captured, port)
        joiner = Peer("joiner", ["join", f"{LOOPBACK}:{relay_port}", "--identity",
                                 str(joiner_key), "--transcript", str(tmp_path / "j.moska"),
                                 "--timeout", "5", "--wait", "10", *common], tmp_path)  # fmt: skip
        code = joiner.finish(30)
    finally:
        if close is not None:
            close()
        host.kill()
        if joiner is not None:
            joiner.kill()
    assert code == 1, joiner.out + joiner.err
    assert "error: could not join" in joiner.err  # a failure before the game: on stderr
    assert "does not answer this connection" in joiner.err, joiner.out + joiner.err
    assert "joined from" not in host.out  # never seated


def test_a_changed_key_for_a_known_name_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    """Game 1: alice hosts, bob joins (the host learns bob's key). Game 2: someone else joins
    as bob with another key: the host refuses the join, loudly, and both say why."""
    alice, bob, mallory = (tmp_path / f"{n}.pem" for n in ("alice", "bob", "mallory"))
    for path in (alice, bob, mallory):
        Identity.generate().save(path)
    common = ["--bind", LOOPBACK, "-q", "--bot", "random", "--no-announce"]
    peers: list[Peer] = []

    def game(run: int, joiner: Path) -> tuple[Peer, Peer]:
        host = Peer(f"host{run}", ["host", "--players", "2", "--port", "0", "--identity",
                                   str(alice), "--name", "alice", "--transcript",
                                   str(tmp_path / f"a{run}.moska"), "--wait", "20", *common],
                    tmp_path)  # fmt: skip
        peers.append(host)
        port = int(host.wait_for(JOIN_LINE).group(1))
        guest = Peer(f"bob{run}", ["join", f"{LOOPBACK}:{port}", "--identity", str(joiner),
                                   "--name", "bob", "--transcript", str(tmp_path / f"b{run}.moska"),
                                   "--timeout", "5", "--wait", "20", "--bind", LOOPBACK, "-q",
                                   "--bot", "random"], tmp_path)  # fmt: skip
        peers.append(guest)
        return host, guest

    try:
        host, guest = game(1, bob)
        assert [host.finish(45), guest.finish(45)] == [0, 0], host.out + guest.out
        known = tmp_path / "config" / "moska-p2p" / "known_peers"
        assert known.is_file() and oct(known.stat().st_mode & 0o777) == "0o600"
        assert Identity.load(bob).public_bytes.hex() in known.read_text()
        host, guest = game(2, mallory)
        guest_code = guest.finish(30)
        host.kill()
    finally:
        for peer in peers:
            peer.kill()
    assert guest_code == 1, guest.out + guest.err
    assert "the host knows the name 'bob' with another key" in guest.err, guest.out + guest.err
    assert "joined; waiting" not in guest.out  # refused before it is seated
    assert "WARNING: A KNOWN PLAYER'S KEY HAS CHANGED!" in host.out, host.out
    assert "moska trust bob" in host.out and str(known) in host.out


@pytest.mark.parametrize("over", [False, True], ids=["within the grace", "past the grace"])
def test_a_suspended_peer_loses_only_past_the_grace_and_blames_nobody_else(
    make_table: Callable[..., Table], over: bool
) -> None:
    """SIGSTOP one joiner, then SIGCONT. Stopped past its move clock but within the grace
    (a laptop lid closed for a moment) the game just goes on; past the grace the three others
    sign that they lost it and every peer, the suspended one included (the quorum is a proof,
    not hearsay), stops with ``abandoned`` naming that seat and no other."""
    timeout = 4.0
    grace = default_grace(timeout)
    table = make_table("moska", 4, timeout=timeout, pace=0.02)
    _mid_game(table)
    victim = table.peers[2]
    victim.kill(signal.SIGSTOP)
    time.sleep(grace + 3 if over else timeout + 1)
    victim.kill(signal.SIGCONT)
    codes = table.finish(45)
    if not over:
        assert codes == [0, 0, 0, 0], table.output()
        return
    assert codes == [1, 1, 1, 1], table.output()
    named = re.compile(rf"game stopped: abandoned: seat \d \(random, {table.fingerprints[2]}\):")
    witnesses = [f for i, f in enumerate(table.fingerprints) if i != 2]
    for peer, transcript in zip(table.peers, table.transcripts, strict=True):
        assert named.search(peer.out), table.output()
        assert_abandoned(verify_transcript(transcript), table.fingerprints[2], witnesses)
