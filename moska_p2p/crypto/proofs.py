"""What the deck's zero-knowledge proofs share: their error, their nonces, their byte layout.

The proofs themselves are in :mod:`.dleq` (the pass-2 re-keying proof, Chaum-Pedersen) and
:mod:`.shuffle_proof` (the pass-1 shuffle argument, Terelius-Wikström). Both are
non-interactive through :class:`~.fiat_shamir.Transcript`. The shuffle argument is sent in the
compact form (challenge and responses; the verifier recomputes every commitment), the
re-keying proof in the batchable form (commitments and responses; the verifier recomputes the
challenges), so that its equations can be checked as one (PROTOCOL.md §11.5).

**Nonces.** A sigma protocol leaks its witness if a nonce is ever reused with two challenges,
and a peer may have to rebuild a message after a restart. So nonces are not random but derived
(as in RFC 6979 / deterministic signatures) from a secret ``nonce_seed``, the proof kind, the
caller's context, a digest of the statement and a digest of the witness::

    key   = SHA-512(lp("moska-p2p/v2/proof-nonce") || lp(kind) || lp(nonce_seed)
                    || lp(SHA-512(lp(s_1) || ... || lp(s_m))) || lp(SHA-512(lp(w_1) || ...)))
    nonce = reduce(SHA-512(lp(key) || lp(label) || lp(be32(index))))

(``lp(x) = be32(len(x)) || x``; ``s_i`` the statement's parts, the context first; ``w_i`` the
witness's.) The same statement and witness always give the same proof, byte for byte; a
different statement gives unrelated nonces, so no nonce ever meets two challenges. The nonces
are as secret as ``nonce_seed``: a caller must derive it from secret material only.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

from .group import POINT_BYTES, hash_to_scalar, is_point, length_prefixed

__all__ = [
    "ITEM_BYTES",
    "MIN_NONCE_SEED_BYTES",
    "Nonces",
    "ProofError",
    "be32",
    "is_point_list",
    "public_point",
    "split_items",
    "statement_points",
]

ITEM_BYTES = POINT_BYTES  # a point or a scalar: the unit of every proof's layout
MIN_NONCE_SEED_BYTES = 32
_TAG_NONCE = b"moska-p2p/v2/proof-nonce"


class ProofError(ValueError):
    """A proof does not verify, or its statement or encoding is malformed.

    ``position`` is the deck position at fault when the proof can tell: the first failing
    position of a re-keying proof, or an input or output point that is not a valid point.
    A shuffle argument that fails as a whole cannot say which card was wrong: ``None``.
    """

    def __init__(self, message: str, *, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


def be32(n: int) -> bytes:
    """A 4-byte big-endian unsigned integer (positions and counts in transcripts)."""
    return struct.pack(">I", n)


class Nonces:
    """The deterministic secret nonces of one proof (see the module docstring)."""

    def __init__(
        self,
        kind: bytes,
        nonce_seed: bytes,
        statement: Sequence[bytes],
        witness: Sequence[bytes],
    ) -> None:
        if not isinstance(nonce_seed, bytes) or len(nonce_seed) < MIN_NONCE_SEED_BYTES:
            raise ValueError(f"nonce_seed must be at least {MIN_NONCE_SEED_BYTES} bytes")
        statement_digest = hashlib.sha512(length_prefixed(*statement)).digest()
        witness_digest = hashlib.sha512(length_prefixed(*witness)).digest()
        self._key = hashlib.sha512(
            length_prefixed(_TAG_NONCE, kind, nonce_seed, statement_digest, witness_digest)
        ).digest()

    def scalar(self, label: bytes, index: int = 0) -> bytes:
        """The nonce named ``label`` and ``index`` (zero has probability 2^-252 and is as good
        a nonce as any other)."""
        return hash_to_scalar(self._key, label, be32(index))


def is_point_list(points: object) -> bool:
    """A sequence (not a byte or text string) of anything: the shape of a list of points."""
    return isinstance(points, Sequence) and not isinstance(points, str | bytes | bytearray)


def split_items(proof: object, count: int) -> list[bytes]:
    """A proof's ``count`` 32-byte items, refusing anything but bytes of exactly that size."""
    if not isinstance(proof, bytes):
        raise ProofError("the proof is not bytes")
    if len(proof) != count * ITEM_BYTES:
        raise ProofError(f"the proof is {len(proof)} bytes, not {count * ITEM_BYTES}")
    return [proof[i : i + ITEM_BYTES] for i in range(0, len(proof), ITEM_BYTES)]


def statement_points(points: object, what: str) -> list[bytes]:
    """A statement's list of points, each a valid non-identity point; a bad one raises
    :class:`ProofError` naming its position."""
    if not is_point_list(points):
        raise ProofError(f"the {what} are not a list")
    assert isinstance(points, Sequence)
    for i, point in enumerate(points):
        if not is_point(point):
            raise ProofError(f"{what} {i} is not a valid point", position=i)
    return list(points)


def public_point(point: object, what: str) -> bytes:
    """A single public point of a statement (a seat's ``A``): valid and not the identity."""
    if not is_point(point):
        raise ProofError(f"the {what} is not a valid point")
    assert isinstance(point, bytes)
    return point
