"""A player's long-lived identity: an Ed25519 key pair (DESIGN.md, "The protocol").

Every message is public and signed (DESIGN.md, "Mental poker"), so the signature is what ties a
message to a seat: it makes the transcript evidence, makes equivocation provable and lets a
disconnected peer come back as itself. The key therefore lives in a file that survives restarts
(``$XDG_CONFIG_HOME/moska-p2p/identity.pem`` by default), readable by its owner only: a key file
that group or others may read, or a key directory they may write, is refused.

Ed25519 because its signatures are deterministic (the same key and bytes always give the same 64
bytes, so test vectors are reproducible), small, fast to verify, and its public key is 32 raw bytes
that fit in a message as they are.

**Domain separation.** A signature never covers bare bytes: :meth:`Identity.sign` signs
:func:`signing_input`, ``b"moska-p2p/v2/" + kind + b"\\0" + data``, where ``kind`` is a short ASCII
tag naming what the bytes are (a game message's type, ``"net/<type>"`` for a network message,
``"beacon"`` for a LAN announcement, ``"net/link-auth"`` for a link's proof of key). A signature
made for one purpose therefore never verifies for another.

**Strict verification**, as libsodium's ``crypto_sign_verify_detached``: besides the Ed25519
equation (checked by OpenSSL, which also refuses ``S >= L``), :func:`verify` refuses a public key
or an ``R`` that is not canonically encoded (``y >= p``) or that has small order. OpenSSL accepts
those, and with the public key ``0100..00`` (the neutral point) the signature
``R = 0100..00, S = 0`` verifies for every message: a universal forgery.
:func:`is_acceptable_public_key` is the same check for a key arriving in a lobby or a roster.

>>> alice = Identity.from_seed(bytes(32))
>>> signature = alice.sign("hello", b"hi")
>>> verify(alice.public_bytes, "hello", b"hi", signature)
True
>>> verify(alice.public_bytes, "move", b"hi", signature)  # another kind
False
>>> verify(alice.public_bytes, "hello", b"ho", signature)  # other bytes
False
>>> alice.fingerprint
'139E-3940-E64B-5491-7220-88D9-A0D7-4162'
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import re
import stat
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from .. import dirs

__all__ = [
    "DOMAIN",
    "FINGERPRINT_BYTES",
    "MAX_KIND",
    "PUBLIC_KEY_SIZE",
    "SIGNATURE_SIZE",
    "SMALL_ORDER_ENCODINGS",
    "Identity",
    "IdentityError",
    "check_key_directory",
    "default_identity_path",
    "fingerprint_of",
    "is_acceptable_public_key",
    "is_valid_kind",
    "load_or_create",
    "parse_fingerprint",
    "signing_input",
    "verify",
]

PUBLIC_KEY_SIZE = 32
"""Length of a raw Ed25519 public key, as carried in messages."""

SIGNATURE_SIZE = 64
"""Length of an Ed25519 signature; the frame layer refuses any other length."""

DOMAIN = b"moska-p2p/v2/"
"""What every signed byte string starts with (see :func:`signing_input`)."""

MAX_KIND = 32
"""Longest ``kind`` tag of a signature."""

FINGERPRINT_BYTES = 16
"""Bytes of SHA-256 a fingerprint shows: 128 bits. Not 64: an attacker who makes both keys
finds two with one 64-bit fingerprint in about 2**32 tries (the birthday bound), an afternoon
on a laptop; 2**64 tries for 128 bits is out of reach."""

OLD_FINGERPRINT_BYTES = 8
"""The 64-bit fingerprints of older moskas, refused with a word on what to ask for instead."""

_KIND = re.compile(rf"[a-z0-9/_-]{{1,{MAX_KIND}}}")

_FILE_NAME = "identity.pem"

StrPath = str | os.PathLike[str]


class IdentityError(ValueError):
    """An identity file that exists but does not hold a usable Ed25519 private key, or one that
    others could read or replace (the message says how to fix its permissions)."""


# -- curve arithmetic, just enough to check an encoding -------------------------------------

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_D = -121665 * pow(121666, _P - 2, _P) % _P
_SQRT_M1 = pow(2, (_P - 1) // 4, _P)
_Y_MASK = (1 << 255) - 1

SMALL_ORDER_ENCODINGS: tuple[bytes, ...] = tuple(
    bytes.fromhex(h)
    for h in (
        # libsodium's ge25519_has_small_order blocklist, compared with the sign bit cleared:
        "0000000000000000000000000000000000000000000000000000000000000000",  # y = 0, order 4
        "0100000000000000000000000000000000000000000000000000000000000000",  # identity
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # y = -1, order 2
        "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # y = p (= 0)
        "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # y = p + 1 (= 1)
    )
)
"""Encodings of the points of order 1, 2, 4 and 8 (and the non-canonical ``y = p, p + 1``), as
libsodium lists them, with the sign bit clear; an encoding is small-order if it equals one of
these once its top bit is cleared."""

_SMALL_ORDER = frozenset(SMALL_ORDER_ENCODINGS)


def _is_canonical(encoding: bytes) -> bool:
    """Whether the y coordinate of a point encoding is below p (libsodium's
    ``ge25519_is_canonical``)."""
    return int.from_bytes(encoding, "little") & _Y_MASK < _P


def _has_small_order(encoding: bytes) -> bool:
    """libsodium's ``ge25519_has_small_order``: the encoding, sign bit cleared, is listed."""
    return encoding[:31] + bytes([encoding[31] & 0x7F]) in _SMALL_ORDER


def _decode_point(encoding: bytes) -> tuple[int, int] | None:
    """The affine point of a canonical encoding (RFC 8032, 5.1.3), or ``None``."""
    y = int.from_bytes(encoding, "little") & _Y_MASK
    sign = encoding[31] >> 7
    if y >= _P:
        return None
    u = (y * y - 1) % _P
    v = (_D * y * y + 1) % _P
    x = u * pow(v, 3, _P) * pow(u * pow(v, 7, _P), (_P - 5) // 8, _P) % _P
    check = v * x * x % _P
    if check == (-u) % _P:
        x = x * _SQRT_M1 % _P
    elif check != u:
        return None  # no square root: not on the curve
    if x == 0 and sign:
        return None
    if x & 1 != sign:
        x = _P - x
    return x, y


def _times_eight_is_identity(x: int, y: int) -> bool:
    """Whether ``[8](x, y)`` is the neutral point: three doublings in extended coordinates
    (dbl-2008-hwcd, a = -1)."""
    px, py, pz = x, y, 1
    for _ in range(3):
        a, b, c = px * px % _P, py * py % _P, 2 * pz * pz % _P
        h = (a + b) % _P
        e = (h - (px + py) * (px + py)) % _P
        g = (a - b) % _P
        f = (c + g) % _P
        px, py, pz = e * f % _P, g * h % _P, f * g % _P
    return px == 0 and py == pz


@functools.lru_cache(maxsize=1024)
def _acceptable_key(public_bytes: bytes) -> bool:
    if not _is_canonical(public_bytes) or _has_small_order(public_bytes):
        return False
    point = _decode_point(public_bytes)
    return point is not None and not _times_eight_is_identity(*point)


def is_acceptable_public_key(key: object) -> bool:
    """Whether ``key`` may stand for a player: 32 bytes encoding a point of the curve, canonical
    (``y < p``) and not of small order. Never raises (a key comes straight off the wire).

    A small-order key is refused because anyone can forge its signatures (see the module
    docstring); a non-canonical one because two encodings of one key would be two players.
    """
    return isinstance(key, bytes) and len(key) == PUBLIC_KEY_SIZE and _acceptable_key(bytes(key))


# -- signatures ------------------------------------------------------------------------------


def is_valid_kind(kind: object) -> bool:
    """Whether ``kind`` is a signature tag: 1 to 32 characters of ``[a-z0-9/_-]``."""
    return isinstance(kind, str) and _KIND.fullmatch(kind) is not None


def signing_input(kind: str, data: bytes) -> bytes:
    """The bytes a signature of ``kind`` over ``data`` covers:
    ``b"moska-p2p/v2/" + kind + b"\\0" + data``.

    :class:`ValueError` for a ``kind`` that is not 1 to 32 characters of ``[a-z0-9/_-]``: the
    tag ends at the NUL, so it cannot contain one, and a fixed alphabet keeps tags readable.

    >>> signing_input("move", b"\\x01")
    b'moska-p2p/v2/move\\x00\\x01'
    """
    if not is_valid_kind(kind):
        raise ValueError(f"a signature kind is 1 to {MAX_KIND} of [a-z0-9/_-], got {kind!r}")
    return b"".join((DOMAIN, kind.encode("ascii"), b"\0", data))


@functools.lru_cache(maxsize=256)
def _public_key(public_bytes: bytes) -> Ed25519PublicKey:
    # A game has at most six keys and verifies thousands of messages: parse each key once.
    return Ed25519PublicKey.from_public_bytes(public_bytes)


def verify(public_bytes: bytes, kind: str, data: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is ``public_bytes``' strict Ed25519 signature of ``kind`` over
    exactly ``data`` (see :func:`signing_input` and the module docstring).

    Never raises: a malformed key, kind or signature is just "not valid", because all four
    arguments may come straight off the wire and the caller's only question is whether to trust
    the message.
    """
    if (
        not isinstance(signature, bytes)
        or len(signature) != SIGNATURE_SIZE
        or not isinstance(data, bytes | bytearray | memoryview)
        or not is_valid_kind(kind)
        or not is_acceptable_public_key(public_bytes)
    ):
        return False
    r = signature[:32]
    if not _is_canonical(r) or _has_small_order(r):
        return False
    if int.from_bytes(signature[32:], "little") >= _L:
        return False  # OpenSSL refuses it too; said here so that it never depends on a version
    try:
        _public_key(public_bytes).verify(signature, signing_input(kind, bytes(data)))
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True


# -- fingerprints ----------------------------------------------------------------------------


def fingerprint_of(public_bytes: bytes) -> str:
    """A name for a public key that people can read aloud and compare, e.g.
    ``3F9A-11C2-7B04-E9D1-5A0C-88D9-A0D7-4162``.

    The first 16 bytes (128 bits) of SHA-256 of the raw key, upper-case hex in eight groups of
    four. Finding another key with the same fingerprint takes about 2**128 tries, and even two
    keys of one's own with a common fingerprint about 2**64: out of reach, so comparing
    fingerprints out of band (read aloud, ``moska join --expect``) is a real check. Every
    fingerprint a person reads or types is this one.
    """
    digest = hashlib.sha256(public_bytes).digest()[:FINGERPRINT_BYTES].hex().upper()
    return "-".join(digest[i : i + 4] for i in range(0, len(digest), 4))


def fingerprint_or_unknown(key: object) -> str:
    """The fingerprint of a key a stranger sent (any value off the wire), ``?`` when it is
    not a key's 32 bytes: for a message that names who answered."""
    return fingerprint_of(key) if isinstance(key, bytes) and len(key) == PUBLIC_KEY_SIZE else "?"


def parse_fingerprint(text: str) -> str:
    """A fingerprint as a person may type it (any case, dashes, spaces or colons, or none),
    in the canonical form of :func:`fingerprint_of`; :class:`ValueError` unless it has all
    32 hex digits (a shorter prefix would be a much weaker check), saying so plainly for the
    16 digits of an older moska's fingerprint.

    >>> parse_fingerprint("139e 3940:e64b5491 7220-88d9 a0d7 4162")
    '139E-3940-E64B-5491-7220-88D9-A0D7-4162'
    """
    digits = re.sub(r"[\s:\-]", "", text).upper()
    if re.fullmatch(rf"[0-9A-F]{{{2 * OLD_FINGERPRINT_BYTES}}}", digits):
        raise ValueError(
            f"{text!r} is a 64-bit fingerprint of an older moska, too short to tell keys apart"
            " safely: ask for the whole fingerprint that 'moska keygen' shows now (32 hex"
            " digits in eight groups), or for the key itself"
        )
    if not re.fullmatch(rf"[0-9A-F]{{{2 * FINGERPRINT_BYTES}}}", digits):
        raise ValueError(
            f"{text!r} is not a fingerprint: 32 hex digits in eight groups of four, e.g."
            " 3F9A-11C2-7B04-E9D1-5A0C-88D9-A0D7-4162"
        )
    return "-".join(digits[i : i + 4] for i in range(0, len(digits), 4))


# -- the key and its file --------------------------------------------------------------------


def default_identity_path() -> Path:
    """Where the identity lives unless told otherwise.

    Follows the XDG base directory specification: ``$XDG_CONFIG_HOME`` when it is set to an
    absolute path (the spec says a relative value must be ignored), else ``~/.config``.
    """
    return dirs.config_dir() / _FILE_NAME


def writable_by_others(path: StrPath) -> int | None:
    """The mode of ``path`` if group or others may write it (``None`` if not, if it does not
    exist, or off POSIX): whoever can write a key or trust file can make you trust their key."""
    if os.name != "posix":
        return None
    try:
        mode = stat.S_IMODE(Path(path).stat().st_mode)
    except FileNotFoundError:
        return None
    return mode if mode & 0o022 else None


def check_key_directory(directory: StrPath) -> None:
    """:class:`IdentityError` if ``directory`` (that holds or will hold a key) may be written by
    group or others: they could replace the key file with theirs. Nothing on Windows."""
    folder = Path(directory)
    mode = writable_by_others(folder)
    if mode is not None:
        raise IdentityError(
            f"the key directory {folder} is writable by others (mode {mode:04o}), who could"
            f" replace your key; make it yours alone with: chmod 700 {folder}"
        )


def _check_key_file(path: Path, fd: int) -> None:
    if os.name != "posix":
        return
    mode = stat.S_IMODE(os.fstat(fd).st_mode)
    if mode & 0o077:
        raise IdentityError(
            f"the key file {path} is accessible by others (mode {mode:04o}); a private key must"
            f" be readable by you alone: chmod 600 {path}"
        )


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
        """This identity's readable name; see :func:`fingerprint_of`."""
        return fingerprint_of(self._public_bytes)

    def sign(self, kind: str, data: bytes) -> bytes:
        """The 64-byte Ed25519 signature of ``kind`` over exactly ``data``, i.e. over
        :func:`signing_input` (deterministic); :class:`ValueError` for a bad ``kind``."""
        return self._key.sign(signing_input(kind, data))

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
        :class:`IdentityError` when the file is not an unencrypted Ed25519 private key in PEM,
        when group or others may access it (``chmod 600``), or when its directory is writable
        by them (``chmod 700``): the message names the file and the command that fixes it.
        """
        source = Path(path)
        try:
            fd = os.open(source, os.O_RDONLY | getattr(os, "O_BINARY", 0))
        except FileNotFoundError:
            raise FileNotFoundError(f"no identity file at {source}") from None
        try:
            _check_key_file(source, fd)
            with os.fdopen(fd, "rb") as handle:
                fd = -1
                data = handle.read()
        finally:
            if fd >= 0:
                os.close(fd)
        check_key_directory(source.parent)
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
    key other players know. A directory others may write is refused before a key is put there.
    """
    target = Path(path) if path is not None else default_identity_path()
    try:
        return Identity.load(target)
    except FileNotFoundError:
        pass
    check_key_directory(target.parent)
    identity = Identity.generate()
    try:
        identity.save(target)
    except FileExistsError:
        # Another process created it between our load and save: use theirs.
        return Identity.load(target)
    return identity
