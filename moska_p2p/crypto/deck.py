"""The mental-poker deck, v2: Lee's two-pass SRA shuffle on ristretto255, every step proven.

There is no dealer, so every peer shuffles and masks the deck in turn; a card is seen only when
every peer has released its key for that position. The group is ristretto255 (:mod:`.group`):
prime order, a point is 32 canonical bytes, and masking is a scalar multiplication, which
commutes, so peers can remove their masks in any order.

In v1 every peer committed to a seed and revealed it at the end for an audit. In v2 nothing
secret is ever revealed (no seed, no permutation, no pass-1 scalar): each pass carries a
zero-knowledge proof that it was done right, checked by every peer when it arrives, so a cheat
is named at the message that carries it. Everything here is pure (no I/O, no clock, no global
randomness): a peer's secrets derive from one secret random seed, so a restarted peer rebuilds
the same messages and the same proofs (:class:`DeckSecrets`).

The protocol (``n`` seats ``0 .. n-1``, a deck of ``size`` cards, ``B`` the base point):

1. ``game_id`` (32 bytes) is fixed beforehand; card ``c`` is the point
   ``from_hash(SHA-512("moska-p2p/card" | game_id | c))`` (:func:`card_point`). Nobody knows a
   discrete-log relation between two card points, so no one can turn a card into another.
2. Each seat ``s`` draws a secret 32-byte seed and derives :class:`DeckSecrets`: a pass-1
   scalar ``a``, position keys ``k[0 .. size-1]``, a permutation ``perm`` and a proof-nonce
   seed. Its public pass-1 point is ``A = a*B`` and its key points ``K[j] = k[j]*B``.
3. Pass 1, seat 0 first: seat 0's input is the card points in card order, every later seat's
   the previous seat's output. A seat outputs ``out[i] = a * in[perm[i]]``, ``A`` and a shuffle
   argument (:func:`pass1`; :mod:`.shuffle_proof`) under the context
   ``deck_context(game_id, s, "shuffle1")``; everybody checks it (:func:`verify_pass1`).
4. Pass 2, seat 0 first, from the last pass-1 output: a seat outputs ``out[j] = x_j * in[j]``
   with ``x_j = a^-1 * k[j]`` (no permutation), its key points ``K`` and a re-keying proof
   (:func:`pass2`; :mod:`.dleq`) that ``out[j] = x_j*in[j]`` and ``K[j] = x_j*A`` for the
   ``A`` of its pass 1, under ``deck_context(game_id, s, "shuffle2")``; everybody checks it
   (:func:`verify_pass2`). After the last seat, position ``j`` holds
   ``card_point * prod_s k_s[j]``.
5. Revealing position ``j`` to someone means releasing ``k_s[j]``; each released key is
   checked against its key point (:func:`check_key`: ``k*B == K_s[j]``) before use. A private
   draw by seat ``p``: every other seat releases its key in public, which is safe because
   ``k_p[j]`` still hides the card; ``p`` unmasks with all of them and its own
   (:func:`unmask`, :func:`identify`).

Why this is enough: pass 1's proof shows each output is a permutation of its input under one
scalar (no card dropped, duplicated or replaced); pass 2's shows every position was re-masked
in place from the ``A`` of pass 1 to the key behind ``K[j]``; and a released key must open its
key point. So the final deck is the cards in some order that no coalition short of all seats
knows, and every key either opens its card or is refused on arrival.

Errors: a peer's bad data raises :class:`DeckError` (``.position`` when the proof can tell;
``.seat`` is for the caller, who knows the sender); a caller's programming error (wrong
lengths of its own arguments) raises :class:`ValueError`.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from .dleq import prove_rekey, verify_rekey
from .group import (
    GROUP_ORDER,
    IDENTITY,
    POINT_BYTES,
    SCALAR_BYTES,
    base_mul,
    from_hash,
    is_point,
    is_scalar,
    mul,
    scalar_invert,
    scalar_mul,
    scalar_reduce,
)
from .proofs import ProofError, is_point_list
from .shuffle_proof import prove_shuffle, verify_shuffle

__all__ = [
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
    "deck_context",
    "identify",
    "pass1",
    "pass2",
    "unmask",
    "verify_pass1",
    "verify_pass2",
]

SEED_BYTES = 32
GAME_ID_BYTES = 32
# A card is one byte in card_point's hash and a position two bytes in a derivation.
MAX_DECK_SIZE = 256
MAX_SEATS = 256

# Domain tags: every hash in this module starts with its own tag, and no tag is a prefix of
# another; the rest of each hash input has a fixed layout, so no two derivations can collide.
_TAG_CARD = b"moska-p2p/card"
_TAG_PASS1_SCALAR = b"moska-p2p/pass1-scalar"
_TAG_POSITION_KEY = b"moska-p2p/position-key"
_TAG_PERMUTATION = b"moska-p2p/permutation"
_TAG_NONCE_SEED = b"moska-p2p/v2/nonce-seed"
_TAG_CONTEXT = b"moska-p2p/v2/deck\x00"


class DeckError(ValueError):
    """A peer's deck data is wrong: an invalid or repeated point, a pass whose proof does not
    verify, a key that does not match its key point, a point that is no card.

    ``seat`` names the culprit when it is known (these functions do not know who sent their
    input, so the caller names the sender). ``position`` is the deck position concerned, when
    there is one (a re-keying proof names the first failing position; a shuffle argument
    fails as a whole).
    """

    def __init__(self, message: str, *, seat: int | None = None, position: int | None = None):
        super().__init__(message)
        self.seat = seat
        self.position = position


def _short(point: object) -> str:
    return point[:6].hex() + "…" if isinstance(point, bytes) else repr(point)[:20]


# --- Encodings


def _check_game_id(game_id: bytes) -> None:
    if not isinstance(game_id, bytes) or len(game_id) != GAME_ID_BYTES:
        raise ValueError(f"game_id must be {GAME_ID_BYTES} bytes")


def _seat_byte(seat: int) -> bytes:
    if not 0 <= seat < MAX_SEATS:
        raise ValueError(f"seat {seat} out of range 0..{MAX_SEATS - 1}")
    return bytes([seat])


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
    return from_hash(hashlib.sha512(_TAG_CARD + game_id + bytes([card])).digest())


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


def deck_context(game_id: bytes, seat: int, stage: str) -> bytes:
    """The context a pass's proof is bound to: ``"moska-p2p/v2/deck" || 0x00 || game_id (32
    bytes) || seat (1 byte) || stage (UTF-8, e.g. "shuffle1", "shuffle2")``.

    Binding the game, the seat and the stage means a proof cannot be replayed in another game,
    passed off as another seat's, or moved between the passes. The stage comes last, so the
    fixed-length fields before it make the encoding unambiguous.
    """
    _check_game_id(game_id)
    if not isinstance(stage, str) or not stage:
        raise ValueError("stage must be a non-empty string")
    return _TAG_CONTEXT + game_id + _seat_byte(seat) + stage.encode()


# --- Secrets


def _derive_scalar(tag: bytes, prefix: bytes, index: int) -> bytes:
    """A non-zero scalar from ``SHA-512(tag | prefix | index | counter)``, reduced mod L.

    The counter is there only for the (2^-252) case of a zero scalar, so the derivation stays a
    pure function of the seed.
    """
    for counter in range(256):
        digest = hashlib.sha512(tag + prefix + index.to_bytes(2, "big") + bytes([counter]))
        scalar = scalar_reduce(digest.digest())
        if is_scalar(scalar):
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
    """One peer's secrets for one shuffle, all derived from its secret seed (:meth:`from_seed`).

    Deriving everything from one seed lets a restarted peer rebuild exactly the messages and
    proofs it sent (proof nonces are derived too). In v2 the seed is never revealed. Secrets are
    left out of ``repr`` so they do not end up in logs; the public points are computed on first
    use (:attr:`public_scalar`, :attr:`key_points`).
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
    """Pass 1 outputs ``a * in[permutation[i]]`` at position ``i``."""

    @classmethod
    def from_seed(cls, seed: bytes, game_id: bytes, seat: int, size: int) -> DeckSecrets:
        """Derive the secrets of ``seat`` for a deck of ``size`` cards.

        With ``prefix = seed | game_id | seat (1 byte)``:
        ``a = reduce(SHA-512("moska-p2p/pass1-scalar" | prefix | 0 (2 bytes) | counter))``,
        ``k[j] = reduce(SHA-512("moska-p2p/position-key" | prefix | j (2 bytes) | counter))``
        (counter: one byte, the first that gives a non-zero scalar, in practice 0), and the
        permutation is Fisher-Yates driven by ``SHA-512("moska-p2p/permutation" | prefix |
        counter (8 bytes))`` (see :func:`_derive_permutation`). The proof-nonce seed is
        ``SHA-512("moska-p2p/v2/nonce-seed" | prefix)`` (:attr:`nonce_seed`).
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
            scalar_inverse=scalar_invert(scalar),
            keys=keys,
            permutation=_derive_permutation(prefix, size),
        )

    @functools.cached_property
    def public_scalar(self) -> bytes:
        """``A = a*B``, sent with pass 1: what both proofs are stated against."""
        return base_mul(self.scalar)

    @functools.cached_property
    def key_points(self) -> tuple[bytes, ...]:
        """``K[j] = k[j]*B``, sent with pass 2: a released key is checked against these."""
        return tuple(base_mul(key) for key in self.keys)

    @functools.cached_property
    def nonce_seed(self) -> bytes:
        """The secret the proofs' nonces derive from (64 bytes, from the seed)."""
        prefix = self.seed + self.game_id + _seat_byte(self.seat)
        return hashlib.sha512(_TAG_NONCE_SEED + prefix).digest()


# --- The two passes


def check_points(points: Sequence[bytes], size: int) -> None:
    """Refuse a list that is not ``size`` valid, non-identity, pairwise distinct points.

    Run on every pass input and output: an invalid encoding or the identity would break the
    masking (the identity stays the identity under every key), and a repeated point means a
    duplicated card. These are the cheap checks; the proofs catch everything else (a card
    replaced by another valid point, a wrong mask).
    """
    if not is_point_list(points) or len(points) != size:
        count = len(points) if is_point_list(points) else "no list of"
        raise DeckError(f"expected {size} points, got {count}")
    seen: dict[bytes, int] = {}
    for i, point in enumerate(points):
        if not isinstance(point, bytes) or len(point) != POINT_BYTES:
            raise DeckError(f"position {i}: not {POINT_BYTES} bytes", position=i)
        if point == IDENTITY:
            raise DeckError(f"position {i}: the identity point", position=i)
        if not is_point(point):
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


def pass1(
    secrets: DeckSecrets, context: bytes, points: Sequence[bytes]
) -> tuple[list[bytes], bytes]:
    """Pass 1 of one peer: check the input, output ``out[i] = a * points[perm[i]]``, and prove
    it with a shuffle argument under ``context`` (:func:`deck_context`).

    The permutation hides where each card went; the scalar hides which point is which card, so
    the next peer cannot follow the cards through this peer's shuffle. Returns the output and
    the proof; the message also carries :attr:`DeckSecrets.public_scalar`.
    """
    check_points(points, secrets.size)
    a = secrets.scalar
    outputs = [mul(a, points[source]) for source in secrets.permutation]
    proof = prove_shuffle(context, points, outputs, a, secrets.permutation, secrets.nonce_seed)
    return outputs, proof


def verify_pass1(
    context: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    public_scalar: bytes,
    proof: bytes,
) -> None:
    """Check a peer's pass 1: its output is ``len(inputs)`` distinct valid points and its
    shuffle argument proves it a permutation of ``inputs`` under the scalar of
    ``public_scalar``. Raises :class:`DeckError` (``.position`` for a bad output point)."""
    check_points(outputs, len(inputs))
    try:
        verify_shuffle(context, inputs, outputs, public_scalar, proof)
    except ProofError as error:
        raise DeckError(f"pass 1: {error}", position=error.position) from error


def pass2(
    secrets: DeckSecrets, context: bytes, points: Sequence[bytes]
) -> tuple[list[bytes], list[bytes], bytes]:
    """Pass 2 of one peer: check the input, output ``out[j] = (a^-1 * k[j]) * points[j]``,
    and prove every position re-keyed under ``context`` (:func:`deck_context`).

    Swapping the one pass-1 scalar for a key per position is what lets a single card be shown
    to someone (release the keys of that position only) without weakening the others. The two
    scalars are combined first, so it costs one multiplication per point. Returns the output,
    the key points ``K[j] = k[j]*B`` and the re-keying proof.
    """
    check_points(points, secrets.size)
    inverse = secrets.scalar_inverse
    witnesses = [scalar_mul(inverse, key) for key in secrets.keys]
    outputs = [mul(x, point) for x, point in zip(witnesses, points, strict=True)]
    key_points = list(secrets.key_points)
    proof = prove_rekey(
        context,
        points,
        outputs,
        secrets.public_scalar,
        key_points,
        witnesses,
        secrets.nonce_seed,
        scalar=secrets.scalar,
    )
    return outputs, key_points, proof


def verify_pass2(
    context: bytes,
    inputs: Sequence[bytes],
    outputs: Sequence[bytes],
    public_scalar: bytes,
    key_points: Sequence[bytes],
    proof: bytes,
) -> None:
    """Check a peer's pass 2 against the ``public_scalar`` of its pass 1: its output is
    distinct valid points and every position is re-keyed from ``A`` to ``key_points[j]``.
    Raises :class:`DeckError` with the first failing ``.position``."""
    check_points(outputs, len(inputs))
    try:
        verify_rekey(context, inputs, outputs, public_scalar, key_points, proof)
    except ProofError as error:
        raise DeckError(f"pass 2: {error}", position=error.position) from error


# --- Reveal


def check_key(key: bytes, key_point: bytes) -> bool:
    """Whether a released ``key`` is a valid non-zero scalar with ``key*B == key_point``, the
    key point its seat sent (and proved) with pass 2. A key that fails must never be used."""
    return is_scalar(key) and isinstance(key_point, bytes) and base_mul(key) == key_point


def unmask(point: bytes, keys: Sequence[bytes]) -> bytes:
    """Remove every given position key from ``point``: ``(prod keys)^-1 * point``.

    The keys are multiplied first and inverted once, so this is one inversion and one point
    multiplication whatever the number of peers. Check each released key with :func:`check_key`
    before passing it here; with a key missing the result is some unrelated point, not a card.
    """
    if not is_point(point):
        raise DeckError(f"{_short(point)} is not a valid point to unmask")
    for i, key in enumerate(keys):
        if not is_scalar(key):
            raise DeckError(f"key {i} is not a valid non-zero scalar")
    if not keys:
        return point
    product = keys[0]
    for key in keys[1:]:
        product = scalar_mul(product, key)
    return mul(scalar_invert(product), point)


def identify(point: bytes, table: dict[bytes, int]) -> int:
    """The card whose point this is (from :func:`card_table`); a point that is no card means a
    peer cheated (a wrong key): the game must stop."""
    card = table.get(point)
    if card is None:
        raise DeckError(f"{_short(point)} is no card")
    return card
