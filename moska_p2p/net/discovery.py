"""Finding tables on the LAN with no configuration: a signed UDP multicast beacon
(DESIGN.md, "Network and user interface").

While its table waits for players, a host sends an *announcement* about every second to a
multicast group (by default ``239.255.77.54:47754``, an organisation-local group; TTL 1, so it
never leaves the LAN). When the table is full, or the host stops waiting, it sends one last
announcement marked closed and stops. A listener joins the group for a bounded time, keeps the
newest announcement of each table (host key + port) and returns the tables still open.

A UDP beacon rather than DNS-SD/mDNS: no dependency, plain trio sockets, and one datagram says
everything a table list shows.

**Datagram.** One signed frame, exactly as on a connection (:func:`~moska_p2p.protocol.frames.
signed_frame`: a length prefix, then ``[kind, payload, signature]``) of the kind ``beacon``
(its payload capped at 1 KiB, its signature made for that kind only), whose payload is a map
with the key ``"moska-table"`` (the announcement format, 1):

``key``      the host's public key; the signature is checked against it, so the fingerprint a
             listener shows is verified (a datagram with a bad signature, or a key that cannot
             be a player's, is dropped, like any malformed one)
``name``     the host's name (at most 40 characters, shown with control characters replaced)
``preset``, ``players``, ``options``, ``timeout``, ``version``
             the table's settings (``version`` is the protocol version)
``seats``    seats taken, the host's included
``port``     where the host listens; the address is the datagram's source
``table``    8 bytes of SHA-256 of the table nonce: a new table on the same key and port
``seq``      counts the host's announcements of this table: the highest is the newest state
``open``     false in the last announcement, when the table filled or closed

Extra fields are allowed (a later format may add some). Club events announce themselves on
the same group with a second format, ``"moska-event"`` (:mod:`moska_p2p.event.lan`): each
listener keeps the datagrams of its own format and ignores the other's.

The signature proves who announced a table, not where it is: anyone can replay a signed
announcement from another address, so ``moska join`` checks that the key answering at the
address is the one that announced it.

**Configuration** (environment, so tests and unusual networks need no option):
``MOSKA_DISCOVERY`` is ``GROUP:PORT`` (or ``off``); ``MOSKA_DISCOVERY_IF`` is the local IPv4
address of the one interface to announce and listen on. By default a host announces on the
interface of its ``--bind`` address, or for ``0.0.0.0`` on the default route's interface and on
loopback (so a table is found on the same machine without a network); a listener listens on
both.
"""

from __future__ import annotations

import contextlib
import hashlib
import ipaddress
import logging
import math
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

import trio

from ..crypto.identity import (
    PUBLIC_KEY_SIZE,
    Identity,
    fingerprint_of,
    is_acceptable_public_key,
    verify,
)
from ..errors import Error
from ..protocol.config import PROTOCOL_VERSION, TableConfig
from ..protocol.frames import (
    BEACON,
    LENGTH_SIZE,
    Field,
    FrameError,
    Spec,
    check_fields,
    open_frame,
    printable,
    require,
    signed_frame,
    unpack,
)
from .wire import MAX_NAME

log = logging.getLogger("moska_p2p.net")

__all__ = [
    "DEFAULT_GROUP",
    "DEFAULT_PORT",
    "ENV_GROUP",
    "ENV_INTERFACE",
    "Announced",
    "Collector",
    "DiscoveryError",
    "Found",
    "FoundTable",
    "Newest",
    "Settings",
    "TableStatus",
    "announce",
    "announcement",
    "find_tables",
    "listen_for_beacons",
    "open_beacon",
    "parse_announcement",
    "pick_table",
    "send_beacon",
]

DEFAULT_GROUP = "239.255.77.54"
DEFAULT_PORT = 47754
ENV_GROUP = "MOSKA_DISCOVERY"
ENV_INTERFACE = "MOSKA_DISCOVERY_IF"
LOOPBACK = "127.0.0.1"

BEACON_INTERVAL = 1.0
"""Seconds between two announcements of an open table."""

TTL = 1
"""Multicast hops: 1 keeps the announcements on the LAN."""

MAX_DATAGRAM = 2048
"""A longer datagram is no announcement (a real one is about 300 bytes)."""

TABLE_TAG = "moska-table"
FORMAT = 1

_SPEC: Spec = {
    TABLE_TAG: int,
    "key": Field(bytes, length=PUBLIC_KEY_SIZE),
    "name": str,
    "preset": str,
    "players": Field(int, minimum=2, maximum=6),
    "seats": Field(int, minimum=1, maximum=6),
    "port": Field(int, minimum=1, maximum=65535),
    "version": Field(int, minimum=0),
    "options": dict,
    "timeout": (float, int),
    "table": Field(bytes, length=8),
    "seq": Field(int, minimum=0),
    "open": bool,
}


class DiscoveryError(Error):
    """Discovery is misconfigured or this machine cannot join the multicast group."""


# ---------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Settings:
    """Where announcements go: the multicast group and port, and optionally one interface."""

    group: str = DEFAULT_GROUP
    port: int = DEFAULT_PORT
    interface: str | None = None  # a local IPv4 address; None: see the module docstring
    enabled: bool = True

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """The settings of ``MOSKA_DISCOVERY`` and ``MOSKA_DISCOVERY_IF`` (or the defaults);
        :class:`DiscoveryError` for a value that is not GROUP:PORT or an IPv4 address."""
        env = os.environ if environ is None else environ
        text = env.get(ENV_GROUP, "").strip()
        interface = env.get(ENV_INTERFACE, "").strip() or None
        if text.lower() in ("off", "no", "0", "false"):
            return cls(enabled=False)
        group, port = DEFAULT_GROUP, DEFAULT_PORT
        if text:
            host, sep, number = text.rpartition(":")
            if not sep or not number.isdigit() or not 0 < int(number) < 65536:
                raise DiscoveryError(f"{ENV_GROUP}={text!r} is not GROUP:PORT (or off)")
            group, port = host, int(number)
        try:
            if not ipaddress.IPv4Address(group).is_multicast:
                raise DiscoveryError(f"{ENV_GROUP}: {group} is not a multicast group (224-239.*)")
        except ipaddress.AddressValueError:
            raise DiscoveryError(f"{ENV_GROUP}: {group!r} is not an IPv4 address") from None
        if interface is not None:
            try:
                ipaddress.IPv4Address(interface)
            except ipaddress.AddressValueError:
                raise DiscoveryError(
                    f"{ENV_INTERFACE}={interface!r} is not an IPv4 address"
                ) from None
        return cls(group, port, interface)

    @property
    def where(self) -> str:
        return f"{self.group}:{self.port}" + (f" on {self.interface}" if self.interface else "")


def announce_interfaces(settings: Settings, bind: str) -> list[str | None]:
    """The interfaces (local addresses; ``None``: the default route's) to announce a table on,
    for a host listening on ``bind``. Empty when IPv4 multicast cannot reach that address."""
    if settings.interface is not None:
        return [settings.interface]
    if bind in ("", "0.0.0.0", "::"):
        return [None, LOOPBACK]
    if bind == "localhost":
        return [LOOPBACK]
    try:
        return [str(ipaddress.IPv4Address(bind))]
    except ipaddress.AddressValueError:
        return []  # an IPv6 address or a host name: not announced


# ---------------------------------------------------------------------------- announcements


@dataclass(frozen=True)
class TableStatus:
    """What the host's lobby tells the beacon before each announcement."""

    seats: int  # seats taken, the host's included
    open: bool  # still waiting for players


def table_tag(config: TableConfig) -> bytes:
    """8 bytes that tell this table from an earlier one on the same key and port."""
    return hashlib.sha256(b"moska-table" + config.table_nonce).digest()[:8]


def announcement(
    identity: Identity,
    config: TableConfig,
    *,
    name: str,
    port: int,
    seats: int,
    seq: int,
    open: bool,
) -> bytes:
    """The signed datagram announcing a table (see the module docstring)."""
    body = {
        TABLE_TAG: FORMAT,
        "key": identity.public_bytes,
        "name": name[:MAX_NAME],
        "preset": config.preset,
        "players": config.players,
        "seats": min(max(seats, 1), config.players),
        "port": port,
        "version": config.version,
        "options": {k: str(config.options[k]) for k in sorted(config.options)},
        "timeout": float(config.timeout),
        "table": table_tag(config),
        "seq": seq,
        "open": open,
    }
    return signed_frame(identity, BEACON, body)


@dataclass(frozen=True)
class FoundTable:
    """A table as its newest verified announcement describes it."""

    address: str  # where the announcement came from
    port: int
    key: bytes
    name: str  # printable
    preset: str
    players: int
    seats: int
    options: dict[str, str]
    timeout: float
    version: int
    table: bytes
    seq: int
    open: bool

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self.key)

    @property
    def endpoint(self) -> str:
        return f"{self.address}:{self.port}"

    @property
    def tag(self) -> bytes:
        return self.table

    @property
    def compatible(self) -> bool:
        """Whether this program speaks the table's protocol version."""
        return self.version == PROTOCOL_VERSION

    @property
    def joinable(self) -> bool:
        return self.open and self.compatible and self.seats < self.players

    def describe(self) -> str:
        """``192.168.1.20:7777  alice  moska, 2 of 4 seats taken  3F9A-11C2``"""
        settings = self.preset
        if self.options:
            settings += " (" + ", ".join(f"{k}={v}" for k, v in self.options.items()) + ")"
        line = (
            f"{self.endpoint}  {self.name or '?'}  {settings}, {self.seats} of {self.players}"
            f" seats taken  {self.fingerprint}"
        )
        if not self.compatible:
            line += f"  [protocol {self.version}; this program speaks {PROTOCOL_VERSION}]"
        return line


def open_beacon(data: bytes, tag: str, spec: Spec) -> tuple[dict[str, object], bytes]:
    """The fields of a signed beacon datagram in the announcement format ``tag`` (checked
    against ``spec``, extra fields allowed) and its verified key; :class:`FrameError` for
    anything else: not a beacon, another format's announcement, malformed, or a signature
    that does not match its key. Every announcement format (tables here, events in
    :mod:`moska_p2p.event.lan`) is opened by this one gate."""
    if not LENGTH_SIZE < len(data) <= MAX_DATAGRAM:
        raise FrameError(f"a datagram of {len(data)} bytes is no announcement")
    if int.from_bytes(data[:LENGTH_SIZE], "big") != len(data) - LENGTH_SIZE:
        raise FrameError("the length prefix does not match the datagram")
    kind, payload, signature = open_frame(bytes(data[LENGTH_SIZE:]))
    if kind != BEACON:
        raise FrameError(f"a {kind} frame is no announcement")
    obj = unpack(payload)  # at most 1 KiB (open_frame checked the cap): bounded
    if not isinstance(obj, dict) or tag not in obj:
        raise FrameError(f"not a {tag} announcement")
    if len(obj) > 32:
        raise FrameError("an announcement with too many fields")
    fields = check_fields(obj, spec, allow_extra=True)
    # Each field read as its checked type (require checks it again, and says so to mypy).
    key = require(fields, "key", bytes)
    if not is_acceptable_public_key(key):
        raise FrameError("an announcement from a key that cannot be a player's")
    if not verify(key, BEACON, payload, signature):
        raise FrameError("an announcement with a bad signature")
    return fields, key


def parse_announcement(data: bytes, address: str) -> FoundTable:
    """A verified table announcement; :class:`FrameError` for anything else (not an
    announcement, an event's, malformed, or a signature that does not match its key)."""
    fields, key = open_beacon(data, TABLE_TAG, _SPEC)
    options = require(fields, "options", dict)
    if not all(isinstance(v, str) for v in options.values()):
        raise FrameError("table options must be text")
    number = fields["timeout"]
    timeout = float(number) if isinstance(number, int | float) else math.nan
    if not math.isfinite(timeout) or timeout <= 0:
        raise FrameError("a table timeout must be a positive number")
    players, seats = require(fields, "players", int), require(fields, "seats", int)
    if seats > players:
        raise FrameError("more seats taken than the table has")
    name, preset = require(fields, "name", str), require(fields, "preset", str)
    port, version = require(fields, "port", int), require(fields, "version", int)
    tag, seq = require(fields, "table", bytes), require(fields, "seq", int)
    is_open = require(fields, "open", bool)
    return FoundTable(
        address=address,
        port=port,
        key=key,
        name=printable(name[:MAX_NAME]),
        preset=printable(preset[:MAX_NAME]),
        players=players,
        seats=seats,
        options={printable(str(k)[:MAX_NAME]): printable(v[:MAX_NAME]) for k, v in options.items()},
        timeout=timeout,
        version=version,
        table=tag,
        seq=seq,
        open=is_open,
    )


class Announced(Protocol):
    """What :class:`Newest` needs of a parsed announcement of any format."""

    @property
    def key(self) -> bytes: ...
    @property
    def port(self) -> int: ...
    @property
    def tag(self) -> bytes: ...  # a new table or event on the same key and port
    @property
    def seq(self) -> int: ...


A = TypeVar("A", bound=Announced)


class Newest(Generic[A]):
    """Datagrams in, the newest state of each announcer out (sans-IO), by its key and port; a
    datagram ``parse`` refuses is counted and otherwise ignored."""

    def __init__(self, parse: Callable[[bytes, str], A]) -> None:
        self.parse = parse
        self.latest: dict[tuple[bytes, int], A] = {}
        self.received = 0
        self.ignored = 0

    def feed(self, data: bytes, address: str) -> A | None:
        self.received += 1
        try:
            found = self.parse(data, address)
        except Exception as error:  # untrusted bytes: whatever fails, the datagram is ignored
            self.ignored += 1
            log.debug("ignored a datagram from %s: %s", address, error)
            return None
        ident = (found.key, found.port)
        old = self.latest.get(ident)
        if old is None or found.tag != old.tag or found.seq > old.seq:
            self.latest[ident] = found
        return found


class Collector:
    """Announcements in, tables out (sans-IO): the newest state of each table, by host key and
    port; a datagram that is not a verified table announcement (an event's too) is counted
    and otherwise ignored."""

    def __init__(self) -> None:
        self.newest = Newest(parse_announcement)

    @property
    def latest(self) -> dict[tuple[bytes, int], FoundTable]:
        return self.newest.latest

    @property
    def received(self) -> int:
        return self.newest.received

    @property
    def ignored(self) -> int:
        return self.newest.ignored

    def feed(self, data: bytes, address: str) -> FoundTable | None:
        return self.newest.feed(data, address)

    def tables(self) -> list[FoundTable]:
        """The open tables, by host name and address."""
        found = [t for t in self.latest.values() if t.open and t.seats < t.players]
        return sorted(found, key=lambda t: (t.name.lower(), t.address, t.port))


# ---------------------------------------------------------------------------- sockets


def _sender(interface: str | None) -> trio.socket.SocketType:
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_TTL, TTL)
        sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_LOOP, 1)
        if interface is not None:
            sock.setsockopt(socket.IPPROTO_IP, socket.IP_MULTICAST_IF, socket.inet_aton(interface))
    except BaseException:
        sock.close()
        raise
    return sock


async def _receiver(settings: Settings) -> trio.socket.SocketType:
    """A socket bound to the group's port and joined to the group on the listening
    interfaces; :class:`DiscoveryError` when it cannot join on any."""
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if hasattr(socket, "SO_REUSEPORT"):  # several listeners on one machine (BSD, macOS)
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            await sock.bind((settings.group, settings.port))  # only this group's datagrams
        except OSError:
            await sock.bind(("", settings.port))  # where binding to a group is not allowed
        interfaces = [settings.interface] if settings.interface else ["0.0.0.0", LOOPBACK]
        group = socket.inet_aton(settings.group)
        joined, errors = 0, []
        for interface in interfaces:
            try:
                membership = group + socket.inet_aton(interface)
                sock.setsockopt(socket.IPPROTO_IP, socket.IP_ADD_MEMBERSHIP, membership)
                joined += 1
            except OSError as error:
                errors.append(f"{interface}: {error.strerror or error}")
        if not joined:
            raise DiscoveryError(
                f"cannot join the multicast group {settings.group} ({'; '.join(errors)})"
            )
    except OSError as error:
        sock.close()
        raise DiscoveryError(f"cannot listen on {settings.where}: {error}") from None
    except BaseException:
        sock.close()
        raise
    return sock


# ---------------------------------------------------------------------------- the two sides


async def send_beacon(
    datagram: Callable[[int, bool], bytes],
    is_open: Callable[[], bool],
    *,
    what: str,
    bind: str = "0.0.0.0",
    settings: Settings | None = None,
    interval: float = BEACON_INTERVAL,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Send ``datagram(seq, open)`` (the signed announcement numbered ``seq``, saying
    whether the thing announced is ``open``) every ``interval`` seconds until ``is_open()``
    says closed or this task is cancelled; either way a last one marked closed goes out. A
    send that fails is logged and tried again at the next beat (the network may come up).
    ``what`` names the announced thing in the log ("the table")."""
    settings = settings or Settings.from_env()
    if not settings.enabled:
        return
    interfaces = announce_interfaces(settings, bind)
    if not interfaces:
        log.info("not announcing %s: %s is not an IPv4 address", what, bind)
        return
    senders: list[tuple[str, trio.socket.SocketType]] = []
    for interface in interfaces:
        try:
            senders.append((interface or "the default interface", _sender(interface)))
        except OSError as error:
            log.info("cannot announce on %s: %s", interface or "the default interface", error)
    if not senders:
        return
    destination = (settings.group, settings.port)
    failing: set[str] = set()

    async def send(data: bytes) -> None:
        for label, sock in senders:
            try:
                await sock.sendto(data, destination)
            except OSError as error:
                if label not in failing:
                    failing.add(label)
                    log.info("cannot announce %s on %s: %s", what, label, error)
            else:
                failing.discard(label)

    closed, seq = False, 0
    try:
        if ready is not None:
            ready(f"announcing {what} on the LAN ({settings.group}:{settings.port})")
        while True:
            seq += 1
            still_open = is_open()
            await send(datagram(seq, still_open))
            if not still_open:
                closed = True
                return
            await trio.sleep(interval)
    finally:
        if not closed:
            with trio.CancelScope(shield=True), trio.move_on_after(0.5):
                await send(datagram(seq + 1, False))
        for _, sock in senders:
            sock.close()


async def announce(
    identity: Identity,
    config: TableConfig,
    *,
    name: str,
    port: int,
    status: Callable[[], TableStatus],
    bind: str = "0.0.0.0",
    settings: Settings | None = None,
    interval: float = BEACON_INTERVAL,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Announce a table every ``interval`` seconds until ``status()`` says it is closed or
    this task is cancelled; either way a last announcement marked closed goes out."""

    def datagram(seq: int, is_open: bool) -> bytes:
        seats = status().seats
        return announcement(
            identity, config, name=name, port=port, seats=seats, seq=seq, open=is_open
        )

    await send_beacon(
        datagram, lambda: status().open, what="the table", bind=bind, settings=settings,
        interval=interval, ready=ready,
    )  # fmt: skip


async def listen_for_beacons(
    wait: float,
    settings: Settings | None,
    feed: Callable[[bytes, str], object],
    enough: Callable[[], bool] | None = None,
) -> None:
    """Hand every datagram heard on the group to ``feed(data, source address)`` for ``wait``
    seconds (or until ``enough()``). :class:`DiscoveryError` when discovery is off or the
    group cannot be joined."""
    settings = settings or Settings.from_env()
    if not settings.enabled:
        raise DiscoveryError(f"LAN discovery is off ({ENV_GROUP}=off)")
    sock = await _receiver(settings)
    try:
        with trio.move_on_after(wait):
            while True:
                try:
                    data, source = await sock.recvfrom(65536)
                except OSError as error:  # nothing more will come on this socket
                    log.info("stopped listening on the LAN: %s", error)
                    break
                feed(bytes(data), str(source[0]))
                if enough is not None and enough():
                    break
    finally:
        sock.close()


@dataclass
class Found:
    """What a listener heard: the open tables and how many datagrams it ignored."""

    tables: list[FoundTable]
    received: int = 0
    ignored: int = 0


async def find_tables(
    wait: float,
    settings: Settings | None = None,
    *,
    enough: Callable[[Collector], bool] | None = None,
) -> Found:
    """Listen for ``wait`` seconds (or until ``enough(collector)``) and return the tables heard
    of that are still open. :class:`DiscoveryError` when discovery is off or the group cannot be
    joined."""
    collector = Collector()
    done = None if enough is None else (lambda: enough(collector))
    await listen_for_beacons(wait, settings, collector.feed, done)
    return Found(collector.tables(), collector.received, collector.ignored)


T = TypeVar("T")


def pick_table(
    tables: Sequence[T], ask: Callable[[str], str], question: str = "join which table?"
) -> T | None:
    """Ask which of several tables (or events: ``question``) to join (``ask`` shows a prompt
    and returns the answer; it may raise :class:`EOFError`); ``None`` when the answer is
    empty, input ends, or three answers in a row are no table's number."""
    for _ in range(3):
        try:
            answer = ask(f"{question} [1-{len(tables)}, empty to give up] ").strip()
        except EOFError:
            return None
        if not answer:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(tables):
            return tables[int(answer) - 1]
    return None
