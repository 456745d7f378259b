"""The mental-poker deck: Choongmin Lee's two-pass SRA shuffle on ristretto255 (DESIGN.md).

There is no dealer, so every peer shuffles and masks the deck in turn; a card is seen only when
every peer has released its key for that position. The group is ristretto255 (through ``rbcl``,
which bundles libsodium): a prime-order group where a point is 32 canonical bytes and "masking"
is a scalar multiplication, which commutes, so peers can remove their masks in any order.

Everything here is pure (no I/O, no clock, no global randomness): a peer's secrets are derived
from one random seed it commits to before the shuffle and reveals at the end, so that everybody
can replay everybody's shuffle and name a cheater (:func:`replay_shuffle`).

The protocol, precisely (``n`` peers in seat order ``0 .. n-1``, a deck of ``size`` cards):

1. ``game_id`` (32 bytes) is fixed beforehand; card ``c`` is the point
   ``from_hash(SHA-512("moska-p2p/card" | game_id | c))`` (:func:`card_point`). Hashing to the
   group means nobody knows a discrete-log relation between two card points, so no one can turn
   a masked card into another card.
2. Each seat ``s`` draws a random 32-byte seed, publishes :func:`seed_commitment`, and derives
   :class:`DeckSecrets`: a pass-1 scalar ``a``, position keys ``k[0 .. size-1]`` and a
   permutation ``perm`` of ``range(size)``.
3. Pass 1, seat 0 first: seat 0's input is the card points in card order; every later seat takes
   the previous seat's output. Each seat checks its input (:func:`check_points`) and outputs
   ``out[i] = in[perm[i]] * a`` (:func:`pass1`).
4. Pass 2, seat 0 first, starting from the last pass-1 output: each seat checks its input and
   outputs ``out[j] = in[j] * (a^-1 * k[j])`` (no permutation), with the commitments
   :func:`key_commitment` to every ``k[j]`` (:func:`pass2`). After the last seat, position ``j``
   holds ``card_point * prod_s k_s[j]``.
5. Revealing position ``j`` to someone means releasing ``k_s[j]``; each released key is checked
   against its commitment (:func:`check_key`) before use. A private draw by seat ``p``: every
   other seat releases its key in public, which is safe because ``k_p[j]`` still hides the
   card; ``p`` unmasks with all of them and its own (:func:`unmask`, :func:`identify`).
6. At the end every seed is revealed and :func:`replay_shuffle` recomputes everything.

Errors: a peer's bad data raises :class:`DeckError` (with ``.seat`` when the culprit is known);
a caller's programming error (wrong lengths of its own arguments) raises :class:`ValueError`.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import itertools
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

import rbcl  # type: ignore[import-untyped]  # rbcl ships no type information.

# rbcl writes its bundled libsodium to a new temporary file on every import and never deletes
# it (2.8 MB each time). The library is loaded by now; on POSIX the mapping outlives the file.
with contextlib.suppress(OSError, AttributeError, TypeError):
    if os.name == "posix":
        os.unlink(sys.modules["rbcl._sodium"].lib_path)

__all__ = [
    "COMMITMENT_BYTES",
    "GAME_ID_BYTES",
    "GROUP_ORDER",
    "IDENTITY",
    "MAX_DECK_SIZE",
    "POINT_BYTES",
    "SCALAR_BYTES",
    "SEED_BYTES",
    "DeckError",
    "DeckSecrets",
    "card_point",
    "card_points",
    "card_table",
    "check_key",
    "check_points",
    "identify",
    "key_commitment",
    "pass1",
    "pass2",
    "replay_shuffle",
    "scalar_mult",
    "seed_commitment",
    "unmask",
]

POINT_BYTES = 32
SCALAR_BYTES = 32
SEED_BYTES = 32
GAME_ID_BYTES = 32
COMMITMENT_BYTES = 32
# A card is one byte in card_point's hash and a position two bytes in a key commitment.
MAX_DECK_SIZE = 256
MAX_SEATS = 256
# The order L of the ristretto255 group: scalars are integers mod L, in 32 little-endian bytes.
GROUP_ORDER = 2**252 + 27742317777372353535851937790883648493

IDENTITY = bytes(POINT_BYTES)

# Domain tags: every hash in this module starts with its own tag, and no tag is a prefix of
# another; the rest of each hash input has a fixed layout, so no two derivations can collide.
_TAG_CARD = b"moska-p2p/card"
_TAG_SEED_COMMITMENT = b"moska-p2p/seed-commitment"
_TAG_PASS1_SCALAR = b"moska-p2p/pass1-scalar"
_TAG_POSITION_KEY = b"moska-p2p/position-key"
_TAG_PERMUTATION = b"moska-p2p/permutation"
_TAG_KEY_COMMITMENT = b"moska-p2p/key-commitment"


class DeckError(ValueError):
    """A peer's deck data is wrong: an invalid or repeated point, a key or seed that does not
    match its commitment, a transcript that its seed does not reproduce, a point that is no card.

    ``seat`` names the culprit when it is known (the audit always knows it; :func:`pass1` and
    :func:`pass2` do not know who sent their input, so the caller names the sender).
    ``position`` is the deck position concerned, when there is one.
    """

    def __init__(self, message: str, *, seat: int | None = None, position: int | None = None):
        super().__init__(message)
        self.seat = seat
        self.position = position


# --- Typed wrappers around rbcl
#
# rbcl's functions are untyped. Only canonical, validated bytes reach them from here, and their
# failures are turned into DeckError, so the rest of the module never sees rbcl's exceptions.


def _from_hash(digest: bytes) -> bytes:
    point: bytes = rbcl.crypto_core_ristretto255_from_hash(digest)
    return point


def _is_valid_point(point: object) -> bool:
    """A canonical encoding of a ristretto255 point other than the identity.

    libsodium 1.0.18 (what rbcl bundles) ignores the top bit of the last byte, so ``P`` and ``P``
    with bit 255 set both decode to the same point: two distinct byte strings, one card. We
    reject the top bit ourselves so that byte equality is point equality. Its validity check
    also accepts the identity (all zeros), which every scalar maps to itself: refused too.
    """
    if not isinstance(point, bytes) or len(point) != POINT_BYTES:
        return False
    if point[31] & 0x80 or point == IDENTITY:
        return False
    valid: bool = rbcl.crypto_core_ristretto255_is_valid_point(point)
    return valid


def _is_valid_scalar(scalar: object) -> bool:
    """A canonical (reduced) non-zero scalar: one that has an inverse and one encoding only."""
    if not isinstance(scalar, bytes) or len(scalar) != SCALAR_BYTES:
        return False
    return 0 < int.from_bytes(scalar, "little") < GROUP_ORDER


def _scalar_reduce(wide: bytes) -> bytes:
    """A 64-byte hash reduced mod L: uniform over the scalars up to a 2^-259 bias."""
    scalar: bytes = rbcl.crypto_core_ristretto255_scalar_reduce(wide)
    return scalar


def _scalar_mul(x: bytes, y: bytes) -> bytes:
    product: bytes = rbcl.crypto_core_ristretto255_scalar_mul(x, y)
    return product


def _scalar_invert(x: bytes) -> bytes:
    inverse: bytes = rbcl.crypto_core_ristretto255_scalar_invert(x)
    return inverse


def _mul(scalar: bytes, point: bytes) -> bytes:
    """``point * scalar`` for inputs already known valid (the passes check their input once).

    rbcl's docstring says the scalar is "clamped": it is not, libsodium's ristretto255 variant
    only clears bit 255, which a reduced scalar never has. libsodium fails (rbcl raises
    RuntimeError) on an invalid point or an identity result, impossible for valid inputs.
    """
    try:
        product: bytes = rbcl.crypto_scalarmult_ristretto255(scalar, point)
    except RuntimeError as exc:  # pragma: no cover - unreachable for valid inputs
        raise DeckError(f"scalar multiplication failed: {exc}") from exc
    return product


def scalar_mult(scalar: bytes, point: bytes) -> bytes:
    """``point * scalar``, the one expensive operation (about 50 µs), after checking both: a
    canonical non-zero scalar and a canonical non-identity point (see :func:`check_points`)."""
    if not _is_valid_scalar(scalar):
        raise DeckError("not a valid non-zero scalar")
    if not _is_valid_point(point):
        raise DeckError("not a valid ristretto255 point")
    return _mul(scalar, point)


# --- Encodings


def _check_game_id(game_id: bytes) -> None:
    if not isinstance(game_id, bytes) or len(game_id) != GAME_ID_BYTES:
        raise ValueError(f"game_id must be {GAME_ID_BYTES} bytes")


def _seat_byte(seat: int) -> bytes:
    if not 0 <= seat < MAX_SEATS:
        raise ValueError(f"seat {seat} out of range 0..{MAX_SEATS - 1}")
    return bytes([seat])


def _position_bytes(position: int) -> bytes:
    if not 0 <= position < MAX_DECK_SIZE:
        raise ValueError(f"position {position} out of range 0..{MAX_DECK_SIZE - 1}")
    return position.to_bytes(2, "big")


def _short(point: bytes) -> str:
    return point[:6].hex() + "…" if isinstance(point, bytes) else repr(point)[:20]


# --- Card points


def card_point(game_id: bytes, card: int) -> bytes:
    """The point of ``card`` in this game: ``from_hash(SHA-512("moska-p2p/card" | game_id | c))``.

    Hashing to the group (rather than, say, ``c * G``) is what makes cards unrelated: nobody
    knows ``x`` with ``P_c * x = P_d``, so a peer cannot turn a masked card into another one.
    Binding to ``game_id`` makes every game's points fresh, so nothing learnt in an earlier game
    (or precomputed) applies.
    """
    _check_game_id(game_id)
    if not 0 <= card < MAX_DECK_SIZE:
        raise ValueError(f"card {card} out of range 0..{MAX_DECK_SIZE - 1}")
    return _from_hash(hashlib.sha512(_TAG_CARD + game_id + bytes([card])).digest())


def card_points(game_id: bytes, cards: Iterable[int]) -> list[bytes]:
    """The points of ``cards`` in their order: seat 0's pass-1 input."""
    return [card_point(game_id, card) for card in cards]


def card_table(game_id: bytes, cards: Iterable[int]) -> dict[bytes, int]:
    """Point -> card for every card of the deck, to recognise an unmasked point."""
    table: dict[bytes, int] = {}
    for card in cards:
        point = card_point(game_id, card)
        if point in table:
            raise ValueError(f"card {card} listed twice")
        table[point] = card
    return table


# --- Commitments


def seed_commitment(seed: bytes, game_id: bytes, seat: int) -> bytes:
    """SHA-256 of the seed under a domain tag, sent before the shuffle.

    It binds the peer to all its secrets at once (they all derive from the seed) before it sees
    anybody's shuffle; the seed is 32 random bytes, so the hash hides it. ``game_id`` and
    ``seat`` are included so a commitment cannot be copied into another game or seat.
    """
    _check_game_id(game_id)
    return hashlib.sha256(_TAG_SEED_COMMITMENT + game_id + _seat_byte(seat) + seed).digest()


def key_commitment(game_id: bytes, seat: int, position: int, key: bytes) -> bytes:
    """SHA-256 commitment (32 bytes) to ``seat``'s key for ``position``, sent with pass 2.

    When a key is released later, anyone can check it on the spot (:func:`check_key`) instead of
    waiting for the audit: a wrong key is caught before it can show a wrong card. A key is a
    uniformly random scalar, so the hash needs no blinding nonce to hide it.
    """
    _check_game_id(game_id)
    return hashlib.sha256(
        _TAG_KEY_COMMITMENT + game_id + _seat_byte(seat) + _position_bytes(position) + key
    ).digest()


def check_key(game_id: bytes, seat: int, position: int, key: bytes, commitment: bytes) -> bool:
    """Whether a released ``key`` is a valid scalar matching ``seat``'s commitment for
    ``position``. A key that fails must never be used to unmask."""
    if not _is_valid_scalar(key) or not isinstance(commitment, bytes):
        return False
    return hmac.compare_digest(key_commitment(game_id, seat, position, key), commitment)


# --- Secrets


def _derive_scalar(tag: bytes, prefix: bytes, index: int) -> bytes:
    """A non-zero scalar from ``SHA-512(tag | prefix | index | counter)``, reduced mod L.

    The counter is there only for the (2^-252) case of a zero scalar, so the derivation stays a
    pure function of the seed.
    """
    for counter in range(256):
        digest = hashlib.sha512(tag + prefix + index.to_bytes(2, "big") + bytes([counter]))
        scalar = _scalar_reduce(digest.digest())
        if _is_valid_scalar(scalar):
            return scalar
    raise AssertionError("no non-zero scalar in 256 tries")  # pragma: no cover


def _u32_stream(prefix: bytes) -> Iterator[int]:
    """Counter-mode SHA-512: blocks ``SHA-512(prefix | counter as 8 bytes big-endian)``, each
    cut into sixteen 4-byte big-endian integers."""
    for counter in itertools.count():
        block = hashlib.sha512(prefix + counter.to_bytes(8, "big")).digest()
        for offset in range(0, 64, 4):
            yield int.from_bytes(block[offset : offset + 4], "big")


def _uniform_below(stream: Iterator[int], bound: int) -> int:
    """An integer uniform in ``range(bound)`` by rejection sampling: draws at or above the largest
    multiple of ``bound`` below 2^32 are discarded, so ``x % bound`` has no modulo bias."""
    limit = (1 << 32) - (1 << 32) % bound
    while True:
        x = next(stream)
        if x < limit:
            return x % bound


def _derive_permutation(prefix: bytes, size: int) -> tuple[int, ...]:
    """Fisher-Yates from the top: for ``i = size-1 .. 1``, swap ``perm[i]`` with
    ``perm[uniform_below(i + 1)]``, starting from the identity permutation."""
    stream = _u32_stream(_TAG_PERMUTATION + prefix)
    perm = list(range(size))
    for i in range(size - 1, 0, -1):
        j = _uniform_below(stream, i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    return tuple(perm)


@dataclass(frozen=True)
class DeckSecrets:
    """One peer's secrets for one shuffle, all derived from its seed (:meth:`from_seed`).

    Deriving everything from one seed is what makes the audit possible: revealing 32 bytes at
    the end lets every peer recompute this peer's whole shuffle. Secrets are left out of
    ``repr`` so they do not end up in logs.
    """

    game_id: bytes
    seat: int
    size: int
    seed: bytes = field(repr=False)
    scalar: bytes = field(repr=False)
    """The pass-1 scalar ``a``."""
    scalar_inverse: bytes = field(repr=False)
    """``a^-1 mod L``, computed once for pass 2."""
    keys: tuple[bytes, ...] = field(repr=False)
    """``k[j]``: this peer's key for final deck position ``j``."""
    permutation: tuple[int, ...] = field(repr=False)
    """Pass 1 outputs ``in[permutation[i]] * a`` at position ``i``."""

    @classmethod
    def from_seed(cls, seed: bytes, game_id: bytes, seat: int, size: int) -> DeckSecrets:
        """Derive the secrets of ``seat`` for a deck of ``size`` cards.

        With ``prefix = seed | game_id | seat (1 byte)``:
        ``a = reduce(SHA-512("moska-p2p/pass1-scalar" | prefix | 0 (2 bytes) | counter))``,
        ``k[j] = reduce(SHA-512("moska-p2p/position-key" | prefix | j (2 bytes) | counter))``
        (counter: one byte, the first that gives a non-zero scalar, in practice 0), and the
        permutation is Fisher-Yates driven by ``SHA-512("moska-p2p/permutation" | prefix |
        counter (8 bytes))`` (see :func:`_derive_permutation`).
        """
        if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
            raise ValueError(f"seed must be {SEED_BYTES} bytes")
        _check_game_id(game_id)
        if not 1 <= size <= MAX_DECK_SIZE:
            raise ValueError(f"size {size} out of range 1..{MAX_DECK_SIZE}")
        prefix = seed + game_id + _seat_byte(seat)
        scalar = _derive_scalar(_TAG_PASS1_SCALAR, prefix, 0)
        keys = tuple(_derive_scalar(_TAG_POSITION_KEY, prefix, j) for j in range(size))
        return cls(
            game_id=game_id,
            seat=seat,
            size=size,
            seed=seed,
            scalar=scalar,
            scalar_inverse=_scalar_invert(scalar),
            keys=keys,
            permutation=_derive_permutation(prefix, size),
        )

    def key_commitments(self) -> list[bytes]:
        """The commitment to every position key, in position order (sent with pass 2)."""
        return [key_commitment(self.game_id, self.seat, j, k) for j, k in enumerate(self.keys)]


# --- The two passes


def check_points(points: Sequence[bytes], size: int) -> None:
    """Refuse a pass input that is not ``size`` valid, non-identity, pairwise distinct points.

    These checks are what each peer can verify alone, before touching the data: an invalid
    encoding or the identity would break the masking (the identity stays the identity under
    every key), and a repeated point means the previous peer duplicated a card (it must have
    dropped another). Replacing a card by another valid point passes these checks: only the
    audit (:func:`replay_shuffle`) catches that.
    """
    if len(points) != size:
        raise DeckError(f"expected {size} points, got {len(points)}")
    seen: dict[bytes, int] = {}
    for i, point in enumerate(points):
        if not isinstance(point, bytes) or len(point) != POINT_BYTES:
            raise DeckError(f"position {i}: not {POINT_BYTES} bytes", position=i)
        if point == IDENTITY:
            raise DeckError(f"position {i}: the identity point", position=i)
        if not _is_valid_point(point):
            raise DeckError(
                f"position {i}: {_short(point)} is not a canonical ristretto255 point",
                position=i,
            )
        if point in seen:
            raise DeckError(
                f"position {i} repeats the point at position {seen[point]} (a duplicated card)",
                position=i,
            )
        seen[point] = i


def pass1(secrets: DeckSecrets, points: Sequence[bytes]) -> list[bytes]:
    """Pass 1 of one peer: check the input, then ``output[i] = points[perm[i]] * a``.

    The permutation hides where each card went; the scalar hides which point is which card, so
    the next peer cannot follow the cards through this peer's shuffle.
    """
    check_points(points, secrets.size)
    a = secrets.scalar
    return [_mul(a, points[source]) for source in secrets.permutation]


def pass2(secrets: DeckSecrets, points: Sequence[bytes]) -> tuple[list[bytes], list[bytes]]:
    """Pass 2 of one peer: check the input, then ``output[j] = points[j] * (a^-1 * k[j])``.

    Swapping the one pass-1 scalar for a key per position is what lets a single card be shown
    to someone (release the keys of that position only) without weakening the others. The two
    scalars are combined first, so it costs one multiplication per point. Returns the new points
    and the key commitments for every position.
    """
    check_points(points, secrets.size)
    inverse = secrets.scalar_inverse
    output = [
        _mul(_scalar_mul(inverse, key), point)
        for key, point in zip(secrets.keys, points, strict=True)
    ]
    return output, secrets.key_commitments()


# --- Reveal


def unmask(point: bytes, keys: Sequence[bytes]) -> bytes:
    """Remove every given position key from ``point``: ``point * (prod keys)^-1``.

    The keys are multiplied first and inverted once, so this is one inversion and one point
    multiplication whatever the number of peers. Check each released key with :func:`check_key`
    before passing it here; with a key missing the result is some unrelated point, not a card.
    """
    if not _is_valid_point(point):
        raise DeckError(f"{_short(point)} is not a valid point to unmask")
    for i, key in enumerate(keys):
        if not _is_valid_scalar(key):
            raise DeckError(f"key {i} is not a valid non-zero scalar")
    if not keys:
        return point
    product = keys[0]
    for key in keys[1:]:
        product = _scalar_mul(product, key)
    return _mul(_scalar_invert(product), point)


def identify(point: bytes, table: dict[bytes, int]) -> int:
    """The card whose point this is (from :func:`card_table`); a point that is no card means a
    peer cheated (a wrong key, or a card replaced during the shuffle): the game must stop."""
    card = table.get(point)
    if card is None:
        raise DeckError(f"{_short(point)} is no card")
    return card


# --- The audit


def _first_difference(expected: Sequence[bytes], got: Sequence[bytes]) -> int | None:
    if len(expected) != len(got):
        return min(len(expected), len(got))
    for i, (e, g) in enumerate(zip(expected, got, strict=True)):
        if e != g:
            return i
    return None


def _describe_output_error(
    what: str, seat: int, expected: Sequence[bytes], got: Sequence[bytes], table: dict[bytes, int]
) -> DeckError:
    position = _first_difference(expected, got)
    assert position is not None
    if len(expected) != len(got):
        return DeckError(
            f"seat {seat}'s {what} has {len(got)} points, expected {len(expected)}",
            seat=seat,
        )
    point = got[position]
    detail = ""
    if not isinstance(point, bytes):
        return DeckError(
            f"seat {seat}'s {what} at position {position} is not bytes",
            seat=seat,
            position=position,
        )
    if point in table:
        detail = f" (it is the bare point of card {table[point]})"
    elif sum(1 for p in got if p == point) > 1:
        detail = " (a point it repeats elsewhere: a duplicated card)"
    elif point not in expected:
        detail = " (a point its seed does not produce anywhere: a replaced card)"
    return DeckError(
        f"seat {seat}'s {what} at position {position} is not what its seed gives: "
        f"expected {_short(expected[position])}, got {_short(point)}{detail}",
        seat=seat,
        position=position,
    )


def replay_shuffle(
    game_id: bytes,
    seeds: Sequence[bytes],
    commitments: Sequence[bytes],
    pass1_outputs: Sequence[Sequence[bytes]],
    pass2_outputs: Sequence[Sequence[bytes]],
    key_commitments: Sequence[Sequence[bytes]],
    size: int,
    cards: Sequence[int],
) -> list[int]:
    """Audit a whole shuffle from the revealed seeds; return the card at every final position.

    All lists are indexed by seat. In order: every seed must match its commitment; then pass 1
    is replayed seat by seat (seat 0 from the card points of ``cards`` in order, each later seat
    from the previous seat's transmitted output) and each recomputed output must equal the
    transmitted one; then pass 2 likewise from the last pass-1 output, comparing both the points
    and the key commitments. The first mismatch raises :class:`DeckError` with ``.seat`` set to
    the seat that sent it. Since each transmitted input is checked before it is used, a seat is
    only ever blamed for its own message.

    The faces come from composing the permutations (no unmasking needed: every multiplication
    was just checked), so position ``j`` holds
    ``cards[perm_0[perm_1[... perm_{n-1}[j]]]]``.
    """
    seats = len(seeds)
    lists = (commitments, pass1_outputs, pass2_outputs, key_commitments)
    if seats == 0 or any(len(x) != seats for x in lists):
        raise ValueError("seeds, commitments and every pass list need one entry per seat")
    if len(cards) != size:
        raise ValueError(f"{len(cards)} cards for a deck of {size}")
    table = card_table(game_id, cards)

    secrets: list[DeckSecrets] = []
    for seat, (seed, commitment) in enumerate(zip(seeds, commitments, strict=True)):
        if not isinstance(seed, bytes) or len(seed) != SEED_BYTES:
            raise DeckError(f"seat {seat}'s revealed seed is not {SEED_BYTES} bytes", seat=seat)
        if not isinstance(commitment, bytes) or not hmac.compare_digest(
            seed_commitment(seed, game_id, seat), commitment
        ):
            raise DeckError(f"seat {seat}'s revealed seed does not match its commitment", seat=seat)
        secrets.append(DeckSecrets.from_seed(seed, game_id, seat, size))

    current: Sequence[bytes] = card_points(game_id, cards)
    for seat in range(seats):
        expected = pass1(secrets[seat], current)
        sent = pass1_outputs[seat]
        if list(sent) != expected:
            raise _describe_output_error("pass-1 output", seat, expected, sent, table)
        current = sent

    for seat in range(seats):
        expected, expected_commitments = pass2(secrets[seat], current)
        sent = pass2_outputs[seat]
        if list(sent) != expected:
            raise _describe_output_error("pass-2 output", seat, expected, sent, table)
        sent_commitments = list(key_commitments[seat])
        position = _first_difference(expected_commitments, sent_commitments)
        if position is not None:
            raise DeckError(
                f"seat {seat}'s key commitment for position {position} does not match the key"
                " its seed gives",
                seat=seat,
                position=position,
            )
        current = sent

    faces: list[int] = []
    for j in range(size):
        index = j
        for seat in reversed(range(seats)):
            index = secrets[seat].permutation[index]
        faces.append(cards[index])
    return faces
