#!/usr/bin/env python3
"""Generate the deck proofs' test vectors, ``protocol/vectors/proofs.json`` (deck v2).

Everything is deterministic: a fixed game id, fixed seeds for a 2-seat shuffle of 4 cards,
and the proofs' nonces derived from those seeds (moska_p2p.crypto.proofs). The file holds
what a second implementation needs to check itself against this one:

- ``group``: the base point, the order, ``hash_to_point`` and ``hash_to_scalar`` examples;
- ``transcript``: a Fiat-Shamir transcript's operations with the exact bytes absorbed before
  the first challenge, and every challenge;
- ``generators``: the shuffle argument's ``H_0 .. H_4``;
- ``deck``: the whole proven shuffle (contexts, ``A``, outputs, key points, proofs, faces);
- ``shuffle`` and ``rekey``: one valid proof with its witness (to reproduce the proof byte for
  byte) and ``invalid``: each mutation of it, with the error a verifier must raise and the
  position it must name (``null`` when the proof fails as a whole).

    python scripts/make_proof_vectors.py            # (re)write protocol/vectors/proofs.json
    python scripts/make_proof_vectors.py --check    # regenerate in memory, compare
"""

from __future__ import annotations

import argparse
import hashlib
import json
import struct
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import group as g
from moska_p2p.crypto.dleq import fresh_weights, prove_rekey, rekey_batch_holds, verify_rekey
from moska_p2p.crypto.fiat_shamir import Transcript
from moska_p2p.crypto.proofs import ProofError
from moska_p2p.crypto.shuffle_proof import generators, prove_shuffle, verify_shuffle

OUT = Path(__file__).resolve().parent.parent / "protocol" / "vectors" / "proofs.json"
GAME_ID = hashlib.sha256(b"moska-p2p/vectors/proofs").digest()
OTHER_GAME = hashlib.sha256(b"moska-p2p/vectors/another game").digest()
CARDS = [3, 16, 27, 51]
SEEDS = [bytes([0x50 + seat]) * 32 for seat in range(2)]
L = g.GROUP_ORDER

Statement = dict[str, Any]


def hx(value: bytes) -> str:
    return value.hex()


def hxs(values: list[bytes]) -> list[str]:
    return [v.hex() for v in values]


def item(proof: bytes, index: int) -> bytes:
    return proof[32 * index : 32 * (index + 1)]


def put(proof: bytes, index: int, value: bytes) -> bytes:
    return proof[: 32 * index] + value + proof[32 * (index + 1) :]


def flip(value: bytes, bit: int = 0) -> bytes:
    out = bytearray(value)
    out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


def alias(point: bytes) -> bytes:
    return point[:31] + bytes([point[31] | 0x80])


def le(n: int) -> bytes:
    return n.to_bytes(32, "little")


NOT_CANONICAL_FIELD = le(2**255 - 18)  # a field element >= p


# -- the honest shuffle -------------------------------------------------------------------------


def honest_shuffle() -> dict[str, Any]:
    secrets = [
        mp.DeckSecrets.from_seed(s, GAME_ID, seat, len(CARDS)) for seat, s in enumerate(SEEDS)
    ]
    current = mp.card_points(GAME_ID, CARDS)
    seats: list[dict[str, Any]] = []
    for seat, peer in enumerate(secrets):
        context = mp.deck_context(GAME_ID, seat, "shuffle1")
        out, proof = mp.pass1(peer, context, current)
        seats.append(
            {
                "seat": seat,
                "seed": hx(SEEDS[seat]),
                "scalar": hx(peer.scalar),
                "permutation": list(peer.permutation),
                "keys": hxs(list(peer.keys)),
                "nonce_seed": hx(peer.nonce_seed),
                "public_scalar": hx(peer.public_scalar),
                "pass1": {
                    "context": hx(context),
                    "input": hxs(current),
                    "output": hxs(out),
                    "proof": hx(proof),
                },
            }
        )
        current = out
    for seat, peer in enumerate(secrets):
        context = mp.deck_context(GAME_ID, seat, "shuffle2")
        out, key_points, proof = mp.pass2(peer, context, current)
        seats[seat]["pass2"] = {
            "context": hx(context),
            "input": hxs(current),
            "output": hxs(out),
            "key_points": hxs(key_points),
            "proof": hx(proof),
        }
        current = out
    table = mp.card_table(GAME_ID, CARDS)
    faces = [
        mp.identify(mp.unmask(point, [s.keys[j] for s in secrets]), table)
        for j, point in enumerate(current)
    ]
    return {"game_id": hx(GAME_ID), "cards": CARDS, "seats": seats, "faces": faces}


# -- invalid cases ------------------------------------------------------------------------------


def outcome(verify: Callable[[], None]) -> dict[str, Any]:
    try:
        verify()
    except ProofError as error:
        return {"error": "ProofError", "position": error.position}
    return {"error": None, "position": None}


def shuffle_statement(pass1: dict[str, Any], public_scalar: str) -> Statement:
    return {
        "context": pass1["context"],
        "inputs": pass1["input"],
        "outputs": pass1["output"],
        "public_scalar": public_scalar,
        "proof": pass1["proof"],
    }


def run_shuffle(s: Statement) -> dict[str, Any]:
    return outcome(
        lambda: verify_shuffle(
            bytes.fromhex(s["context"]),
            [bytes.fromhex(p) for p in s["inputs"]],
            [bytes.fromhex(p) for p in s["outputs"]],
            bytes.fromhex(s["public_scalar"]),
            bytes.fromhex(s["proof"]),
        )
    )


def run_rekey(s: Statement) -> dict[str, Any]:
    return outcome(
        lambda: verify_rekey(
            bytes.fromhex(s["context"]),
            [bytes.fromhex(p) for p in s["inputs"]],
            [bytes.fromhex(p) for p in s["outputs"]],
            bytes.fromhex(s["public_scalar"]),
            [bytes.fromhex(p) for p in s["key_points"]],
            bytes.fromhex(s["proof"]),
        )
    )


def case(
    name: str, base: Statement, run: Callable[[Statement], dict[str, Any]], **changes: Any
) -> dict[str, Any]:
    statement = {**base, **changes}
    result = run(statement)
    assert result["error"] == "ProofError", f"{name} was accepted"
    return {"name": name, **statement, "expect": result}


def shuffle_cases(deck: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    seat = deck["seats"][1]
    other = deck["seats"][0]
    base = shuffle_statement(seat["pass1"], seat["public_scalar"])
    proof = bytes.fromhex(base["proof"])
    size = len(base["inputs"])
    names = [
        *(f"u_{k + 1}" for k in range(size)),
        *(f"C_{k + 1}" for k in range(size)),
        "c",
        "s_1",
        "s_2",
        "s_3",
        "s_a",
        *(f"s'_{k + 1}" for k in range(size)),
        *(f"s^_{k + 1}" for k in range(size)),
    ]
    outputs = [bytes.fromhex(p) for p in base["outputs"]]
    inputs = [bytes.fromhex(p) for p in base["inputs"]]
    scalar = bytes.fromhex(seat["scalar"])
    perm = seat["permutation"]
    nonce_seed = bytes.fromhex(seat["nonce_seed"])
    context = bytes.fromhex(base["context"])

    def reprove(outs: list[bytes], a: bytes = scalar) -> str:
        return hx(prove_shuffle(context, inputs, outs, a, perm, nonce_seed))

    cases = [
        case("proof one byte short", base, run_shuffle, proof=hx(proof[:-1])),
        case("proof one item long", base, run_shuffle, proof=hx(proof + proof[:32])),
        *(
            case(
                f"bit 0 of {name} flipped",
                base,
                run_shuffle,
                proof=hx(put(proof, i, flip(item(proof, i)))),
            )
            for i, name in enumerate(names)
        ),
        case("u_2 is the identity", base, run_shuffle, proof=hx(put(proof, 1, g.IDENTITY))),
        case("C_3 is the identity", base, run_shuffle, proof=hx(put(proof, size + 2, g.IDENTITY))),
        case(
            "u_1 with bit 255 set (same point for libsodium)",
            base,
            run_shuffle,
            proof=hx(put(proof, 0, alias(item(proof, 0)))),
        ),
        case(
            "C_1 a field element >= p",
            base,
            run_shuffle,
            proof=hx(put(proof, size, NOT_CANONICAL_FIELD)),
        ),
        case("c = L", base, run_shuffle, proof=hx(put(proof, 2 * size, le(L)))),
        case(
            "s_a + L (same residue)",
            base,
            run_shuffle,
            proof=hx(
                put(
                    proof, 2 * size + 4, le(int.from_bytes(item(proof, 2 * size + 4), "little") + L)
                )
            ),
        ),
        case(
            "s'_1 = 2^256 - 1", base, run_shuffle, proof=hx(put(proof, 2 * size + 5, b"\xff" * 32))
        ),
    ]
    outside = g.mul(scalar, mp.card_point(GAME_ID, 5))  # not a card of this deck, masked
    replaced = [outside, *outputs[1:]]
    duplicated = [outputs[0], outputs[0], *outputs[2:]]
    swapped = [outputs[1], outputs[0], *outputs[2:]]
    other_a = g.scalar_mul(scalar, g.scalar_of_int(3))
    rescaled = [g.mul(other_a, inputs[i]) for i in perm]
    cases += [
        case("an output replaced by a card from outside", base, run_shuffle, outputs=hxs(replaced)),
        case(
            "an output replaced, honestly proven",
            base,
            run_shuffle,
            outputs=hxs(replaced),
            proof=reprove(replaced),
        ),
        case(
            "an output duplicated, honestly proven",
            base,
            run_shuffle,
            outputs=hxs(duplicated),
            proof=reprove(duplicated),
        ),
        case("an output left out", base, run_shuffle, outputs=hxs(outputs[:-1])),
        case("two outputs swapped after proving", base, run_shuffle, outputs=hxs(swapped)),
        case(
            "outputs under another scalar, proven with it",
            base,
            run_shuffle,
            outputs=hxs(rescaled),
            proof=reprove(rescaled, other_a),
        ),
        case(
            "the public scalar point of another scalar",
            base,
            run_shuffle,
            public_scalar=hx(g.base_mul(other_a)),
        ),
        case(
            "another game",
            base,
            run_shuffle,
            context=hx(mp.deck_context(OTHER_GAME, 1, "shuffle1")),
        ),
        case(
            "another seat", base, run_shuffle, context=hx(mp.deck_context(GAME_ID, 0, "shuffle1"))
        ),
        case(
            "another stage", base, run_shuffle, context=hx(mp.deck_context(GAME_ID, 1, "shuffle2"))
        ),
        case("the proof of another statement", base, run_shuffle, proof=other["pass1"]["proof"]),
        case(
            "an output is the identity",
            base,
            run_shuffle,
            outputs=hxs([outputs[0], g.IDENTITY, *outputs[2:]]),
        ),
        case(
            "an output with bit 255 set",
            base,
            run_shuffle,
            outputs=hxs([*outputs[:3], alias(outputs[3])]),
        ),
        case(
            "the public scalar point is the identity",
            base,
            run_shuffle,
            public_scalar=hx(g.IDENTITY),
        ),
    ]
    valid = {
        **base,
        "witness": {
            "scalar": seat["scalar"],
            "permutation": perm,
            "nonce_seed": seat["nonce_seed"],
        },
    }
    assert run_shuffle(base)["error"] is None
    return valid, cases


def cancelling_copy_attack(
    context: bytes,
    inputs: list[bytes],
    outputs: list[bytes],
    a_point: bytes,
    key_points: list[bytes],
    witnesses: list[bytes],
    proof: bytes,
    p: int,
    q: int,
    weights: list[int],
) -> bytes:
    """A re-keying proof of a false position ``p`` (``outputs[p]`` is not ``x_p * inputs[p]``)
    that passes the batch equation for these known ``weights`` (PROTOCOL.md §11.5): the error
    of ``p``'s first equation, ``D = s_p*X_p - c_p*Y_p - R_p``, is cancelled by a commitment of
    ``q`` shifted by ``(z_p / z_q)*D`` before ``q``'s challenge is drawn. Fresh weights catch it."""
    from moska_p2p.crypto.dleq import _challenge

    def position(j: int, w: bytes, shift: bytes) -> bytes:
        r = g.add(g.mul(w, inputs[j]), shift)
        s_point = g.mul(w, a_point)
        c = _challenge(context, j, inputs[j], outputs[j], a_point, key_points[j], r, s_point)
        return r + s_point + g.scalar_add(w, g.scalar_mul(c, witnesses[j]))

    w_p, w_q = g.hash_to_scalar(b"forger", b"p"), g.hash_to_scalar(b"forger", b"q")
    forged_p = position(p, w_p, g.IDENTITY)
    r, s = forged_p[:32], forged_p[64:]
    c = _challenge(context, p, inputs[p], outputs[p], a_point, key_points[p], r, forged_p[32:64])
    error = g.sub(g.sub(g.mul(s, inputs[p]), g.mul(c, outputs[p])), r)
    ratio = g.scalar_of_int(weights[2 * p] * pow(weights[2 * q], -1, L))
    forged_q = position(q, w_q, g.mul(ratio, error))
    out = bytearray(proof)
    out[96 * p : 96 * (p + 1)] = forged_p
    out[96 * q : 96 * (q + 1)] = forged_q
    return bytes(out)


def rekey_cases(deck: dict[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    seat = deck["seats"][1]
    pass2 = seat["pass2"]
    base = {
        "context": pass2["context"],
        "inputs": pass2["input"],
        "outputs": pass2["output"],
        "public_scalar": seat["public_scalar"],
        "key_points": pass2["key_points"],
        "proof": pass2["proof"],
    }
    proof = bytes.fromhex(base["proof"])
    size = len(base["inputs"])
    inputs = [bytes.fromhex(p) for p in base["inputs"]]
    outputs = [bytes.fromhex(p) for p in base["outputs"]]
    key_points = [bytes.fromhex(p) for p in base["key_points"]]
    scalar = bytes.fromhex(seat["scalar"])
    keys = [bytes.fromhex(k) for k in seat["keys"]]
    inverse = g.scalar_invert(scalar)
    witnesses = [g.scalar_mul(inverse, k) for k in keys]
    context = bytes.fromhex(base["context"])
    a_point = bytes.fromhex(base["public_scalar"])
    nonce_seed = bytes.fromhex(seat["nonce_seed"])
    copied = list(outputs)
    copied[2] = g.mul(witnesses[2], inputs[0])
    copy_proof = prove_rekey(context, inputs, copied, a_point, key_points, witnesses, nonce_seed)
    wrong_keys = [*key_points[:1], key_points[2], *key_points[2:]]
    hidden_copy = cancelling_copy_attack(
        context, inputs, copied, a_point, key_points, witnesses, proof, 2, 3, [1] * (2 * size)
    )
    assert rekey_batch_holds(
        context, inputs, copied, a_point, key_points, hidden_copy, [1] * (2 * size)
    )
    assert not rekey_batch_holds(
        context, inputs, copied, a_point, key_points, hidden_copy, fresh_weights(2 * size)
    )
    cases = [
        case("proof one byte short", base, run_rekey, proof=hx(proof[:-1])),
        case("proof one position long", base, run_rekey, proof=hx(proof + proof[:96])),
        *(
            case(
                f"bit 0 of {('R', 'S', 's')[i % 3]}_{i // 3} flipped",
                base,
                run_rekey,
                proof=hx(put(proof, i, flip(item(proof, i)))),
            )
            for i in range(3 * size)
        ),
        case("R_1 is the identity", base, run_rekey, proof=hx(put(proof, 3, g.IDENTITY))),
        case("S_2 is the identity", base, run_rekey, proof=hx(put(proof, 7, g.IDENTITY))),
        case(
            "R_0 with bit 255 set", base, run_rekey, proof=hx(put(proof, 0, alias(item(proof, 0))))
        ),
        case(
            "S_1 a field element >= p",
            base,
            run_rekey,
            proof=hx(put(proof, 4, NOT_CANONICAL_FIELD)),
        ),
        case(
            "R_1 + B (a valid point, not the commitment)",
            base,
            run_rekey,
            proof=hx(put(proof, 3, g.add(item(proof, 3), g.BASE))),
        ),
        case("s_1 = L", base, run_rekey, proof=hx(put(proof, 5, le(L)))),
        case(
            "s_3 + L (same residue)",
            base,
            run_rekey,
            proof=hx(put(proof, 11, le(int.from_bytes(item(proof, 11), "little") + L))),
        ),
        case(
            "copy attack at position 2 hidden by a cancelling error at position 3, "
            "for the batch weights all 1",
            base,
            run_rekey,
            outputs=hxs(copied),
            proof=hx(hidden_copy),
        ),
        case(
            "copy attack: position 2 holds position 0's card under key 2",
            base,
            run_rekey,
            outputs=hxs(copied),
            proof=hx(copy_proof),
        ),
        case(
            "the key point of position 1 replaced by that of position 2",
            base,
            run_rekey,
            key_points=hxs(wrong_keys),
        ),
        case(
            "the public scalar point of another seat",
            base,
            run_rekey,
            public_scalar=deck["seats"][0]["public_scalar"],
        ),
        case(
            "another game", base, run_rekey, context=hx(mp.deck_context(OTHER_GAME, 1, "shuffle2"))
        ),
        case("another stage", base, run_rekey, context=hx(mp.deck_context(GAME_ID, 1, "shuffle1"))),
        case(
            "two positions' proofs swapped",
            base,
            run_rekey,
            proof=hx(proof[96:192] + proof[:96] + proof[192:]),
        ),
        case("output 3 is the identity", base, run_rekey, outputs=hxs([*outputs[:3], g.IDENTITY])),
        case(
            "key point 1 with bit 255 set",
            base,
            run_rekey,
            key_points=hxs([key_points[0], alias(key_points[1]), *key_points[2:]]),
        ),
    ]
    valid = {
        **base,
        "witness": {
            "scalar": seat["scalar"],
            "witnesses": hxs(witnesses),
            "nonce_seed": seat["nonce_seed"],
        },
    }
    assert run_rekey(base)["error"] is None
    return valid, cases


# -- group, transcript, generators --------------------------------------------------------------


def group_vectors() -> dict[str, Any]:
    parts = [b"moska-p2p/vectors", b"", bytes(range(40))]
    return {
        "order": str(L),
        "base": hx(g.BASE),
        "hash_to_point": {"parts": hxs(parts), "point": hx(g.hash_to_point(*parts))},
        "hash_to_scalar": {"parts": hxs(parts), "scalar": hx(g.hash_to_scalar(*parts))},
    }


def transcript_vectors() -> dict[str, Any]:
    domain = b"moska-p2p/vectors/transcript"
    t = Transcript(domain)
    absorbed = b"moska-p2p/v2/fs\x00" + struct.pack(">I", len(domain)) + domain
    ops: list[dict[str, Any]] = []

    def lp(x: bytes) -> bytes:
        return struct.pack(">I", len(x)) + x

    t.append(b"context", b"hello")
    absorbed += b"\x01" + lp(b"context") + lp(b"hello")
    ops.append({"op": "append", "label": hx(b"context"), "data": hx(b"hello")})
    items = [g.BASE, b"", b"\x01\x02"]
    t.append_list(b"list", items)
    absorbed += b"\x02" + lp(b"list") + struct.pack(">I", len(items)) + b"".join(map(lp, items))
    ops.append({"op": "append_list", "label": hx(b"list"), "items": hxs(items)})
    before = absorbed
    ops.append(
        {"op": "challenge_scalar", "label": hx(b"c"), "scalar": hx(t.challenge_scalar(b"c"))}
    )
    ops.append(
        {
            "op": "challenge_scalars",
            "label": hx(b"e"),
            "n": 3,
            "scalars": hxs(t.challenge_scalars(b"e", 3)),
        }
    )
    return {"domain": hx(domain), "ops": ops, "absorbed_before_first_challenge": hx(before)}


def generate() -> str:
    deck = honest_shuffle()
    shuffle_valid, shuffle_invalid = shuffle_cases(deck)
    rekey_valid, rekey_invalid = rekey_cases(deck)
    h0, hs, _ = generators(len(CARDS))
    data = {
        "description": (
            "Deck v2 proofs (moska_p2p.crypto: group, fiat_shamir, shuffle_proof, dleq, deck). "
            "Bytes are hex; points and scalars are 32 bytes, scalars little-endian. Each invalid "
            "case is a whole statement and proof with the verifier's expected error and the "
            "position it names (null: the proof fails as a whole). Shuffle fields are named "
            "1-based as in shuffle_proof's docstring (u_k, C_k = Ĉ_k, s'_k, s^_k = ŝ_k); re-keying "
            "positions are deck positions, 0-based."
        ),
        "group": group_vectors(),
        "transcript": transcript_vectors(),
        "generators": {"size": len(CARDS), "h": hxs([h0, *hs])},
        "deck": deck,
        "shuffle": {"valid": shuffle_valid, "invalid": shuffle_invalid},
        "rekey": {"valid": rekey_valid, "invalid": rekey_invalid},
    }
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument("--check", action="store_true", help="compare with the file, write nothing")
    parser.add_argument(
        "--out", type=Path, default=OUT, help="default protocol/vectors/proofs.json"
    )
    args = parser.parse_args()
    text = generate()
    if args.check:
        if not args.out.exists() or args.out.read_text() != text:
            print(f"{args.out} differs from a fresh generation")
            return 1
        print("the proof vectors are up to date")
        return 0
    args.out.write_text(text)
    print(f"{args.out}  {args.out.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
