"""The wire framing: signed msgpack frames, decoded sans-IO (DESIGN.md, "The protocol").

A frame on a stream is::

    length   4 bytes, big-endian: the size of the body (the prefix excluded), at most the
             decoder's cap: MAX_FRAME on an authenticated link, PRE_AUTH_MAX_FRAME before
    body     msgpack array [kind, payload, signature]
             kind       str: what the payload is (a game message's type, "net/<type>" for a
                        network message, "beacon" for a LAN announcement); a key of
                        MAX_PAYLOAD_OF, which caps the payload's size
             payload    bin: the msgpack bytes of one message (a map)
             signature  bin, 64 bytes: the Ed25519 signature of ``kind`` over exactly the payload
                        bytes (``identity.signing_input(kind, payload)``: domain-separated)

The kind travels outside the payload so that a receiver can refuse an oversized payload
*before* decoding any of it (:func:`open_frame` checks the kind's cap), and so that the signature
binds what the payload is meant to be: a ``move`` signature never verifies as a ``leave``.

msgpack is not canonical (an int or a string has several valid encodings), so the signature
covers the payload *bytes*, and a receiver verifies those bytes as received, never a re-encoding
of the decoded message. The same bytes are what goes into the transcript and what is hashed for
the ``prev`` chain; two different payloads with one sender and sequence number are equivocation.

Everything here is pure: bytes in, bytes or values out (h11's model). Every input is untrusted,
so every decoding function raises :class:`FrameError` (a ``ValueError``) for anything malformed
and nothing else. Messages are restricted to the msgpack types a card game needs: nil, bool,
int, finite float, str, bin, array and map with str keys. Extension types (including msgpack's
timestamp), NaN and infinities (a NaN is unequal to itself, so two peers comparing settings would
never agree) are refused, as are duplicate map keys (two implementations could keep different
ones) and nesting deeper than :data:`MAX_DEPTH`. A payload of ``n`` bytes holds at most ``n``
objects, so the per-kind caps also bound the work of decoding one.

>>> from moska_p2p.crypto.identity import Identity, verify
>>> alice = Identity.from_seed(bytes(32))
>>> wire = signed_frame(alice, "leave", {"reason": "bedtime"})
>>> [body] = FrameDecoder().feed(wire)
>>> kind, payload, signature = open_frame(body)
>>> kind, verify(alice.public_bytes, kind, payload, signature), unpack(payload)
('leave', True, {'reason': 'bedtime'})
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, cast, overload

import msgpack

if TYPE_CHECKING:
    from moska_p2p.crypto.identity import Identity

__all__ = [
    "BEACON",
    "GAME_KINDS",
    "LENGTH_SIZE",
    "MAX_ARRAY_LEN",
    "MAX_BIN_LEN",
    "MAX_DEPTH",
    "MAX_FRAME",
    "MAX_KIND_LEN",
    "MAX_MAP_LEN",
    "MAX_PAYLOAD",
    "MAX_PAYLOAD_OF",
    "MAX_STR_LEN",
    "NET_KINDS",
    "NET_PREFIX",
    "PRE_AUTH_MAX_FRAME",
    "SIGNATURE_SIZE",
    "Field",
    "FrameDecoder",
    "FrameError",
    "Kind",
    "Spec",
    "check_fields",
    "encode_frame",
    "open_frame",
    "pack",
    "require",
    "signed_frame",
    "unpack",
]

KiB = 1024

MAX_FRAME = 64 * KiB
"""Largest frame body accepted on an authenticated link, in bytes (the length prefix excluded).
The largest honest message (a verdict carrying evidence) is under it; most are under 4 KiB."""

PRE_AUTH_MAX_FRAME = 4 * KiB
"""Largest frame body accepted before the other end of a connection has proved its key: a
lobby or link handshake message is well under 2 KiB, and a stranger cannot make us hold more."""

LENGTH_SIZE = 4
"""Size of the big-endian length prefix."""

SIGNATURE_SIZE = 64
"""Length of an Ed25519 signature."""

MAX_KIND_LEN = 32
"""Longest kind (identity.MAX_KIND)."""

# array header, str8 header + kind, bin32 header, bin8 header, signature
_BODY_OVERHEAD = 1 + 2 + MAX_KIND_LEN + 5 + 2 + SIGNATURE_SIZE
MAX_PAYLOAD = MAX_FRAME - _BODY_OVERHEAD
"""Largest message payload that fits in a frame, whatever its kind."""

# -- payload caps per kind: the constants to adjust when a message grows ----------------------

HELLO_CAP = 2 * KiB  # name, nonces, config, roster of six keys: about 1 KB
SEAT_CAP = 256
SHUFFLE1_CAP = 16 * KiB  # 52 points (1.8 KB) and a 6.8 KB shuffle proof
SHUFFLE2_CAP = 12 * KiB  # 52 points, 52 key points (3.6 KB) and a 5.0 KB re-keying proof
KEYS_CAP = 4 * KiB  # up to 52 [position, key] pairs: 1.9 KB
MOVE_CAP = 4 * KiB
CLAIM_CAP = 512
DISCLOSE_CAP = 4 * KiB
RESULT_CAP = 512
LEAVE_CAP = 512
WAIT_CAP = 512
SILENT_CAP = 512  # a culprit's key, a sequence number and the heads
VERDICT_CAP = MAX_PAYLOAD  # evidence: whole signed frames
NET_CAP = 2 * KiB  # lobby and link messages
NET_START_CAP = 4 * KiB  # the roster: six signed entries (names of up to 40 characters)
BEACON_CAP = 1 * KiB  # a LAN announcement: about 300 bytes
SESSION_CAP = 16 * KiB  # a signed session result: about 150 bytes per game, 100 games at most

GAME_KINDS: dict[str, int] = {
    "hello": HELLO_CAP,
    "seat": SEAT_CAP,
    "shuffle1": SHUFFLE1_CAP,
    "shuffle2": SHUFFLE2_CAP,
    "keys": KEYS_CAP,
    "move": MOVE_CAP,
    "claim": CLAIM_CAP,
    "disclose": DISCLOSE_CAP,
    "result": RESULT_CAP,
    "leave": LEAVE_CAP,
    "wait": WAIT_CAP,
    "verdict": VERDICT_CAP,
    "silent": SILENT_CAP,
}
"""The game messages (``protocol/messages.py``) and the payload cap of each."""

NET_PREFIX = "net/"
NET_KINDS: dict[str, int] = {
    f"{NET_PREFIX}{name}": NET_START_CAP if name == "start" else NET_CAP
    for name in (
        *("hi", "join", "welcome", "start", "link", "sync", "bye", "refuse", "next"),
        *("watch", "game"),  # a spectator's handshake and the host's stream
    )
}
"""The network layer's lobby and link messages (``net/wire.py``) and their caps."""

BEACON = "beacon"

SESSION_RESULT = "session-result"
"""A peer's signed result of a session of games (:mod:`.tally`): never part of a game; it
crosses a game link as a frame of its own (the node hands it to no session)."""

MAX_PAYLOAD_OF: dict[str, int] = {
    **GAME_KINDS,
    **NET_KINDS,
    BEACON: BEACON_CAP,
    SESSION_RESULT: SESSION_CAP,
}
"""Every kind a frame may have, and the largest payload of that kind, in bytes; a frame of any
other kind is refused. Checked by :func:`open_frame` before the payload is decoded, and by
:func:`encode_frame` so that we never send what a peer must refuse."""

assert all(cap <= MAX_PAYLOAD for cap in MAX_PAYLOAD_OF.values())
assert all(len(kind) <= MAX_KIND_LEN for kind in MAX_PAYLOAD_OF)

MAX_DEPTH = 32
"""Deepest nesting of arrays and maps in a message; ours need about five levels."""

MAX_STR_LEN = 64 * 1024
"""Longest string in a message (names, option values, chat): generous, yet bounds memory."""

MAX_BIN_LEN = MAX_PAYLOAD
"""Longest bin in a message: bytes fields may carry whole frames as evidence."""

MAX_ARRAY_LEN = 8192
"""Longest array in a message: a shuffle carries 52 points, a transcript a few thousand."""

MAX_MAP_LEN = 256
"""Largest map in a message: a message has a handful of fields."""

_T = TypeVar("_T")


class FrameError(ValueError):
    """Malformed bytes from a peer: a bad length, a body that is not a valid frame, or a message
    that is not valid msgpack or lacks a required field. The stream or message is unusable."""


# -- msgpack, typed ---------------------------------------------------------------------------


def _refuse_ext(code: int, data: bytes) -> object:
    raise FrameError(f"msgpack extension types are not allowed (got type {code})")


def _pairs_to_dict(pairs: list[tuple[object, object]]) -> dict[str, object]:
    result: dict[str, object] = {}
    for key, value in pairs:
        if not isinstance(key, str):
            raise FrameError(f"map keys must be str, got {_type_name(key)}")
        if key in result:
            raise FrameError(f"duplicate map key {key!r}")
        result[key] = value
    return result


def _describe(exc: Exception) -> str:
    """A readable reason for one of the many exceptions msgpack's C decoder raises."""
    if isinstance(exc, msgpack.ExtraData):
        return "trailing bytes after the msgpack value"
    if isinstance(exc, msgpack.StackError):
        return "msgpack nested too deeply"
    if isinstance(exc, msgpack.FormatError):
        return "not msgpack (reserved type byte)"
    if isinstance(exc, UnicodeDecodeError):
        return "a msgpack string is not valid UTF-8"
    text = str(exc)
    if "strict_map_key" in text:
        return f"map keys must be str, got {text.split(' ', 1)[0]}"
    if "incomplete input" in text:
        return "truncated msgpack"
    return f"malformed msgpack: {text or type(exc).__name__}"


def _unpackb(
    data: bytes,
    *,
    max_str_len: int,
    max_bin_len: int,
    max_array_len: int,
    max_map_len: int,
) -> object:
    """``msgpack.unpackb`` with our settings, raising only :class:`FrameError`.

    Explicit length limits matter: a 5-byte array header may claim four billion items, and the
    decoder would try to allocate them.
    """
    try:
        value: object = msgpack.unpackb(
            data,
            raw=False,
            strict_map_key=True,
            use_list=True,
            object_pairs_hook=_pairs_to_dict,
            ext_hook=_refuse_ext,
            max_str_len=max_str_len,
            max_bin_len=max_bin_len,
            max_array_len=max_array_len,
            max_map_len=max_map_len,
        )
    except FrameError:
        raise
    except Exception as exc:  # untrusted input: any decoder failure is a malformed frame
        raise FrameError(_describe(exc)) from exc
    return value


def _packb(obj: object) -> bytes:
    return cast(bytes, msgpack.packb(obj, use_bin_type=True))


# -- messages --------------------------------------------------------------------------------


def _type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def _check_tree(obj: object) -> None:
    """Refuse any value a message may not hold (see the module docstring).

    Iterative, not recursive: the depth limit is checked before Python's recursion limit could be.
    """
    stack: list[tuple[object, int]] = [(obj, 1)]
    while stack:
        value, depth = stack.pop()
        if value is None or isinstance(value, bool | str | bytes):
            continue
        if isinstance(value, int):
            if not -(1 << 63) <= value < (1 << 64):
                raise FrameError(f"integer {value} does not fit in msgpack")
            continue
        if isinstance(value, float):
            if not math.isfinite(value):
                raise FrameError(f"a message may not hold the float {value}")
            continue
        if isinstance(value, list | tuple | dict):
            if depth > MAX_DEPTH:
                raise FrameError(f"message nested deeper than {MAX_DEPTH} levels")
            if isinstance(value, dict):
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise FrameError(f"map keys must be str, got {_type_name(key)}")
                    stack.append((item, depth + 1))
            else:
                stack.extend((item, depth + 1) for item in value)
            continue
        raise FrameError(f"a message may not hold a {_type_name(value)}")


def pack(obj: object) -> bytes:
    """The msgpack bytes of a message (str as str, bytes as bin).

    The value is checked against the same rules :func:`unpack` applies, so we never send what a
    peer must refuse: :class:`FrameError` for a NaN or infinity, a non-str map key, an unknown
    type, too deep a nesting, a too long string, array, map or bin, or a payload over
    :data:`MAX_PAYLOAD`.
    Tuples are packed as arrays (and come back as lists).
    """
    _check_tree(obj)
    try:
        data = _packb(obj)
    except (TypeError, ValueError, OverflowError) as exc:
        raise FrameError(f"cannot pack message: {exc}") from exc
    if len(data) > MAX_PAYLOAD:
        raise FrameError(f"message of {len(data)} bytes is over the limit of {MAX_PAYLOAD}")
    # Length limits are easiest to enforce exactly as the receiver does: by decoding.
    unpack(data)
    return data


def printable(text: str) -> str:
    """A name or reason a peer (or a file) gave, safe to print: no control characters, so no
    terminal escape sequence a stranger chose."""
    return "".join(c if c.isprintable() else "?" for c in text)


def unpack(data: bytes, *, limit: int = MAX_PAYLOAD) -> object:
    """Decode one message payload; :class:`FrameError` for anything malformed or not allowed.

    The whole of ``data`` must be one msgpack value (no trailing bytes). Arrays come back as
    lists, maps as dicts with str keys, strings as str, bins as bytes. ``limit`` caps the
    payload's size (a kind's cap, :data:`MAX_PAYLOAD_OF`), and so the number of objects decoded
    and the length of any string, bin, array or map in it.
    """
    if not isinstance(data, bytes):
        raise FrameError(f"a payload must be bytes, got {_type_name(data)}")
    limit = min(limit, MAX_PAYLOAD)
    if len(data) > limit:
        raise FrameError(f"payload of {len(data)} bytes is over the limit of {limit}")
    value = _unpackb(
        data,
        max_str_len=min(MAX_STR_LEN, limit),
        max_bin_len=min(MAX_BIN_LEN, limit),
        max_array_len=min(MAX_ARRAY_LEN, limit),
        max_map_len=min(MAX_MAP_LEN, limit),
    )
    _check_tree(value)
    return value


# -- frames ----------------------------------------------------------------------------------


def _cap_of(kind: object) -> int:
    if not isinstance(kind, str):
        raise FrameError(f"a frame's kind must be str, got {_type_name(kind)}")
    cap = MAX_PAYLOAD_OF.get(kind)
    if cap is None:
        raise FrameError(f"unknown frame kind {kind[:MAX_KIND_LEN]!r}")
    return cap


def encode_frame(kind: str, payload: bytes, signature: bytes) -> bytes:
    """The bytes to write on a stream for one signed payload: length prefix, then the body.

    :class:`FrameError` for an unknown kind, a payload over its kind's cap or a signature that
    is not 64 bytes: a peer would refuse the frame.
    """
    cap = _cap_of(kind)
    if not isinstance(payload, bytes) or not isinstance(signature, bytes):
        raise FrameError("a frame's payload and signature must be bytes")
    if len(signature) != SIGNATURE_SIZE:
        raise FrameError(f"a signature is {SIGNATURE_SIZE} bytes, got {len(signature)}")
    if len(payload) > cap:
        raise FrameError(f"a {kind} payload of {len(payload)} bytes is over the limit of {cap}")
    body = _packb([kind, payload, signature])
    if len(body) > MAX_FRAME:
        raise FrameError(f"frame of {len(body)} bytes is over the limit of {MAX_FRAME}")
    return len(body).to_bytes(LENGTH_SIZE, "big") + body


def signed_frame(identity: Identity, kind: str, message: object) -> bytes:
    """Pack ``message``, sign exactly those bytes with ``identity`` as ``kind`` and frame them."""
    payload = pack(message)
    return encode_frame(kind, payload, identity.sign(kind, payload))


def open_frame(body: bytes) -> tuple[str, bytes, bytes]:
    """Split a frame body (as returned by :meth:`FrameDecoder.feed`) into
    (kind, payload, signature).

    Checks the outer shape only: exactly a three-item array of a known kind (str), a bin no
    longer than that kind's cap (:data:`MAX_PAYLOAD_OF`) and a 64-byte bin; the payload is not
    decoded. The caller then decodes it with :func:`unpack`, finds the sender's key and checks
    the signature (of this kind) over the payload bytes as they are.
    """
    if not isinstance(body, bytes):
        raise FrameError(f"a frame body must be bytes, got {_type_name(body)}")
    if len(body) > MAX_FRAME:
        raise FrameError(f"frame of {len(body)} bytes is over the limit of {MAX_FRAME}")
    outer = _unpackb(
        body,
        max_str_len=MAX_KIND_LEN,
        max_bin_len=MAX_PAYLOAD,
        max_array_len=3,
        max_map_len=3,
    )
    if not isinstance(outer, list) or len(outer) != 3:
        size = f" of {len(outer)}" if isinstance(outer, list) else ""
        raise FrameError(
            f"a frame must be an array [kind, payload, signature], got {_type_name(outer)}{size}"
        )
    kind, payload, signature = outer
    cap = _cap_of(kind)
    if not isinstance(payload, bytes):
        raise FrameError(f"a frame's payload must be bin, got {_type_name(payload)}")
    if len(payload) > cap:
        raise FrameError(f"a {kind} payload of {len(payload)} bytes is over the limit of {cap}")
    if not isinstance(signature, bytes):
        raise FrameError(f"a frame's signature must be bin, got {_type_name(signature)}")
    if len(signature) != SIGNATURE_SIZE:
        raise FrameError(f"a signature is {SIGNATURE_SIZE} bytes, got {len(signature)}")
    return kind, payload, signature


class FrameDecoder:
    """Cuts a byte stream into frame bodies, sans-IO: feed it what was received, get whole frames.

    A length over the cap raises :class:`FrameError` as soon as its 4 bytes arrive, without
    waiting for (or buffering) the body, so a peer cannot make us hold more than one frame. After
    that error the stream has lost its framing: the decoder stays broken and every later
    :meth:`feed` raises again; the connection should be closed.

    The cap (:attr:`max_frame`) may change between frames: a connection starts with
    :data:`PRE_AUTH_MAX_FRAME` and is raised to :data:`MAX_FRAME` once the other end has proved
    its key. :meth:`push` and :meth:`pop` take bytes in and frames out one at a time, so a frame
    that arrived in the same read as the last handshake message is measured against the cap in
    force when it is taken out.
    """

    __slots__ = ("_buffer", "_error", "_max_frame", "_start")

    def __init__(self, max_frame: int = MAX_FRAME) -> None:
        """``max_frame``: the cap on a body's length, at most :data:`MAX_FRAME`."""
        self._buffer = bytearray()
        self._start = 0
        self._max_frame = 0
        self.max_frame = max_frame
        self._error: str | None = None

    @property
    def max_frame(self) -> int:
        """The cap on the next frame's body length."""
        return self._max_frame

    @max_frame.setter
    def max_frame(self, value: int) -> None:
        if not 0 <= value <= MAX_FRAME:
            raise ValueError(f"a frame cap is between 0 and {MAX_FRAME}, got {value}")
        self._max_frame = value

    @property
    def pending(self) -> int:
        """Bytes received that do not yet make a whole frame (or were not taken out yet);
        nonzero at end of stream means the peer stopped mid-frame."""
        return len(self._buffer) - self._start

    def _fail(self, message: str) -> FrameError:
        self._error = message
        self._buffer = bytearray()
        self._start = 0
        return FrameError(message)

    def _check_length(self) -> int | None:
        """The length of the frame at the head of the buffer (checked), if it has arrived."""
        if len(self._buffer) - self._start < LENGTH_SIZE:
            return None
        at = self._start
        length = int.from_bytes(self._buffer[at : at + LENGTH_SIZE], "big")
        if length > self._max_frame:
            raise self._fail(f"frame length {length} is over the limit of {self._max_frame}")
        return length

    def push(self, data: bytes) -> None:
        """Add received bytes (the head frame's length is checked as soon as it is there)."""
        if self._error is not None:
            raise FrameError(self._error)
        if self._start and self._start * 2 >= len(self._buffer):
            del self._buffer[: self._start]
            self._start = 0
        self._buffer += data
        self._check_length()

    def pop(self) -> bytes | None:
        """The body of the next whole frame, or ``None`` until more bytes arrive."""
        if self._error is not None:
            raise FrameError(self._error)
        length = self._check_length()
        if length is None:
            return None
        begin = self._start + LENGTH_SIZE
        end = begin + length
        if len(self._buffer) < end:
            return None
        body = bytes(self._buffer[begin:end])
        self._start = end
        if self._start == len(self._buffer):
            self._buffer.clear()
            self._start = 0
        return body

    def feed(self, data: bytes) -> list[bytes]:
        """Add received bytes; return the bodies of the frames they complete, in order.

        Frame bodies are returned unparsed: pass each to :func:`open_frame`. Incomplete input is
        kept for the next call. Frames completed earlier in the same call are lost if a bad length
        follows them: the connection is being dropped anyway.
        """
        self.push(data)
        frames: list[bytes] = []
        while (body := self.pop()) is not None:
            frames.append(body)
        return frames


# -- field validation ------------------------------------------------------------------------

Kind = type | tuple[type, ...]
"""A field's allowed type or types (``NoneType`` for nil)."""


@dataclass(frozen=True, slots=True)
class Field:
    """What one message field must be, beyond its type.

    ``length`` is an exact length (of bytes, str, list or dict); ``minimum``/``maximum`` bound an
    int; ``items`` is what every element of a list must be; ``optional`` lets the field be absent.
    """

    kind: Kind
    length: int | None = None
    minimum: int | None = None
    maximum: int | None = None
    items: Kind | Field | None = None
    optional: bool = False


Spec = Mapping[str, Kind | Field]
"""What :func:`check_fields` checks a map against: field name to kind or :class:`Field`.
Annotate spec constants with it, or mypy infers ``dict[str, object]`` for a mixed dict."""


def _kind_name(kind: Kind) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join("None" if k is type(None) else k.__name__ for k in kinds)


def _check_value(value: object, spec: Kind | Field, name: str) -> None:
    field = spec if isinstance(spec, Field) else Field(spec)
    kinds = field.kind if isinstance(field.kind, tuple) else (field.kind,)
    # bool is an int subclass in Python but a distinct msgpack type: True is no sequence number.
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise FrameError(f"field {name} must be {_kind_name(field.kind)}, got {_type_name(value)}")
    if (
        field.length is not None
        and isinstance(value, bytes | str | list | dict)
        and len(value) != field.length
    ):
        unit = " bytes" if isinstance(value, bytes) else " long"
        raise FrameError(f"field {name} must be {field.length}{unit}, got {len(value)}")
    if isinstance(value, int) and not isinstance(value, bool):
        if field.minimum is not None and value < field.minimum:
            raise FrameError(f"field {name} must be at least {field.minimum}, got {value}")
        if field.maximum is not None and value > field.maximum:
            raise FrameError(f"field {name} must be at most {field.maximum}, got {value}")
    if field.items is not None and isinstance(value, list):
        for index, item in enumerate(value):
            _check_value(item, field.items, f"{name}[{index}]")


def check_fields(
    obj: object,
    spec: Spec,
    *,
    allow_extra: bool = False,
    prefix: str = "",
) -> dict[str, object]:
    """Check that ``obj`` is a map whose fields match ``spec``; return it, typed as a dict.

    >>> check_fields({"seq": 3, "type": "play"}, {"seq": int, "type": str})
    {'seq': 3, 'type': 'play'}
    >>> check_fields({"seq": "3"}, {"seq": int})
    Traceback (most recent call last):
    ...
    moska_p2p.protocol.frames.FrameError: field seq must be int, got str

    Every field in ``spec`` must be present (unless its :class:`Field` is ``optional``); a field
    not in ``spec`` is an error unless ``allow_extra``, because in a signed transcript an ignored
    field is still a field some other implementation may read. ``prefix`` names where a nested
    map sits (``prefix="body."`` gives ``field body.cards ...``).
    """
    if not isinstance(obj, dict):
        where = f"field {prefix.rstrip('.')}" if prefix else "a message"
        raise FrameError(f"{where} must be dict, got {_type_name(obj)}")
    for name, field_spec in spec.items():
        if name not in obj:
            if isinstance(field_spec, Field) and field_spec.optional:
                continue
            raise FrameError(f"missing field {prefix}{name}")
        _check_value(obj[name], field_spec, prefix + name)
    if not allow_extra:
        extra = sorted(str(key) for key in obj if key not in spec)
        if extra:
            raise FrameError(f"unexpected field {prefix}{extra[0]}")
    return cast(dict[str, object], obj)


@overload
def require(
    obj: Mapping[str, object],
    field: str,
    kind: type[_T],
    *,
    length: int | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
) -> _T: ...


@overload
def require(
    obj: Mapping[str, object],
    field: str,
    kind: tuple[type, ...],
    *,
    length: int | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
) -> object: ...


def require(
    obj: Mapping[str, object],
    field: str,
    kind: Kind,
    *,
    length: int | None = None,
    minimum: int | None = None,
    maximum: int | None = None,
) -> object:
    """``obj[field]``, checked like a :class:`Field` and typed for the caller.

    >>> require({"prev": bytes(32)}, "prev", bytes, length=32) == bytes(32)
    True
    """
    if field not in obj:
        raise FrameError(f"missing field {field}")
    value = obj[field]
    _check_value(value, Field(kind, length=length, minimum=minimum, maximum=maximum), field)
    return value
