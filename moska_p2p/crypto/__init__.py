"""Cryptography for a table with no dealer (DESIGN.md, "Mental poker" and "The protocol").

- :mod:`.identity`: a player's long-lived Ed25519 key pair, which signs every message.
- :mod:`.deck`: the mental-poker deck (two-pass SRA on ristretto255), shuffled by all peers;
  :mod:`.shuffle_proof` and :mod:`.dleq` prove its passes, on :mod:`.group` (libsodium), with
  the optional accelerator :mod:`.decaf` and :mod:`.msm`.

``__all__`` is what the other packages use. Each name is imported from its module on first
use, not with the package: :mod:`.deck` loads ``rbcl`` (which writes its bundled libsodium to
a temporary file and loads it), and a module that only needs signatures should not pay for
that.
"""

from __future__ import annotations

from ..exports import LazyExports

__all__ = [
    "PUBLIC_KEY_SIZE",
    "SIGNATURE_SIZE",
    "DeckError",
    "DeckSecrets",
    "Identity",
    "IdentityError",
    "card_points",
    "check_key",
    "check_key_directory",
    "deck_context",
    "default_identity_path",
    "describe",
    "fingerprint_of",
    "fingerprint_or_unknown",
    "is_acceptable_public_key",
    "load_or_create",
    "parse_fingerprint",
    "pass1",
    "pass2",
    "unmask",
    "verify",
    "verify_pass1",
    "verify_pass2",
    "writable_by_others",
]

# fmt: off
__getattr__ = LazyExports(__name__, {  # module: its names, imported on first use
    ".identity": ("Identity", "IdentityError", "PUBLIC_KEY_SIZE", "SIGNATURE_SIZE",
                  "check_key_directory", "default_identity_path", "fingerprint_of",
                  "fingerprint_or_unknown",
                  "is_acceptable_public_key", "load_or_create", "parse_fingerprint", "verify",
                  "writable_by_others"),
    ".deck": ("DeckError", "DeckSecrets", "card_points", "check_key", "deck_context", "pass1",
              "pass2", "unmask", "verify_pass1", "verify_pass2"),
    ".msm": ("describe",),
})
# fmt: on
