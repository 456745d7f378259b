#!/usr/bin/env python3
"""Generate the wire protocol's test vectors in ``protocol/vectors/`` (protocol version 1).

Everything is deterministic: identities come from fixed seeds (``Identity.from_seed``), every
peer's nonce, seat secret and deck seed from its per-game secret ``SHA-256(f"{seed}/{index}")``
(``make_peers(..., seed=...)`` seeds each peer's DRBG so), the table nonce is fixed and moves are
drawn by a seeded chooser defined here (not a bot of ``moska_p2p.bots``, so that the vectors do
not move when the bots do). Only the protocol and the rules engine shape them.

    python scripts/make_vectors.py            # (re)write protocol/vectors/
    python scripts/make_vectors.py --check    # regenerate in memory, compare with the files

Files written (``protocol/README.md`` describes them, ``protocol/PROTOCOL.md`` §16 their JSON
conventions):

- ``framing.json``  signed frames of every message type with their decoding, and invalid frames
- ``crypto.json``   table id, game id, seating, card points, seed derivations, a small shuffle
- ``attacks.json``  frame sequences delivered to one peer, with the outcome an observer reaches
- ``games.json`` with ``game-*.moska``: whole-game transcripts and what ``verify`` reports
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import struct
import sys
import tempfile
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgpack

from moska_p2p.crypto import deck as mp
from moska_p2p.crypto.identity import Identity
from moska_p2p.engine import new_hidden_game
from moska_p2p.engine.encoding import ENCODING_VERSION
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig, game_id, table_id
from moska_p2p.protocol.frames import (
    MAX_FRAME,
    FrameDecoder,
    FrameError,
    encode_frame,
    open_frame,
    pack,
)
from moska_p2p.protocol.session import (
    STAGES,
    STOPPED,
    PeerSession,
    _hand_cards,
    _hash,
    drbg,
    transcript_digest,
)
from moska_p2p.protocol.simulate import make_peers
from moska_p2p.protocol.transcript import verify_transcript, write_transcript

OUT = Path(__file__).resolve().parent.parent / "protocol" / "vectors"
IDENTITY_SEEDS = [bytes([i + 1]) * 32 for i in range(6)]
OUTSIDER_SEED = bytes([0xEE]) * 32  # an identity on no roster
TABLE_NONCE = bytes(range(32))
OTHER_GAME = hashlib.sha256(b"another game").digest()


# -- JSON form of msgpack values (PROTOCOL.md §16) ---------------------------------------------


def jv(value: Any) -> Any:
    """A msgpack value as JSON: bin -> {"bin": hex}, float -> {"float": x}, the rest as is."""
    if isinstance(value, bytes):
        return {"bin": value.hex()}
    if isinstance(value, float):
        return {"float": value}
    if isinstance(value, list | tuple):
        return [jv(item) for item in value]
    if isinstance(value, dict):
        return {key: jv(item) for key, item in value.items()}
    return value


def stage_name(session: PeerSession) -> str:
    return "stopped" if session.stage == STOPPED else STAGES[session.stage]


def message(frame: bytes) -> m.Message:
    payload, _ = open_frame(frame[4:])
    return m.parse_payload(payload)


def framed(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


# -- an in-memory table that records what one peer saw ------------------------------------------


class Table:
    """Peers wired in memory with FIFO delivery, recording the frames one watched peer saw: every
    frame delivered to it (exact repeats left out) and every frame it signed, in order."""

    def __init__(
        self,
        preset: str,
        players: int,
        *,
        seed: int,
        watch: int = 0,
        timeout: float = 30.0,
        **options: str,
    ) -> None:
        self.config = TableConfig(preset, players, TABLE_NONCE, options, timeout)
        self.identities = [Identity.from_seed(s) for s in IDENTITY_SEEDS[:players]]
        self.peers = make_peers(self.config, self.identities, seed=seed)
        self.secrets = [(p._nonce, p._seat_secret, p._seed) for p in self.peers]
        # make_peers seeds each peer's DRBG with SHA-256(f"{seed}/{index}"): the per-game
        # secret from which a peer draws its nonce, seat secret and deck seed, in that order.
        self.game_secrets = [
            hashlib.sha256(f"{seed}/{i}".encode()).digest() for i in range(players)
        ]
        for secret, drawn in zip(self.game_secrets, self.secrets, strict=True):
            assert drbg(secret)(96) == b"".join(drawn), "make_peers no longer seeds as assumed"
        self.seed = seed
        self.watch = watch
        self.queue: deque[tuple[int, int, bytes]] = deque()
        self.steps: list[dict[str, Any]] = []
        self._logged: set[bytes] = set()
        self.tamper: Callable[[int, int, bytes], list[bytes]] | None = None
        self.chooser = random.Random(seed)
        self.clock = 0.0

    @property
    def watched(self) -> PeerSession:
        return self.peers[self.watch]

    def _log(self, frame: bytes, force: bool = False) -> None:
        if force or frame not in self._logged:
            self._logged.add(frame)
            self.steps.append({"frame": frame, "now": self.clock})

    def emit(self, index: int, outputs: list[v.Output]) -> None:
        for out in outputs:
            if isinstance(out, v.Send):
                if index == self.watch and message(out.frame).sender == self.peers[index].me:
                    self._log(out.frame)
                for other in range(len(self.peers)):
                    if other != index:
                        self.queue.append((index, other, out.frame))

    def start(self, only: Sequence[int] | None = None) -> None:
        for index, peer in enumerate(self.peers):
            if only is None or index in only:
                self.emit(index, peer.start(self.clock))

    def deliver(self, target: int, frame: bytes, force: bool = False) -> list[v.Output]:
        if target == self.watch:
            self._log(frame, force)
        outputs = self.peers[target].receive(frame, self.clock)
        self.emit(target, outputs)
        return outputs

    def settle(self, limit: int = 1_000_000) -> None:
        for _ in range(limit):
            if not self.queue:
                return
            source, target, frame = self.queue.popleft()
            frames = self.tamper(source, target, frame) if self.tamper else [frame]
            for item in frames:
                self.deliver(target, item)
        raise RuntimeError("the table did not settle")

    def inject(self, frame: bytes, force: bool = False) -> None:
        """Deliver a crafted frame to every peer but its signer, the watched peer first."""
        sender = message(frame).sender if len(frame) > 4 else b""
        order = [self.watch] + [i for i in range(len(self.peers)) if i != self.watch]
        for index in order:
            if self.peers[index].me != sender:
                self.deliver(index, frame, force)
        self.settle()

    def to_act(self) -> int | None:
        return next((i for i, p in enumerate(self.peers) if p.my_turn), None)

    def step(self) -> bool:
        """One move by the peer whose turn it is (a seeded choice among its legal moves)."""
        self.settle()
        index = self.to_act()
        if index is None:
            return False
        moves = self.peers[index].legal_moves()
        move = moves[self.chooser.randrange(len(moves))]
        self.emit(index, self.peers[index].play(move, self.clock))
        self.settle()
        return True

    def play_out(self, max_moves: int = 5000) -> None:
        for _ in range(max_moves):
            if not self.step():
                break
        self.settle()

    def peers_json(self) -> list[dict[str, Any]]:
        out = []
        for index, (identity, peer) in enumerate(zip(self.identities, self.peers, strict=True)):
            nonce, seat_secret, seed = self.secrets[index]
            out.append(
                {
                    "identity_seed": IDENTITY_SEEDS[index].hex(),
                    "game_secret": self.game_secrets[index].hex(),
                    "public_key": identity.public_bytes.hex(),
                    "fingerprint": identity.fingerprint,
                    "name": peer.name,
                    "nonce": nonce.hex(),
                    "seat_secret": seat_secret.hex(),
                    "deck_seed": seed.hex(),
                    "seat": peer.my_seat,
                }
            )
        return out


# -- replaying steps on an observer --------------------------------------------------------------


def observe(config: TableConfig, roster: Sequence[bytes], steps: Sequence[dict[str, Any]]):  # type: ignore[no-untyped-def]
    observer = PeerSession(None, config, roster)
    outputs = []
    for step in steps:
        if "tick" in step:
            outputs.append(observer.tick(step["tick"]))
        else:
            outputs.append(observer.receive(step["frame"], step["now"]))
    return observer, outputs


def steps_json(steps: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for step in steps:
        if "tick" in step:
            out.append({"tick": step["tick"]})
        elif step["now"]:
            out.append({"frame": step["frame"].hex(), "now": step["now"]})
        else:
            out.append({"frame": step["frame"].hex()})
    return out


def outcome(
    table: Table, steps: Sequence[dict[str, Any]], expect_step: int | None = None
) -> dict[str, Any]:
    """The outcome an observer reaches on ``steps``, checked against the watched peer."""
    observer, outputs = observe(table.config, [i.public_bytes for i in table.identities], steps)
    rejected = [
        {"step": i, "reason": out.reason}
        for i, outs in enumerate(outputs)
        for out in outs
        if isinstance(out, v.Rejected)
    ]
    stops = [
        (i, out.verdict)
        for i, outs in enumerate(outputs)
        for out in outs
        if isinstance(out, v.Stopped)
    ]
    result: dict[str, Any] = {"rejected": rejected, "final_stage": stage_name(observer)}
    if stops:
        at, verdict = stops[0]
        frames = [s.get("frame") for s in steps]
        result["verdict"] = {
            "step": at,
            "kind": verdict.kind,
            "seats": list(verdict.seats),
            "keys": [k.hex() for k in verdict.keys],
            "reason": verdict.reason,
            "evidence_steps": [frames.index(f) for f in verdict.evidence],
        }
        honest = table.watched.verdict
        assert honest is not None, "the watched peer gave no verdict"
        assert (honest.kind, honest.seats, honest.keys) == (
            verdict.kind,
            verdict.seats,
            verdict.keys,
        ), (honest, verdict)
    else:
        result["verdict"] = None
        assert table.watched.verdict is None, table.watched.verdict
    if expect_step is not None:
        result["ignored_step"] = expect_step
        assert outputs[expect_step] == [], outputs[expect_step]
    return result


# -- framing vectors -----------------------------------------------------------------------------


def frame_entry(
    name: str, frame: bytes, seeds: dict[bytes, bytes], note: str = ""
) -> dict[str, Any]:
    payload, signature = open_frame(frame[4:])
    msg = m.parse_payload(payload)
    raw = msgpack.unpackb(payload, raw=False)
    entry = {
        "name": name,
        "frame": frame.hex(),
        "length": len(frame) - 4,
        "payload": payload.hex(),
        "signature": signature.hex(),
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
        "v": 1,
        "g": bytes(32),
        "f": signer.public_bytes,
        "s": 1,
        "p": bytes(32),
        "t": "seat",
        "b": {"secret": bytes(32)},
    }

    def signed(payload: bytes) -> bytes:
        return encode_frame(payload, signer.sign(payload))

    def raw(value: Any) -> bytes:
        return msgpack.packb(value, use_bin_type=True)

    def envelope(**changes: Any) -> bytes:
        msg = dict(good)
        for key, value in changes.items():
            if value is ...:
                del msg[key]
            else:
                msg[key] = value
        return signed(raw(msg))

    def body(kind: str, fields: dict[str, Any]) -> bytes:
        return envelope(t=kind, b=fields)

    nested: Any = []
    for _ in range(33):
        nested = [nested]
    sig = bytes(64)
    cases: list[tuple[str, bytes, str, str]] = [
        # (name, bytes, where it fails: stream | frame | message, error substring)
        ("length over the cap", struct.pack(">I", MAX_FRAME + 1), "stream", "over the limit"),
        ("body is a map", framed(raw({"payload": b"", "sig": sig})), "frame", "must be an array"),
        ("body has three items", framed(raw([b"x", sig, b""])), "frame", "array"),
        ("payload is str", framed(raw(["x", sig])), "frame", "payload must be bin"),
        ("signature of 63 bytes", framed(raw([b"x", bytes(63)])), "frame", "signature is 64 bytes"),
        ("trailing byte after the body", framed(raw([b"x", sig]) + b"\x00"), "frame", "trailing"),
        ("payload not msgpack (0xc1)", framed(raw([b"\xc1", sig])), "message", "reserved type"),
        ("payload truncated", framed(raw([b"\x92\x01", sig])), "message", "truncated"),
        ("payload is an array", signed(b"\x93\x01\x02\x03"), "message", "must be a map"),
        ("map key is an int", signed(b"\x81\x01\x01"), "message", "map keys must be str"),
        ("duplicate map key", signed(b"\x82\xa1v\x01\xa1v\x01"), "message", "duplicate map key"),
        ("extension type", signed(b"\xd4\x05\x00"), "message", "extension types"),
        ("timestamp extension", signed(b"\xd6\xff\x00\x00\x00\x00"), "message", "Timestamp"),
        ("NaN", signed(b"\xcb\x7f\xf8\x00\x00\x00\x00\x00\x00"), "message", "float nan"),
        ("infinity", signed(b"\xcb\x7f\xf0\x00\x00\x00\x00\x00\x00"), "message", "float inf"),
        ("invalid UTF-8 in a str", signed(b"\xa2\xc3\x28"), "message", "UTF-8"),
        ("nested 33 deep", signed(raw(nested)), "message", "nested deeper than 32"),
        ("missing envelope field", envelope(p=...), "message", "fields v g f s p t b"),
        ("extra envelope field", envelope(x=1), "message", "fields v g f s p t b"),
        ("version 2", envelope(v=2), "message", "protocol version 2"),
        ("version as float", envelope(v=1.0), "message", "v must be an integer"),
        ("game id of 31 bytes", envelope(g=bytes(31)), "message", "g must be 32 bytes"),
        ("sender as str", envelope(f=signer.public_bytes.hex()), "message", "f must be bytes"),
        ("seq as str", envelope(s="1"), "message", "s must be an integer"),
        ("seq as bool", envelope(s=True), "message", "s must be an integer"),
        ("seq negative", envelope(s=-1), "message", "out of range"),
        ("seq over 2^20", envelope(s=(1 << 20) + 1), "message", "out of range"),
        ("unknown type", envelope(t="chat"), "message", 'unknown message type "chat"'),
        ("body not a map", envelope(b=[]), "message", "body must be a map"),
        ("body field missing", body("seat", {}), "message", "missing ['secret']"),
        ("body field extra", body("seat", {"secret": bytes(32), "x": 1}), "message", "unexpected"),
        ("seat secret of 33 bytes", body("seat", {"secret": bytes(33)}), "message", "33"),
        (
            "hello name of 41 characters",
            body(
                "hello",
                {
                    "name": "x" * 41,
                    "nonce": bytes(32),
                    "seat_commit": bytes(32),
                    "config": {},
                    "roster": [],
                },
            ),
            "message",
            "longer than 40",
        ),
        (
            "hello roster of 7 keys",
            body(
                "hello",
                {
                    "name": "",
                    "nonce": bytes(32),
                    "seat_commit": bytes(32),
                    "config": {},
                    "roster": [bytes(32)] * 7,
                },
            ),
            "message",
            "more than 6",
        ),
        ("keys position 52", body("keys", {"keys": [[52, bytes(32)]]}), "message", "out of range"),
        ("keys entry of 3", body("keys", {"keys": [[1, bytes(32), 0]]}), "message", "more than 2"),
        ("keys 53 entries", body("keys", {"keys": [[0, bytes(32)]] * 53}), "message", "52"),
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
    ]
    for name, data, where, error in cases:  # each fails where and as recorded
        try:
            [frame_body] = FrameDecoder().feed(data)
            assert where != "stream", name
            payload, _ = open_frame(frame_body)
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


def framing_vectors(durak: Table) -> dict[str, Any]:
    seeds = {Identity.from_seed(s).public_bytes: s for s in IDENTITY_SEEDS}
    transcript = durak.watched.transcript
    chosen: dict[str, bytes] = {}
    for frame in transcript:
        msg = message(frame)
        name = msg.type
        if msg.type == m.CLAIM and msg.body["card"] is not None:
            name = "claim-shown"  # a D3 claim that shows a card
        elif msg.type == m.MOVE and not msg.body["cards"]:
            name = "move-without-cards"
        chosen.setdefault(name, frame)
    # A leave, signed as the next message of peer 1 after its result.
    leaver = durak.peers[1]
    chosen[m.LEAVE] = leaver.craft(m.LEAVE, {"reason": "closed the window"})
    raw_example = Identity.from_seed(bytes(32))
    raw_payload = pack({"type": "hello", "seq": 0})
    raw_frame = encode_frame(raw_payload, raw_example.sign(raw_payload))
    return {
        "description": (
            "Signed frames of every message type (from the durak game of games.json, seat-keys "
            "of identity_seed bytes([i+1])*32) with their decoding, and invalid inputs. "
            "'message' is the decoded payload in the JSON form of PROTOCOL.md section 16."
        ),
        "protocol_version": m.VERSION,
        "framing_only": {
            "note": "framing without the protocol envelope: the frames.py doctest",
            "signer_seed": bytes(32).hex(),
            "signer_public_key": raw_example.public_bytes.hex(),
            "frame": raw_frame.hex(),
            "payload": raw_payload.hex(),
            "signature": raw_frame[-64:].hex(),
            "value": {"type": "hello", "seq": 0},
        },
        "frames": [
            frame_entry(name, chosen[name], seeds)
            for name in (
                "hello",
                "seat",
                "commit",
                "shuffle1",
                "shuffle2",
                "keys",
                "claim",
                "claim-shown",
                "move",
                "move-without-cards",
                "audit",
                "result",
                "leave",
            )
        ],
        "invalid": invalid_frames(),
    }


# -- crypto vectors -----------------------------------------------------------------------------


def crypto_vectors() -> dict[str, Any]:
    ids = [Identity.from_seed(s) for s in IDENTITY_SEEDS[:3]]
    roster = sorted(i.public_bytes for i in ids)
    config = TableConfig("moska", 3, TABLE_NONCE, {"deck_kill": "on", "limit": "hand"}, 30.0)
    tid = table_id(config, roster)
    nonces = [hashlib.sha256(b"nonce" + key).digest() for key in roster]
    gid = game_id(tid, nonces)
    seat_secrets = [hashlib.sha256(b"seat" + key).digest() for key in roster]
    joint = hashlib.sha256(b"moska-p2p/joint" + b"".join(seat_secrets)).digest()
    seats = sorted(roster, key=lambda k: _hash(joint, k))
    dealer = int.from_bytes(_hash(b"moska-p2p/dealer", joint), "big") % len(roster)

    seed = bytes(range(100, 132))
    small = mp.DeckSecrets.from_seed(seed, gid, 1, 6)
    full = mp.DeckSecrets.from_seed(seed, gid, 1, 52)

    cards = [12, 25, 33, 40, 47, 51]  # 5C 8D 10D QC KS AS
    seeds = [bytes([0x10 + s]) * 32 for s in range(2)]
    secrets = [mp.DeckSecrets.from_seed(seeds[s], gid, s, len(cards)) for s in range(2)]
    current = mp.card_points(gid, cards)
    pass1_out = []
    for s in range(2):
        current = mp.pass1(secrets[s], current)
        pass1_out.append(current)
    pass2_out, commits = [], []
    for s in range(2):
        current, commitments = mp.pass2(secrets[s], current)
        pass2_out.append(current)
        commits.append(commitments)
    faces = mp.replay_shuffle(
        gid,
        seeds,
        [mp.seed_commitment(seeds[s], gid, s) for s in range(2)],
        pass1_out,
        pass2_out,
        commits,
        len(cards),
        cards,
    )
    position = 2
    keys = [secrets[s].keys[position] for s in range(2)]
    point = mp.unmask(pass2_out[-1][position], keys)
    partial = mp.unmask(pass2_out[-1][position], keys[:1])

    hidden = new_hidden_game("mustamaija", 2, dealer=0)
    frames = [
        framed(b"\x92\xc4\x01a\xc4\x40" + bytes(64)),
        framed(b"\x92\xc4\x01b\xc4\x40" + bytes(64)),
    ]
    return {
        "description": "Hashes and derivations of PROTOCOL.md sections 4, 5, 9-11 and 14.",
        "identity": [
            {
                "seed": IDENTITY_SEEDS[i].hex(),
                "public_key": ids[i].public_bytes.hex(),
                "fingerprint": ids[i].fingerprint,
                "message": b"moska-p2p".hex(),
                "signature": ids[i].sign(b"moska-p2p").hex(),
            }
            for i in range(3)
        ],
        "table": {
            "config": jv(config.to_wire()),
            "canonical": config.canonical().hex(),
            "canonical_text": config.canonical()[: -len(TABLE_NONCE)].decode() + "<nonce>",
            "roster_sorted": [k.hex() for k in roster],
            "table_id": tid.hex(),
        },
        "game": {"table_id": tid.hex(), "nonces": [n.hex() for n in nonces], "game_id": gid.hex()},
        "seating": {
            "seat_secrets": [s.hex() for s in seat_secrets],
            "seat_commitments": [_hash(b"moska-p2p/seat", s).hex() for s in seat_secrets],
            "joint": joint.hex(),
            "sort_keys": [_hash(joint, k).hex() for k in roster],
            "seats": [k.hex() for k in seats],
            "dealer": dealer,
        },
        "card_points": {
            "game_id": gid.hex(),
            "points": [mp.card_point(gid, c).hex() for c in range(52)],
        },
        "seed_commitment": {
            "seed": seed.hex(),
            "game_id": gid.hex(),
            "seat": 1,
            "commitment": mp.seed_commitment(seed, gid, 1).hex(),
        },
        "secrets": {
            "seed": seed.hex(),
            "game_id": gid.hex(),
            "seat": 1,
            "size": 6,
            "pass1_scalar": small.scalar.hex(),
            "pass1_scalar_inverse": small.scalar_inverse.hex(),
            "keys": [k.hex() for k in small.keys],
            "key_commitments": [c.hex() for c in small.key_commitments()],
            "permutation": list(small.permutation),
            "permutation_52": list(full.permutation),
            "key_51_of_52": full.keys[51].hex(),
        },
        "shuffle": {
            "game_id": gid.hex(),
            "cards": cards,
            "seeds": [s.hex() for s in seeds],
            "seed_commitments": [mp.seed_commitment(seeds[s], gid, s).hex() for s in range(2)],
            "input": [p.hex() for p in mp.card_points(gid, cards)],
            "pass1": [[p.hex() for p in out] for out in pass1_out],
            "pass2": [[p.hex() for p in out] for out in pass2_out],
            "key_commitments": [[c.hex() for c in out] for out in commits],
            "faces": faces,
            "unmask": {
                "position": position,
                "keys": [k.hex() for k in keys],
                "point": point.hex(),
                "card": faces[position],
                "with_seat_0_key_only": partial.hex(),
            },
        },
        "hashes": {
            "payload_hash_of_empty_map": hashlib.sha256(pack({})).hexdigest(),
            "transcript_frames": [f.hex() for f in frames],
            "transcript_digest": transcript_digest(frames).hex(),
        },
        "state": {
            "encoding_version": ENCODING_VERSION,
            "game": "new_hidden_game('mustamaija', 2, dealer=0) before any reveal",
            "encoding": hidden.encode_public().hex(),
            "state_hash": hidden.state_hash(),
        },
    }


# -- attack vectors -----------------------------------------------------------------------------

ATTACK_PRESET, ATTACK_PLAYERS, ATTACK_SEED = "durak", 2, 3
HONEST, CHEAT = 0, 1


def attack_table(**kwargs: Any) -> Table:
    return Table(ATTACK_PRESET, ATTACK_PLAYERS, seed=ATTACK_SEED, watch=HONEST, **kwargs)


def rewrite_first(table: Table, kind: str, change: Callable[[dict[str, Any]], None]) -> None:
    """Make the cheater's first ``kind`` message carry ``change``, re-signed with the same
    sequence number and chain, as a cheating client would send it; later messages of the
    cheater are re-signed to follow it."""
    cheat = table.peers[CHEAT]
    renamed: dict[bytes, bytes] = {}
    forged: dict[bytes, bytes] = {}
    state = {"done": False}

    def tamper(source: int, target: int, frame: bytes) -> list[bytes]:
        msg = message(frame)
        if msg.sender != cheat.me:
            return [frame]
        if target == CHEAT:
            return []
        if msg.hash not in forged:
            body = dict(msg.body)
            if msg.type == kind and not state["done"]:
                change(body)
                state["done"] = True
            elif msg.prev not in renamed:
                return [frame]
            prev = renamed.get(msg.prev, msg.prev)
            new = cheat.craft(msg.type, body, seq=msg.seq, prev=prev, game=msg.game)
            forged[msg.hash] = new
            renamed[msg.hash] = message(new).hash
        return [forged[msg.hash]]

    table.tamper = tamper


def until_play(table: Table) -> None:
    table.start()
    table.settle()
    assert table.to_act() is not None


def case(name: str, description: str, table: Table, ignored: int | None = None) -> dict[str, Any]:
    result = outcome(table, table.steps, ignored)
    add_matches(result)
    out = {"name": name, "description": description}
    if table.config != attack_table().config:
        out["config"] = jv(table.config.to_wire())  # this case's own table settings
    return out | {"steps": steps_json(table.steps), "expect": result}


def add_matches(result: dict[str, Any]) -> None:
    for item in result["rejected"]:
        item["match"] = item["reason"].split(":")[0]


def attack_vectors() -> dict[str, Any]:
    cases = []
    outsider = Identity.from_seed(OUTSIDER_SEED)

    # -- frames that are only rejected --
    t = attack_table()
    t.start()
    t.settle()
    first = next(s["frame"] for s in t.steps if message(s["frame"]).sender == t.peers[CHEAT].me)
    t = attack_table()
    t.start()
    bad = bytearray(first)
    bad[-1] ^= 0x55
    t.deliver(HONEST, bytes(bad))
    t.settle()
    cases.append(
        case(
            "forged-signature",
            "The cheater's hello with the last signature byte flipped arrives before the real "
            "one: rejected, nobody blamed, the game goes on to play.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    cheat = t.peers[CHEAT]
    t.inject(cheat.craft(m.KEYS, {"keys": [[0, bytes(32)]]}, game=OTHER_GAME))
    t.step()
    cases.append(
        case(
            "another-game",
            "A well-signed keys message whose g is another game's id: rejected, game goes on.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    cheat = t.peers[CHEAT]
    me = cheat.peers[cheat.me]
    garbage = framed(b"\xc1\xc1\xc1")
    not_a_map = encode_frame(b"\x93\x01\x02\x03", cheat.identity.sign(b"\x93\x01\x02\x03"))  # type: ignore[union-attr]
    wrong = pack(
        {
            "v": 1,
            "g": cheat.game_id,
            "f": cheat.me,
            "s": "seven",
            "p": me.last_hash,
            "t": "keys",
            "b": {"keys": [[0, bytes(32)]]},
        }
    )
    wrong_type = encode_frame(wrong, cheat.identity.sign(wrong))  # type: ignore[union-attr]
    bad_body = pack(
        {
            "v": 1,
            "g": cheat.game_id,
            "f": cheat.me,
            "s": me.next_seq,
            "p": me.last_hash,
            "t": "move",
            "b": {"move": "take", "state": bytes(31), "cards": []},
        }
    )
    bad_body_frame = encode_frame(bad_body, cheat.identity.sign(bad_body))  # type: ignore[union-attr]
    good = cheat.craft(m.KEYS, {"keys": [[0, bytes(32)]]})
    short = struct.pack(">I", len(good) - 3) + good[4:]
    for frame in (garbage, not_a_map, wrong_type, bad_body_frame, short):
        t.deliver(HONEST, frame, force=True)
    t.step()
    cases.append(
        case(
            "malformed",
            "Five malformed frames (not msgpack; a payload that is no map; s of the wrong type; "
            "a move whose state is 31 bytes; a length prefix that does not match): each is "
            "rejected, then the game goes on.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    cheat = t.peers[CHEAT]
    payload = m.encode_payload(
        cheat.game_id,
        outsider.public_bytes,
        0,
        m.NO_PREVIOUS,
        m.LEAVE,
        {"reason": "hi"},  # type: ignore[arg-type]
    )
    t.deliver(HONEST, encode_frame(payload, outsider.sign(payload)))
    payload = m.encode_payload(
        cheat.game_id,
        cheat.me,
        0,
        m.NO_PREVIOUS,
        m.KEYS,
        {"keys": [[0, bytes(32)]]},  # type: ignore[arg-type]
    )
    t.deliver(HONEST, encode_frame(payload, cheat.identity.sign(payload)))  # type: ignore[union-attr]
    t.step()
    cases.append(
        case(
            "unknown-sender-and-first-not-hello",
            "A frame signed by a key not on the roster, then a roster member's seq-0 message "
            "that is not a hello: both rejected.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    t.step()
    cheater_key = t.peers[CHEAT].me
    again = next(s["frame"] for s in reversed(t.steps) if message(s["frame"]).sender == cheater_key)
    t.deliver(HONEST, again, force=True)
    ignored = len(t.steps) - 1
    t.step()
    cases.append(
        case(
            "duplicate",
            "A frame already processed arrives again (a relay or a replay): no output at all.",
            t,
            ignored,
        )
    )

    # -- verdicts --
    t = attack_table()
    t.start()
    cheat = t.peers[CHEAT]
    hello = message(cheat.peers[cheat.me].accepted[0][1])
    other = dict(hello.body, name="another name")
    t.deliver(HONEST, cheat.craft(m.HELLO, other, seq=0, prev=m.NO_PREVIOUS))
    t.settle()
    cases.append(
        case(
            "equivocation-hello",
            "Two different hellos with sequence number 0 from one key: equivocation, before "
            "seats are drawn (seat -1).",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    while t.to_act() != CHEAT:
        t.step()
    cheat = t.peers[CHEAT]
    g = cheat.game
    assert g is not None
    state = bytes.fromhex(g.state_hash())
    moves = cheat.legal_moves()[:2]
    frames = []
    for mv in moves:
        cards = [
            [g.pos_of[c], cheat._secrets().keys[g.pos_of[c]]]
            for c in _hand_cards(g, mv)
            if not g.shown[cheat.my_seat] >> c & 1
        ]
        frames.append(cheat.craft(m.MOVE, {"move": str(mv), "state": state, "cards": cards}))
    t.deliver(HONEST, frames[0])
    t.deliver(HONEST, frames[1])
    cases.append(
        case(
            "equivocation-move",
            "Two different moves, each legal, with one sequence number: equivocation; the "
            "evidence is both frames.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    t.step()
    while t.to_act() != CHEAT:
        t.step()
    cheat = t.peers[CHEAT]
    g = cheat.game
    assert g is not None
    text = "take" if g.decision in ("open", "throw-in") else "attack AS"
    state = bytes.fromhex(g.state_hash())
    t.inject(cheat.craft(m.MOVE, {"move": text, "state": state, "cards": []}))
    cases.append(case("illegal-move", f"The seat to act sends '{text}', illegal here.", t))

    t = attack_table()
    until_play(t)
    while t.to_act() != HONEST:
        t.step()
    cheat = t.peers[CHEAT]
    g = cheat.game
    assert g is not None
    state = bytes.fromhex(g.state_hash())
    t.inject(cheat.craft(m.MOVE, {"move": "take", "state": state, "cards": []}))
    cases.append(
        case("out-of-turn", "A move for the current state by a seat that is not to act.", t)
    )

    t = attack_table()
    until_play(t)
    past = bytes.fromhex(t.peers[CHEAT].game.state_hash())  # type: ignore[union-attr]
    t.step()
    t.step()
    cheat = t.peers[CHEAT]
    t.inject(cheat.craft(m.MOVE, {"move": "pass", "state": past, "cards": []}))
    cases.append(case("past-state", "A move whose state field names a state already past.", t))

    t = attack_table()

    def wrong_key(body: dict[str, Any]) -> None:
        keys = [list(pair) for pair in body["keys"]]
        keys[0][1] = (7).to_bytes(32, "little")  # a valid scalar, not the committed key
        body["keys"] = keys

    rewrite_first(t, m.KEYS, wrong_key)
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-key",
            "The cheater's deal keys message carries a key for a position "
            "that does not match its commitment.",
            t,
        )
    )

    t = attack_table()

    def duplicate_point(body: dict[str, Any]) -> None:
        points = list(body["points"])
        points[3] = points[4]
        body["points"] = points

    rewrite_first(t, m.SHUFFLE1, duplicate_point)
    t.start()
    t.settle()
    cases.append(
        case("bad-shuffle", "The cheater's pass-1 output repeats a point (a duplicated card).", t)
    )

    t = attack_table()
    rewrite_first(t, m.SEAT, lambda body: body.update(secret=bytes(32)))
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-seat-secret",
            "The revealed seat secret does not match the hello's seat_commit.",
            t,
        )
    )

    # The cheater's messages after its hello are held back; its seat message is delivered by
    # hand, then a commit whose prev is wrong.
    t = attack_table()
    t.tamper = lambda s, d, f: [] if s == CHEAT and message(f).seq >= 1 else [f]
    t.start()
    t.settle()
    cheat = t.peers[CHEAT]
    seat_frame = cheat.peers[cheat.me].accepted[1][1]
    t.deliver(HONEST, seat_frame)
    t.settle()
    t.deliver(HONEST, cheat.craft(m.COMMIT, {"seed": bytes(32)}, seq=2, prev=bytes(32)))
    cases.append(
        case(
            "broken-chain",
            "A message whose p is not the SHA-256 of the sender's previous payload.",
            t,
        )
    )

    t = attack_table()
    t.tamper = lambda s, d, f: [] if s == CHEAT else [f]
    t.start()
    t.settle()
    cheat = t.peers[CHEAT]
    body = dict(message(cheat.peers[cheat.me].accepted[0][1]).body)
    body["config"] = dict(body["config"], timeout=31.0)
    t.deliver(HONEST, cheat.craft(m.HELLO, body, seq=0, prev=m.NO_PREVIOUS))
    cases.append(
        case(
            "disagreement",
            "A hello whose table settings differ (timeout 31 s instead of 30 s).",
            t,
        )
    )

    t = attack_table()

    def false_claim(body: dict[str, Any]) -> None:
        cheat = t.peers[CHEAT]
        g = cheat.game
        assert g is not None
        wanted = body["rank"] * 4 + g.trump
        mine = [
            p
            for p in range(len(g.face))
            if g.face[p] >= 0 and g.hands[cheat.my_seat] >> g.face[p] & 1 and g.face[p] != wanted
        ]
        body["card"] = [mine[0], cheat._secrets().keys[mine[0]]]

    rewrite_first(t, m.CLAIM, false_claim)
    t.start()
    t.settle()
    cases.append(
        case(
            "false-claim",
            "In the first D3 round the cheater shows a card of its hand that is not the "
            "round's trump.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    t.step()
    cheat = t.peers[CHEAT]
    t.inject(cheat.craft(m.KEYS, {"keys": []}))
    cases.append(case("empty-keys", "A keys message with no key.", t))

    t = attack_table()
    until_play(t)
    t.step()
    cheat = t.peers[CHEAT]
    t.inject(cheat.craft(m.AUDIT, {"seed": bytes(32), "state": m.NO_PREVIOUS}))
    cases.append(
        case(
            "early-audit-bad-seed",
            "The cheater calls an audit mid-game with a seed that does not match its commitment; "
            "the honest peer joins the audit (its own audit frame follows) and names it.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    t.step()
    cheat = t.peers[CHEAT]
    t.inject(cheat.craft(m.AUDIT, {"seed": cheat._seed, "state": m.NO_PREVIOUS}))
    cases.append(
        case(
            "audit-without-cause",
            "The cheater calls an audit mid-game with its true seed: the shuffle replays and "
            "every card decrypts, so the caller is blamed for stopping the game.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    t.step()
    t.emit(CHEAT, t.peers[CHEAT].leave("closed the window"))
    t.settle()
    cases.append(case("leave", "A peer leaves mid-game: verdict 'left' naming it.", t))

    t = attack_table(timeout=5.0)
    t.start(only=[HONEST])
    t.settle()
    t.steps.append({"tick": 4.0})
    t.steps.append({"tick": 5.5})
    t.watched.tick(5.5)
    cases.append(
        case(
            "timeout",
            "Only the honest peer's hello ever arrives; at t=4 s nothing happens, at t=5.5 s "
            "(timeout 5 s) the silent peer is named (seat -1: seats are not drawn yet).",
            t,
        )
    )

    setup = attack_table()
    until_play(setup)
    prefix = steps_json(setup.steps)
    for item in cases:
        if item["steps"][: len(prefix)] == prefix:
            item["steps"] = item["steps"][len(prefix) :]
            item["after_setup"] = True
        else:
            item["after_setup"] = False
    t = attack_table()
    config = t.config
    return {
        "description": (
            "Each case: frames delivered, in order, to one honest peer (seat-keys of "
            "identity_seed bytes([i+1])*32; the honest peer is index 0, the cheater index 1), "
            "including the frames the honest peer itself signed. Feed them to a fresh observer "
            "(a session with no identity) with the given roster and table settings; 'expect' is "
            'what it must output. A step {"tick": t} lets time pass instead; a frame step '
            "without 'now' is received at time 0. A case with after_setup true starts with "
            "setup_steps (the honest game up to its first move: hellos, seats, commits, both "
            "shuffle passes, deal keys, D3 claims); step indices in 'expect' count from the "
            "first setup step. A case with its own 'config' uses those table settings."
        ),
        "config": jv(config.to_wire()),
        "roster": [i.public_bytes.hex() for i in t.identities],
        "peers": t.peers_json(),
        "outsider_public_key": outsider.public_bytes.hex(),
        "setup_steps": prefix,
        "cases": cases,
    }


# -- whole games ---------------------------------------------------------------------------------

GAMES = [
    ("game-mustamaija-2.moska", "mustamaija", 2, 14, {}),
    ("game-durak-3.moska", "durak", 3, 36, {}),  # three D3 claim rounds
]


def game_table(preset: str, players: int, seed: int, options: dict[str, str]) -> Table:
    t = Table(preset, players, seed=seed, **options)
    t.start()
    t.play_out()
    assert all(p.stage == STAGES.index("done") for p in t.peers), [stage_name(p) for p in t.peers]
    return t


def game_vectors(directory: Path) -> tuple[dict[str, Any], Table]:
    games = []
    durak = None
    for file_name, preset, players, seed, options in GAMES:
        t = game_table(preset, players, seed, options)
        owner = t.watched
        path = directory / file_name
        write_transcript(path, owner.me, t.config, owner.roster, owner.transcript)
        report = verify_transcript(path)
        assert report.valid, report.fault
        kinds: dict[str, int] = {}
        for frame in owner.transcript:
            kind = message(frame).type
            kinds[kind] = kinds.get(kind, 0) + 1
        games.append(
            {
                "file": file_name,
                "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
                "preset": preset,
                "players": players,
                "config": jv(t.config.to_wire()),
                "peers": t.peers_json(),
                "dealer": owner.dealer,
                "seats": [k.hex() for k in owner.seats],
                "message_counts": kinds,
                "moves": [[seat, text] for seat, text in owner.moves],
                "claims": [list(c) for c in owner.claim_log],
                "verify": report.to_json(),
            }
        )
        if preset == "durak":
            durak = t
    assert durak is not None
    return {
        "description": (
            "Whole games played by honest peers; each .moska file is seat index 0's transcript "
            "(PROTOCOL.md section 15). 'verify' is what verify_transcript reports for it."
        ),
        "games": games,
    }, durak


# -- main ----------------------------------------------------------------------------------------


def dump(data: Any) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def generate(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    games, durak = game_vectors(directory)
    files = {
        "framing.json": framing_vectors(durak),
        "crypto.json": crypto_vectors(),
        "attacks.json": attack_vectors(),
        "games.json": games,
    }
    written = [directory / name for name, *_ in GAMES]
    for name, data in files.items():
        (directory / name).write_text(dump(data))
        written.append(directory / name)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--check", action="store_true", help="compare with the files, write nothing"
    )
    parser.add_argument(
        "--out", type=Path, default=OUT, help="directory (default protocol/vectors)"
    )
    args = parser.parse_args()
    if not args.check:
        for path in generate(args.out):
            print(f"{path}  {path.stat().st_size} bytes")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        differ = []
        for path in generate(Path(tmp)):
            stored = args.out / path.name
            if not stored.exists() or stored.read_bytes() != path.read_bytes():
                differ.append(path.name)
    if differ:
        print("differ from a fresh generation: " + ", ".join(differ))
        return 1
    print("the vectors are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
