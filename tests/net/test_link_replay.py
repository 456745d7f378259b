"""A man in the middle replays link messages (``net/sync``, ``net/bye``, ``net/next``) from
one link, table or session into another (PROTOCOL.md §23).

Links are authenticated by their handshake, not encrypted, so anyone on the path (a relay, or a
router on a direct TCP link) sees every signed link message. Each message after the handshake
is signed over the link's id (a hash of the handshake's table id, both keys and both fresh
nonces: ``net/wire.py``), so one recorded on another link fails its signature check on this
one: the link ends with that reason (what dropping it would have done anyway) and the message
has no effect. Before that binding, a replayed ``bye`` made the other side stop redialing, a
replayed ``next`` with ``go = false`` from an earlier session ended this one as if that peer
had said no, and a replayed ``sync`` made a peer resend its frames on every replay.

Real link code, real TCP on 127.0.0.1: ``b`` (the later peer) keeps its link to ``a`` up with
its own redialing (``Mesh.keep``) through :class:`_Path`, an on-path attacker that forwards
whole frames both ways, records them, can withhold some, and can inject any frame; and once
through a real ``moska relay`` (:class:`_ReplayingRelay`) that plays a recorded ``bye`` into
the next virtual link.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
import trio
import trio.testing
from test_link_handshake_and_caps import _eventually, _options, _serving

from moska_p2p.crypto.identity import Identity
from moska_p2p.net.link import Link
from moska_p2p.net.node import Node
from moska_p2p.net.persist import SavedGame
from moska_p2p.net.relay import RelayServer
from moska_p2p.net.relay_client import RELAYED_HOST, RelayClient
from moska_p2p.net.relay_proto import DATA, Conn, Message
from moska_p2p.net.wire import (
    BYE,
    NEXT,
    REFUSE,
    SYNC,
    Entry,
    FrameStream,
    NetMessage,
    classify,
    link_id,
    net_frame,
)
from moska_p2p.protocol.config import TableConfig, lobby_id, table_id
from moska_p2p.protocol.frames import MAX_FRAME, FrameDecoder, FrameError, open_frame, pack
from moska_p2p.protocol.frames import encode_frame as _encode

LOOPBACK = "127.0.0.1"
TO_A, TO_B = "to a", "to b"
NOT_THIS_LINK = "not signed for this link"


class _Session:
    """Just what a link needs of a session, counting what it is asked: each ``sync`` this
    peer sends names a new state (``{key: n}``), and every state another peer's ``sync``
    named is kept, so a replayed one shows as a state asked for twice."""

    seat_of: dict[bytes, int] = {}  # noqa: RUF012
    peers: dict[bytes, object] = {}  # noqa: RUF012 - the roster whose contact clocks the runner reads: none here

    def __init__(self, me: bytes) -> None:
        self.me = me
        self.states = 0
        self.asked: list[dict[bytes, int]] = []

    def sync_state(self) -> dict[bytes, int]:
        self.states += 1
        return {self.me: self.states}

    def frames_after(self, have: dict[bytes, int]) -> list[bytes]:
        self.asked.append(have)
        return []

    def receive(self, frame: bytes, now: float) -> list[Any]:
        return []


class _Conn:
    """One connection through the path: both directions, whole frames, recorded by kind."""

    def __init__(self, down: trio.SocketStream, up: trio.SocketStream, withhold: set[str]):
        self.out = {TO_A: up, TO_B: down}
        self.locks = {TO_A: trio.Lock(), TO_B: trio.Lock()}
        self.recorded: list[tuple[str, str, bytes]] = []  # (direction, kind, frame)
        self.withhold = withhold

    def frames(self, direction: str, kind: str) -> list[bytes]:
        return [f for d, k, f in self.recorded if d == direction and k == "net/" + kind]

    async def pipe(self, direction: str) -> None:
        src = self.out[TO_B if direction == TO_A else TO_A]
        dst = self.out[direction]
        decoder = FrameDecoder(MAX_FRAME)
        with suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            while data := await src.receive_some(65536):
                decoder.push(bytes(data))
                while (body := decoder.pop()) is not None:
                    frame = len(body).to_bytes(4, "big") + body
                    kind = open_frame(body)[0]
                    self.recorded.append((direction, kind, frame))
                    if kind not in self.withhold:
                        async with self.locks[direction]:
                            await dst.send_all(frame)
            await dst.send_eof()

    async def cut(self) -> None:
        """Drop this connection, both ways (as a relay that drops a link)."""
        for stream in self.out.values():
            await trio.aclose_forcefully(stream)

    async def inject(self, direction: str, frame: bytes) -> None:
        """Put ``frame`` on the wire ``direction``, between two whole frames."""
        async with self.locks[direction]:
            await self.out[direction].send_all(frame)


class _Path:
    """An on-path attacker between ``b`` and ``a``'s port (see the module docstring)."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.conns: list[_Conn] = []
        self.withhold: set[str] = set()  # frame kinds it keeps to itself
        self.port = 0

    async def handle(self, down: trio.SocketStream) -> None:
        up = await trio.open_tcp_stream(LOOPBACK, self.upstream)
        conn = _Conn(down, up, self.withhold)
        self.conns.append(conn)
        async with down, up, trio.open_nursery() as pipes:
            pipes.start_soon(conn.pipe, TO_A)
            pipes.start_soon(conn.pipe, TO_B)


def _pair(
    tmp_path: Path, a_id: Identity, b_id: Identity, path_port: int, tag: str = "",
    host: str = LOOPBACK,
) -> tuple[Node, Node]:  # fmt: skip
    """Two nodes of a fresh table (``a`` earlier, ``b`` later, which reaches ``a`` at the
    path's port on ``host``), each with the saved game it would have after the start."""
    a = Node(_options(tmp_path, f"a{tag}", identity=a_id))
    b = Node(_options(tmp_path, f"b{tag}", identity=b_id))
    config = TableConfig("moska", 2, secrets.token_bytes(32), {}, 10.0)
    lobby = lobby_id(config)
    roster = (Entry.sign(a_id, lobby, "a", "", 1), Entry.sign(b_id, lobby, "b", LOOPBACK, 2))
    for index, node in enumerate((a, b)):
        address = (host, path_port) if index else None
        node.runner.saved = SavedGame(tmp_path / f"{tag}{index}.moska", bytes(32), config, roster,
                               index, "x", address)  # fmt: skip
        node.runner.table_id = table_id(config, [e.key for e in roster])
        node.runner.session = _Session(node.me)  # type: ignore[assignment]
        node.ready.set()
    return a, b


@asynccontextmanager
async def _linked(a: Node, b: Node, path: _Path) -> AsyncIterator[trio.Nursery]:
    """``a`` serving, the path in front of it, and ``b`` keeping its link to ``a`` up."""
    async with _serving(a) as port, trio.open_nursery() as nursery:
        path.upstream = port
        b._nursery = b.mesh.nursery = b.runner.nursery = nursery
        nursery.start_soon(b.mesh.keep, 0, None)
        yield nursery
        b.closing.set()
        nursery.cancel_scope.cancel()


async def _path_listening(nursery: trio.Nursery) -> _Path:
    path = _Path(0)
    listeners = await trio.open_tcp_listeners(0, host=LOOPBACK)
    path.port = listeners[0].socket.getsockname()[1]
    nursery.start_soon(trio.serve_listeners, path.handle, listeners)
    return path


async def _wait_for(check: Callable[[], bool], what: str) -> None:
    assert await _eventually(check, 10.0), what


def _vote(node: Node, game: int, go: bool) -> None:
    """``node``'s answer to "the next game?" as :mod:`moska_p2p.net.sessions` casts it: kept
    for the links that come up later and sent on every link up now."""
    node.sessions.cast_vote(game, go)


@pytest.mark.trio
async def test_a_bye_replayed_into_a_later_link_does_not_stop_the_redialing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The path keeps ``a``'s ``bye`` of an earlier link and plays it into the next one:
    ``b`` would take ``a`` for gone and never redial it after that link drops."""
    caplog.set_level(logging.INFO, "moska_p2p.net")
    with trio.fail_after(40):
        async with trio.open_nursery() as outer:
            path = await _path_listening(outer)
            a, b = _pair(tmp_path, Identity.generate(), Identity.generate(), path.port)
            async with _linked(a, b, path):
                await _wait_for(lambda: b.me in a.links and a.me in b.links, "no first link")
                assert a.links[b.me].stream.link == b.links[a.me].stream.link  # both ends agree
                path.withhold.add("net/bye")  # recorded, never delivered
                a.links[b.me].finish(a.runner.bye())
                await _wait_for(lambda: bool(path.conns[0].frames(TO_B, BYE)), "no bye")
                bye = path.conns[0].frames(TO_B, BYE)[0]
                await _wait_for(lambda: len(path.conns) >= 2 and a.me in b.links, "no redial")
                await path.conns[1].inject(TO_B, bye)
                await _wait_for(
                    lambda: a.me in b.gone or NOT_THIS_LINK in caplog.text, "nothing happened"
                )
                assert a.me not in b.gone, "b took a bye from another link: it stops redialing"
                await _wait_for(lambda: len(path.conns) >= 3 and a.me in b.links, "no redial")
            outer.cancel_scope.cancel()
    assert f"a bye message {NOT_THIS_LINK}" in caplog.text


@pytest.mark.trio
async def test_a_no_to_the_next_game_replayed_from_another_session_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The same two players, two sessions: ``a`` said no after game 1 of the first; the
    path plays that ``next`` into the second, where it would end the session as if ``a``
    had said no (dropping the vote would have ended it as a timeout)."""
    caplog.set_level(logging.INFO, "moska_p2p.net")
    a_id, b_id = Identity.generate(), Identity.generate()
    with trio.fail_after(40):
        async with trio.open_nursery() as outer:
            path = await _path_listening(outer)
            a1, b1 = _pair(tmp_path, a_id, b_id, path.port, "s1")
            async with _linked(a1, b1, path):
                await _wait_for(lambda: a_id.public_bytes in b1.links, "no first link")
                _vote(a1, 1, False)
                await _wait_for(lambda: (1, a_id.public_bytes) in b1.sessions.votes, "no vote")
            no = path.conns[0].frames(TO_B, NEXT)[0]
            a2, b2 = _pair(tmp_path, a_id, b_id, path.port, "s2")
            async with _linked(a2, b2, path):
                await _wait_for(lambda: a_id.public_bytes in b2.links, "no second link")
                await path.conns[-1].inject(TO_B, no)
                await _wait_for(
                    lambda: bool(b2.sessions.votes) or NOT_THIS_LINK in caplog.text,
                    "nothing happened",
                )
                assert b2.sessions.votes == {}, "b counted a vote of another session"
            outer.cancel_scope.cancel()
    assert f"a next message {NOT_THIS_LINK}" in caplog.text


@pytest.mark.trio
async def test_a_sync_replayed_into_a_later_link_is_refused(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The path records ``b``'s ``sync`` of one link and plays it into the next: ``a`` would
    resend everything after that stale state, once per replay."""
    caplog.set_level(logging.INFO, "moska_p2p.net")
    with trio.fail_after(40):
        async with trio.open_nursery() as outer:
            path = await _path_listening(outer)
            a, b = _pair(tmp_path, Identity.generate(), Identity.generate(), path.port)
            asked: list[dict[bytes, int]] = a.session.asked  # type: ignore[union-attr]
            async with _linked(a, b, path):
                await _wait_for(lambda: len(asked) == 1, "no first sync")
                sync = path.conns[0].frames(TO_A, SYNC)[0]
                await path.conns[0].cut()  # the path drops the first link
                await _wait_for(lambda: len(path.conns) >= 2 and len(asked) == 2, "no redial")
                await path.conns[1].inject(TO_A, sync)
                await _wait_for(
                    lambda: len(asked) >= 3 or NOT_THIS_LINK in caplog.text, "nothing happened"
                )
                assert asked[0] not in asked[1:], "a answered the same sync twice"
            outer.cancel_scope.cancel()
    assert f"a sync message {NOT_THIS_LINK}" in caplog.text


class _ReplayingRelay(RelayServer):
    """A real relay that withholds ``a``'s ``bye`` (a chunk that is that frame alone) and,
    on the next virtual link, plays it in place of ``a``'s first frame there (its
    ``sync``)."""

    def __init__(self, a: bytes) -> None:
        super().__init__()
        self.a = a
        self.bye: bytes | None = None
        self.played = False

    async def _handle(self, conn: Conn, message: Message) -> None:
        if message.kind == DATA and conn.key == self.a:
            payload = message.items[1]
            kind = _whole_frame_kind(payload)
            if kind == "net/bye" and self.bye is None:
                self.bye = payload
                return  # withheld
            if kind == "net/sync" and self.bye is not None and not self.played:
                self.played = True
                message = Message(DATA, (message.items[0], self.bye))
        await super()._handle(conn, message)


def _whole_frame_kind(payload: bytes) -> str | None:
    """The kind of the frame a data chunk holds alone, else None (signature unchecked)."""
    if len(payload) < 4 or len(payload) != 4 + int.from_bytes(payload[:4], "big"):
        return None
    try:
        return open_frame(payload[4:])[0]
    except FrameError:
        return None


@pytest.mark.trio
async def test_a_relay_cannot_replay_a_bye_into_the_next_virtual_link(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "moska_p2p.net")
    a_id = Identity.generate()
    a, b = _pair(tmp_path, a_id, Identity.generate(), 1, host=RELAYED_HOST)
    with trio.fail_after(40):
        async with trio.open_nursery() as nursery:
            relay = _ReplayingRelay(a.me)
            await nursery.start(relay.serve, LOOPBACK, 0)
            for node in (a, b):
                node._nursery = node.mesh.nursery = node.runner.nursery = nursery
                client = RelayClient(
                    node.identity, LOOPBACK, relay.port, a.table_id[:16], node.mesh.relayed_in
                )
                node.mesh.relay_client = client
                await nursery.start(client.run)
                assert client.registered.is_set(), client.error
            nursery.start_soon(b.mesh.keep, 0, None)
            await _wait_for(lambda: b.me in a.links and a.me in b.links, "no first link")
            first = b.links[a.me]
            a.links[b.me].finish(a.runner.bye())
            await _wait_for(lambda: relay.played, "the relay did not replay the bye")
            await _wait_for(
                lambda: a.me in b.gone or NOT_THIS_LINK in caplog.text, "nothing happened"
            )
            assert a.me not in b.gone, "b took a bye from another link: it stops redialing"
            await _wait_for(
                lambda: b.links.get(a.me) not in (None, first) and NOT_THIS_LINK in caplog.text,
                "b did not redial",
            )
            b.closing.set()
            nursery.cancel_scope.cancel()
    assert f"a bye message {NOT_THIS_LINK}" in caplog.text


# ------------------------------------------------------------------ the binding, unit by unit


ALICE = Identity.from_seed(bytes([1]) * 32)
BOB = Identity.from_seed(bytes([2]) * 32)


def _parts(table: bytes = bytes(32), dn: bytes = bytes([3]) * 32) -> tuple[bytes, ...]:
    return (table, ALICE.public_bytes, BOB.public_bytes, dn, bytes([4]) * 32)


def test_a_link_id_names_every_part_of_its_handshake() -> None:
    base = _parts()
    ids = {link_id(*base)}
    for at in range(5):
        changed = list(base)
        changed[at] = bytes([9]) * 32 if at not in (1, 2) else Identity.generate().public_bytes
        ids.add(link_id(*changed))
    assert len(ids) == 6
    swapped = (base[0], base[2], base[1], base[4], base[3])  # the roles are part of it
    assert link_id(*swapped) not in ids
    with pytest.raises(ValueError, match="32-byte"):
        link_id(b"short", *base[1:])


@pytest.mark.parametrize("kind", [SYNC, BYE, NEXT, REFUSE])
def test_a_link_message_verifies_on_its_own_link_only(kind: str) -> None:
    body: dict[str, Any] = {
        SYNC: {"have": [[ALICE.public_bytes, 2]]},
        BYE: {"reason": "the game is over"},
        NEXT: {"game": 1, "go": False},
        REFUSE: {"reason": "no"},
    }[kind]
    mine, other = link_id(*_parts()), link_id(*_parts(dn=bytes([5]) * 32))
    another_table = link_id(*_parts(table=bytes([6]) * 32))
    frame = net_frame(ALICE, kind, body, link=mine)
    assert classify(frame[4:], mine) == NetMessage(kind, ALICE.public_bytes, body)
    for wrong in (other, another_table):
        with pytest.raises(FrameError, match=f"a {kind} message {NOT_THIS_LINK}"):
            classify(frame[4:], wrong)
    if kind != REFUSE:  # a refuse before the handshake is the one unbound link message
        with pytest.raises(FrameError, match="before the link is authenticated"):
            classify(frame[4:])
        with pytest.raises(ValueError, match="bound to a link"):
            net_frame(ALICE, kind, body)
    unbound = net_frame(ALICE, REFUSE, {"reason": "no"})
    with pytest.raises(FrameError, match=NOT_THIS_LINK):
        classify(unbound[4:], mine)  # a refuse recorded before some handshake


def test_each_kind_signs_apart_so_one_cannot_pass_for_another() -> None:
    """A ``bye`` and a ``refuse`` carry the same fields: the signature's kind (its domain
    separation) tells them apart on one link too."""
    mine = link_id(*_parts())
    _, payload, signature = open_frame(net_frame(ALICE, BYE, {"reason": "x"}, link=mine)[4:])
    relabelled = _encode("net/refuse", payload, signature)
    with pytest.raises(FrameError, match=NOT_THIS_LINK):
        classify(relabelled[4:], mine)
    plain = _encode("net/bye", payload, ALICE.sign("net/bye", payload))  # over no link
    with pytest.raises(FrameError, match=NOT_THIS_LINK):
        classify(plain[4:], mine)
    assert pack({"key": ALICE.public_bytes, "reason": "x"}) == payload


class _Owner:
    send_timeout = 5.0

    def __init__(self, identity: Identity) -> None:
        self.identity = identity
        self.net: list[NetMessage] = []

    def on_frame(self, frame: bytes, source: bytes) -> None:
        pass

    def on_net(self, link: Link, message: NetMessage) -> None:
        self.net.append(message)


def _authenticated(stream: trio.abc.HalfCloseableStream, link: bytes) -> FrameStream:
    fs = FrameStream(stream)
    fs.authenticated(link)
    return fs


@pytest.mark.trio
async def test_a_link_ends_on_a_message_of_another_link_and_hands_it_to_nobody() -> None:
    first, second = link_id(*_parts()), link_id(*_parts(dn=bytes([7]) * 32))
    recorded = net_frame(BOB, BYE, {"reason": "the game is over"}, link=first)
    a, b = trio.testing.memory_stream_pair()
    owner = _Owner(ALICE)
    link = Link(owner, BOB.public_bytes, _authenticated(a, second))
    sender = Link(_Owner(BOB), ALICE.public_bytes, _authenticated(b, second))
    sender.enqueue(net_frame(BOB, SYNC, {"have": []}, link=second))
    sender.enqueue(recorded)
    broke: list[str] = []
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sender.run)
            try:
                await link.run()
            except* FrameError as group:
                broke = [str(e) for e in group.exceptions]
            nursery.cancel_scope.cancel()
    assert [m.kind for m in owner.net] == [SYNC]
    assert broke == [f"a bye message {NOT_THIS_LINK} (one recorded on another link, table or"
                     " session, or forged)"]  # fmt: skip
