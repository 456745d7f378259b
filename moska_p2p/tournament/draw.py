"""A draw nobody can stack: each round's seed comes from a secret of every entrant, committed
before any is revealed.

Round ``r``, for every entrant ``E`` (the director included, which is just an entrant here):

1. **commit**: ``E`` draws a fresh 32-byte secret and signs
   ``SHA-256(tag | event | r | key_E | secret_E)``;
2. when the commitments are collected (every entrant's, or those in by the deadline: an
   entrant without one sits the round out and forfeits it), the *commit set* is the list of
   them in entry order, and its hash is what everyone reveals against;
3. **reveal**: ``E`` signs its secret *and the hash of the commit set it saw*. An entrant
   reveals only once it holds the whole commit set, so no secret is chosen after another is
   known: a secret that does not open its commitment is a cheat, named; a reveal against
   another commit set (a commitment swapped after the others revealed) does not count;
4. the **seed** is a hash of the event, the round, the commit set and every revealed secret
   in entry order. It fixes the tables (:mod:`.pairing`).

Whoever withholds its reveal (or reveals a secret that does not open its commitment) forfeits
the round; the seed is made of the other secrets. The one choice that leaves anybody is the
last revealer's "reveal or not", which costs it the round (docs/TOURNAMENT.md). The
director has no other power over the draw than any entrant: its secret is committed like the
others'.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable
from dataclasses import dataclass

from ..crypto.identity import Identity
from .entry import EntryList
from .signed import COMMIT, REVEAL, Statement, sign
from .spec import TournamentError

COMMIT_TAG = b"moska-p2p/tournament/commit\n"
COMMIT_SET_TAG = b"moska-p2p/tournament/commit-set\n"
SEED_TAG = b"moska-p2p/tournament/seed\n"
SECRET_SIZE = 32


def commitment(event: bytes, round_number: int, key: bytes, secret: bytes) -> bytes:
    if len(secret) != SECRET_SIZE:
        raise TournamentError(f"a draw secret is {SECRET_SIZE} bytes")
    return hashlib.sha256(
        COMMIT_TAG + event + struct.pack(">I", round_number) + key + secret
    ).digest()


def commit(identity: Identity, event: bytes, round_number: int, secret: bytes) -> Statement:
    digest = commitment(event, round_number, identity.public_bytes, secret)
    return sign(identity, COMMIT, [event, round_number, digest])


def _by_entrant(
    entry: EntryList, round_number: int, statements: Iterable[Statement], kind: str, size: int
) -> dict[bytes, list[object]]:
    """Each entrant's one statement of ``kind`` for this round, its body checked; a
    statement of another event, round or kind, by a stranger, or a second differing one by
    the same entrant is refused, naming its author."""
    found: dict[bytes, list[object]] = {}
    for statement in statements:
        if statement.kind != kind:
            raise TournamentError(f"expected a {kind} statement, got a {statement.kind} one")
        body = statement.body()
        if len(body) != size or body[0] != entry.event or body[1] != round_number:
            raise TournamentError(
                f"the {kind} by {statement.by()} is not for round {round_number} of this event"
            )
        entrant = entry.entrant(statement.author)
        if found.get(entrant.key, body) != body:
            raise TournamentError(
                f"{entrant.label()} signed two different {kind} statements for round "
                f"{round_number}: an equivocation"
            )
        found[entrant.key] = body
    return found


@dataclass(frozen=True)
class CommitSet:
    """The commitments of one round, in entry order."""

    round_number: int
    digests: tuple[tuple[bytes, bytes], ...]  # (entrant key, commitment)

    def digest(self, event: bytes) -> bytes:
        parts = [COMMIT_SET_TAG, event, struct.pack(">I", self.round_number)]
        for key, commitment_digest in self.digests:
            parts += [key, commitment_digest]
        return hashlib.sha256(b"".join(parts)).digest()

    def committed(self) -> list[bytes]:
        return [key for key, _ in self.digests]


def commit_set(entry: EntryList, round_number: int, commits: Iterable[Statement]) -> CommitSet:
    bodies = _by_entrant(entry, round_number, commits, COMMIT, 3)
    digests = []
    for key in entry.entrant_keys():
        if key in bodies:
            digest = bodies[key][2]
            if not isinstance(digest, bytes) or len(digest) != 32:
                raise TournamentError(f"{entry.entrant(key).label()}: a commitment is 32 bytes")
            digests.append((key, digest))
    return CommitSet(round_number, tuple(digests))


def reveal(
    identity: Identity, event: bytes, commits: CommitSet, secret: bytes
) -> Statement:
    """The entrant's secret, bound to the commit set it saw; refused (an error, nothing
    signed) when this entrant's own commitment is not in that set as it made it."""
    mine = dict(commits.digests).get(identity.public_bytes)
    if mine != commitment(event, commits.round_number, identity.public_bytes, secret):
        raise TournamentError(
            "this entrant's commitment is missing from the commit set or differs from the one "
            "it signed: it does not reveal against it"
        )
    return sign(identity, REVEAL, [event, commits.round_number, secret, commits.digest(event)])


@dataclass(frozen=True)
class Draw:
    """The outcome of a round's draw."""

    round_number: int
    seed: bytes
    players: tuple[bytes, ...]  # who plays the round, in entry order
    absent: tuple[bytes, ...]  # no commitment: sat the round out (a forfeit of it)
    withheld: tuple[bytes, ...]  # committed, never revealed against this set (a forfeit)
    cheated: tuple[bytes, ...]  # revealed a secret that does not open its commitment

    def forfeits(self) -> tuple[bytes, ...]:
        return self.absent + self.withheld + self.cheated


def draw(
    entry: EntryList, commits: CommitSet, reveals: Iterable[Statement]
) -> Draw:
    """The round's seed and who plays it, from the commit set and the reveals: anyone can
    run it on the signed statements and get the same answer."""
    event, number = entry.event, commits.round_number
    bodies = _by_entrant(entry, number, reveals, REVEAL, 4)
    pinned = commits.digest(event)
    committed = dict(commits.digests)
    players: list[bytes] = []
    withheld: list[bytes] = []
    cheated: list[bytes] = []
    revealed: list[bytes] = []  # key | secret, in entry order
    for key in commits.committed():
        body = bodies.get(key)
        if body is None or body[3] != pinned:
            withheld.append(key)  # no reveal, or one against another commit set
            continue
        secret = body[2]
        if not isinstance(secret, bytes) or len(secret) != 32:
            cheated.append(key)
            continue
        if commitment(event, number, key, secret) != committed[key]:
            cheated.append(key)
            continue
        players.append(key)
        revealed.append(key + secret)
    absent = [key for key in entry.entrant_keys() if key not in committed]
    seed = hashlib.sha256(
        SEED_TAG + event + struct.pack(">I", number) + pinned + b"".join(revealed)
    ).digest()
    return Draw(number, seed, tuple(players), tuple(absent), tuple(withheld), tuple(cheated))
