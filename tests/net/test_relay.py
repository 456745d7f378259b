"""The relay alone: its messages and book without sockets, then a relay and clients in one
process on 127.0.0.1 (virtual links carry bytes both ways, end and close; strangers are held
to the caps)."""

from __future__ import annotations

import contextlib

import pytest
import trio

from moska_p2p.crypto.identity import Identity
from moska_p2p.net.relay import RelayServer
from moska_p2p.net.relay_client import RelayClient, RelayUnreachable, VirtualStream
from moska_p2p.net.relay_proto import (
    CHALLENGE,
    DATA,
    ERROR,
    INCOMING_BASE,
    MAX_CHUNK,
    REGISTER,
    Book,
    Bucket,
    Caps,
    RelayDecoder,
    RelayError,
    RoomPass,
    check_register,
    chunks,
    decode,
    encode,
    register_proof,
    registration,
)
from moska_p2p.protocol.frames import pack

ROOM = bytes(range(16))


def _key(n: int) -> bytes:
    return Identity.generate().public_bytes if n < 0 else bytes([n]) * 32


# -- messages --------------------------------------------------------------------------------


def test_messages_round_trip_and_cut_anywhere() -> None:
    frames = [encode(CHALLENGE, bytes(32)), encode(DATA, 7, b"x" * MAX_CHUNK), encode(ERROR, "no")]
    stream = b"".join(frames)
    decoder = RelayDecoder()
    got = []
    for i in range(0, len(stream), 1000):
        got.extend(decoder.feed(stream[i : i + 1000]))
    assert [(m.kind, m.items[0]) for m in got] == [
        (CHALLENGE, bytes(32)),
        (DATA, 7),
        (ERROR, "no"),
    ]
    assert decoder.pending == 0


def _register_rest(version: int) -> list[object]:
    return [bytes(32), bytes(64), version, b"", bytes(32), bytes(64), b""]


@pytest.mark.parametrize(
    ("obj", "why"),
    [
        (["nope"], "unknown relay message"),
        ({"a": 1}, "not a relay message"),
        ([DATA, 1], "wrong items"),
        ([DATA, -1, b"x"], "out of range"),
        ([DATA, 1, b""], "data message of 0 bytes"),
        ([DATA, 1, "text"], "wrong items"),
        ([CHALLENGE, bytes(31)], "not 32 bytes"),
        ([REGISTER, bytes(15), bytes(32), bytes(64)], "relay protocol 2 and this peer an older"),
        ([REGISTER, bytes(15), *_register_rest(2)], "bad room"),
        ([REGISTER, bytes(16), *_register_rest(3)], "protocol 3"),
        (["open", 1, bytes(31)], "bad key size"),
        (["close", 1, "x" * 201], "too long a reason"),
    ],
)
def test_malformed_messages_are_refused(obj: object, why: str) -> None:
    with pytest.raises(RelayError, match=why):
        decode(pack(obj))


def test_oversized_message_is_refused_before_its_body() -> None:
    decoder = RelayDecoder()
    with pytest.raises(RelayError):
        list(decoder.feed((10**6).to_bytes(4, "big")))


def test_register_proof_binds_nonce_room_and_key() -> None:
    me = Identity.generate()
    proof = register_proof(me, bytes(32), ROOM)
    assert check_register(bytes(32), ROOM, me.public_bytes, proof)
    assert not check_register(b"\1" * 32, ROOM, me.public_bytes, proof)
    assert not check_register(bytes(32), bytes(16), me.public_bytes, proof)
    assert not check_register(bytes(32), ROOM, Identity.generate().public_bytes, proof)


def test_chunks_cover_the_data() -> None:
    data = bytes(range(256)) * 200
    parts = list(chunks(data))
    assert b"".join(parts) == data and max(map(len, parts)) == MAX_CHUNK


# -- the book --------------------------------------------------------------------------------


def test_book_joins_two_members_and_forgets_everything() -> None:
    book = Book(Caps())
    a, b = book.connect("1.1.1.1", 0.0), book.connect("2.2.2.2", 0.0)
    assert not isinstance(a, str) and not isinstance(b, str)
    assert book.open(a.id, 1, _key(2), 0.0) == "register first"
    assert book.register(a.id, ROOM, _key(1), 0.0) == 0
    assert book.open(a.id, 1, _key(2), 0.0) == "that key is not at the relay (not yet, or gone)"
    assert book.register(b.id, ROOM, _key(2), 0.0) == 0
    end = book.open(a.id, 1, _key(2), 0.0)
    assert end == (b.id, INCOMING_BASE)
    assert book.open(a.id, 1, _key(2), 0.0) == "that link number is in use"
    assert "from 1 to" in str(book.open(a.id, INCOMING_BASE, _key(2), 0.0))
    assert book.route(b.id, INCOMING_BASE) == (a.id, 1)
    assert book.close(b.id, INCOMING_BASE) == (a.id, 1)
    assert book.route(a.id, 1) is None
    assert book.open(a.id, 2, _key(2), 0.0) == (b.id, INCOMING_BASE + 1)
    # b opens links of its own: its numbers never meet the ones the relay gave it
    assert book.open(b.id, 1, _key(1), 0.0) == (a.id, INCOMING_BASE)
    assert book.route(b.id, 1) == (a.id, INCOMING_BASE)
    assert book.route(b.id, INCOMING_BASE + 1) == (a.id, 2)
    assert sorted(book.disconnect(b.id)) == [(a.id, 2), (a.id, INCOMING_BASE)]
    assert book.route(a.id, 2) is None
    book.disconnect(a.id)
    assert not book.rooms and not book.conns
    assert not book._per_address and not book._rooms_of and not book._connect_rate


def test_book_a_key_registered_again_replaces_the_old_connection() -> None:
    book = Book(Caps())
    old, new = book.connect("1.1.1.1", 0.0), book.connect("1.1.1.1", 0.0)
    assert not isinstance(old, str) and not isinstance(new, str)
    book.register(old.id, ROOM, _key(1), 0.0)
    assert book.register(new.id, ROOM, _key(1), 0.0) == old.id
    book.disconnect(old.id)  # the old one's end does not take the room with it
    assert book.rooms[ROOM].members == {_key(1): new.id}


def test_book_caps_connections_rooms_members_links() -> None:
    caps = Caps(
        connections=6,
        connections_per_address=3,
        connects_per_second=1000.0,
        rooms=2,
        rooms_per_address=1,
        members=2,
        links_per_connection=1,
    )
    book = Book(caps)
    conns = [book.connect("1.1.1.1", 0.0) for _ in range(4)]
    assert conns[3] == "too many connections from this network"
    others = [book.connect(f"2.2.2.{i}", 0.0) for i in range(4)]
    assert others[3] == "the relay is full"
    a, b, c = conns[:3]
    assert not isinstance(a, str) and not isinstance(b, str) and not isinstance(c, str)
    book.register(a.id, ROOM, _key(1), 0.0)
    assert (
        book.register(b.id, bytes(16), _key(2), 0.0) == "too many tables opened from this network"
    )
    book.register(b.id, ROOM, _key(2), 0.0)
    assert book.register(c.id, ROOM, _key(3), 0.0) == "that table is full at the relay"
    d, e = others[0], others[1]
    assert not isinstance(d, str) and not isinstance(e, str)
    book.register(d.id, b"\1" * 16, _key(4), 0.0)
    assert (
        book.register(e.id, b"\2" * 16, _key(5), 0.0) == "the relay has no room for another table"
    )
    assert book.open(a.id, 1, _key(2), 0.0) == (b.id, INCOMING_BASE)
    assert book.open(a.id, 2, _key(2), 0.0) == "too many links on this connection"


def test_book_rate_of_new_connections_per_address() -> None:
    book = Book(Caps(connects_per_second=2.0))
    answers = [book.connect("1.1.1.1", 0.0) for _ in range(5)]
    assert [isinstance(x, str) for x in answers] == [False] * 4 + [True]
    assert not isinstance(book.connect("1.1.1.1", 0.5), str)  # one more earned


def test_book_bytes_rate_member_share_and_idle_rooms() -> None:
    book = Book(Caps(bytes_per_second=1000.0, member_bytes=10_000, idle_room=60.0))
    a = book.connect("1.1.1.1", 0.0)
    assert not isinstance(a, str)
    book.register(a.id, ROOM, _key(1), 0.0)
    assert book.relayed(a.id, 4000, 0.0) == 0.0  # the burst
    assert book.relayed(a.id, 500, 0.0) == pytest.approx(0.5)
    assert "more than its share of the table" in str(book.relayed(a.id, 6000, 100.0))
    assert book.idle_rooms(159.0) == []
    assert book.idle_rooms(161.0) == [ROOM]
    assert book.next_expiry(130.0) == pytest.approx(30.0)


def test_bucket_waits_for_what_it_owes() -> None:
    bucket = Bucket(10.0, 10.0, 0.0)
    assert bucket.take(10, 0.0) == 0.0
    assert bucket.take(5, 0.0) == pytest.approx(0.5)
    assert not bucket.allows(1, 0.0)
    assert bucket.allows(1, 1.0)


# -- a relay and clients in one process ----------------------------------------------------------


async def _relay(nursery: trio.Nursery, caps: Caps | None = None) -> RelayServer:
    server = RelayServer(caps)
    await nursery.start(server.serve, "127.0.0.1", 0)
    return server


async def _client(
    nursery: trio.Nursery, server: RelayServer, me: Identity, got: list[VirtualStream]
) -> RelayClient:
    client = RelayClient(me, "127.0.0.1", server.port, ROOM, got.append, timeout=5.0)
    await nursery.start(client.run)
    assert client.registered.is_set(), client.error
    return client


@pytest.mark.trio
async def test_virtual_link_carries_bytes_both_ways_then_ends() -> None:
    alice, bob = Identity.generate(), Identity.generate()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery)
            inbox: list[VirtualStream] = []
            a = await _client(nursery, server, alice, [])
            await _client(nursery, server, bob, inbox)
            out = await a.open(bob.public_bytes)
            big = bytes(range(256)) * 1000  # several chunks
            await out.send_all(big)
            while not inbox:
                await trio.sleep(0.01)
            back = inbox[0]
            assert back.key == alice.public_bytes
            received = bytearray()
            while len(received) < len(big):
                received += await back.receive_some()
            assert bytes(received) == big
            await back.send_all(b"pong")
            await back.send_eof()
            assert await out.receive_some() == b"pong"
            assert await out.receive_some() == b""
            await out.aclose()
            with pytest.raises(trio.BrokenResourceError):
                while True:
                    await back.receive_some()
            with pytest.raises(RelayUnreachable, match="not at the relay"):
                await a.open(Identity.generate().public_bytes)
            nursery.cancel_scope.cancel()


async def _raw(port: int) -> tuple[trio.SocketStream, RelayDecoder]:
    return await trio.open_tcp_stream("127.0.0.1", port), RelayDecoder()


Said = list[tuple[str, tuple[object, ...]]]


async def _read(stream: trio.SocketStream, decoder: RelayDecoder) -> Said:
    out: Said = []
    while not out:
        data = await stream.receive_some(65536)
        if not data:
            return [("closed", ())]
        out = [(m.kind, m.items) for m in decoder.feed(bytes(data))]
    return out


@pytest.mark.trio
async def test_a_registration_that_does_not_answer_the_challenge_is_refused() -> None:
    me = Identity.generate()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery)
            stream, decoder = await _raw(server.port)
            ((kind, _),) = await _read(stream, decoder)
            assert kind == CHALLENGE
            stale = registration(me, bytes(32), RoomPass(ROOM))  # another connection's nonce
            await stream.send_all(stale)
            answer = await _read(stream, decoder)
            assert answer[0][0] == ERROR and "proof of key" in str(answer[0][1][0])
            assert not server.book.rooms
            await stream.aclose()
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_stranger_that_never_registers_is_cut_off() -> None:
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery, Caps(handshake=0.3))
            stream, decoder = await _raw(server.port)
            await _read(stream, decoder)  # the challenge
            assert (await _read(stream, decoder))[-1][0] == "closed"
            assert not server.book.conns
            await stream.aclose()
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_unregistered_connections_beyond_the_cap_are_closed_at_once() -> None:
    caps = Caps(pending=3, pending_per_address=2, connects_per_second=1000.0)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery, caps)
            held = [await trio.open_tcp_stream("127.0.0.1", server.port) for _ in range(4)]
            while server.refused < 2:
                await trio.sleep(0.01)
            assert len(server.book.conns) == 2
            for stream in held:
                await stream.aclose()
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_an_idle_table_is_closed() -> None:
    me = Identity.generate()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery, Caps(idle_room=0.5))
            stream, decoder = await _raw(server.port)
            ((_, (nonce,)),) = await _read(stream, decoder)
            assert isinstance(nonce, bytes)
            await stream.send_all(registration(me, nonce, RoomPass(ROOM)))
            assert (await _read(stream, decoder))[0][0] == "registered"
            assert len(server.book.rooms) == 1
            assert (await _read(stream, decoder))[-1][0] == "closed"  # idle: the relay hangs up
            assert not server.book.rooms and not server.book.conns
            await stream.aclose()
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_member_that_does_not_read_is_cut_off_and_its_queue_stays_bounded() -> None:
    """A source pumps into a link whose other end never reads its socket: the relay queues at
    most its cap for that end, then cuts it off, and the source's link is closed."""
    caps = Caps(queue_bytes=64 * 1024, stall=0.5, bytes_per_second=1e9)
    sink, source = Identity.generate(), Identity.generate()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery, caps)
            streams = []
            for me in (sink, source):
                stream, decoder = await _raw(server.port)
                ((_, (nonce,)),) = await _read(stream, decoder)
                assert isinstance(nonce, bytes)
                await stream.send_all(registration(me, nonce, RoomPass(ROOM)))
                assert (await _read(stream, decoder))[0][0] == "registered"
                streams.append((stream, decoder))
            (sink_stream, _), (source_stream, source_decoder) = streams
            await source_stream.send_all(encode("open", 1, sink.public_bytes))
            assert (await _read(source_stream, source_decoder))[0][0] == "opened"
            chunk = encode(DATA, 1, bytes(MAX_CHUNK))
            largest = 0

            async def pump() -> None:
                with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                    while True:
                        await source_stream.send_all(chunk)

            nursery.start_soon(pump)
            said: Said = []
            while not any(kind == "close" for kind, _ in said):
                with trio.move_on_after(0.05):
                    said += await _read(source_stream, source_decoder)
                largest = max(largest, server.queued)
            assert ("close", (1, "the other side left the relay")) in said
            assert largest <= caps.queue_bytes + 2 * len(chunk)
            assert sink.public_bytes not in next(iter(server.book.rooms.values())).members
            await sink_stream.aclose()
            await source_stream.aclose()
            nursery.cancel_scope.cancel()
