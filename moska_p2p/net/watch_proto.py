"""The spectator's handshake and the id of its connection (issue 24 item 5, PROTOCOL.md §23).

A spectator dials the host like a joiner and reads its ``hi`` (a fresh nonce, the table's
settings); it answers ``net/watch`` ``{key, nonce, table, proof, name}`` and the host answers a
``net/welcome`` with its own proof. Both proofs are Ed25519 signatures of their own kind,
``net/watch-auth`` (never ``net/link-auth``), over

    table || spectator key || host key || spectator nonce || host nonce || role

with ``role`` ``watcher`` or ``host``: a proof made for a game link never passes for a
spectator's and the other way round, and each side's nonce is fresh, so a replayed ``hi`` or
``watch`` proves nothing on a new connection. The connection's id, which the host's later
messages on it (``net/game``, ``net/bye``) are signed over, is SHA-256 of
:data:`WATCH_ID_TAG` and the same parts without the role: it never equals a link id (another
tag), so nothing said to a spectator can be replayed into a game link.
"""

from __future__ import annotations

import hashlib

from ..crypto.identity import Identity, verify

WATCH_AUTH = "net/watch-auth"
"""Signature kind of a spectator's or a host's proof of key on a spectator's connection."""
WATCH_ID_TAG = b"moska-p2p/watch-id\n"
WATCHER, HOST = b"watcher", b"host"


def _parts(*parts: bytes) -> bytes:
    for part in parts:
        if not isinstance(part, bytes) or len(part) != 32:
            raise ValueError("a spectator's handshake is made of 32-byte parts")
    return b"".join(parts)


def watch_transcript(
    table: bytes,
    watcher: bytes,
    host: bytes,
    watcher_nonce: bytes,
    host_nonce: bytes,
    role: bytes,
) -> bytes:
    """What a proof on a spectator's connection signs (fixed-size parts, then the role)."""
    if role not in (WATCHER, HOST):
        raise ValueError(f"a spectator's handshake role is watcher or host, got {role!r}")
    return _parts(table, watcher, host, watcher_nonce, host_nonce) + role


def watch_proof(
    identity: Identity,
    table: bytes,
    watcher: bytes,
    host: bytes,
    watcher_nonce: bytes,
    host_nonce: bytes,
    role: bytes,
) -> bytes:
    """``identity``'s proof (kind ``net/watch-auth``) for the ``role`` side."""
    transcript = watch_transcript(table, watcher, host, watcher_nonce, host_nonce, role)
    return identity.sign(WATCH_AUTH, transcript)


def check_watch_proof(
    proof: bytes,
    table: bytes,
    watcher: bytes,
    host: bytes,
    watcher_nonce: bytes,
    host_nonce: bytes,
    role: bytes,
) -> bool:
    """Whether ``proof`` is the ``role`` side's proof for exactly this connection; never
    raises."""
    try:
        transcript = watch_transcript(table, watcher, host, watcher_nonce, host_nonce, role)
    except (ValueError, TypeError):
        return False
    signer = watcher if role == WATCHER else host
    return verify(signer, WATCH_AUTH, transcript, proof)


def watch_id(
    table: bytes, watcher: bytes, host: bytes, watcher_nonce: bytes, host_nonce: bytes
) -> bytes:
    """The id the host's messages on this connection are signed over (see the module
    docstring)."""
    return hashlib.sha256(
        WATCH_ID_TAG + _parts(table, watcher, host, watcher_nonce, host_nonce)
    ).digest()


__all__ = [
    "HOST",
    "WATCHER",
    "WATCH_AUTH",
    "WATCH_ID_TAG",
    "check_watch_proof",
    "watch_id",
    "watch_proof",
    "watch_transcript",
]
