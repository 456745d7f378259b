"""Identity keys: persistence with safe permissions, signatures, fingerprints."""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PrivateKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from moska_p2p.crypto.identity import (
    Identity,
    IdentityError,
    default_identity_path,
    fingerprint_of,
    load_or_create,
    verify,
)

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@posix_only
def test_save_load_round_trip_with_private_mode(tmp_path: Path) -> None:
    alice = Identity.generate()
    path = tmp_path / "deep" / "er" / "identity.pem"
    alice.save(path)
    assert _mode(path) == 0o600
    assert path.read_bytes().startswith(b"-----BEGIN PRIVATE KEY-----")
    loaded = Identity.load(path)
    assert loaded.public_bytes == alice.public_bytes
    assert verify(alice.public_bytes, b"data", loaded.sign(b"data"))


@posix_only
def test_mode_is_private_even_with_a_permissive_umask(tmp_path: Path) -> None:
    old = os.umask(0)
    try:
        Identity.generate().save(tmp_path / "id.pem")
    finally:
        os.umask(old)
    assert _mode(tmp_path / "id.pem") == 0o600


def test_save_refuses_to_overwrite_unless_asked(tmp_path: Path) -> None:
    path = tmp_path / "id.pem"
    first, second = Identity.generate(), Identity.generate()
    first.save(path)
    with pytest.raises(FileExistsError):
        second.save(path)
    assert Identity.load(path).public_bytes == first.public_bytes
    second.save(path, overwrite=True)
    assert Identity.load(path).public_bytes == second.public_bytes
    assert [p.name for p in tmp_path.iterdir()] == ["id.pem"]  # no temporary file left
    if sys.platform != "win32":
        assert _mode(path) == 0o600


def test_sign_and_verify() -> None:
    alice, bob = Identity.generate(), Identity.generate()
    data = b"\x82\xa3seq\x00\xa4type\xa5hello"
    signature = alice.sign(data)
    assert len(alice.public_bytes) == 32
    assert len(signature) == 64
    assert signature == alice.sign(data)  # Ed25519 is deterministic
    assert verify(alice.public_bytes, data, signature)
    assert not verify(bob.public_bytes, data, signature)  # someone else's key
    assert not verify(alice.public_bytes, data + b"\x00", signature)  # different bytes
    assert not verify(alice.public_bytes, data, bob.sign(data))  # someone else's signature


def test_forged_signatures_fail() -> None:
    alice = Identity.generate()
    data = b"play 7H"
    signature = alice.sign(data)
    for index in (0, 31, 32, 63):
        forged = bytearray(signature)
        forged[index] ^= 0x01
        assert not verify(alice.public_bytes, data, bytes(forged))
    assert not verify(alice.public_bytes, data, bytes(64))


@pytest.mark.parametrize(
    ("public", "signature"),
    [
        (b"", bytes(64)),
        (bytes(31), bytes(64)),
        (bytes(33), bytes(64)),
        (b"\xff" * 32, bytes(64)),  # not a valid curve point
        (None, bytes(64)),
        ("not bytes", bytes(64)),
        (None, None),
    ],
)
def test_verify_never_raises_on_malformed_input(public: object, signature: object) -> None:
    assert verify(public, b"data", signature) is False  # type: ignore[arg-type]
    alice = Identity.generate()
    assert verify(alice.public_bytes, b"data", alice.sign(b"data")[:63]) is False
    assert verify(alice.public_bytes, b"data", alice.sign(b"data") + b"\x00") is False
    assert verify(alice.public_bytes, None, alice.sign(b"data")) is False  # type: ignore[arg-type]


def test_fingerprint_format() -> None:
    alice = Identity.from_seed(bytes(32))
    assert re.fullmatch(r"[0-9A-F]{4}-[0-9A-F]{4}", alice.fingerprint)
    assert alice.fingerprint == fingerprint_of(alice.public_bytes) == "139E-3940"
    head = hashlib.sha256(alice.public_bytes).digest()[:4].hex().upper()
    assert alice.fingerprint == f"{head[:4]}-{head[4:]}"
    assert alice.fingerprint in repr(alice)
    assert alice.public_bytes.hex() not in repr(alice)


def test_from_seed_is_deterministic_and_checked() -> None:
    assert Identity.from_seed(bytes(32)).public_bytes == Identity.from_seed(bytes(32)).public_bytes
    with pytest.raises(IdentityError, match="32 bytes"):
        Identity.from_seed(bytes(31))


def test_missing_file_error_names_the_path(tmp_path: Path) -> None:
    path = tmp_path / "nope.pem"
    with pytest.raises(FileNotFoundError, match=re.escape(f"no identity file at {path}")):
        Identity.load(path)


@pytest.mark.parametrize(
    "content",
    [
        b"",
        b"hello, world\n",
        b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        Ed448PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        ),
        Ed25519PrivateKey.generate().private_bytes(  # an encrypted key
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(b"secret"),
        ),
    ],
    ids=["empty", "text", "bad-base64-body", "ed448", "encrypted"],
)
def test_malformed_file_is_a_clear_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "identity.pem"
    path.write_bytes(content)
    with pytest.raises(IdentityError, match=re.escape(str(path))):
        Identity.load(path)


def test_load_or_create_uses_xdg_config_home(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    expected = tmp_path / "moska-p2p" / "identity.pem"
    assert default_identity_path() == expected
    assert not expected.exists()
    first = load_or_create()
    assert expected.is_file()
    if sys.platform != "win32":
        assert _mode(expected) == 0o600
    second = load_or_create()  # loaded, not regenerated
    assert second.public_bytes == first.public_bytes
    assert load_or_create(expected).public_bytes == first.public_bytes


def test_default_path_without_xdg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    assert default_identity_path() == Path.home() / ".config" / "moska-p2p" / "identity.pem"
    monkeypatch.setenv("XDG_CONFIG_HOME", "relative/dir")  # the XDG spec says: ignore it
    assert default_identity_path() == Path.home() / ".config" / "moska-p2p" / "identity.pem"


def test_load_or_create_explicit_path_and_malformed_file(tmp_path: Path) -> None:
    path = tmp_path / "me.pem"
    identity = load_or_create(path)
    assert Identity.load(path).public_bytes == identity.public_bytes
    path.write_bytes(b"garbage")
    with pytest.raises(IdentityError):
        load_or_create(path)  # never silently replaced
    assert path.read_bytes() == b"garbage"
