"""A peer on the network: one :class:`~moska_p2p.protocol.session.PeerSession` driven over a
full mesh of TCP connections, with trio.

The session decides everything; the node only moves bytes and keeps time. It is one object
built from one class per job, each in its own module and each inheriting the one before:

* :mod:`.state` -- the options, the figures, the outcome and every field of the node;
* :mod:`.sessions` -- between the games of a session: the tally, the vote, the signed result;
* :mod:`.runner` -- one game, then the next: the session fed frames and ticks, its outputs
  acted on (transcript, links, player), the end reported;
* :mod:`.links` -- our port (with the caps on strangers of :mod:`.admission`), the handshake,
  the game links and redialing;
* :mod:`.lobby` -- who may sit and the roster, the host's side and the joiner's;
* :mod:`.watch_host` -- the host's spectators: who may watch, and the stream each one gets
  (the spectator's own side is :mod:`.watch`, which is no node);
* this module -- :class:`Node` itself: ``host``, ``join``, ``resume`` and Ctrl-C.

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

import signal
from collections.abc import Awaitable, Callable
from dataclasses import replace

import trio

from ..protocol.config import ConfigError, TableConfig, lobby_id
from ..protocol.frames import FrameError
from .invite import Invite
from .known import KnownPeersError
from .persist import Route, SavedGame, SaveError, read_frames
from .port import GamePort, Player
from .relay import RelayServer
from .relay_client import RELAYED_HOST, RelayClient
from .relay_proto import ROOM_SIZE, RoomPass
from .state import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    NodeOptions,
    Outcome,
    Stats,
    _Lobby,
    _reason,
    host_port,
)
from .watch_host import WatchHostNode
from .wire import (
    SYNC,
    FrameStream,
    HandshakeError,
)

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
    "_Lobby",
]


class Node(WatchHostNode):
    """One peer: lobby, mesh, ticker, bot and files (see the module docstring).

    Use one of :meth:`host`, :meth:`join` or :meth:`resume` once; each returns the
    :class:`Outcome` (also kept in :attr:`outcome`).
    """

    _relay_served: int | None = None  # the port of the relay this host runs for the others
    _resumed_between: bool = False  # resumed in a game already over: the next one resyncs

    # ------------------------------------------------------------------ entry points

    async def host(
        self,
        config: TableConfig,
        port: int,
        *,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> Outcome:
        """Open a table on ``port`` (0: any free port), wait for it to fill, play it out."""
        listeners = await self._listen(port) if self.o.listen else []
        if listeners is None:
            return self._result()
        lobby = self._lobby = _Lobby(config)
        self._announce(config)
        task_status.started(self.port)

        async def body() -> None:
            room = bytes(RoomPass.new(lobby_id(config), self.me))
            if not await self._start_relay(room):
                return
            relay = self._relay_address
            invite = Invite.of(room, self._direct_addresses(), relay)
            self.o.echo(f"invite (moska join INVITE): {invite}")
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
        self._room = room[:ROOM_SIZE] if room is not None else None
        task_status.started(self.port)

        async def body() -> None:
            if room is not None and not await self._start_relay(room):
                return
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
                    where = host_port(host, port)
                    if host == RELAYED_HOST and self.relay_client is not None:
                        where = f"the table at the relay {self.relay_client.address}"
                    self._conclude(Outcome(EXIT_FAILED, f"could not join {where}: {reason}"))
            if entered is not None:
                stream, saved = entered
                self._begin(saved, None, {0: stream})
                await self._play_out()
            elif self.outcome is None:
                self._conclude(Outcome(EXIT_INTERRUPTED, "interrupted before the game started"))

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
            self._conclude(
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
                self._conclude(Outcome(EXIT_FAILED, f"cannot run the relay on {where}: {why}"))
                return False
            here = self._direct_addresses()
            relay = (here[0][0] if here else "127.0.0.1", server.port)
            self._relay_served = server.port
            local = self.o.bind if self.o.bind not in ("0.0.0.0", "", "::") else "127.0.0.1"
            dial = (local, server.port)
            self.o.echo(f"relaying for the others on {self.o.bind}:{server.port}")
        if relay is None or dial is None:
            return True
        self._relay_address = relay
        client = RelayClient(
            self.identity, *dial, room, self._relayed_in, timeout=self.o.connect_timeout
        )
        self.relay_client = client
        await self._nursery.start(client.run)
        if not client.registered.is_set():
            reason = f"cannot register at the relay {client.address}: {client.error}"
            if not self.o.listen:
                self._conclude(Outcome(EXIT_FAILED, reason))
                return False
            self.o.echo(f"{reason}; only direct connections")
        if not self.o.listen:
            self.port = relay[1]  # our roster entry: "through the relay" (its port, for show)
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
            self._conclude(Outcome(EXIT_FAILED, f"cannot resume: {error}"))
            return self._result()
        route = saved.route
        self.o.listen = route.listen  # the roster says how the others reach us: as then
        listeners = await self._listen(saved.roster[saved.me].port) if route.listen else []
        if listeners is None:
            return self._result()
        if not route.listen:
            self.port = saved.roster[saved.me].port
        task_status.started(self.port)

        async def body() -> None:
            if route.room is not None and (route.relay or route.relay_port is not None):
                self.o.relay = route.relay if route.relay_port is None else None
                self.o.relay_for_others = route.relay_port
                if not await self._start_relay(route.room):
                    return
            self._resumed = True
            self.o.transcript = self._session_base(saved)  # a session's other files' names
            self._begin(saved, frames, {})
            self._resumed_between = self.over.is_set()
            await self._play_out()

        return await self._run(listeners, body)

    def _begin(
        self,
        saved: SavedGame,
        frames: list[bytes] | None,
        first: dict[int, FrameStream],
        *,
        later: bool = False,
    ) -> None:
        """Every game's saved state records how this peer reaches the table (its route), so
        that a restart reaches it the same way (:meth:`resume`)."""
        super()._begin(replace(saved, route=self._route()), frames, first, later=later)
        session = self.session
        if later and self._resumed_between and session is not None:
            # Restarted between two games: the others may have started this one while we
            # were down, and their first frames of it went nowhere. Ask for them.
            self._resumed_between = False
            have = [[k, seq] for k, seq in session.sync_state().items()]
            for link in self.links.values():
                link.send_net(SYNC, {"have": have})

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
