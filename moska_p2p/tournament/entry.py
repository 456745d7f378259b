"""Who plays: the entry list the director signs and every entrant acknowledges.

The director opens an event (:class:`~.spec.EventSpec`, its id), collects entries, and
closes the entry by signing the list: the event's id and settings, and the entrants in
entry order, each a key, a name and whether a person or a bot plays it. Every entrant then
signs an acknowledgement of exactly that list (its hash). The entry is *closed* when every
entrant has acknowledged it: from then on nobody can be added, dropped or renamed, not even
by the director, because every later statement (draw, results) is checked against the list
that every entrant signed. An entrant that never acknowledges is not in the event: the
director must sign a new list without it, which the others acknowledge again.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

from ..crypto.identity import Identity, fingerprint_of, is_acceptable_public_key
from .signed import ACK, ENTRY, Statement, sign
from .spec import MAX_ENTRANTS, EventSpec, TournamentError, event_id

PERSON, BOT = "person", "bot"
LIST_TAG = b"moska-p2p/tournament/entry-list\n"


@dataclass(frozen=True)
class Entrant:
    key: bytes
    name: str
    plays: str  # PERSON or BOT

    def label(self) -> str:
        return f"{self.name} ({fingerprint_of(self.key)})"


@dataclass(frozen=True)
class EntryList:
    """The closed entry list, as the director signed it."""

    spec: EventSpec
    director: bytes
    nonce: bytes
    entrants: tuple[Entrant, ...]
    statement: Statement

    @cached_property
    def event(self) -> bytes:
        return event_id(self.spec, self.director, self.nonce)

    def digest(self) -> bytes:
        """What an acknowledgement signs: the list's exact signed bytes, hashed."""
        return hashlib.sha256(LIST_TAG + self.statement.payload).digest()

    def entrant_keys(self) -> list[bytes]:
        return [entrant.key for entrant in self.entrants]

    def entrant(self, key: bytes) -> Entrant:
        for entrant in self.entrants:
            if entrant.key == key:
                return entrant
        raise TournamentError(f"{fingerprint_of(key)} is not an entrant of this event")


def _check_entrants(spec: EventSpec, entrants: Sequence[Entrant]) -> None:
    if not spec.rules().min_players <= len(entrants) <= MAX_ENTRANTS:
        raise TournamentError(
            f"an event of {spec.preset} needs {spec.rules().min_players} to {MAX_ENTRANTS} "
            f"entrants, not {len(entrants)}"
        )
    keys = [e.key for e in entrants]
    if len(set(keys)) != len(keys):
        raise TournamentError("an entrant is on the list twice (the same key)")
    names = [e.name.casefold() for e in entrants]
    if len(set(names)) != len(names):
        raise TournamentError("two entrants have the same name: the standings would mix them")
    for e in entrants:
        if not is_acceptable_public_key(e.key):
            raise TournamentError(f"entrant {e.name!r}: not a public key")
        if not 1 <= len(e.name) <= 40 or not e.name.isprintable():
            raise TournamentError(f"entrant name {e.name!r}: 1 to 40 printable characters")
        if e.plays not in (PERSON, BOT):
            raise TournamentError(f"entrant {e.name!r} plays as {e.plays!r}: person or bot")
        if e.plays == BOT and not spec.bots_allowed:
            raise TournamentError(f"entrant {e.name!r} is a bot, and this event takes no bots")


def close_entry(
    director: Identity, spec: EventSpec, nonce: bytes, entrants: Sequence[Entrant]
) -> EntryList:
    """The director's signed entry list."""
    _check_entrants(spec, entrants)
    eid = event_id(spec, director.public_bytes, nonce)
    body: list[object] = [
        eid,
        spec.to_wire(),
        nonce,
        [[e.key, e.name, e.plays] for e in entrants],
    ]
    statement = sign(director, ENTRY, body)
    return EntryList(spec, director.public_bytes, nonce, tuple(entrants), statement)


def read_entry(statement: Statement) -> EntryList:
    """The entry list in a signed statement (its signature already checked by
    :func:`~.signed.read`), every field checked."""
    if statement.kind != ENTRY:
        raise TournamentError(f"expected an entry list, got a {statement.kind} statement")
    body = statement.body()
    if len(body) != 4:
        raise TournamentError("an entry list is [event, settings, nonce, entrants]")
    eid, wire_spec, nonce, wire_entrants = body
    spec = EventSpec.from_wire(wire_spec)
    if not isinstance(nonce, bytes) or not isinstance(wire_entrants, list):
        raise TournamentError("an entry list's nonce is bytes and its entrants a list")
    entrants = []
    for item in wire_entrants:
        if not (isinstance(item, list) and len(item) == 3):
            raise TournamentError("an entrant is [key, name, person|bot]")
        key, name, plays = item
        if not isinstance(key, bytes) or not isinstance(name, str) or not isinstance(plays, str):
            raise TournamentError("an entrant is [key, name, person|bot]")
        entrants.append(Entrant(key, name, plays))
    _check_entrants(spec, entrants)
    if eid != event_id(spec, statement.author, nonce):
        raise TournamentError("the entry list's event id is not its settings' and director's")
    return EntryList(spec, statement.author, nonce, tuple(entrants), statement)


def acknowledge(entrant: Identity, entry: EntryList) -> Statement:
    """An entrant's signed word that it plays in this event, with exactly this list."""
    entry.entrant(entrant.public_bytes)  # only an entrant acknowledges
    return sign(entrant, ACK, [entry.event, entry.digest()])


def missing_acknowledgements(entry: EntryList, acks: Iterable[Statement]) -> list[Entrant]:
    """The entrants whose acknowledgement of this very list is not among ``acks``;
    :class:`TournamentError` for an acknowledgement of another list or by a stranger (a
    forged or stale one is refused, never silently left out)."""
    acked: set[bytes] = set()
    for ack in acks:
        if ack.kind != ACK:
            raise TournamentError(f"expected an acknowledgement, got a {ack.kind} statement")
        body = ack.body()
        if body != [entry.event, entry.digest()]:
            raise TournamentError(
                f"the acknowledgement by {ack.by()} is of another entry list or event"
            )
        entry.entrant(ack.author)
        acked.add(ack.author)
    return [e for e in entry.entrants if e.key not in acked]
