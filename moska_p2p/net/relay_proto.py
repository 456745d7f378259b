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
``register``   room, key, signature, version,    peer: my key, in this room; the signature
               owner, lock, ticket, club         (kind :data:`RELAY_AUTH`) covers
                                                 ``nonce || room || owner || lock``
                                                 (:func:`register_proof`); ``ticket`` is
                                                 the room's admission (:class:`RoomPass`),
                                                 ``club`` the private relay's (or empty)
``registered`` (none)                            relay: the registration is accepted
``roster``     keys, signature                   peer: the room's owner (the table's host)
                                                 admits only these keys as players
                                                 (kind :data:`RELAY_ROSTER`)
``ping``       (none)                            peer: still here (the idle limit)
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

A room is open to the holders of its table's invite only. The invite carries a secret that the
relay never sees: the *room pass* (:class:`RoomPass`: the table, the secret and the host's key).
From the secret every member derives the room's *lock*, an Ed25519 key pair; a registration
shows the lock's public half and a *ticket*, the lock's signature over the relay's fresh nonce,
the room and the registering key. So the relay learns a public key and signatures it cannot
reuse (each binds its own nonce and one member's key): nothing that lets it, or anyone who
watched it, make a ticket. A room is named at the relay by its table, its owner and its lock
together, so a stranger cannot open the room of a table it holds no invite for, nor squat the
name of one before its host. The owner (the host) then signs the table's roster
(:data:`ROSTER`): from then on only those keys are players there; anybody else with a ticket (a
spectator) is a guest, a few per room, that may link to the owner alone.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import math
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..crypto.identity import PUBLIC_KEY_SIZE, SIGNATURE_SIZE, Identity, verify
from ..protocol.frames import LENGTH_SIZE, FrameDecoder, FrameError, pack, unpack

CHALLENGE, REGISTER, REGISTERED = "challenge", "register", "registered"
ROSTER, PING = "roster", "ping"
OPEN, OPENED, INCOMING = "open", "opened", "incoming"
DATA, EOF, CLOSE, ERROR = "data", "eof", "close", "error"

RELAY_AUTH = "net/relay-register"
"""Signature kind of a registration's proof of key."""

RELAY_TICKET = "net/relay-ticket"
"""Signature kind of a room's ticket (by the room's lock)."""

RELAY_ROSTER = "net/relay-roster"
"""Signature kind of the owner's roster of a room."""

VERSION = 2
"""The relay protocol this moska speaks (a ``register`` says it; version 1 had no version,
no lock, no ticket)."""

OLD_PEER = (
    "this relay speaks relay protocol 2 and this peer an older one (no room ticket):"
    " update moska on this peer"
)
OLD_RELAY_SAYS = "a register message with wrong items"
"""What a relay of protocol 1 answers a ``register`` of protocol 2 (its only clue)."""

SECRET_SIZE = 16
PASS_SIZE = 16 + SECRET_SIZE + PUBLIC_KEY_SIZE
MAX_ROSTER = 8
CLUB_SIZE = 32
PING_EVERY = 20.0
"""Seconds between a registered peer's pings when it has nothing else to send."""

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
    REGISTER: (bytes, bytes, bytes, int, bytes, bytes, bytes, bytes),
    REGISTERED: (),
    ROSTER: (list, bytes),
    PING: (),
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
    if kind == REGISTER and len(items) == 3:
        raise RelayError(OLD_PEER)
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
        or len(items[4]) not in (0, PUBLIC_KEY_SIZE)
        or len(items[5]) != PUBLIC_KEY_SIZE
        or len(items[6]) != SIGNATURE_SIZE
        or len(items[7]) not in (0, CLUB_SIZE)
    ):
        raise RelayError("a register message with a bad room, key, lock or signature size")
    if kind == REGISTER and items[3] != VERSION:
        raise RelayError(
            f"relay protocol {items[3]} asked, and this relay speaks {VERSION}:"
            " peer and relay need moska versions of the same relay protocol"
        )
    if kind == ROSTER and (
        not 0 < len(items[0]) <= MAX_ROSTER
        or not all(type(k) is bytes and len(k) == PUBLIC_KEY_SIZE for k in items[0])
        or len(items[1]) != SIGNATURE_SIZE
    ):
        raise RelayError("a roster that is not 1 to 8 keys and a signature")
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


def register_proof(identity: Identity, nonce: bytes, room: bytes, place: bytes = b"") -> bytes:
    """``identity``'s proof of key for registering in ``room`` (``place``: the owner and the
    lock that name it, :meth:`RoomPass.place`) at the relay that sent ``nonce``."""
    return identity.sign(RELAY_AUTH, nonce + room + place)


def check_register(
    nonce: bytes, room: bytes, key: bytes, signature: bytes, place: bytes = b""
) -> bool:
    return verify(key, RELAY_AUTH, nonce + room + place, signature)


@dataclass(frozen=True)
class RoomPass:
    """What a member needs to enter a table's room at a relay: the table (the room's name, the
    lobby id's first 16 bytes), the invite's secret, and the owner (the host's key). Kept as
    one opaque string of bytes (:meth:`__bytes__`) where a peer keeps its room; a bare table
    of 16 bytes (a game saved by an older moska) is a pass with no secret and no owner, whose
    lock anybody who knows the table can derive."""

    table: bytes
    secret: bytes = b""
    owner: bytes = b""

    @classmethod
    def new(cls, table: bytes, owner: bytes) -> RoomPass:
        """A fresh pass for a table its host opens."""
        return cls(table[:ROOM_SIZE], secrets.token_bytes(SECRET_SIZE), owner)

    @classmethod
    def parse(cls, data: bytes) -> RoomPass:
        if len(data) == ROOM_SIZE:
            return cls(data)
        if len(data) != PASS_SIZE:
            raise ValueError(f"a room pass is {ROOM_SIZE} or {PASS_SIZE} bytes, not {len(data)}")
        return cls(data[:ROOM_SIZE], data[ROOM_SIZE:32], data[32:])

    def __bytes__(self) -> bytes:
        return self.table + self.secret + self.owner

    def lock(self) -> Identity:
        """The room's lock: its public half names the room at the relay, its signatures are the
        tickets; derived from the secret, which the relay never sees."""
        seed = hashlib.sha256(b"moska-p2p/relay-lock\n" + self.table + self.secret).digest()
        return Identity.from_seed(seed)

    def place(self) -> bytes:
        """The owner and the lock's public key, as a registration states them."""
        return self.owner + self.lock().public_bytes

    def ticket(self, nonce: bytes, key: bytes) -> bytes:
        """The admission of ``key`` to this room at the relay that sent ``nonce``."""
        return self.lock().sign(RELAY_TICKET, nonce + self.table + key)


def registration(identity: Identity, nonce: bytes, room: RoomPass, token: str = "") -> bytes:
    """``identity``'s ``register`` in ``room`` at the relay that sent ``nonce``: its proof of
    key, the room's ticket, and the club's proof when it holds the relay's token."""
    key = identity.public_bytes
    lock = room.lock().public_bytes
    proof = register_proof(identity, nonce, room.table, room.owner + lock)
    club = club_proof(token, nonce, key) if token else b""
    ticket = room.ticket(nonce, key)
    return encode(REGISTER, room.table, key, proof, VERSION, room.owner, lock, ticket, club)


def check_ticket(nonce: bytes, room: bytes, key: bytes, lock: bytes, ticket: bytes) -> bool:
    return verify(lock, RELAY_TICKET, nonce + room + key, ticket)


def club_proof(token: str, nonce: bytes, key: bytes) -> bytes:
    """Proof that the registering peer holds a private relay's token (``moska relay --token``),
    over the relay's fresh nonce: the token itself never crosses the wire."""
    secret = hashlib.sha256(b"moska-p2p/relay-club\n" + token.encode("utf-8")).digest()
    return hmac.new(secret, nonce + key, hashlib.sha256).digest()


def check_club(token: str, nonce: bytes, key: bytes, proof: bytes) -> bool:
    return hmac.compare_digest(club_proof(token, nonce, key), proof)


def roster_signature(owner: Identity, room: bytes, lock: bytes, keys: list[bytes]) -> bytes:
    return owner.sign(RELAY_ROSTER, room + lock + b"".join(keys))


def check_roster(owner: bytes, room: bytes, lock: bytes, keys: list[bytes], sig: bytes) -> bool:
    return len(owner) == PUBLIC_KEY_SIZE and verify(
        owner, RELAY_ROSTER, room + lock + b"".join(keys), sig
    )


def network_of(address: str) -> str:
    """The source network a relay's per-address caps count: an IPv6 address's /64 (one
    customer's whole allocation, which it can draw addresses from at will), an IPv4 address
    (an IPv4-mapped IPv6 address is its IPv4 address); anything else as it is."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


def chunks(data: bytes) -> Iterator[bytes]:
    """``data`` cut into ``data`` payloads of at most :data:`MAX_CHUNK` bytes."""
    view = memoryview(data)
    for start in range(0, len(view), MAX_CHUNK):
        yield bytes(view[start : start + MAX_CHUNK])


# -- the relay's book --------------------------------------------------------------------------


@dataclass(frozen=True)
class Caps:
    """What one relay gives strangers. Every cap on what one stranger can hold is per source
    *network* (:func:`network_of`), and the per-network caps times a few hundred networks stay
    under the caps in all, so a stranger with 256 addresses still leaves room for real tables;
    the defaults keep the relay's memory bounded however it is flooded."""

    connections: int = 4096  # connections at once
    connections_per_address: int = 8  # per source network
    pending: int = 64  # connections that have not registered yet (the oldest is shed when full)
    pending_per_address: int = 4
    connects_per_second: float = 20.0  # new connections per network (a burst of 2 s)
    rooms: int = 1024
    rooms_per_address: int = 2  # rooms a network opened (their first registration)
    members: int = 16  # keys in one room before its roster (6 seats, restarts, spectators)
    members_per_address: int = 8  # of them from one network
    guests: int = 4  # keys in a room with a roster that are not on it (spectators)
    guests_per_address: int = 2
    links_per_connection: int = 16
    bytes_per_second: float = 1024.0 * 1024  # relayed per network (a burst of 4 s)
    queue_bytes: int = 512 * 1024  # waiting to be written to one connection
    member_bytes: int = 64 * 1024 * 1024  # relayed from one key in one room, in all
    idle_room: float = 600.0  # seconds a room may relay nothing before it closes
    idle_connection: float = 3 * PING_EVERY  # seconds a registered peer may send nothing
    handshake: float = 10.0  # seconds to register
    stall: float = 10.0  # seconds a write, or a full queue, may take before that peer is cut off
    token: str = ""  # a club's private relay: only holders of the token open rooms


def club_caps(
    per_network: int, room_size: int, connections: int = 4096, rooms: int = 1024, token: str = ""
) -> Caps:
    """A relay's caps with ``per_network`` connections and keys of a room from one source
    network, and ``room_size`` keys in a room: the defaults (8 and 16) are a public relay's,
    where each network is one stranger; a club behind one address, or a club event's room of
    every entrant, needs more (:class:`Caps` has what each bounds)."""
    return Caps(
        connections=connections,
        connections_per_address=per_network,
        pending_per_address=max(4, per_network // 2),
        rooms=rooms,
        rooms_per_address=max(2, per_network // 4),
        members=room_size,
        members_per_address=min(per_network, room_size),
        token=token,
    )


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
    address: str  # its source network (:func:`network_of`)
    room: bytes | None = None
    key: bytes | None = None
    links: dict[int, tuple[int, int]] = field(default_factory=dict)  # mine -> (conn, theirs)
    next_link: int = INCOMING_BASE  # the relay's next number for an incoming link
    last: float = 0.0  # when it last sent anything

    @property
    def registered(self) -> bool:
        return self.key is not None


@dataclass
class Room:
    owner: bytes = b""  # the table's host (may sign the roster); empty: unknown
    lock: bytes = b""
    members: dict[bytes, int] = field(default_factory=dict)  # key -> conn id
    roster: frozenset[bytes] | None = None  # the owner's: only these keys are players
    opener: str = ""  # the network that opened it
    last: float = 0.0  # when it last relayed anything
    spent: dict[bytes, int] = field(default_factory=dict)  # key -> bytes relayed from it

    def is_guest(self, key: bytes) -> bool:
        """A key that is not a player of the room's roster (none yet: nobody is a guest)."""
        return self.roster is not None and key not in self.roster and key != self.owner


def room_name(room: bytes, owner: bytes, lock: bytes) -> bytes:
    """A room's name at the relay: its table, its owner and its lock together."""
    return room + owner + lock


class Book:
    """The relay's state, with no I/O: who is connected, registered where, which virtual
    links join whom, and the caps. Every method takes the time it is (``now``) when the caps
    need it; the relay's trio side (:mod:`.relay`) acts on the answers. Addresses are counted
    by source network (:func:`network_of`)."""

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
        address = network_of(address)
        bucket = self._connect_rate.get(address)
        if bucket is None:
            rate = caps.connects_per_second
            bucket = self._connect_rate[address] = Bucket(rate, 2 * rate, now)
        if len(self.conns) >= caps.connections:
            return "the relay is full"
        if self._per_address.get(address, 0) >= caps.connections_per_address:
            return "too many connections from this network"
        if not bucket.allows(1, now):
            return "too many new connections from this network"
        conn = Conn(self._next_conn, address, last=now)
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
                    self._drop_room(conn.room)  # its host sends the roster again when back
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

    def register(
        self,
        conn_id: int,
        name: bytes,
        key: bytes,
        now: float,
        *,
        owner: bytes = b"",
        lock: bytes = b"",
        may_open: bool = True,
    ) -> int | str:
        """Register a connection's key (its proof and ticket already checked) in the room
        ``name`` (:func:`room_name`), opening the room if need be (``may_open``: the peer
        holds the club's token, on a private relay). Returns the connection this one replaces
        (the same key registered again, a restarted peer: the relay closes the old one; 0 if
        none), or why it is refused."""
        conn = self.conns[conn_id]
        if conn.registered:
            return "this connection is already registered"
        caps = self.caps
        room = self.rooms.get(name)
        if room is None:
            if not may_open:
                return "this is a private relay: only holders of its token open tables"
            if len(self.rooms) >= caps.rooms:
                return "the relay has no room for another table"
            if self._rooms_of.get(conn.address, 0) >= caps.rooms_per_address:
                return "too many tables opened from this network"
            room = Room(owner=owner, lock=lock, opener=conn.address, last=now)
            self.rooms[name] = room
            self._rooms_of[conn.address] = self._rooms_of.get(conn.address, 0) + 1
        replaced = room.members.get(key, 0)
        if not replaced:
            refusal = self._seat_refusal(room, key, conn.address)
            if refusal:
                if not room.members:
                    self._drop_room(name)
                return refusal
        room.members[key] = conn_id
        room.last = conn.last = now
        conn.room, conn.key = name, key
        if replaced:
            old = self.conns.get(replaced)
            if old is not None:
                old.room = old.key = None  # no longer a member: its disconnect keeps the room
        return replaced

    def _seat_refusal(self, room: Room, key: bytes, network: str) -> str:
        """Why ``key`` from ``network`` gets no place in ``room`` ("": it does)."""
        caps = self.caps
        if room.roster is not None:
            if not room.is_guest(key):
                return ""
            guests = [k for k in room.members if room.is_guest(k)]
            full = "that table is full at the relay (its players are there)"
            return self._crowded(room, guests, network, caps.guests, caps.guests_per_address, full)
        if key == room.owner:
            return ""
        others = [k for k in room.members if k != room.owner]  # the host never crowds a room
        full = "that table is full at the relay"
        return self._crowded(room, others, network, caps.members, caps.members_per_address, full)

    def _crowded(
        self, room: Room, keys: list[bytes], network: str, cap: int, per_network: int, full: str
    ) -> str:
        """Why one more of ``keys`` from ``network`` is one too many ("": it is not)."""
        if len(keys) >= cap:
            return full
        if sum(1 for k in keys if self._network_of_member(room, k) == network) >= per_network:
            return "too many of this network's keys are at that table"
        return ""

    def _network_of_member(self, room: Room, key: bytes) -> str:
        conn = self.conns.get(room.members[key])
        return "" if conn is None else conn.address

    def admit_only(self, name: bytes, keys: list[bytes]) -> list[int]:
        """The room's roster (its signature checked): only these keys (and the owner) are
        players from now on. Returns the connections of the members it turns into guests
        over the guests' caps, to close."""
        room = self.rooms.get(name)
        if room is None:
            return []
        room.roster = frozenset(keys)
        guests = [k for k in room.members if room.is_guest(k)]
        kept: dict[str, int] = {}
        out = []
        for number, key in enumerate(guests):
            network = self._network_of_member(room, key)
            kept[network] = kept.get(network, 0) + 1
            if number >= self.caps.guests or kept[network] > self.caps.guests_per_address:
                out.append(room.members[key])
        return out

    def touch(self, conn_id: int, now: float) -> None:
        """The connection sent something (the idle limit)."""
        conn = self.conns.get(conn_id)
        if conn is not None:
            conn.last = now

    def idle_connections(self, now: float) -> list[int]:
        """Registered connections that sent nothing for :attr:`Caps.idle_connection` s."""
        limit = self.caps.idle_connection
        return [c.id for c in self.conns.values() if c.registered and now - c.last > limit]

    # virtual links

    def open(self, conn_id: int, link: int, to_key: bytes, now: float) -> tuple[int, int] | str:
        """Join the opener's link ``link`` to the key ``to_key`` of its room: the other end
        ``(conn, link)`` (tell it ``incoming``), or why not."""
        conn = self.conns[conn_id]
        if conn.room is None or conn.key is None:
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
        if (room.is_guest(conn.key) or room.is_guest(to_key)) and room.owner not in (
            conn.key,
            to_key,
        ):
            return "a key that is not on the table's roster links to its host alone"
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
        """Account ``size`` bytes from a connection: seconds to wait first (its network's
        rate), or why it is cut off (its key's share of the room: one member's flood ends
        that member's connection, never the room)."""
        conn = self.conns[conn_id]
        conn.last = now
        room = self.rooms.get(conn.room) if conn.room is not None else None
        if room is not None and conn.key is not None:
            room.last = now
            spent = room.spent[conn.key] = room.spent.get(conn.key, 0) + size
            if spent > self.caps.member_bytes:
                mib = self.caps.member_bytes // (1024 * 1024)
                return f"this key sent more than its share of the table ({mib} MiB)"
        bucket = self._byte_rate.get(conn.address)
        if bucket is None:
            rate = self.caps.bytes_per_second
            bucket = self._byte_rate[conn.address] = Bucket(rate, 4 * rate, now)
        return bucket.take(size, now)

    def idle_rooms(self, now: float) -> list[bytes]:
        """Rooms that relayed nothing for :attr:`Caps.idle_room` seconds."""
        limit = self.caps.idle_room
        return [name for name, room in self.rooms.items() if now - room.last > limit]

    def expire_room(self, name: bytes, now: float) -> list[int]:
        """An idle room: its members' connections to close; a room nobody is in goes now."""
        room = self.rooms.get(name)
        if room is None:
            return []
        if not room.members:
            self._drop_room(name)
            return []
        room.last = now  # its members go as their tasks end
        return list(room.members.values())

    def members_of(self, name: bytes) -> list[int]:
        room = self.rooms.get(name)
        return [] if room is None else list(room.members.values())

    def next_expiry(self, now: float) -> float:
        """Seconds until the next room or registered connection can expire (inf: none)."""
        times = [room.last + self.caps.idle_room for room in self.rooms.values()]
        times += [c.last + self.caps.idle_connection for c in self.conns.values() if c.registered]
        if not times:
            return math.inf
        return max(0.0, min(times) - now)
