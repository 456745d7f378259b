"""The host's side of spectators (PROTOCOL.md §23): who may watch, and the
stream each one gets.

A spectator's ``watch`` (:mod:`.watch_proto`) reaches the host's port, or its relay, like any
stranger's connection and under the same caps until its key is proved. The host refuses it
(a one-line ``refuse``) when it takes no spectators (``host --no-spectators``), has as many as
it takes (:attr:`NodeOptions.spectators`), is not the host of a table, or the key is a
player's. Then it streams, in this order: the lobby's signed ``start`` (settings and roster),
and for each game a ``net/game`` (its number and settings) followed by every frame of that
game's transcript, from its first even for a spectator that came late, in the order the host
applied them, as they come; at the end of a session every signed ``session-result``; then a
``net/bye``. Every game frame is public and signed by its author: the host only forwards what
it applied, and a spectator sees no more than a relay does (no key share is ever sent to
anybody; a hidden card needs its holder's key, which is never released).

A spectator never slows the game: the stream is read from the host's own transcript (nothing
is copied per spectator but the bytes in flight), a send that does not go through within
:data:`WATCH_SEND_TIMEOUT` cuts that spectator off, and so does anything it sends after its
handshake: a spectator sends nothing.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Protocol

import trio

from ..crypto.identity import Identity, fingerprint_of
from ..protocol.config import lobby_id
from ..protocol.frames import printable
from ..protocol.session import PeerSession
from .admission import Ticket
from .links import refuse
from .state import HostLobby, NodeOptions, reason_of
from .watch_proto import HOST, WATCHER, check_watch_proof, watch_id, watch_proof
from .wire import (
    BYE,
    GAME,
    MAX_NAME,
    TRANSPORT_ERRORS,
    WELCOME,
    FrameStream,
    HandshakeError,
    NetMessage,
    net_frame,
)

log = logging.getLogger("moska_p2p.net")

WATCH_SEND_TIMEOUT = 10.0
"""Seconds a spectator has to take one chunk of the stream; a slower one is cut off."""

WATCH_CHUNK = 64 * 1024
"""Bytes of frames sent to a spectator at once (a late one catches up chunk by chunk)."""

WATCH_POLL = 0.5
"""Seconds at most between two looks at the table (a session's result, a lobby given up)."""

WATCH_FLUSH = 5.0
"""Seconds at most a host that is done waits for its spectators to get the end."""


class WatchedTable(Protocol):
    """What the spectator host reads of the node: the game now, and whether it is over."""

    session: PeerSession | None
    closing: trio.Event


class HostingLobby(Protocol):
    """What the spectator host reads of the lobby: the host's side of it (None: no host)."""

    hosting: HostLobby | None


class SpectatorHost:
    """A host's spectators (see the module docstring): admits them and streams the table."""

    def __init__(
        self,
        options: NodeOptions,
        identity: Identity,
        table: WatchedTable,
        lobby: HostingLobby,
        results: Mapping[bytes, bytes],
    ) -> None:
        self.o = options
        self.identity = identity
        self.me = identity.public_bytes
        self.table = table
        self.lobby = lobby
        self.results = results  # signer -> signed session result (.sessions)
        self.spectators: set[object] = set()  # one token per admitted spectator
        self._news = trio.Event()  # set (and replaced) whenever the session moved

    def news(self) -> None:
        """The session moved: wake every stream."""
        if self.spectators:
            self._news.set()
            self._news = trio.Event()

    def refusal(self, key: bytes) -> str:
        """Why this host takes no (more) spectators now, "" when it takes this one."""
        lobby = self.lobby.hosting
        if lobby is None:
            return "this peer is not the host of a table (watch the table its host's invite names)"
        if self.o.spectators <= 0:
            return "this table takes no spectators (its host said so)"
        if len(self.spectators) >= self.o.spectators:
            return f"the table has {self.o.spectators} spectators already, as many as it takes"
        if self.table.closing.is_set():
            return "the table is closing"
        players = {e.key for e in lobby.roster or ()} | set(lobby.joined) | {self.me}
        if key in players:
            return "that key is a player's at this table: a spectator needs a key of its own"
        return ""

    async def admit(
        self, fs: FrameStream, msg: NetMessage, nonce: bytes, address: str, ticket: Ticket
    ) -> None:
        """Our side of a spectator's ``watch`` (its proof checked), then its stream."""
        reason = self.refusal(msg.key)
        if reason:
            await refuse(self.identity, fs, reason)
        lobby = self.lobby.hosting
        assert lobby is not None
        table = lobby_id(lobby.config)
        token = object()
        self.spectators.add(token)  # before any await: the cap holds under a crowd
        try:
            with trio.fail_after(self.o.handshake_timeout):
                if msg.body["table"] != table:
                    await refuse(self.identity, fs, "that is another table")
                parts = (table, msg.key, self.me, msg.body["nonce"], nonce)
                if not check_watch_proof(msg.body["proof"], *parts, WATCHER):
                    await refuse(
                        self.identity, fs, "a proof of key that does not answer this connection"
                    )
                proof = watch_proof(self.identity, *parts, HOST)
                await fs.send(net_frame(self.identity, WELCOME, {"proof": proof}))
            fs.authenticated(watch_id(*parts))
            ticket.release()
            who = f"{printable(str(msg.body['name'])[:MAX_NAME])} ({fingerprint_of(msg.key)})"
            self.o.echo(
                f"spectator {who} is watching from {address}"
                f" ({len(self.spectators)} of at most {self.o.spectators})"
            )
            try:
                await self._serve(fs)
                log.info("spectator %s has the whole table", who)
            except* TRANSPORT_ERRORS as group:
                log.info("spectator %s cut off: %s", who, reason_of(group))
        finally:
            self.spectators.discard(token)

    async def _serve(self, fs: FrameStream) -> None:
        """Stream the table to one spectator while making sure it says nothing."""
        if fs.decoder.pending:
            raise HandshakeError("a spectator sent something after its handshake")
        async with trio.open_nursery() as nursery:

            async def silent() -> None:
                data = await fs.stream.receive_some(1024)
                if data:
                    raise HandshakeError("a spectator sent something: spectators send nothing")
                nursery.cancel_scope.cancel()  # it hung up: nothing more to send

            nursery.start_soon(silent)
            await self.stream(fs)
            nursery.cancel_scope.cancel()

    @staticmethod
    async def _look(news: trio.Event) -> None:
        """Wait for ``news`` (or :data:`WATCH_POLL`): the event that was current *before* the
        last look at the table, so that a move made while a chunk was being sent wakes the
        stream at once instead of at the next poll."""
        with trio.move_on_after(WATCH_POLL):
            await news.wait()

    async def stream(self, fs: FrameStream) -> None:
        """The spectator's stream (see the module docstring), until the host is done."""
        lobby = self.lobby.hosting
        assert lobby is not None and fs.link is not None
        while self.table.session is None:
            news = self._news
            if lobby.full.is_set():  # the host gave its lobby up
                reason = lobby.error or "the table did not fill"
                await _send(fs, net_frame(self.identity, BYE, {"reason": reason}, fs.link))
                return
            await self._look(news)
        await _send(fs, lobby.start_frame)
        game: PeerSession | None = None
        sent = 0
        results: set[bytes] = set()
        while True:
            news = self._news
            session = self.table.session
            assert session is not None
            if session is not game:
                if game is not None:
                    await _send_frames(fs, game.transcript[sent:])
                game, sent = session, 0
                body = {"game": session.config.game, "config": session.config.to_wire()}
                await _send(fs, net_frame(self.identity, GAME, body, fs.link))
            frames = game.transcript[sent:]
            await _send_frames(fs, frames)
            sent += len(frames)
            for signer, frame in list(self.results.items()):
                if signer not in results:
                    results.add(signer)
                    await _send(fs, frame)
            done = self.table.closing.is_set() and self.table.session is game
            if done and sent == len(game.transcript):
                body = {"reason": "the table is over"}
                await _send(fs, net_frame(self.identity, BYE, body, fs.link))
                return
            await self._look(news)

    async def flush(self) -> None:
        """The links are closed: give the spectators (boundedly) the end of the stream."""
        self._news.set()
        with trio.move_on_after(WATCH_FLUSH):
            while self.spectators:
                await trio.sleep(0.05)


async def _send(fs: FrameStream, data: bytes) -> None:
    with trio.fail_after(WATCH_SEND_TIMEOUT):
        await fs.send(data)


async def _send_frames(fs: FrameStream, frames: list[bytes]) -> None:
    """``frames`` in chunks of about :data:`WATCH_CHUNK` bytes, each within the timeout."""
    chunk: list[bytes] = []
    size = 0
    for frame in frames:
        chunk.append(frame)
        size += len(frame)
        if size >= WATCH_CHUNK:
            await _send(fs, b"".join(chunk))
            chunk, size = [], 0
    if chunk:
        await _send(fs, b"".join(chunk))
