"""Links: our port (accepting, with the caps of :mod:`.admission`), the handshake that
proves both keys, the game links to the other peers, and redialing them.

A connection to our port gets a ``hi``; the dialer answers ``join`` (a joiner, handed to the
lobby, :mod:`.lobby`), ``link`` (a later peer of the table) or ``watch`` (a spectator, handed
to :mod:`.watch_host`, with a proof of its own kind); both ends prove their keys over
each other's fresh nonce (:mod:`.wire`), and the connection keeps its link id, which every
later link message is signed over. A game link then runs as a :class:`~.link.Link`
until it drops; the later peer redials with backoff.

**Paths.** With a relay, the later peer tries the direct address for :data:`DIRECT_TRY` s and
falls back to a virtual link through the relay. A link that fell back does not stay relayed
for good: while it is served, the dialer tries the direct address again in the background
(:data:`UPGRADE_FIRST`, doubling to :data:`UPGRADE_MAX`), and a direct link that proves the
right key replaces the relayed one at once (the listener replaces the older link of the same
key, as after any redial, and both sides resync). A failed try changes nothing.
"""

from __future__ import annotations

import errno
import logging
import math
import secrets
import socket
from typing import Any, NoReturn, Protocol

import trio

from ..crypto.identity import Identity, fingerprint_of
from ..protocol.config import lobby_id
from ..protocol.session import PeerSession
from .admission import Admission, Quiet, Ticket
from .link import Link
from .persist import SavedGame
from .relay_client import RELAYED_HOST, RelayClient, RelayUnreachable, VirtualStream
from .state import HostLobby, NodeOptions, Stats, reason_of
from .wire import (
    DIALER,
    HI,
    JOIN,
    LINK,
    LISTENER,
    MAX_NAME,
    REFUSE,
    TRANSPORT_ERRORS,
    WATCH,
    WELCOME,
    Entry,
    FrameStream,
    HandshakeError,
    NetMessage,
    check_link_proof,
    link_id,
    link_proof,
    net_frame,
)

log = logging.getLogger("moska_p2p.net")

MIN_BACKOFF = 0.05
MAX_BACKOFF = 1.0
"""Redial delays: doubling from the first to the last, so a restarted peer is found fast."""

DIRECT_TRY = 3.0
"""Seconds a direct dial may take when a relay could carry the link instead."""

UPGRADE_FIRST = 5.0
"""Seconds after a link to an earlier peer fell back to the relay before its direct address
is tried again: long enough for a peer that was restarting (or a transient failure) when we
dialed to answer, short enough that most of the game runs direct."""

UPGRADE_MAX = 60.0
"""The longest wait between two tries of a direct address (doubling from
:data:`UPGRADE_FIRST`): an address that never answers costs one connection attempt a
minute, for as long as the relayed link lasts."""

REFUSE_WAIT = 5.0
"""Seconds at most to hand a ``refuse`` to a peer before closing. The frame is small and our
send buffer empty, so it never waits unless the peer stops reading; a generous bound (not 1 s)
so a loaded machine's stall between arming the timer and sending cannot drop the reason."""

ACCEPT_BACKOFF = (0.05, 1.0)
"""First and last delay after a failed accept (doubling): out of descriptors, we wait."""

ACCEPT_QUIET = 10.0
"""Seconds without a failed accept that end a burst of them (one warning per burst)."""

_RESOURCE_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM}


class WatchDoor(Protocol):
    """Who answers a spectator's ``watch`` at our port (:mod:`.watch_host`)."""

    async def admit(
        self, fs: FrameStream, msg: NetMessage, nonce: bytes, address: str, ticket: Ticket
    ) -> None: ...


async def refuse(identity: Identity, fs: FrameStream, reason: str) -> NoReturn:
    """Tell the other side why, then end this connection (raises). The frame is signed
    before the timer starts, and the timer is :data:`REFUSE_WAIT`: only a peer that does
    not read can make it run out, not a slow machine. After the handshake (the lobby's
    refusals) it is bound to this connection like any link message."""
    frame = net_frame(identity, REFUSE, {"reason": reason}, fs.link)
    with trio.move_on_after(REFUSE_WAIT):
        await fs.send(frame)
    raise HandshakeError(f"refused: {reason}")


class LobbyDoor(Protocol):
    """Who answers a joiner's ``join`` at our port (:mod:`.lobby`)."""

    hosting: HostLobby | None  # the host's side of the lobby (None: not a host)

    def refusal(self, key: bytes, entry: Entry) -> str:
        """Why the lobby cannot seat the joiner ``key`` now ("" if it can), asked before the
        ``welcome``."""
        ...

    async def seat(self, fs: FrameStream, msg: NetMessage, entry: Entry, address: str) -> None:
        """Seat a joiner whose key is proved."""
        ...


class MeshGame(Protocol):
    """What the links use of the game runner (:mod:`.runner`): the game they carry, whom a
    link may serve, and the runner as the owner of every link (:class:`~.link.LinkOwner`)."""

    identity: Identity
    session: PeerSession | None
    saved: SavedGame | None
    table_id: bytes  # what every game link is bound to (PROTOCOL.md §22)
    send_timeout: float
    ready: trio.Event  # set when a game begins
    over: trio.Event
    closing: trio.Event  # the table breaks up: links end, nobody redials
    gone: set[bytes]  # peers that said bye

    def on_frame(self, frame: bytes, source: bytes) -> None: ...

    def on_net(self, link: Link, message: NetMessage) -> None: ...

    def label(self, key: bytes) -> str: ...

    def greet(self, link: Link) -> None:
        """A link to ``link.key`` is up: queue what it must carry first."""
        ...

    def tell_paths(self) -> None:
        """Which links go through a relay changed (:attr:`Mesh.relayed`)."""
        ...


class Mesh:
    """A node's connections (see the module docstring): our port, the handshakes, the game
    links by peer key, and the table's relay when there is one.

    Wired after construction (:class:`~.node.Node` does it, in one place): :attr:`game`, the
    game runner; :attr:`lobby`, who seats joiners; :attr:`spectators`, who answers a
    ``watch``; :attr:`nursery`, where connections are served while the node runs."""

    game: MeshGame
    lobby: LobbyDoor
    spectators: WatchDoor
    nursery: trio.Nursery | None = None

    def __init__(self, options: NodeOptions, identity: Identity, stats: Stats) -> None:
        self.o = options
        self.identity = identity
        self.me = identity.public_bytes
        self.stats = stats
        self.port = 0  # our listening port (a peer that does not listen: the relay's, for show)
        self.links: dict[bytes, Link] = {}  # the live game link to each peer
        self.relay_client: RelayClient | None = None  # our connection to the table's relay
        self.relayed: set[bytes] = set()  # peers whose latest link went through a relay
        self.admission = Admission(options.max_pending, options.max_pending_per_address)
        self._quiet = Quiet()
        self._upgrading: set[bytes] = set()  # earlier peers whose direct address we retry

    async def listen(self, port: int) -> list[trio.SocketListener]:
        """Listen on ``port`` of ``--bind``; OSError when this machine cannot (the port in use,
        an address it does not have: :func:`listen_failure` says it in one line)."""
        listeners = await trio.open_tcp_listeners(port, host=self.o.bind)
        self.port = int(listeners[0].socket.getsockname()[1])
        return listeners

    async def listen_again(self, port: int) -> None:
        """Listen on ``port`` too, served beside our first port, and make it ours: the port
        an earlier run of this seat joined the table from, which the roster lists (OSError
        when this machine cannot listen there now)."""
        assert self.nursery is not None, "the node serves its port while it runs"
        listeners = await self.listen(port)
        self.nursery.start_soon(self.serve, listeners)

    def shed_strangers(self) -> None:
        """The table is done: strangers are of no use now, and their descriptors may be
        needed to check the transcript."""
        self.admission.shed(len(self.admission.pending))
        self.admission.total = self.admission.configured = min(self.admission.total, 2)

    def _path_is(self, key: bytes, relayed: bool) -> None:
        """The latest link to ``key`` goes through a relay (or not): the game runner tells
        the session, so that a verdict it signs says which paths were relayed (§7.11)."""
        if relayed:
            self.relayed.add(key)
        else:
            self.relayed.discard(key)
        self.game.tell_paths()

    async def serve(self, listeners: list[trio.SocketListener]) -> None:
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
                        self.admission.squeeze()  # strangers' descriptors, never a game link
                    await trio.sleep(delay)
                    delay = min(delay * 2, ACCEPT_BACKOFF[1])
                    continue
                delay = ACCEPT_BACKOFF[0]
                if burst and trio.current_time() - last_failure > ACCEPT_QUIET:
                    log.info("accepting connections again (%d accepts failed)", burst)
                    burst = 0
                    self.admission.relax()
                try:
                    where = "{}:{}".format(*stream.socket.getpeername()[:2])
                except OSError:
                    where = "an unknown address"
                address = where.rpartition(":")[0] or where
                ticket = self.admission.admit(address)
                if ticket is None:
                    self.stats.refused_connections += 1
                    self._quiet.warning(
                        "refused connections from %s: too many that have not proved their key"
                        " (at most %d, %d per address)",
                        address,
                        self.admission.total,
                        self.admission.per_address,
                    )
                    await trio.aclose_forcefully(stream)
                    continue
                nursery.start_soon(self._accept, stream, where, ticket)

    async def _accept(
        self,
        stream: trio.abc.HalfCloseableStream,
        where: str,
        ticket: Ticket,
        address: str | None = None,
    ) -> None:
        """A connection to our port (or a virtual link through the relay, from ``address``):
        a joiner (host only) or a later peer. Whatever it does, only this connection is at
        stake."""
        if address is None:
            address = where.rpartition(":")[0]
        try:
            with ticket.scope:
                await self._handshake_in(FrameStream(stream), address, ticket)
            if ticket.scope.cancelled_caught:
                self._quiet.warning(
                    "closed a connection from %s: shed, to free a descriptor", where
                )
        except* TRANSPORT_ERRORS as group:
            self._quiet.warning("closed a connection from %s: %s", where, reason_of(group))
        finally:
            ticket.release()
            await trio.aclose_forcefully(stream)

    def relayed_in(self, stream: VirtualStream) -> None:
        """A member of the table's room opened a virtual link to us through the relay: the
        listener's handshake, as for a connection to our port, under the same caps on
        strangers (counted by the key the relay names)."""
        nursery = self.nursery
        relay = self.relay_client
        assert nursery is not None and relay is not None
        where = f"the relay {relay.address}"
        ticket = self.admission.admit(f"{where} for {fingerprint_of(stream.key)}")
        if ticket is None:
            self.stats.refused_connections += 1
            nursery.start_soon(trio.aclose_forcefully, stream)
            return
        nursery.start_soon(self._accept, stream, where, ticket, where)

    async def open_stream(
        self, host: str, port: int, key: bytes | None
    ) -> trio.abc.HalfCloseableStream:
        """A connection to the peer ``key`` at ``host:port``: TCP when the address is a
        direct one and answers (tried for :data:`DIRECT_TRY` s when there is a relay), else a
        virtual link through the table's relay. The handshake that follows proves who
        answered, whichever way it came."""
        relay = self.relay_client
        if host == RELAYED_HOST:
            if relay is None or key is None:
                raise RelayUnreachable("that peer is reached through a relay, and we have none")
            return await relay.open(key)
        if relay is None or key is None:
            return await self.connect_direct(host, port)
        try:
            with trio.fail_after(DIRECT_TRY):
                return await self.connect_direct(host, port)
        except (OSError, trio.TooSlowError) as error:
            log.info("%s:%d does not answer (%s): through the relay", host, port, reason_of(error))
        return await relay.open(key)

    async def connect_direct(self, host: str, port: int) -> trio.abc.HalfCloseableStream:
        """A TCP connection to ``host:port``: the one place this node opens a direct
        connection to a peer (so that a test can make that path fail, then answer)."""
        return await trio.open_tcp_stream(host, port)

    async def _handshake_in(self, fs: FrameStream, address: str, ticket: Ticket) -> None:
        """Our side of a connection to our port: a ``hi`` with a fresh nonce, the dialer's
        ``join`` or ``link`` with its proof of key, our ``welcome`` with ours (see
        :mod:`.wire`); then the connection is a lobby seat or a game link."""
        nonce = secrets.token_bytes(32)
        hello: dict[str, Any] = {"nonce": nonce, "name": self.o.name[:MAX_NAME]}
        lobby = self.lobby.hosting
        if lobby is not None:
            hello["config"] = lobby.config.to_wire()
        with trio.fail_after(self.o.handshake_timeout):
            await fs.send(net_frame(self.identity, HI, hello))
            msg = await fs.receive_net(JOIN, LINK, WATCH)
        if msg.kind == WATCH:  # a spectator: .watch_host
            await self.spectators.admit(fs, msg, nonce, address, ticket)
            return
        if msg.kind == JOIN:
            if lobby is None:
                await refuse(self.identity, fs, "this peer is not the host of a table")
            table = lobby_id(lobby.config)
        else:
            with trio.move_on_after(self.o.connect_timeout):
                await self.game.ready.wait()  # a joiner may be dialed before it has the start
            if self.game.saved is None:
                await refuse(self.identity, fs, "this peer has no game yet")
            table = self.game.table_id
        with trio.fail_after(self.o.handshake_timeout):
            if msg.body["table"] != table:
                await refuse(self.identity, fs, "that is another table")
            dialer_nonce = msg.body["nonce"]
            parts = (table, msg.key, self.me, dialer_nonce, nonce)
            if not check_link_proof(msg.body["proof"], *parts, DIALER):
                why = "a proof of key that does not answer this connection"
                await refuse(self.identity, fs, why)
            entry: Entry | None = None
            if msg.kind == JOIN:
                entry = self._joiner_entry(msg, table)
                if entry is None:
                    await refuse(self.identity, fs, "a roster entry that its key did not sign")
                refusal = self.lobby.refusal(msg.key, entry)
                if refusal:  # before the welcome: the joiner never reads "joined"
                    await refuse(self.identity, fs, refusal)
            else:
                saved = self.game.saved
                assert saved is not None
                index = next((i for i, e in enumerate(saved.roster) if e.key == msg.key), -1)
                if index <= saved.me:
                    await refuse(self.identity, fs, "only a later peer of the table dials this one")
            proof = link_proof(self.identity, *parts, LISTENER)
            await fs.send(net_frame(self.identity, WELCOME, {"proof": proof}))
        fs.authenticated(link_id(*parts))
        ticket.release()
        if entry is not None:
            await self.lobby.seat(fs, msg, entry, address)
        else:
            await self.serve_link(msg.key, fs)

    def _joiner_entry(self, msg: NetMessage, lobby: bytes) -> Entry | None:
        """The roster entry a ``join`` carries, if its key signed it (and it names a place)."""
        body = msg.body
        entry = Entry(msg.key, body["name"], body["host"], body["port"], body["sig"])
        return entry if entry.host and entry.verify(lobby) else None

    async def serve_link(self, key: bytes, fs: FrameStream) -> None:
        """Run a game link to ``key`` until it ends (a newer link replaces an older one)."""
        assert self.game.session is not None
        link = Link(self.game, key, fs)
        old = self.links.get(key)
        if old is not None:
            old.cancel()
        self.links[key] = link
        self.game.gone.discard(key)
        self._path_is(key, isinstance(fs.stream, VirtualStream))
        self.stats.links += 1
        self.game.greet(link)
        log.info("connected to %s", self.game.label(key))
        try:
            await link.run()
            log.info("%s closed the connection", self.game.label(key))
        except* TRANSPORT_ERRORS as group:
            # (a link dropped for another, say a relayed one for a direct one, may break as
            # it is cancelled: its group holds that error beside Cancelled, and only the
            # error is this handler's; the Cancelled goes on to the scope that cancelled)
            log.warning("connection to %s closed: %s", self.game.label(key), reason_of(group))
        finally:
            if self.links.get(key) is link:
                del self.links[key]
            self.stats.frames_out += link.frames_out
            self.stats.bytes_out += link.bytes_out

    async def keep(self, index: int, first: FrameStream | None) -> None:
        """Keep the link to an earlier peer up: dial, serve, and redial with backoff after a
        drop, until the game is over or that peer said ``bye``. A relayed link that a direct
        one replaced (:meth:`_serve_kept`) is followed by that one at once, not by a redial."""
        saved = self.game.saved
        assert saved is not None
        entry = saved.roster[index]
        host, port = entry.host, entry.port
        if index == 0 and saved.host_address is not None:
            host, port = saved.host_address
        delay = MIN_BACKOFF
        stream = first
        try:
            while not self.game.closing.is_set() and entry.key not in self.game.gone:
                if stream is None:
                    try:
                        stream = await self.dial(host, port, entry.key)
                    except* TRANSPORT_ERRORS as group:
                        log.info(
                            "cannot reach %s at %s:%d: %s",
                            self.game.label(entry.key),
                            host,
                            port,
                            reason_of(group),
                        )
                if stream is not None:
                    delay = MIN_BACKOFF
                    served, stream = stream, None
                    try:
                        stream = await self._serve_kept(entry.key, host, port, served)
                    finally:
                        await trio.aclose_forcefully(served.stream)
                    if self.game.closing.is_set() or entry.key in self.game.gone:
                        break
                    if stream is not None:  # a direct link replaced the relayed one
                        continue
                await trio.sleep(delay)
                delay = min(delay * 2, MAX_BACKOFF)
        finally:
            if stream is not None:  # never served: the table broke up first
                await trio.aclose_forcefully(stream.stream)

    async def _serve_kept(
        self, key: bytes, host: str, port: int, fs: FrameStream
    ) -> FrameStream | None:
        """Serve the link ``fs`` to the earlier peer ``key`` until it ends (None). A link
        through the relay to a peer with a direct address is served alongside
        :meth:`_upgrade`: when that one opens a direct link, the relayed one stops being
        served and the direct one is returned, for the caller to serve instead."""
        relayed = isinstance(fs.stream, VirtualStream)
        if not relayed or host == RELAYED_HOST or key in self._upgrading:
            await self.serve_link(key, fs)
            return None
        direct: FrameStream | None = None
        self._upgrading.add(key)  # one upgrade loop per peer, whatever calls this
        try:
            async with trio.open_nursery() as nursery:

                async def serve() -> None:
                    await self.serve_link(key, fs)
                    nursery.cancel_scope.cancel()  # the link ended: stop trying

                async def upgrade() -> None:
                    nonlocal direct
                    direct = await self._upgrade(key, host, port, fs)
                    if direct is not None:
                        nursery.cancel_scope.cancel()  # stop serving the relayed link

                nursery.start_soon(serve)
                nursery.start_soon(upgrade)
        except BaseException:
            if direct is not None:
                await trio.aclose_forcefully(direct.stream)
            raise
        finally:
            self._upgrading.discard(key)
        if direct is not None:
            log.info(
                "reached %s directly at %s:%d: the link leaves the relay",
                self.game.label(key),
                host,
                port,
            )
            self.stats.upgrades += 1
        return direct

    async def _upgrade(
        self, key: bytes, host: str, port: int, relayed: FrameStream
    ) -> FrameStream | None:
        """Try the direct address of the earlier peer ``key`` while our link to it goes
        through the relay, with backoff (:data:`UPGRADE_FIRST` doubling to
        :data:`UPGRADE_MAX`); each try is :meth:`_dial_direct` (:data:`DIRECT_TRY` s to
        connect, then the handshake within the send timeout). The direct link, proved as any
        other, once one opens; None when there is nothing to upgrade any more (the relayed
        link is ending, the table breaks up, the peer said ``bye``). A failed try changes
        nothing. No try while a game is over (between the games of a session, until the next
        begins): the end of a game, and of the table, is said on the links as they are, not
        on a link that replaces one under its last frames."""
        delay = UPGRADE_FIRST

        def wanted() -> bool:
            link = self.links.get(key)
            return (
                link is not None
                and link.stream is relayed
                and not link.closing
                and not self.game.closing.is_set()
                and key not in self.game.gone
            )

        while True:
            await trio.sleep(delay)
            delay = min(delay * 2, UPGRADE_MAX)
            if not wanted():
                return None
            if self.game.over.is_set():
                continue
            direct: FrameStream | None = None
            try:
                with trio.fail_after(self.game.send_timeout):
                    direct = await self._dial_direct(host, port, key)
            except* TRANSPORT_ERRORS as group:
                log.info(
                    "%s at %s:%d: still through the relay (%s)",
                    self.game.label(key),
                    host,
                    port,
                    reason_of(group),
                )
            if direct is None:
                continue
            if wanted():  # (a game that ended meanwhile: the new link resyncs its end)
                return direct
            await trio.aclose_forcefully(direct.stream)
            return None

    async def dial(self, host: str, port: int, key: bytes) -> FrameStream:
        """Open a game link to the earlier peer ``key`` at ``host:port``: directly
        (:meth:`_dial_direct`), or through the relay when there is one and that address is
        the relay's, does not answer, or another key answers there."""
        relay = self.relay_client
        with trio.fail_after(self.game.send_timeout):
            if host != RELAYED_HOST:
                try:
                    return await self._dial_direct(host, port, key)
                except (OSError, trio.TooSlowError, _AnotherKey) as error:
                    if relay is None:
                        raise
                    log.info(
                        "%s:%d does not answer (%s): through the relay",
                        host,
                        port,
                        reason_of(error),
                    )
            elif relay is None:
                raise RelayUnreachable("that peer is reached through a relay, and we have none")
            return await self._handshake_out(await relay.open(key), key)

    async def _dial_direct(self, host: str, port: int, key: bytes) -> FrameStream:
        """A game link to ``key`` over TCP to ``host:port`` and nothing else (never the relay):
        the connection (within :data:`DIRECT_TRY` s when a relay could carry the link
        instead), then :meth:`_handshake_out`. Shared by :meth:`_dial` and :meth:`_upgrade`."""
        if self.relay_client is None:
            stream = await self.connect_direct(host, port)
        else:
            with trio.fail_after(DIRECT_TRY):
                stream = await self.connect_direct(host, port)
        return await self._handshake_out(stream, key)

    async def _handshake_out(self, stream: trio.abc.HalfCloseableStream, key: bytes) -> FrameStream:
        """The dialer's handshake of a game link on ``stream`` (closed if it fails): the
        listener's ``hi``, our ``link`` with our proof, its ``welcome`` with its proof over our
        fresh nonce (a replayed ``hi`` cannot give that)."""
        try:
            fs = FrameStream(stream)
            hi = await fs.receive_net(HI)
            if hi.key != key:  # another machine's peer at that address: not there
                raise _AnotherKey("another key answers at that address")
            await self.prove(fs, LINK, self.game.table_id, key, hi.body["nonce"], {})
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise
        return fs

    async def prove(
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
        fs.authenticated(link_id(*parts))



class _AnotherKey(HandshakeError):
    """Another key than the peer's answers at its direct address (another machine's peer
    behind the same address): with a relay, the peer is reached through it instead."""


def listen_failure(bind: str, port: int, error: OSError) -> str:
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
