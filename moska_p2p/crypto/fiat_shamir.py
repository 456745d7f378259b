"""A domain-separated Fiat-Shamir transcript: the verifier's challenges, computed by hashing.

A proof made non-interactive this way is only sound if every challenge depends on the whole
statement and on everything the prover committed to before it ("strong" Fiat-Shamir; leaving
out a public input is a known way to break real systems). So the proofs absorb the caller's
context and every public input first, and this module makes the encoding exact and
unambiguous: a second implementation must get the same challenges from this text alone.

The byte rule. The transcript is a byte string ``S``, kept as a running SHA-512 state; ``u32``
is a 4-byte big-endian length or counter, ``lp(x) = u32(len(x)) || x``.

- ``Transcript(domain)``: ``S = "moska-p2p/v2/fs" || 0x00 || lp(domain)``.
- ``append(label, data)``: ``S ||= 0x01 || lp(label) || lp(data)``.
- ``append_list(label, items)``: ``S ||= 0x02 || lp(label) || u32(len(items)) || lp(item_1)
  || ... || lp(item_n)``.
- ``challenge_scalar(label)``: for ``counter = 0, 1, ...``: ``D = SHA-512(S || 0x03 ||
  lp(label) || u32(counter))``, ``x = D`` read as a little-endian integer, mod ``L``; the first
  non-zero ``x`` is the challenge (in practice ``counter = 0``: zero has probability 2^-252).
  Then ``S ||= 0x03 || lp(label) || u32(counter) || D``, so later challenges depend on this
  one. The challenge is returned as 32 little-endian bytes.
- ``challenge_scalars(label, n)``: exactly ``n`` successive ``challenge_scalar(label)``.

Every operation starts with its own byte and every variable-length field is length-prefixed,
so distinct sequences of operations give distinct strings ``S``.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence

from .group import GROUP_ORDER, SCALAR_BYTES

__all__ = ["Transcript"]

_PREFIX = b"moska-p2p/v2/fs\x00"
_APPEND = b"\x01"
_APPEND_LIST = b"\x02"
_CHALLENGE = b"\x03"


def _u32(n: int) -> bytes:
    return struct.pack(">I", n)


def _lp(data: bytes) -> bytes:
    return _u32(len(data)) + data


class Transcript:
    """A running transcript; see the module docstring for its exact byte rule.

    ``domain`` names the proof system (one per proof kind), so that a transcript of one proof
    can never be read as another's.
    """

    def __init__(self, domain: bytes) -> None:
        self._state = hashlib.sha512(_PREFIX + _lp(domain))

    def append(self, label: bytes, data: bytes) -> None:
        """Absorb one labelled byte string (a point, a scalar, a context)."""
        self._state.update(_APPEND + _lp(label) + _lp(data))

    def append_list(self, label: bytes, items: Sequence[bytes]) -> None:
        """Absorb a labelled list: its length, then each item length-prefixed."""
        self._state.update(
            _APPEND_LIST + _lp(label) + _u32(len(items)) + b"".join(_lp(item) for item in items)
        )

    def challenge_scalar(self, label: bytes) -> bytes:
        """A non-zero scalar that depends on everything absorbed so far, then absorbed too."""
        for counter in range(2**32):
            suffix = _CHALLENGE + _lp(label) + _u32(counter)
            probe = self._state.copy()
            probe.update(suffix)
            digest = probe.digest()
            value = int.from_bytes(digest, "little") % GROUP_ORDER
            if value:
                self._state.update(suffix + digest)
                return value.to_bytes(SCALAR_BYTES, "little")
        raise AssertionError("no non-zero challenge")  # pragma: no cover - probability 0

    def challenge_scalars(self, label: bytes, n: int) -> list[bytes]:
        """``n`` challenges, each :meth:`challenge_scalar` of ``label`` in turn."""
        return [self.challenge_scalar(label) for _ in range(n)]
