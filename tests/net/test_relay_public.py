"""A relay for the public: caps per source network, rooms that admit only holders of the
invite (a ticket the relay cannot make), the host's signed roster, a byte share per member, an
idle limit, a club's private relay, and a clear word to peers and relays of another relay
protocol. The book without sockets, then a relay and clients in one process on 127.0.0.0/8
(strangers bind addresses of 127.0.1.0/24)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from moska_p2p.crypto.identity import Identity
from moska_p2p.net import relay_client
from moska_p2p.net.relay import RelayServer
from moska_p2p.net.relay_client import RelayClient, RelayUnreachable, VirtualStream
from moska_p2p.net.relay_proto import (
    CHALLENGE,
    ERROR,
    OLD_RELAY_SAYS,
    REGISTERED,
    Book,
    Caps,
    RelayDecoder,
    RoomPass,
    encode,
    network_of,
    register_proof,
    registration,
    room_name,
)

TABLE = bytes(range(16))


def _key(n: int) -> bytes:
    return bytes([n]) * 32


# -- the book --------------------------------------------------------------------------------


def test_an_ipv6_64_is_one_network_an_ipv4_address_is_one() -> None:
    assert network_of("2001:db8:1:2::1") == network_of("2001:db8:1:2:ffff::9") == (
        "2001:db8:1:2::/64"
    )
    assert network_of("2001:db8:1:3::1") != network_of("2001:db8:1:2::1")
    assert network_of("192.0.2.1") != network_of("192.0.2.2")
    assert network_of("::ffff:192.0.2.1") == network_of("192.0.2.1") == "192.0.2.1"
    assert network_of("fe80::1%eth0") == "fe80::/64"
    assert network_of("?") == "?"


def test_book_counts_the_addresses_of_one_ipv6_64_as_one() -> None:
    book = Book(Caps(connections_per_address=2, connects_per_second=1000.0))
    answers = [book.connect(f"2001:db8:0:7::{i:x}", 0.0) for i in range(1, 4)]
    assert answers[2] == "too many connections from this network"
    assert not isinstance(book.connect("2001:db8:0:8::1", 0.0), str)


def test_book_a_256_address_stranger_leaves_room_for_a_table() -> None:
    """The default caps per network, times 256 networks, stay under the caps in all."""
    caps = Caps()
    book = Book(caps)
    for net in range(256):
        for slot in range(caps.connections_per_address + 1):
            conn = book.connect(f"10.0.{net}.1", float(slot))
            if isinstance(conn, str):
                continue
            book.register(conn.id, bytes([net, slot]) * 8, _key(1), 0.0)
    host = book.connect("192.0.2.1", 10.0)
    assert not isinstance(host, str)
    assert book.register(host.id, TABLE, _key(2), 10.0) == 0


def test_book_the_roster_makes_everyone_else_a_guest_of_the_host() -> None:
    caps = Caps(guests=1, connects_per_second=1000.0)
    book = Book(caps)
    name = room_name(TABLE, _key(1), _key(9))
    conns = {}
    for n, address in ((1, "1.1.1.1"), (2, "2.2.2.2"), (3, "3.3.3.3"), (4, "4.4.4.4")):
        conn = book.connect(address, 0.0)
        assert not isinstance(conn, str)
        conns[n] = conn
        assert book.register(conn.id, name, _key(n), 0.0, owner=_key(1), lock=_key(9)) == 0
    # the roster: the host (1) and bob (2); 3 and 4 turn guests, and one guest is too many
    assert book.admit_only(name, [_key(1), _key(2)]) == [conns[4].id]
    assert book.open(conns[3].id, 1, _key(1), 0.0) == (conns[1].id, 2**30)
    assert "links to its host alone" in str(book.open(conns[3].id, 2, _key(2), 0.0))
    assert "links to its host alone" in str(book.open(conns[2].id, 1, _key(3), 0.0))
    book.disconnect(conns[4].id)
    late = book.connect("5.5.5.5", 0.0)
    assert not isinstance(late, str)
    assert "full at the relay" in str(book.register(late.id, name, _key(5), 0.0))
    # a player of the roster always gets in (here: bob again, restarted)
    again = book.connect("6.6.6.6", 0.0)
    assert not isinstance(again, str)
    assert book.register(again.id, name, _key(2), 0.0) == conns[2].id


def test_book_one_network_cannot_fill_a_room_before_its_roster() -> None:
    caps = Caps(members=4, members_per_address=2, connects_per_second=1000.0)
    book = Book(caps)
    name = room_name(TABLE, _key(1), _key(9))
    answers = []
    for n in range(1, 5):
        conn = book.connect("198.51.100.7", 0.0)
        assert not isinstance(conn, str)
        answers.append(book.register(conn.id, name, _key(n), 0.0, owner=_key(1), lock=_key(9)))
    # the owner counts for nothing; two more from one network, then no more
    assert answers[:3] == [0, 0, 0]
    assert "too many of this network's keys" in str(answers[3])
    other = book.connect("203.0.113.5", 0.0)
    assert not isinstance(other, str)
    assert book.register(other.id, name, _key(7), 0.0) == 0


def test_book_a_member_over_its_share_is_cut_off_and_the_room_goes_on() -> None:
    book = Book(Caps(member_bytes=1000, bytes_per_second=1e9))
    a, b = book.connect("1.1.1.1", 0.0), book.connect("2.2.2.2", 0.0)
    assert not isinstance(a, str) and not isinstance(b, str)
    book.register(a.id, TABLE, _key(1), 0.0)
    book.register(b.id, TABLE, _key(2), 0.0)
    assert book.relayed(a.id, 900, 0.0) == 0.0
    assert "more than its share" in str(book.relayed(a.id, 200, 0.0))
    assert book.relayed(b.id, 900, 0.0) == 0.0  # b's share is its own
    book.disconnect(a.id)
    again = book.connect("1.1.1.1", 1.0)
    assert not isinstance(again, str)
    book.register(again.id, TABLE, _key(1), 1.0)
    assert "more than its share" in str(book.relayed(again.id, 1, 1.0))  # a reconnection too


def test_book_a_silent_registered_connection_expires() -> None:
    book = Book(Caps(idle_connection=30.0))
    a = book.connect("1.1.1.1", 0.0)
    assert not isinstance(a, str)
    assert book.idle_connections(100.0) == []  # not registered: the handshake's deadline
    book.register(a.id, TABLE, _key(1), 0.0)
    book.touch(a.id, 20.0)
    assert book.idle_connections(49.0) == []
    assert book.idle_connections(51.0) == [a.id]
    assert book.next_expiry(40.0) == pytest.approx(10.0)


def test_a_ticket_binds_the_nonce_the_room_and_the_key() -> None:
    room = RoomPass.new(TABLE * 2, _key(1))
    assert RoomPass.parse(bytes(room)) == room and len(bytes(room)) == 64
    assert RoomPass.parse(TABLE) == RoomPass(TABLE)
    with pytest.raises(ValueError, match="16 or 64 bytes"):
        RoomPass.parse(bytes(20))
    from moska_p2p.net.relay_proto import check_ticket

    lock = room.lock().public_bytes
    ticket = room.ticket(bytes(32), _key(2))
    assert check_ticket(bytes(32), TABLE, _key(2), lock, ticket)
    assert not check_ticket(bytes(32), TABLE, _key(3), lock, ticket)
    assert not check_ticket(b"\1" * 32, TABLE, _key(2), lock, ticket)
    other = RoomPass(TABLE, b"\7" * 16, _key(1))
    assert other.lock().public_bytes != lock  # the secret makes the lock


# -- a relay and clients in one process --------------------------------------------------------


async def _relay(nursery: trio.Nursery, caps: Caps | None = None) -> RelayServer:
    server = RelayServer(caps)
    await nursery.start(server.serve, "127.0.0.1", 0)
    return server


async def _client(
    nursery: trio.Nursery,
    server: RelayServer,
    me: Identity,
    room: RoomPass,
    got: list[VirtualStream] | None = None,
    token: str = "",
) -> RelayClient:
    inbox: list[VirtualStream] = [] if got is None else got
    client = RelayClient(
        me, "127.0.0.1", server.port, bytes(room), inbox.append, timeout=3.0, token=token
    )
    await nursery.start(client.run)
    return client


async def _said(stream: trio.SocketStream, decoder: RelayDecoder) -> list[tuple[str, tuple]]:
    while True:
        data = await stream.receive_some(65536)
        if not data:
            return [("closed", ())]
        said = [(m.kind, m.items) for m in decoder.feed(bytes(data))]
        if said:
            return said


@pytest.mark.trio
async def test_only_holders_of_the_invite_reach_the_room() -> None:
    host, bob, stranger = Identity.generate(), Identity.generate(), Identity.generate()
    room = RoomPass.new(TABLE * 2, host.public_bytes)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery)
            inbox: list[VirtualStream] = []
            await _client(nursery, server, host, room, inbox)
            joined = await _client(nursery, server, bob, room)
            assert joined.registered.is_set(), joined.error
            # a stranger who knows the table and the host (as the relay does) but not the
            # invite's secret lands in a room of its own, where the host is not
            guess = RoomPass(room.table, bytes(16), room.owner)
            outsider = await _client(nursery, server, stranger, guess)
            with pytest.raises(RelayUnreachable, match="not at the relay"):
                await outsider.open(host.public_bytes)
            link = await joined.open(host.public_bytes)
            await link.send_all(b"hello")
            while not inbox:
                await trio.sleep(0.01)
            assert await inbox[0].receive_some() == b"hello"
            # a ticket that is not the lock's signature is refused outright
            stream = await trio.open_tcp_stream("127.0.0.1", server.port)
            decoder = RelayDecoder()
            ((kind, (nonce,)),) = await _said(stream, decoder)
            assert kind == CHALLENGE and isinstance(nonce, bytes)
            lock = room.lock().public_bytes
            forged = stranger.sign("net/relay-ticket", nonce + room.table + stranger.public_bytes)
            proof = register_proof(stranger, nonce, room.table, room.owner + lock)
            key = stranger.public_bytes
            await stream.send_all(
                encode("register", room.table, key, proof, 2, room.owner, lock, forged, b"")
            )
            answer = await _said(stream, decoder)
            assert answer[0][0] == ERROR and "ticket" in str(answer[0][1][0])
            await stream.aclose()
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_the_hosts_roster_keeps_invite_holders_off_the_seats() -> None:
    """A spectator (or anyone with the invite) that registered keys cannot take a player's
    place once the host signed the roster, and cannot link to a player."""
    host, bob, snoop = Identity.generate(), Identity.generate(), Identity.generate()
    room = RoomPass.new(TABLE * 2, host.public_bytes)
    caps = Caps(guests=2)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery, caps)
            hosting = await _client(nursery, server, host, room)
            bobs = await _client(nursery, server, bob, room)
            spy = await _client(nursery, server, snoop, room)
            assert bobs.registered.is_set() and spy.registered.is_set()
            squatters = [Identity.generate() for _ in range(3)]
            for squatter in squatters:
                await _client(nursery, server, squatter, room)
            hosting.admit_only([host.public_bytes, bob.public_bytes])
            name = room_name(room.table, room.owner, room.lock().public_bytes)
            for _ in range(300):
                in_room = server.book.rooms[name]
                if in_room.roster is not None and len(in_room.members) <= 4:
                    break
                await trio.sleep(0.01)
            assert in_room.roster == {host.public_bytes, bob.public_bytes}
            assert len(in_room.members) == 4  # host, bob and two guests
            assert host.public_bytes in in_room.members and bob.public_bytes in in_room.members
            assert snoop.public_bytes in in_room.members  # the first guests stay
            with pytest.raises(RelayUnreachable, match="host alone"):
                await spy.open(bob.public_bytes)
            await spy.open(host.public_bytes)  # a spectator watches the host
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_flooding_member_is_cut_off_and_the_others_go_on() -> None:
    host, bob, carol = Identity.generate(), Identity.generate(), Identity.generate()
    room = RoomPass.new(TABLE * 2, host.public_bytes)
    caps = Caps(member_bytes=200_000, bytes_per_second=1e9)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery, caps)
            host_inbox: list[VirtualStream] = []
            await _client(nursery, server, host, room, host_inbox)
            flooder = await _client(nursery, server, bob, room)
            honest = await _client(nursery, server, carol, room)
            link = await flooder.open(host.public_bytes)
            with pytest.raises((trio.BrokenResourceError, trio.ClosedResourceError)):
                for _ in range(100):
                    await link.send_all(bytes(16 * 1024))
                    await trio.sleep(0.001)
            while flooder.registered.is_set():
                await trio.sleep(0.01)
            assert "more than its share" in flooder.error
            mine = await honest.open(host.public_bytes)
            await mine.send_all(b"still here")
            while len(host_inbox) < 2:
                await trio.sleep(0.01)
            assert await host_inbox[-1].receive_some() == b"still here"
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_silent_peer_is_cut_off_and_one_that_pings_stays(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    me, mute = Identity.generate(), Identity.generate()
    room = RoomPass.new(TABLE * 2, me.public_bytes)
    monkeypatch.setattr(relay_client, "PING_EVERY", 0.2)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery, Caps(idle_connection=1.0))
            pinging = await _client(nursery, server, me, room)
            stream = await trio.open_tcp_stream("127.0.0.1", server.port)
            decoder = RelayDecoder()
            ((_, (nonce,)),) = await _said(stream, decoder)
            assert isinstance(nonce, bytes)
            await stream.send_all(registration(mute, nonce, room))
            assert (await _said(stream, decoder))[0][0] == REGISTERED
            said = await _said(stream, decoder)  # then nothing from us for a second
            assert said[0][0] == ERROR and "silent for 1 s" in str(said[0][1][0])
            assert (await _said(stream, decoder))[-1][0] == "closed"
            assert pinging.registered.is_set()
            await stream.aclose()
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_a_private_relay_lets_only_holders_of_its_token_open_tables() -> None:
    host, bob, other = Identity.generate(), Identity.generate(), Identity.generate()
    room = RoomPass.new(TABLE * 2, host.public_bytes)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery, Caps(token="our club"))
            refused = await _client(nursery, server, other, RoomPass.new(TABLE, other.public_bytes))
            assert not refused.registered.is_set()
            assert "private relay" in refused.error
            wrong = await _client(nursery, server, host, room, token="not the club")
            assert not wrong.registered.is_set()
            hosting = await _client(nursery, server, host, room, token="our club")
            assert hosting.registered.is_set(), hosting.error
            joining = await _client(nursery, server, bob, room)  # a joiner needs the invite only
            assert joining.registered.is_set(), joining.error
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_an_old_peer_and_an_old_relay_are_told_what_to_update() -> None:
    me = Identity.generate()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery)
            stream = await trio.open_tcp_stream("127.0.0.1", server.port)
            decoder = RelayDecoder()
            ((_, (nonce,)),) = await _said(stream, decoder)
            assert isinstance(nonce, bytes)
            old = encode("register", TABLE, me.public_bytes, register_proof(me, nonce, TABLE))
            await stream.send_all(old)
            answer = await _said(stream, decoder)
            assert answer[0][0] == ERROR and "update moska on this peer" in str(answer[0][1][0])
            await stream.aclose()

            async def old_relay(peer: trio.SocketStream) -> None:
                await peer.send_all(encode(CHALLENGE, bytes(32)))
                await peer.receive_some(65536)
                await peer.send_all(encode(ERROR, OLD_RELAY_SAYS))
                await trio.sleep(1)

            listeners = await nursery.start(
                lambda task_status: trio.serve_tcp(
                    old_relay, 0, host="127.0.0.1", task_status=task_status
                )
            )
            port = listeners[0].socket.getsockname()[1]
            client = RelayClient(me, "127.0.0.1", port, TABLE, lambda _: None, timeout=3.0)
            await nursery.start(client.run)
            assert "the relay runs an older moska" in client.error
            nursery.cancel_scope.cancel()


@pytest.mark.trio
async def test_strangers_holding_every_pending_place_do_not_keep_a_peer_out() -> None:
    """Silent connections from 127.0.1.1-127.0.1.40 fill the places of unregistered
    connections; a real peer still registers, the oldest stranger making way."""
    me = Identity.generate()
    room = RoomPass.new(TABLE * 2, me.public_bytes)
    caps = Caps(pending=16, pending_per_address=1)
    held: list[trio.SocketStream] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            server = await _relay(nursery, caps)
            for n in range(1, 41):
                try:
                    held.append(
                        await trio.open_tcp_stream(
                            "127.0.0.1", server.port, local_address=f"127.0.1.{n}"
                        )
                    )
                except OSError:
                    pytest.skip("this machine cannot bind 127.0.1.x")
            while len(server.admission.pending) < caps.pending:
                await trio.sleep(0.01)
            client = await _client(nursery, server, me, room)
            assert client.registered.is_set(), client.error
            for stream in held:
                await stream.aclose()
            nursery.cancel_scope.cancel()


# -- a peer's answers to sync ------------------------------------------------------------------


def test_sync_answers_are_bounded_and_rate_limited_per_asker() -> None:
    """A game's worth of frames goes to a peer that catches up; the same request again and
    again gets only what the asker's budget earned meanwhile, and another asker has its own."""
    from moska_p2p.net.sync_answers import BURST, MAX_FRAMES, RATE, SyncAnswers

    answers = SyncAnswers()
    game = [bytes(400)] * 600  # 240 KB: a long game
    first = list(answers.answer(_key(1), game, 0.0))
    assert len(first) == MAX_FRAMES  # one answer is bounded; the asker asks for the rest
    sent = sum(map(len, first))
    for tick in range(1, 101):  # a flood of syncs, 10 a second for 10 s
        sent += sum(map(len, answers.answer(_key(1), game, tick / 10)))
    assert sent <= BURST + RATE * 10 + 400
    assert sent < 100 * MAX_FRAMES * 400 / 10  # a tenth of what 100 answers in full would be
    assert len(list(answers.answer(_key(2), game, 10.0))) == MAX_FRAMES


def test_a_peer_answers_a_flood_of_syncs_from_its_budget(tmp_path: Path) -> None:
    """A member sends the same ``sync`` again and again: the peer sends the game once (and a
    trickle), not once per request."""
    from moska_p2p.bots.loader import load_bot
    from moska_p2p.net.node import Node, NodeOptions
    from moska_p2p.net.sync_answers import BURST
    from moska_p2p.net.wire import SYNC, NetMessage
    from moska_p2p.table.networked import BotAtTable

    game = [bytes(1000)] * 400  # 400 KB: a long game

    class Session:
        def frames_after(self, have: dict[bytes, int]) -> list[bytes]:
            return game

    class Link:
        key = _key(7)
        sent = 0

        def enqueue(self, frame: bytes) -> None:
            Link.sent += len(frame)

    node = Node(
        NodeOptions(
            identity=Identity.generate(),
            player=BotAtTable(load_bot("random", seed=1)),
            transcript=tmp_path / "me.moska",
            name="me",
        )
    )
    node.runner.session = Session()  # type: ignore[assignment]

    async def flood() -> None:
        for _ in range(50):
            node.runner.on_net(Link(), NetMessage(SYNC, Link.key, {"have": []}))  # type: ignore[arg-type]

    trio.run(flood)
    assert len(game) * 1000 <= Link.sent <= BURST + 50_000  # not 50 games: 20 MB
