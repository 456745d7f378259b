"""The relay's wire and bookkeeping, sans-IO: the messages between a peer and a relay, and
the relay's book of rooms, registrations, virtual links and caps.

A relay (``moska relay``, :mod:`.relay`) lets peers that cannot accept connections reach one
another: each keeps one outbound TCP connection to the relay, registers in a *room* (the first
:data:`ROOM_SIZE` bytes of the table's lobby id) under its key, and opens *virtual links* to the
keys registered in the same room. The relay copies a virtual link's bytes from one end to the
other and reads none of them: what runs over a virtual link is the ordinary link handshake and
game (:mod:`.wire`), whose proofs bind both keys and a fresh nonce of each end, so a relay can
forward or drop, never stand in for a peer.

Every message is a length-prefixed (4 bytes, big-endian) msgpack array whose first item is its
type; the relay's side and the peer's side use the same decoder, capped at
:data:`MAX_MESSAGE` bytes.

=============  ===============================  ========================================
type           items after the type              sent by, and meaning
=============  ===============================  ========================================
``challenge``  nonce (32 bytes)                  relay: first thing on a connection
``register``   room, key, signature              peer: my key, in this room; the signature
                                                 (kind :data:`RELAY_AUTH`) covers
                                                 ``nonce || room`` (:func:`register_proof`)
``registered`` (none)                            relay: the registration is accepted
``open``       link, key                         peer: open my virtual link ``link`` (a number
                                                 of mine, below 2**30) to ``key`` in my room
``opened``     link                              relay: ``link`` is connected
``incoming``   link, key                         relay: ``key`` opened a virtual link to you;
                                                 it is your ``link`` (the relay's number, from
                                                 2**30 up)
``data``       link, bytes                       both: bytes of the link (at most
                                                 :data:`MAX_CHUNK`)
``eof``        link                              both: the sender will send no more bytes
``close``      link, reason                      both: the link is gone (or could not open)
``error``      reason                            relay: the connection is refused; it closes
=============  ===============================  ========================================

The proof of key at registration only keeps a stranger from squatting another peer's key in a
room (its links would fail their handshake anyway); the game's security never rests on it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..crypto.identity import PUBLIC_KEY_SIZE, SIGNATURE_SIZE, Identity, verify
from ..protocol.frames import LENGTH_SIZE, FrameDecoder, FrameError, pack, unpack

CHALLENGE, REGISTER, REGISTERED = "challenge", "register", "registered"
OPEN, OPENED, INCOMING = "open", "opened", "incoming"
DATA, EOF, CLOSE, ERROR = "data", "eof", "close", "error"

RELAY_AUTH = "net/relay-register"
"""Signature kind of a registration's proof of key."""

ROOM_SIZE = 16
"""A room is named by the first 16 bytes (128 bits) of the table's lobby id."""

NONCE_SIZE = 32
MAX_CHUNK = 16 * 1024
"""Largest ``data`` payload: a peer cuts what it sends into chunks this big, so the relay
never has to hold a whole game frame of one link to forward it."""

MAX_MESSAGE = MAX_CHUNK + 64
"""Largest relay message body (a full ``data`` message and its framing)."""

MAX_REASON = 200
MAX_LINK_ID = 2**31 - 1
INCOMING_BASE = 2**30
"""A peer numbers the links it opens below this; the relay numbers the links it announces
(``incoming``) from it up, so the two never collide on one connection."""

_ITEMS: dict[str, tuple[type, ...]] = {
    CHALLENGE: (bytes,),
    REGISTER: (bytes, bytes, bytes),
    REGISTERED: (),
    OPEN: (int, bytes),
    OPENED: (int,),
    INCOMING: (int, bytes),
    DATA: (int, bytes),
    EOF: (int,),
    CLOSE: (int, str),
    ERROR: (str,),
}


class RelayError(Exception):
    """A relay message that breaks the rules: the connection is unusable."""


@dataclass(frozen=True)
class Message:
    """One relay message: its type and its items (see the module docstring)."""

    kind: str
    items: tuple[Any, ...]


def encode(kind: str, *items: Any) -> bytes:
    """A relay message with its length prefix."""
    body = pack([kind, *items])
    return len(body).to_bytes(LENGTH_SIZE, "big") + body


def decode(body: bytes) -> Message:
    """A checked relay message from a frame body; :class:`RelayError` for anything else."""
    try:
        obj = unpack(body, limit=MAX_MESSAGE)
    except FrameError as error:
        raise RelayError(f"not a relay message: {error}") from None
    if not isinstance(obj, list) or not obj or not isinstance(obj[0], str):
        raise RelayError("not a relay message")
    kind, items = obj[0], tuple(obj[1:])
    types = _ITEMS.get(kind)
    if types is None:
        raise RelayError(f"unknown relay message {kind[:20]!r}")
    if len(items) != len(types) or not all(
        type(item) is wanted for item, wanted in zip(items, types, strict=True)
    ):
        raise RelayError(f"a {kind} message with wrong items")
    for item in items:
        if type(item) is int and not 0 <= item <= MAX_LINK_ID:
            raise RelayError(f"a {kind} message with a link number out of range")
        if type(item) is str and len(item) > MAX_REASON:
            raise RelayError(f"a {kind} message with too long a reason")
    if kind == CHALLENGE and len(items[0]) != NONCE_SIZE:
        raise RelayError("a challenge that is not 32 bytes")
    if kind == REGISTER and (
        len(items[0]) != ROOM_SIZE
        or len(items[1]) != PUBLIC_KEY_SIZE
        or len(items[2]) != SIGNATURE_SIZE
    ):
        raise RelayError("a register message with a bad room, key or signature size")
    if kind in (OPEN, INCOMING) and len(items[1]) != PUBLIC_KEY_SIZE:
        raise RelayError(f"an {kind} message with a bad key size")
    if kind == DATA and not 0 < len(items[1]) <= MAX_CHUNK:
        raise RelayError(f"a data message of {len(items[1])} bytes")
    return Message(kind, items)


class RelayDecoder:
    """Whole relay messages from a byte stream (a :class:`FrameDecoder` capped at
    :data:`MAX_MESSAGE`)."""

    def __init__(self) -> None:
        self._frames = FrameDecoder(MAX_MESSAGE)

    @property
    def pending(self) -> int:
        return self._frames.pending

    def feed(self, data: bytes) -> Iterator[Message]:
        """Push ``data`` and yield every whole message it completes."""
        try:
            self._frames.push(data)
            while (body := self._frames.pop()) is not None:
                yield decode(body)
        except FrameError as error:
            raise RelayError(str(error)) from None


def register_proof(identity: Identity, nonce: bytes, room: bytes) -> bytes:
    """``identity``'s proof of key for registering in ``room`` at the relay that sent
    ``nonce``."""
    return identity.sign(RELAY_AUTH, nonce + room)


def check_register(nonce: bytes, room: bytes, key: bytes, signature: bytes) -> bool:
    return verify(key, RELAY_AUTH, nonce + room, signature)


def chunks(data: bytes) -> Iterator[bytes]:
    """``data`` cut into ``data`` payloads of at most :data:`MAX_CHUNK` bytes."""
    view = memoryview(data)
    for start in range(0, len(view), MAX_CHUNK):
        yield bytes(view[start : start + MAX_CHUNK])


# -- the relay's book --------------------------------------------------------------------------


@dataclass(frozen=True)
class Caps:
    """What one relay gives strangers (the defaults suit a relay for a few friends' tables and
    keep it well under 100 MB however it is flooded)."""

    connections: int = 256  # connections at once
    connections_per_address: int = 32
    pending: int = 32  # connections that have not registered yet
    pending_per_address: int = 8
    connects_per_second: float = 20.0  # new connections per address (a burst of 2 s)
    rooms: int = 64
    rooms_per_address: int = 8  # rooms an address opened (its first registration there)
    members: int = 8  # keys in one room (6 seats, and room for a restart)
    links_per_connection: int = 16
    bytes_per_second: float = 1024.0 * 1024  # relayed per address (a burst of 4 s)
    queue_bytes: int = 512 * 1024  # waiting to be written to one connection
    room_bytes: int = 256 * 1024 * 1024  # relayed in one room, in all
    idle_room: float = 600.0  # seconds a room may relay nothing before it closes
    handshake: float = 10.0  # seconds to register
    stall: float = 10.0  # seconds a write, or a full queue, may take before that peer is cut off


class Bucket:
    """A token bucket: ``rate`` per second, at most ``burst``; :meth:`take` says how long to
    wait before the amount taken is earned (0: now)."""

    __slots__ = ("burst", "level", "rate", "stamp")

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate, self.burst, self.level, self.stamp = rate, burst, burst, now

    def _fill(self, now: float) -> None:
        self.level = min(self.burst, self.level + (now - self.stamp) * self.rate)
        self.stamp = now

    def take(self, amount: float, now: float) -> float:
        self._fill(now)
        self.level -= amount
        return 0.0 if self.level >= 0 else -self.level / self.rate

    def allows(self, amount: float, now: float) -> bool:
        """Take ``amount`` only if it is there now."""
        self._fill(now)
        if self.level < amount:
            return False
        self.level -= amount
        return True


@dataclass
class Conn:
    """A connection to the relay."""

    id: int
    address: str
    room: bytes | None = None
    key: bytes | None = None
    links: dict[int, tuple[int, int]] = field(default_factory=dict)  # mine -> (conn, theirs)
    next_link: int = INCOMING_BASE  # the relay's next number for an incoming link

    @property
    def registered(self) -> bool:
        return self.key is not None


@dataclass
class Room:
    members: dict[bytes, int] = field(default_factory=dict)  # key -> conn id
    opener: str = ""  # the address that opened it
    last: float = 0.0  # when it last relayed anything
    bytes: int = 0


class Book:
    """The relay's state, with no I/O: who is connected, registered where, which virtual
    links join whom, and the caps. Every method takes the time it is (``now``) when the caps
    need it; the relay's trio side (:mod:`.relay`) acts on the answers."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self.conns: dict[int, Conn] = {}
        self.rooms: dict[bytes, Room] = {}
        self._next_conn = 1
        self._per_address: dict[str, int] = {}
        self._rooms_of: dict[str, int] = {}
        self._connect_rate: dict[str, Bucket] = {}
        self._byte_rate: dict[str, Bucket] = {}

    # connections

    def connect(self, address: str, now: float) -> Conn | str:
        """A new connection from ``address``, or why it is refused (over a cap)."""
        caps = self.caps
        bucket = self._connect_rate.get(address)
        if bucket is None:
            rate = caps.connects_per_second
            bucket = self._connect_rate[address] = Bucket(rate, 2 * rate, now)
        if len(self.conns) >= caps.connections:
            return "the relay is full"
        if self._per_address.get(address, 0) >= caps.connections_per_address:
            return "too many connections from this address"
        if not bucket.allows(1, now):
            return "too many new connections from this address"
        conn = Conn(self._next_conn, address)
        self._next_conn += 1
        self.conns[conn.id] = conn
        self._per_address[address] = self._per_address.get(address, 0) + 1
        return conn

    def disconnect(self, conn_id: int) -> list[tuple[int, int]]:
        """Forget a connection; the ``(conn, link)`` ends of its links to tell ``close``."""
        conn = self.conns.pop(conn_id, None)
        if conn is None:
            return []
        ends = []
        for other, theirs in conn.links.values():
            peer = self.conns.get(other)
            if peer is not None and peer.links.pop(theirs, None) is not None:
                ends.append((other, theirs))
        conn.links.clear()
        left = self._per_address.get(conn.address, 1) - 1
        if left > 0:
            self._per_address[conn.address] = left
        else:
            self._per_address.pop(conn.address, None)
        if conn.room is not None and conn.key is not None:
            room = self.rooms.get(conn.room)
            if room is not None and room.members.get(conn.key) == conn_id:
                del room.members[conn.key]
                if not room.members:
                    self._drop_room(conn.room)
        self._forget_address(conn.address)
        return ends

    def _forget_address(self, address: str) -> None:
        """An address with no connection left keeps no buckets (a flood of addresses must
        not grow the book)."""
        if address not in self._per_address:
            self._connect_rate.pop(address, None)
            self._byte_rate.pop(address, None)

    def _drop_room(self, name: bytes) -> None:
        room = self.rooms.pop(name, None)
        if room is not None:
            left = self._rooms_of.get(room.opener, 1) - 1
            if left > 0:
                self._rooms_of[room.opener] = left
            else:
                self._rooms_of.pop(room.opener, None)

    # registration

    def register(self, conn_id: int, room_name: bytes, key: bytes, now: float) -> int | str:
        """Register a connection's key (its proof already checked) in a room, opening the room
        if need be. Returns the connection this one replaces (the same key registered again, a
        restarted peer: the relay closes the old one; 0 if none), or why it is refused."""
        conn = self.conns[conn_id]
        if conn.registered:
            return "this connection is already registered"
        caps = self.caps
        room = self.rooms.get(room_name)
        if room is None:
            if len(self.rooms) >= caps.rooms:
                return "the relay has no room for another table"
            if self._rooms_of.get(conn.address, 0) >= caps.rooms_per_address:
                return "too many tables opened from this address"
            room = self.rooms[room_name] = Room(opener=conn.address, last=now)
            self._rooms_of[conn.address] = self._rooms_of.get(conn.address, 0) + 1
        replaced = room.members.get(key, 0)
        if not replaced and len(room.members) >= caps.members:
            return "that table is full at the relay"
        room.members[key] = conn_id
        room.last = now
        conn.room, conn.key = room_name, key
        if replaced:
            old = self.conns.get(replaced)
            if old is not None:
                old.room = old.key = None  # no longer a member: its disconnect keeps the room
        return replaced

    # virtual links

    def open(self, conn_id: int, link: int, to_key: bytes, now: float) -> tuple[int, int] | str:
        """Join the opener's link ``link`` to the key ``to_key`` of its room: the other end
        ``(conn, link)`` (tell it ``incoming``), or why not."""
        conn = self.conns[conn_id]
        if conn.room is None:
            return "register first"
        if not 0 < link < INCOMING_BASE:
            return "a link number of yours is from 1 to 2**30 - 1"
        if link in conn.links:
            return "that link number is in use"
        if len(conn.links) >= self.caps.links_per_connection:
            return "too many links on this connection"
        room = self.rooms[conn.room]
        target_id = room.members.get(to_key)
        if target_id is None:
            return "that key is not at the relay (not yet, or gone)"
        if target_id == conn_id:
            return "a link to oneself"
        target = self.conns[target_id]
        if len(target.links) >= self.caps.links_per_connection:
            return "the other side has too many links"
        theirs = target.next_link
        while theirs in target.links:
            theirs += 1
        target.next_link = theirs + 1 if theirs < MAX_LINK_ID else INCOMING_BASE
        conn.links[link] = (target_id, theirs)
        target.links[theirs] = (conn_id, link)
        room.last = now
        return target_id, theirs

    def route(self, conn_id: int, link: int) -> tuple[int, int] | None:
        """The other end of a connection's link, or None (closed, or never opened)."""
        conn = self.conns.get(conn_id)
        return None if conn is None else conn.links.get(link)

    def close(self, conn_id: int, link: int) -> tuple[int, int] | None:
        """Forget a link; its other end to tell (or None)."""
        conn = self.conns.get(conn_id)
        end = None if conn is None else conn.links.pop(link, None)
        if end is not None:
            other = self.conns.get(end[0])
            if other is not None:
                other.links.pop(end[1], None)
        return end

    def relayed(self, conn_id: int, size: int, now: float) -> float | str:
        """Account ``size`` bytes from a connection: seconds to wait first (the address's
        rate), or why the room is closed (its byte cap)."""
        conn = self.conns[conn_id]
        room = self.rooms.get(conn.room) if conn.room is not None else None
        if room is not None:
            room.last = now
            room.bytes += size
            if room.bytes > self.caps.room_bytes:
                return "the table relayed more than the relay allows"
        bucket = self._byte_rate.get(conn.address)
        if bucket is None:
            rate = self.caps.bytes_per_second
            bucket = self._byte_rate[conn.address] = Bucket(rate, 4 * rate, now)
        return bucket.take(size, now)

    def idle_rooms(self, now: float) -> list[bytes]:
        """Rooms that relayed nothing for :attr:`Caps.idle_room` seconds."""
        limit = self.caps.idle_room
        return [name for name, room in self.rooms.items() if now - room.last > limit]

    def members_of(self, room_name: bytes) -> list[int]:
        room = self.rooms.get(room_name)
        return [] if room is None else list(room.members.values())

    def next_expiry(self, now: float) -> float:
        """Seconds until the next room can expire (inf: no room)."""
        if not self.rooms:
            return math.inf
        oldest = min(room.last for room in self.rooms.values())
        return max(0.0, oldest + self.caps.idle_room - now)
