"""A statement somebody signed about an event: the one shape every tournament record has.

A statement is ``[kind, author key, payload, signature]`` (msgpack), the signature over the
payload under the kind's own tag (``crypto.identity.signing_input``), so a statement of one
kind can never be read as another, nor as a game frame. Its payload always starts with the
event's id, so a statement of one event never counts in another.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..crypto.identity import Identity, fingerprint_of, is_acceptable_public_key, verify
from ..protocol.frames import FrameError, pack, unpack
from .spec import TournamentError

ENTRY = "tournament/entry"
ACK = "tournament/ack"
COMMIT = "tournament/commit"
REVEAL = "tournament/reveal"
ENTER = "tournament/enter"  # an entrant asks to play: [event, name, person|bot]
CLOSE = "tournament/close"  # the director closes a stage of a round: the items it counts
CLOSE_ACK = "tournament/close-ack"  # an entrant signs that a closure leaves none of its out
REFUSE = "tournament/refuse"  # an entrant refuses a closure that leaves its own item out
TABLE = "tournament/table"  # a table's host says on which port its table listens
RESULT = "tournament/result"  # a member's signed result of its table
STANDINGS = "tournament/standings"  # the director publishes the standings' digest
SUCCEED = "tournament/succeed"  # an entrant directs from a stage on: the director is lost
SUCCEED_ACK = "tournament/succeed-ack"  # an entrant acknowledges a succession
KINDS = frozenset(
    {
        ENTRY,
        ACK,
        COMMIT,
        REVEAL,
        ENTER,
        CLOSE,
        CLOSE_ACK,
        REFUSE,
        TABLE,
        RESULT,
        STANDINGS,
        SUCCEED,
        SUCCEED_ACK,
    }
)


@dataclass(frozen=True)
class Statement:
    """A signed statement; :func:`sign` makes one, :func:`read` checks one from bytes."""

    kind: str
    author: bytes
    payload: bytes
    signature: bytes
    decoded: list[object] | None = field(default=None, compare=False, repr=False)

    def body(self) -> list[object]:
        """The payload, decoded: a list whose first item is the event id. Decoded once and
        kept (a record reads its statements' bodies over and over): do not change it."""
        if self.decoded is not None:
            return self.decoded
        try:
            value = unpack(self.payload)
        except FrameError as error:
            raise TournamentError(f"a {self.kind} statement: {error}") from None
        if not isinstance(value, list) or not value or not isinstance(value[0], bytes):
            raise TournamentError(f"a {self.kind} statement's body is [event id, ...]")
        object.__setattr__(self, "decoded", value)
        return value

    def event(self) -> bytes:
        event = self.body()[0]
        assert isinstance(event, bytes)  # body() checked it
        return event

    def to_bytes(self) -> bytes:
        return pack([self.kind, self.author, self.payload, self.signature])

    def by(self) -> str:
        """Who signed it, for a message a person reads."""
        return fingerprint_of(self.author)


def sign(identity: Identity, kind: str, body: list[object]) -> Statement:
    if kind not in KINDS:
        raise TournamentError(f"unknown statement kind {kind!r}")
    payload = pack(body)
    return Statement(kind, identity.public_bytes, payload, identity.sign(kind, payload))


def read(data: bytes) -> Statement:
    """A statement from its bytes, its signature checked; :class:`TournamentError` for
    anything else."""
    try:
        value = unpack(data)
    except FrameError as error:
        raise TournamentError(f"not a tournament statement: {error}") from None
    if not isinstance(value, list) or len(value) != 4:
        raise TournamentError("a tournament statement is [kind, author, payload, signature]")
    kind, author, payload, signature = value
    if kind not in KINDS:
        raise TournamentError(f"unknown statement kind {kind!r}")
    if not is_acceptable_public_key(author):
        raise TournamentError(f"a {kind} statement's author is not a public key")
    if not isinstance(payload, bytes) or not isinstance(signature, bytes):
        raise TournamentError(f"a {kind} statement's payload and signature are bytes")
    assert isinstance(author, bytes)
    statement = Statement(kind, author, payload, signature)
    if not verify(author, kind, payload, signature):
        raise TournamentError(f"a {kind} statement by {statement.by()}: bad signature")
    return statement
