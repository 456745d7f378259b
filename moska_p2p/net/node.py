"""A peer on the network: one :class:`~moska_p2p.protocol.session.PeerSession` driven over a
full mesh of TCP connections, with trio.

The session decides everything; the node only moves bytes and keeps time. :class:`Node`
owns one part per job, each an object in its own module that holds its own state, and wires
them here (:meth:`Node.__init__`), the one place that knows them all; a part reaches another
only through the small interface (a ``Protocol``) it declares:

* :class:`~.links.Mesh` (:mod:`.links`) -- our port (with the caps on strangers of
  :mod:`.admission`), the handshakes, the game links by key, redialing, the table's relay;
* :class:`~.runner.GameRunner` (:mod:`.runner`) -- one game, then the next: the session fed
  frames and ticks, its outputs acted on (transcript, links, player), the end reported; it
  owns :class:`~.sessions.SessionBook` (:mod:`.sessions`): between the games of a session,
  the tally, the vote, the signed result;
* :class:`~.lobby.Lobby` (:mod:`.lobby`) -- who may sit and the roster, the host's side and
  the joiner's;
* :class:`~.watch_host.SpectatorHost` (:mod:`.watch_host`) -- the host's spectators: who may
  watch, and the stream each one gets (the spectator's own side is :mod:`.watch`, no node);
* :mod:`.state` -- what they all share: the options, the figures, the outcome, the host's
  lobby, and how a seat, an error, an address are named;
* this module -- :class:`Node` itself: ``host``, ``join``, ``resume``, the relay, Ctrl-C.

The seat's side (:class:`Player`, :class:`GamePort`) is :mod:`.port`. What the node does:

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
  its transcripts. A peer resumed after a crash finishes its game and, when its own
  transcripts of the earlier games verify, is counted back into the session (it votes,
  plays on and signs the result like the others).
* **Shutdown.** On Ctrl-C (SIGINT/SIGTERM with ``handle_signals``; when the player agrees)
  the peer sends a signed ``leave``; at any end it says ``bye`` on every link and waits
  (boundedly) for the others to close, so that its last frames are read before its sockets close.
"""

from __future__ import annotations

import json
import logging
import signal
from collections.abc import Awaitable, Callable
from dataclasses import asdict

import trio

from ..protocol.config import ConfigError, TableConfig, lobby_id
from ..protocol.frames import FrameError
from ..protocol.session import PeerSession
from .invite import Invite
from .known import KnownPeersError
from .link import Link
from .links import Mesh, listen_failure
from .lobby import Lobby
from .persist import Route, SavedGame, SaveError, read_frames
from .port import GamePort, Player
from .relay import RelayServer
from .relay_client import RELAYED_HOST, RelayClient
from .relay_proto import ROOM_SIZE, RoomPass
from .runner import GameRunner
from .state import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    NodeOptions,
    Outcome,
    Stats,
    host_port,
    peak_rss_kb,
    reason_of,
)
from .watch_host import SpectatorHost
from .wire import (
    FrameStream,
    HandshakeError,
)

log = logging.getLogger("moska_p2p.net")

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "GamePort",
    "Node",
    "NodeOptions",
    "Outcome",
    "Player",
    "Stats",
]


class Node:
    """One peer (see the module docstring): the parts it owns, wired here and nowhere else,
    and the entry points.

    Use one of :meth:`host`, :meth:`join` or :meth:`resume` once; each returns the
    :class:`Outcome` (also kept in :attr:`outcome`).

    The parts, each an object with its own state: :attr:`mesh` (:class:`~.links.Mesh`, our
    port and the game links), :attr:`runner` (:class:`~.runner.GameRunner`, the game now and
    the next), :attr:`sessions` (:class:`~.sessions.SessionBook`, a session's tally and
    votes, the runner's), :attr:`lobby` (:class:`~.lobby.Lobby`, who may sit) and
    :attr:`spectators` (:class:`~.watch_host.SpectatorHost`). Each reaches the others only
    through the small interfaces it declares (``MeshGame``, ``LobbyDoor``, ``WatchDoor``,
    ``LobbyNet``, ``LobbyGame``, ``CurrentGame``, ``WatchedTable``, ``HostingLobby``).
    """

    def __init__(self, options: NodeOptions) -> None:
        self.o = options
        self.identity = options.identity
        self.me = options.identity.public_bytes
        self.stats = Stats()
        self.outcome: Outcome | None = None
        self._nursery: trio.Nursery | None = None
        self._relay_address: tuple[str, int] | None = None  # the table's, as the others dial it
        self._relay_served: int | None = None  # the port of the relay this host runs for others
        self.mesh = Mesh(options, self.identity, self.stats)
        self.runner = GameRunner(options, self.identity, self.stats, self.mesh, self._route)
        self.sessions = self.runner.sessions
        self.lobby = Lobby(
            options, self.identity, self.mesh, self.runner, self.sessions.game_path
        )
        self.spectators = SpectatorHost(
            options, self.identity, self.runner, self.lobby, self.sessions.results
        )
        self.mesh.game = self.runner
        self.mesh.lobby = self.lobby
        self.mesh.spectators = self.spectators
        self.runner.on_moved = self.spectators.news
        self.runner.on_closed = self.spectators.flush

    # What tests and tools read of a running node: each the state of the part that owns it.

    @property
    def session(self) -> PeerSession | None:
        return self.runner.session

    @property
    def saved(self) -> SavedGame | None:
        return self.runner.saved

    @property
    def over(self) -> trio.Event:
        return self.runner.over

    @property
    def ready(self) -> trio.Event:
        return self.runner.ready

    @property
    def closing(self) -> trio.Event:
        return self.runner.closing

    @property
    def gone(self) -> set[bytes]:
        return self.runner.gone

    @property
    def table_id(self) -> bytes:
        return self.runner.table_id

    @property
    def interrupted(self) -> bool:
        return self.runner.interrupted

    @property
    def links(self) -> dict[bytes, Link]:
        return self.mesh.links

    @property
    def port(self) -> int:
        return self.mesh.port

    @property
    def relay_client(self) -> RelayClient | None:
        return self.mesh.relay_client

    def on_frame(self, frame: bytes, source: bytes) -> None:
        """A game frame from the link to ``source`` (the runner's)."""
        self.runner.on_frame(frame, source)

    def conclude(self, outcome: Outcome) -> None:
        if self.outcome is not None:
            return
        self.outcome = outcome
        if outcome.code and outcome.verdict is None and outcome.finished is None:
            tell = self.o.error if outcome.code == EXIT_FAILED and self.o.error else self.o.echo
            tell(outcome.message)
        if self.o.stats is not None:
            for link in self.mesh.links.values():  # still open: count what they sent so far
                self.stats.frames_out += link.frames_out
                self.stats.bytes_out += link.bytes_out
            self.stats.code = outcome.code
            self.stats.seat = self.session.my_seat if self.session else -1
            self.stats.max_rss_kb = peak_rss_kb()
            try:
                self.o.stats.write_text(json.dumps(asdict(self.stats)) + "\n")
            except OSError as error:  # out of descriptors, a full disk: the game is still over
                log.warning("cannot write the statistics to %s: %s", self.o.stats, error)

    def _result(self) -> Outcome:
        assert self.outcome is not None
        return self.outcome

    async def _listen(self, port: int) -> list[trio.SocketListener] | None:
        """Listen on ``port`` of ``--bind``; None (the outcome concluded with the reason) when
        this machine cannot: the port in use, an address it does not have."""
        try:
            return await self.mesh.listen(port)
        except OSError as error:
            self.conclude(Outcome(EXIT_FAILED, listen_failure(self.o.bind, port, error)))
            return None


    # ------------------------------------------------------------------ entry points

    async def host(
        self,
        config: TableConfig,
        port: int,
        *,
        room: bytes | None = None,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> Outcome:
        """Open a table on ``port`` (0: any free port), wait for it to fill, play it out.
        ``room``: the table's room pass at the relay (a fresh one when None), for a caller
        that hands the invite out itself (a club event's table)."""
        listeners = await self._listen(port) if self.o.listen else []
        if listeners is None:
            return self._result()
        lobby = self.lobby.open(config)
        self.lobby.announce(config)
        task_status.started(self.port)

        async def body() -> None:
            table_room = room or bytes(RoomPass.new(lobby_id(config), self.me))
            if not await self._start_relay(table_room):
                return
            relay = self._relay_address
            invite = Invite.of(table_room, self.lobby.direct_addresses(), relay)
            self.o.echo(f"invite (moska join INVITE): {invite}")
            with self.lobby.scope, trio.move_on_after(self.o.lobby_wait):
                async with trio.open_nursery() as waiting:
                    if self.o.announce:
                        waiting.start_soon(self.lobby.beacon, lobby)
                    await lobby.full.wait()
                    waiting.cancel_scope.cancel()  # the beacon says "closed" and stops
            if self.session is not None:
                self.conclude(await self.runner.play_out())
            elif self.interrupted:
                self.conclude(Outcome(EXIT_INTERRUPTED, "interrupted before the game started"))
            else:
                reason = lobby.error or (
                    f"the table did not fill within {self.o.lobby_wait:g} s"
                    f" ({len(lobby.joined) + 1} of {config.players} players)"
                )
                await self.lobby.close(lobby, reason)
                self.conclude(Outcome(EXIT_FAILED, reason))

        return await self._run(listeners, body)

    async def join(
        self,
        host: str,
        port: int,
        *,
        expect: bytes | str | None = None,
        room: bytes | None = None,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> Outcome:
        """Join the table at ``host:port``, wait for it to fill, play it out. ``expect``: the
        host key that must answer there (the key that announced the table on the LAN, 32
        bytes), or its full fingerprint (``join --expect``). ``room``: an invite's table
        (:meth:`join_invite`), which the host's table must be; the table's relay is
        :attr:`NodeOptions.relay`."""
        listeners = await self._listen(self.o.listen_port) if self.o.listen else []
        if listeners is None:
            return self._result()
        self.lobby.room = room[:ROOM_SIZE] if room is not None else None
        task_status.started(self.port)

        async def body() -> None:
            if room is not None and not await self._start_relay(room):
                return
            entered: tuple[FrameStream, SavedGame] | None = None
            with self.lobby.scope:
                try:
                    entered = await self.lobby.enter(host, port, expect)
                except (
                    OSError,
                    trio.TooSlowError,
                    trio.BrokenResourceError,
                    HandshakeError,
                    FrameError,
                    ConfigError,
                    KnownPeersError,
                ) as e:
                    reason = reason_of(e)
                    if isinstance(e, ConnectionRefusedError):
                        reason = "connection refused (no table is open at that address)"
                    elif isinstance(e, trio.TooSlowError):
                        reason = "no answer in time (the table did not fill, or no host there)"
                    where = host_port(host, port)
                    if host == RELAYED_HOST and self.relay_client is not None:
                        where = f"the table at the relay {self.relay_client.address}"
                    self.conclude(Outcome(EXIT_FAILED, f"could not join {where}: {reason}"))
            if entered is not None:
                stream, saved = entered
                self.runner.begin(saved, None, {0: stream})
                self.conclude(await self.runner.play_out())
            elif self.outcome is None:
                self.conclude(Outcome(EXIT_INTERRUPTED, "interrupted before the game started"))

        return await self._run(listeners, body)

    async def join_invite(
        self, invite: Invite, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED
    ) -> Outcome:
        """Join the table of ``invite``: its first direct address (the relay when it does not
        answer, or when there is none), its host key pinned, its table checked."""
        host, port = invite.direct[0] if invite.direct else (RELAYED_HOST, 1)
        if invite.relay is not None:
            self.o.relay = invite.relay
        elif not self.o.listen:
            self.conclude(
                Outcome(
                    EXIT_FAILED,
                    "this invite names no relay, so this peer must listen for the others"
                    " (leave out --no-listen)",
                )
            )
            return self._result()
        return await self.join(
            host, port, expect=invite.host_key, room=invite.room, task_status=task_status
        )

    async def _start_relay(self, room: bytes) -> bool:
        """Run the relay for the others (``host --relay-for-others``) and connect to the
        table's relay, registered in ``room``; False (the outcome concluded) when a peer that
        does not listen cannot register, or the relay cannot listen."""
        assert self._nursery is not None
        relay = self.o.relay
        dial = relay
        if self.o.relay_for_others is not None:
            server = RelayServer()
            try:
                await self._nursery.start(server.serve, self.o.bind, self.o.relay_for_others)
            except OSError as error:
                why = error.strerror or str(error)
                where = f"{self.o.bind}:{self.o.relay_for_others}"
                self.conclude(Outcome(EXIT_FAILED, f"cannot run the relay on {where}: {why}"))
                return False
            here = self.lobby.direct_addresses()
            relay = (here[0][0] if here else "127.0.0.1", server.port)
            self._relay_served = server.port
            local = self.o.bind if self.o.bind not in ("0.0.0.0", "", "::") else "127.0.0.1"
            dial = (local, server.port)
            self.o.echo(f"relaying for the others on {self.o.bind}:{server.port}")
        if relay is None or dial is None:
            return True
        self._relay_address = relay
        client = RelayClient(
            self.identity, *dial, room, self.mesh.relayed_in, timeout=self.o.connect_timeout
        )
        self.mesh.relay_client = client
        await self._nursery.start(client.run)
        if not client.registered.is_set():
            reason = f"cannot register at the relay {client.address}: {client.error}"
            if not self.o.listen:
                self.conclude(Outcome(EXIT_FAILED, reason))
                return False
            self.o.echo(f"{reason}; only direct connections")
        if not self.o.listen:
            self.mesh.port = relay[1]  # our roster entry: "through the relay" (its port, for show)
        return True

    async def resume(
        self,
        saved: SavedGame,
        *,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> Outcome:
        """Rebuild the session of a game this peer was playing when it stopped, reach the
        table the way it did (listen where it listened; register at its relay, in its room,
        and run it again if it ran one for the others), reconnect, catch up and play it
        out."""
        try:
            frames = read_frames(saved.transcript, self.me)
        except SaveError as error:
            self.conclude(Outcome(EXIT_FAILED, f"cannot resume: {error}"))
            return self._result()
        route = saved.route
        self.o.listen = route.listen  # the roster says how the others reach us: as then
        listeners = await self._listen(saved.roster[saved.me].port) if route.listen else []
        if listeners is None:
            return self._result()
        if not route.listen:
            self.mesh.port = saved.roster[saved.me].port
        task_status.started(self.port)

        async def body() -> None:
            if route.room is not None and (route.relay or route.relay_port is not None):
                self.o.relay = route.relay if route.relay_port is None else None
                self.o.relay_for_others = route.relay_port
                if not await self._start_relay(route.room):
                    return
            self.sessions.resumed = True
            self.o.transcript = self.sessions.session_base(saved)  # a session's other files' names
            self.runner.begin(saved, frames, {})
            self.runner.resumed_between = self.runner.over.is_set()
            self.conclude(await self.runner.play_out())

        return await self._run(listeners, body)

    def _route(self) -> Route:
        """How this peer reaches its table now: whether it listens, the relay it dials and
        its room there (the lobby's, kept for every game), the relay it runs for the others."""
        client = self.relay_client
        if client is None:
            return Route(listen=self.o.listen)
        relay = (client.host, client.port)
        return Route(self.o.listen, relay, client.room, self._relay_served)

    async def _run(
        self, listeners: list[trio.SocketListener], body: Callable[[], Awaitable[None]]
    ) -> Outcome:
        """Serve our port (and Ctrl-C) while ``body`` runs; everything stops when it returns.

        What the network does to a connection is handled where the connection is (the
        links catch :data:`~.wire.TRANSPORT_ERRORS` only); whatever else reaches this point
        is this peer's own fault (a bug, a ``LocalError`` of its session): the node stops,
        the traceback goes to the log and one line to the person."""
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = self.mesh.nursery = self.runner.nursery = nursery
                nursery.start_soon(self.mesh.serve, listeners)
                if self.o.handle_signals:
                    nursery.start_soon(self._signals)
                await body()
                nursery.cancel_scope.cancel()
        except* Exception as group:
            log.exception("this peer stopped on an error of its own")
            first: BaseException = group
            while isinstance(first, BaseExceptionGroup) and first.exceptions:
                first = first.exceptions[0]
            self.conclude(
                Outcome(
                    EXIT_FAILED,
                    f"stopped by an error of this peer's own ({type(first).__name__}:"
                    f" {reason_of(first)}); the traceback is in the log",
                )
            )
        finally:
            if self.runner.file is not None:
                self.runner.file.close()
        return self._result()

    async def _signals(self) -> None:
        """Ctrl-C: leave with a signed message; a second Ctrl-C stops at once."""
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as received:
            async for _ in received:
                if self.sessions.stop_asking():  # Ctrl-C at "next game?": no, the session ends
                    continue
                if self.interrupted or self.over.is_set():
                    assert self._nursery is not None
                    self.conclude(Outcome(EXIT_INTERRUPTED, "interrupted"))
                    self._nursery.cancel_scope.cancel()
                    return
                if self.session is None:
                    self.runner.interrupted = True
                    self.lobby.scope.cancel()
                elif self.o.player.interrupt():  # a bot's seat, or a second Ctrl-C: leave
                    self.runner.leave("interrupted (Ctrl-C)", interrupted=True)
                # otherwise the player asks (a person: "leave the game?") and leaves by the port
