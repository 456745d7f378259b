"""A peer on the network: one :class:`~moska_p2p.protocol.session.PeerSession` driven over a
full mesh of TCP connections, with trio.

The session decides everything; this module only moves bytes and keeps time:

* **Lobby.** The table's opener (the host) listens; each joiner listens too, dials the host and
  sends a signed ``join`` (its key, name and listening port). When the table is full the host
  sends every joiner a signed ``start`` (settings and roster with addresses, in joining order).
  The host is no authority: it relays nothing it could alter (game frames are signed by their
  authors), and the sessions check that every peer got the same settings and roster.
* **Mesh.** The later peer in the roster dials the earlier one; both prove their keys with a
  mutual challenge-response (a ``link`` answered by a ``welcome``, see :mod:`.wire`); the
  joiner's lobby connection to the host becomes their game link. Every link starts with a
  ``sync`` both ways, so a frame sent while a link was down is never lost: the other side asks
  for it.
* **Strangers.** Until the other end has proved its key, a connection may send frames of a few
  KiB only, must finish its handshake within :attr:`NodeOptions.handshake_timeout`, and counts
  against a cap on unauthenticated connections (in all, and per address); a connection beyond
  the caps is closed at once. Accept errors (out of file descriptors) are logged once per burst
  and backed off, and shed the oldest unauthenticated connection: the game goes on.
* **Trust on first use.** With :attr:`NodeOptions.known_peers` the host and the joiners check
  the table's names against the keys they had at this host before (:mod:`.known`), and refuse
  a changed key loudly; ``expect`` (``join --expect``) checks the host's key out of band.
* **Time.** A ticker calls ``session.tick`` every :data:`TICK` seconds, so a peer that stops
  answering ends the game with a timeout verdict; every network wait has a bound. A gap between
  two ticks over :data:`MAX_TICK_GAP` is this peer's own suspension, not anyone's silence: the
  session (``max_tick_gap``) starts counting again.
* **Failures.** Whatever goes wrong on one connection closes that connection and is logged; the
  later peer redials with backoff. A peer that crashes and is started again resumes from the
  files of :mod:`.persist` and catches up through the ``sync`` exchange.
* **The seat.** The node plays nothing itself: a :class:`Player` (the table layer's, see
  :mod:`moska_p2p.table.networked`: a bot or a person) gets a :class:`GamePort` when the game
  begins, waits there for its turns and plays or leaves through it; the node tells it the
  seats, every move and the end. So this module imports nothing from the bots, the screen or
  the command line.
* **Sessions** (RULES M24, ``host --games N``). The table stays together for N games over the
  same mesh: the lobby and the links are reused, and each game is a fresh
  :class:`~moska_p2p.protocol.session.PeerSession` (its own deck, shuffle, transcript and
  table id, chained to the game before by its settings, see :mod:`moska_p2p.protocol.config`).
  Reusing the links is sound because a link only carries signed frames that each session
  checks against its own game id (a frame of game 1 is "another game" in game 2), and it is
  simpler than a new lobby per game: nobody re-dials, re-proves a key or re-draws seats. Between
  games every peer asks its player ("next game?", :meth:`Player.next_game`) and sends its
  answer (``next``) on every link; all must say yes, and one no (or a peer silent for the
  table's timeout) ends the session for everyone with the games so far counted. Frames of
  the next game that arrive before this peer has started it are held (a bounded few). At the
  end every peer signs the session's result (:mod:`moska_p2p.protocol.tally`), sends it on
  every link (a ``session-result`` frame, handed to no session) and writes everyone's next to
  its transcripts. A peer resumed after a crash finishes its game, not the session.
* **Shutdown.** On Ctrl-C (SIGINT/SIGTERM with ``handle_signals``; when the player agrees)
  the peer sends a signed ``leave``; at any end it says ``bye`` on every link and waits
  (boundedly) for the others to close, so that its last frames are read before its sockets close.
"""

from __future__ import annotations

import errno
import json
import logging
import math
import secrets
import signal
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NoReturn, Protocol

import trio

from ..crypto.identity import Identity, fingerprint_of, parse_fingerprint
from ..engine import Move, View
from ..protocol import verdict as v
from ..protocol.config import ConfigError, TableConfig, lobby_id, session_id, table_id
from ..protocol.frames import SESSION_RESULT, FrameError, open_frame
from ..protocol.session import RESULT, PeerSession, drbg
from ..protocol.tally import (
    GameRecord,
    Tally,
    TallyError,
    file_digest,
    next_dealer,
    open_result,
    sign_result,
    write_session_file,
)
from ..protocol.transcript import Report, verify_transcript
from .known import KnownPeers, KnownPeersError
from .link import Link
from .persist import SavedGame, SaveError, TranscriptFile, read_frames
from .wire import (
    BYE,
    DIALER,
    HI,
    JOIN,
    LINK,
    LISTENER,
    MAX_NAME,
    NEXT,
    REFUSE,
    START,
    SYNC,
    WELCOME,
    ClosedError,
    Entry,
    FrameStream,
    HandshakeError,
    NetMessage,
    check_link_proof,
    link_proof,
    net_frame,
)

log = logging.getLogger("moska_p2p.net")

TICK = 0.5
"""Seconds between two ``session.tick`` calls."""

MAX_TICK_GAP = 6 * TICK
"""A longer gap between two ticks is taken for a suspension of this peer (SIGSTOP, a laptop
lid), not for anyone's silence (issue 11 item 7)."""

MIN_BACKOFF = 0.05
MAX_BACKOFF = 1.0
"""Redial delays: doubling from the first to the last, so a restarted peer is found fast."""

EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130

MAX_PENDING = 16
"""Connections at most that have not proved their key yet (a game needs a handful)."""

MAX_PENDING_PER_ADDRESS = 4
"""Of those, at most this many from one address."""

HANDSHAKE_TIMEOUT = 5.0
"""Seconds a connection to our port has to prove its key."""

REFUSE_WAIT = 5.0
"""Seconds at most to hand a ``refuse`` to a peer before closing. The frame is small and our
send buffer empty, so it never waits unless the peer stops reading; a generous bound (not 1 s)
so a loaded machine's stall between arming the timer and sending cannot drop the reason."""

LOBBY_CLOSE_WAIT = 5.0
"""Seconds at most a host that gives up its lobby waits for its joiners to be told why."""

ACCEPT_BACKOFF = (0.05, 1.0)
"""First and last delay after a failed accept (doubling): out of descriptors, we wait."""

ACCEPT_QUIET = 10.0
"""Seconds without a failed accept that end a burst of them (one warning per burst)."""

HELD_FRAMES = 64
HELD_BYTES = 1 << 20
"""Frames of a session's next game held, at most, until this peer starts it."""

RESULT_WAIT = 10.0
"""Seconds at most to wait for the others' signed session results at the end of a session."""

_RESOURCE_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}

try:  # imported now: at the end of a game the descriptors may be exhausted
    import resource as _resource
except ImportError:  # pragma: no cover - not on Unix
    _resource = None  # type: ignore[assignment]


def _echo(text: str) -> None:
    print(text, flush=True)


class Player(Protocol):
    """Who plays this peer's seat: the table layer's side of the node (it lives above the
    network: :mod:`moska_p2p.table.networked`). Every method is called in the trio thread."""

    async def play(self, port: GamePort) -> None:
        """Play the game through ``port``, started when the game begins; may return early
        (after leaving). Cancelled when the node stops."""
        ...

    def seated(self, names: Sequence[str], seat: int) -> None:
        """The seats' names (printable) and this peer's seat, once the seats are drawn."""
        ...

    def moved(self, seat: int, move: str) -> None:
        """``seat`` played ``move`` (any seat, this one too), in the order of the game."""
        ...

    def ended(self, end: v.Finished | v.Stopped, moves: int) -> None:
        """The game is over (once): close whatever is open (a prompt), show the end."""
        ...

    def interrupt(self) -> bool:
        """Ctrl-C during the game. True: leave now; False: the player asks first (and, on a
        yes, leaves by :meth:`GamePort.leave`)."""
        ...

    async def closed(self) -> None:
        """Return when the player has shown the end (the node waits a few seconds at most)."""
        ...

    def next_game(self, summary: str) -> bool:
        """Between two games of a session: play the next one? ``summary`` is the session's
        score line. Called in a worker thread (a person may take a while to answer), within
        the table's timeout; a bot always continues, a person is asked (default no)."""
        ...


class GamePort:
    """What a :class:`Player` may do at the table: wait for its turn, see its view, play,
    leave. The node is the dealer: it checks nothing here the session does not check."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._game = node.session  # a port serves one game of a session

    @property
    def seat(self) -> int:
        return self._session.my_seat

    @property
    def timeout(self) -> float:
        """The table's timeout: a seat that does not move within it loses by the others'
        verdict, so a player's own budget must be shorter."""
        return self._session.config.timeout

    @property
    def over(self) -> bool:
        return self._node.over.is_set() or self._node.session is not self._game

    @property
    def my_turn(self) -> bool:
        return not self.over and self._session.my_turn and self._session.game is not None

    @property
    def _session(self) -> PeerSession:
        session = self._node.session
        assert session is not None
        return session

    async def turn(self) -> bool:
        """Wait until it is this seat's turn (True) or the game is over (False)."""
        node = self._node
        while not self.over:
            if self.my_turn:
                return True
            node._turn = trio.Event()
            await node._turn.wait()
        return False

    def view(self) -> View:
        """This seat's view now, of a copy of the game: a player may read it (search it, for
        a hint) in another thread while the game moves on."""
        game = self._session.game
        assert game is not None
        return game.copy().view(self.seat)

    def legal_moves(self) -> list[Move]:
        return self._session.legal_moves()

    def state(self) -> str:
        """A token for the game's state now: :meth:`play` refuses a move chosen in another."""
        game = self._session.game
        assert game is not None
        return game.state_hash()

    def play(self, move: Move, state: str) -> bool:
        """Play ``move``, chosen in ``state``; False (nothing played) if the game moved on
        meanwhile. Raises :class:`~moska_p2p.engine.IllegalMove` (or the session's
        ``LocalError``) for a move the game refuses."""
        if not self.my_turn or self.state() != state:
            return False
        node = self._node
        node._handle(self._session.play(move, trio.current_time()))
        return True

    def leave(self, reason: str, *, interrupted: bool = False) -> None:
        """Leave the table with a signed ``leave`` saying ``reason`` (a forfeit: the others'
        verdicts name this seat). ``interrupted``: the person asked to (exit code 130)."""
        if interrupted:
            self._node.interrupted = True
        self._node._leave(reason)


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
    handshake_timeout: float = HANDSHAKE_TIMEOUT  # a stranger's time to prove its key
    max_pending: int = MAX_PENDING  # unauthenticated connections at most...
    max_pending_per_address: int = MAX_PENDING_PER_ADDRESS  # ...and from one address
    results: Callable[[Tally], list[str]] | None = None  # a session's results table (cli)
    fresh_player: Callable[[], Player] | None = None  # a new player per later game; None: same


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


class Node:
    """One peer: lobby, mesh, ticker, bot and files (see the module docstring).

    Use one of :meth:`host`, :meth:`join` or :meth:`resume` once; each returns the
    :class:`Outcome` (also kept in :attr:`outcome`).
    """

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
        self._admission = _Admission(options.max_pending, options.max_pending_per_address)
        self._quiet = _Quiet()
        self._ended = False  # the player was told of the end
        # A session of games (M24): see the module docstring.
        self.closing = trio.Event()  # the table breaks up: links end, nobody redials
        self.tally: Tally | None = None
        self.game_files: list[Path] = []  # this peer's transcripts of the counted games
        self.session_file: Path | None = None
        self._held: list[tuple[bytes, bytes]] = []  # (frame, source) of the next game
        self._votes: dict[tuple[int, bytes], bool] = {}  # (game, key) -> plays the next one
        self._voted = trio.Event()
        self._my_vote: bytes | None = None
        self._results: dict[bytes, bytes] = {}  # signer -> signed session result
        self._result_in = trio.Event()
        self._my_result: bytes | None = None
        self._left: set[bytes] = set()  # players gone between games
        self._resumed = False  # a game rebuilt after a crash: its session's tally is lost
        self._asking: trio.CancelScope | None = None  # "next game?" is open (Ctrl-C: no)

    # ------------------------------------------------------------------ entry points

    async def host(
        self,
        config: TableConfig,
        port: int,
        *,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> Outcome:
        """Open a table on ``port`` (0: any free port), wait for it to fill, play it out."""
        listeners = await self._listen(port)
        if listeners is None:
            return self._result()
        lobby = self._lobby = _Lobby(config)
        self._announce(config)
        task_status.started(self.port)

        async def body() -> None:
            with self._lobby_scope, trio.move_on_after(self.o.lobby_wait):
                async with trio.open_nursery() as waiting:
                    if self.o.announce:
                        waiting.start_soon(self._beacon, lobby)
                    await lobby.full.wait()
                    waiting.cancel_scope.cancel()  # the beacon says "closed" and stops
            if self.session is not None:
                await self._play_out()
            elif self.interrupted:
                self._conclude(Outcome(EXIT_INTERRUPTED, "interrupted before the game started"))
            else:
                reason = lobby.error or (
                    f"the table did not fill within {self.o.lobby_wait:g} s"
                    f" ({len(lobby.joined) + 1} of {config.players} players)"
                )
                await self._close_lobby(lobby, reason)
                self._conclude(Outcome(EXIT_FAILED, reason))

        return await self._run(listeners, body)

    async def join(
        self,
        host: str,
        port: int,
        *,
        expect: bytes | str | None = None,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> Outcome:
        """Join the table at ``host:port``, wait for it to fill, play it out. ``expect``: the
        host key that must answer there (the key that announced the table on the LAN, 32
        bytes), or its full fingerprint (``join --expect``)."""
        listeners = await self._listen(self.o.listen_port)
        if listeners is None:
            return self._result()
        task_status.started(self.port)

        async def body() -> None:
            entered: tuple[FrameStream, SavedGame] | None = None
            with self._lobby_scope:
                try:
                    entered = await self._enter_lobby(host, port, expect)
                except (
                    OSError,
                    trio.TooSlowError,
                    trio.BrokenResourceError,
                    HandshakeError,
                    FrameError,
                    ConfigError,
                    KnownPeersError,
                ) as e:
                    reason = _reason(e)
                    if isinstance(e, ConnectionRefusedError):
                        reason = "connection refused (no table is open at that address)"
                    elif isinstance(e, trio.TooSlowError):
                        reason = "no answer in time (the table did not fill, or no host there)"
                    self._conclude(Outcome(EXIT_FAILED, f"could not join {host}:{port}: {reason}"))
            if entered is not None:
                stream, saved = entered
                self._begin(saved, None, {0: stream})
                await self._play_out()
            elif self.outcome is None:
                self._conclude(Outcome(EXIT_INTERRUPTED, "interrupted before the game started"))

        return await self._run(listeners, body)

    async def resume(
        self,
        saved: SavedGame,
        *,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> Outcome:
        """Rebuild the session of a game this peer was playing when it stopped, listen where
        it listened, reconnect, catch up and play it out."""
        try:
            frames = read_frames(saved.transcript, self.me)
        except SaveError as error:
            self._conclude(Outcome(EXIT_FAILED, f"cannot resume: {error}"))
            return self._result()
        listeners = await self._listen(saved.roster[saved.me].port)
        if listeners is None:
            return self._result()
        task_status.started(self.port)

        async def body() -> None:
            self._resumed = True
            self._begin(saved, frames, {})
            await self._play_out()

        return await self._run(listeners, body)

    async def _run(
        self, listeners: list[trio.SocketListener], body: Callable[[], Awaitable[None]]
    ) -> Outcome:
        """Serve our port (and Ctrl-C) while ``body`` runs; everything stops when it returns."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._serve, listeners)
                if self.o.handle_signals:
                    nursery.start_soon(self._signals)
                await body()
                nursery.cancel_scope.cancel()
        finally:
            if self.file is not None:
                self.file.close()
        return self._result()

    # ------------------------------------------------------------------ the game

    def _begin(
        self,
        saved: SavedGame,
        frames: list[bytes] | None,
        first: dict[int, FrameStream],
        *,
        later: bool = False,
    ) -> None:
        """Make (or rebuild) the session, save what a restart needs, start the game's tasks.
        ``later``: a session's next game, over the links of the first (whose table id the
        links stay bound to)."""
        assert self._nursery is not None
        self.saved = saved
        keys = [e.key for e in saved.roster]
        self._names = {e.key: e.name for e in saved.roster}
        if not later:
            self._table_id = table_id(saved.config, keys)
        self.send_timeout = min(self.o.connect_timeout, saved.config.timeout)
        now = trio.current_time()
        self.stats.players = saved.config.players
        self.stats.t_start = time.time()
        if frames is None:
            saved.save()
            session = PeerSession(
                self.identity, saved.config, keys, name=saved.name, rng=drbg(saved.secret), now=now
            )
            self.file = TranscriptFile(saved.transcript, self.me, saved.config, keys)
            self.session = session
            outputs = session.start(now)
        else:
            session, replayed = PeerSession.resume(
                self.identity, saved.config, keys, saved.secret, frames, name=saved.name, now=now
            )
            self.file = TranscriptFile(
                saved.transcript, self.me, saved.config, keys, session.transcript
            )
            saved.save()  # a fresh date: the game is alive again
            self.session = session
            self.o.echo(
                f"resumed the game saved in {saved.transcript}: {len(session.moves)} moves"
                f" so far; reconnecting"
            )
            # What happened before the crash was printed then; frames go out through sync.
            outputs = [o for o in replayed if isinstance(o, v.Seated | v.Finished | v.Stopped)]
        if hasattr(session, "max_tick_gap"):
            # Our own clock jumping this far between two ticks means this process was not
            # running (suspended): the session restarts its count instead of blaming anyone.
            session.max_tick_gap = MAX_TICK_GAP
        self.ready.set()
        self._nursery.start_soon(self._ticker)
        self._nursery.start_soon(self.o.player.play, GamePort(self))
        if not later:
            for index in range(saved.me):
                self._nursery.start_soon(self._keep_link, index, first.get(index))
        self._handle(outputs)

    def on_frame(self, frame: bytes, source: bytes) -> None:
        """A game frame from the link to ``source``."""
        session = self.session
        late = session is not None and (session.stage >= RESULT or self.over.is_set())
        if late and _kind_of(frame) == SESSION_RESULT:  # another peer's session is over
            self._take_result(source, frame)
            return
        if session is None or self.over.is_set():
            if session is not None and self._next_may_come():
                self._hold(frame, source)
            return
        self.stats.frames_in += 1
        self.stats.bytes_in += len(frame)
        self._handle(session.receive(frame, trio.current_time()), (source, frame))

    def on_net(self, link: Link, message: NetMessage) -> None:
        """A ``sync`` or ``bye`` on a game link."""
        session = self.session
        if message.kind == BYE:
            self.gone.add(link.key)
            log.info("%s is done: %s", self._label(link.key), str(message.body["reason"])[:200])
            return
        if message.kind == NEXT:  # it may come before this peer is done with that game
            self._votes[(int(message.body["game"]), link.key)] = bool(message.body["go"])
            self._voted.set()
            return
        if message.kind == SYNC and session is not None:
            have: dict[bytes, int] = {}
            for pair in message.body["have"]:
                key, seq = pair
                if not isinstance(key, bytes) or type(seq) is not int or seq < 0:
                    raise HandshakeError("a malformed sync")
                have[key] = seq
            for frame in session.frames_after(have):
                link.enqueue(frame)
            if self.over.is_set():
                link.finish(self._bye())

    def _handle(
        self, outputs: Sequence[v.Output], echo_of: tuple[bytes, bytes] | None = None
    ) -> None:
        """Act on a session's outputs. The transcript is appended first, so a frame of ours
        is on disk before it can be on the wire (see :mod:`.persist`)."""
        session = self.session
        assert session is not None
        if self.file is not None:
            self.file.append(session.transcript[self.file.written :])
        for out in outputs:
            if isinstance(out, v.Send):
                for key, link in self.links.items():
                    # never echo a frame back over the link it came in on
                    if echo_of is None or key != echo_of[0] or out.frame != echo_of[1]:
                        link.enqueue(out.frame)
            elif isinstance(out, v.Moved):
                self.stats.moves += 1
                self.o.player.moved(out.seat, out.move)
            elif isinstance(out, v.Seated):
                self._show_seats(out)
            elif isinstance(out, v.Finished | v.Stopped):
                if self._end is None:
                    self._end = out
                    self.stats.t_end = time.time()
                if self.file is not None:
                    self.file.close()
                self.over.set()
                if not self._ended:
                    self._ended = True
                    self.o.player.ended(out, len(session.moves))
            elif isinstance(out, v.Rejected):
                log.info("refused a frame: %s", out.reason)
        if session.my_turn and self.stats.t_first_turn is None:
            self.stats.t_first_turn = time.time()
        self._turn.set()

    async def _ticker(self) -> None:
        session = self.session
        assert session is not None
        while not self.over.is_set() and self.session is session:
            await trio.sleep(TICK)
            self._handle(session.tick(trio.current_time()))

    def _leave(self, reason: str) -> None:
        session = self.session
        if session is None or self.over.is_set():
            return
        self.o.echo(f"leaving the table: {reason}")
        self._turn.set()
        self._handle(session.leave(reason, trio.current_time()))

    async def _play_out(self) -> None:
        """Wait for the end (of every game of a session), report it, close the links
        politely."""
        while True:
            await self.over.wait()
            # Strangers are of no use now; their descriptors may be needed to check the
            # transcript.
            self._admission.shed(len(self._admission.pending))
            self._admission.total = self._admission.configured = min(self._admission.total, 2)
            with trio.move_on_after(5.0):  # the player's last words first (a person's table)
                await self.o.player.closed()
            outcome = await self._outcome()
            saved = self.saved
            if saved is None or not saved.config.in_session:
                break
            if self._resumed:
                self.o.echo(
                    f"game {saved.config.game} of the session was resumed after a restart: the"
                    " session ends here for this peer (its earlier games are in their own"
                    " transcripts)"
                )
                break
            go_on = await self._between_games(outcome)
            if not go_on:
                outcome = await self._end_session(outcome)
                break
            self._next_game()
        linger = 1.0 if outcome.finished is None else 5.0
        await self._shutdown(min(linger, self.saved.config.timeout if self.saved else linger))
        self._conclude(outcome)

    async def _outcome(self) -> Outcome:
        session, saved, end = self.session, self.saved, self._end
        assert session is not None and saved is not None and end is not None
        saved.discard()  # over: nothing left to resume
        names = {k: _printable(p.name or self._names.get(k, "")) for k, p in session.peers.items()}
        if isinstance(end, v.Stopped):
            if end.verdict.kind == v.LEFT and end.verdict.keys == (self.me,):
                text = "you left the table; the others were told with a signed message"
            else:
                text = f"game stopped: {end.verdict.describe(names)}"
            self.o.echo(text)
            code = EXIT_INTERRUPTED if self.interrupted else EXIT_FAILED
            return Outcome(code, text, verdict=end.verdict, transcript=saved.transcript)
        losers = [self._seat_label(s) for s in end.losers]
        result = " and ".join(losers) + " lost" if losers else "a draw: nobody lost"
        self.o.echo(f"result: {result}")
        report = await trio.to_thread.run_sync(verify_transcript, saved.transcript)
        if not report.valid or report.final_state_hash != end.final_state_hash:
            text = f"the transcript {saved.transcript} does not verify: {report.fault}"
            self.o.echo(text)
            return Outcome(EXIT_FAILED, text, end, report=report, transcript=saved.transcript)
        text = f"transcript verified: {saved.transcript} (final state {end.final_state_hash[:16]})"
        self.o.echo(text)
        return Outcome(
            EXIT_OK, f"result: {result}", end, report=report, transcript=saved.transcript
        )

    # ------------------------------------------------------------------ sessions (M24)

    def _game_path(self, config: TableConfig, number: int) -> Path:
        """This peer's transcript of a session's game ``number``: ``NAME-gN.moska`` beside
        the ``--transcript`` named (a single game: that very file)."""
        base = self.o.transcript
        if not config.in_session:
            return base
        return base.with_name(f"{base.stem}-g{number}{base.suffix}")

    def _next_may_come(self) -> bool:
        """Whether a frame that comes after this game's end may be of the session's next."""
        saved = self.saved
        return (
            saved is not None
            and saved.config.in_session
            and saved.config.game < saved.config.games
            and not self.closing.is_set()
        )

    def _hold(self, frame: bytes, source: bytes) -> None:
        if len(self._held) < HELD_FRAMES and sum(len(f) for f, _ in self._held) < HELD_BYTES:
            self._held.append((frame, source))

    def _record(self, outcome: Outcome) -> GameRecord | None:
        """Count the game just over in the session's tally (None: not a game to count, one
        stopped before anybody had a seat to forfeit)."""
        session, saved = self.session, self.saved
        assert session is not None and saved is not None
        end = self._end
        if session.game_id is None:
            return None
        if isinstance(end, v.Finished) and outcome.code == EXIT_OK:
            record = GameRecord(
                saved.config.game,
                session.game_id,
                bytes.fromhex(end.final_state_hash),
                tuple(end.losers),
                False,
                session.dealer,
            )
        elif isinstance(end, v.Stopped) and any(s >= 0 for s in end.verdict.seats):
            seats = tuple(sorted(s for s in end.verdict.seats if s >= 0))  # as verify does
            number = saved.config.game
            record = GameRecord(number, session.game_id, b"", seats, True, session.dealer)
        else:
            return None
        if self.tally is None:
            names = [self._seat_name(s) for s in range(len(session.seats))]
            self.tally = Tally(names, saved.config.games)
        self.tally.record(record)
        self.game_files.append(saved.transcript)
        return record

    async def _between_games(self, outcome: Outcome) -> bool:
        """Count the game, print the score line, and agree with everyone on the next game:
        True when all play it."""
        saved, session = self.saved, self.session
        assert saved is not None and session is not None
        config = saved.config
        record = self._record(outcome)
        if record is None:
            if isinstance(self._end, v.Stopped):
                # Gone before the next game began (a timeout before the seats were drawn):
                # it never started, so it is not counted, and whoever was silent left.
                self._left.update(k for k in self._end.verdict.keys if k != self.me)
                if saved.transcript.exists():
                    aside = saved.transcript.with_name(saved.transcript.name + ".unplayed")
                    saved.transcript.replace(aside)
                    self.o.echo(f"game {config.game} never started; its frames are in {aside}")
            return False
        assert self.tally is not None
        self.o.echo(self.tally.score_line())
        if record.forfeit or config.game >= config.games:
            return False
        go = False
        summary = self.tally.score_line()
        note = self.tally.pedestal_note()  # M24's custom, said; the length stays as signed
        if note is not None:
            summary += f"\n{note}"
        with trio.move_on_after(config.timeout) as asking:
            self._asking = asking
            try:
                go = bool(
                    await trio.to_thread.run_sync(
                        self.o.player.next_game, summary, abandon_on_cancel=True
                    )
                )
            except Exception as error:  # the player could not answer: it does not go on
                log.warning("asking for the next game failed: %s", _reason(error))
        self._asking = None
        if asking.cancelled_caught:  # Ctrl-C or the timeout: end the question's open line
            self.o.echo("")
        self._my_vote = net_frame(self.identity, NEXT, {"game": config.game, "go": go})
        for link in self.links.values():
            link.enqueue(self._my_vote)
        if not go:
            self.o.echo("you end the session here")
            return False
        others = [e.key for e in saved.roster if e.key != self.me]

        def votes() -> list[bool | None]:
            return [self._votes.get((config.game, k)) for k in others]

        with trio.move_on_after(config.timeout):
            while None in votes() and False not in votes():
                self._voted = trio.Event()
                await self._voted.wait()
        noes = [k for k, vote in zip(others, votes(), strict=True) if vote is False]
        silent = [k for k, vote in zip(others, votes(), strict=True) if vote is None]
        for key in noes:
            self.o.echo(f"{self._label(key)} ends the session here")
        if silent and not noes:
            self._left.update(silent)
            for key in silent:
                self.o.echo(f"{self._label(key)} did not answer: the session ends")
        return not noes and not silent

    def _next_game(self) -> None:
        """Start the session's next game over the same links: the seats kept, the loser
        dealing (M24), the held frames of it fed in."""
        old, saved = self.session, self.saved
        assert old is not None and saved is not None and old.game_id is not None
        assert old.game is not None
        dealer = next_dealer(old.dealer, old.game.loser)
        config = saved.config.next_game(old.game_id, old.seats, dealer)
        number = config.game
        saved = SavedGame(
            self._game_path(config, number),
            secrets.token_bytes(32),
            config,
            saved.roster,
            saved.me,
            saved.name,
            saved.host_address,
        )
        self.over = trio.Event()
        self._end = None
        self._ended = False
        self._my_vote = None
        self.o.echo(f"game {number} of {config.games}: seat {dealer} deals (the last loser)")
        if self.o.fresh_player is not None:  # a person's table is drawn anew for each game
            self.o.player = self.o.fresh_player()
        self._begin(saved, None, {}, later=True)
        held, self._held = self._held, []
        for frame, source in held:
            self.on_frame(frame, source)

    def _take_result(self, source: bytes, frame: bytes) -> None:
        """Another peer's signed session result (kept when it is that peer's, signed)."""
        try:
            result = open_result(frame)
        except TallyError as error:
            log.warning("a session result from %s: %s", self._label(source), error)
            return
        if result.signer == source:
            self._results[source] = frame
            self._result_in.set()

    async def _end_session(self, outcome: Outcome) -> Outcome:
        """Sign the session's result, swap it with everyone's, write the session file, print
        the results table. The session's exit code: 0 when it ended between games (all games
        played, a peer that declined or left), else the last game's."""
        saved, tally = self.saved, self.tally
        assert saved is not None
        if tally is None:  # not one game counted: nothing to sign
            return outcome
        session = self.session
        assert session is not None
        seats = tuple(saved.config.seating) or tuple(session.seats)  # kept from game 1
        sid = session_id(saved.config, [e.key for e in saved.roster])
        last = tally.games[-1]
        if last.forfeit:
            end = f"game {last.number} was stopped by a verdict"
        elif len(tally.games) == saved.config.games:
            end = f"all {saved.config.games} games played"
        else:
            end = f"ended after game {len(tally.games)} of {saved.config.games}"
        try:
            digests = [await trio.to_thread.run_sync(file_digest, p) for p in self.game_files]
        except OSError as error:
            self.o.echo(f"cannot read this peer's transcripts to sign the session: {error}")
            return outcome
        self._my_result = sign_result(
            self.identity, sid, seats, tally.games, digests, sorted(self._left), end
        )
        self._results[self.me] = self._my_result
        for link in self.links.values():
            link.enqueue(self._my_result)
        expected = {e.key for e in saved.roster} - self._left
        with trio.move_on_after(min(RESULT_WAIT, saved.config.timeout)):
            while not expected <= set(self._results):
                self._result_in = trio.Event()
                await self._result_in.wait()
        missing = sorted(expected - set(self._results))
        for key in missing:
            self.o.echo(f"no signed session result from {self._label(key)}")
        path = self.o.transcript.with_name(
            f"{self.o.transcript.stem}-session{self.o.transcript.suffix}"
        )
        others = [f for k, f in sorted(self._results.items()) if k != self.me]
        try:
            write_session_file(path, self.me, sid, [self._my_result, *others])
            self.session_file = path
        except OSError as error:
            self.o.echo(f"cannot write the session file {path}: {error}")
        lines = self.o.results(tally) if self.o.results is not None else [tally.score_line()]
        for line in lines:
            self.o.echo(line)
        self.o.echo(
            f"session over ({end}); signed by {len(self._results)} of {len(saved.roster)}"
            f" players: {path}"
        )
        if last.forfeit:
            return outcome
        return Outcome(EXIT_OK, f"session over: {end}", outcome.finished, report=outcome.report)

    async def _shutdown(self, linger: float) -> None:
        self.closing.set()
        bye = self._bye()
        for link in list(self.links.values()):
            link.finish(bye)
        with trio.move_on_after(linger):
            while self.links:
                await trio.sleep(0.02)

    def _bye(self) -> bytes:
        reason = "left" if self.interrupted else "the game is over"
        return net_frame(self.identity, BYE, {"reason": reason})

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

    def _result(self) -> Outcome:
        assert self.outcome is not None
        return self.outcome

    # ------------------------------------------------------------------ connections

    async def _listen(self, port: int) -> list[trio.SocketListener] | None:
        """Listen on ``port`` of ``--bind``; None (the outcome concluded with the reason) when
        this machine cannot: the port in use, an address it does not have."""
        try:
            listeners = await trio.open_tcp_listeners(port, host=self.o.bind)
        except OSError as error:
            self._conclude(Outcome(EXIT_FAILED, _listen_failure(self.o.bind, port, error)))
            return None
        self.port = int(listeners[0].socket.getsockname()[1])
        return listeners

    async def _serve(self, listeners: list[trio.SocketListener]) -> None:
        """Accept connections on every listener (our own loop, not ``trio.serve_listeners``:
        an accept error is logged once per burst and backed off, never a traceback each)."""
        async with trio.open_nursery() as nursery:
            for listener in listeners:
                nursery.start_soon(self._accept_loop, listener, nursery)

    async def _accept_loop(
        self, listener: trio.abc.Listener[trio.SocketStream], nursery: trio.Nursery
    ) -> None:
        """Accept, admit (or close at once) and hand each connection to :meth:`_accept`.

        A failed accept (out of descriptors: EMFILE) is logged once per burst (a burst ends
        after :data:`ACCEPT_QUIET` s without failures), backed off (doubling), and sheds the
        oldest unauthenticated connection while lowering their cap to what the descriptors
        allow; the cap comes back when the burst ends. Game links never need a new descriptor.
        """
        delay = ACCEPT_BACKOFF[0]
        burst = 0  # failures in the current burst
        last_failure = -math.inf
        async with listener:
            while True:
                try:
                    stream = await listener.accept()
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    return
                except OSError as error:
                    now = trio.current_time()
                    self.stats.accept_errors += 1
                    if now - last_failure > ACCEPT_QUIET:
                        burst = 0
                    burst += 1
                    last_failure = now
                    if burst == 1:
                        log.warning(
                            "cannot accept connections on port %d: %s; backing off, and"
                            " closing connections that have not proved their key (the game"
                            " goes on; this is said once per burst)",
                            self.port,
                            error.strerror or error,
                        )
                    if error.errno in _RESOURCE_ERRNOS:
                        self._admission.squeeze()  # strangers' descriptors, never a game link
                    await trio.sleep(delay)
                    delay = min(delay * 2, ACCEPT_BACKOFF[1])
                    continue
                delay = ACCEPT_BACKOFF[0]
                if burst and trio.current_time() - last_failure > ACCEPT_QUIET:
                    log.info("accepting connections again (%d accepts failed)", burst)
                    burst = 0
                    self._admission.relax()
                try:
                    where = "{}:{}".format(*stream.socket.getpeername()[:2])
                except OSError:
                    where = "an unknown address"
                address = where.rpartition(":")[0] or where
                ticket = self._admission.admit(address)
                if ticket is None:
                    self.stats.refused_connections += 1
                    self._quiet.warning(
                        "refused connections from %s: too many that have not proved their key"
                        " (at most %d, %d per address)",
                        address,
                        self._admission.total,
                        self._admission.per_address,
                    )
                    await trio.aclose_forcefully(stream)
                    continue
                nursery.start_soon(self._accept, stream, where, ticket)

    async def _accept(self, stream: trio.SocketStream, where: str, ticket: _Ticket) -> None:
        """A connection to our port: a joiner (host only) or a later peer. Whatever it does,
        only this connection is at stake."""
        try:
            with ticket.scope:
                await self._handshake_in(FrameStream(stream), where.rpartition(":")[0], ticket)
            if ticket.scope.cancelled_caught:
                self._quiet.warning(
                    "closed a connection from %s: shed, to free a descriptor", where
                )
        except Exception as error:
            self._quiet.warning("closed a connection from %s: %s", where, _reason(error))
        finally:
            ticket.release()
            await trio.aclose_forcefully(stream)

    async def _handshake_in(self, fs: FrameStream, address: str, ticket: _Ticket) -> None:
        """Our side of a connection to our port: a ``hi`` with a fresh nonce, the dialer's
        ``join`` or ``link`` with its proof of key, our ``welcome`` with ours (see
        :mod:`.wire`); then the connection is a lobby seat or a game link."""
        nonce = secrets.token_bytes(32)
        hello: dict[str, Any] = {"nonce": nonce, "name": self.o.name[:MAX_NAME]}
        lobby = self._lobby
        if lobby is not None:
            hello["config"] = lobby.config.to_wire()
        with trio.fail_after(self.o.handshake_timeout):
            await fs.send(net_frame(self.identity, HI, hello))
            msg = await fs.receive_net(JOIN, LINK)
        if msg.kind == JOIN:
            if lobby is None:
                await self._refuse(fs, "this peer is not the host of a table")
            table = lobby_id(lobby.config)
        else:
            with trio.move_on_after(self.o.connect_timeout):
                await self.ready.wait()  # a joiner may be dialed before it has the start
            if self.saved is None:
                await self._refuse(fs, "this peer has no game yet")
            table = self._table_id
        with trio.fail_after(self.o.handshake_timeout):
            if msg.body["table"] != table:
                await self._refuse(fs, "that is another table")
            dialer_nonce = msg.body["nonce"]
            parts = (table, msg.key, self.me, dialer_nonce, nonce)
            if not check_link_proof(msg.body["proof"], *parts, DIALER):
                await self._refuse(fs, "a proof of key that does not answer this connection")
            entry: Entry | None = None
            if msg.kind == JOIN:
                entry = self._joiner_entry(msg, table)
                if entry is None:
                    await self._refuse(fs, "a roster entry that its key did not sign")
                refusal = self._lobby_refusal(msg.key, entry)
                if refusal:  # before the welcome: the joiner never reads "joined"
                    await self._refuse(fs, refusal)
            else:
                saved = self.saved
                assert saved is not None
                index = next((i for i, e in enumerate(saved.roster) if e.key == msg.key), -1)
                if index <= saved.me:
                    await self._refuse(fs, "only a later peer of the table dials this one")
            proof = link_proof(self.identity, *parts, LISTENER)
            await fs.send(net_frame(self.identity, WELCOME, {"proof": proof}))
        fs.authenticated()
        ticket.release()
        if entry is not None:
            await self._lobby_join(fs, msg, entry, address)
        else:
            await self._serve_link(msg.key, fs)

    def _joiner_entry(self, msg: NetMessage, lobby: bytes) -> Entry | None:
        """The roster entry a ``join`` carries, if its key signed it (and it names a place)."""
        body = msg.body
        entry = Entry(msg.key, body["name"], body["host"], body["port"], body["sig"])
        return entry if entry.host and entry.verify(lobby) else None

    async def _refuse(self, fs: FrameStream, reason: str) -> NoReturn:
        """Tell the other side why, then end this connection (raises). The frame is signed
        before the timer starts, and the timer is :data:`REFUSE_WAIT`: only a peer that does
        not read can make it run out, not a slow machine."""
        frame = net_frame(self.identity, REFUSE, {"reason": reason})
        with trio.move_on_after(REFUSE_WAIT):
            await fs.send(frame)
        raise HandshakeError(f"refused: {reason}")

    async def _serve_link(self, key: bytes, fs: FrameStream) -> None:
        """Run a game link to ``key`` until it ends (a newer link replaces an older one)."""
        session = self.session
        assert session is not None
        link = Link(self, key, fs)
        old = self.links.get(key)
        if old is not None:
            old.cancel()
        self.links[key] = link
        self.gone.discard(key)
        self.stats.links += 1
        have = [[k, seq] for k, seq in session.sync_state().items()]
        link.enqueue(net_frame(self.identity, SYNC, {"have": have}))
        if self._my_vote is not None:  # a link that was down between games: our answer
            link.enqueue(self._my_vote)
        if self._my_result is not None:
            link.enqueue(self._my_result)
        log.info("connected to %s", self._label(key))
        try:
            await link.run()
            log.info("%s closed the connection", self._label(key))
        except Exception as error:
            log.warning("connection to %s closed: %s", self._label(key), _reason(error))
        finally:
            if self.links.get(key) is link:
                del self.links[key]
            self.stats.frames_out += link.frames_out
            self.stats.bytes_out += link.bytes_out

    async def _keep_link(self, index: int, first: FrameStream | None) -> None:
        """Keep the link to an earlier peer up: dial, serve, and redial with backoff after a
        drop, until the game is over or that peer said ``bye``."""
        saved = self.saved
        assert saved is not None
        entry = saved.roster[index]
        host, port = entry.host, entry.port
        if index == 0 and saved.host_address is not None:
            host, port = saved.host_address
        delay = MIN_BACKOFF
        stream = first
        while not self.closing.is_set() and entry.key not in self.gone:
            if stream is None:
                try:
                    stream = await self._dial(host, port, entry.key)
                except Exception as error:
                    log.info(
                        "cannot reach %s at %s:%d: %s",
                        self._label(entry.key),
                        host,
                        port,
                        _reason(error),
                    )
            if stream is not None:
                delay = MIN_BACKOFF
                try:
                    await self._serve_link(entry.key, stream)
                finally:
                    await trio.aclose_forcefully(stream.stream)
                    stream = None
                if self.closing.is_set() or entry.key in self.gone:
                    break
            await trio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)

    async def _dial(self, host: str, port: int, key: bytes) -> FrameStream:
        """Open a game link to the earlier peer ``key`` at ``host:port``: its ``hi``, our
        ``link`` with our proof, its ``welcome`` with its proof over our fresh nonce (a
        replayed ``hi`` cannot give that)."""
        with trio.fail_after(self.send_timeout):
            stream = await trio.open_tcp_stream(host, port)
            try:
                fs = FrameStream(stream)
                hi = await fs.receive_net(HI)
                if hi.key != key:
                    raise HandshakeError("another key answers at that address")
                await self._prove(fs, LINK, self._table_id, key, hi.body["nonce"], {})
            except BaseException:
                await trio.aclose_forcefully(stream)
                raise
        return fs

    async def _prove(
        self,
        fs: FrameStream,
        kind: str,
        table: bytes,
        listener: bytes,
        listener_nonce: bytes,
        extra: dict[str, Any],
    ) -> None:
        """The dialer's half of the challenge-response: send ``kind`` (``join``/``link``) with
        our nonce and proof, then check the listener's ``welcome``; the stream is then
        authenticated (HandshakeError if it is not)."""
        nonce = secrets.token_bytes(32)
        parts = (table, self.me, listener, nonce, listener_nonce)
        body = {"nonce": nonce, "table": table, "proof": link_proof(self.identity, *parts, DIALER)}
        await fs.send(net_frame(self.identity, kind, {**body, **extra}))
        welcome = await fs.receive_net(WELCOME)
        if welcome.key != listener or not check_link_proof(welcome.body["proof"], *parts, LISTENER):
            raise HandshakeError(
                "the peer at that address did not prove its key for this connection"
                " (a replayed hi?)"
            )
        fs.authenticated()

    # ------------------------------------------------------------------ lobby

    async def _reach_host(
        self, host: str, port: int, deadline: float
    ) -> tuple[FrameStream, NetMessage]:
        """Dial the host and read its ``hi``, retrying until ``deadline`` while it is not up
        yet or closes before speaking (a full queue of strangers at its door)."""
        delay = MIN_BACKOFF
        while True:
            stream: trio.SocketStream | None = None
            try:
                with trio.fail_at(deadline):
                    stream = await trio.open_tcp_stream(host, port)
                    fs = FrameStream(stream)
                    hi = await fs.receive_net(HI)
                return fs, hi
            except (OSError, trio.BrokenResourceError, ClosedError) as error:
                if stream is not None:
                    await trio.aclose_forcefully(stream)
                if _refused(error):  # nothing listens there: known at once, no use waiting
                    raise ConnectionRefusedError(
                        errno.ECONNREFUSED, "connection refused"
                    ) from error
                if trio.current_time() + delay >= deadline:
                    raise trio.TooSlowError from error
            except BaseException:
                if stream is not None:
                    await trio.aclose_forcefully(stream)
                raise
            await trio.sleep(delay)
            delay = min(delay * 2, MAX_BACKOFF)

    async def _enter_lobby(
        self, host: str, port: int, expect: bytes | str | None = None
    ) -> tuple[FrameStream, SavedGame]:
        """Dial the host (retrying while it is not up yet), accept its table, prove our key and
        check its, wait for the start; returns the connection (our game link to the host) and
        the table."""
        deadline = trio.current_time() + self.o.connect_timeout
        fs, hi = await self._reach_host(host, port, deadline)
        stream = fs.stream
        try:
            if "config" not in hi.body:
                raise HandshakeError("the peer at that address is not the host of a table")
            _check_expected(hi.key, expect)
            config = TableConfig.from_wire(hi.body["config"])
            host_name = _printable(str(hi.body["name"])[:MAX_NAME])
            self.o.echo(
                f"table at {host}:{port}: {config.preset} for {config.players} players,"
                f" opened by {host_name} ({fingerprint_of(hi.key)}); timeout {config.timeout:g} s"
                + (f"; a session of {config.games} games" if config.in_session else "")
            )
            lobby = lobby_id(config)
            entry = Entry.sign(
                self.identity, lobby, self.o.name, self._my_host(fs.stream), self.port
            )
            join = {"name": entry.name, "host": entry.host, "port": entry.port, "sig": entry.sig}
            with trio.fail_after(self.o.connect_timeout):
                await self._prove(fs, JOIN, lobby, hi.key, hi.body["nonce"], join)
            self.o.echo(
                f"joined; waiting for the table to fill (listening on {self.o.bind}:{self.port}"
                " for the other players)"
            )
            with trio.fail_after(self.o.lobby_wait):
                start = await fs.receive_net(START)
            roster = self._check_start(start, hi.key, config)
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise
        me = next(i for i, e in enumerate(roster) if e.key == self.me)
        secret = secrets.token_bytes(32)
        path = self._game_path(config, 1)
        saved = SavedGame(path, secret, config, roster, me, self.o.name, (host, port))
        return fs, saved

    def _my_host(self, stream: trio.abc.Stream) -> str:
        """The address the others should dial us at: ``--bind`` when it names one, else the
        local address of our connection to the host (the interface on its network)."""
        if self.o.bind not in ("", "0.0.0.0", "::"):
            return self.o.bind
        socket = getattr(stream, "socket", None)
        try:
            return str(socket.getsockname()[0]) if socket is not None else "127.0.0.1"
        except OSError:
            return "127.0.0.1"

    def _check_start(
        self, start: NetMessage, host_key: bytes, config: TableConfig
    ) -> tuple[Entry, ...]:
        if start.key != host_key:
            raise HandshakeError("the start is not signed by the host")
        if TableConfig.from_wire(start.body["config"]) != config:
            raise HandshakeError("the host changed the table settings")
        roster = tuple(Entry.from_wire(e) for e in start.body["roster"])
        keys = [e.key for e in roster]
        if len(roster) != config.players or len(set(keys)) != len(keys):
            raise HandshakeError(f"the roster does not list {config.players} distinct players")
        if keys[0] != host_key:
            raise HandshakeError("the roster does not start with the host")
        lobby = lobby_id(config)
        for entry in roster:
            if not entry.verify(lobby):
                who = f"{_printable(entry.name)} ({fingerprint_of(entry.key)})"
                raise HandshakeError(f"the roster entry of {who} is not signed by its key")
        mine = [e for e in roster if e.key == self.me]
        if not mine or mine[0].port != self.port:
            raise HandshakeError("the roster does not list this peer as it joined")
        self._trust(host_key, roster)
        return roster

    def _known(self) -> KnownPeers | None:
        path = self.o.known_peers
        return None if path is None else KnownPeers.load(path)

    def _trust(self, host_key: bytes, roster: Sequence[Entry]) -> None:
        """Trust on first use: refuse (loudly) a known name with another key at this host's
        tables, remember the new names (see :mod:`.known`)."""
        known = self._known()
        if known is None:
            return
        players = [(e.name, e.key) for e in roster]
        changes = known.check(host_key, players)
        if changes:
            for change in changes:
                self.o.echo(change.message())
            names = ", ".join(repr(_printable(c.name)) for c in changes)
            raise HandshakeError(
                f"a known player's key has changed ({names}; see the warning above)"
            )
        known.remember(host_key, players)

    async def _lobby_join(
        self, fs: FrameStream, msg: NetMessage, entry: Entry, address: str
    ) -> None:
        """The host's side of a ``join`` (its proof checked): seat the joiner, wait for the
        table to fill while watching the connection, then send the start and keep the
        connection as a game link."""
        lobby = self._lobby
        assert lobby is not None
        if lobby.roster is not None and any(e.key == msg.key for e in lobby.roster):
            await self._send_start(fs, msg.key)  # a joiner that lost the start
            return
        refusal = self._lobby_refusal(msg.key, entry)
        if refusal:
            await self._refuse(fs, refusal)
        seat = trio.CancelScope()
        previous = lobby.joined.get(msg.key)
        if previous is not None:
            previous[1].cancel()  # the same key again: its older connection is closed
        lobby.joined[msg.key] = (entry, seat)
        count = len(lobby.joined) + 1
        self.o.echo(
            f"{_printable(entry.name)} ({fingerprint_of(entry.key)}) joined from {address}:"
            f" {count} of {lobby.config.players} players"
        )
        if count == lobby.config.players:
            self._seal()
        left = True
        lobby.waiting += 1  # until this joiner has its refusal, or the game starts
        try:
            with seat:
                left = await self._left_before_start(fs)
            if seat.cancelled_caught:
                await self._refuse(
                    fs,
                    "replaced by a newer join with the same key (the same command run twice?"
                    " every seat needs a key of its own: --identity FILE)",
                )
            if left:
                if lobby.roster is None and lobby.joined.get(msg.key, (entry, None))[1] is seat:
                    del lobby.joined[msg.key]
                    who = f"{_printable(entry.name)} ({fingerprint_of(entry.key)})"
                    self.o.echo(f"{who} left before the start")
                return
            if self.session is None:  # the host gave up (_close_lobby) or could not start
                await self._refuse(fs, lobby.error or "the game could not start")
        finally:
            lobby.waiting -= 1
        await self._send_start(fs, msg.key)

    async def _close_lobby(self, lobby: _Lobby, reason: str) -> None:
        """The host gives up its lobby: every waiting joiner gets ``reason`` in a ``refuse``
        (via :meth:`_send_start`) before the node closes its connections, not a bare close
        ("the other side closed the connection" told it nothing)."""
        lobby.error = reason
        lobby.full.set()
        with trio.move_on_after(LOBBY_CLOSE_WAIT):
            while lobby.waiting:
                await trio.sleep(0.01)

    def _lobby_refusal(self, key: bytes, entry: Entry) -> str:
        """Why the lobby cannot seat the joiner ``key`` (its roster ``entry``) now, "" if it
        can. Asked before the ``welcome`` too, so a refused joiner never reads "joined"."""
        lobby = self._lobby
        assert lobby is not None
        if lobby.roster is not None:
            return "" if any(e.key == key for e in lobby.roster) else "the game has started"
        if lobby.full.is_set():  # the host gave up the lobby (_close_lobby): it seats no one
            return lobby.error or "the table is closing"
        if key == self.me:
            return (
                "that is the host's own key: every seat needs a key of its own"
                " (give this seat another with --identity FILE)"
            )
        if key not in lobby.joined and len(lobby.joined) >= lobby.config.players - 1:
            return "the table is full"
        try:
            known = self._known()
        except KnownPeersError as error:
            return f"the host cannot check known players: {error}"
        if known is not None:
            changes = known.check(self.me, [(entry.name, entry.key)])
            if changes:
                self.o.echo(changes[0].message())
                return (
                    f"the host knows the name {_printable(entry.name)!r} with another key"
                    f" ({fingerprint_of(changes[0].known)}); pick another name, or ask the"
                    " host to forget the old key"
                )
        return ""

    async def _left_before_start(self, fs: FrameStream) -> bool:
        """Wait for the table to fill; True if the joiner hung up (or spoke) meanwhile."""
        lobby = self._lobby
        assert lobby is not None
        left = False
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal left
                try:
                    await fs.stream.receive_some(1)  # a joiner says nothing before the start
                except Exception as error:
                    log.info("a joiner's connection broke: %s", _reason(error))
                left = True
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            await lobby.full.wait()
            nursery.cancel_scope.cancel()
        return left

    def _seal(self) -> None:
        """The table is full: fix the roster (host first, then joining order) and start."""
        lobby = self._lobby
        assert lobby is not None
        host = Entry.sign(self.identity, lobby_id(lobby.config), self.o.name, "", self.port)
        lobby.roster = (host, *(entry for entry, _ in lobby.joined.values()))
        try:
            self._trust(self.me, lobby.roster)
        except (HandshakeError, KnownPeersError) as error:  # checked at each join already
            log.warning("known players: %s", _reason(error))
        body = {"config": lobby.config.to_wire(), "roster": [e.to_wire() for e in lobby.roster]}
        lobby.start_frame = net_frame(self.identity, START, body)
        saved = SavedGame(
            self._game_path(lobby.config, 1),
            secrets.token_bytes(32),
            lobby.config,
            lobby.roster,
            0,
            self.o.name,
            None,
        )
        try:
            self._begin(saved, None, {})
        except (OSError, ValueError) as error:
            lobby.error = f"cannot start the game: {error}"
        else:
            self.o.echo(f"all {lobby.config.players} players are here: the game starts")
        lobby.full.set()

    async def _send_start(self, fs: FrameStream, key: bytes) -> None:
        lobby = self._lobby
        assert lobby is not None
        if self.session is None:
            await self._refuse(fs, lobby.error or "the game could not start")
        with trio.fail_after(self.o.connect_timeout):
            await fs.send(lobby.start_frame)
        await self._serve_link(key, fs)

    # ------------------------------------------------------------------ odds and ends

    async def _signals(self) -> None:
        """Ctrl-C: leave with a signed message; a second Ctrl-C stops at once."""
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
            async for _ in received:
                if self._asking is not None:  # Ctrl-C at "next game?": no, the session ends
                    self._asking.cancel()
                    self._asking = None
                    continue
                if self.interrupted or self.over.is_set():
                    assert self._nursery is not None
                    self._conclude(Outcome(EXIT_INTERRUPTED, "interrupted"))
                    self._nursery.cancel_scope.cancel()
                    return
                if self.session is None:
                    self.interrupted = True
                    self._lobby_scope.cancel()
                elif self.o.player.interrupt():  # a bot's seat, or a second Ctrl-C: leave
                    self.interrupted = True
                    self._leave("interrupted (Ctrl-C)")
                # otherwise the player asks (a person: "leave the game?") and leaves by the port

    async def _beacon(self, lobby: _Lobby) -> None:
        """Announce the open table on the LAN until it fills (see :mod:`.discovery`); a
        failure only costs the announcement, never the table."""
        from .discovery import TableStatus, announce

        def status() -> TableStatus:
            return TableStatus(len(lobby.joined) + 1, lobby.roster is None)

        try:
            await announce(
                self.identity,
                lobby.config,
                name=self.o.name,
                port=self.port,
                status=status,
                bind=self.o.bind,
                ready=lambda where: self.o.echo(f"{where}: find it with moska tables"),
            )
        except Exception as error:
            log.warning("cannot announce the table on the LAN: %s", _reason(error))

    def _announce(self, config: TableConfig) -> None:
        options = ", ".join(f"{k}={config.options[k]}" for k in sorted(config.options))
        self.o.echo(
            f"table open: {config.preset} for {config.players} players"
            f"{' (' + options + ')' if options else ''}, timeout {config.timeout:g} s;"
            f"{f' a session of {config.games} games;' if config.in_session else ''}"
            f" host {self.o.name} ({self.identity.fingerprint})"
        )
        if self.o.bind in ("0.0.0.0", "", "::"):
            lan = _lan_address()
            if lan:
                self.o.echo(f"join from the network with: moska join {lan}:{self.port}")
            self.o.echo(f"join from this machine with: moska join 127.0.0.1:{self.port}")
        else:
            self.o.echo(f"join with: moska join {self.o.bind}:{self.port}")

    def _show_seats(self, seated: v.Seated) -> None:
        self.stats.t_seated = time.time()
        session = self.session
        assert session is not None
        seats = ", ".join(self._seat_label(s) for s in range(len(seated.seats)))
        names = [self._seat_name(s) for s in range(len(seated.seats))]
        self.o.player.seated(names, session.my_seat)
        self.o.echo(f"seats: {seats}; dealer: seat {seated.dealer}; you are seat {session.my_seat}")

    def _seat_name(self, seat: int) -> str:
        session = self.session
        assert session is not None
        key = session.seats[seat]
        return _printable(session.peers[key].name or self._names.get(key, ""))

    def _seat_label(self, seat: int) -> str:
        """``seat 2 (alice, 3F9A-11C2)``"""
        session = self.session
        assert session is not None
        key = session.seats[seat]
        return f"seat {seat} ({self._seat_name(seat)}, {fingerprint_of(key)})"

    def _label(self, key: bytes) -> str:
        session = self.session
        if session is not None and key in session.seat_of:
            return self._seat_label(session.seat_of[key])
        return f"{_printable(self._names.get(key, 'a peer'))} ({fingerprint_of(key)})"


def _kind_of(frame: bytes) -> str:
    """A frame's kind ("" for a malformed one: the session says why)."""
    try:
        return open_frame(frame[4:])[0]
    except FrameError:
        return ""


def _refused(error: BaseException) -> bool:
    """Whether a dial failed with "connection refused" on every address it tried (trio
    reports the attempts as the cause of one OSError)."""
    if isinstance(error, ConnectionRefusedError):
        return True
    cause = error.__cause__
    if isinstance(cause, BaseExceptionGroup) and cause.exceptions:
        return all(isinstance(e, ConnectionRefusedError) for e in cause.exceptions)
    return False


def _listen_failure(bind: str, port: int, error: OSError) -> str:
    """Why this machine cannot listen on ``bind:port``, in one line."""
    where = f"{bind}:{port}" if port else bind
    if error.errno == errno.EADDRINUSE:
        why = "the port is in use (by another program, or another moska): pick another one"
    elif error.errno == errno.EADDRNOTAVAIL:
        why = f"this machine has no address {bind} (--bind names one of its own addresses)"
    elif error.errno == errno.EACCES:
        why = "permission denied (ports below 1024 need privileges)"
    elif isinstance(error, socket.gaierror):
        why = f"unknown address {bind!r}"
    else:
        why = error.strerror or str(error)
    return f"cannot listen on {where}: {why}"


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


def _check_expected(key: bytes, expect: bytes | str | None) -> None:
    """HandshakeError unless ``key`` is the expected host key (32 bytes, or its full
    fingerprint as a person types it)."""
    if expect is None:
        return
    if isinstance(expect, bytes):
        if key != expect:
            raise HandshakeError(
                f"{fingerprint_of(key)} answers there, not {fingerprint_of(expect)},"
                " which announced the table"
            )
        return
    wanted = parse_fingerprint(expect)
    if fingerprint_of(key) != wanted:
        raise HandshakeError(
            f"the host there is {fingerprint_of(key)}, not {wanted} (--expect): someone else"
            " answers at that address, or the fingerprint was misread"
        )


class _Ticket:
    """An unauthenticated connection's place under the caps (see :class:`_Admission`)."""

    __slots__ = ("address", "admission", "scope")

    def __init__(self, admission: _Admission, address: str) -> None:
        self.admission: _Admission | None = admission
        self.address = address
        self.scope = trio.CancelScope()

    def release(self) -> None:
        """The connection proved its key, or ended: it no longer counts (idempotent)."""
        admission, self.admission = self.admission, None
        if admission is not None:
            admission.leave(self)


class _Admission:
    """Counts the connections that have not proved their key yet: at most ``total``, and
    ``per_address`` from one address."""

    def __init__(self, total: int, per_address: int) -> None:
        self.total = self.configured = total
        self.per_address = per_address
        self.pending: dict[_Ticket, None] = {}  # oldest first
        self.by_address: dict[str, int] = {}

    def admit(self, address: str) -> _Ticket | None:
        if len(self.pending) >= self.total or self.by_address.get(address, 0) >= self.per_address:
            return None
        ticket = _Ticket(self, address)
        self.pending[ticket] = None
        self.by_address[address] = self.by_address.get(address, 0) + 1
        return ticket

    def leave(self, ticket: _Ticket) -> None:
        self.pending.pop(ticket, None)
        left = self.by_address.get(ticket.address, 1) - 1
        if left > 0:
            self.by_address[ticket.address] = left
        else:
            self.by_address.pop(ticket.address, None)

    def shed(self, count: int = 1) -> None:
        """End the oldest unauthenticated connections (to free their descriptors)."""
        for ticket in list(self.pending)[:count]:
            ticket.scope.cancel()
            ticket.release()

    def squeeze(self) -> None:
        """Out of descriptors: shed the oldest, and admit no more than are left pending."""
        self.shed()
        self.total = max(1, min(self.total, len(self.pending)))

    def relax(self) -> None:
        """The descriptors are back: the configured cap again."""
        self.total = self.configured


class _Quiet:
    """Warnings that a stranger can cause, at most ``limit`` per ``window`` seconds, then one
    line saying how many were left out."""

    def __init__(self, limit: int = 5, window: float = 10.0) -> None:
        self.limit, self.window = limit, window
        self.since = -math.inf
        self.count = self.skipped = 0

    def warning(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self.since > self.window:
            if self.skipped:
                log.warning("(%d more such warnings in %.0f s)", self.skipped, now - self.since)
            self.since, self.count, self.skipped = now, 0, 0
        if self.count < self.limit:
            self.count += 1
            log.warning(message, *args)
        else:
            self.skipped += 1


def _printable(name: str) -> str:
    """A name from the network, safe to print: no control characters (no terminal escapes)."""
    return "".join(c if c.isprintable() else "?" for c in name)


def _lan_address() -> str:
    """This machine's address on the local network, as a joiner would dial it (a UDP
    "connect" picks the outgoing interface without sending anything)."""
    import socket

    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.connect(("192.0.2.1", 9))  # TEST-NET-1: never routed, nothing sent
            address = str(probe.getsockname()[0])
    except OSError:
        return ""
    return "" if address.startswith("127.") or address == "0.0.0.0" else address
