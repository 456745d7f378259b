"""``crypto.json``: signatures, table id, game id, seating, card points, seed derivations,
a Fiat-Shamir transcript, a small proven shuffle.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import group as grp
from moska_p2p.crypto.fiat_shamir import Transcript
from moska_p2p.crypto.identity import Identity, signing_input, verify
from moska_p2p.crypto.shuffle_proof import generators
from moska_p2p.engine import new_hidden_game
from moska_p2p.engine.encoding import ENCODING_VERSION
from moska_p2p.protocol.config import TableConfig, game_id, table_id
from moska_p2p.protocol.frames import (
    pack,
)
from moska_p2p.protocol.play_phase import transcript_digest
from moska_p2p.protocol.seating import length_prefixed_hash, seat_commitment
from scripts.lib.vectors.base import IDENTITY_SEEDS, TABLE_NONCE, framed, hexes, jv

# -- crypto vectors -----------------------------------------------------------------------------


def strict_vectors() -> list[dict[str, Any]]:
    """Signatures that the Ed25519 equation alone accepts (OpenSSL does), that strict
    verification (PROTOCOL.md §3) refuses; and one that both refuse."""
    neutral = bytes([1]) + bytes(31)
    alice = Identity.from_seed(IDENTITY_SEEDS[0])
    payload = b"any payload at all"
    good = alice.sign("move", payload)
    s = int.from_bytes(good[32:], "little") + grp.GROUP_ORDER
    cases = [
        ("neutral key, R = neutral, S = 0", neutral, neutral + bytes(32)),
        ("S + L (not reduced)", alice.public_bytes, good[:32] + s.to_bytes(32, "little")),
        ("signed for another kind", alice.public_bytes, alice.sign("leave", payload)),
    ]
    out = []
    for name, key, signature in cases:
        try:
            Ed25519PublicKey.from_public_bytes(key).verify(
                signature, signing_input("move", payload)
            )
            equation = True
        except (InvalidSignature, ValueError):
            equation = False
        assert not verify(key, "move", payload, signature), name
        out.append(
            {
                "name": name,
                "public_key": key.hex(),
                "kind": "move",
                "payload": payload.hex(),
                "signature": signature.hex(),
                "equation_alone_accepts": equation,
                "strict_accepts": False,
            }
        )
    assert verify(alice.public_bytes, "move", payload, good)
    return out


def fiat_shamir_vector() -> dict[str, Any]:
    """A transcript with each operation once, the bytes S it absorbs and the challenges."""
    domain = b"moska-p2p/v2/example"
    label, data = b"label", b"data"
    list_label, items = b"items", [b"a", b"bc", b""]
    transcript = Transcript(domain)
    transcript.append(label, data)
    transcript.append_list(list_label, items)
    state = (
        b"moska-p2p/v2/fs\x00"
        + grp.length_prefixed(domain)
        + b"\x01"
        + grp.length_prefixed(label, data)
        + b"\x02"
        + grp.length_prefixed(list_label)
        + struct.pack(">I", len(items))
        + grp.length_prefixed(*items)
    )
    first = transcript.challenge_scalar(b"c")
    digest = hashlib.sha512(state + b"\x03" + grp.length_prefixed(b"c") + bytes(4)).digest()
    assert first == (int.from_bytes(digest, "little") % grp.GROUP_ORDER).to_bytes(32, "little")
    second = transcript.challenge_scalar(b"c")
    return {
        "domain": domain.decode(),
        "operations": [
            {"op": "append", "label": label.decode(), "data": data.hex()},
            {"op": "append_list", "label": list_label.decode(), "items": hexes(items)},
        ],
        "state_before_challenge": state.hex(),
        "first_digest": digest.hex(),
        "challenges": [first.hex(), second.hex()],
    }


def shuffle_vector(gid: bytes) -> dict[str, Any]:
    """A 2-seat, 6-card deck: both passes of both seats with their proofs, and reveals."""
    cards = [12, 25, 33, 40, 47, 51]  # 5C 8D 10D QC KS AS
    seeds = [bytes([0x10 + s]) * 32 for s in range(2)]
    secrets = [mp.DeckSecrets.from_seed(seeds[s], gid, s, len(cards)) for s in range(2)]
    initial = mp.card_points(gid, cards)
    h0, hs, _ = generators(len(cards))
    current = initial
    pass1 = []
    for s in range(2):
        context = mp.deck_context(gid, s, "shuffle1")
        points, proof = mp.pass1(secrets[s], context, current)
        mp.verify_pass1(context, current, points, secrets[s].public_scalar, proof)
        # The argument's first challenges, recomputed as a verifier does (PROTOCOL.md §11.3).
        fs = Transcript(b"moska-p2p/v2/shuffle")
        fs.append(b"context", context)
        fs.append_list(b"inputs", current)
        fs.append_list(b"outputs", points)
        fs.append(b"public-scalar", secrets[s].public_scalar)
        fs.append_list(b"permutation-commitment", [proof[32 * i : 32 * i + 32] for i in range(6)])
        e = fs.challenge_scalars(b"e", len(cards))
        pass1.append(
            {
                "seat": s,
                "context": context.hex(),
                "input": hexes(current),
                "public_scalar": secrets[s].public_scalar.hex(),
                "permutation": list(secrets[s].permutation),
                "output": hexes(points),
                "proof": proof.hex(),
                "challenges_e": hexes(e),
                "challenge_c": proof[32 * 12 : 32 * 13].hex(),
            }
        )
        current = points
    pass2 = []
    for s in range(2):
        context = mp.deck_context(gid, s, "shuffle2")
        points, key_points, proof = mp.pass2(secrets[s], context, current)
        mp.verify_pass2(context, current, points, secrets[s].public_scalar, key_points, proof)
        pass2.append(
            {
                "seat": s,
                "context": context.hex(),
                "input": hexes(current),
                "public_scalar": secrets[s].public_scalar.hex(),
                "output": hexes(points),
                "key_points": hexes(key_points),
                "proof": proof.hex(),
            }
        )
        current = points
    table = mp.card_table(gid, cards)
    faces = [table[mp.unmask(current[j], [sec.keys[j] for sec in secrets])] for j in range(6)]
    perm0, perm1 = secrets[0].permutation, secrets[1].permutation
    assert faces == [cards[perm0[perm1[j]]] for j in range(6)]
    position = 2
    keys = [secrets[s].keys[position] for s in range(2)]
    point = mp.unmask(current[position], keys)
    partial = mp.unmask(current[position], keys[:1])
    assert partial not in table
    wrong = bytearray(keys[1])
    wrong[0] ^= 1
    assert not mp.check_key(bytes(wrong), secrets[1].key_points[position])
    return {
        "game_id": gid.hex(),
        "cards": cards,
        "seeds": hexes(seeds),
        "card_points": hexes(initial),
        "generators": {"H_0": h0.hex(), "G": hexes(hs)},
        "pass1": pass1,
        "pass2": pass2,
        "faces": faces,
        "unmask": {
            "position": position,
            "keys": hexes(keys),
            "point": point.hex(),
            "card": faces[position],
            "with_seat_0_key_only": partial.hex(),
            "wrong_seat_1_key": bytes(wrong).hex(),
        },
    }


def crypto_vectors() -> dict[str, Any]:
    ids = [Identity.from_seed(s) for s in IDENTITY_SEEDS[:3]]
    roster = sorted(i.public_bytes for i in ids)
    config = TableConfig("moska", 3, TABLE_NONCE, {"deck_kill": "on", "limit": "hand"}, 30.0)
    tid = table_id(config, roster)
    nonces = [hashlib.sha256(b"nonce" + key).digest() for key in roster]
    gid = game_id(tid, nonces)
    seat_secrets = [hashlib.sha256(b"seat" + key).digest() for key in roster]
    joint = hashlib.sha256(b"moska-p2p/joint" + b"".join(seat_secrets)).digest()
    seats = sorted(roster, key=lambda k: length_prefixed_hash(joint, k))
    dealer = int.from_bytes(length_prefixed_hash(b"moska-p2p/dealer", joint), "big") % len(roster)

    seed = bytes(range(100, 132))
    small = mp.DeckSecrets.from_seed(seed, gid, 1, 6)
    full = mp.DeckSecrets.from_seed(seed, gid, 1, 52)

    hidden = new_hidden_game("mustamaija", 2, dealer=0)
    frames = [
        framed(b"\x93\xa4seat\xc4\x01a\xc4\x40" + bytes(64)),
        framed(b"\x93\xa4seat\xc4\x01b\xc4\x40" + bytes(64)),
    ]
    payload = b"moska-p2p"
    return {
        "description": ("Hashes, derivations and proofs of PROTOCOL.md sections 3-5, 9-11 and 16."),
        "identity": [
            {
                "seed": IDENTITY_SEEDS[i].hex(),
                "public_key": ids[i].public_bytes.hex(),
                "fingerprint": ids[i].fingerprint,
                "payload": payload.hex(),
                "signatures": {
                    kind: {
                        "signing_input": signing_input(kind, payload).hex(),
                        "signature": ids[i].sign(kind, payload).hex(),
                    }
                    for kind in ("hello", "move")
                },
            }
            for i in range(3)
        ],
        "strict": strict_vectors(),
        "table": {
            "config": jv(config.to_wire()),
            "canonical": config.canonical().hex(),
            "canonical_text": config.canonical()[: -len(TABLE_NONCE)].decode() + "<nonce>",
            "roster_sorted": hexes(roster),
            "table_id": tid.hex(),
        },
        "game": {"table_id": tid.hex(), "nonces": hexes(nonces), "game_id": gid.hex()},
        "seating": {
            "table_id": tid.hex(),
            "seat_secrets": hexes(seat_secrets),
            "seat_commitments": [
                seat_commitment(tid, key, s).hex()
                for key, s in zip(roster, seat_secrets, strict=True)
            ],
            "joint": joint.hex(),
            "sort_keys": [length_prefixed_hash(joint, k).hex() for k in roster],
            "seats": hexes(seats),
            "dealer": dealer,
        },
        "card_points": {
            "game_id": gid.hex(),
            "points": [mp.card_point(gid, c).hex() for c in range(52)],
        },
        "secrets": {
            "seed": seed.hex(),
            "game_id": gid.hex(),
            "seat": 1,
            "size": 6,
            "pass1_scalar": small.scalar.hex(),
            "pass1_scalar_inverse": small.scalar_inverse.hex(),
            "public_scalar": small.public_scalar.hex(),
            "keys": hexes(small.keys),
            "key_points": hexes(small.key_points),
            "permutation": list(small.permutation),
            "permutation_52": list(full.permutation),
            "key_51_of_52": full.keys[51].hex(),
            "nonce_seed": small.nonce_seed.hex(),
            "context_shuffle1": mp.deck_context(gid, 1, "shuffle1").hex(),
            "context_shuffle2": mp.deck_context(gid, 1, "shuffle2").hex(),
        },
        "base_point": grp.BASE.hex(),
        "fiat_shamir": fiat_shamir_vector(),
        "shuffle": shuffle_vector(gid),
        "hashes": {
            "payload_hash_of_empty_map": hashlib.sha256(pack({})).hexdigest(),
            "transcript_frames": hexes(frames),
            "transcript_digest": transcript_digest(frames).hex(),
        },
        "state": {
            "encoding_version": ENCODING_VERSION,
            "game": "new_hidden_game('mustamaija', 2, dealer=0) before any reveal",
            "encoding": hidden.encode_public().hex(),
            "state_hash": hidden.state_hash(),
        },
    }
