"""One game connection between two peers: an outbox, a sender and a reader.

A link never blocks the session: :meth:`Link.enqueue` only appends to the outbox (a frame for
every other peer must not wait on the slowest one), and a sender task writes what has piled up
in one ``send_all``, bounded by a timeout. A peer that stops reading is dropped when the send
times out or its outbox passes :data:`MAX_OUTBOX`; nothing is lost by dropping it, because every
new link starts with a ``sync`` exchange that resends what the other side lacks.

Whatever goes wrong on a link (garbage, an oversized frame, a reset, a timeout) ends that link
only: :meth:`Link.run` raises, and its owner logs the reason and closes the stream.
"""

from __future__ import annotations

from collections import deque
from typing import Protocol

import trio

from .wire import (
    BYE,
    NEXT,
    REFUSE,
    SYNC,
    FrameStream,
    HandshakeError,
    NetMessage,
    classify,
    prefixed,
)

MAX_OUTBOX = 10_000
"""Frames a link may hold for a peer that does not read; a whole game is about 1000."""


class LinkOwner(Protocol):
    """What a link calls back: the node that owns the session."""

    send_timeout: float

    def on_frame(self, frame: bytes, source: bytes) -> None: ...

    def on_net(self, link: Link, message: NetMessage) -> None: ...


class Link:
    """A live connection to the peer with public key ``key`` (after the handshake)."""

    def __init__(self, owner: LinkOwner, key: bytes, stream: FrameStream) -> None:
        self.owner = owner
        self.key = key
        self.stream = stream
        self.outbox: deque[bytes] = deque()
        self.scope = trio.CancelScope()
        self.closing = False
        self.frames_out = 0
        self.bytes_out = 0
        self.frames_in = 0
        self._wake = trio.Event()

    def enqueue(self, frame: bytes) -> None:
        """Queue a frame (length prefix included) for this peer; never blocks."""
        if self.closing:
            return
        self.outbox.append(frame)
        if len(self.outbox) > MAX_OUTBOX:
            self.scope.cancel()  # it does not read: drop it; a new link resyncs
        self._wake.set()

    def finish(self, last: bytes | None = None) -> None:
        """Send ``last`` (a ``bye``), then everything queued, then end our half of the
        stream; the link ends when the other side closes its half too."""
        if last is not None:
            self.enqueue(last)
        self.closing = True
        self._wake.set()

    def cancel(self) -> None:
        self.scope.cancel()

    async def run(self) -> None:
        """Send and receive until the other side closes, or raise why the link broke."""
        with self.scope:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._send_loop)
                await self._read_loop()
                nursery.cancel_scope.cancel()

    async def _send_loop(self) -> None:
        while True:
            if not self.outbox:
                if self.closing:
                    with trio.fail_after(self.owner.send_timeout):
                        await self.stream.stream.send_eof()
                    return
                self._wake = trio.Event()
                await self._wake.wait()
                continue
            frames = len(self.outbox)
            data = b"".join(self.outbox)
            self.outbox.clear()
            with trio.fail_after(self.owner.send_timeout):
                await self.stream.send(data)
            self.frames_out += frames
            self.bytes_out += len(data)

    async def _read_loop(self) -> None:
        while True:
            body = await self.stream.receive()
            if body is None:
                return
            message = classify(body)
            if message is None:
                self.frames_in += 1
                self.owner.on_frame(prefixed(body), self.key)
            elif message.key != self.key:
                raise HandshakeError("a network message signed by another key")
            elif message.kind in (SYNC, BYE, NEXT, REFUSE):
                self.owner.on_net(self, message)
            else:
                raise HandshakeError(f"a {message.kind} message on a game connection")
