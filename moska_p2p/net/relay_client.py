"""A peer's side of a relay: one outbound connection, registered in the table's room, that
carries virtual links (:mod:`.relay_proto`).

A virtual link is a :class:`VirtualStream`, a trio byte stream like a TCP connection, so the
link code (:mod:`.links`, :mod:`.link`, :mod:`.wire`) runs its handshake and the game over it
unchanged. The connection to the relay is kept up: after a drop the client reconnects with
backoff and registers again (the links that were on it break, and the node redials them as it
redials a TCP link).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

import trio

from ..crypto.identity import Identity
from .relay_proto import (
    CHALLENGE,
    CLOSE,
    DATA,
    EOF,
    ERROR,
    INCOMING,
    INCOMING_BASE,
    OPEN,
    OPENED,
    REGISTER,
    REGISTERED,
    Message,
    RelayDecoder,
    RelayError,
    chunks,
    encode,
    register_proof,
)
from .wire import TRANSPORT_ERRORS

RELAY_FAILURES: tuple[type[Exception], ...] = (*TRANSPORT_ERRORS, RelayError)
"""What ends a connection to the relay (and is logged, then redialed): the network's doing or
the relay's. Anything else is this peer's own bug and stops the node."""

log = logging.getLogger("moska_p2p.net")

RELAYED_HOST = "@relay"
"""The address in a roster entry of a peer that does not listen: reach it through the table's
relay (not a host name: ``@`` is not allowed in one)."""

MAX_BUFFERED = 1024 * 1024
"""Bytes of one virtual link received and not read yet; past it the link is closed (its
reader stopped; a new link resyncs, as after any drop)."""

BACKOFF = (0.1, 2.0)
READ_SIZE = 65536


def _reason(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    if isinstance(error, trio.TooSlowError):
        return "timed out"
    return str(error) or type(error).__name__


class RelayUnreachable(ConnectionError):
    """The relay could not be reached, or refused us, or the key asked for is not there."""


class VirtualStream(trio.abc.HalfCloseableStream):
    """One virtual link through the relay, as a byte stream."""

    def __init__(self, client: RelayClient, link: int, key: bytes, incoming: bool) -> None:
        self.client = client
        self.link = link
        self.key = key  # the other end's key, as the relay says (its handshake proves it)
        self.incoming = incoming
        self._buffer = bytearray()
        self._changed = trio.Event()
        self._eof = False
        self._broken: str | None = None
        self._closed = False
        self._sent_eof = False

    # the client's side

    def _feed(self, data: bytes) -> None:
        self._buffer += data
        if len(self._buffer) > MAX_BUFFERED:
            self._break("the link's reader fell behind", drop=True)
            self.client.close_link(self.link, "not read")
        self._changed.set()

    def _end(self) -> None:
        self._eof = True
        self._changed.set()

    def _break(self, reason: str, drop: bool = False) -> None:
        """No more bytes either way; what was received is still read (``drop``: not even
        that), then the end of the stream if the other side ended it cleanly (``eof``
        before its ``close``, as a TCP FIN), else :class:`trio.BrokenResourceError`."""
        if self._broken is None:
            self._broken = reason
        if drop:
            self._buffer.clear()
        self._changed.set()

    # the stream's side

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        while True:
            if self._closed:
                raise trio.ClosedResourceError("this virtual link is closed")
            if self._buffer:
                size = len(self._buffer) if max_bytes is None else max_bytes
                data = bytes(self._buffer[:size])
                del self._buffer[:size]
                return data
            if self._eof:
                return b""
            if self._broken is not None:
                raise trio.BrokenResourceError(self._broken)
            self._changed = trio.Event()
            await self._changed.wait()

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        if self._closed:
            raise trio.ClosedResourceError("this virtual link is closed")
        if self._sent_eof:
            raise trio.ClosedResourceError("send_eof was called")
        for chunk in chunks(bytes(data)):
            if self._broken is not None:
                raise trio.BrokenResourceError(self._broken)
            await self.client.send(encode(DATA, self.link, chunk))

    async def wait_send_all_might_not_block(self) -> None:
        await trio.lowlevel.checkpoint()

    async def send_eof(self) -> None:
        if self._closed or self._sent_eof:
            return
        self._sent_eof = True
        if self._broken is None:
            await self.client.send(encode(EOF, self.link))

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if self._broken is None:
                self.client.close_link(self.link, "closed")
            self._break("closed", drop=True)
        await trio.lowlevel.checkpoint()


class RelayClient:
    """Our connection to a relay at ``host:port``, registered under our key in ``room``.

    ``incoming`` is called with each virtual link another member opens to us (the node runs
    its listener's handshake on it, as for a TCP connection to its port)."""

    def __init__(
        self,
        identity: Identity,
        host: str,
        port: int,
        room: bytes,
        incoming: Callable[[VirtualStream], None],
        timeout: float = 10.0,
    ) -> None:
        self.identity = identity
        self.host, self.port, self.room = host, port, room
        self.incoming = incoming
        self.timeout = timeout
        self.registered = trio.Event()
        self.error = ""  # why the last attempt failed (said once per failure)
        self._stream: trio.SocketStream | None = None
        self._send_lock = trio.Lock()
        self._links: dict[int, VirtualStream] = {}
        self._opening: dict[int, trio.Event] = {}
        self._refusals: dict[int, str] = {}
        self._next_link = 1
        self._pending_closes: list[bytes] = []
        self._close_wake = trio.Event()
        self._task_status: trio.TaskStatus[None] | None = None

    def _started(self) -> None:
        status, self._task_status = self._task_status, None
        if status is not None:
            status.started()

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Connect, register and serve; reconnect with backoff after a drop; started once the
        first registration is accepted (or failed: :attr:`error` says why) until cancelled."""
        delay = BACKOFF[0]
        self._task_status = task_status
        while True:
            try:
                await self._session()
                delay = BACKOFF[0]
            except* RELAY_FAILURES as group:  # this connection's end (a reset, a timeout...)
                reason = _reason(group)
                if reason != self.error:
                    log.warning("relay %s: %s", self.address, reason)
                self.error = reason
            finally:
                self.registered = trio.Event()
                self._stream = None
                for stream in list(self._links.values()):
                    stream._break("the connection to the relay broke")
                self._links.clear()
                for event in self._opening.values():
                    event.set()
            self._started()
            await trio.sleep(delay)
            delay = min(delay * 2, BACKOFF[1])

    async def _session(self) -> None:
        with trio.fail_after(self.timeout):
            stream = await trio.open_tcp_stream(self.host, self.port)
        async with stream:
            decoder = RelayDecoder()
            with trio.fail_after(self.timeout):
                messages: list[Message] = []
                while not messages:
                    data = await stream.receive_some(READ_SIZE)
                    if not data:
                        raise RelayError("the relay closed the connection")
                    messages = list(decoder.feed(bytes(data)))
                first = messages[0]
                if first.kind == ERROR:
                    raise RelayError(f"refused: {first.items[0]}")
                if first.kind != CHALLENGE:
                    raise RelayError(f"a {first.kind} message where a challenge was due")
                proof = register_proof(self.identity, first.items[0], self.room)
                await stream.send_all(
                    encode(REGISTER, self.room, self.identity.public_bytes, proof)
                )
            self._stream = stream
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._closer)
                await self._serve(stream, decoder, messages[1:])
                nursery.cancel_scope.cancel()

    async def _serve(
        self, stream: trio.SocketStream, decoder: RelayDecoder, rest: list[Message]
    ) -> None:
        registered = False
        while True:
            for message in rest:
                if message.kind == REGISTERED and not registered:
                    registered = True
                    self.error = ""
                    self.registered.set()
                    self._started()
                    log.info("registered at the relay %s", self.address)
                elif not registered:
                    if message.kind == ERROR:
                        raise RelayError(f"refused: {message.items[0]}")
                    raise RelayError(f"a {message.kind} message before the registration")
                else:
                    self._dispatch(message.kind, message.items)
            if registered:
                data = await stream.receive_some(READ_SIZE)
            else:
                with trio.fail_after(self.timeout):
                    data = await stream.receive_some(READ_SIZE)
            if not data:
                raise RelayError("the relay closed the connection")
            rest = list(decoder.feed(bytes(data)))

    def _dispatch(self, kind: str, items: tuple[object, ...]) -> None:
        link = items[0]
        if kind == ERROR:
            raise RelayError(f"the relay said: {items[0]}")
        assert isinstance(link, int)
        if kind == DATA:
            stream = self._links.get(link)
            if stream is not None:
                assert isinstance(items[1], bytes)
                stream._feed(items[1])
        elif kind == EOF:
            stream = self._links.get(link)
            if stream is not None:
                stream._end()
        elif kind == CLOSE:
            stream = self._links.pop(link, None)
            if stream is not None:
                stream._break(f"the relay closed the link: {items[1]}")
            if link in self._opening:
                self._refusals[link] = str(items[1])
                self._opening[link].set()
        elif kind == OPENED:
            if link in self._opening:
                self._opening[link].set()
        elif kind == INCOMING:
            key = items[1]
            assert isinstance(key, bytes)
            stream = VirtualStream(self, link, key, incoming=True)
            self._links[link] = stream
            self.incoming(stream)
        else:
            raise RelayError(f"a {kind} message from the relay")

    async def send(self, data: bytes) -> None:
        """Write ``data``, whole relay messages, on the one connection that carries every
        virtual link. The write is shielded from the caller's cancellation (a link's own
        deadline): a cancelled ``send_all`` may have sent part of the data, and a message cut
        in half would garble the stream for every link on it. A relay that does not take the
        data within :attr:`timeout` costs this connection (all its links break, and come
        back through a new one): :class:`trio.BrokenResourceError`."""
        stream = self._stream
        if stream is None:
            raise trio.BrokenResourceError("not connected to the relay")
        async with self._send_lock:
            if self._stream is not stream:
                raise trio.BrokenResourceError("the connection to the relay broke")
            with trio.CancelScope(shield=True):
                try:
                    with trio.fail_after(self.timeout):
                        await stream.send_all(data)
                except trio.TooSlowError:
                    await trio.aclose_forcefully(stream)  # ends the session: run reconnects
                    raise trio.BrokenResourceError(
                        f"the relay took nothing for {self.timeout:g} s: connection dropped"
                    ) from None

    def close_link(self, link: int, reason: str) -> None:
        """Forget a link and tell the relay (by the closer task: never blocks)."""
        if self._links.pop(link, None) is not None and self._stream is not None:
            self._pending_closes.append(encode(CLOSE, link, reason))
            self._close_wake.set()

    async def _closer(self) -> None:
        """Send the ``close`` of every link closed on our side."""
        while True:
            self._close_wake = trio.Event()
            if self._pending_closes:
                closes, self._pending_closes = self._pending_closes, []
                await self.send(b"".join(closes))
                continue
            await self._close_wake.wait()

    async def open(self, key: bytes) -> VirtualStream:
        """A virtual link to ``key`` in our room; :class:`RelayUnreachable` if we are not
        registered in time or the relay says no (that key is not there yet...)."""
        with trio.move_on_after(self.timeout):
            await self.registered.wait()
        if not self.registered.is_set():
            raise RelayUnreachable(f"not connected to the relay {self.address}: {self.error}")
        link = self._next_link
        self._next_link = link + 1 if link + 1 < INCOMING_BASE else 1
        event = self._opening[link] = trio.Event()
        stream = VirtualStream(self, link, key, incoming=False)
        self._links[link] = stream
        try:
            await self.send(encode(OPEN, link, key))
            with trio.fail_after(self.timeout):
                await event.wait()
        except BaseException:
            self._links.pop(link, None)
            raise
        finally:
            del self._opening[link]
        refusal = self._refusals.pop(link, None)
        if refusal is not None or self._links.get(link) is not stream:
            self._links.pop(link, None)
            raise RelayUnreachable(f"the relay {self.address}: {refusal or 'connection lost'}")
        return stream
