"""Protocol messages: the signed envelope and every message body, strictly validated.

Every message is a msgpack map ``{"v", "g", "f", "s", "p", "t", "b", "h"}``: protocol
version, game id (the table id in ``hello``), sender public key, per-sender sequence number,
hash of the sender's previous payload, type, body, and the sender's *heads*: for every roster
member in roster order, ``[n, hash8]``, how many of its messages the sender had applied and
the first 8 bytes of the last one's hash (``[0, b""]`` for none). Heads let peers notice that
they hold different messages under one sequence number without relaying every frame.
PROTOCOL.md in ``protocol/`` is the reference; this module is its executable form: any field
of the wrong type or size is refused before the message goes further. A body that passes
becomes the frozen dataclass of its kind (:class:`HelloBody` ... :class:`VerdictBody`), so
what reads it reads typed attributes. A sender builds that same dataclass and signs it
(:func:`encode_body`, the type taken from the class); :func:`to_wire` is where a body becomes
its map, on the way out and for a forging tool to edit.
"""

from __future__ import annotations

import builtins
import dataclasses
import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from .frames import FrameError, pack, unpack

VERSION = 2
HASH = 32  # bytes of a SHA-256 digest, a ristretto255 point or scalar, a public key
NO_PREVIOUS = bytes(HASH)
MAX_NAME = 40
MAX_POSITIONS = 52
HEAD_HASH = 8  # bytes of a payload hash kept in a head

HELLO, SEAT, SHUFFLE1, SHUFFLE2 = "hello", "seat", "shuffle1", "shuffle2"
KEYS, MOVE, CLAIM, DISCLOSE = "keys", "move", "claim", "disclose"
RESULT, LEAVE, VERDICT, WAIT = "result", "leave", "verdict", "wait"
SILENT = "silent"
MAX_EVIDENCE = 6  # signed frames a verdict message carries (5: an abandonment at 6 seats)
MAX_EVIDENCE_FRAME = 12 * 1024  # four fit in a verdict (frames.py caps it at 64 KiB)
MAX_EVIDENCE_BYTES = 4 * MAX_EVIDENCE_FRAME  # all of a verdict's evidence together
# Proof sizes (PROTOCOL.md, "Proofs"): the shuffle argument is 4N+5 32-byte items, the
# re-keying proof two commitments and a response per position.
SHUFFLE_PROOF_ITEMS = 4
REKEY_PROOF_ITEMS = 3


class MessageError(FrameError):
    """A message whose envelope or body breaks the specification."""


def payload_hash(payload: bytes) -> bytes:
    return hashlib.sha256(payload).digest()


KeyPair = tuple[int, bytes]
"""A deck position and a seat's key for it."""


@dataclass(frozen=True)
class HelloBody:
    name: str
    nonce: bytes
    seat_commit: bytes
    config: dict[str, Any]  # the table's settings as on the wire (TableConfig.from_wire)
    roster: tuple[bytes, ...]


@dataclass(frozen=True)
class SeatBody:
    secret: bytes


@dataclass(frozen=True)
class Shuffle1Body:
    scalar: bytes
    points: tuple[bytes, ...]
    proof: bytes


@dataclass(frozen=True)
class Shuffle2Body:
    points: tuple[bytes, ...]
    keys: tuple[bytes, ...]
    proof: bytes


@dataclass(frozen=True)
class KeysBody:
    keys: tuple[KeyPair, ...]


@dataclass(frozen=True)
class DiscloseBody:
    keys: tuple[KeyPair, ...]


@dataclass(frozen=True)
class MoveBody:
    move: str
    state: bytes
    cards: tuple[KeyPair, ...]


@dataclass(frozen=True)
class ClaimBody:
    rank: int
    card: KeyPair | None  # None: "none of that rank" (RULES D3)


@dataclass(frozen=True)
class ResultBody:
    state: bytes
    losers: tuple[int, ...]
    transcript: bytes


@dataclass(frozen=True)
class LeaveBody:
    reason: str


@dataclass(frozen=True)
class WaitBody:
    pass


@dataclass(frozen=True)
class SilentBody:
    culprit: bytes
    point: int


@dataclass(frozen=True)
class VerdictBody:
    kind: str
    culprits: tuple[bytes, ...]
    reason: str
    evidence: tuple[bytes, ...]
    relayed: tuple[bytes, ...] | None  # None: signed before the field existed (§7.11)


Body = (
    HelloBody | SeatBody | Shuffle1Body | Shuffle2Body | KeysBody | DiscloseBody | MoveBody
    | ClaimBody | ResultBody | LeaveBody | WaitBody | SilentBody | VerdictBody
)  # fmt: skip
_B = TypeVar("_B", bound=Body)


def kind_of(body: Body) -> str:
    """The message type ``body`` goes as: a sender names a body, never a kind beside it, so
    the two cannot disagree."""
    return _KIND_OF[type(body)]


def to_wire(body: Body) -> dict[str, Any]:
    """The map of ``body`` as it goes on the wire (fields in their order, arrays as lists;
    a verdict's absent ``relayed`` stays absent): the one place a body becomes a map, for
    the sender's payload and for what a test or a fuzzer edits and signs.

    The field order of each class is the key order of the map (msgpack keeps it), so it is
    part of the wire format: reordering a class's fields changes every signed payload."""
    out: dict[str, Any] = {}
    for field in dataclasses.fields(body):
        value = getattr(body, field.name)
        if value is None and field.name in _OPTIONAL.get(kind_of(body), ()):
            continue
        out[field.name] = _as_lists(value)
    return out


def _as_lists(value: Any) -> Any:
    if isinstance(value, tuple | list):
        return [_as_lists(item) for item in value]
    return value


@dataclass(frozen=True)
class Message:
    version: int
    game: bytes
    sender: bytes
    seq: int
    prev: bytes
    type: str
    body: Body
    payload: bytes
    heads: tuple[tuple[int, bytes], ...] = ()

    @property
    def hash(self) -> bytes:
        return payload_hash(self.payload)

    def body_as(self, kind: builtins.type[_B]) -> _B:
        """The body, as the class its type says it is (a handler of that type reads it so)."""
        if not isinstance(self.body, kind):
            raise TypeError(f"a {self.type} message has no {kind.__name__}")
        return self.body


def _bytes(value: Any, what: str, size: int | None = HASH) -> bytes:
    if not isinstance(value, bytes):
        raise MessageError(f"{what} must be bytes, not {type(value).__name__}")
    if size is not None and len(value) != size:
        raise MessageError(f"{what} must be {size} bytes, not {len(value)}")
    return value


def _int(value: Any, what: str, low: int = 0, high: int = 1 << 31) -> int:
    if type(value) is not int:
        raise MessageError(f"{what} must be an integer, not {type(value).__name__}")
    if not low <= value <= high:
        raise MessageError(f"{what} = {value} is out of range {low}..{high}")
    return value


def _str(value: Any, what: str, limit: int = 200) -> str:
    if not isinstance(value, str):
        raise MessageError(f"{what} must be text, not {type(value).__name__}")
    if len(value) > limit:
        raise MessageError(f"{what} is longer than {limit} characters")
    return value


def _list(value: Any, what: str, limit: int = MAX_POSITIONS) -> list[Any]:
    if not isinstance(value, list):
        raise MessageError(f"{what} must be a list, not {type(value).__name__}")
    if len(value) > limit:
        raise MessageError(f"{what} holds more than {limit} items")
    return value


def _keys_list(value: Any, what: str) -> tuple[KeyPair, ...]:
    out = []
    for item in _list(value, what):
        pair = _list(item, f"an entry of {what}", 2)
        if len(pair) != 2:
            raise MessageError(f"an entry of {what} must be [position, key]")
        out.append((_int(pair[0], "a position", 0, MAX_POSITIONS - 1), _bytes(pair[1], "a key")))
    return tuple(out)


def _check_body(kind: str, body: Mapping[str, Any]) -> Body:
    """The typed body of ``kind``; MessageError unless ``body`` has exactly its fields (those
    of :data:`_OPTIONAL` may be absent), well typed."""
    expected = _FIELDS.get(kind)
    if expected is None:
        raise MessageError(f'unknown message type "{kind}"')
    optional = _OPTIONAL.get(kind, frozenset())
    if not set(expected) - optional <= set(body) <= set(expected):
        missing = sorted(set(expected) - optional - set(body))
        extra = sorted(set(body) - set(expected))
        raise MessageError(f"{kind} body: missing {missing}, unexpected {extra}")
    values: dict[str, Any] = {name: None for name in optional}  # absent: None
    for name, check in expected.items():
        if name in body:
            values[name] = check(body[name], f"{kind}.{name}")
    return _CLASS[kind](**values)


def _points(value: Any, what: str) -> tuple[bytes, ...]:
    return tuple(_bytes(item, f"an item of {what}") for item in _list(value, what))


def _proof(value: Any, what: str) -> bytes:
    """A proof is opaque bytes here; its exact size depends on the deck and is checked by the
    deck phase (a wrong size is the sender's fault, named in a verdict)."""
    limit = (SHUFFLE_PROOF_ITEMS * MAX_POSITIONS + 5) * HASH
    if not isinstance(value, bytes) or len(value) > limit:
        raise MessageError(f"{what} must be bytes of at most {limit}")
    return value


def _evidence(value: Any, what: str) -> tuple[bytes, ...]:
    for item in _list(value, what, MAX_EVIDENCE):
        _bytes(item, f"an item of {what}", None)
        if len(item) > MAX_EVIDENCE_FRAME:
            raise MessageError(f"an item of {what} is longer than {MAX_EVIDENCE_FRAME} bytes")
    if sum(len(item) for item in value) > MAX_EVIDENCE_BYTES:
        raise MessageError(f"{what} holds more than {MAX_EVIDENCE_BYTES} bytes")
    return tuple(value)


def _claim_card(value: Any, what: str) -> KeyPair | None:
    return None if value is None else _keys_list([value], what)[0]


def _config(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise MessageError(f"{what} must be a map")
    return value


def _roster(value: Any, what: str) -> tuple[bytes, ...]:
    return tuple(_bytes(item, f"a key of {what}") for item in _list(value, what, 6))


def _relayed(value: Any, what: str) -> tuple[bytes, ...]:
    """The keys of the peers whose link to the verdict's signer went through a relay."""
    keys = _roster(value, what)
    if len(set(keys)) != len(keys):
        raise MessageError(f"{what} names a key twice")
    return keys


def _losers(value: Any, what: str) -> tuple[int, ...]:
    return tuple(_int(item, f"a seat of {what}", 0, 5) for item in _list(value, what, 6))


_Check = Callable[[Any, str], Any]
_FIELDS: dict[str, dict[str, _Check]] = {
    HELLO: {
        "name": lambda v, w: _str(v, w, MAX_NAME),
        "nonce": _bytes,
        "seat_commit": _bytes,
        "config": _config,
        "roster": _roster,
    },
    SEAT: {"secret": _bytes},
    SHUFFLE1: {"scalar": _bytes, "points": _points, "proof": _proof},
    SHUFFLE2: {"points": _points, "keys": _points, "proof": _proof},
    KEYS: {"keys": _keys_list},
    DISCLOSE: {"keys": _keys_list},
    MOVE: {
        "move": lambda v, w: _str(v, w, 80),
        "state": _bytes,
        "cards": _keys_list,
    },
    CLAIM: {"rank": lambda v, w: _int(v, w, 0, 12), "card": _claim_card},
    RESULT: {"state": _bytes, "losers": _losers, "transcript": _bytes},
    LEAVE: {"reason": lambda v, w: _str(v, w, 200)},
    WAIT: {},
    SILENT: {"culprit": _bytes, "point": lambda v, w: _int(v, w, -1, 1 << 20)},
    VERDICT: {
        "kind": lambda v, w: _str(v, w, 40),
        "culprits": _roster,
        "reason": lambda v, w: _str(v, w, 400),
        "evidence": _evidence,
        "relayed": _relayed,
    },
}
MESSAGE_TYPES = tuple(_FIELDS)
_OPTIONAL: dict[str, frozenset[str]] = {VERDICT: frozenset({"relayed"})}
"""Fields a reader accepts without: a verdict signed before its ``relayed`` field existed
(PROTOCOL.md §7.11) says nothing about its signer's paths. Every verdict made now has it."""
_CLASS: dict[str, type[Body]] = {
    HELLO: HelloBody,
    SEAT: SeatBody,
    SHUFFLE1: Shuffle1Body,
    SHUFFLE2: Shuffle2Body,
    KEYS: KeysBody,
    DISCLOSE: DiscloseBody,
    MOVE: MoveBody,
    CLAIM: ClaimBody,
    RESULT: ResultBody,
    LEAVE: LeaveBody,
    WAIT: WaitBody,
    SILENT: SilentBody,
    VERDICT: VerdictBody,
}
"""The class of each kind's body (its fields those of :data:`_FIELDS`, in that order)."""
_KIND_OF = {cls: kind for kind, cls in _CLASS.items()}


def parse_payload(payload: bytes) -> Message:
    """Decode and validate a payload; raises :class:`MessageError` (a FrameError)."""
    data = unpack(payload)
    if not isinstance(data, dict):
        raise MessageError("a message must be a map")
    if set(data) != {"v", "g", "f", "s", "p", "t", "b", "h"}:
        raise MessageError(f"a message has the fields v g f s p t b h, not {sorted(data)}")
    version = _int(data["v"], "v")
    if version != VERSION:
        raise MessageError(f"protocol version {version} is not {VERSION}")
    kind = _str(data["t"], "t", 20)
    body = data["b"]
    if not isinstance(body, dict):
        raise MessageError("the body must be a map")
    typed = _check_body(kind, body)
    return Message(
        version,
        _bytes(data["g"], "g"),
        _bytes(data["f"], "f"),
        _int(data["s"], "s", 0, 1 << 20),
        _bytes(data["p"], "p"),
        kind,
        typed,
        payload,
        _heads(data["h"]),
    )


def _heads(value: Any) -> tuple[tuple[int, bytes], ...]:
    out = []
    for item in _list(value, "h", 6):
        pair = _list(item, "a head", 2)
        if len(pair) != 2:
            raise MessageError("a head must be [count, hash8]")
        count = _int(pair[0], "a head's count", 0, 1 << 20)
        digest = _bytes(pair[1], "a head's hash", None)
        if len(digest) != (HEAD_HASH if count else 0):
            raise MessageError(f"a head's hash must be {HEAD_HASH} bytes (none for count 0)")
        out.append((count, digest))
    return tuple(out)


def encode_body(
    game: bytes,
    sender: bytes,
    seq: int,
    prev: bytes,
    body: Body,
    heads: Sequence[tuple[int, bytes]] = (),
) -> bytes:
    """The payload bytes of the message carrying ``body``, of the type its class says."""
    return encode_payload(game, sender, seq, prev, kind_of(body), to_wire(body), heads)


def encode_payload(
    game: bytes,
    sender: bytes,
    seq: int,
    prev: bytes,
    kind: str,
    body: Mapping[str, Any],
    heads: Sequence[tuple[int, bytes]] = (),
) -> bytes:
    """The payload bytes of a message whose body is a wire map (validated as any received
    one would be): what :func:`encode_body` sends, and a forging tool's way in."""
    _check_body(kind, body)
    _heads([list(h) for h in heads])
    envelope = {"v": VERSION, "g": game, "f": sender, "s": seq, "p": prev, "t": kind, "b": body}
    return pack({**envelope, "h": [list(h) for h in heads]})
