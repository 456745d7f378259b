"""``moska relay``: a relay anyone can run on a reachable machine, so that peers that cannot
accept connections (behind a NAT, a firewall, a phone's network) play anyway.

Each peer keeps one outbound connection to the relay, proves its key and registers in its
table's room; a virtual link between two members of a room carries the ordinary link handshake
and game (:mod:`.relay_proto` has the messages and the book). The relay copies bytes it cannot
use: every game frame is signed by its author and every hidden card encrypted, and a link's
handshake binds both keys and a fresh nonce of each end (:mod:`.wire`), so the relay can only
forward or drop (``docs/NETWORK.md``, "Relays").

Strangers are bounded everywhere, an address counted by its source network (an IPv6 /64 is
one): connections in all and per network, new connections per second per network,
connections that have not registered (:class:`~.admission.Admission`, with a deadline; when
they are too many the oldest is shed, so holding them all costs a stranger a constant churn
and a real peer that answers its challenge gets in), rooms in all and per network, keys per
room and per network in it, links per connection, bytes per second per network, bytes queued
for one connection (a peer that does not read is cut off) and in all, bytes per key of a room
(a member that floods is cut off, never the room); a registered connection that says nothing
for a while, and a room that relays nothing for a while, are closed. A room admits only
holders of its invite (a ticket), and once its host signed the roster only its players (and a
few guests, who link to the host alone); a private relay (``--token``) lets only holders of
its token open rooms.
"""

from __future__ import annotations

import logging
import secrets
from collections import deque

import trio

from .admission import Admission, Quiet, Ticket
from .relay_proto import (
    CHALLENGE,
    CLOSE,
    DATA,
    EOF,
    ERROR,
    INCOMING,
    OPEN,
    OPENED,
    PING,
    REGISTER,
    REGISTERED,
    ROSTER,
    Book,
    Caps,
    Conn,
    Message,
    RelayDecoder,
    RelayError,
    check_club,
    check_register,
    check_roster,
    check_ticket,
    encode,
    network_of,
    room_name,
)

log = logging.getLogger("moska_p2p.relay")


def _reason(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, trio.TooSlowError):
        return "timed out"
    return str(error) or type(error).__name__


READ_SIZE = 16 * 1024

TOTAL_QUEUE = 32 * 1024 * 1024
"""Bytes queued for all connections together; past it, readers wait."""


class _Outbox:
    """What waits to be written to one connection."""

    def __init__(self) -> None:
        self.items: deque[bytes] = deque()
        self.size = 0
        self.wake = trio.Event()
        self.drained = trio.Event()
        self.scope = trio.CancelScope()


class RelayServer:
    """The relay's trio side (see the module docstring). ``echo`` says what a person running
    it should read (where it listens); the rest goes to the log."""

    def __init__(self, caps: Caps | None = None) -> None:
        self.caps = caps or Caps()
        self.book = Book(self.caps)
        self.admission = Admission(self.caps.pending, self.caps.pending_per_address)
        self.outboxes: dict[int, _Outbox] = {}
        self.queued = 0
        self._space = trio.Event()
        self._quiet = Quiet()
        self.refused = 0
        self.port = 0
        self._nursery: trio.Nursery | None = None

    async def serve(
        self,
        host: str,
        port: int,
        *,
        task_status: trio.TaskStatus[list[trio.SocketListener]] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen on ``host:port`` (0: any free port) and relay until cancelled."""
        listeners = await trio.open_tcp_listeners(port, host=host)
        self.port = int(listeners[0].socket.getsockname()[1])
        task_status.started(listeners)
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._expire_rooms)
            for listener in listeners:
                nursery.start_soon(self._accept_loop, listener, nursery)

    async def _accept_loop(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    return
                except OSError as error:  # out of descriptors: shed strangers, back off
                    self._quiet.warning("cannot accept: %s", error.strerror or error)
                    self.admission.squeeze()
                    await trio.sleep(0.1)
                    continue
                try:
                    address = network_of(str(stream.socket.getpeername()[0]))
                except OSError:
                    address = "?"
                ticket = self.admission.admit(address)
                if ticket is None and len(self.admission.pending) >= self.admission.total:
                    self.admission.shed()  # the oldest stranger makes way: holding them costs
                    ticket = self.admission.admit(address)
                conn = self.book.connect(address, trio.current_time()) if ticket else None
                if ticket is None or isinstance(conn, str) or conn is None:
                    if ticket is not None:
                        ticket.release()
                    self.refused += 1
                    why = conn or "too many connections that have not registered"
                    self._quiet.warning("refused a connection from %s: %s", address, why)
                    await trio.aclose_forcefully(stream)
                    continue
                nursery.start_soon(self._connection, stream, conn, ticket)

    async def _connection(self, stream: trio.SocketStream, conn: Conn, ticket: Ticket) -> None:
        box = self.outboxes[conn.id] = _Outbox()
        try:
            with box.scope, ticket.scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(self._write_loop, stream, box)
                    try:
                        await self._read_loop(stream, conn, ticket)
                    except RelayError as error:
                        self._send(conn.id, encode(ERROR, str(error)[:200]))
                        with trio.move_on_after(1.0):
                            while box.items:
                                await box.drained.wait()
                    nursery.cancel_scope.cancel()
        except Exception as error:  # this connection's end only (a reset, a timeout...)
            log.info("connection %d from %s ended: %s", conn.id, conn.address, _reason(error))
        finally:
            ticket.release()
            self._drop(conn.id)
            await trio.aclose_forcefully(stream)

    def _drop(self, conn_id: int) -> None:
        box = self.outboxes.pop(conn_id, None)
        if box is not None:
            self.queued -= box.size
            box.items.clear()
            box.scope.cancel()
            box.drained.set()
            self._space.set()
        for other, link in self.book.disconnect(conn_id):
            self._send(other, encode(CLOSE, link, "the other side left the relay"))

    async def _read_loop(self, stream: trio.SocketStream, conn: Conn, ticket: Ticket) -> None:
        decoder = RelayDecoder()
        nonce = secrets.token_bytes(32)
        self._send(conn.id, encode(CHALLENGE, nonce))
        deadline = trio.current_time() + self.caps.handshake
        while True:
            if conn.registered:
                data = await stream.receive_some(READ_SIZE)
            else:
                with trio.fail_at(deadline):
                    data = await stream.receive_some(READ_SIZE)
            if not data:
                return
            if conn.registered:  # every byte counts against the network's rate, used or not
                await self._account(conn, len(data))
            for message in decoder.feed(bytes(data)):
                self.book.touch(conn.id, trio.current_time())
                if not conn.registered:
                    self._register(conn, message, nonce)
                    ticket.release()
                else:
                    await self._handle(conn, message)

    def _register(self, conn: Conn, message: Message, nonce: bytes) -> None:
        if message.kind != REGISTER:
            raise RelayError(f"a {message.kind} message before registering")
        room, key, signature, _, owner, lock, ticket, club = message.items
        if not check_register(nonce, room, key, signature, owner + lock):
            raise RelayError("a registration whose proof of key does not answer the challenge")
        if not check_ticket(nonce, room, key, lock, ticket):
            raise RelayError("a registration without a ticket of that table's invite")
        may_open = not self.caps.token or check_club(self.caps.token, nonce, key, club)
        answer = self.book.register(
            conn.id,
            room_name(room, owner, lock),
            key,
            trio.current_time(),
            owner=owner,
            lock=lock,
            may_open=may_open,
        )
        if isinstance(answer, str):
            raise RelayError(answer)
        if answer:
            replaced = self.outboxes.get(answer)
            if replaced is not None:
                replaced.scope.cancel()
        self._send(conn.id, encode(REGISTERED))

    async def _handle(self, conn: Conn, message: Message) -> None:
        now = trio.current_time()
        kind = message.kind
        if kind == OPEN:
            link, key = message.items
            opened = self.book.open(conn.id, link, key, now)
            if isinstance(opened, str):
                self._send(conn.id, encode(CLOSE, link, opened))
                return
            assert conn.key is not None
            self._send(opened[0], encode(INCOMING, opened[1], conn.key))
            self._send(conn.id, encode(OPENED, link))
        elif kind in (DATA, EOF):
            link = message.items[0]
            if self.book.route(conn.id, link) is None:
                return  # closed meanwhile: the close is on its way to the sender
            end = self.book.route(conn.id, link)
            if end is None:
                return
            await self._room_for(end[0])
            frame = encode(DATA, end[1], message.items[1]) if kind == DATA else encode(EOF, end[1])
            self._send(end[0], frame)
        elif kind == CLOSE:
            end = self.book.close(conn.id, message.items[0])
            if end is not None:
                self._send(end[0], encode(CLOSE, end[1], message.items[1]))
        elif kind == ROSTER:
            self._roster(conn, *message.items)
        elif kind == PING:
            pass  # it said something: the idle limit starts again
        else:
            raise RelayError(f"a {kind} message from a peer")

    def _roster(self, conn: Conn, keys: list[bytes], signature: bytes) -> None:
        """The owner's roster of the sender's room: from now on its players alone (and a few
        guests); a roster the owner did not sign is refused and changes nothing."""
        room = self.book.rooms.get(conn.room) if conn.room is not None else None
        if room is None or conn.room is None:
            return
        table = conn.room[: len(conn.room) - len(room.owner) - len(room.lock)]
        if not check_roster(room.owner, table, room.lock, keys, signature):
            raise RelayError("a roster its table's host did not sign")
        for member in self.book.admit_only(conn.room, keys):
            self._refuse(member, "the table started and its roster has no place for this key")

    async def _account(self, conn: Conn, size: int) -> None:
        """Bytes read from a member: wait as long as its network's rate says; a member over
        its share of the room's bytes is cut off (the room goes on)."""
        wait = self.book.relayed(conn.id, size, trio.current_time())
        if isinstance(wait, str):
            raise RelayError(wait)
        if wait > 0:
            await trio.sleep(wait)

    async def _room_for(self, target: int) -> None:
        """Wait while the target's queue or all queues are over their caps; a target that
        does not drain its queue within :attr:`Caps.stall` seconds is cut off."""
        box = self.outboxes.get(target)
        if box is not None and box.size > self.caps.queue_bytes:
            with trio.move_on_after(self.caps.stall):
                while box.size > self.caps.queue_bytes and target in self.outboxes:
                    box.drained = trio.Event()
                    await box.drained.wait()
            if box.size > self.caps.queue_bytes:
                log.info("connection %d does not read: cut off", target)
                self._close_conn(target)
        while self.queued > TOTAL_QUEUE:
            self._space = trio.Event()
            await self._space.wait()

    def _refuse(self, conn_id: int, reason: str) -> None:
        """Tell a connection why it is closed, then close it (within a second)."""
        self._send(conn_id, encode(ERROR, reason))
        if self._nursery is None:
            self._close_conn(conn_id)
        else:
            self._nursery.start_soon(self._close_when_told, conn_id)

    async def _close_when_told(self, conn_id: int) -> None:
        box = self.outboxes.get(conn_id)
        if box is not None:
            with trio.move_on_after(1.0):
                while box.size and conn_id in self.outboxes:
                    box.drained = trio.Event()
                    await box.drained.wait()
        self._close_conn(conn_id)

    def _close_conn(self, conn_id: int) -> None:
        box = self.outboxes.get(conn_id)
        if box is not None:
            box.scope.cancel()

    def _send(self, conn_id: int, frame: bytes) -> None:
        box = self.outboxes.get(conn_id)
        if box is None:
            return
        box.items.append(frame)
        box.size += len(frame)
        self.queued += len(frame)
        box.wake.set()

    async def _write_loop(self, stream: trio.SocketStream, box: _Outbox) -> None:
        while True:
            if not box.items:
                box.drained.set()
                box.wake = trio.Event()
                await box.wake.wait()
                continue
            data = b"".join(box.items)
            box.items.clear()
            with trio.fail_after(self.caps.stall):
                await stream.send_all(data)
            box.size -= len(data)
            self.queued -= len(data)
            self._space.set()
            if box.size <= self.caps.queue_bytes:
                box.drained.set()

    async def _expire_rooms(self) -> None:
        caps = self.caps
        while True:
            now = trio.current_time()
            for name in self.book.idle_rooms(now):
                log.info("a table idle for %g s: closed", caps.idle_room)
                for member in self.book.expire_room(name, now):
                    self._close_conn(member)
            for conn_id in self.book.idle_connections(now):
                log.info("connection %d silent for %g s: closed", conn_id, caps.idle_connection)
                self._refuse(conn_id, f"silent for {caps.idle_connection:g} s")
                self.book.touch(conn_id, now)  # it goes as its task ends
            # a room or connection opened meanwhile is looked at within a quarter of its limit
            wait = min(self.book.next_expiry(now), caps.idle_room / 4, caps.idle_connection / 4)
            await trio.sleep(max(wait, 0.1))
