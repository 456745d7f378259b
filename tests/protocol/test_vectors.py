"""Replay the wire protocol's test vectors (protocol/vectors/, PROTOCOL.md section 16).

Framing vectors decode to their recorded meaning and their signatures verify; crypto vectors
are recomputed, partly from the formulas of PROTOCOL.md written out here with hashlib and
rbcl alone; attack vectors fed in order to a fresh observer give their recorded outcome; the
game transcripts verify with their recorded final state hash. Each family also checks that a
changed byte no longer matches, so these tests can fail.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import struct
from pathlib import Path
from typing import Any

import pytest
import rbcl  # type: ignore[import-untyped]

from moska_p2p.crypto import deck as mp
from moska_p2p.crypto.identity import Identity, fingerprint_of, verify
from moska_p2p.engine import new_hidden_game
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig, game_id, table_id
from moska_p2p.protocol.frames import FrameDecoder, FrameError, open_frame, pack, unpack
from moska_p2p.protocol.session import STAGES, STOPPED, PeerSession, drbg, transcript_digest
from moska_p2p.protocol.transcript import read_transcript, verify_transcript

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


FRAMING = load("framing.json")
CRYPTO = load("crypto.json")
ATTACKS = load("attacks.json")
GAMES = load("games.json")


# -- framing -----------------------------------------------------------------------------------


def decode(wire: bytes, chunk: int = 7) -> list[bytes]:
    decoder = FrameDecoder()
    bodies: list[bytes] = []
    for start in range(0, len(wire), chunk):
        bodies += decoder.feed(wire[start : start + chunk])
    assert decoder.pending == 0
    return bodies


def test_framing_without_the_envelope() -> None:
    vector = FRAMING["framing_only"]
    [body] = decode(bytes.fromhex(vector["frame"]))
    payload, signature = open_frame(body)
    assert payload.hex() == vector["payload"] and signature.hex() == vector["signature"]
    assert unpack(payload) == vector["value"]
    public = Identity.from_seed(bytes.fromhex(vector["signer_seed"])).public_bytes
    assert public.hex() == vector["signer_public_key"]
    assert verify(public, payload, signature)


@pytest.mark.parametrize("vector", FRAMING["frames"], ids=lambda vector: vector["name"])
def test_frame_decodes_to_its_meaning(vector: dict[str, Any]) -> None:
    wire = bytes.fromhex(vector["frame"])
    assert int.from_bytes(wire[:4], "big") == vector["length"] == len(wire) - 4
    [body] = decode(wire)
    payload, signature = open_frame(body)
    assert payload.hex() == vector["payload"]
    assert signature.hex() == vector["signature"]
    assert hashlib.sha256(payload).hexdigest() == vector["payload_sha256"]
    expected = from_json(vector["message"])
    assert same_types(unpack(payload), expected)
    msg = m.parse_payload(payload)
    assert (msg.version, msg.type, msg.seq) == (expected["v"], expected["t"], expected["s"])
    assert (msg.game, msg.sender, msg.prev) == (expected["g"], expected["f"], expected["p"])
    assert msg.hash.hex() == vector["payload_sha256"]
    assert vector["name"].split("-")[0] == msg.type
    signer = Identity.from_seed(bytes.fromhex(vector["signer_seed"]))
    assert signer.public_bytes == msg.sender
    assert msg.sender.hex() == vector["signer_public_key"]
    assert fingerprint_of(msg.sender) == vector["signer_fingerprint"]
    assert verify(msg.sender, payload, signature)
    assert signer.sign(payload) == signature  # Ed25519 is deterministic
    assert pack(expected) == payload  # this implementation's encoder gives these very bytes


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
        payload, _ = open_frame(body)
        assert stage != "frame", "open_frame accepted it"
        m.parse_payload(payload)
    assert vector["error"] in str(raised.value)
    if stage == "message":  # a well-formed frame: only its payload is refused
        open_frame(FrameDecoder().feed(data)[0])


def test_a_changed_byte_breaks_the_signature() -> None:
    vector = next(v for v in FRAMING["frames"] if v["name"] == "move")
    wire = bytearray(bytes.fromhex(vector["frame"]))
    public = bytes.fromhex(vector["signer_public_key"])
    payload, signature = open_frame(bytes(wire[4:]))
    assert verify(public, payload, signature)
    wire[-1] ^= 0x01  # the signature's last byte
    payload, signature = open_frame(bytes(wire[4:]))
    assert not verify(public, payload, signature)
    wire[-1] ^= 0x01
    text = from_json(vector["message"])["b"]["move"].encode()  # "attack 9H": a -> `
    offset = bytes(wire).index(payload) + payload.index(text)
    wire[offset] ^= 0x01
    payload, signature = open_frame(bytes(wire[4:]))
    changed = m.parse_payload(payload)  # still a well-formed message, with another move text
    assert changed.body["move"] != text.decode()
    assert changed.hash.hex() != vector["payload_sha256"]
    assert not verify(public, payload, signature)


# -- crypto ------------------------------------------------------------------------------------


def _h(*parts: bytes) -> bytes:
    """PROTOCOL.md's H(a, b, ...): SHA-256 over each part prefixed by its 4-byte length."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(struct.pack(">I", len(part)) + part)
    return digest.digest()


def test_identities_and_fingerprints() -> None:
    for vector in CRYPTO["identity"]:
        identity = Identity.from_seed(bytes.fromhex(vector["seed"]))
        assert identity.public_bytes.hex() == vector["public_key"]
        assert identity.fingerprint == vector["fingerprint"]
        digest = hashlib.sha256(identity.public_bytes).hexdigest()[:8].upper()
        assert vector["fingerprint"] == digest[:4] + "-" + digest[4:]
        signature = bytes.fromhex(vector["signature"])
        assert identity.sign(bytes.fromhex(vector["message"])) == signature
        assert verify(identity.public_bytes, bytes.fromhex(vector["message"]), signature)


def test_table_id_game_id_and_seating() -> None:
    table = CRYPTO["table"]
    config = TableConfig.from_wire(from_json(table["config"]))
    roster = [bytes.fromhex(k) for k in table["roster_sorted"]]
    assert config.canonical().hex() == table["canonical"]
    nonce = config.table_nonce
    assert config.canonical() == table["canonical_text"].replace("<nonce>", "").encode() + nonce
    tid = hashlib.sha256(b"moska-p2p/table\n" + config.canonical() + b"".join(roster)).digest()
    assert tid.hex() == table["table_id"] == table_id(config, roster[::-1]).hex()
    game = CRYPTO["game"]
    nonces = [bytes.fromhex(n) for n in game["nonces"]]
    gid = hashlib.sha256(b"moska-p2p/game\n" + tid + b"".join(nonces)).digest()
    assert gid.hex() == game["game_id"] == game_id(tid, nonces).hex()

    seating = CRYPTO["seating"]
    secrets = [bytes.fromhex(s) for s in seating["seat_secrets"]]
    assert [_h(b"moska-p2p/seat", s).hex() for s in secrets] == seating["seat_commitments"]
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
    def words():  # type: ignore[no-untyped-def]
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


def test_card_points_and_commitments() -> None:
    gid = bytes.fromhex(CRYPTO["card_points"]["game_id"])
    for card, point in enumerate(CRYPTO["card_points"]["points"]):
        assert mp.card_point(gid, card).hex() == point
        digest = hashlib.sha512(b"moska-p2p/card" + gid + bytes([card])).digest()
        assert rbcl.crypto_core_ristretto255_from_hash(digest).hex() == point
    vector = CRYPTO["seed_commitment"]
    seed, gid = bytes.fromhex(vector["seed"]), bytes.fromhex(vector["game_id"])
    commitment = hashlib.sha256(b"moska-p2p/seed-commitment" + gid + bytes([1]) + seed)
    assert commitment.hexdigest() == vector["commitment"]
    assert mp.seed_commitment(seed, gid, vector["seat"]).hex() == vector["commitment"]


def test_secrets_derived_from_a_seed() -> None:
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
    assert [k.hex() for k in secrets.keys] == vector["keys"]
    assert [_reduce(b"moska-p2p/position-key", prefix, j).hex() for j in range(6)] == vector["keys"]
    assert [c.hex() for c in secrets.key_commitments()] == vector["key_commitments"]
    for j, key in enumerate(secrets.keys):
        tagged = b"moska-p2p/key-commitment" + gid + bytes([seat]) + j.to_bytes(2, "big") + key
        assert hashlib.sha256(tagged).hexdigest() == vector["key_commitments"][j]
        assert mp.check_key(gid, seat, j, key, bytes.fromhex(vector["key_commitments"][j]))
    assert list(secrets.permutation) == vector["permutation"] == _permutation(prefix, 6)
    full = mp.DeckSecrets.from_seed(seed, gid, seat, 52)
    assert list(full.permutation) == vector["permutation_52"] == _permutation(prefix, 52)
    assert full.keys[51].hex() == vector["key_51_of_52"]


def test_a_small_shuffle_and_an_unmask() -> None:
    vector = CRYPTO["shuffle"]
    gid = bytes.fromhex(vector["game_id"])
    cards = vector["cards"]
    seeds = [bytes.fromhex(s) for s in vector["seeds"]]
    secrets = [mp.DeckSecrets.from_seed(s, gid, seat, len(cards)) for seat, s in enumerate(seeds)]
    current = mp.card_points(gid, cards)
    assert [p.hex() for p in current] == vector["input"]
    for seat in range(2):
        current = mp.pass1(secrets[seat], current)
        assert [p.hex() for p in current] == vector["pass1"][seat]
        a = secrets[seat].scalar
        previous = [
            bytes.fromhex(p) for p in (vector["pass1"][seat - 1] if seat else vector["input"])
        ]
        assert [
            rbcl.crypto_scalarmult_ristretto255(a, previous[i]).hex()
            for i in secrets[seat].permutation
        ] == vector["pass1"][seat]
    for seat in range(2):
        current, commitments = mp.pass2(secrets[seat], current)
        assert [p.hex() for p in current] == vector["pass2"][seat]
        assert [c.hex() for c in commitments] == vector["key_commitments"][seat]
    faces = mp.replay_shuffle(
        gid,
        seeds,
        [bytes.fromhex(c) for c in vector["seed_commitments"]],
        [[bytes.fromhex(p) for p in out] for out in vector["pass1"]],
        [[bytes.fromhex(p) for p in out] for out in vector["pass2"]],
        [[bytes.fromhex(c) for c in out] for out in vector["key_commitments"]],
        len(cards),
        cards,
    )
    assert faces == vector["faces"]
    composed = [cards[secrets[0].permutation[secrets[1].permutation[j]]] for j in range(len(cards))]
    assert composed == faces
    unmask = vector["unmask"]
    position, keys = unmask["position"], [bytes.fromhex(k) for k in unmask["keys"]]
    point = mp.unmask(bytes.fromhex(vector["pass2"][-1][position]), keys)
    assert point.hex() == unmask["point"] == mp.card_point(gid, unmask["card"]).hex()
    assert faces[position] == unmask["card"]
    partial = mp.unmask(bytes.fromhex(vector["pass2"][-1][position]), keys[:1])
    assert partial.hex() == unmask["with_seat_0_key_only"]
    assert partial not in mp.card_table(gid, cards)  # one key missing: no card
    # A changed key is refused by its commitment, and would unmask to no card.
    wrong = bytearray(keys[1])
    wrong[0] ^= 1
    commitment = bytes.fromhex(vector["key_commitments"][1][position])
    assert mp.check_key(gid, 1, position, keys[1], commitment)
    assert not mp.check_key(gid, 1, position, bytes(wrong), commitment)
    stray = mp.unmask(bytes.fromhex(vector["pass2"][-1][position]), [keys[0], bytes(wrong)])
    assert stray not in mp.card_table(gid, cards)


def test_hashes_drbg_and_the_state_encoding() -> None:
    hashes = CRYPTO["hashes"]
    assert hashlib.sha256(pack({})).hexdigest() == hashes["payload_hash_of_empty_map"]
    frames = [bytes.fromhex(f) for f in hashes["transcript_frames"]]
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
    return (ATTACKS["setup_steps"] if case["after_setup"] else []) + case["steps"]


def _observer(case: dict[str, Any] | None = None) -> PeerSession:
    config = TableConfig.from_wire(from_json((case or {}).get("config", ATTACKS["config"])))
    return PeerSession(None, config, [bytes.fromhex(k) for k in ATTACKS["roster"]])


def _feed(session: PeerSession, steps: list[dict[str, Any]]) -> list[list[v.Output]]:
    outputs = []
    for step in steps:
        if "tick" in step:
            outputs.append(session.tick(step["tick"]))
        else:
            outputs.append(session.receive(bytes.fromhex(step["frame"]), step.get("now", 0.0)))
    return outputs


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
            payload, signature = open_frame(frame[4:])
            assert m.parse_payload(payload).sender in verdict.keys
            assert verify(m.parse_payload(payload).sender, payload, signature)
    if "ignored_step" in expect:
        assert outputs[expect["ignored_step"]] == []
    stage = "stopped" if observer.stage == STOPPED else STAGES[observer.stage]
    assert stage == expect["final_stage"]


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
    index = next(i for i, s in enumerate(steps) if _msg(s["frame"]).type == m.KEYS)
    frame = bytearray(bytes.fromhex(steps[index]["frame"]))
    frame[4 + 60] ^= 0x01  # inside the signed payload
    steps[index]["frame"] = frame.hex()
    outputs = _feed(_observer(), steps)
    assert any(isinstance(out, v.Rejected | v.Stopped) for out in outputs[index])


def _msg(frame_hex: str) -> m.Message:
    payload, _ = open_frame(bytes.fromhex(frame_hex)[4:])
    return m.parse_payload(payload)


# -- whole games -------------------------------------------------------------------------------


@pytest.mark.parametrize("game", GAMES["games"], ids=lambda game: game["file"])
def test_game_transcript_verifies(game: dict[str, Any]) -> None:
    path = VECTORS / game["file"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == game["sha256"]
    report = verify_transcript(path)
    assert report.to_json() == game["verify"]
    assert report.valid and report.final_state_hash == game["verify"]["final_state_hash"]
    owner, config, roster, frames = read_transcript(path)
    assert config.to_wire() == from_json(game["config"])
    observer = PeerSession(None, config, roster)
    for frame in frames:
        observer.receive(frame)
    assert [k.hex() for k in observer.seats] == game["seats"]
    assert observer.dealer == game["dealer"]
    assert [[seat, text] for seat, text in observer.moves] == game["moves"]
    assert [list(c) for c in observer.claim_log] == game["claims"]
    assert owner.hex() == game["peers"][0]["public_key"]


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
