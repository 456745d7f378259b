"""The spectator's handshake and the id of its connection (PROTOCOL.md §23).

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

from .wire import ProofOfKey

WATCH_AUTH = "net/watch-auth"
"""Signature kind of a spectator's or a host's proof of key on a spectator's connection."""
WATCH_ID_TAG = b"moska-p2p/watch-id\n"
WATCHER, HOST = b"watcher", b"host"

WATCH_HANDSHAKE = ProofOfKey(WATCH_AUTH, WATCH_ID_TAG, (WATCHER, HOST), "spectator's handshake")
"""The proof of key and the id of a game link's handshake (:class:`~.wire.ProofOfKey`) with
a spectator's own kind, tag and roles: the spectator is the dialer, the host the listener."""
watch_transcript = WATCH_HANDSHAKE.transcript
watch_proof = WATCH_HANDSHAKE.proof
check_watch_proof = WATCH_HANDSHAKE.check
watch_id = WATCH_HANDSHAKE.connection_id


__all__ = [
    "HOST",
    "WATCHER",
    "WATCH_AUTH",
    "WATCH_HANDSHAKE",
    "WATCH_ID_TAG",
    "check_watch_proof",
    "watch_id",
    "watch_proof",
    "watch_transcript",
]
