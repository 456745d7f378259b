"""What every part of a node shares: how it runs (:class:`NodeOptions`), its figures
(:class:`Stats`), how it ended (:class:`Outcome`), the host's side of the lobby
(:class:`HostLobby`, the lobby's and read by the spectator host), and how a seat, an error and
an address are named for people.

The node's state is held by the part that owns it (:mod:`.node` lists the parts): the game
and its events by the runner, the links by the mesh, the lobby by the lobby. This module holds
no state of its own and imports no part, so every part may import it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import trio

from ..crypto.identity import Identity, fingerprint_of
from ..protocol import verdict as v
from ..protocol.config import TableConfig
from ..protocol.frames import printable
from ..protocol.session import PeerSession
from ..protocol.tally import Tally
from ..protocol.transcript import Report
from .port import Player
from .wire import Entry

log = logging.getLogger("moska_p2p.net")

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130

MAX_PENDING = 16
"""Connections at most that have not proved their key yet (a game needs a handful)."""

MAX_PENDING_PER_ADDRESS = 4
"""Of those, at most this many from one address."""

HANDSHAKE_TIMEOUT = 5.0
"""Seconds a connection to our port has to prove its key."""

try:  # imported now: at the end of a game the descriptors may be exhausted
    import resource as _resource
except ImportError:  # pragma: no cover - not on Unix
    _resource = None  # type: ignore[assignment]


def _echo(text: str) -> None:
    print(text, flush=True)


@dataclass
class NodeOptions:
    """How a peer runs (the ``host``/``join`` command line, or a test)."""

    identity: Identity
    player: Player  # who plays the seat (moska_p2p.table.networked)
    transcript: Path
    name: str = "player"
    bind: str = "0.0.0.0"
    listen_port: int = 0
    connect_timeout: float = 10.0  # a dial plus its handshake
    lobby_wait: float = 600.0  # how long a table may take to fill
    echo: Callable[[str], None] = _echo
    error: Callable[[str], None] | None = None  # a failure before any game; None: echo
    handle_signals: bool = False  # Ctrl-C sends a signed leave (the CLI; not in tests)
    stats: Path | None = None  # write timing and traffic figures here (JSON) at the end
    announce: bool = False  # a host announces its open table on the LAN (.discovery)
    known_peers: Path | None = None  # trust on first use (.known); None: no check
    allow_aborters: bool = False  # a host seats keys its known-peers file names as aborters
    handshake_timeout: float = HANDSHAKE_TIMEOUT  # a stranger's time to prove its key
    max_pending: int = MAX_PENDING  # unauthenticated connections at most...
    max_pending_per_address: int = MAX_PENDING_PER_ADDRESS  # ...and from one address
    results: Callable[[Tally], list[str]] | None = None  # a session's results table (cli)
    fresh_player: Callable[[], Player] | None = None  # a new player per later game; None: same
    relay: tuple[str, int] | None = None  # a relay where the table's peers meet (.relay)
    listen: bool = True  # False: no port; the others reach this peer through the relay
    relay_for_others: int | None = None  # a host also runs a relay on this port (0: any)
    spectators: int = 4  # a host streams its table to this many spectators at most (0: none)


@dataclass
class Stats:
    """Figures for ``scripts/bench_net.py``: wall-clock times (``time.time()``) and traffic."""

    players: int = 0
    seat: int = -1
    t_start: float | None = None
    t_seated: float | None = None
    t_first_turn: float | None = None
    t_end: float | None = None
    moves: int = 0
    links: int = 0  # game connections made (a reconnection counts again)
    frames_in: int = 0
    bytes_in: int = 0
    frames_out: int = 0
    bytes_out: int = 0
    max_rss_kb: int = 0
    code: int = -1
    accept_errors: int = 0  # accepts that failed (out of descriptors...)
    refused_connections: int = 0  # closed at once: over the caps on unauthenticated ones
    upgrades: int = 0  # relayed links that a direct one replaced (.links, "Paths")


@dataclass
class Outcome:
    """How the game ended for this peer: the exit code and what to say."""

    code: int
    message: str
    finished: v.Finished | None = None
    verdict: v.Verdict | None = None
    report: Report | None = None
    transcript: Path | None = None


@dataclass
class HostLobby:
    """The host's side of the lobby."""

    config: TableConfig
    joined: dict[bytes, tuple[Entry, trio.CancelScope]] = field(default_factory=dict)
    roster: tuple[Entry, ...] | None = None
    start_frame: bytes = b""
    full: trio.Event = field(default_factory=trio.Event)
    error: str = ""
    waiting: int = 0  # joiners' connections in Lobby.seat, told why if the lobby closes


def seat_name(session: PeerSession, names: Mapping[bytes, str], seat: int) -> str:
    """The name seat ``seat`` goes by, safe to print: the one its player gave in its hello,
    else the one ``names`` (the roster's) has for its key."""
    key = session.seats[seat]
    return printable(session.peers[key].name or names.get(key, ""))


def seat_label(session: PeerSession, names: Mapping[bytes, str], seat: int) -> str:
    """``seat 2 (alice, 3F9A-11C2)``: how a player's or a spectator's output names a seat."""
    key = session.seats[seat]
    return f"seat {seat} ({seat_name(session, names, seat)}, {fingerprint_of(key)})"


def reason_of(error: BaseException) -> str:
    """A short readable reason for an exception (the first of a group)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, trio.TooSlowError):
        return "timed out"
    text = str(error)
    return text if text else type(error).__name__


def peak_rss_kb() -> int:
    """This process's peak resident memory in kB (0 where the OS does not tell)."""
    if _resource is None:  # pragma: no cover - not on Unix
        return 0
    return int(_resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss)



def host_port(host: str, port: int) -> str:
    """``HOST:PORT`` as ``moska join`` reads it back: an IPv6 address in brackets
    (``[::1]:7777``), since its own colons would otherwise swallow the port."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
