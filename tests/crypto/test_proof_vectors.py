"""Replay the deck proofs' test vectors (protocol/vectors/proofs.json).

Hashes, the transcript and the generators are recomputed from their written rules with hashlib
and rbcl alone; the 2-seat shuffle is re-derived from its seeds, its passes recomputed with rbcl
and its proofs verified and reproduced byte for byte from their witnesses; every invalid case
must fail with its recorded position. The generator must reproduce the file exactly, and a
changed byte must no longer match, so these tests can fail.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import struct
from pathlib import Path
from typing import Any

import pytest
import rbcl  # type: ignore[import-untyped]

from moska_p2p.crypto import deck as mp
from moska_p2p.crypto.dleq import prove_rekey, verify_rekey
from moska_p2p.crypto.fiat_shamir import Transcript
from moska_p2p.crypto.proofs import ProofError
from moska_p2p.crypto.shuffle_proof import prove_shuffle, verify_shuffle

ROOT = Path(__file__).resolve().parents[2]
PATH = ROOT / "protocol" / "vectors" / "proofs.json"
VECTORS: dict[str, Any] = json.loads(PATH.read_text())
L = 2**252 + 27742317777372353535851937790883648493


def b(value: str) -> bytes:
    return bytes.fromhex(value)


def bs(values: list[str]) -> list[bytes]:
    return [bytes.fromhex(v) for v in values]


def lp(*parts: bytes) -> bytes:
    return b"".join(struct.pack(">I", len(p)) + p for p in parts)


def test_the_generator_reproduces_the_file() -> None:
    spec = importlib.util.spec_from_file_location(
        "make_proof_vectors", ROOT / "scripts" / "make_proof_vectors.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.generate() == PATH.read_text()


def test_group() -> None:
    group = VECTORS["group"]
    assert int(group["order"]) == L
    assert (
        rbcl.crypto_scalarmult_ristretto255_base((1).to_bytes(32, "little")).hex()
        == (group["base"])
    )
    parts = bs(group["hash_to_point"]["parts"])
    digest = hashlib.sha512(lp(*parts)).digest()
    assert rbcl.crypto_core_ristretto255_from_hash(digest).hex() == group["hash_to_point"]["point"]
    scalar = (int.from_bytes(digest, "little") % L).to_bytes(32, "little")
    assert scalar.hex() == group["hash_to_scalar"]["scalar"]


def test_transcript() -> None:
    vector = VECTORS["transcript"]
    domain = b(vector["domain"])
    state = b"moska-p2p/v2/fs\x00" + lp(domain)
    ours = Transcript(domain)
    checked_before = False
    for op in vector["ops"]:
        label = b(op["label"])
        if op["op"] == "append":
            state += b"\x01" + lp(label) + lp(b(op["data"]))
            ours.append(label, b(op["data"]))
        elif op["op"] == "append_list":
            items = bs(op["items"])
            state += b"\x02" + lp(label) + struct.pack(">I", len(items)) + lp(*items)
            ours.append_list(label, items)
        else:
            if not checked_before:
                assert state.hex() == vector["absorbed_before_first_challenge"]
                checked_before = True
            expected = [op["scalar"]] if op["op"] == "challenge_scalar" else op["scalars"]
            for scalar in expected:
                suffix = b"\x03" + lp(label) + struct.pack(">I", 0)
                digest = hashlib.sha512(state + suffix).digest()
                assert (int.from_bytes(digest, "little") % L).to_bytes(32, "little").hex() == scalar
                assert ours.challenge_scalar(label).hex() == scalar
                state += suffix + digest
    assert checked_before


def test_generators() -> None:
    vector = VECTORS["generators"]
    for k, point in enumerate(vector["h"]):
        digest = hashlib.sha512(lp(b"moska-p2p/v2/shuffle-generator", struct.pack(">I", k)))
        assert rbcl.crypto_core_ristretto255_from_hash(digest.digest()).hex() == point
    assert len(vector["h"]) == vector["size"] + 1


def test_the_proven_shuffle() -> None:
    deck = VECTORS["deck"]
    game_id, cards = b(deck["game_id"]), deck["cards"]
    current = mp.card_points(game_id, cards)
    secrets = []
    for seat in deck["seats"]:
        s = mp.DeckSecrets.from_seed(b(seat["seed"]), game_id, seat["seat"], len(cards))
        secrets.append(s)
        assert s.scalar.hex() == seat["scalar"] and list(s.permutation) == seat["permutation"]
        assert [k.hex() for k in s.keys] == seat["keys"]
        prefix = b(seat["seed"]) + game_id + bytes([seat["seat"]])
        nonce_seed = hashlib.sha512(b"moska-p2p/v2/nonce-seed" + prefix).hexdigest()
        assert s.nonce_seed.hex() == seat["nonce_seed"] == nonce_seed
        assert rbcl.crypto_scalarmult_ristretto255_base(s.scalar).hex() == seat["public_scalar"]
        p1 = seat["pass1"]
        context = b"moska-p2p/v2/deck\x00" + game_id + bytes([seat["seat"]]) + b"shuffle1"
        assert p1["context"] == context.hex() and bs(p1["input"]) == current
        out = [rbcl.crypto_scalarmult_ristretto255(s.scalar, current[i]) for i in s.permutation]
        assert [p.hex() for p in out] == p1["output"]
        mp.verify_pass1(context, current, out, s.public_scalar, b(p1["proof"]))
        assert mp.pass1(s, context, current) == (out, b(p1["proof"]))
        current = out
    for seat, s in zip(deck["seats"], secrets, strict=True):
        p2 = seat["pass2"]
        context = mp.deck_context(game_id, seat["seat"], "shuffle2")
        inverse = rbcl.crypto_core_ristretto255_scalar_invert(s.scalar)
        out = [
            rbcl.crypto_scalarmult_ristretto255(
                rbcl.crypto_core_ristretto255_scalar_mul(inverse, k), p
            )
            for k, p in zip(s.keys, current, strict=True)
        ]
        assert [p.hex() for p in out] == p2["output"] and bs(p2["input"]) == current
        key_points = [rbcl.crypto_scalarmult_ristretto255_base(k) for k in s.keys]
        assert [p.hex() for p in key_points] == p2["key_points"]
        mp.verify_pass2(context, current, out, s.public_scalar, key_points, b(p2["proof"]))
        assert mp.pass2(s, context, current) == (out, key_points, b(p2["proof"]))
        current = out
    table = mp.card_table(game_id, cards)
    faces = [
        mp.identify(mp.unmask(p, [s.keys[j] for s in secrets]), table)
        for j, p in enumerate(current)
    ]
    assert faces == deck["faces"]


def _verify(kind: str, case: dict[str, Any]) -> None:
    if kind == "shuffle":
        verify_shuffle(
            b(case["context"]),
            bs(case["inputs"]),
            bs(case["outputs"]),
            b(case["public_scalar"]),
            b(case["proof"]),
        )
    else:
        verify_rekey(
            b(case["context"]),
            bs(case["inputs"]),
            bs(case["outputs"]),
            b(case["public_scalar"]),
            bs(case["key_points"]),
            b(case["proof"]),
        )


def test_valid_proofs_verify_and_are_reproduced_from_their_witness() -> None:
    shuffle = VECTORS["shuffle"]["valid"]
    _verify("shuffle", shuffle)
    w = shuffle["witness"]
    proof = prove_shuffle(
        b(shuffle["context"]),
        bs(shuffle["inputs"]),
        bs(shuffle["outputs"]),
        b(w["scalar"]),
        w["permutation"],
        b(w["nonce_seed"]),
    )
    assert proof.hex() == shuffle["proof"]
    rekey = VECTORS["rekey"]["valid"]
    _verify("rekey", rekey)
    w = rekey["witness"]
    proof = prove_rekey(
        b(rekey["context"]),
        bs(rekey["inputs"]),
        bs(rekey["outputs"]),
        b(rekey["public_scalar"]),
        bs(rekey["key_points"]),
        bs(w["witnesses"]),
        b(w["nonce_seed"]),
    )
    assert proof.hex() == rekey["proof"]


CASES = [(kind, c) for kind in ("shuffle", "rekey") for c in VECTORS[kind]["invalid"]]


@pytest.mark.parametrize(("kind", "case"), CASES, ids=[f"{k}: {c['name']}" for k, c in CASES])
def test_invalid_cases_fail_as_recorded(kind: str, case: dict[str, Any]) -> None:
    assert case["expect"]["error"] == "ProofError"
    with pytest.raises(ProofError) as info:
        _verify(kind, case)
    assert info.value.position == case["expect"]["position"]


def test_a_changed_byte_no_longer_matches() -> None:
    shuffle = dict(VECTORS["shuffle"]["valid"])
    proof = bytearray(b(shuffle["proof"]))
    proof[-1] ^= 0x01
    shuffle["proof"] = proof.hex()
    with pytest.raises(ProofError):
        _verify("shuffle", shuffle)
    first = VECTORS["shuffle"]["invalid"][0]
    assert len(CASES) > 50 and first["name"] == "proof one byte short"
