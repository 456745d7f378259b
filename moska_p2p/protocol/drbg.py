"""A deterministic random byte source for one peer's game: every secret a peer draws comes
from one 32-byte per-game secret, so a peer that keeps that secret can rebuild them all when it
resumes (PROTOCOL.md, resuming), and the test vectors replay byte for byte."""

from __future__ import annotations

import hashlib
from collections.abc import Callable


def drbg(secret: bytes) -> Callable[[int], bytes]:
    """A deterministic random byte source from a 32-byte secret (SHA-256 in counter mode):
    a peer that keeps its per-game secret can rebuild every secret it drew (resume)."""
    if len(secret) != 32:
        raise ValueError("the per-game secret must be 32 bytes")
    counter = 0
    buffer = b""

    def draw(size: int) -> bytes:
        nonlocal counter, buffer
        while len(buffer) < size:
            block = counter.to_bytes(8, "big")
            buffer += hashlib.sha256(b"moska-p2p/drbg" + secret + block).digest()
            counter += 1
        out, buffer = buffer[:size], buffer[size:]
        return out

    return draw
