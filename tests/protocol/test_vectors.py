"""Replay the wire protocol's test vectors (protocol/vectors/, PROTOCOL.md section 18).

Framing vectors decode to their recorded meaning and their signatures verify; crypto vectors
are recomputed, partly from the formulas of PROTOCOL.md written out here with hashlib and
rbcl alone (the Fiat-Shamir transcript, and a verifier of both proofs: a second
implementation needs no more than the text); attack vectors fed in order to a fresh observer
give their recorded outcome; the game transcripts verify, with no secret, with their
recorded final state hash. Each family also checks that a changed byte no longer matches, so
these tests can fail.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import shutil
import struct
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import rbcl  # type: ignore[import-untyped]
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from moska_p2p.crypto import deck as mp
from moska_p2p.crypto.identity import Identity, fingerprint_of, signing_input, verify
from moska_p2p.engine import new_hidden_game
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig, game_id, table_id
from moska_p2p.protocol.frames import (
    FrameDecoder,
    FrameError,
    encode_frame,
    open_frame,
    pack,
    unpack,
)
from moska_p2p.protocol.session import STAGES, STOPPED, PeerSession, drbg, transcript_digest
from moska_p2p.protocol.transcript import read_transcript, verify_transcript, write_transcript

VECTORS = Path(__file__).resolve().parents[2] / "protocol" / "vectors"


def load(name: str) -> Any:
    return json.loads((VECTORS / name).read_text())


def from_json(value: Any) -> Any:
    """The msgpack value of the JSON form: {"bin": hex} is bytes, {"float": x} a float."""
    if isinstance(value, dict):
        if set(value) == {"bin"}:
            return bytes.fromhex(value["bin"])
        if set(value) == {"float"}:
            return float(value["float"])
        return {key: from_json(item) for key, item in value.items()}
    if isinstance(value, list):
        return [from_json(item) for item in value]
    return value


def same_types(a: Any, b: Any) -> bool:
    """Equal, and of the same msgpack types all the way down (1 is not 1.0 is not True)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_types(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_types(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def unhex(items: Sequence[str]) -> list[bytes]:
    return [bytes.fromhex(item) for item in items]


FRAMING = load("framing.json")
CRYPTO = load("crypto.json")
ATTACKS = load("attacks.json")
GAMES = load("games.json")


# -- the formulas of PROTOCOL.md, with hashlib and rbcl alone -----------------------------------

L = 2**252 + 27742317777372353535851937790883648493
ZERO = bytes(32)


def be32(n: int) -> bytes:
    return struct.pack(">I", n)


def lp(data: bytes) -> bytes:
    return be32(len(data)) + data


def _h(*parts: bytes) -> bytes:
    """PROTOCOL.md's H(a, b, ...): SHA-256 over each part prefixed by its 4-byte length."""
    return hashlib.sha256(b"".join(lp(part) for part in parts)).digest()


def sc(x: int) -> bytes:
    return (x % L).to_bytes(32, "little")


def num(scalar: bytes) -> int:
    return int.from_bytes(scalar, "little")


def valid_point(point: bytes) -> bool:
    """§10: canonical, not the identity, top bit clear."""
    return (
        len(point) == 32
        and point != ZERO
        and not point[31] & 0x80
        and bool(rbcl.crypto_core_ristretto255_is_valid_point(point))
    )


def pmul(x: int, point: bytes) -> bytes:
    """x * P; the identity (32 zero bytes) when the product is the identity."""
    if x % L == 0 or point == ZERO:
        return ZERO
    try:
        product: bytes = rbcl.crypto_scalarmult_ristretto255(sc(x), point)
    except RuntimeError:  # libsodium refuses an identity result
        return ZERO
    return product


def bmul(x: int) -> bytes:
    return pmul(x, rbcl.crypto_scalarmult_ristretto255_base(sc(1)))


def padd(*points: bytes) -> bytes:
    total = points[0]
    for point in points[1:]:
        total = rbcl.crypto_core_ristretto255_add(total, point)
    return total


def psub(p: bytes, q: bytes) -> bytes:
    out: bytes = rbcl.crypto_core_ristretto255_sub(p, q)
    return out


def hash_to_point(*parts: bytes) -> bytes:
    digest = hashlib.sha512(b"".join(lp(part) for part in parts)).digest()
    point: bytes = rbcl.crypto_core_ristretto255_from_hash(digest)
    return point


class FS:
    """§11.1, the Fiat-Shamir transcript."""

    def __init__(self, domain: bytes) -> None:
        self.state = hashlib.sha512(b"moska-p2p/v2/fs\x00" + lp(domain))

    def append(self, label: bytes, data: bytes) -> None:
        self.state.update(b"\x01" + lp(label) + lp(data))

    def append_list(self, label: bytes, items: Sequence[bytes]) -> None:
        self.state.update(
            b"\x02" + lp(label) + be32(len(items)) + b"".join(lp(item) for item in items)
        )

    def challenge(self, label: bytes) -> int:
        for counter in itertools.count():
            suffix = b"\x03" + lp(label) + be32(counter)
            probe = self.state.copy()
            probe.update(suffix)
            digest = probe.digest()
            if num(digest) % L:
                self.state.update(suffix + digest)
                return num(digest) % L
        raise AssertionError("unreachable")


def verify_rekey_from_spec(
    context: bytes,
    inputs: list[bytes],
    outputs: list[bytes],
    public: bytes,
    key_points: list[bytes],
    proof: bytes,
) -> bool:
    """§11.2's verifier (position by position, the commitments sent)."""
    size = len(inputs)
    if not valid_point(public) or len(proof) != 96 * size:
        return False
    if len(outputs) != size or len(key_points) != size:
        return False
    for j in range(size):
        r, s_point = proof[96 * j : 96 * j + 32], proof[96 * j + 32 : 96 * j + 64]
        s = num(proof[96 * j + 64 : 96 * j + 96])
        if s >= L:
            return False
        points = (inputs[j], outputs[j], key_points[j], r, s_point)
        if not all(valid_point(p) for p in points):
            return False
        fs = FS(b"moska-p2p/v2/rekey")
        fs.append(b"context", context)
        fs.append(b"position", be32(j))
        fs.append(b"input", inputs[j])
        fs.append(b"output", outputs[j])
        fs.append(b"public-scalar", public)
        fs.append(b"key-point", key_points[j])
        fs.append(b"r", r)
        fs.append(b"s", s_point)
        c = fs.challenge(b"c")
        if psub(pmul(s, inputs[j]), pmul(c, outputs[j])) != r:
            return False
        if psub(pmul(s, public), pmul(c, key_points[j])) != s_point:
            return False
    return True


def shuffle_generators(size: int) -> tuple[bytes, list[bytes]]:
    tag = b"moska-p2p/v2/shuffle-generator"
    return hash_to_point(tag, be32(0)), [hash_to_point(tag, be32(k + 1)) for k in range(size)]


def shuffle_challenges(
    context: bytes, xs: list[bytes], ys: list[bytes], public: bytes, u: list[bytes]
) -> tuple[FS, list[int]]:
    fs = FS(b"moska-p2p/v2/shuffle")
    fs.append(b"context", context)
    fs.append_list(b"inputs", xs)
    fs.append_list(b"outputs", ys)
    fs.append(b"public-scalar", public)
    fs.append_list(b"permutation-commitment", u)
    return fs, [fs.challenge(b"e") for _ in xs]


def verify_shuffle_from_spec(
    context: bytes, xs: list[bytes], ys: list[bytes], public: bytes, proof: bytes
) -> bool:
    """§11.3's verifier."""
    n = len(xs)
    if not n or len(ys) != n or len(proof) != 32 * (4 * n + 5) or not valid_point(public):
        return False
    if not all(valid_point(p) for p in xs + ys):
        return False
    items = [proof[i : i + 32] for i in range(0, len(proof), 32)]
    u, chain = items[:n], items[n : 2 * n]
    if not all(valid_point(p) for p in u + chain):
        return False
    scalars = [num(item) for item in items[2 * n :]]
    if any(x >= L for x in scalars):
        return False
    c, s1, s2, s3, sa = scalars[:5]
    s_prime, s_hat = scalars[5 : 5 + n], scalars[5 + n :]
    h0, gs = shuffle_generators(n)
    fs, e = shuffle_challenges(context, xs, ys, public, u)
    product = 1
    for x in e:
        product = product * x % L
    t1 = psub(bmul(s1), pmul(c, psub(padd(*u), padd(*gs))))
    t2 = psub(bmul(s2), pmul(c, psub(chain[-1], pmul(product, h0))))
    t3 = psub(
        padd(bmul(s3), *(pmul(s_prime[k], gs[k]) for k in range(n))),
        padd(*(pmul(c * e[j], u[j]) for j in range(n))),
    )
    t_hat = [
        psub(
            padd(bmul(s_hat[k]), pmul(s_prime[k], chain[k - 1] if k else h0)),
            pmul(c, chain[k]),
        )
        for k in range(n)
    ]
    t4 = psub(
        padd(*(pmul(s_prime[k], ys[k]) for k in range(n))),
        padd(*(pmul(sa * e[j], xs[j]) for j in range(n))),
    )
    t5 = psub(bmul(sa), pmul(c, public))
    fs.append_list(b"chain", chain)
    fs.append_list(b"commitments", [t1, t2, t3, t4, t5])
    fs.append_list(b"chain-commitments", t_hat)
    return fs.challenge(b"c") == c


# -- framing -----------------------------------------------------------------------------------


def decode(wire: bytes, chunk: int = 7) -> list[bytes]:
    decoder = FrameDecoder()
    bodies: list[bytes] = []
    for start in range(0, len(wire), chunk):
        bodies += decoder.feed(wire[start : start + chunk])
    assert decoder.pending == 0
    return bodies


def _ed25519(public: bytes, data: bytes, signature: bytes) -> bool:
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, data)
    except (InvalidSignature, ValueError):
        return False
    return True


def test_framing_without_the_envelope() -> None:
    vector = FRAMING["framing_only"]
    [body] = decode(bytes.fromhex(vector["frame"]))
    kind, payload, signature = open_frame(body)
    assert kind == vector["kind"]
    assert payload.hex() == vector["payload"] and signature.hex() == vector["signature"]
    assert unpack(payload) == vector["value"]
    public = Identity.from_seed(bytes.fromhex(vector["signer_seed"])).public_bytes
    assert public.hex() == vector["signer_public_key"]
    data = b"moska-p2p/v2/" + kind.encode() + b"\x00" + payload
    assert data.hex() == vector["signing_input"] == signing_input(kind, payload).hex()
    assert verify(public, kind, payload, signature) and _ed25519(public, data, signature)
    assert not verify(public, "move", payload, signature)  # the kind is signed


@pytest.mark.parametrize("vector", FRAMING["frames"], ids=lambda vector: vector["name"])
def test_frame_decodes_to_its_meaning(vector: dict[str, Any]) -> None:
    wire = bytes.fromhex(vector["frame"])
    assert int.from_bytes(wire[:4], "big") == vector["length"] == len(wire) - 4
    [body] = decode(wire)
    kind, payload, signature = open_frame(body)
    assert kind == vector["kind"]
    assert payload.hex() == vector["payload"]
    assert signature.hex() == vector["signature"]
    assert hashlib.sha256(payload).hexdigest() == vector["payload_sha256"]
    data = b"moska-p2p/v2/" + kind.encode() + b"\x00" + payload
    assert hashlib.sha256(data).hexdigest() == vector["signing_input_sha256"]
    expected = from_json(vector["message"])
    assert same_types(unpack(payload), expected)
    msg = m.parse_payload(payload)
    assert (msg.version, msg.type, msg.seq) == (expected["v"], expected["t"], expected["s"])
    assert (msg.game, msg.sender, msg.prev) == (expected["g"], expected["f"], expected["p"])
    assert msg.version == 2 and msg.type == kind
    assert msg.hash.hex() == vector["payload_sha256"]
    assert vector["name"].split("-")[0] == msg.type
    signer = Identity.from_seed(bytes.fromhex(vector["signer_seed"]))
    assert signer.public_bytes == msg.sender
    assert msg.sender.hex() == vector["signer_public_key"]
    assert fingerprint_of(msg.sender) == vector["signer_fingerprint"]
    assert verify(msg.sender, kind, payload, signature)
    assert _ed25519(msg.sender, data, signature)
    assert signer.sign(kind, payload) == signature  # Ed25519 is deterministic
    assert pack(expected) == payload  # this implementation's encoder gives these very bytes


def test_every_message_type_has_a_frame_vector() -> None:
    assert {vector["kind"] for vector in FRAMING["frames"]} == set(m.MESSAGE_TYPES)


def test_a_stream_of_frames_is_cut_at_the_right_places() -> None:
    frames = [bytes.fromhex(vector["frame"]) for vector in FRAMING["frames"]]
    for chunk in (1, 5, 4096):
        assert decode(b"".join(frames), chunk) == [frame[4:] for frame in frames]


@pytest.mark.parametrize("vector", FRAMING["invalid"], ids=lambda vector: vector["name"])
def test_invalid_input_is_refused_where_recorded(vector: dict[str, Any]) -> None:
    data = bytes.fromhex(vector["bytes"])
    stage = vector["fails_at"]
    with pytest.raises(FrameError) as raised:
        [body] = FrameDecoder().feed(data)
        assert stage != "stream", "the stream decoder accepted it"
        _, payload, _ = open_frame(body)
        assert stage != "frame", "open_frame accepted it"
        m.parse_payload(payload)
    assert vector["error"] in str(raised.value)
    if stage == "message":  # a well-formed frame: only its payload is refused
        open_frame(FrameDecoder().feed(data)[0])


def test_a_changed_byte_breaks_the_signature() -> None:
    vector = next(v for v in FRAMING["frames"] if v["name"] == "move")
    wire = bytearray(bytes.fromhex(vector["frame"]))
    public = bytes.fromhex(vector["signer_public_key"])
    kind, payload, signature = open_frame(bytes(wire[4:]))
    assert verify(public, kind, payload, signature)
    wire[-1] ^= 0x01  # the signature's last byte
    kind, payload, signature = open_frame(bytes(wire[4:]))
    assert not verify(public, kind, payload, signature)
    wire[-1] ^= 0x01
    text = from_json(vector["message"])["b"]["move"].encode()
    offset = bytes(wire).index(payload) + payload.index(text)
    wire[offset] ^= 0x01  # the first letter of the move's text
    kind, payload, signature = open_frame(bytes(wire[4:]))
    changed = m.parse_payload(payload)  # still a well-formed message, with another move text
    assert changed.body.move != text.decode()
    assert changed.hash.hex() != vector["payload_sha256"]
    assert not verify(public, kind, payload, signature)


# -- crypto ------------------------------------------------------------------------------------


def test_identities_fingerprints_and_domain_separated_signatures() -> None:
    for vector in CRYPTO["identity"]:
        identity = Identity.from_seed(bytes.fromhex(vector["seed"]))
        assert identity.public_bytes.hex() == vector["public_key"]
        assert identity.fingerprint == vector["fingerprint"]
        digest = hashlib.sha256(identity.public_bytes).hexdigest()[:32].upper()
        assert vector["fingerprint"] == "-".join(digest[i : i + 4] for i in range(0, 32, 4))
        payload = bytes.fromhex(vector["payload"])
        signatures = {}
        for kind, item in vector["signatures"].items():
            data = b"moska-p2p/v2/" + kind.encode() + b"\x00" + payload
            assert item["signing_input"] == data.hex()
            signature = bytes.fromhex(item["signature"])
            assert identity.sign(kind, payload) == signature
            assert verify(identity.public_bytes, kind, payload, signature)
            assert _ed25519(identity.public_bytes, data, signature)
            signatures[kind] = signature
        assert signatures["hello"] != signatures["move"]
        assert not verify(identity.public_bytes, "move", payload, signatures["hello"])


@pytest.mark.parametrize("vector", CRYPTO["strict"], ids=lambda vector: vector["name"])
def test_strict_verification_refuses_what_the_equation_alone_may_accept(
    vector: dict[str, Any],
) -> None:
    public, signature = bytes.fromhex(vector["public_key"]), bytes.fromhex(vector["signature"])
    payload = bytes.fromhex(vector["payload"])
    data = signing_input(vector["kind"], payload)
    assert _ed25519(public, data, signature) == vector["equation_alone_accepts"]
    assert verify(public, vector["kind"], payload, signature) == vector["strict_accepts"]


def test_table_id_game_id_and_seating() -> None:
    table = CRYPTO["table"]
    config = TableConfig.from_wire(from_json(table["config"]))
    roster = unhex(table["roster_sorted"])
    assert config.canonical().hex() == table["canonical"]
    nonce = config.table_nonce
    assert config.canonical() == table["canonical_text"].replace("<nonce>", "").encode() + nonce
    tid = hashlib.sha256(b"moska-p2p/table\n" + config.canonical() + b"".join(roster)).digest()
    assert tid.hex() == table["table_id"] == table_id(config, roster[::-1]).hex()
    game = CRYPTO["game"]
    nonces = unhex(game["nonces"])
    gid = hashlib.sha256(b"moska-p2p/game\n" + tid + b"".join(nonces)).digest()
    assert gid.hex() == game["game_id"] == game_id(tid, nonces).hex()

    seating = CRYPTO["seating"]
    assert seating["table_id"] == tid.hex()
    secrets = unhex(seating["seat_secrets"])
    commitments = [
        _h(b"moska-p2p/v2/seat", tid, key, s).hex() for key, s in zip(roster, secrets, strict=True)
    ]
    assert commitments == seating["seat_commitments"]
    joint = hashlib.sha256(b"moska-p2p/joint" + b"".join(secrets)).digest()
    assert joint.hex() == seating["joint"]
    assert [_h(joint, k).hex() for k in roster] == seating["sort_keys"]
    assert [k.hex() for k in sorted(roster, key=lambda k: _h(joint, k))] == seating["seats"]
    dealer = int.from_bytes(_h(b"moska-p2p/dealer", joint), "big") % len(roster)
    assert dealer == seating["dealer"]


def _reduce(tag: bytes, prefix: bytes, index: int) -> bytes:
    for counter in range(256):
        wide = hashlib.sha512(tag + prefix + index.to_bytes(2, "big") + bytes([counter])).digest()
        scalar: bytes = rbcl.crypto_core_ristretto255_scalar_reduce(wide)
        if int.from_bytes(scalar, "little"):
            return scalar
    raise AssertionError("unreachable")


def _permutation(prefix: bytes, size: int) -> list[int]:
    def words() -> Iterator[int]:
        counter = 0
        while True:
            block = hashlib.sha512(b"moska-p2p/permutation" + prefix + counter.to_bytes(8, "big"))
            for i in range(0, 64, 4):
                yield int.from_bytes(block.digest()[i : i + 4], "big")
            counter += 1

    stream = words()
    perm = list(range(size))
    for i in range(size - 1, 0, -1):
        bound = i + 1
        limit = (1 << 32) - (1 << 32) % bound
        x = next(stream)
        while x >= limit:
            x = next(stream)
        j = x % bound
        perm[i], perm[j] = perm[j], perm[i]
    return perm


def test_card_points_and_base_point() -> None:
    gid = bytes.fromhex(CRYPTO["card_points"]["game_id"])
    for card, point in enumerate(CRYPTO["card_points"]["points"]):
        assert mp.card_point(gid, card).hex() == point
        digest = hashlib.sha512(b"moska-p2p/card" + gid + bytes([card])).digest()
        assert rbcl.crypto_core_ristretto255_from_hash(digest).hex() == point
    assert bmul(1).hex() == CRYPTO["base_point"]
    assert CRYPTO["base_point"].startswith("e2f2ae0a")


def test_secrets_and_public_points_derived_from_a_seed() -> None:
    vector = CRYPTO["secrets"]
    seed, gid, seat = (
        bytes.fromhex(vector["seed"]),
        bytes.fromhex(vector["game_id"]),
        vector["seat"],
    )
    secrets = mp.DeckSecrets.from_seed(seed, gid, seat, vector["size"])
    prefix = seed + gid + bytes([seat])
    assert secrets.scalar.hex() == vector["pass1_scalar"]
    assert _reduce(b"moska-p2p/pass1-scalar", prefix, 0).hex() == vector["pass1_scalar"]
    inverse = rbcl.crypto_core_ristretto255_scalar_invert(secrets.scalar)
    assert inverse.hex() == secrets.scalar_inverse.hex() == vector["pass1_scalar_inverse"]
    assert bmul(num(secrets.scalar)).hex() == vector["public_scalar"]
    assert secrets.public_scalar.hex() == vector["public_scalar"]
    assert [k.hex() for k in secrets.keys] == vector["keys"]
    assert [_reduce(b"moska-p2p/position-key", prefix, j).hex() for j in range(6)] == vector["keys"]
    assert [bmul(num(k)).hex() for k in secrets.keys] == vector["key_points"]
    assert [p.hex() for p in secrets.key_points] == vector["key_points"]
    for key, point in zip(unhex(vector["keys"]), unhex(vector["key_points"]), strict=True):
        assert mp.check_key(key, point)
        assert not mp.check_key(sc(num(key) + 1), point)
        assert not mp.check_key(key[:31] + bytes([key[31] | 0x80]), point)  # not canonical
    assert list(secrets.permutation) == vector["permutation"] == _permutation(prefix, 6)
    full = mp.DeckSecrets.from_seed(seed, gid, seat, 52)
    assert list(full.permutation) == vector["permutation_52"] == _permutation(prefix, 52)
    assert full.keys[51].hex() == vector["key_51_of_52"]
    nonce_seed = hashlib.sha512(b"moska-p2p/v2/nonce-seed" + prefix).digest()
    assert nonce_seed.hex() == vector["nonce_seed"] == secrets.nonce_seed.hex()
    for stage in ("shuffle1", "shuffle2"):
        context = b"moska-p2p/v2/deck\x00" + gid + bytes([seat]) + stage.encode()
        assert (
            context.hex() == vector[f"context_{stage}"] == mp.deck_context(gid, seat, stage).hex()
        )


def test_fiat_shamir_transcript() -> None:
    vector = CRYPTO["fiat_shamir"]
    fs = FS(vector["domain"].encode())
    state = b"moska-p2p/v2/fs\x00" + lp(vector["domain"].encode())
    for op in vector["operations"]:
        label = op["label"].encode()
        if op["op"] == "append":
            fs.append(label, bytes.fromhex(op["data"]))
            state += b"\x01" + lp(label) + lp(bytes.fromhex(op["data"]))
        else:
            items = unhex(op["items"])
            fs.append_list(label, items)
            state += b"\x02" + lp(label) + be32(len(items)) + b"".join(lp(i) for i in items)
    assert state.hex() == vector["state_before_challenge"]
    digest = hashlib.sha512(state + b"\x03" + lp(b"c") + be32(0)).digest()
    assert digest.hex() == vector["first_digest"]
    assert [sc(fs.challenge(b"c")).hex() for _ in range(2)] == vector["challenges"]
    assert sc(num(digest)).hex() == vector["challenges"][0]


SHUFFLE = CRYPTO["shuffle"]


def test_shuffle_generators() -> None:
    h0, gs = shuffle_generators(len(SHUFFLE["cards"]))
    assert h0.hex() == SHUFFLE["generators"]["H_0"]
    assert [g.hex() for g in gs] == SHUFFLE["generators"]["G"]


@pytest.mark.parametrize("entry", SHUFFLE["pass1"], ids=lambda entry: f"seat{entry['seat']}")
def test_pass1_and_its_shuffle_argument(entry: dict[str, Any]) -> None:
    gid = bytes.fromhex(SHUFFLE["game_id"])
    seat = entry["seat"]
    context = bytes.fromhex(entry["context"])
    assert context == mp.deck_context(gid, seat, "shuffle1")
    xs, ys = unhex(entry["input"]), unhex(entry["output"])
    public, proof = bytes.fromhex(entry["public_scalar"]), bytes.fromhex(entry["proof"])
    if seat == 0:
        assert xs == unhex(SHUFFLE["card_points"]) == mp.card_points(gid, SHUFFLE["cards"])
    else:
        assert xs == unhex(SHUFFLE["pass1"][seat - 1]["output"])
    # The prover, deterministic: the same output and the same proof bytes.
    secrets = mp.DeckSecrets.from_seed(bytes.fromhex(SHUFFLE["seeds"][seat]), gid, seat, len(xs))
    assert secrets.public_scalar == public
    assert list(secrets.permutation) == entry["permutation"]
    assert mp.pass1(secrets, context, xs) == (ys, proof)
    a = num(secrets.scalar)
    assert ys == [pmul(a, xs[i]) for i in entry["permutation"]]
    assert len(proof) == 32 * (4 * len(xs) + 5)
    # The verifier, from the text, and the library's.
    _, e = shuffle_challenges(
        context, xs, ys, public, [proof[32 * i : 32 * i + 32] for i in range(6)]
    )
    assert [sc(x).hex() for x in e] == entry["challenges_e"]
    assert proof[32 * 12 : 32 * 13].hex() == entry["challenge_c"]
    assert verify_shuffle_from_spec(context, xs, ys, public, proof)
    mp.verify_pass1(context, xs, ys, public, proof)
    # Each way it can be wrong, refused by both.
    other_seat = mp.deck_context(gid, 1 - seat, "shuffle1")
    swapped = [ys[1], ys[0], *ys[2:]]
    flipped = bytearray(proof)
    flipped[32 * 13] ^= 1  # s_1
    wrong = [
        (context, xs, ys, bmul(7), proof),  # another A
        (other_seat, xs, ys, public, proof),  # another seat's context
        (context, xs, swapped, public, proof),  # outputs moved
        (context, xs, ys, public, bytes(flipped)),
        (context, xs, ys, public, proof[:-32]),
    ]
    for statement in wrong:
        assert not verify_shuffle_from_spec(*statement)
        with pytest.raises(mp.DeckError):
            mp.verify_pass1(*statement)


@pytest.mark.parametrize("entry", SHUFFLE["pass2"], ids=lambda entry: f"seat{entry['seat']}")
def test_pass2_and_its_rekeying_proof(entry: dict[str, Any]) -> None:
    gid = bytes.fromhex(SHUFFLE["game_id"])
    seat = entry["seat"]
    context = bytes.fromhex(entry["context"])
    assert context == mp.deck_context(gid, seat, "shuffle2")
    xs, ys = unhex(entry["input"]), unhex(entry["output"])
    public, key_points = bytes.fromhex(entry["public_scalar"]), unhex(entry["key_points"])
    proof = bytes.fromhex(entry["proof"])
    assert public == bytes.fromhex(SHUFFLE["pass1"][seat]["public_scalar"])  # its pass 1's A
    assert xs == unhex(
        SHUFFLE["pass2"][seat - 1]["output"] if seat else SHUFFLE["pass1"][-1]["output"]
    )
    secrets = mp.DeckSecrets.from_seed(bytes.fromhex(SHUFFLE["seeds"][seat]), gid, seat, len(xs))
    assert mp.pass2(secrets, context, xs) == (ys, key_points, proof)
    inverse = num(secrets.scalar_inverse)
    assert ys == [pmul(inverse * num(k), x) for k, x in zip(secrets.keys, xs, strict=True)]
    assert len(proof) == 96 * len(xs)
    assert verify_rekey_from_spec(context, xs, ys, public, key_points, proof)
    mp.verify_pass2(context, xs, ys, public, key_points, proof)
    # The copy attack: position 3 re-masked from the card at position 0 with its own key.
    copied = list(ys)
    copied[3] = pmul(inverse * num(secrets.keys[3]), xs[0])
    other_key = list(key_points)
    other_key[1] = bmul(5)
    flipped = bytearray(proof)
    flipped[96 * 2 + 72] ^= 1  # s_2
    wrong = [
        (context, xs, copied, public, key_points, proof),
        (context, xs, ys, public, other_key, proof),
        (context, xs, ys, bmul(7), key_points, proof),
        (mp.deck_context(gid, seat, "shuffle1"), xs, ys, public, key_points, proof),
        (context, xs, ys, public, key_points, bytes(flipped)),
    ]
    for statement in wrong:
        assert not verify_rekey_from_spec(*statement)
        with pytest.raises(mp.DeckError):
            mp.verify_pass2(*statement)


def test_the_dealt_deck_and_its_reveals() -> None:
    gid = bytes.fromhex(SHUFFLE["game_id"])
    cards = SHUFFLE["cards"]
    final = unhex(SHUFFLE["pass2"][-1]["output"])
    seeds = unhex(SHUFFLE["seeds"])
    secrets = [mp.DeckSecrets.from_seed(s, gid, seat, len(cards)) for seat, s in enumerate(seeds)]
    points = {mp.card_point(gid, c): c for c in cards}
    faces = []
    for j, point in enumerate(final):
        product = 1
        for seat_secrets in secrets:
            product = product * num(seat_secrets.keys[j]) % L
        faces.append(points[pmul(pow(product, -1, L), point)])
    assert faces == SHUFFLE["faces"]
    perms = [s.permutation for s in secrets]
    assert faces == [cards[perms[0][perms[1][j]]] for j in range(len(cards))]
    unmask = SHUFFLE["unmask"]
    position, keys = unmask["position"], unhex(unmask["keys"])
    point = mp.unmask(final[position], keys)
    assert point.hex() == unmask["point"] == mp.card_point(gid, unmask["card"]).hex()
    assert faces[position] == unmask["card"]
    partial = mp.unmask(final[position], keys[:1])
    assert partial.hex() == unmask["with_seat_0_key_only"]
    assert partial not in points  # one key missing: no card
    key_points = unhex(SHUFFLE["pass2"][1]["key_points"])
    wrong = bytes.fromhex(unmask["wrong_seat_1_key"])
    assert bmul(num(keys[1])) == key_points[position] != bmul(num(wrong))
    assert mp.check_key(keys[1], key_points[position])
    assert not mp.check_key(wrong, key_points[position])
    assert mp.unmask(final[position], [keys[0], wrong]) not in points


def test_hashes_drbg_and_the_state_encoding() -> None:
    hashes = CRYPTO["hashes"]
    assert hashlib.sha256(pack({})).hexdigest() == hashes["payload_hash_of_empty_map"]
    frames = unhex(hashes["transcript_frames"])
    assert transcript_digest(frames).hex() == hashes["transcript_digest"]
    digest = hashlib.sha256(b"moska-p2p/transcript\n")
    for frame in frames:
        digest.update(struct.pack(">I", len(frame)) + frame)
    assert digest.hexdigest() == hashes["transcript_digest"]
    state = CRYPTO["state"]
    game = new_hidden_game("mustamaija", 2, dealer=0)
    assert game.encode_public().hex() == state["encoding"]
    assert hashlib.sha256(bytes.fromhex(state["encoding"])).hexdigest() == state["state_hash"]
    assert game.state_hash() == state["state_hash"]
    for vector in ATTACKS["peers"] + GAMES["games"][0]["peers"]:
        secret = bytes.fromhex(vector["game_secret"])
        stream = b"".join(
            hashlib.sha256(b"moska-p2p/drbg" + secret + i.to_bytes(8, "big")).digest()
            for i in range(3)
        )
        drawn = vector["nonce"] + vector["seat_secret"] + vector["deck_seed"]
        assert stream.hex() == drbg(secret)(96).hex() == drawn


# -- attacks -----------------------------------------------------------------------------------


def _steps(case: dict[str, Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = (ATTACKS["setup_steps"] if case["after_setup"] else []) + case[
        "steps"
    ]
    return steps


def _observer(case: dict[str, Any] | None = None) -> PeerSession:
    config = TableConfig.from_wire(from_json((case or {}).get("config", ATTACKS["config"])))
    return PeerSession(None, config, unhex(ATTACKS["roster"]))


def _feed(session: PeerSession, steps: list[dict[str, Any]]) -> list[list[v.Output]]:
    outputs = []
    for step in steps:
        if "tick" in step:
            outputs.append(session.tick(step["tick"]))
        else:
            outputs.append(session.receive(bytes.fromhex(step["frame"]), step.get("now", 0.0)))
    return outputs


def _msg(frame: bytes) -> m.Message:
    _, payload, _ = open_frame(frame[4:])
    return m.parse_payload(payload)


@pytest.mark.parametrize("case", ATTACKS["cases"], ids=lambda case: case["name"])
def test_attack_gives_its_recorded_outcome(case: dict[str, Any]) -> None:
    steps = _steps(case)
    observer = _observer(case)
    outputs = _feed(observer, steps)
    expect = case["expect"]
    assert not any(isinstance(out, v.Send) for outs in outputs for out in outs)
    rejected = [
        (i, out.reason)
        for i, outs in enumerate(outputs)
        for out in outs
        if isinstance(out, v.Rejected)
    ]
    assert [i for i, _ in rejected] == [item["step"] for item in expect["rejected"]]
    for (_, reason), item in zip(rejected, expect["rejected"], strict=True):
        assert reason.startswith(item["match"]), (reason, item)
    stops = [
        (i, out.verdict)
        for i, outs in enumerate(outputs)
        for out in outs
        if isinstance(out, v.Stopped)
    ]
    if expect["verdict"] is None:
        assert stops == [] and observer.verdict is None
    else:
        wanted = expect["verdict"]
        assert len(stops) == 1
        at, verdict = stops[0]
        assert at == wanted["step"]
        assert verdict.kind == wanted["kind"]
        assert list(verdict.seats) == wanted["seats"]
        assert [k.hex() for k in verdict.keys] == wanted["keys"]
        frames = [bytes.fromhex(steps[i]["frame"]) for i in wanted["evidence_steps"]]
        assert list(verdict.evidence) == frames
        for frame in frames:  # evidence is signed by the accused
            kind, payload, signature = open_frame(frame[4:])
            assert m.parse_payload(payload).sender in verdict.keys
            assert verify(m.parse_payload(payload).sender, kind, payload, signature)
        # Convicted culprits forfeit: they are the game's losers (no seat yet: no game to
        # lose); a timeout names whom its signer lost contact with and convicts nobody.
        assert list(observer.losers) == expect["losers"]
        convicted = wanted["kind"] != v.TIMEOUT
        assert expect["losers"] == [s for s in wanted["seats"] if s >= 0 and convicted]
        # The honest peer signed its verdict, naming the same culprits (unless the game id
        # was not known yet).
        at_message = expect["verdict_message_step"]
        if at_message is not None:
            own = _msg(bytes.fromhex(steps[at_message]["frame"]))
            assert own.type == m.VERDICT and own.sender.hex() == ATTACKS["roster"][0]
            assert own.body.kind == wanted["kind"]
            assert [k.hex() for k in own.body.culprits] == wanted["keys"]
            assert at_message >= at
            assert at_message == at or outputs[at_message] == []  # the observer has stopped
    if "ignored_step" in expect:
        assert outputs[expect["ignored_step"]] == []
    stage = "stopped" if observer.stage == STOPPED else STAGES[observer.stage]
    assert stage == expect["final_stage"]


def test_attack_vectors_cover_issue_10() -> None:
    names = {case["name"] for case in ATTACKS["cases"]}
    assert {
        "pass2-copy-attack",
        "bad-shuffle-duplicate",
        "bad-shuffle-proof",
        "bad-shuffle-scalar",
        "bad-key",
        "false-claim",
        "false-denial",
        "bogus-verdict",
        "withheld-keys",
        "leave",
        "kind-mismatch",
    } <= names


def test_attack_vectors_can_fail() -> None:
    """A flipped signature bit turns the bad-key verdict into a rejected frame, and a changed
    key in an honest keys message gives a verdict where there was none."""
    case = next(c for c in ATTACKS["cases"] if c["name"] == "bad-key")
    steps = [dict(step) for step in _steps(case)]
    at = case["expect"]["verdict"]["step"]
    frame = bytearray(bytes.fromhex(steps[at]["frame"]))
    frame[-1] ^= 0x01
    steps[at]["frame"] = frame.hex()
    outputs = _feed(_observer(), steps)
    assert not any(isinstance(out, v.Stopped) for out in outputs[at])
    assert any(isinstance(out, v.Rejected) for out in outputs[at])

    steps = [dict(step) for step in ATTACKS["setup_steps"]]
    index = next(i for i, s in enumerate(steps) if _msg(bytes.fromhex(s["frame"])).type == m.KEYS)
    frame = bytearray(bytes.fromhex(steps[index]["frame"]))
    frame[4 + 60] ^= 0x01  # inside the signed payload
    steps[index]["frame"] = frame.hex()
    outputs = _feed(_observer(), steps)
    assert any(isinstance(out, v.Rejected | v.Stopped) for out in outputs[index])


# -- whole games -------------------------------------------------------------------------------


def _claims(observer: PeerSession, frames: list[bytes]) -> list[list[Any]]:
    out = []
    for frame in frames:
        msg = _msg(frame)
        if msg.type == m.CLAIM:
            card = msg.body.card
            out.append([observer.seat_of[msg.sender], msg.body.rank, card and card[0]])
    return out


def _disclosures(observer: PeerSession, frames: list[bytes]) -> list[list[Any]]:
    return [
        [observer.seat_of[msg.sender], sorted(pos for pos, _ in msg.body.keys)]
        for msg in map(_msg, frames)
        if msg.type == m.DISCLOSE
    ]


@pytest.mark.parametrize("game", GAMES["games"], ids=lambda game: game["file"])
def test_game_transcript_verifies(game: dict[str, Any]) -> None:
    path = VECTORS / game["file"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == game["sha256"]
    report = verify_transcript(path)
    assert report.to_json() == game["verify"]
    assert report.valid and report.final_state_hash == game["verify"]["final_state_hash"]
    owner, config, roster, frames = read_transcript(path)
    assert config.to_wire() == from_json(game["config"])
    observer = PeerSession(None, config, roster)  # no secret of anybody's
    for frame in frames:
        observer.receive(frame)
    assert [k.hex() for k in observer.seats] == game["seats"]
    assert observer.dealer == game["dealer"]
    assert [[seat, text] for seat, text in observer.moves] == game["moves"]
    assert _claims(observer, frames) == game["claims"]
    assert _disclosures(observer, frames) == game["disclosures"]
    assert owner.hex() == game["peers"][0]["public_key"]
    kinds = {_msg(frame).type for frame in frames}
    assert not kinds & {"commit", "audit"}  # version 1's seed commitment and audit are gone


def test_a_game_with_a_disclosure() -> None:
    assert any(game["disclosures"] for game in GAMES["games"])


def test_a_tampered_transcript_does_not_verify(tmp_path: Path) -> None:
    game = GAMES["games"][0]
    path = tmp_path / game["file"]
    shutil.copy(VECTORS / game["file"], path)
    data = bytearray(path.read_bytes())
    # The last byte of the 40th frame's signature (the header is record 0).
    at = 0
    for _ in range(41):
        at += 4 + int.from_bytes(data[at : at + 4], "big")
    end = at + 4 + int.from_bytes(data[at : at + 4], "big")
    data[end - 1] ^= 0x01
    path.write_bytes(bytes(data))
    report = verify_transcript(path)
    assert not report.valid and report.fault is not None
    assert "frame 40" in report.fault and "forged signature" in report.fault
    assert report.final_state_hash != game["verify"]["final_state_hash"]


def test_a_transcript_with_a_proof_altered_and_signed_again_does_not_verify(
    tmp_path: Path,
) -> None:
    """Its sender's own key signs an altered shuffle argument: the signature is good, the
    proof is not, and verify names the pass and its sender."""
    game = GAMES["games"][0]
    owner, config, roster, frames = read_transcript(VECTORS / game["file"])
    index = next(i for i, f in enumerate(frames) if _msg(f).type == m.SHUFFLE1)
    msg = _msg(frames[index])
    seeds = {
        bytes.fromhex(p["public_key"]): bytes.fromhex(p["identity_seed"]) for p in game["peers"]
    }
    signer = Identity.from_seed(seeds[msg.sender])
    body = m.to_wire(msg.body)
    proof = bytearray(body["proof"])
    proof[100] ^= 0x01
    body["proof"] = bytes(proof)
    payload = m.encode_payload(msg.game, msg.sender, msg.seq, msg.prev, msg.type, body, msg.heads)
    altered = list(frames)
    altered[index] = encode_frame(msg.type, payload, signer.sign(msg.type, payload))
    path = tmp_path / "altered.moska"
    write_transcript(path, owner, config, roster, altered)
    report = verify_transcript(path)
    assert not report.valid and report.fault is not None
    assert report.fault.startswith(f"frame {index}: bad-shuffle")
    assert fingerprint_of(msg.sender) in report.fault
