"""What crosses a connection besides game frames: the lobby and link messages, the proofs that
authenticate a connection, and a framed reader over a trio stream.

Game frames (``protocol/``) are the only thing the sessions need; the network needs a little
more to find the peers and to keep the mesh: who is at the other end of a connection, which
table it is for, and what each side lacks after a reconnection. Those messages are framed and
signed exactly like game frames (one decoder serves both), with the frame kind ``net/<type>``
(:data:`~moska_p2p.protocol.frames.NET_KINDS`, each capped at 2 KiB, the start at 4 KiB) and a
payload that is a map of ``key`` (the sender's public key, which signed the frame) and the
fields below. They never enter a session or a transcript.

Types:

``hi``      the listening side speaks first: ``nonce`` (a fresh challenge), ``name``, and, from a
            table's host, ``config`` (the table settings a joiner is asked to accept). Anyone
            can replay a ``hi``: it proves nothing until the ``welcome``.
``join``    a joiner to the host, in the lobby: ``nonce`` (the joiner's fresh challenge),
            ``table`` (the lobby id, :func:`~moska_p2p.protocol.config.lobby_id`), ``proof``
            (:func:`link_proof` as the dialer), and the joiner's roster entry as it signs it
            itself: ``name``, ``host`` and ``port`` (where it listens for the later peers) and
            ``sig`` (:meth:`Entry.sign`).
``link``    a later peer to an earlier one, to open (or reopen) their game connection: ``nonce``,
            ``table`` (the table id: config and roster) and ``proof`` as in a ``join``.
``welcome`` the listener's answer to a good ``join`` or ``link``: ``proof``, its
            :func:`link_proof` as the listener. Only then is the connection authenticated, both
            ways, and only then may a frame be larger than
            :data:`~moska_p2p.protocol.frames.PRE_AUTH_MAX_FRAME`.
``start``   the host to each joiner when the table is full: ``config`` and ``roster``, a list of
            ``{key, name, host, port, sig}`` in joining order (the host first, its ``host``
            empty: "the address you reached me at"). Every entry is signed by its own key, so
            neither the host nor a relay can steer a peer's address. The later peer dials the
            earlier one.
``sync``    on every new link, both ways, and on every live link every few seconds while the
            sender's session waits for others (:func:`~.runner.sync_interval`): ``have``, the
            ``[key, seq]`` pairs of the sender's
            :meth:`~moska_p2p.protocol.session.PeerSession.sync_state`; the other side answers
            with the game frames the sender lacks, every sender's (a frame that reached one
            peer and not another comes back this way).
``bye``     the sender is done with this connection (the game ended or it left): do not redial.
``refuse``  the listener will not take this connection: ``reason`` (or, after the handshake,
            a joiner will not play the table its host started).
``next``    between two games of a session (RULES M24, ``host --games N``): ``game``, the number
            of the game just played, and ``go``, whether the sender plays the next one. Every
            peer sends it on every link and waits for everyone's; one ``false`` (or a peer
            gone past the table's timeout) ends the session for all.

At the end of a session each peer also sends its signed session result on every link: a frame
of kind ``session-result`` (:mod:`moska_p2p.protocol.tally`, signed by its author like a game
frame, up to 16 KiB), which the node keeps next to its transcripts and hands to no session.

**Authentication** is a mutual challenge-response: each side sends a fresh 32-byte nonce and
signs (kind ``net/link-auth``) the transcript ``table id || dialer key || listener key || dialer
nonce || listener nonce || role`` (:func:`link_transcript`). The dialer's proof answers the
listener's nonce, so a recorded ``join`` or ``link`` cannot be replayed on a new connection; the
listener's answers the dialer's, so a recorded ``hi`` cannot pass for the listener. Messages are
not encrypted (everything in a game is public and signed by its author anyway).

**Binding.** Every link message after the handshake (``sync``, ``bye``, ``next``, and a
``refuse`` sent on an authenticated connection: :data:`BOUND`) is signed, as its own kind
(``net/bye``...: the per-kind domain separation of every signature), over ``link id ||
payload`` instead of the payload alone, where the link id (:func:`link_id`) is a hash of the
handshake's table id, both keys and both fresh nonces, which both ends know once the
``welcome`` is checked and nobody can make repeat. The id is not sent. A message recorded on
another link (an earlier connection of the same two peers, another table or session) fails its
signature check on this one, and the link ends with that reason: a relay, or anyone on the path
of a direct link, can drop a link but not replay a ``bye`` (the other side would stop
redialing) or an earlier session's ``next`` with ``go = false`` (the session would end as if
that peer had said no). The table id in the link id is the session id on a session's links
(the lobby id on the lobby connection a joiner keeps as its first link), so a ``next`` names
its session through the link and its game by ``game``. Within one link a copy of a message is
harmless: a second ``sync`` asks for the same frames again, a second ``next`` repeats a vote,
and nothing comes after a ``bye``.

The host signs ``start`` but is no authority: every peer's first game message repeats the
config and roster it was given, so a host that told two peers different things is caught by
the sessions (a ``disagreement`` verdict), and addresses only decide who dials whom.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import trio

from ..crypto.identity import (
    PUBLIC_KEY_SIZE,
    SIGNATURE_SIZE,
    Identity,
    is_acceptable_public_key,
    verify,
)
from ..errors import ConfigError, Error
from ..protocol.config import MAX_GAMES
from ..protocol.frames import (
    GAME_KINDS,
    LENGTH_SIZE,
    MAX_FRAME,
    NET_PREFIX,
    PRE_AUTH_MAX_FRAME,
    SESSION_RESULT,
    Field,
    FrameDecoder,
    FrameError,
    Spec,
    check_fields,
    encode_frame,
    open_frame,
    pack,
    signed_frame,
    unpack,
)

HI, JOIN, WELCOME, START, LINK, SYNC, BYE, REFUSE = (
    "hi",
    "join",
    "welcome",
    "start",
    "link",
    "sync",
    "bye",
    "refuse",
)
NEXT = "next"
WATCH, GAME = "watch", "game"
"""A spectator's handshake (answered by a ``welcome``) and the host's "the frames that follow
are of this game" on a spectator's connection (:mod:`.watch_proto`)."""
BOUND = frozenset({SYNC, BYE, NEXT, REFUSE, GAME})
"""The link messages signed over the link's id when sent after the handshake (see the module
docstring); all but ``refuse`` exist only then."""
LINK_ID_TAG = b"moska-p2p/link-id\n"
LINK_AUTH = "net/link-auth"
"""Signature kind of a link proof (:func:`link_proof`)."""
ADDRESS = "net/address"
"""Signature kind of a roster entry (:meth:`Entry.sign`)."""
DIALER, LISTENER = b"dialer", b"listener"
RECEIVE_SIZE = 65536
MAX_NAME = 40
MAX_HOST = 64
MAX_REASON = 200
NONCE_SIZE = 32
MAX_PLAYERS = 6

_KEY = Field(bytes, length=PUBLIC_KEY_SIZE)
_NONCE = Field(bytes, length=NONCE_SIZE)
_SIG = Field(bytes, length=SIGNATURE_SIZE)
_PORT = Field(int, minimum=1, maximum=65535)
_ENTRY: Spec = {"key": _KEY, "name": str, "host": str, "port": _PORT, "sig": _SIG}
_SPECS: dict[str, Spec] = {
    HI: {"nonce": _NONCE, "name": str, "config": Field(dict, optional=True)},
    JOIN: {
        "nonce": _NONCE,
        "table": _NONCE,
        "proof": _SIG,
        "name": str,
        "host": str,
        "port": _PORT,
        "sig": _SIG,
    },
    LINK: {"nonce": _NONCE, "table": _NONCE, "proof": _SIG},
    WELCOME: {"proof": _SIG},
    START: {"config": dict, "roster": Field(list, items=dict)},
    SYNC: {"have": Field(list, items=Field(list, length=2, items=(bytes, int)))},
    BYE: {"reason": str},
    REFUSE: {"reason": str},
    NEXT: {"game": Field(int, minimum=1, maximum=MAX_GAMES), "go": bool},
    WATCH: {"nonce": _NONCE, "table": _NONCE, "proof": _SIG, "name": str},
    GAME: {"game": Field(int, minimum=1, maximum=MAX_GAMES), "config": dict},
}
_TEXT_LIMITS = {"name": MAX_NAME, "host": MAX_HOST, "reason": MAX_REASON}


class HandshakeError(Error):
    """The other end of a connection said something it should not have: close it."""


class ClosedError(HandshakeError):
    """The other end closed the connection where a message was due (a full host may close a
    stranger's connection at once: dial again)."""


TRANSPORT_ERRORS: tuple[type[Exception], ...] = (
    OSError,
    trio.BrokenResourceError,
    trio.ClosedResourceError,
    trio.TooSlowError,
    HandshakeError,
    FrameError,
    ConfigError,
)
"""What the network (or the peer at the other end) can do to one connection: a reset, a
timeout, bytes that are no frame, a failed handshake, a table's settings that make no game.
Each ends that connection only. The network's boundary catches these and nothing else: any
other exception is this peer's own bug, which stops the node with its traceback instead of
passing for a dropped connection that is redialed to fail again (ARCHITECTURE.md, "Errors")."""


@dataclass(frozen=True)
class NetMessage:
    """A verified lobby or link message: its type (without ``net/``), its signer, its fields."""

    kind: str
    key: bytes
    body: dict[str, Any]


def _check_text(fields: dict[str, Any], where: str) -> None:
    for name, limit in _TEXT_LIMITS.items():
        value = fields.get(name)
        if isinstance(value, str) and len(value) > limit:
            raise FrameError(f"{where}{name} is longer than {limit} characters")


@dataclass(frozen=True)
class Entry:
    """One player of a table as the lobby knows it: key, name, where it listens, and ``sig``,
    that key's signature over the rest (:meth:`sign`), so that nobody else can change it."""

    key: bytes
    name: str
    host: str
    port: int
    sig: bytes = bytes(SIGNATURE_SIZE)

    def to_wire(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "name": self.name,
            "host": self.host,
            "port": self.port,
            "sig": self.sig,
        }

    @classmethod
    def from_wire(cls, data: object) -> Entry:
        """An entry as sent; :class:`FrameError` for a bad field or an unacceptable key (the
        signature is checked by :meth:`verify`, which needs the lobby id)."""
        fields = check_fields(data, _ENTRY, prefix="roster.")
        _check_text(fields, "roster.")
        key, name, host, port = fields["key"], fields["name"], fields["host"], fields["port"]
        sig = fields["sig"]
        assert isinstance(key, bytes) and isinstance(name, str) and isinstance(sig, bytes)
        assert isinstance(host, str) and isinstance(port, int)
        if not is_acceptable_public_key(key):
            raise FrameError("a roster entry with a key that cannot be a player's")
        return cls(key, name, host, port, sig)

    @staticmethod
    def _signed_bytes(lobby: bytes, name: str, host: str, port: int) -> bytes:
        return pack([lobby, name, host, port])

    @classmethod
    def sign(cls, identity: Identity, lobby: bytes, name: str, host: str, port: int) -> Entry:
        """This peer's entry at the table whose lobby id is ``lobby``, signed by itself."""
        name = name[:MAX_NAME]
        sig = identity.sign(ADDRESS, cls._signed_bytes(lobby, name, host, port))
        return cls(identity.public_bytes, name, host, port, sig)

    def verify(self, lobby: bytes) -> bool:
        """Whether the entry is signed by its key for this lobby (never raises)."""
        try:
            data = self._signed_bytes(lobby, self.name, self.host, self.port)
        except FrameError:
            return False
        return verify(self.key, ADDRESS, data, self.sig)


@dataclass(frozen=True)
class ProofOfKey:
    """A connection kind's mutual proof of key: each side signs, as :attr:`kind`, the
    transcript ``table || dialer key || listener key || dialer nonce || listener nonce ||
    role`` (every part but the last has a fixed size: no ambiguity), and the connection's id,
    which the messages after the handshake are signed over, is SHA-256 of :attr:`id_tag` and
    the same parts without the role. A game link (:data:`LINK_HANDSHAKE`) and a spectator's
    connection (:mod:`.watch_proto`) are two of these, with their own kind, tag and role
    names, so that nothing proved or signed on one kind of connection passes on the other:
    the logic is one, the domains are not."""

    kind: str
    id_tag: bytes
    roles: tuple[bytes, bytes]
    """The dialer's role, then the listener's."""
    name: str
    """What an error calls this kind of connection's handshake."""

    def _parts(self, *parts: bytes) -> bytes:
        for part in parts:
            if not isinstance(part, bytes) or len(part) != 32:
                raise ValueError(f"a {self.name} transcript is made of 32-byte parts")
        return b"".join(parts)

    def connection_id(
        self,
        table: bytes,
        dialer: bytes,
        listener: bytes,
        dialer_nonce: bytes,
        listener_nonce: bytes,
    ) -> bytes:
        """The id every message after the handshake is signed over: what both ends of one
        connection know once the handshake is done, and what no other connection repeats
        (each end's nonce is fresh)."""
        parts = self._parts(table, dialer, listener, dialer_nonce, listener_nonce)
        return hashlib.sha256(self.id_tag + parts).digest()

    def transcript(
        self,
        table: bytes,
        dialer: bytes,
        listener: bytes,
        dialer_nonce: bytes,
        listener_nonce: bytes,
        role: bytes,
    ) -> bytes:
        """What a proof of key signs (see the class docstring)."""
        parts = self._parts(table, dialer, listener, dialer_nonce, listener_nonce)
        if role not in self.roles:
            first, second = (r.decode() for r in self.roles)
            raise ValueError(f"a {self.name} role is {first} or {second}, got {role!r}")
        return parts + role

    def proof(
        self,
        identity: Identity,
        table: bytes,
        dialer: bytes,
        listener: bytes,
        dialer_nonce: bytes,
        listener_nonce: bytes,
        role: bytes,
    ) -> bytes:
        """``identity``'s proof of key (a signature of kind :attr:`kind` over
        :meth:`transcript`) for the ``role`` side."""
        transcript = self.transcript(table, dialer, listener, dialer_nonce, listener_nonce, role)
        return identity.sign(self.kind, transcript)

    def check(
        self,
        proof: bytes,
        table: bytes,
        dialer: bytes,
        listener: bytes,
        dialer_nonce: bytes,
        listener_nonce: bytes,
        role: bytes,
    ) -> bool:
        """Whether ``proof`` is the ``role`` side's proof of key (the dialer's or the
        listener's, whose key is in the transcript) for exactly this connection; never
        raises."""
        try:
            transcript = self.transcript(
                table, dialer, listener, dialer_nonce, listener_nonce, role
            )
        except (ValueError, TypeError):
            return False
        signer = dialer if role == self.roles[0] else listener
        return verify(signer, self.kind, transcript, proof)


LINK_HANDSHAKE = ProofOfKey(LINK_AUTH, LINK_ID_TAG, (DIALER, LISTENER), "link")
"""A game link's proof of key (kind ``net/link-auth``, id tag :data:`LINK_ID_TAG`)."""
link_id = LINK_HANDSHAKE.connection_id
link_transcript = LINK_HANDSHAKE.transcript
link_proof = LINK_HANDSHAKE.proof
check_link_proof = LINK_HANDSHAKE.check


def net_frame(
    identity: Identity, kind: str, body: dict[str, Any], link: bytes | None = None
) -> bytes:
    """A signed lobby/link message of type ``kind`` (length prefix included); ``link``: the
    id of the authenticated connection it is sent on, which a :data:`BOUND` kind is signed
    over (required for all but a ``refuse``, which before a handshake has none)."""
    if link is None:
        if kind in BOUND - {REFUSE}:
            raise ValueError(f"a {kind} message is bound to a link: say which")
        return signed_frame(identity, NET_PREFIX + kind, {"key": identity.public_bytes, **body})
    if kind not in BOUND:
        raise ValueError(f"a {kind} message is not bound to a link")
    payload = pack({"key": identity.public_bytes, **body})
    signature = identity.sign(NET_PREFIX + kind, bytes(link) + payload)
    return encode_frame(NET_PREFIX + kind, payload, signature)


def parse_net(
    kind: str, payload: bytes, signature: bytes, link: bytes | None = None
) -> NetMessage:
    """A verified network message from an opened frame whose kind starts with ``net/``;
    :class:`FrameError` for a bad field, key or signature. ``link``: the id of the
    authenticated connection it came on (None during a handshake), which a :data:`BOUND`
    kind must be signed over.

    The payload is at most its kind's cap (2 KiB, 4 KiB for a start: :func:`open_frame` checked
    it), so decoding it is bounded; its signature is checked right after (the key is inside)."""
    name = kind[len(NET_PREFIX) :]
    spec = _SPECS.get(name)
    if not kind.startswith(NET_PREFIX) or spec is None:
        raise FrameError(f"unknown network message {kind!r}")
    if link is None and name in BOUND - {REFUSE}:
        raise FrameError(f"a {name} message before the link is authenticated")
    obj = unpack(payload)
    fields = check_fields(obj, {"key": _KEY, **spec})
    key = fields["key"]
    assert isinstance(key, bytes)
    if not is_acceptable_public_key(key):
        raise FrameError(f"a {name} message from a key that cannot be a player's")
    if link is not None and name in BOUND:
        if not verify(key, kind, bytes(link) + payload, signature):
            raise FrameError(
                f"a {name} message not signed for this link (one recorded on another link,"
                " table or session, or forged)"
            )
    elif not verify(key, kind, payload, signature):
        raise FrameError(f"a {name} message with a bad signature")
    _check_text(fields, f"{name}.")
    if name == START and len(fields["roster"]) > MAX_PLAYERS:  # type: ignore[arg-type]
        raise FrameError(f"a roster of more than {MAX_PLAYERS} players")
    body = {k: v for k, v in fields.items() if k != "key"}
    return NetMessage(name, key, body)


def classify(body: bytes, link: bytes | None = None) -> NetMessage | None:
    """Tell a frame body apart: ``None`` for a game frame or a session result (its payload
    undecoded: the session or the node checks it), a verified :class:`NetMessage` for a
    lobby/link message (``link``: the connection's id once authenticated, see
    :func:`parse_net`); :class:`FrameError` for anything else (not a frame, an oversized
    payload, an announcement, a net message with a bad field or signature, or one of another
    link): the connection is unusable."""
    kind, payload, signature = open_frame(body)
    if kind in GAME_KINDS or kind == SESSION_RESULT:
        return None
    return parse_net(kind, payload, signature, link)


def prefixed(body: bytes) -> bytes:
    """A frame body with its length prefix again (what a session and a transcript take)."""
    return len(body).to_bytes(LENGTH_SIZE, "big") + body


class FrameStream:
    """Whole frames from a trio stream: a :class:`FrameDecoder` over ``receive_some``.

    A connection starts unauthenticated: frames over
    :data:`~moska_p2p.protocol.frames.PRE_AUTH_MAX_FRAME` are refused and reads are small, so a
    stranger cannot make us hold more than a few KiB. :meth:`authenticated` raises the cap to
    :data:`~moska_p2p.protocol.frames.MAX_FRAME` once the other side has proved its key, and
    keeps the connection's :func:`link_id`, which every later link message must be signed over.
    Garbage or an oversized length raises :class:`FrameError`, so the caller closes this
    connection and nothing else. Frames that arrive together with a handshake's last frame stay
    buffered for whoever reads next.
    """

    def __init__(
        self, stream: trio.abc.HalfCloseableStream, max_frame: int = PRE_AUTH_MAX_FRAME
    ) -> None:
        self.stream = stream
        self.decoder = FrameDecoder(max_frame)
        self.received_bytes = 0
        self.link: bytes | None = None

    @property
    def is_authenticated(self) -> bool:
        return self.link is not None

    def authenticated(self, link: bytes) -> None:
        """The other side proved its key on the connection whose id is ``link``: accept
        frames up to the full cap, and link messages signed over that id only."""
        self.link = link
        self.decoder.max_frame = MAX_FRAME

    async def receive(self) -> bytes | None:
        """The next frame body, or ``None`` at the end of the stream."""
        while (body := self.decoder.pop()) is None:
            size = RECEIVE_SIZE if self.is_authenticated else PRE_AUTH_MAX_FRAME + LENGTH_SIZE
            data = await self.stream.receive_some(size)
            if not data:
                if self.decoder.pending:
                    raise FrameError("the connection closed in the middle of a frame")
                return None
            self.received_bytes += len(data)
            self.decoder.push(bytes(data))
        return body

    async def receive_net(self, *expected: str) -> NetMessage:
        """The next frame, which must be a network message of one of the ``expected`` types
        (a ``refuse`` becomes a :class:`HandshakeError` with its reason)."""
        body = await self.receive()
        if body is None:
            raise ClosedError("the other side closed the connection")
        msg = classify(body, self.link)
        if msg is None:
            raise HandshakeError(f"a game frame where a {'/'.join(expected)} was due")
        if msg.kind == REFUSE and REFUSE not in expected:
            raise HandshakeError(f"refused: {str(msg.body['reason'])[:MAX_REASON]}")
        if msg.kind not in expected:
            raise HandshakeError(f"a {msg.kind} message where a {'/'.join(expected)} was due")
        return msg

    async def send(self, data: bytes) -> None:
        await self.stream.send_all(data)


__all__ = [
    "ADDRESS",
    "BOUND",
    "BYE",
    "DIALER",
    "GAME",
    "HI",
    "JOIN",
    "LINK",
    "LINK_AUTH",
    "LINK_HANDSHAKE",
    "LINK_ID_TAG",
    "LISTENER",
    "MAX_NAME",
    "NEXT",
    "REFUSE",
    "START",
    "SYNC",
    "WATCH",
    "WELCOME",
    "ClosedError",
    "Entry",
    "FrameStream",
    "HandshakeError",
    "NetMessage",
    "ProofOfKey",
    "check_link_proof",
    "classify",
    "link_id",
    "link_proof",
    "link_transcript",
    "net_frame",
    "parse_net",
    "prefixed",
]
