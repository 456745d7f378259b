"""What crosses a connection besides game frames: the lobby and link messages, and a framed
reader over a trio stream.

Game frames (``protocol/``) are the only thing the sessions need; the network needs a little
more to find the peers and to keep the mesh: who is at the other end of a connection, which
table it is for, and what each side lacks after a reconnection. Those messages are framed and
signed exactly like game frames (so one decoder and one size cap serve both), but their
payload is a map with the key ``"moska-net"``, which no game message has (a game message has
exactly the fields ``v g f s p t b``). They never enter a session or a transcript.

Types (every one carries ``key``, the sender's public key, and is signed by that key):

``hi``      the listening side speaks first: ``nonce`` (a fresh challenge), ``name``, and, from a
            table's host, ``config`` (the table settings a joiner is asked to accept).
``join``    a joiner to the host, in the lobby: ``name``, ``port`` (where it listens for the
            later peers), ``answer`` (the host's nonce: the signature cannot be replayed on
            another connection) and ``table`` (the config's table nonce).
``start``   the host to each joiner when the table is full: ``config`` and ``roster``, a list of
            ``{key, name, host, port}`` in joining order (the host first, its ``host`` empty:
            "the address you reached me at"). The later peer dials the earlier one.
``link``    a peer to an earlier peer, to open (or reopen) their game connection: ``answer``
            (the listener's nonce) and ``table`` (the table id: config and roster).
``sync``    on every new link, both ways: ``have``, the ``[key, seq]`` pairs of the sender's
            :meth:`~moska_p2p.protocol.session.PeerSession.sync_state`; the other side answers
            with the game frames the sender lacks.
``bye``     the sender is done with this connection (the game ended or it left): do not redial.
``refuse``  the listener will not take this connection: ``reason``.

The host signs ``start`` but is no authority: every peer's first game message repeats the
config and roster it was given, so a host that told two peers different things is caught by
the sessions (a ``disagreement`` verdict), and addresses only decide who dials whom.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import trio

from ..crypto.identity import PUBLIC_KEY_SIZE, Identity, verify
from ..protocol.frames import (
    LENGTH_SIZE,
    MAX_FRAME,
    Field,
    FrameDecoder,
    FrameError,
    Spec,
    check_fields,
    open_frame,
    signed_frame,
    unpack,
)

NET = "moska-net"
HI, JOIN, START, LINK, SYNC, BYE, REFUSE = "hi", "join", "start", "link", "sync", "bye", "refuse"
RECEIVE_SIZE = 65536
MAX_NAME = 40

_KEY = Field(bytes, length=PUBLIC_KEY_SIZE)
_NONCE = Field(bytes, length=32)
_ENTRY: Spec = {
    "key": _KEY,
    "name": str,
    "host": str,
    "port": Field(int, minimum=1, maximum=65535),
}
_SPECS: dict[str, Spec] = {
    HI: {"nonce": _NONCE, "name": str, "config": Field(dict, optional=True)},
    JOIN: {
        "name": str,
        "port": Field(int, minimum=1, maximum=65535),
        "answer": _NONCE,
        "table": _NONCE,
    },
    START: {"config": dict, "roster": Field(list, items=dict)},
    LINK: {"answer": _NONCE, "table": _NONCE},
    SYNC: {"have": Field(list, items=Field(list, length=2))},
    BYE: {"reason": str},
    REFUSE: {"reason": str},
}


class HandshakeError(Exception):
    """The other end of a connection said something it should not have: close it."""


@dataclass(frozen=True)
class NetMessage:
    """A verified lobby or link message: its type, its signer and its fields."""

    kind: str
    key: bytes
    body: dict[str, Any]


@dataclass(frozen=True)
class Entry:
    """One player of a table as the lobby knows it: key, name and where it listens."""

    key: bytes
    name: str
    host: str
    port: int

    def to_wire(self) -> dict[str, Any]:
        return {"key": self.key, "name": self.name, "host": self.host, "port": self.port}

    @classmethod
    def from_wire(cls, data: object) -> Entry:
        fields = check_fields(data, _ENTRY, prefix="roster.")
        key, name, host, port = fields["key"], fields["name"], fields["host"], fields["port"]
        assert isinstance(key, bytes) and isinstance(name, str)
        assert isinstance(host, str) and isinstance(port, int)
        return cls(key, name[:MAX_NAME], host, port)


def net_frame(identity: Identity, kind: str, body: dict[str, Any]) -> bytes:
    """A signed lobby/link message, framed like a game frame (length prefix included)."""
    return signed_frame(identity, {NET: 1, "t": kind, "key": identity.public_bytes, **body})


def classify(body: bytes) -> NetMessage | None:
    """Tell a frame body apart: ``None`` for a game frame (the session checks it), a verified
    :class:`NetMessage` for a lobby/link message; :class:`FrameError` for anything else (not a
    frame, a net message with a bad field or signature): the connection is unusable."""
    payload, signature = open_frame(body)
    obj = unpack(payload)
    if not isinstance(obj, dict) or NET not in obj:
        return None
    kind = obj.get("t")
    if not isinstance(kind, str) or kind not in _SPECS:
        raise FrameError(f"unknown network message {kind!r}")
    spec: Spec = {NET: int, "t": str, "key": _KEY, **_SPECS[kind]}
    fields = check_fields(obj, spec)
    key = fields["key"]
    assert isinstance(key, bytes)
    if not verify(key, payload, signature):
        raise FrameError(f"a {kind} message with a bad signature")
    body_fields = {k: v for k, v in fields.items() if k not in (NET, "t", "key")}
    return NetMessage(kind, key, body_fields)


def prefixed(body: bytes) -> bytes:
    """A frame body with its length prefix again (what a session and a transcript take)."""
    return len(body).to_bytes(LENGTH_SIZE, "big") + body


class FrameStream:
    """Whole frames from a trio stream: a :class:`FrameDecoder` over ``receive_some``.

    Garbage or an oversized length raises :class:`FrameError` (the decoder never buffers more
    than one frame), so the caller closes this connection and nothing else. Frames that arrive
    together with a handshake's last frame stay queued for whoever reads next.
    """

    def __init__(self, stream: trio.abc.HalfCloseableStream, max_frame: int = MAX_FRAME) -> None:
        self.stream = stream
        self.decoder = FrameDecoder(max_frame)
        self.pending: deque[bytes] = deque()
        self.received_bytes = 0

    async def receive(self) -> bytes | None:
        """The next frame body, or ``None`` at the end of the stream."""
        while not self.pending:
            data = await self.stream.receive_some(RECEIVE_SIZE)
            if not data:
                if self.decoder.pending:
                    raise FrameError("the connection closed in the middle of a frame")
                return None
            self.received_bytes += len(data)
            self.pending.extend(self.decoder.feed(bytes(data)))
        return self.pending.popleft()

    async def receive_net(self, *expected: str) -> NetMessage:
        """The next frame, which must be a network message of one of the ``expected`` types
        (a ``refuse`` becomes a :class:`HandshakeError` with its reason)."""
        body = await self.receive()
        if body is None:
            raise HandshakeError("the other side closed the connection")
        msg = classify(body)
        if msg is None:
            raise HandshakeError(f"a game frame where a {'/'.join(expected)} was due")
        if msg.kind == REFUSE and REFUSE not in expected:
            raise HandshakeError(f"refused: {str(msg.body['reason'])[:200]}")
        if msg.kind not in expected:
            raise HandshakeError(f"a {msg.kind} message where a {'/'.join(expected)} was due")
        return msg

    async def send(self, data: bytes) -> None:
        await self.stream.send_all(data)
