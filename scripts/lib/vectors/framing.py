"""``framing.json``: signed frames of every message type with their decoding, and invalid
frames.
"""

from __future__ import annotations

import hashlib
import struct
from typing import Any

import msgpack

from moska_p2p.crypto.identity import Identity, signing_input
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.frames import (
    MAX_FRAME,
    MAX_PAYLOAD_OF,
    FrameDecoder,
    FrameError,
    open_frame,
    pack,
)
from scripts.lib.vectors.base import IDENTITY_SEEDS, Table, framed, jv, message, signed_as

# -- framing vectors -----------------------------------------------------------------------------


def frame_entry(
    name: str, frame: bytes, seeds: dict[bytes, bytes], note: str = ""
) -> dict[str, Any]:
    kind, payload, signature = open_frame(frame[4:])
    msg = m.parse_payload(payload)
    raw = msgpack.unpackb(payload, raw=False)
    entry = {
        "name": name,
        "frame": frame.hex(),
        "length": len(frame) - 4,
        "kind": kind,
        "payload": payload.hex(),
        "signature": signature.hex(),
        "signing_input_sha256": hashlib.sha256(signing_input(kind, payload)).hexdigest(),
        "payload_sha256": hashlib.sha256(payload).hexdigest(),
        "signer_seed": seeds[msg.sender].hex(),
        "signer_public_key": msg.sender.hex(),
        "signer_fingerprint": Identity.from_seed(seeds[msg.sender]).fingerprint,
        "message": jv(raw),
    }
    if note:
        entry["note"] = note
    return entry


def invalid_frames() -> list[dict[str, Any]]:
    signer = Identity.from_seed(IDENTITY_SEEDS[0])
    good = {
        "v": 2,
        "g": bytes(32),
        "f": signer.public_bytes,
        "s": 1,
        "p": bytes(32),
        "t": "seat",
        "b": {"secret": bytes(32)},
        "h": [[1, bytes(8)], [0, b""]],
    }

    def raw(value: Any) -> bytes:
        packed: bytes = msgpack.packb(value, use_bin_type=True)
        return packed

    def signed(payload: bytes, kind: str = "seat") -> bytes:
        return signed_as(signer, kind, payload)

    def envelope(kind: str = "seat", **changes: Any) -> bytes:
        msg = dict(good)
        for key, value in changes.items():
            if value is ...:
                del msg[key]
            else:
                msg[key] = value
        return signed(raw(msg), kind)

    def body(kind: str, fields: dict[str, Any]) -> bytes:
        return envelope(kind, t=kind, b=fields)

    def hello(**changes: Any) -> bytes:
        fields = {
            "name": "",
            "nonce": bytes(32),
            "seat_commit": bytes(32),
            "config": {},
            "roster": [],
        }
        return body("hello", fields | changes)

    nested: Any = []
    for _ in range(33):
        nested = [nested]
    sig = bytes(64)
    cases: list[tuple[str, bytes, str, str]] = [
        # (name, bytes, where it fails: stream | frame | message, error substring)
        ("length over the cap", struct.pack(">I", MAX_FRAME + 1), "stream", "over the limit"),
        ("body is a map", framed(raw({"kind": "seat", "sig": sig})), "frame", "must be an array"),
        ("body of two items (v1)", framed(raw([b"x", sig])), "frame", "got list of 2"),
        ("body of four items", framed(raw(["seat", b"x", sig, b""])), "frame", "array"),
        ("kind is bin", framed(raw([b"seat", b"x", sig])), "frame", "kind must be str"),
        ("unknown kind", framed(raw(["chat", b"x", sig])), "frame", "unknown frame kind"),
        ("kind with a NUL", framed(raw(["seat\x00", b"x", sig])), "frame", "unknown frame kind"),
        ("payload is str", framed(raw(["seat", "x", sig])), "frame", "payload must be bin"),
        (
            "payload over its kind's cap",
            framed(raw(["seat", bytes(MAX_PAYLOAD_OF["seat"] + 1), sig])),
            "frame",
            "over the limit of 256",
        ),
        ("signature of 63 bytes", framed(raw(["seat", b"x", bytes(63)])), "frame", "64 bytes"),
        (
            "trailing byte after the body",
            framed(raw(["seat", b"x", sig]) + b"\x00"),
            "frame",
            "trailing",
        ),
        (
            "payload not msgpack (0xc1)",
            framed(raw(["seat", b"\xc1", sig])),
            "message",
            "reserved type",
        ),
        ("payload truncated", framed(raw(["seat", b"\x92\x01", sig])), "message", "truncated"),
        ("payload is an array", signed(b"\x93\x01\x02\x03"), "message", "must be a map"),
        ("map key is an int", signed(b"\x81\x01\x01"), "message", "map keys must be str"),
        ("duplicate map key", signed(b"\x82\xa1v\x01\xa1v\x01"), "message", "duplicate map key"),
        ("extension type", signed(b"\xd4\x05\x00"), "message", "extension types"),
        ("timestamp extension", signed(b"\xd6\xff\x00\x00\x00\x00"), "message", "Timestamp"),
        ("NaN", signed(b"\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00"), "message", "float nan"),
        ("infinity", signed(b"\xcb\x7f\xf0\x00\x00\x00\x00\x00\x00"), "message", "float inf"),
        ("invalid UTF-8 in a str", signed(b"\xa2\xc3\x28"), "message", "UTF-8"),
        ("nested 33 deep", signed(raw(nested)), "message", "nested deeper than 32"),
        ("missing envelope field", envelope(p=...), "message", "fields v g f s p t b h"),
        ("no heads (a v1 envelope)", envelope(h=...), "message", "fields v g f s p t b h"),
        ("extra envelope field", envelope(x=1), "message", "fields v g f s p t b h"),
        ("heads of 7 entries", envelope(h=[[0, b""]] * 7), "message", "more than 6"),
        ("a head's hash of 7 bytes", envelope(h=[[1, bytes(7)]]), "message", "8 bytes"),
        ("a head's hash for count 0", envelope(h=[[0, bytes(8)]]), "message", "none for count 0"),
        ("a head of 3 items", envelope(h=[[1, bytes(8), 0]]), "message", "more than 2"),
        ("version 1", envelope(v=1), "message", "protocol version 1 is not 2"),
        ("version as float", envelope(v=2.0), "message", "v must be an integer"),
        ("game id of 31 bytes", envelope(g=bytes(31)), "message", "g must be 32 bytes"),
        ("sender as str", envelope(f=signer.public_bytes.hex()), "message", "f must be bytes"),
        ("seq as str", envelope(s="1"), "message", "s must be an integer"),
        ("seq as bool", envelope(s=True), "message", "s must be an integer"),
        ("seq negative", envelope(s=-1), "message", "out of range"),
        ("seq over 2^20", envelope(s=(1 << 20) + 1), "message", "out of range"),
        ("unknown type", envelope(t="chat"), "message", 'unknown message type "chat"'),
        (
            "commit (v1) is no longer a type",
            envelope(t="commit", b={"seed": bytes(32)}),
            "message",
            'unknown message type "commit"',
        ),
        ("body not a map", envelope(b=[]), "message", "body must be a map"),
        ("body field missing", body("seat", {}), "message", "missing ['secret']"),
        ("body field extra", body("seat", {"secret": bytes(32), "x": 1}), "message", "unexpected"),
        ("seat secret of 33 bytes", body("seat", {"secret": bytes(33)}), "message", "33"),
        ("hello name of 41 characters", hello(name="x" * 41), "message", "longer than 40"),
        ("hello roster of 7 keys", hello(roster=[bytes(32)] * 7), "message", "more than 6"),
        (
            "shuffle1 without its scalar",
            body("shuffle1", {"points": [], "proof": b""}),
            "message",
            "missing ['scalar']",
        ),
        (
            "shuffle1 proof over 6816 bytes",
            body("shuffle1", {"scalar": bytes(32), "points": [], "proof": bytes(6817)}),
            "message",
            "at most 6816",
        ),
        (
            "shuffle2 key point of 31 bytes",
            body("shuffle2", {"points": [], "keys": [bytes(31)], "proof": b""}),
            "message",
            "31",
        ),
        (
            "shuffle2 of 53 points",
            body("shuffle2", {"points": [bytes(32)] * 53, "keys": [], "proof": b""}),
            "message",
            "more than 52",
        ),
        ("keys position 52", body("keys", {"keys": [[52, bytes(32)]]}), "message", "out of range"),
        ("keys entry of 3", body("keys", {"keys": [[1, bytes(32), 0]]}), "message", "more than 2"),
        ("keys 53 entries", body("keys", {"keys": [[0, bytes(32)]] * 53}), "message", "52"),
        ("disclose key of 33 bytes", body("disclose", {"keys": [[0, bytes(33)]]}), "message", "33"),
        ("claim rank 13", body("claim", {"rank": 13, "card": None}), "message", "out of range"),
        (
            "move state of 31 bytes",
            body("move", {"move": "take", "state": bytes(31), "cards": []}),
            "message",
            "31",
        ),
        (
            "result losers seat 6",
            body("result", {"state": bytes(32), "losers": [6], "transcript": bytes(32)}),
            "message",
            "out of range",
        ),
        ("leave reason of 201", body("leave", {"reason": "x" * 201}), "message", "longer than 200"),
        (
            "verdict with 7 evidence frames",
            body(
                "verdict",
                {"kind": "timeout", "culprits": [], "reason": "", "evidence": [b"x"] * 7},
            ),
            "message",
            "more than 6",
        ),
        (
            "verdict kind of 41 characters",
            body("verdict", {"kind": "x" * 41, "culprits": [], "reason": "", "evidence": []}),
            "message",
            "longer than 40",
        ),
        (
            "verdict relayed naming a key twice",
            body(
                "verdict",
                {
                    "kind": "timeout",
                    "culprits": [],
                    "reason": "",
                    "evidence": [],
                    "relayed": [bytes(32)] * 2,
                },
            ),
            "message",
            "names a key twice",
        ),
    ]
    for name, data, where, error in cases:  # each fails where and as recorded
        try:
            [frame_body] = FrameDecoder().feed(data)
            assert where != "stream", name
            _, payload, _ = open_frame(frame_body)
            assert where != "frame", name
            m.parse_payload(payload)
        except FrameError as refused:
            assert error in str(refused), (name, str(refused))
        else:
            raise AssertionError(f"{name} was accepted")
    return [
        {"name": name, "bytes": data.hex(), "fails_at": where, "error": error}
        for name, data, where, error in cases
    ]


FRAME_NAMES = (
    "hello",
    "seat",
    "shuffle1",
    "shuffle2",
    "keys",
    "claim",
    "claim-shown",
    "move",
    "move-without-cards",
    "disclose",
    "result",
    "leave",
    "wait",
    "verdict",
    "silent",
)


def framing_vectors(durak: Table, disclosing: Table) -> dict[str, Any]:
    seeds = {Identity.from_seed(s).public_bytes: s for s in IDENTITY_SEEDS}
    chosen: dict[str, bytes] = {}
    notes: dict[str, str] = {}
    for frame in durak.watched.transcript + disclosing.watched.transcript:
        msg = message(frame)
        name = msg.type
        if msg.type == m.CLAIM and msg.body.card is not None:
            name = "claim-shown"  # a D3 claim that shows a card
        elif msg.type == m.MOVE and not msg.body.cards:
            name = "move-without-cards"
        chosen.setdefault(name, frame)
    notes["disclose"] = "from the game of games.json whose loser discloses a denied position"
    # A leave and a verdict, signed as the next messages of peer 1 after its result (valid
    # frames; no honest peer would send them then).
    leaver = durak.peers[1]
    chosen[m.LEAVE] = leaver.craft(m.LEAVE, {"reason": "closed the window"})
    notes[m.LEAVE] = "crafted: peer 1's next message after its result"
    chosen[m.VERDICT] = leaver.craft(
        m.VERDICT,
        {
            "kind": v.TIMEOUT,
            "culprits": [durak.peers[2].me],
            "reason": "did not answer within 30 s",
            "evidence": [],
            "relayed": [durak.peers[2].me],
        },
        seq=message(chosen[m.LEAVE]).seq,
    )
    notes[m.VERDICT] = (
        "crafted: what peer 1 would sign, in place of the leave, naming peer 2, which it"
        " reached through a relay (relayed)"
    )
    chosen[m.WAIT] = leaver.craft(m.WAIT, {}, seq=message(chosen[m.LEAVE]).seq)
    notes[m.WAIT] = "crafted: what peer 1 would sign, in place of the leave, if it were stuck"
    chosen[m.SILENT] = leaver.craft(
        m.SILENT,
        {"culprit": durak.peers[2].me, "point": durak.peers[1].peers[durak.peers[2].me].last_act},
        seq=message(chosen[m.LEAVE]).seq,
    )
    notes[m.SILENT] = (
        "crafted: what peer 1 would sign, in place of the leave, had peer 2 gone silent after"
        " its last act (its result)"
    )
    raw_example = Identity.from_seed(bytes(32))
    raw_payload = pack({"reason": "bedtime"})
    raw_frame = signed_as(raw_example, "leave", raw_payload)
    return {
        "description": (
            "Signed frames of every message type (from the durak games of games.json, "
            "seat-keys of identity_seed bytes([i+1])*32) with their decoding, and invalid "
            "inputs. 'message' is the decoded payload in the JSON form of PROTOCOL.md section "
            "18; the signature covers 'moska-p2p/v2/' + kind + 00 + payload."
        ),
        "protocol_version": m.VERSION,
        "framing_only": {
            "note": "framing without the protocol envelope: the frames.py doctest",
            "signer_seed": bytes(32).hex(),
            "signer_public_key": raw_example.public_bytes.hex(),
            "kind": "leave",
            "frame": raw_frame.hex(),
            "payload": raw_payload.hex(),
            "signing_input": signing_input("leave", raw_payload).hex(),
            "signature": raw_frame[-64:].hex(),
            "value": {"reason": "bedtime"},
        },
        "frames": [
            frame_entry(name, chosen[name], seeds, notes.get(name, "")) for name in FRAME_NAMES
        ],
        "invalid": invalid_frames(),
    }
