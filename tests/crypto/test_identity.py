"""Identity keys: persistence with safe permissions, domain-separated strict signatures (issue
11 item 1: small-order and non-canonical keys and R refused, with the known small-order points
as vectors), fingerprints of 64 bits."""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import stat
import sys
from pathlib import Path

import pytest
import rbcl  # type: ignore[import-untyped]  # bundles libsodium: the reference verifier
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed448 import Ed448PrivateKey
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from hypothesis import given, settings
from hypothesis import strategies as st

from moska_p2p.crypto.identity import (
    SMALL_ORDER_ENCODINGS,
    Identity,
    IdentityError,
    default_identity_path,
    fingerprint_of,
    fingerprint_or_unknown,
    is_acceptable_public_key,
    load_or_create,
    parse_fingerprint,
    signing_input,
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
    assert verify(alice.public_bytes, "move", b"data", loaded.sign("move", b"data"))


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
    signature = alice.sign("hello", data)
    assert len(alice.public_bytes) == 32
    assert len(signature) == 64
    assert signature == alice.sign("hello", data)  # Ed25519 is deterministic
    assert verify(alice.public_bytes, "hello", data, signature)
    assert not verify(bob.public_bytes, "hello", data, signature)  # someone else's key
    assert not verify(alice.public_bytes, "hello", data + b"\x00", signature)  # other bytes
    assert not verify(alice.public_bytes, "hello", data, bob.sign("hello", data))  # not hers


def test_signatures_are_domain_separated_by_kind() -> None:
    alice = Identity.from_seed(bytes(32))
    data = b"\x81\xa6reason\xa3bye"
    assert signing_input("leave", data) == b"moska-p2p/v2/leave\x00" + data
    signature = alice.sign("leave", data)
    key = Ed25519PrivateKey.from_private_bytes(bytes(32))
    assert signature == key.sign(b"moska-p2p/v2/leave\x00" + data)  # exactly that input
    assert signature != key.sign(data)  # never the bare bytes
    for other in ("move", "net/leave", "leave/", "beacon"):
        assert not verify(alice.public_bytes, other, data, signature)
    # the NUL ends the kind: "le" + "ave\0..." cannot pass for "leave" + "\0..."
    assert not verify(alice.public_bytes, "le", b"ave\x00" + data, signature)


@pytest.mark.parametrize(
    "kind", ["", "Move", "move\x00", "x" * 33, "caf\u00e9", "a b", "net:hi", 7, None, b"move"]
)
def test_a_bad_kind_is_an_error_to_sign_and_never_verifies(kind: object) -> None:
    alice = Identity.generate()
    with pytest.raises(ValueError, match="signature kind"):
        alice.sign(kind, b"data")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        signing_input(kind, b"data")  # type: ignore[arg-type]
    signature = alice.sign("move", b"data")
    assert verify(alice.public_bytes, kind, b"data", signature) is False  # type: ignore[arg-type]


def test_the_longest_kind_and_every_allowed_character() -> None:
    alice = Identity.generate()
    for kind in ("x" * 32, "net/link-auth", "a_b-c/0123456789", "beacon"):
        assert verify(alice.public_bytes, kind, b"", alice.sign(kind, b""))


def test_forged_signatures_fail() -> None:
    alice = Identity.generate()
    data = b"play 7H"
    signature = alice.sign("move", data)
    for index in (0, 31, 32, 63):
        forged = bytearray(signature)
        forged[index] ^= 0x01
        assert not verify(alice.public_bytes, "move", data, bytes(forged))
    assert not verify(alice.public_bytes, "move", data, bytes(64))


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
    assert verify(public, "move", b"data", signature) is False  # type: ignore[arg-type]
    alice = Identity.generate()
    good = alice.sign("move", b"data")
    assert verify(alice.public_bytes, "move", b"data", good[:63]) is False
    assert verify(alice.public_bytes, "move", b"data", good + b"\x00") is False
    assert verify(alice.public_bytes, "move", None, good) is False  # type: ignore[arg-type]
    assert verify([1], "move", b"data", good) is False  # type: ignore[arg-type]  # unhashable
    assert verify(bytearray(alice.public_bytes), "move", b"data", good) is False  # type: ignore[arg-type]


FULL = "139E-3940-E64B-5491-7220-88D9-A0D7-4162"


def test_fingerprint_format() -> None:
    """128 bits in eight groups of four hex digits (64 bits: two keys of one attacker collide
    in about 2**32 tries)."""
    alice = Identity.from_seed(bytes(32))
    assert re.fullmatch(r"[0-9A-F]{4}(-[0-9A-F]{4}){7}", alice.fingerprint)
    assert alice.fingerprint == fingerprint_of(alice.public_bytes) == FULL
    head = hashlib.sha256(alice.public_bytes).digest()[:16].hex().upper()
    assert alice.fingerprint == "-".join(head[i : i + 4] for i in range(0, 32, 4))
    assert alice.fingerprint in repr(alice)
    assert alice.public_bytes.hex() not in repr(alice)


def test_a_key_off_the_wire_is_named_by_its_fingerprint_or_a_question_mark() -> None:
    key = Identity.from_seed(bytes(32)).public_bytes
    assert fingerprint_or_unknown(key) == FULL
    for value in (key[:31], key + b"\0", key.hex(), None, 7, [key]):
        assert fingerprint_or_unknown(value) == "?"


def test_a_typed_fingerprint_must_be_whole() -> None:
    assert parse_fingerprint(FULL.lower()) == FULL
    assert parse_fingerprint(" 139E 3940:E64B5491 722088d9-a0d74162") == FULL
    for short in ("139E-3940", FULL[:-1], FULL + "-0", "XYZ", ""):
        with pytest.raises(ValueError, match="32 hex digits in eight groups"):
            parse_fingerprint(short)


def test_an_old_64_bit_fingerprint_is_refused_saying_what_to_ask_for() -> None:
    for old in ("139E-3940-E64B-5491", "139e3940e64b5491"):
        with pytest.raises(ValueError, match="64-bit fingerprint of an older moska") as caught:
            parse_fingerprint(old)
        assert "whole fingerprint" in str(caught.value)


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


# -- strict verification -------------------------------------------------------

L = 2**252 + 27742317777372353535851937790883648493
P = 2**255 - 19


def _with_sign_bit(encoding: bytes) -> bytes:
    return encoding[:31] + bytes([encoding[31] | 0x80])


TORSION = [  # the eight points of order dividing 8, canonically encoded
    bytes.fromhex(h)
    for h in (
        "0100000000000000000000000000000000000000000000000000000000000000",  # order 1
        "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",  # order 2
        "0000000000000000000000000000000000000000000000000000000000000000",  # order 4
        "0000000000000000000000000000000000000000000000000000000000000080",  # order 4
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05",  # order 8
        "26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85",  # order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a",  # order 8
        "c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa",  # order 8
    )
]
NON_CANONICAL = [(P + k).to_bytes(32, "little") for k in range(19)] + [
    _with_sign_bit((P + k).to_bytes(32, "little")) for k in range(19)
]  # y = p + k for every k that fits: the second encodings of y = 0 .. 18
SMALL_ORDER_KEYS = sorted({*TORSION, *(_with_sign_bit(t) for t in TORSION), *SMALL_ORDER_ENCODINGS})


def _openssl_accepts(public: bytes, signature: bytes, data: bytes) -> bool:
    """What plain OpenSSL says (no strictness of ours): the attack the checks stop."""
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


def _libsodium_accepts(public: bytes, signature: bytes, data: bytes) -> bool:
    """libsodium's crypto_sign_verify_detached (1.0.18, bundled with rbcl): the reference."""
    verify_detached = rbcl._sodium.crypto_sign_verify_detached
    return bool(verify_detached(signature, data, ctypes.c_ulonglong(len(data)), public) == 0)


def test_the_universal_forgery_of_the_issue_does_not_verify() -> None:
    """Public key 0100..00 (the neutral point), R = the neutral point, S = 0: OpenSSL accepts
    it for every message; a strict verifier for none."""
    public = bytes([1]) + bytes(31)
    forged = bytes([1]) + bytes(31) + bytes(32)
    for index in range(20):
        data = f"leave {index}".encode()
        assert _openssl_accepts(public, forged, signing_input("leave", data))  # the attack
        assert not verify(public, "leave", data, forged)
        assert not _libsodium_accepts(public, forged, signing_input("leave", data))
    assert not is_acceptable_public_key(public)


def test_the_blocklist_is_libsodiums() -> None:
    """Every listed encoding is a small-order point (or y = p, p + 1): [8]P is the neutral point,
    checked with the curve arithmetic of the module; none is acceptable, sign bit or not."""
    from moska_p2p.crypto import identity

    assert len(SMALL_ORDER_ENCODINGS) == 7
    for encoding in SMALL_ORDER_ENCODINGS:
        if int.from_bytes(encoding, "little") < P:
            point = identity._decode_point(encoding)
            assert point is not None and identity._times_eight_is_identity(*point)
    for key in TORSION:
        point = identity._decode_point(key)
        assert point is not None and identity._times_eight_is_identity(*point), key.hex()
    real = Identity.from_seed(bytes(32)).public_bytes
    point = identity._decode_point(real)
    assert point is not None and not identity._times_eight_is_identity(*point)


@pytest.mark.parametrize("public", SMALL_ORDER_KEYS, ids=lambda k: k.hex()[:8] + k.hex()[-2:])
def test_every_small_order_key_is_refused_and_its_forgeries_fail(public: bytes) -> None:
    """With a small-order key A, [k]A lies in the small subgroup, so R = -[k]A with S = 0 passes
    the plain equation for about one message in ord(A). Search such forgeries over the eight
    torsion points as R: OpenSSL takes some of them, the strict check none."""
    assert not is_acceptable_public_key(public)
    raw_accepted = 0
    for index in range(16):
        data = f"hello {index}".encode()
        for r in TORSION:
            forged = r + bytes(32)
            raw_accepted += _openssl_accepts(public, forged, signing_input("hello", data))
            assert not verify(public, "hello", data, forged)
            assert not _libsodium_accepts(public, forged, signing_input("hello", data))
    if int.from_bytes(public, "little") & ((1 << 255) - 1) < P and public[31] & 0x80 == 0:
        assert raw_accepted, "no forgery found: the test would prove nothing"


@pytest.mark.parametrize("r", SMALL_ORDER_KEYS, ids=lambda k: k.hex()[:8] + k.hex()[-2:])
def test_a_small_order_r_is_refused(r: bytes) -> None:
    alice = Identity.generate()
    good = alice.sign("move", b"x")
    assert not verify(alice.public_bytes, "move", b"x", r + good[32:])


@pytest.mark.parametrize("encoding", NON_CANONICAL, ids=lambda k: k.hex()[:4] + k.hex()[-2:])
def test_non_canonical_keys_and_r_are_refused(encoding: bytes) -> None:
    """y >= p: a second encoding of the point y - p, never acceptable as a key or an R."""
    assert not is_acceptable_public_key(encoding)
    alice = Identity.generate()
    good = alice.sign("move", b"x")
    assert not verify(encoding, "move", b"x", good)
    assert not verify(alice.public_bytes, "move", b"x", encoding + good[32:])


def test_s_at_or_over_the_group_order_is_refused() -> None:
    """S + L satisfies the same equation as S: OpenSSL refuses it, and so do we."""
    alice = Identity.generate()
    good = alice.sign("move", b"x")
    s = int.from_bytes(good[32:], "little")
    for bad_s in (s + L, L, 2**256 - 1):
        bad = good[:32] + bad_s.to_bytes(32, "little")
        assert not _openssl_accepts(alice.public_bytes, bad, signing_input("move", b"x"))
        assert not verify(alice.public_bytes, "move", b"x", bad)


def test_real_keys_are_acceptable_and_points_off_the_curve_are_not() -> None:
    for seed in range(20):
        assert is_acceptable_public_key(Identity.from_seed(bytes([seed]) * 32).public_bytes)
    assert not is_acceptable_public_key((2).to_bytes(32, "little"))  # y = 2: not on the curve
    for bad in (b"", bytes(31), bytes(33), "x" * 32, None, [0] * 32):
        assert not is_acceptable_public_key(bad)


_keys = st.sampled_from(
    [Identity.from_seed(bytes([i]) * 32).public_bytes for i in range(3)]
    + SMALL_ORDER_KEYS
    + NON_CANONICAL[:4]
) | st.binary(min_size=32, max_size=32)


@given(_keys, st.data(), st.binary(max_size=40))
@settings(max_examples=300, deadline=None)
def test_verify_agrees_with_libsodium(public: bytes, data: st.DataObject, message: bytes) -> None:
    """Whatever the key, R and S (a real signature, one with R or S replaced by an edge case,
    or random bytes), ours says what libsodium's strict crypto_sign_verify_detached says."""
    signer = Identity.from_seed(bytes([0]) * 32)
    honest = signer.sign("move", message)
    r = data.draw(
        st.sampled_from([honest[:32], *TORSION, *NON_CANONICAL[:4]])
        | st.binary(min_size=32, max_size=32)
    )
    s_int = int.from_bytes(honest[32:], "little")
    s = data.draw(
        st.sampled_from([honest[32:], bytes(32), (s_int + L).to_bytes(32, "little")])
        | st.binary(min_size=32, max_size=32)
    )
    if data.draw(st.booleans()):
        public, signature = signer.public_bytes, honest
    else:
        signature = r + s
    expected = _libsodium_accepts(public, signature, signing_input("move", message))
    assert verify(public, "move", message, signature) is expected


# -- key files -----------------------------------------------------------------


@posix_only
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o601])
def test_a_key_file_others_may_read_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "identity.pem"
    Identity.generate().save(path)
    path.chmod(mode)
    with pytest.raises(IdentityError, match=re.escape(f"chmod 600 {path}")):
        Identity.load(path)
    with pytest.raises(IdentityError, match="chmod 600"):
        load_or_create(path)  # never replaced either
    path.chmod(0o600)
    assert Identity.load(path)
    path.chmod(0o400)
    assert Identity.load(path)


@posix_only
@pytest.mark.parametrize("mode", [0o777, 0o775, 0o757, 0o1777])
def test_a_key_directory_others_may_write_is_refused(tmp_path: Path, mode: int) -> None:
    folder = tmp_path / "keys"
    folder.mkdir()
    path = folder / "identity.pem"
    Identity.generate().save(path)
    folder.chmod(mode)
    try:
        with pytest.raises(IdentityError, match=re.escape(f"chmod 700 {folder}")):
            Identity.load(path)
        empty = tmp_path / "open"
        empty.mkdir()
        empty.chmod(mode)
        with pytest.raises(IdentityError, match="chmod 700"):
            load_or_create(empty / "identity.pem")  # no key is put there
        assert not (empty / "identity.pem").exists()
    finally:
        folder.chmod(0o700)
    assert Identity.load(path)
    folder.chmod(0o755)  # readable by others is fine: only writing lets them swap the key
    assert Identity.load(path)
