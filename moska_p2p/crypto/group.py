"""Typed, checked ristretto255 arithmetic over ``rbcl`` (the libsodium it bundles).

Every proof and the deck are written against this module alone, so that the few traps of the
underlying library are dealt with once, here:

- ``rbcl`` is untyped; these functions take and return ``bytes`` (32-byte points and scalars).
- libsodium 1.0.18 ignores the top bit of a point's last byte when decoding, so two byte
  strings would name one point. Byte equality must be point equality (points are hashed into
  transcripts and compared as bytes), so every function here refuses that bit.
- ``crypto_scalarmult_ristretto255`` fails (rbcl raises ``RuntimeError``) when the *result* is
  the identity, which a zero scalar or the identity point gives; :func:`mul` returns
  :data:`IDENTITY` then, and raises :class:`GroupError` only for an invalid point.
- rbcl's ``crypto_core_ristretto255_add``/``_sub`` discard libsodium's return code: an invalid
  operand silently gives 32 zero bytes, the identity. :func:`add` and :func:`sub` call the
  library through ``rbcl._sodium`` (which rbcl exports for direct use) to read that code.
- Scalars are canonical: 32 little-endian bytes of an integer below :data:`GROUP_ORDER`.
  libsodium reduces anything it is given; refusing non-canonical input here means a proof has
  one encoding only.

Measured costs on the development machine, unloaded (``scripts/bench_deck.py`` prints them):
a variable-base multiplication about 77 µs, a base-point multiplication about 28 µs, an
addition about 20 µs (a quarter of a multiplication: each call decodes both points and encodes
the sum, three square-root-sized exponentiations), a validity check 8 µs, a hash to the group
22 µs, scalar arithmetic about 2 µs. rbcl checks only types and lengths in Python (under 1 µs a
call); the validation that costs is libsodium decoding every encoded point it is given, which
no API on encodings can skip. libsodium has no multi-scalar and no variable-time
multiplication, so a proof costs its count of multiplications and additions, one at a time.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import os
import struct
import sys
from collections.abc import Callable, Iterable

import rbcl  # type: ignore[import-untyped]  # rbcl ships no type information.

# rbcl writes its bundled libsodium to a new temporary file on every import and never deletes
# it (2.8 MB each time). The library is loaded by now; on POSIX the mapping outlives the file.
with contextlib.suppress(OSError, AttributeError, TypeError):
    if os.name == "posix":
        os.unlink(sys.modules["rbcl._sodium"].lib_path)

__all__ = [
    "BASE",
    "GROUP_ORDER",
    "IDENTITY",
    "POINT_BYTES",
    "SCALAR_BYTES",
    "GroupError",
    "add",
    "base_mul",
    "from_hash",
    "hash_to_point",
    "hash_to_scalar",
    "int_of_scalar",
    "is_point",
    "is_point_or_identity",
    "is_scalar",
    "is_scalar_or_zero",
    "length_prefixed",
    "mul",
    "scalar_add",
    "scalar_invert",
    "scalar_mul",
    "scalar_neg",
    "scalar_of_int",
    "scalar_reduce",
    "scalar_sub",
    "sub",
    "sum_points",
]

POINT_BYTES = 32
SCALAR_BYTES = 32
# The order L of the ristretto255 group: scalars are integers mod L, in 32 little-endian bytes.
GROUP_ORDER = 2**252 + 27742317777372353535851937790883648493
IDENTITY = bytes(POINT_BYTES)
"""The encoding of the neutral element (32 zero bytes)."""

_SODIUM = rbcl._sodium


class GroupError(ValueError):
    """An argument is not a canonical point or scalar (or a scalar that must be non-zero is
    zero). Proof verifiers check their inputs first and turn this into their own error."""


# --- Validity


def is_point_or_identity(point: object) -> bool:
    """A canonical encoding of a ristretto255 point, the identity included."""
    if not isinstance(point, bytes) or len(point) != POINT_BYTES or point[31] & 0x80:
        return False
    valid: bool = rbcl.crypto_core_ristretto255_is_valid_point(point)
    return valid


def is_point(point: object) -> bool:
    """A canonical encoding of a ristretto255 point other than the identity.

    What anything received must be: every scalar maps the identity to itself, so an identity
    card or commitment would carry no information (and libsodium's validity check accepts it,
    so it is refused here by its bytes). The top bit of byte 31 is refused because libsodium
    1.0.18 ignores it when decoding (two encodings, one point).
    """
    return point != IDENTITY and is_point_or_identity(point)


def is_scalar_or_zero(scalar: object) -> bool:
    """A canonical scalar: 32 little-endian bytes of an integer in ``[0, L)``."""
    if not isinstance(scalar, bytes) or len(scalar) != SCALAR_BYTES:
        return False
    # L = 2^252 + δ with δ < 2^125: a top byte below 0x10 is always canonical, above never.
    # The shortcut matters only for speed (every multiplication checks its scalar).
    top = scalar[31]
    return top < 0x10 or (top == 0x10 and int.from_bytes(scalar, "little") < GROUP_ORDER)


def is_scalar(scalar: object) -> bool:
    """A canonical non-zero scalar: one with an inverse, and one encoding only."""
    return is_scalar_or_zero(scalar) and scalar != bytes(SCALAR_BYTES)


def _require_scalar(scalar: bytes) -> None:
    if not is_scalar_or_zero(scalar):
        raise GroupError("not a canonical scalar")


def _require_encoding(point: bytes) -> None:
    """The checks libsodium does not do itself (it decodes, and so validates, on every call)."""
    if not isinstance(point, bytes) or len(point) != POINT_BYTES or point[31] & 0x80:
        raise GroupError("not a canonical point encoding")


# --- Points


def mul(scalar: bytes, point: bytes) -> bytes:
    """``scalar * point`` for a canonical scalar (zero allowed) and point (identity allowed).

    rbcl's docstring says the scalar is "clamped": it is not, libsodium's ristretto255 variant
    only clears bit 255, which a canonical scalar never has. libsodium refuses an identity
    result; an invalid point is told apart from that by a validity check on the failure path
    only, so the common case costs one call.
    """
    _require_scalar(scalar)
    _require_encoding(point)
    try:
        product: bytes = rbcl.crypto_scalarmult_ristretto255(scalar, point)
    except RuntimeError:
        if rbcl.crypto_core_ristretto255_is_valid_point(point):
            return IDENTITY
        raise GroupError("not a valid ristretto255 point") from None
    return product


def base_mul(scalar: bytes) -> bytes:
    """``scalar * B`` for the standard base point ``B``: a fixed-base multiplication, about a
    third of the cost of :func:`mul`, so every product whose base is ``B`` should use it."""
    _require_scalar(scalar)
    product: bytes = rbcl.crypto_scalarmult_ristretto255_base_allow_scalar_zero(scalar)
    return product


def _binary(function: Callable[..., int], p: bytes, q: bytes, what: str) -> bytes:
    _require_encoding(p)
    _require_encoding(q)
    out = ctypes.create_string_buffer(POINT_BYTES)
    if function(out, p, q) != 0:  # libsodium decodes both: -1 for an invalid point
        raise GroupError(f"{what}: not a valid ristretto255 point")
    return out.raw


def add(p: bytes, q: bytes) -> bytes:
    """``p + q``; either may be the identity, and so may the result."""
    return _binary(_SODIUM.crypto_core_ristretto255_add, p, q, "add")


def sub(p: bytes, q: bytes) -> bytes:
    """``p - q``; either may be the identity, and so may the result."""
    return _binary(_SODIUM.crypto_core_ristretto255_sub, p, q, "sub")


def sum_points(points: Iterable[bytes]) -> bytes:
    """The sum of ``points`` (the identity for none): one :func:`add` per point after the
    first."""
    items = list(points)
    if not items:
        return IDENTITY
    if len(items) == 1:
        if not is_point_or_identity(items[0]):
            raise GroupError("sum_points: not a valid ristretto255 point")
        return items[0]
    total = items[0]
    for point in items[1:]:
        total = add(total, point)
    return total


# --- Scalars (libsodium's constant-time arithmetic mod L; the proofs' secrets pass here)


def _scalar_op(function: Callable[[bytes, bytes], bytes], x: bytes, y: bytes) -> bytes:
    _require_scalar(x)
    _require_scalar(y)
    return function(x, y)


def scalar_add(x: bytes, y: bytes) -> bytes:
    """``x + y mod L``."""
    return _scalar_op(rbcl.crypto_core_ristretto255_scalar_add, x, y)


def scalar_sub(x: bytes, y: bytes) -> bytes:
    """``x - y mod L``."""
    return _scalar_op(rbcl.crypto_core_ristretto255_scalar_sub, x, y)


def scalar_mul(x: bytes, y: bytes) -> bytes:
    """``x * y mod L``."""
    return _scalar_op(rbcl.crypto_core_ristretto255_scalar_mul, x, y)


def scalar_neg(x: bytes) -> bytes:
    """``-x mod L``."""
    _require_scalar(x)
    result: bytes = rbcl.crypto_core_ristretto255_scalar_negate(x)
    return result


def scalar_invert(x: bytes) -> bytes:
    """``x^-1 mod L``; zero has no inverse and raises :class:`GroupError`."""
    if not is_scalar(x):
        raise GroupError("not a canonical non-zero scalar")
    result: bytes = rbcl.crypto_core_ristretto255_scalar_invert(x)
    return result


def scalar_reduce(wide: bytes) -> bytes:
    """A 64-byte string (a hash) as a little-endian integer mod L: uniform over the scalars up
    to a 2^-259 bias. Zero is possible (2^-252)."""
    if not isinstance(wide, bytes) or len(wide) != 64:
        raise GroupError("scalar_reduce needs 64 bytes")
    scalar: bytes = rbcl.crypto_core_ristretto255_scalar_reduce(wide)
    return scalar


def scalar_of_int(n: int) -> bytes:
    """The scalar ``n mod L`` (negative ``n`` included)."""
    return (n % GROUP_ORDER).to_bytes(SCALAR_BYTES, "little")


def int_of_scalar(scalar: bytes) -> int:
    """The integer a canonical scalar encodes."""
    _require_scalar(scalar)
    return int.from_bytes(scalar, "little")


# --- Hashing into the group


def length_prefixed(*parts: bytes) -> bytes:
    """``be32(len(p)) || p`` for every part, concatenated: an injective encoding of a sequence
    of byte strings (PROTOCOL.md's ``H(a, b, ...)`` convention)."""
    return b"".join(struct.pack(">I", len(part)) + part for part in parts)


def from_hash(digest: bytes) -> bytes:
    """ristretto255's map of a 64-byte uniform string to the group (for card points, whose
    hash input predates :func:`hash_to_point`'s length-prefixed layout)."""
    if not isinstance(digest, bytes) or len(digest) != 64:
        raise GroupError("from_hash needs 64 bytes")
    point: bytes = rbcl.crypto_core_ristretto255_from_hash(digest)
    return point


def hash_to_point(*parts: bytes) -> bytes:
    """``from_hash(SHA-512(length_prefixed(parts)))``: a point nobody knows the logarithm of.

    ristretto255's from_hash (the double Elligator map) is uniform enough that the discrete
    log of the result to any other point is unknown; start ``parts`` with a domain tag.
    """
    return from_hash(hashlib.sha512(length_prefixed(*parts)).digest())


def hash_to_scalar(*parts: bytes) -> bytes:
    """``SHA-512(length_prefixed(parts))`` as a little-endian integer mod L (a 2^-259 bias).

    It may be zero (probability 2^-252): every function here accepts a zero scalar, so callers
    that need a non-zero one (a challenge) check it themselves.
    """
    return scalar_reduce(hashlib.sha512(length_prefixed(*parts)).digest())


BASE: bytes = base_mul(scalar_of_int(1))
"""The encoding of the standard base point ``B`` (``e2f2ae0a...2d76``)."""
