"""Finding a club event on the LAN: the director's signed multicast beacon while its entry is
open, and the listener that ``moska tournament enter`` with no address runs.

The same group, port, interfaces and datagram as a table's beacon
(:mod:`moska_p2p.net.discovery`: one signed frame of the kind ``beacon``), in a second
announcement format: a map with the key ``"moska-event"`` (the format, 1) where a table's has
``"moska-table"``. A table listener drops an event's announcement and an event listener a
table's (and a datagram carrying both keys), like any malformed datagram.

``key``      the director's public key; the signature is checked against it
``name``     the event's name (at most 80 characters, shown with control characters replaced)
``preset``, ``seats`` (per table), ``rounds``, ``games`` (a round), ``final`` (the final
             table's size, 0: none), ``bots`` (whether bots may enter)
``wanted``   entrants the entry closes with; ``entered``: how many have entered so far
``port``     where the director listens; the address is the datagram's source
``event``    8 bytes of SHA-256 of the event's id: a new event on the same key and port, and
             what the director's first message must hash to
``seq``      counts the director's announcements of this event: the highest is the newest
``open``     false in the last announcement, when the entry closed

The signature proves who announced an event, not where it is: anyone can replay a signed
announcement from another address. So an entrant that found the event here pins the
announcement: the director answering at the address must send the announced key, and an
event whose id has the announced tag (:func:`pin_refusal`), or the entrant enters nothing.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from dataclasses import dataclass

from ..crypto.identity import PUBLIC_KEY_SIZE, Identity, fingerprint_of, fingerprint_or_unknown
from ..net import (
    BEACON_INTERVAL,
    TABLE_TAG,
    Newest,
    Settings,
    listen_for_beacons,
    open_beacon,
    printable,
    send_beacon,
)
from ..protocol.frames import BEACON, Field, FrameError, Spec, require, signed_frame
from ..tournament import EventSpec

log = logging.getLogger(__name__)

TAG = "moska-event"
FORMAT = 1
MAX_EVENT_NAME = 80
MAX_ENTRANTS = 1000

_SPEC: Spec = {
    TAG: int,
    "key": Field(bytes, length=PUBLIC_KEY_SIZE),
    "name": str,
    "preset": str,
    "seats": Field(int, minimum=2, maximum=6),
    "rounds": Field(int, minimum=1, maximum=1000),
    "games": Field(int, minimum=1, maximum=1000),
    "final": Field(int, minimum=0, maximum=6),
    "bots": bool,
    "wanted": Field(int, minimum=2, maximum=MAX_ENTRANTS),
    "entered": Field(int, minimum=0, maximum=MAX_ENTRANTS),
    "port": Field(int, minimum=1, maximum=65535),
    "event": Field(bytes, length=8),
    "seq": Field(int, minimum=0),
    "open": bool,
}


def event_tag(event: bytes) -> bytes:
    """8 bytes that tell this event from another on the same key and port."""
    return hashlib.sha256(b"moska-event" + event).digest()[:8]


def event_announcement(
    identity: Identity,
    spec: EventSpec,
    event: bytes,
    *,
    port: int,
    wanted: int,
    entered: int,
    seq: int,
    open: bool,
) -> bytes:
    """The signed datagram announcing an event (see the module docstring)."""
    body = {
        TAG: FORMAT,
        "key": identity.public_bytes,
        "name": spec.name[:MAX_EVENT_NAME],
        "preset": spec.preset,
        "seats": spec.seats_per_table,
        "rounds": spec.rounds,
        "games": spec.games_per_round,
        "final": spec.final_size,
        "bots": spec.bots_allowed,
        "wanted": wanted,
        "entered": min(max(entered, 0), wanted),
        "port": port,
        "event": event_tag(event),
        "seq": seq,
        "open": open,
    }
    return signed_frame(identity, BEACON, body)


@dataclass(frozen=True)
class FoundEvent:
    """An event as its director's newest verified announcement describes it."""

    address: str  # where the announcement came from
    port: int
    key: bytes
    name: str  # printable
    preset: str
    seats: int
    rounds: int
    games: int
    final: int
    bots: bool
    wanted: int
    entered: int
    event: bytes  # the tag of the event's id
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
        return self.event

    @property
    def enterable(self) -> bool:
        return self.open and self.entered < self.wanted

    def describe(self) -> str:
        """``192.168.1.20:41234  club evening  moska, 3 rounds at 4 a table + a final of 4,
        5 of 12 entered  3F9A-11C2...``"""
        final = f" + a final of {self.final}" if self.final else ""
        rounds = f"{self.rounds} round{'s' if self.rounds != 1 else ''}"
        line = (
            f"{self.endpoint}  {self.name or '?'}  {self.preset}, {rounds} at {self.seats} a"
            f" table{final}, {self.entered} of {self.wanted} entered  {self.fingerprint}"
        )
        return line if self.bots else line + "  [no bots]"


def parse_event_announcement(data: bytes, address: str) -> FoundEvent:
    """A verified event announcement; :class:`FrameError` for anything else (not an
    announcement, a table's, malformed, or a signature that does not match its key)."""
    fields, key = open_beacon(data, TAG, _SPEC)
    if TABLE_TAG in fields:
        raise FrameError("an announcement of a table and an event at once")
    wanted, entered = require(fields, "wanted", int), require(fields, "entered", int)
    if entered > wanted:
        raise FrameError("more entrants entered than the event wants")
    seats, final = require(fields, "seats", int), require(fields, "final", int)
    if final == 1:
        raise FrameError("a final table of one")
    name, preset = require(fields, "name", str), require(fields, "preset", str)
    if not name:
        raise FrameError("an event with no name")
    return FoundEvent(
        address=address,
        port=require(fields, "port", int),
        key=key,
        name=printable(name[:MAX_EVENT_NAME]),
        preset=printable(preset[:MAX_EVENT_NAME]),
        seats=seats,
        rounds=require(fields, "rounds", int),
        games=require(fields, "games", int),
        final=final,
        bots=require(fields, "bots", bool),
        wanted=wanted,
        entered=entered,
        event=require(fields, "event", bytes),
        seq=require(fields, "seq", int),
        open=require(fields, "open", bool),
    )


def event_collector() -> Newest[FoundEvent]:
    """What a listener keeps: the newest announcement of each event."""
    return Newest(parse_event_announcement)


def open_events(heard: Newest[FoundEvent]) -> list[FoundEvent]:
    """The events whose entry is still open, by name and address."""
    found = [e for e in heard.latest.values() if e.enterable]
    return sorted(found, key=lambda e: (e.name.lower(), e.address, e.port))


def running_event(heard: Newest[FoundEvent], event: bytes, keys: set[bytes]) -> FoundEvent | None:
    """The newest announcement of the event ``event`` (its id) by one of ``keys`` (its
    director, or a successor), open or not: where an entrant of it, started again with no
    address, finds it now."""
    tag = event_tag(event)
    found = [e for e in heard.latest.values() if e.event == tag and e.key in keys]
    return max(found, key=lambda e: e.seq, default=None)


async def find_running_event(
    wait: float, event: bytes, keys: set[bytes], settings: Settings | None = None
) -> FoundEvent | None:
    """Listen up to ``wait`` seconds for the event ``event`` announced by one of ``keys``
    (:func:`running_event`); None when it is not heard."""
    heard = event_collector()
    await listen_for_beacons(
        wait, settings, heard.feed, lambda: running_event(heard, event, keys) is not None
    )
    return running_event(heard, event, keys)


@dataclass
class FoundEvents:
    """What a listener heard: the open events and how many datagrams it ignored (tables'
    announcements among them)."""

    events: list[FoundEvent]
    received: int = 0
    ignored: int = 0


async def find_events(
    wait: float,
    settings: Settings | None = None,
    *,
    enough: Callable[[Newest[FoundEvent]], bool] | None = None,
) -> FoundEvents:
    """Listen for ``wait`` seconds (or until ``enough(heard)``) and return the events heard
    of whose entry is still open. :class:`~moska_p2p.net.discovery.DiscoveryError` when
    discovery is off or the group cannot be joined."""
    heard = event_collector()
    done = None if enough is None else (lambda: enough(heard))
    await listen_for_beacons(wait, settings, heard.feed, done)
    return FoundEvents(open_events(heard), heard.received, heard.ignored)


@dataclass(frozen=True)
class EntryStatus:
    """What the director tells the beacon before each announcement."""

    entered: int
    open: bool  # the entry still takes entrants
    running: bool = False  # the event goes on after its entry closed (announced as closed)


async def announce_event(
    identity: Identity,
    spec: EventSpec,
    event: bytes,
    *,
    port: int,
    wanted: int,
    status: Callable[[], EntryStatus],
    bind: str = "0.0.0.0",
    settings: Settings | None = None,
    interval: float = BEACON_INTERVAL,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Announce an event every ``interval`` seconds while ``status()`` says its entry is
    open, or the event still runs (then marked closed: it takes nobody new, but an entrant
    that crashed finds where it is, :func:`running_event`), until this task is cancelled;
    either way a last announcement marked closed goes out."""

    def datagram(seq: int, announcing: bool) -> bytes:
        now = status()
        return event_announcement(
            identity, spec, event, port=port, wanted=wanted, entered=now.entered, seq=seq,
            open=announcing and now.open,
        )  # fmt: skip

    def announcing() -> bool:
        now = status()
        return now.open or now.running

    await send_beacon(
        datagram, announcing, what="the event", bind=bind, settings=settings,
        interval=interval, ready=ready,
    )  # fmt: skip


@dataclass(frozen=True)
class Pin:
    """What an entrant that found its event on the LAN holds the director to: the announced
    key, and the tag of the announced event's id."""

    key: bytes
    event: bytes

    @classmethod
    def of(cls, found: FoundEvent) -> Pin:
        return cls(found.key, found.event)


def pin_refusal(pin: Pin | None, key: object, event: bytes) -> str | None:
    """Why the director that answered (its ``key``, the id of the ``event`` it runs) is not
    the one that announced the event (``None``: it is, or nothing was pinned). A replayed
    announcement points at another director, or another event of the same one."""
    if pin is None:
        return None
    if key != pin.key:
        return (
            f"the director that answered is {fingerprint_or_unknown(key)}, not"
            f" {fingerprint_of(pin.key)}, which announced the event: not entered (an"
            " announcement replayed from another address?)"
        )
    if event_tag(event) != pin.event:
        return "the director runs another event than it announced: not entered"
    return None
