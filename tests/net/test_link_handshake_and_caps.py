"""Hardening on the network side, in one trio run on 127.0.0.1 (no whole game needed): the
mutual challenge-response of a link (a relay that replays a ``hi`` or a ``link`` is refused),
signed roster addresses, caps before authentication (frame size, connections per address and
in all, handshake time), accept errors backed off and logged once, known peers, ``--expect``,
``--stats`` that cannot crash, and decoders that raise only the project's errors.

Every wait is bounded (``trio.fail_after``); every socket is on a loopback address.
"""

from __future__ import annotations

import errno
import logging
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from functools import partial
from pathlib import Path
from typing import Any

import msgpack
import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from moska_p2p.bots.loader import load_bot
from moska_p2p.cli import app
from moska_p2p.crypto.identity import Identity
from moska_p2p.net.discovery import parse_announcement
from moska_p2p.net.known import KnownPeers, KnownPeersError
from moska_p2p.net.node import EXIT_FAILED, Node, NodeOptions, Outcome
from moska_p2p.net.persist import SavedGame
from moska_p2p.net.wire import (
    BOUND,
    DIALER,
    HI,
    JOIN,
    LINK,
    START,
    Entry,
    FrameStream,
    HandshakeError,
    NetMessage,
    check_link_proof,
    classify,
    link_id,
    link_proof,
    net_frame,
    prefixed,
)
from moska_p2p.protocol.config import ConfigError, TableConfig, lobby_id, table_id
from moska_p2p.protocol.frames import (
    MAX_PAYLOAD_OF,
    PRE_AUTH_MAX_FRAME,
    FrameError,
    encode_frame,
    open_frame,
    pack,
    signed_frame,
)
from moska_p2p.table.networked import BotAtTable

LOOPBACK = "127.0.0.1"
CONFIG = TableConfig("moska", 3, bytes([5]) * 32, {}, 10.0)


class _StubSession:
    """Just what a link needs of a session (these tests make links, not games)."""

    seat_of: dict[bytes, int] = {}  # noqa: RUF012

    def sync_state(self) -> dict[bytes, int]:
        return {}

    def frames_after(self, have: dict[bytes, int]) -> list[bytes]:
        return []

    def receive(self, frame: bytes, now: float) -> list[Any]:
        return []


def _options(tmp_path: Path, name: str, echo: list[str] | None = None, **more: Any) -> NodeOptions:
    settings: dict[str, Any] = {
        "identity": Identity.generate(),
        "player": BotAtTable(load_bot("random", seed=1)),
        "transcript": tmp_path / f"{name}.moska",
        "name": name,
        "bind": LOOPBACK,
        "connect_timeout": 3.0,
        "lobby_wait": 30.0,  # bounds a lobby; a loaded CI machine needs room
        "echo": (echo if echo is not None else []).append,
        **more,
    }
    return NodeOptions(**settings)


def _linked_pair(tmp_path: Path) -> tuple[Node, Node]:
    """Two nodes of one table (``a`` earlier in the roster, ``b`` later), with the saved game
    each would have after the start, and a stub session."""
    a, b = Node(_options(tmp_path, "a")), Node(_options(tmp_path, "b"))
    config = TableConfig("moska", 2, secrets.token_bytes(32), {}, 10.0)
    lobby = lobby_id(config)
    roster = (
        Entry.sign(a.identity, lobby, "a", "", 1),
        Entry.sign(b.identity, lobby, "b", LOOPBACK, 2),
    )
    for index, node in enumerate((a, b)):
        node.runner.saved = SavedGame(tmp_path / f"{index}.moska", bytes(32), config, roster, index,
                               "x", None)  # fmt: skip
        node.runner.table_id = table_id(config, [e.key for e in roster])
        node.runner.session = _StubSession()  # type: ignore[assignment]
        node.ready.set()
    return a, b


@asynccontextmanager
async def _serving(node: Node) -> AsyncIterator[int]:
    """``node`` accepting connections on a loopback port (yielded) for the block."""
    async with trio.open_nursery() as nursery:
        listeners = await node.mesh.listen(0)
        node._nursery = node.mesh.nursery = node.runner.nursery = nursery
        nursery.start_soon(node.mesh.serve, listeners)
        yield node.port
        nursery.cancel_scope.cancel()


async def _first_frame(port: int, source: str = LOOPBACK) -> bytes:
    """Connect, read the first frame (a ``hi``), hang up: what a relay would record."""
    stream = await trio.open_tcp_stream(LOOPBACK, port, local_address=source)
    try:
        body = await FrameStream(stream).receive()
        assert body is not None
        return prefixed(body)
    finally:
        await stream.aclose()


async def _eventually(check: Callable[[], bool], timeout: float = 3.0) -> bool:
    with trio.move_on_after(timeout):
        while not check():
            await trio.sleep(0.01)
        return True
    return False


# ---------------------------------------------------------------- authenticated links (item 4)


@pytest.mark.trio
async def test_a_direct_link_is_mutually_authenticated(tmp_path: Path) -> None:
    a, b = _linked_pair(tmp_path)
    with trio.fail_after(10):
        async with _serving(a) as port:
            fs = await b.mesh.dial(LOOPBACK, port, a.me)
            assert fs.is_authenticated
            assert await _eventually(lambda: b.me in a.links)
            await fs.stream.aclose()


@pytest.mark.trio
async def test_a_relay_that_replays_a_captured_hi_is_refused(tmp_path: Path) -> None:
    """The relay recorded ``a``'s ``hi`` on an earlier connection and plays it to ``b``, then
    passes ``b``'s ``link`` to ``a`` on a connection of its own. ``a`` refuses the link (it does
    not answer that connection's nonce) and ``b`` never takes the relay for ``a``: it needs
    ``a``'s proof over its own fresh nonce. (Before, ``b`` took the relay for ``a`` at once.)"""
    a, b = _linked_pair(tmp_path)
    forwarded: list[bytes] = []
    with trio.fail_after(15):
        async with _serving(a) as port, trio.open_nursery() as nursery:
            captured = await _first_frame(port)

            async def relay(stream: trio.SocketStream) -> None:
                await stream.send_all(captured)  # the replayed hi
                link = await FrameStream(stream).receive()
                assert link is not None
                upstream = await trio.open_tcp_stream(LOOPBACK, port)
                ups = FrameStream(upstream)
                await ups.receive()  # a's fresh hi, kept to itself
                await upstream.send_all(prefixed(link))
                answer = await ups.receive()
                if answer is not None:
                    forwarded.append(answer)
                    await stream.send_all(prefixed(answer))
                await upstream.aclose()
                await stream.aclose()

            listeners = await trio.open_tcp_listeners(0, host=LOOPBACK)
            relay_port = listeners[0].socket.getsockname()[1]
            nursery.start_soon(trio.serve_listeners, relay, listeners)
            with pytest.raises(HandshakeError, match="does not answer this connection"):
                await b.mesh.dial(LOOPBACK, relay_port, a.me)
            assert not a.links and not b.links
            assert [classify(f).kind for f in forwarded] == ["refuse"]  # type: ignore[union-attr]
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_relay_that_answers_for_the_listener_is_refused(tmp_path: Path) -> None:
    """With the replayed ``hi`` the relay cannot make ``a``'s ``welcome``: one signed by
    another key, or with a proof over another nonce, is refused."""
    a, b = _linked_pair(tmp_path)
    mallory = Identity.generate()
    with trio.fail_after(15):
        async with _serving(a) as port, trio.open_nursery() as nursery:
            captured = await _first_frame(port)
            hi = classify(captured[4:])
            assert hi is not None

            async def relay(stream: trio.SocketStream) -> None:
                await stream.send_all(captured)
                body = await FrameStream(stream).receive()
                assert body is not None
                link = classify(body)
                assert link is not None
                parts = (b.table_id, b.me, a.me, link.body["nonce"], hi.body["nonce"])
                proof = link_proof(mallory, *parts, b"listener")  # the wrong key
                await stream.send_all(net_frame(mallory, "welcome", {"proof": proof}))
                await trio.sleep(1)

            listeners = await trio.open_tcp_listeners(0, host=LOOPBACK)
            relay_port = listeners[0].socket.getsockname()[1]
            nursery.start_soon(trio.serve_listeners, relay, listeners)
            with pytest.raises(HandshakeError, match="did not prove its key"):
                await b.mesh.dial(LOOPBACK, relay_port, a.me)
            nursery.cancel_scope.cancel()
    assert not b.links


@pytest.mark.trio
async def test_a_replayed_link_is_refused(tmp_path: Path) -> None:
    """A transparent relay records ``b``'s ``link`` on a good connection; replayed on a new
    connection it answers another nonce, and ``a`` refuses it."""
    a, b = _linked_pair(tmp_path)
    recorded: list[bytes] = []
    with trio.fail_after(15):
        async with _serving(a) as port, trio.open_nursery() as nursery:

            async def relay(stream: trio.SocketStream) -> None:
                upstream = await trio.open_tcp_stream(LOOPBACK, port)
                async with upstream, trio.open_nursery() as pipes:

                    async def pipe(src: Any, dst: Any, log: list[bytes] | None) -> None:
                        with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                            while data := await src.receive_some(65536):
                                if log is not None:
                                    log.append(bytes(data))
                                await dst.send_all(data)
                        await dst.aclose()  # one side hung up: hang up the other

                    pipes.start_soon(pipe, stream, upstream, recorded)
                    pipes.start_soon(pipe, upstream, stream, None)

            listeners = await trio.open_tcp_listeners(0, host=LOOPBACK)
            relay_port = listeners[0].socket.getsockname()[1]
            nursery.start_soon(trio.serve_listeners, relay, listeners)
            fs = await b.mesh.dial(LOOPBACK, relay_port, a.me)  # a relay that only relays is fine
            assert await _eventually(lambda: b.me in a.links)
            await fs.stream.aclose()
            assert await _eventually(lambda: not a.links)
            link = b"".join(recorded)[: 4 + int.from_bytes(b"".join(recorded)[:4], "big")]
            assert classify(link[4:]).kind == LINK  # type: ignore[union-attr]
            replay = await trio.open_tcp_stream(LOOPBACK, port)
            rfs = FrameStream(replay)
            await rfs.receive_net(HI)
            await replay.send_all(link)
            with pytest.raises(HandshakeError, match="does not answer this connection"):
                await rfs.receive_net("welcome")
            await replay.aclose()
            nursery.cancel_scope.cancel()
    assert not a.links


def test_link_proofs_bind_every_part() -> None:
    alice, bob = Identity.generate(), Identity.generate()
    table, mine, theirs = secrets.token_bytes(32), secrets.token_bytes(32), secrets.token_bytes(32)
    parts = [table, alice.public_bytes, bob.public_bytes, mine, theirs]

    def check(proof: bytes, values: list[bytes], role: bytes = DIALER) -> bool:
        return check_link_proof(proof, values[0], values[1], values[2], values[3], values[4], role)

    proof = link_proof(alice, table, alice.public_bytes, bob.public_bytes, mine, theirs, DIALER)
    assert check(proof, parts)
    assert not check(proof, parts, b"listener")
    for index in range(5):
        changed = list(parts)
        changed[index] = secrets.token_bytes(32)
        assert not check(proof, changed)
    assert not check(proof, [b"short", *parts[1:]])


# ---------------------------------------------------------------- roster addresses (item 4)


@pytest.mark.trio
async def test_the_roster_lists_a_joiner_where_it_says_not_where_a_relay_is(
    tmp_path: Path,
) -> None:
    """A relay between joiner and host (connecting from 127.0.0.2): the host's seat for the
    joiner carries the address the joiner signed (127.0.0.1), not the relay's."""
    host = Node(_options(tmp_path, "host"))
    joiner = Node(_options(tmp_path, "joiner"))
    with trio.fail_after(15):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)

            async def relay(stream: trio.SocketStream) -> None:
                upstream = await trio.open_tcp_stream(LOOPBACK, port, local_address="127.0.0.2")
                async with upstream, trio.open_nursery() as pipes:

                    async def pipe(src: Any, dst: Any) -> None:
                        while data := await src.receive_some(65536):
                            await dst.send_all(data)

                    pipes.start_soon(pipe, stream, upstream)
                    pipes.start_soon(pipe, upstream, stream)

            listeners = await trio.open_tcp_listeners(0, host=LOOPBACK)
            relay_port = listeners[0].socket.getsockname()[1]
            nursery.start_soon(trio.serve_listeners, relay, listeners)
            nursery.start_soon(joiner.join, LOOPBACK, relay_port)
            lobby = host.lobby.hosting
            assert lobby is not None
            assert await _eventually(lambda: bool(lobby.joined), 10)
            [(entry, _)] = lobby.joined.values()
            nursery.cancel_scope.cancel()
    assert entry.key == joiner.me and entry.port == joiner.port
    assert entry.host == LOOPBACK  # not 127.0.0.2
    assert entry.verify(lobby_id(CONFIG))


def _start(host: Identity, roster: list[Entry], config: TableConfig = CONFIG) -> NetMessage:
    body = {"config": config.to_wire(), "roster": [e.to_wire() for e in roster]}
    message = classify(net_frame(host, START, body)[4:])
    assert message is not None
    return message


def test_a_roster_entry_not_signed_by_its_key_is_refused(tmp_path: Path) -> None:
    """The host (or anyone) cannot steer a peer's address: each entry is signed by its key."""
    host, other = Identity.generate(), Identity.generate()
    node = Node(_options(tmp_path, "me"))
    node.mesh.port = 7003
    lobby = lobby_id(CONFIG)
    good = [
        Entry.sign(host, lobby, "host", "", 7001),
        Entry.sign(other, lobby, "other", "192.0.2.1", 7002),
        Entry.sign(node.identity, lobby, "me", LOOPBACK, 7003),
    ]
    assert node.lobby.check_start(_start(host, good), host.public_bytes, CONFIG)
    steered = Entry(other.public_bytes, "other", "198.51.100.9", 7002, good[1].sig)
    with pytest.raises(HandshakeError, match="not signed by its key"):
        node.lobby.check_start(_start(host, [good[0], steered, good[2]]), host.public_bytes, CONFIG)
    elsewhere = TableConfig("moska", 3, bytes([6]) * 32, {}, 10.0)  # signed for another table
    moved = [Entry.sign(i, lobby_id(elsewhere), e.name, e.host, e.port)
             for i, e in zip((host, other, node.identity), good, strict=True)]  # fmt: skip
    with pytest.raises(HandshakeError, match="not signed by its key"):
        node.lobby.check_start(_start(host, moved), host.public_bytes, CONFIG)


# ---------------------------------------------------------------- limits before trust (item 2)


async def _fate(stream: trio.abc.HalfCloseableStream, wait: float) -> str:
    """What happens to an idle connection: ``hi`` (we were greeted), then ``closed``."""
    fs = FrameStream(stream)
    with trio.move_on_after(wait):
        try:
            body = await fs.receive()
        except (trio.BrokenResourceError, FrameError):
            return "closed"
        if body is None:
            return "closed"
        return "hi"
    return "silent"


@pytest.mark.trio
async def test_unauthenticated_connections_are_capped_per_address_and_in_all(
    tmp_path: Path,
) -> None:
    host = Node(_options(tmp_path, "host", handshake_timeout=1.0))
    streams: list[trio.SocketStream] = []
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)
            for _ in range(10):  # one address: four get in
                streams.append(await trio.open_tcp_stream(LOOPBACK, port))
            # Bounds, not times: a fate is known as soon as the host greets or closes.
            fates = [await _fate(s, 10.0) for s in streams[:10]]
            assert fates.count("hi") == 4, fates
            assert fates.count("closed") == 6, fates
            for s in streams:
                await s.aclose()
            await trio.sleep(0.1)
            streams = []
            for index in range(2, 8):  # six addresses of four: sixteen get in
                source = f"127.0.0.{index}"
                for _ in range(4):
                    streams.append(await trio.open_tcp_stream(LOOPBACK, port, local_address=source))
            fates = [await _fate(s, 10.0) for s in streams]
            assert fates.count("hi") == 16, fates
            assert host.stats.refused_connections >= 6 + 8
            # the handshake timeout closes the idle ones that were let in
            later = [await _fate(s, 10.0) for s in streams if True]
            assert "silent" not in later, later
            for s in streams:
                await s.aclose()
            # and an honest joiner still gets in
            joiner = Node(_options(tmp_path, "joiner"))
            nursery.start_soon(joiner.join, LOOPBACK, port)
            lobby = host.lobby.hosting
            assert lobby is not None
            assert await _eventually(lambda: joiner.me in lobby.joined, 10)
            nursery.cancel_scope.cancel()


@pytest.mark.trio
@pytest.mark.parametrize("length", [PRE_AUTH_MAX_FRAME + 1, 1 << 20, (1 << 32) - 1])
async def test_a_frame_over_the_pre_auth_cap_closes_the_connection_at_once(
    tmp_path: Path, length: int
) -> None:
    """Before a peer has proved its key, a frame may be 4 KiB: a longer length prefix closes
    the connection as soon as it arrives (before, up to 1 MiB was buffered for 10 s)."""
    host = Node(_options(tmp_path, "host"))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)
            stream = await trio.open_tcp_stream(LOOPBACK, port)
            fs = FrameStream(stream)
            await fs.receive_net(HI)
            await stream.send_all(length.to_bytes(4, "big") + bytes(1000))
            closed_at = trio.current_time()
            with trio.fail_after(5):  # well short of the 10 s, with room for a busy machine
                with suppress(trio.BrokenResourceError):
                    assert await fs.receive() is None
            assert trio.current_time() - closed_at < 5
            await stream.aclose()
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_flood_of_big_length_prefixes_holds_no_memory(tmp_path: Path) -> None:
    """500 connections each sending a 1 MiB length prefix: each is closed at its prefix, so
    the host holds nothing (traced allocations stay under 2 MB) and still seats a joiner."""
    import tracemalloc

    host = Node(_options(tmp_path, "host"))
    prefix = (1 << 20).to_bytes(4, "big")
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)
            tracemalloc.start()
            try:

                async def attacker(count: int) -> None:
                    for _ in range(count):
                        try:
                            stream = await trio.open_tcp_stream(LOOPBACK, port)
                            await stream.send_all(prefix + bytes(60000))
                            await stream.aclose()
                        except (OSError, trio.BrokenResourceError):
                            pass

                async with trio.open_nursery() as flood:
                    for _ in range(10):
                        flood.start_soon(attacker, 50)
                _, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert peak < 2_000_000, peak
            joiner = Node(_options(tmp_path, "joiner"))
            nursery.start_soon(joiner.join, LOOPBACK, port)
            lobby = host.lobby.hosting
            assert lobby is not None
            assert await _eventually(lambda: joiner.me in lobby.joined, 10)
            nursery.cancel_scope.cancel()


# ---------------------------------------------------------------- accept errors (item 8)


class _FailingListener(trio.abc.Listener[trio.SocketStream]):
    """A listener whose accept fails with EMFILE ``failures`` times, then waits forever."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0

    async def accept(self) -> trio.SocketStream:
        self.calls += 1
        if self.calls <= self.failures:
            raise OSError(errno.EMFILE, "Too many open files")
        await trio.sleep_forever()
        raise AssertionError

    async def aclose(self) -> None:
        pass


@pytest.mark.trio
async def test_accept_errors_are_logged_once_per_burst_and_backed_off(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    node = Node(_options(tmp_path, "host"))
    listener = _FailingListener(200)
    caplog.set_level(logging.INFO, logger="moska_p2p.net")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(node.mesh._accept_loop, listener, nursery)
            await trio.sleep(2.0)
            nursery.cancel_scope.cancel()
    # doubling from 50 ms to 1 s: about six tries in two seconds, not a busy loop
    assert 3 <= listener.calls <= 10, listener.calls
    lines = [r.getMessage() for r in caplog.records]
    assert sum("cannot accept connections" in line for line in lines) == 1, lines
    assert not any(r.exc_info for r in caplog.records)
    assert node.stats.accept_errors == listener.calls


@pytest.mark.trio
async def test_out_of_descriptors_sheds_the_oldest_stranger(tmp_path: Path) -> None:
    node = Node(_options(tmp_path, "host"))
    tickets = [node.mesh.admission.admit(f"10.0.0.{i}") for i in range(3)]
    assert all(tickets)
    node.mesh.admission.shed()
    assert tickets[0] is not None and tickets[0].scope.cancel_called
    assert len(node.mesh.admission.pending) == 2
    for ticket in tickets:
        assert ticket is not None
        ticket.release()
        ticket.release()  # idempotent
    assert not node.mesh.admission.pending and not node.mesh.admission.by_address


def test_stats_that_cannot_be_written_do_not_crash_a_finished_game(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    node = Node(_options(tmp_path, "p", stats=tmp_path / "no" / "such" / "dir" / "stats.json"))
    node.conclude(Outcome(0, "result: a draw"))
    assert node.outcome is not None and node.outcome.code == 0
    assert "cannot write the statistics" in caplog.text


# ---------------------------------------------------------------- known peers (item 5)


def test_known_peers_remember_unique_names_and_spot_a_changed_key(tmp_path: Path) -> None:
    path = tmp_path / "config" / "moska-p2p" / "known_peers"
    host, bob, eve = (Identity.generate().public_bytes for _ in range(3))
    bots = [Identity.generate().public_bytes for _ in range(2)]
    known = KnownPeers.load(path)
    players = [("alice", host), ("bob", bob), ("random", bots[0]), ("random", bots[1])]
    assert known.check(host, players) == []
    assert known.remember(host, players) == 2  # "random" names nobody in particular
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    again = KnownPeers.load(path)
    assert again.known(host, "bob") == bob and again.known(host, "random") is None
    assert again.check(host, players) == []
    assert again.remember(host, players) == 0
    [change] = again.check(host, [("alice", host), ("bob", eve)])
    assert change.known == bob and change.now == (eve,)
    text = change.message()
    assert "WARNING" in text and "HAS CHANGED" in text
    assert f"line {change.line} of {path}" in text and "moska trust bob" in text
    assert "moska trust moska-newkey:" in text  # the statement the new key came with
    assert path.read_text().splitlines()[change.line - 1].split()[2] == bob.hex()
    assert again.check(Identity.generate().public_bytes, [("bob", eve)]) == []  # another host
    assert again.check(host, [("bob", eve), ("bob", bob)]) == []  # one of them is bob
    path.chmod(0o666)
    with pytest.raises(KnownPeersError, match="chmod 600"):
        KnownPeers.load(path)


@pytest.mark.trio
async def test_the_host_refuses_a_known_name_with_another_key(tmp_path: Path) -> None:
    known = tmp_path / "known_peers"
    host_echo: list[str] = []
    host = Node(_options(tmp_path, "alice", host_echo, known_peers=known))
    KnownPeers.load(known).remember(host.me, [("alice", host.me), ("bob", Identity.generate()
                                                                  .public_bytes)])  # fmt: skip
    impostor = Node(_options(tmp_path, "bob"))
    with trio.fail_after(15):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)
            outcome = await impostor.join(LOOPBACK, port)
            nursery.cancel_scope.cancel()
    assert outcome.code == EXIT_FAILED
    assert "the host knows the name 'bob' with another key" in outcome.message
    assert any("HAS CHANGED" in line for line in host_echo)


def test_a_joiner_refuses_a_roster_with_a_changed_key(tmp_path: Path) -> None:
    known = tmp_path / "known_peers"
    echo: list[str] = []
    node = Node(_options(tmp_path, "me", echo, known_peers=known))
    node.mesh.port = 7003
    host, bob, eve = Identity.generate(), Identity.generate(), Identity.generate()
    lobby = lobby_id(CONFIG)
    me = Entry.sign(node.identity, lobby, "me", LOOPBACK, 7003)
    first = [Entry.sign(host, lobby, "alice", "", 7001), Entry.sign(bob, lobby, "bob", "h", 1), me]
    node.lobby.check_start(_start(host, first), host.public_bytes, CONFIG)  # learnt
    assert KnownPeers.load(known).known(host.public_bytes, "bob") == bob.public_bytes
    second = [first[0], Entry.sign(eve, lobby, "bob", "h", 1), me]
    with pytest.raises(HandshakeError, match="a known player's key has changed"):
        node.lobby.check_start(_start(host, second), host.public_bytes, CONFIG)
    assert any("HAS CHANGED" in line and "bob" in line for line in echo)


# ---------------------------------------------------------------- --expect (item 5)


@pytest.mark.trio
async def test_join_expect_compares_the_whole_fingerprint(tmp_path: Path) -> None:
    host = Node(_options(tmp_path, "host"))
    fingerprint = host.identity.fingerprint
    wrong = fingerprint[:-1] + ("0" if fingerprint[-1] != "0" else "1")  # 60 bits agree
    with trio.fail_after(15):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)
            echo: list[str] = []
            liar = Node(_options(tmp_path, "j1", echo))
            outcome = await liar.join(LOOPBACK, port, expect=wrong)
            assert outcome.code == EXIT_FAILED
            assert f"the host there is {fingerprint}, not {wrong} (--expect)" in outcome.message
            right = Node(_options(tmp_path, "j2", lobby_wait=60))
            typed = fingerprint.lower().replace("-", " ")
            nursery.start_soon(partial(right.join, LOOPBACK, port, expect=typed))
            lobby = host.lobby.hosting
            assert lobby is not None
            assert await _eventually(lambda: right.me in lobby.joined, 10)
            nursery.cancel_scope.cancel()


runner = CliRunner()


@pytest.mark.parametrize(
    ("expect", "said"),
    [
        ("139E-3940", "32 hex digits"),
        ("139E-3940-E64B-5491-7220-88D9-A0D7-416", "32 hex digits"),
        ("zz", "32 hex digits"),
        ("139E-3940-E64B-5491", "64-bit fingerprint of an older moska"),
    ],
)
def test_join_expect_wants_a_whole_fingerprint_or_key(expect: str, said: str) -> None:
    result = runner.invoke(app, ["join", "127.0.0.1:9", "--bot", "random", "--expect", expect])
    assert result.exit_code == 2
    assert said in " ".join(result.output.split())


def test_a_key_file_others_can_read_is_refused_by_the_commands(tmp_path: Path) -> None:
    path = tmp_path / "me.pem"
    Identity.generate().save(path)
    path.chmod(0o644)
    for command in (["host", "--no-announce"], ["join", "127.0.0.1:9"]):
        result = runner.invoke(app, [*command, "--bot", "random", "--identity", str(path)])
        assert result.exit_code == 2
        assert f"chmod 600 {path}" in result.output


# ---------------------------------------------------------------- decoders (items 6 and 10)

_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(1 << 63), max_value=(1 << 64) - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.binary(max_size=40),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=5)
    ),
    max_leaves=15,
)


def _config_like() -> st.SearchStrategy[object]:
    good = CONFIG.to_wire()
    fields = st.sampled_from([*good, "preset", "extra"])
    return (
        _values
        | st.dictionaries(fields, _values, max_size=7)
        | st.builds(lambda k, v: {**good, k: v}, fields, _values)
        | st.builds(
            lambda k, v: {**good, "options": {k: v}},
            st.sampled_from(["preset", "players", "deck_kill", "Deck", "x" * 50]) | st.text(),
            st.text(max_size=5) | _values,
        )
    )


@given(_config_like())
@settings(max_examples=400)
def test_table_config_from_wire_raises_only_config_error(value: object) -> None:
    try:
        config = TableConfig.from_wire(value)
    except ConfigError:
        return
    assert TableConfig.from_wire(config.to_wire()) == config


@pytest.mark.parametrize(
    "value",
    [None, [], "moska", 7, {**CONFIG.to_wire(), "options": {"preset": "durak"}},
     {**CONFIG.to_wire(), "options": {"players": "2"}}, {**CONFIG.to_wire(), "x": 1},
     {**CONFIG.to_wire(), "options": []}, {**CONFIG.to_wire(), "timeout": float("nan")},
     {**CONFIG.to_wire(), "timeout": True}, {**CONFIG.to_wire(), "nonce": "x" * 32}],
)  # fmt: skip
def test_bad_table_settings_are_a_config_error(value: object) -> None:
    """An option named ``preset`` raised TypeError before."""
    with pytest.raises(ConfigError):
        TableConfig.from_wire(value)


ALICE = Identity.from_seed(bytes([9]) * 32)


@given(st.sampled_from(sorted(k for k in MAX_PAYLOAD_OF if k.startswith("net/"))), _values,
       st.dictionaries(st.sampled_from(["key", "nonce", "name", "config", "table", "proof",
                                        "host", "port", "sig", "have", "reason", "roster"]),
                       _values | st.binary(min_size=32, max_size=32)
                       | st.binary(min_size=64, max_size=64), max_size=8))  # fmt: skip
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_net_messages_raise_only_frame_errors(
    kind: str, value: object, fields: dict[str, object]
) -> None:
    """Arbitrary values and maps, signed by the right key as the right kind (so that the
    checks after the signature run too), then cut and mutated: classify and the roster's entry
    decoder raise FrameError or return a verified message, nothing else."""
    bound = kind[len("net/") :] in BOUND  # signed over a link's id, checked on that link
    link = bytes([7]) * 32 if bound else None
    for obj in (value, {**fields, "key": ALICE.public_bytes}, fields):
        try:
            payload = pack(obj)
            frame = encode_frame(kind, payload, ALICE.sign(kind, (link or b"") + payload))
        except FrameError:
            continue
        for body in (frame[4:], frame[4:-1], frame[4:30]):
            try:
                message = classify(body, link)
            except FrameError:
                continue
            assert message is not None and message.key == ALICE.public_bytes
            for entry in message.body.get("roster", []) if message.kind == START else []:
                with suppress(FrameError):
                    Entry.from_wire(entry)


@given(_values, st.dictionaries(st.text(max_size=8), _values, max_size=14))
@settings(max_examples=300)
def test_announcements_raise_only_frame_errors(value: object, fields: dict[str, object]) -> None:
    from moska_p2p.net.discovery import announcement

    genuine = announcement(ALICE, CONFIG, name="a", port=7, seats=1, seq=1, open=True)
    _, payload, _ = open_frame(genuine[4:])
    base = msgpack.unpackb(payload)
    for obj in (value, {**base, **fields}, {**fields, "moska-table": 1, "key": ALICE.public_bytes}):
        try:
            datagram = signed_frame(ALICE, "beacon", obj)
        except FrameError:
            continue
        with suppress(FrameError):
            parse_announcement(datagram, LOOPBACK)


@given(st.binary(max_size=300))
@settings(max_examples=300)
def test_garbage_on_a_connection_raises_only_frame_errors(data: bytes) -> None:
    bodies = [data, msgpack.packb([JOIN, data, bytes(64)])]
    bodies.append(msgpack.packb(["net/join", data, bytes(64)]))
    for body in bodies:
        with suppress(FrameError):
            classify(body)


async def _raw_join(identity: Identity, port: int, name: str = "raw") -> FrameStream:
    """A joiner by hand: hi, join (with its proof and signed entry), welcome."""
    stream = await trio.open_tcp_stream(LOOPBACK, port)
    fs = FrameStream(stream)
    hi = await fs.receive_net(HI)
    config = TableConfig.from_wire(hi.body["config"])
    lobby = lobby_id(config)
    nonce = secrets.token_bytes(32)
    proof = link_proof(identity, lobby, identity.public_bytes, hi.key, nonce, hi.body["nonce"],
                       DIALER)  # fmt: skip
    entry = Entry.sign(identity, lobby, name, LOOPBACK, 9)
    body = {"nonce": nonce, "table": lobby, "proof": proof, "name": name, "host": LOOPBACK,
            "port": 9, "sig": entry.sig}  # fmt: skip
    await stream.send_all(net_frame(identity, JOIN, body))
    await fs.receive_net("welcome")
    fs.authenticated(link_id(lobby, identity.public_bytes, hi.key, nonce, hi.body["nonce"]))
    return fs


@pytest.mark.trio
async def test_one_key_holds_one_seat_and_one_connection_in_the_lobby(tmp_path: Path) -> None:
    """Authenticated is not unbounded: joining again with the same key closes the older
    connection, so one key cannot pile up lobby connections."""
    host = Node(_options(tmp_path, "host"))
    mallory = Identity.generate()
    with trio.fail_after(15):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)
            streams = [await _raw_join(mallory, port) for _ in range(6)]
            lobby = host.lobby.hosting
            assert lobby is not None
            assert list(lobby.joined) == [mallory.public_bytes]
            for fs in streams[:-1]:
                with trio.fail_after(3):  # told why, then closed by the host
                    with pytest.raises(HandshakeError, match="replaced by a newer join"):
                        await fs.receive_net(START)
                    assert await fs.receive() is None
            assert await _fate(streams[-1].stream, 0.5) == "silent"  # the newest one waits
            for fs in streams:
                await fs.stream.aclose()
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_join_from_a_small_order_key_is_refused(tmp_path: Path) -> None:
    """The issue's universal forgery at the lobby: key 0100..00 and the signature R = the
    neutral point, S = 0, which plain OpenSSL accepts for any bytes. The frame is refused
    before it is read as a join, and no seat is taken."""
    neutral = bytes([1]) + bytes(31)
    forged_signature = neutral + bytes(32)
    host = Node(_options(tmp_path, "host"))
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)
            stream = await trio.open_tcp_stream(LOOPBACK, port)
            fs = FrameStream(stream)
            hi = await fs.receive_net(HI)
            lobby = lobby_id(CONFIG)
            body: dict[str, object] = {"key": neutral, "nonce": bytes(32), "table": lobby}
            body.update(
                name="g", proof=forged_signature, host=LOOPBACK, port=9, sig=forged_signature
            )
            payload = msgpack.packb(body, use_bin_type=True)
            frame = prefixed(msgpack.packb(["net/join", payload, forged_signature]))
            with pytest.raises(FrameError, match="cannot be a player's"):
                classify(frame[4:])
            assert hi.key == host.me
            await stream.send_all(frame)
            with trio.fail_after(3):
                assert await fs.receive() is None  # closed
            lobby_state = host.lobby.hosting
            assert lobby_state is not None and not lobby_state.joined
            await stream.aclose()
            nursery.cancel_scope.cancel()


@given(st.binary(max_size=400) | st.text(max_size=300).map(lambda t: t.encode()))
@settings(max_examples=200, deadline=None)
def test_a_damaged_known_peers_file_never_raises(tmp_path_factory: Any, data: bytes) -> None:
    folder = tmp_path_factory.mktemp("known")
    path = folder / "known_peers"
    path.write_bytes(data)
    path.chmod(0o600)
    known = KnownPeers.load(path)
    host = Identity.from_seed(bytes([4]) * 32).public_bytes
    known.check(host, [("bob", host)])
    known.remember(host, [("bob", host)])
    assert KnownPeers.load(path).known(host, "bob") in (
        host,
        *[r[0] for r in known.records.values()],
    )
