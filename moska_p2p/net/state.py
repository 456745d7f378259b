"""What a node is made of: its options, its figures, its outcome, and the state every job of
the node shares (:class:`NodeState`).

The node is one object built from one class per job, each in its own module and each
inheriting the one below it: this state, then :mod:`.sessions` (between games),
:mod:`.runner` (one game, then the next), :mod:`.links` (accept, handshake, game links),
:mod:`.lobby` (who may sit, the roster) and :class:`~.node.Node` (the entry points). Every
field lives here, so a reader finds what the node holds in one place.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import trio

from ..crypto.identity import Identity, fingerprint_of
from ..protocol import verdict as v
from ..protocol.config import TableConfig
from ..protocol.session import PeerSession
from ..protocol.tally import Tally
from ..protocol.transcript import Report
from .admission import Admission, Quiet
from .link import Link
from .persist import SavedGame, TranscriptFile
from .port import Player
from .relay_client import RelayClient
from .sync_answers import SyncAnswers
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
class _Lobby:
    """The host's side of the lobby."""

    config: TableConfig
    joined: dict[bytes, tuple[Entry, trio.CancelScope]] = field(default_factory=dict)
    roster: tuple[Entry, ...] | None = None
    start_frame: bytes = b""
    full: trio.Event = field(default_factory=trio.Event)
    error: str = ""
    waiting: int = 0  # joiners' connections in _lobby_join, told why if the lobby closes


class NodeState:
    """The state of one peer, shared by every job of the node (see the module docstring)."""

    def __init__(self, options: NodeOptions) -> None:
        self.o = options
        self.identity = options.identity
        self.me = options.identity.public_bytes
        self.send_timeout = options.connect_timeout
        self.session: PeerSession | None = None
        self.saved: SavedGame | None = None
        self.file: TranscriptFile | None = None
        self.links: dict[bytes, Link] = {}
        self.gone: set[bytes] = set()
        self.ready = trio.Event()
        self.over = trio.Event()
        self.outcome: Outcome | None = None
        self.interrupted = False
        self.port = 0
        self.stats = Stats()
        self._end: v.Finished | v.Stopped | None = None
        self._lobby: _Lobby | None = None
        self._lobby_scope = trio.CancelScope()
        self._turn = trio.Event()  # set whenever the session moved: a player may wake
        self._nursery: trio.Nursery | None = None
        self._table_id = b""
        self._names: dict[bytes, str] = {}
        self._admission = Admission(options.max_pending, options.max_pending_per_address)
        self._quiet = Quiet()
        self._ended = False  # the player was told of the end
        # A session of games (M24): see the module docstring.
        self.closing = trio.Event()  # the table breaks up: links end, nobody redials
        self.tally: Tally | None = None
        self.game_files: list[Path] = []  # this peer's transcripts of the counted games
        self.session_file: Path | None = None
        self._held: list[tuple[bytes, bytes]] = []  # (frame, source) of the next game
        self._votes: dict[tuple[int, bytes], bool] = {}  # (game, key) -> plays the next one
        self._voted = trio.Event()
        self._my_vote: dict[str, Any] | None = None  # our next: game, go
        self._results: dict[bytes, bytes] = {}  # signer -> signed session result
        self._result_in = trio.Event()
        self._my_result: bytes | None = None
        self._left: set[bytes] = set()  # players gone between games
        self._resumed = False  # a game rebuilt after a crash: its session's tally is lost
        self._asking: trio.CancelScope | None = None  # "next game?" is open (Ctrl-C: no)
        # Relays (.relay_client): our connection to the table's relay, its room, its address.
        self.relay_client: RelayClient | None = None
        self._room: bytes | None = None  # a joiner's invite: the table it must be
        self._relay_address: tuple[str, int] | None = None  # as the others dial it
        self._relayed: set[bytes] = set()  # peers whose latest link went through a relay
        self._upgrading: set[bytes] = set()  # earlier peers whose direct address we retry
        self.sync_answers = SyncAnswers()  # what we resend to whom, bounded (.runner)

    def _conclude(self, outcome: Outcome) -> None:
        if self.outcome is not None:
            return
        self.outcome = outcome
        if outcome.code and outcome.verdict is None and outcome.finished is None:
            tell = self.o.error if outcome.code == EXIT_FAILED and self.o.error else self.o.echo
            tell(outcome.message)
        if self.o.stats is not None:
            for link in self.links.values():  # still open: count what they sent so far
                self.stats.frames_out += link.frames_out
                self.stats.bytes_out += link.bytes_out
            self.stats.code = outcome.code
            self.stats.seat = self.session.my_seat if self.session else -1
            self.stats.max_rss_kb = _peak_rss_kb()
            try:
                self.o.stats.write_text(json.dumps(asdict(self.stats)) + "\n")
            except OSError as error:  # out of descriptors, a full disk: the game is still over
                log.warning("cannot write the statistics to %s: %s", self.o.stats, error)

    def _path_note(self, verdict: v.Verdict) -> str:
        """What a verdict of silence cannot tell apart (protocol §23): a culprit this peer
        reached only through a relay may be honest, its frames held back by the relay. The
        verdict says so itself, signed (its ``relayed``)."""
        return v.relayed_note(verdict)

    def _path_is(self, key: bytes, relayed: bool) -> None:
        """The latest link to ``key`` goes through a relay (or not): the session is told,
        so that a verdict it signs says which paths were relayed (§7.11)."""
        if relayed:
            self._relayed.add(key)
        else:
            self._relayed.discard(key)
        self._tell_paths()

    def _tell_paths(self) -> None:
        session = self.session
        if session is not None and hasattr(session, "set_relayed_paths"):
            others = set(session.peers) - {session.me}
            session.set_relayed_paths(self._relayed & others)

    def _result(self) -> Outcome:
        assert self.outcome is not None
        return self.outcome

    def _seat_name(self, seat: int) -> str:
        assert self.session is not None
        return seat_name(self.session, self._names, seat)

    def _seat_label(self, seat: int) -> str:
        assert self.session is not None
        return seat_label(self.session, self._names, seat)

    def _label(self, key: bytes) -> str:
        session = self.session
        if session is not None and key in session.seat_of:
            return self._seat_label(session.seat_of[key])
        return f"{_printable(self._names.get(key, 'a peer'))} ({fingerprint_of(key)})"


def seat_name(session: PeerSession, names: Mapping[bytes, str], seat: int) -> str:
    """The name seat ``seat`` goes by, safe to print: the one its player gave in its hello,
    else the one ``names`` (the roster's) has for its key."""
    key = session.seats[seat]
    return _printable(session.peers[key].name or names.get(key, ""))


def seat_label(session: PeerSession, names: Mapping[bytes, str], seat: int) -> str:
    """``seat 2 (alice, 3F9A-11C2)``: how a player's or a spectator's output names a seat."""
    key = session.seats[seat]
    return f"seat {seat} ({seat_name(session, names, seat)}, {fingerprint_of(key)})"


def _reason(error: BaseException) -> str:
    """A short readable reason for an exception (the first of a group)."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, trio.TooSlowError):
        return "timed out"
    text = str(error)
    return text if text else type(error).__name__


def _peak_rss_kb() -> int:
    """This process's peak resident memory in kB (0 where the OS does not tell)."""
    if _resource is None:  # pragma: no cover - not on Unix
        return 0
    return int(_resource.getrusage(_resource.RUSAGE_SELF).ru_maxrss)


def _printable(name: str) -> str:
    """A name from the network, safe to print: no control characters (no terminal escapes)."""
    return "".join(c if c.isprintable() else "?" for c in name)


def host_port(host: str, port: int) -> str:
    """``HOST:PORT`` as ``moska join`` reads it back: an IPv6 address in brackets
    (``[::1]:7777``), since its own colons would otherwise swallow the port."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
