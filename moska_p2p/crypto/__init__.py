"""Cryptography for a table with no dealer (DESIGN.md, "Mental poker" and "The protocol").

- :mod:`.identity`: a player's long-lived Ed25519 key pair, which signs every message.
- :mod:`.deck`: the mental-poker deck (two-pass SRA on ristretto255), shuffled by all peers.

Nothing is re-exported here on purpose: importing :mod:`.deck` loads ``rbcl`` (which writes its
bundled libsodium to a temporary file and loads it), and a module that only needs signatures
should not pay for that. Import the submodule you need explicitly.
"""
