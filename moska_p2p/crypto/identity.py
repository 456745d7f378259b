"""A player's long-lived identity: an Ed25519 key pair (DESIGN.md, "The protocol").

Every message is public and signed (DESIGN.md, "Mental poker"), so the signature is what ties a
message to a seat: it makes the transcript evidence, makes equivocation provable and lets a
disconnected peer come back as itself. The key therefore lives in a file that survives restarts
(``$XDG_CONFIG_HOME/moska-p2p/identity.pem`` by default), readable by its owner only.

Ed25519 because its signatures are deterministic (the same key and bytes always give the same 64
bytes, so test vectors are reproducible), small, fast to verify, and its public key is 32 raw bytes
that fit in a message as they are.

>>> alice = Identity.from_seed(bytes(32))
>>> signature = alice.sign(b"hello")
>>> verify(alice.public_bytes, b"hello", signature), verify(alice.public_bytes, b"hullo", signature)
(True, False)
>>> alice.fingerprint
'139E-3940'
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

__all__ = [
    "PUBLIC_KEY_SIZE",
    "SIGNATURE_SIZE",
    "Identity",
    "IdentityError",
    "default_identity_path",
    "fingerprint_of",
    "load_or_create",
    "verify",
]

PUBLIC_KEY_SIZE = 32
"""Length of a raw Ed25519 public key, as carried in messages."""

SIGNATURE_SIZE = 64
"""Length of an Ed25519 signature; the frame layer refuses any other length."""

_APP_DIR = "moska-p2p"
_FILE_NAME = "identity.pem"

StrPath = str | os.PathLike[str]


class IdentityError(ValueError):
    """An identity file that exists but does not hold a usable Ed25519 private key."""


def default_identity_path() -> Path:
    """Where the identity lives unless told otherwise.

    Follows the XDG base directory specification: ``$XDG_CONFIG_HOME`` when it is set to an
    absolute path (the spec says a relative value must be ignored), else ``~/.config``.
    """
    config = os.environ.get("XDG_CONFIG_HOME", "")
    base = Path(config) if config and Path(config).is_absolute() else Path.home() / ".config"
    return base / _APP_DIR / _FILE_NAME


def fingerprint_of(public_bytes: bytes) -> str:
    """A short name for a public key that people can read aloud and compare, e.g. ``3F9A-11C2``.

    The first 4 bytes of SHA-256 of the raw key, upper-case hex in two groups. It is for telling
    the players at one table apart and spotting a surprise; 32 bits can be ground by a determined
    attacker, so it is no substitute for comparing the whole key when that matters.
    """
    digest = hashlib.sha256(public_bytes).digest()[:4].hex().upper()
    return f"{digest[:4]}-{digest[4:]}"


@functools.lru_cache(maxsize=256)
def _public_key(public_bytes: bytes) -> Ed25519PublicKey:
    # A game has at most six keys and verifies thousands of messages: parse each key once.
    return Ed25519PublicKey.from_public_bytes(public_bytes)


def verify(public_bytes: bytes, data: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is ``public_bytes``' Ed25519 signature over exactly ``data``.

    Never raises: a malformed key or a signature of the wrong length is just "not valid", because
    all three arguments come straight off the wire and the caller's only question is whether to
    trust the message.
    """
    if (
        not isinstance(public_bytes, bytes)
        or len(public_bytes) != PUBLIC_KEY_SIZE
        or not isinstance(signature, bytes)
        or len(signature) != SIGNATURE_SIZE
        or not isinstance(data, bytes | bytearray | memoryview)
    ):
        return False
    try:
        _public_key(public_bytes).verify(signature, data)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


class Identity:
    """An Ed25519 private key with the operations a peer needs: sign, publish, save, load.

    The repr shows only the fingerprint, so an identity can be logged without leaking the key.
    """

    __slots__ = ("_key", "_public_bytes")

    def __init__(self, key: Ed25519PrivateKey) -> None:
        """Wrap an existing key; most callers want :meth:`generate`, :meth:`load` or
        :func:`load_or_create`."""
        self._key = key
        self._public_bytes = key.public_key().public_bytes(
            serialization.Encoding.Raw, serialization.PublicFormat.Raw
        )

    @classmethod
    def generate(cls) -> Identity:
        """A fresh random identity (from the operating system's CSPRNG)."""
        return cls(Ed25519PrivateKey.generate())

    @classmethod
    def from_seed(cls, seed: bytes) -> Identity:
        """The identity whose raw 32-byte private key is ``seed``.

        For test vectors and reproducible tests only: a real identity comes from :meth:`generate`.
        """
        if len(seed) != 32:
            raise IdentityError(f"an Ed25519 seed is 32 bytes, got {len(seed)}")
        return cls(Ed25519PrivateKey.from_private_bytes(seed))

    @property
    def public_bytes(self) -> bytes:
        """The raw 32-byte public key, as other peers see it in messages."""
        return self._public_bytes

    @property
    def fingerprint(self) -> str:
        """This identity's short readable name; see :func:`fingerprint_of`."""
        return fingerprint_of(self._public_bytes)

    def sign(self, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature over exactly ``data`` (deterministic)."""
        return self._key.sign(data)

    def __repr__(self) -> str:
        return f"Identity(fingerprint={self.fingerprint!r})"

    def to_pem(self) -> bytes:
        """The private key as unencrypted PKCS#8 PEM, the format of the identity file.

        Unencrypted because the game starts unattended (bots, the arena) and the key only proves
        who played a card game; the file's 0600 mode is its protection.
        """
        return self._key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )

    @classmethod
    def from_pem(cls, data: bytes) -> Identity:
        """Parse PEM written by :meth:`to_pem`; :class:`IdentityError` if it is anything else."""
        try:
            key = serialization.load_pem_private_key(data, password=None)
        except TypeError as exc:  # the PEM is encrypted
            raise IdentityError(f"the identity key is password-protected: {exc}") from exc
        except (ValueError, UnsupportedAlgorithm) as exc:
            raise IdentityError(f"not a PEM private key: {exc}") from exc
        if not isinstance(key, Ed25519PrivateKey):
            raise IdentityError(f"the key is {type(key).__name__}, not an Ed25519 private key")
        return cls(key)

    def save(self, path: StrPath, *, overwrite: bool = False) -> None:
        """Write the key to ``path`` (PEM, PKCS#8, unencrypted), readable by its owner only.

        Parent directories are created (mode 0700). The file is created with mode 0600 from the
        start, so the key is never readable by others even for a moment. An existing file is an
        error unless ``overwrite``: replacing an identity loses the old one for good, and with it
        the ability to resume games played under it. With ``overwrite`` the new file replaces the
        old one atomically.
        """
        target = Path(path)
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        data = self.to_pem()
        if not overwrite:
            _write_private(target, data)
            return
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()
        _write_private(temporary, data)
        try:
            os.replace(temporary, target)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise

    @classmethod
    def load(cls, path: StrPath) -> Identity:
        """Read an identity saved by :meth:`save`.

        Raises :class:`FileNotFoundError` (naming the path) when there is no file, and
        :class:`IdentityError` when the file is not an unencrypted Ed25519 private key in PEM.
        """
        source = Path(path)
        try:
            data = source.read_bytes()
        except FileNotFoundError:
            raise FileNotFoundError(f"no identity file at {source}") from None
        try:
            return cls.from_pem(data)
        except IdentityError as exc:
            raise IdentityError(f"{source}: {exc}") from exc.__cause__


def _write_private(path: Path, data: bytes) -> None:
    """Create ``path`` exclusively with mode 0600 and write ``data``; no partial file is left."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            # The umask can only clear bits; fchmod makes the mode exact where it is supported.
            if hasattr(os, "fchmod"):
                os.fchmod(handle.fileno(), 0o600)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def load_or_create(path: StrPath | None = None) -> Identity:
    """This player's identity: loaded from ``path`` (default :func:`default_identity_path`), or
    generated and saved there on first use.

    A malformed existing file is an error, never silently replaced: it may be the only copy of a
    key other players know.
    """
    target = Path(path) if path is not None else default_identity_path()
    try:
        return Identity.load(target)
    except FileNotFoundError:
        pass
    identity = Identity.generate()
    try:
        identity.save(target)
    except FileExistsError:
        # Another process created it between our load and save: use theirs.
        return Identity.load(target)
    return identity
