"""The lobby: who may sit at the table, and the roster.

The host's side: each proved ``join`` is checked (:meth:`Lobby.refusal`: the
table full, the host's own key, a known name with another key), seated, and watched until the
table fills; then the roster is fixed (host first, then joining order) and a signed ``start``
sent to everyone. The joiner's side: reach the host, check its table (and ``--expect``), prove
our key, wait for the start and check it (:meth:`Lobby.check_start`). Trust on first use
(:mod:`.known`) is checked on both sides.
"""

from __future__ import annotations

import errno
import logging
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import trio

from ..crypto.identity import Identity, fingerprint_of, parse_fingerprint
from ..protocol.config import TableConfig, lobby_id
from ..protocol.frames import printable
from ..protocol.session import PeerSession
from .known import KnownPeers, KnownPeersError
from .links import MAX_BACKOFF, MIN_BACKOFF, REFUSE_WAIT, refuse
from .persist import SavedGame
from .relay_client import RELAYED_HOST, RelayClient
from .state import HostLobby, NodeOptions, host_port, reason_of
from .wire import (
    HI,
    JOIN,
    MAX_NAME,
    MAX_REASON,
    REFUSE,
    START,
    TRANSPORT_ERRORS,
    ClosedError,
    Entry,
    FrameStream,
    HandshakeError,
    NetMessage,
    net_frame,
)

log = logging.getLogger("moska_p2p.net")

LOBBY_CLOSE_WAIT = 5.0
"""Seconds at most a host that gives up its lobby waits for its joiners to be told why."""


class LobbyNet(Protocol):
    """What the lobby uses of the node's connections (:mod:`.links`)."""

    port: int
    relay_client: RelayClient | None

    async def open_stream(
        self, host: str, port: int, key: bytes | None
    ) -> trio.abc.HalfCloseableStream: ...

    async def prove(
        self,
        fs: FrameStream,
        kind: str,
        table: bytes,
        listener: bytes,
        listener_nonce: bytes,
        extra: dict[str, Any],
    ) -> None: ...

    async def serve_link(self, key: bytes, fs: FrameStream) -> None: ...

    async def listen_again(self, port: int) -> None: ...


class LobbyGame(Protocol):
    """What the lobby uses of the game runner: the game, once the table is full."""

    session: PeerSession | None
    saved: SavedGame | None

    def begin(
        self,
        saved: SavedGame,
        frames: list[bytes] | None,
        first: dict[int, FrameStream],
        *,
        later: bool = False,
    ) -> None: ...


class Lobby:
    """A node's lobby, both sides (see the module docstring)."""

    def __init__(
        self,
        options: NodeOptions,
        identity: Identity,
        net: LobbyNet,
        game: LobbyGame,
        game_path: Callable[[TableConfig, int], Path],
    ) -> None:
        self.o = options
        self.identity = identity
        self.me = identity.public_bytes
        self.net = net
        self.game = game
        self.game_path = game_path  # this peer's transcript of a session's game (.sessions)
        self.hosting: HostLobby | None = None  # the host's side of the lobby
        self.room: bytes | None = None  # a joiner's invite: the table it must be
        self.scope = trio.CancelScope()  # cancelled by Ctrl-C before the game starts

    def open(self, config: TableConfig) -> HostLobby:
        """This node hosts the table ``config``: its lobby opens."""
        self.hosting = HostLobby(config)
        return self.hosting

    async def _reach_host(
        self, host: str, port: int, deadline: float, key: bytes | None = None
    ) -> tuple[FrameStream, NetMessage]:
        """Dial the host (``key``, when an invite names it: then through the relay too) and
        read its ``hi``, retrying until ``deadline`` while it is not up yet or closes before
        speaking (a full queue of strangers at its door)."""
        delay = MIN_BACKOFF
        while True:
            stream: trio.abc.HalfCloseableStream | None = None
            try:
                with trio.fail_at(deadline):
                    stream = await self.net.open_stream(host, port, key)
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

    async def enter(
        self, host: str, port: int, expect: bytes | str | None = None
    ) -> tuple[FrameStream, SavedGame]:
        """Dial the host (retrying while it is not up yet), accept its table, prove our key and
        check its, wait for the start; returns the connection (our game link to the host) and
        the table."""
        deadline = trio.current_time() + self.o.connect_timeout
        key = expect if isinstance(expect, bytes) else None
        fs, hi = await self._reach_host(host, port, deadline, key)
        stream = fs.stream
        try:
            if "config" not in hi.body:
                raise HandshakeError("the peer at that address is not the host of a table")
            _check_expected(hi.key, expect)
            config = TableConfig.from_wire(hi.body["config"])
            if self.room is not None and lobby_id(config)[: len(self.room)] != self.room:
                raise HandshakeError(
                    "the host there has another table than the invite's (an old invite?)"
                )
            host_name = printable(str(hi.body["name"])[:MAX_NAME])
            relay = self.net.relay_client
            where = host_port(host, port) if host != RELAYED_HOST else "the relay"
            if relay is not None and host == RELAYED_HOST:
                where = f"the relay {relay.address}"
            self.o.echo(
                f"table at {where}: {config.preset} for {config.players} players,"
                f" opened by {host_name} ({fingerprint_of(hi.key)}); timeout {config.timeout:g} s"
                + (f"; a session of {config.games} games" if config.in_session else "")
            )
            lobby = lobby_id(config)
            entry = Entry.sign(
                self.identity, lobby, self.o.name, self._my_host(fs.stream), self.net.port
            )
            join = {"name": entry.name, "host": entry.host, "port": entry.port, "sig": entry.sig}
            with trio.fail_after(self.o.connect_timeout):
                await self.net.prove(fs, JOIN, lobby, hi.key, hi.body["nonce"], join)
            self.o.echo(
                "joined; waiting for the table to fill (listening on"
                f" {host_port(self.o.bind, self.net.port)} for the other players)"
                if self.o.listen
                else "joined; waiting for the table to fill (the others reach this peer through"
                " the relay)"
            )
            with trio.fail_after(self.o.lobby_wait):
                start = await fs.receive_net(START)
            try:
                roster = self.check_start(start, hi.key, config)
                await self._listen_as_listed(roster, self._my_host(fs.stream))
            except HandshakeError as error:
                await self._refuse_start(fs, str(error))
                raise
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise
        me = next(i for i, e in enumerate(roster) if e.key == self.me)
        secret = secrets.token_bytes(32)
        path = self.game_path(config, 1)
        saved = SavedGame(path, secret, config, roster, me, self.o.name, (host, port))
        return fs, saved

    async def _refuse_start(self, fs: FrameStream, reason: str) -> None:
        """Tell the host why this peer will not play the table it started (a changed key
        of a known player, a bad roster): the host shows it, instead of seeing only the
        silence of a peer that never says hello."""
        # after the handshake: bound to this connection like any link message
        frame = net_frame(self.identity, REFUSE, {"reason": reason[:MAX_REASON]}, fs.link)
        with trio.move_on_after(REFUSE_WAIT):
            await fs.send(frame)

    def _my_host(self, stream: trio.abc.Stream) -> str:
        """The address the others should dial us at: ``--bind`` when it names one, else the
        local address of our connection to the host (the interface on its network); a peer
        that does not listen, or that reached the host through the relay, is reached through
        the relay."""
        if not self.o.listen:
            return RELAYED_HOST
        if self.o.bind not in ("", "0.0.0.0", "::"):
            return self.o.bind
        socket = getattr(stream, "socket", None)
        if socket is None and self.net.relay_client is not None:
            return RELAYED_HOST  # we reached the host through the relay: the others will too
        try:
            return str(socket.getsockname()[0]) if socket is not None else "127.0.0.1"
        except OSError:
            return "127.0.0.1"

    def check_start(
        self, start: NetMessage, host_key: bytes, config: TableConfig
    ) -> tuple[Entry, ...]:
        roster = check_roster(start, host_key, config)
        if not any(e.key == self.me for e in roster):
            raise HandshakeError("the roster does not list this peer")
        self._trust(host_key, roster)
        return roster

    async def _listen_as_listed(self, roster: Sequence[Entry], here: str) -> None:
        """Where the roster lists this peer is where the others dial it. Another port than
        ours is one an earlier run of this seat joined from (the entry bears this key's
        signature: :func:`check_roster`): that run was stopped after the table filled and
        before its start arrived (the host sends a joiner that lost the start the same
        start again), so it signed nothing of the game (a game is saved before its first
        frame, and a saved game is resumed, not joined). Listening on that port again lets
        the table play; an address that is not ours, or a port taken now, refuses it."""
        (mine,) = [e for e in roster if e.key == self.me]
        if mine.port == self.net.port:
            return
        if not self.o.listen or mine.host != here:
            raise HandshakeError("the roster does not list this peer as it joined")
        try:
            await self.net.listen_again(mine.port)
        except OSError as error:
            raise HandshakeError(
                "the table started with an earlier run of this seat, which listened on port"
                f" {mine.port}, and this machine cannot listen there now ({reason_of(error)})"
            ) from None
        self.o.echo(
            f"the table had started with an earlier run of this seat: listening on port"
            f" {mine.port} again, where the others look for it"
        )

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
            names = ", ".join(repr(printable(c.name)) for c in changes)
            raise HandshakeError(
                f"a known player's key has changed ({names}; see the warning above)"
            )
        known.remember(host_key, players)

    async def seat(
        self, fs: FrameStream, msg: NetMessage, entry: Entry, address: str
    ) -> None:
        """The host's side of a ``join`` (its proof checked): seat the joiner, wait for the
        table to fill while watching the connection, then send the start and keep the
        connection as a game link."""
        lobby = self.hosting
        assert lobby is not None
        if lobby.roster is not None and any(e.key == msg.key for e in lobby.roster):
            await self._send_start(fs, msg.key)  # a joiner that lost the start
            return
        refusal = self.refusal(msg.key, entry)
        if refusal:
            await refuse(self.identity, fs, refusal)
        seat = trio.CancelScope()
        previous = lobby.joined.get(msg.key)
        if previous is not None:
            previous[1].cancel()  # the same key again: its older connection is closed
        lobby.joined[msg.key] = (entry, seat)
        count = len(lobby.joined) + 1
        self.o.echo(
            f"{printable(entry.name)} ({fingerprint_of(entry.key)}) joined from {address}:"
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
                await refuse(
                    self.identity,
                    fs,
                    "replaced by a newer join with the same key (the same command run twice?"
                    " every seat needs a key of its own: --identity FILE)",
                )
            if left:
                if lobby.roster is None and lobby.joined.get(msg.key, (entry, None))[1] is seat:
                    del lobby.joined[msg.key]
                    who = f"{printable(entry.name)} ({fingerprint_of(entry.key)})"
                    self.o.echo(f"{who} left before the start")
                return
            if self.game.session is None:  # the host gave up (close) or could not start
                await refuse(self.identity, fs, lobby.error or "the game could not start")
        finally:
            lobby.waiting -= 1
        await self._send_start(fs, msg.key)

    async def close(self, lobby: HostLobby, reason: str) -> None:
        """The host gives up its lobby: every waiting joiner gets ``reason`` in a ``refuse``
        (via :meth:`_send_start`) before the node closes its connections, not a bare close
        ("the other side closed the connection" told it nothing)."""
        lobby.error = reason
        lobby.full.set()
        with trio.move_on_after(LOBBY_CLOSE_WAIT):
            while lobby.waiting:
                await trio.sleep(0.01)

    def refusal(self, key: bytes, entry: Entry) -> str:
        """Why the lobby cannot seat the joiner ``key`` (its roster ``entry``) now, "" if it
        can. Asked before the ``welcome`` too, so a refused joiner never reads "joined"."""
        lobby = self.hosting
        assert lobby is not None
        if lobby.roster is not None:
            if not any(e.key == key for e in lobby.roster):
                return "the game has started"
            if self._has_played(key):  # a fresh secret would sign other frames: equivocation
                return (
                    "this seat has played already: start it again with its saved game (the"
                    " same command: the same --identity and --transcript), not as a new join"
                )
            return ""  # a joiner that lost the start
        if lobby.full.is_set():  # the host gave up the lobby (close): it seats no one
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
        if known is not None and not self.o.allow_aborters:
            aborted = known.refusal_of_aborter(key)
            if aborted:
                self.o.echo(f"refused {printable(entry.name)!r}: {aborted}")
                return aborted
        if known is not None:
            changes = known.check(self.me, [(entry.name, entry.key)])
            if changes:
                self.o.echo(changes[0].message())
                return (
                    f"the host knows the name {printable(entry.name)!r} with another key"
                    f" ({fingerprint_of(changes[0].known)}); pick another name, or ask the"
                    " host to forget the old key"
                )
        return ""

    def _has_played(self, key: bytes) -> bool:
        """Whether the seat ``key`` has sent a frame of the game (or the session is past its
        first game): a ``join`` with that key now is a restart without its saved game."""
        saved, session = self.game.saved, self.game.session
        if saved is None or session is None:
            return False
        if saved.config.game > 1:
            return True
        peer = session.peers.get(key)
        return peer is not None and (peer.next_seq > 0 or bool(peer.inbox))

    async def _left_before_start(self, fs: FrameStream) -> bool:
        """Wait for the table to fill; True if the joiner hung up (or spoke) meanwhile."""
        lobby = self.hosting
        assert lobby is not None
        left = False
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                nonlocal left
                try:
                    await fs.stream.receive_some(1)  # a joiner says nothing before the start
                except TRANSPORT_ERRORS as error:
                    log.info("a joiner's connection broke: %s", reason_of(error))
                left = True
                nursery.cancel_scope.cancel()

            nursery.start_soon(watch)
            await lobby.full.wait()
            nursery.cancel_scope.cancel()
        return left

    def _seal(self) -> None:
        """The table is full: fix the roster (host first, then joining order) and start."""
        lobby = self.hosting
        assert lobby is not None
        host = Entry.sign(self.identity, lobby_id(lobby.config), self.o.name, "", self.net.port)
        lobby.roster = (host, *(entry for entry, _ in lobby.joined.values()))
        relay = self.net.relay_client
        if relay is not None:  # the relay admits the players alone from now on
            relay.admit_only([entry.key for entry in lobby.roster])
        try:
            self._trust(self.me, lobby.roster)
        except (HandshakeError, KnownPeersError) as error:  # checked at each join already
            log.warning("known players: %s", reason_of(error))
        body = {"config": lobby.config.to_wire(), "roster": [e.to_wire() for e in lobby.roster]}
        lobby.start_frame = net_frame(self.identity, START, body)
        saved = SavedGame(
            self.game_path(lobby.config, 1),
            secrets.token_bytes(32),
            lobby.config,
            lobby.roster,
            0,
            self.o.name,
            None,
        )
        try:
            self.game.begin(saved, None, {})
        except (OSError, ValueError) as error:
            lobby.error = f"cannot start the game: {error}"
        else:
            self.o.echo(f"all {lobby.config.players} players are here: the game starts")
        lobby.full.set()

    async def _send_start(self, fs: FrameStream, key: bytes) -> None:
        lobby = self.hosting
        assert lobby is not None
        if self.game.session is None:
            await refuse(self.identity, fs, lobby.error or "the game could not start")
        with trio.fail_after(self.o.connect_timeout):
            await fs.send(lobby.start_frame)
        await self.net.serve_link(key, fs)

    async def beacon(self, lobby: HostLobby) -> None:
        """Announce the open table on the LAN until it fills (see :mod:`.discovery`); a
        failure only costs the announcement, never the table."""
        from .discovery import DiscoveryError, TableStatus, announce

        failures: tuple[type[Exception], ...] = (*TRANSPORT_ERRORS, DiscoveryError)

        def status() -> TableStatus:
            return TableStatus(len(lobby.joined) + 1, lobby.roster is None)

        try:
            await announce(
                self.identity,
                lobby.config,
                name=self.o.name,
                port=self.net.port,
                status=status,
                bind=self.o.bind,
                ready=lambda where: self.o.echo(f"{where}: find it with moska tables"),
            )
        except* failures as group:
            log.warning("cannot announce the table on the LAN: %s", reason_of(group))

    def announce(self, config: TableConfig) -> None:
        options = ", ".join(f"{k}={config.options[k]}" for k in sorted(config.options))
        self.o.echo(
            f"table open: {config.preset} for {config.players} players"
            f"{' (' + options + ')' if options else ''}, timeout {config.timeout:g} s,"
            f" grace {config.grace:g} s;"
            f"{f' a session of {config.games} games;' if config.in_session else ''}"
            f" host {self.o.name} ({self.identity.fingerprint})"
        )
        if not self.o.listen:
            return
        if self.o.bind in ("0.0.0.0", "", "::"):
            lan = lan_address()
            if lan:
                where = host_port(lan, self.net.port)
                self.o.echo(f"join from the network with: moska join {where}")
            self.o.echo(f"join from this machine with: moska join 127.0.0.1:{self.net.port}")
        else:
            self.o.echo(f"join with: moska join {host_port(self.o.bind, self.net.port)}")

    def direct_addresses(self) -> tuple[tuple[str, int], ...]:
        """Where others may dial this host, for its invite (none when it does not listen)."""
        if not self.o.listen:
            return ()
        if self.o.bind in ("0.0.0.0", "", "::"):
            return ((lan_address() or "127.0.0.1", self.net.port),)
        return ((self.o.bind, self.net.port),)


def check_roster(start: NetMessage, host_key: bytes, config: TableConfig) -> tuple[Entry, ...]:
    """The roster of a host's ``start`` for the table ``config`` it showed in its ``hi``:
    signed by the host, the same settings, distinct players with the host first, each entry
    signed by its own key (what a joiner and a spectator check alike)."""
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
            who = f"{printable(entry.name)} ({fingerprint_of(entry.key)})"
            raise HandshakeError(f"the roster entry of {who} is not signed by its key")
    return roster


def _refused(error: BaseException) -> bool:
    """Whether a dial failed with "connection refused" on every address it tried (trio
    reports the attempts as the cause of one OSError)."""
    if isinstance(error, ConnectionRefusedError):
        return True
    cause = error.__cause__
    if isinstance(cause, BaseExceptionGroup) and cause.exceptions:
        return all(isinstance(e, ConnectionRefusedError) for e in cause.exceptions)
    return False


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


def lan_address() -> str:
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
