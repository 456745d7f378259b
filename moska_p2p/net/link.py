"""One game connection between two peers: an outbox, a sender and a reader.

A link never blocks the session: :meth:`Link.enqueue` only appends to the outbox (a frame for
every other peer must not wait on the slowest one), and a sender task writes what has piled up
in one ``send_all``, bounded by a timeout. A peer that stops reading is dropped when the send
times out or its outbox passes :data:`MAX_OUTBOX`; nothing is lost by dropping it, because every
new link starts with a ``sync`` exchange that resends what the other side lacks.

Whatever goes wrong on a link (garbage, an oversized frame, a reset, a timeout, a link message
signed for another link) ends that link only: :meth:`Link.run` raises, and its owner logs the
reason and closes the stream.

Link messages (``sync``, ``bye``, ``next``, ``refuse``) are signed here, over this link's id
(:func:`~.wire.link_id`, kept by its authenticated stream), and checked against it: one
recorded on another link cannot be played into this one (:mod:`.wire`, "Binding").
"""

from __future__ import annotations

from collections import deque
from typing import Any, Protocol

import trio

from ..crypto.identity import Identity
from .wire import (
    BYE,
    NEXT,
    REFUSE,
    SYNC,
    FrameStream,
    HandshakeError,
    NetMessage,
    classify,
    net_frame,
    prefixed,
)

MAX_OUTBOX = 10_000
"""Frames a link may hold for a peer that does not read; a whole game is about 1000."""


class LinkOwner(Protocol):
    """What a link calls back: the node that owns the session (and signs its messages)."""

    send_timeout: float
    identity: Identity

    def on_frame(self, frame: bytes, source: bytes) -> None: ...

    def on_net(self, link: Link, message: NetMessage) -> None: ...


class Link:
    """A live connection to the peer with public key ``key`` (after the handshake, which gave
    ``stream`` its link id)."""

    def __init__(self, owner: LinkOwner, key: bytes, stream: FrameStream) -> None:
        if stream.link is None:
            raise ValueError("a link runs over an authenticated stream")
        self.owner = owner
        self.key = key
        self.stream = stream
        self.link_id: bytes = stream.link
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

    def send_net(self, kind: str, body: dict[str, Any]) -> None:
        """Queue the link message ``kind`` (``sync``, ``bye``, ``next``, ``refuse``), signed
        by the owner over this link's id; never blocks."""
        self.enqueue(net_frame(self.owner.identity, kind, body, self.link_id))

    def finish(self, bye: str | None = None) -> None:
        """Send a ``bye`` with the reason ``bye`` (if any), then everything queued, then end
        our half of the stream; the link ends when the other side closes its half too."""
        if bye is not None:
            self.send_net(BYE, {"reason": bye})
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
            message = classify(body, self.link_id)
            if message is None:
                self.frames_in += 1
                self.owner.on_frame(prefixed(body), self.key)
            elif message.key != self.key:
                raise HandshakeError("a network message signed by another key")
            elif message.kind in (SYNC, BYE, NEXT, REFUSE):
                self.owner.on_net(self, message)
            else:
                raise HandshakeError(f"a {message.kind} message on a game connection")
