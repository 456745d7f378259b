#!/usr/bin/env python3
"""Generate the wire protocol's test vectors in ``protocol/vectors/`` (protocol version 2).

Everything is deterministic: identities come from fixed seeds (``Identity.from_seed``), every
peer's nonce, seat secret and deck seed from its per-game secret ``SHA-256(f"{seed}/{index}")``
(``make_peers(..., seed=...)`` seeds each peer's DRBG so), the table nonce is fixed, the proofs'
nonces are derived (PROTOCOL.md §11.4), and moves are drawn by a seeded chooser defined here
(not a bot of ``moska_p2p.bots``, so that the vectors do not move when the bots do). Only the
protocol and the rules engine shape them.

    python scripts/make_vectors.py            # (re)write protocol/vectors/
    python scripts/make_vectors.py --check    # regenerate in memory, compare with the files

Files written (``protocol/README.md`` describes them, ``protocol/PROTOCOL.md`` §18 their JSON
conventions); ``proofs.json`` in the same directory belongs to the proof tests and is left alone:

- ``framing.json``  signed frames of every message type with their decoding, and invalid frames
- ``crypto.json``   signatures, table id, game id, seating, card points, seed derivations, a
                    Fiat-Shamir transcript, a small proven shuffle
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
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import group as grp
from moska_p2p.crypto.fiat_shamir import Transcript
from moska_p2p.crypto.identity import Identity, signing_input, verify
from moska_p2p.crypto.shuffle_proof import generators
from moska_p2p.engine import new_hidden_game
from moska_p2p.engine.encoding import ENCODING_VERSION
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig, game_id, table_id
from moska_p2p.protocol.frames import (
    MAX_FRAME,
    MAX_PAYLOAD_OF,
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
    _seat_commitment,
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
GENERATED = ("framing.json", "crypto.json", "attacks.json", "games.json", "sessions.json")


# -- JSON form of msgpack values (PROTOCOL.md §18) ---------------------------------------------


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


def hexes(items: Sequence[bytes]) -> list[str]:
    return [item.hex() for item in items]


def stage_name(session: PeerSession) -> str:
    return "stopped" if session.stage == STOPPED else STAGES[session.stage]


def message(frame: bytes) -> m.Message:
    _, payload, _ = open_frame(frame[4:])
    return m.parse_payload(payload)


def framed(body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + body


def signed_as(identity: Identity, kind: str, payload: bytes) -> bytes:
    """A frame of ``kind`` carrying ``payload``, signed by ``identity`` for that kind."""
    return encode_frame(kind, payload, identity.sign(kind, payload))


def claims_of(session: PeerSession) -> list[list[Any]]:
    """Every D3 claim in a transcript: [seat, rank, shown position or None]."""
    out = []
    for frame in session.transcript:
        msg = message(frame)
        if msg.type == m.CLAIM:
            card = msg.body["card"]
            out.append([session.seat_of[msg.sender], msg.body["rank"], card and card[0]])
    return out


def disclosures_of(session: PeerSession) -> list[list[Any]]:
    """Every disclosure in a transcript: [seat, [positions]]."""
    return [
        [session.seat_of[msg.sender], sorted(pos for pos, _ in msg.body["keys"])]
        for msg in map(message, session.transcript)
        if msg.type == m.DISCLOSE
    ]


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
        self.keep_trumps = False  # choose a move that lays no trump whenever there is one
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

    def tick(self, now: float) -> None:
        """Let time pass for every peer (recorded as a tick step of the watched one)."""
        self.clock = now
        self.steps.append({"tick": now})
        for index, peer in enumerate(self.peers):
            self.emit(index, peer.tick(now))
        self.settle()

    def to_act(self) -> int | None:
        return next((i for i, p in enumerate(self.peers) if p.my_turn and p.stage != STOPPED), None)

    def step(self) -> bool:
        """One move by the peer whose turn it is (a seeded choice among its legal moves)."""
        self.settle()
        index = self.to_act()
        if index is None:
            return False
        moves = self.peers[index].legal_moves()
        if self.keep_trumps:
            g = self.peers[index].game
            assert g is not None
            thrifty = [mv for mv in moves if not any(c & 3 == g.trump for c in mv[1])]
            moves = thrifty or moves
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
        result["losers"] = list(observer.losers)
        honest = table.watched.verdict
        assert honest is not None, "the watched peer gave no verdict"
        assert (honest.kind, honest.seats, honest.keys) == (
            verdict.kind,
            verdict.seats,
            verdict.keys,
        ), (honest, verdict)
        assert table.watched.losers == observer.losers, (table.watched.losers, observer.losers)
        # The watched peer signs its verdict (unless it is a culprit, or the game id was not
        # known yet): the last frame of its transcript, and a step of this case.
        signs = table.watched.game_id is not None and table.watched.me not in honest.keys
        own = [
            i
            for i, s in enumerate(steps)
            if "frame" in s
            and message(s["frame"]).type == m.VERDICT
            and message(s["frame"]).sender == table.watched.me
        ]
        assert own == ([frames.index(table.watched.transcript[-1])] if signs else []), own
        assert not own or own[0] >= at
        result["verdict_message_step"] = own[0] if own else None
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
            "verdict with 5 evidence frames",
            body(
                "verdict",
                {"kind": "timeout", "culprits": [], "reason": "", "evidence": [b"x"] * 5},
            ),
            "message",
            "more than 4",
        ),
        (
            "verdict kind of 41 characters",
            body("verdict", {"kind": "x" * 41, "culprits": [], "reason": "", "evidence": []}),
            "message",
            "longer than 40",
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
)


def framing_vectors(durak: Table, disclosing: Table) -> dict[str, Any]:
    seeds = {Identity.from_seed(s).public_bytes: s for s in IDENTITY_SEEDS}
    chosen: dict[str, bytes] = {}
    notes: dict[str, str] = {}
    for frame in durak.watched.transcript + disclosing.watched.transcript:
        msg = message(frame)
        name = msg.type
        if msg.type == m.CLAIM and msg.body["card"] is not None:
            name = "claim-shown"  # a D3 claim that shows a card
        elif msg.type == m.MOVE and not msg.body["cards"]:
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
        },
        seq=message(chosen[m.LEAVE]).seq,
    )
    notes[m.VERDICT] = "crafted: what peer 1 would sign, in place of the leave, naming peer 2"
    chosen[m.WAIT] = leaver.craft(m.WAIT, {}, seq=message(chosen[m.LEAVE]).seq)
    notes[m.WAIT] = "crafted: what peer 1 would sign, in place of the leave, if it were stuck"
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
    seats = sorted(roster, key=lambda k: _hash(joint, k))
    dealer = int.from_bytes(_hash(b"moska-p2p/dealer", joint), "big") % len(roster)

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
                _seat_commitment(tid, key, s).hex()
                for key, s in zip(roster, seat_secrets, strict=True)
            ],
            "joint": joint.hex(),
            "sort_keys": [_hash(joint, k).hex() for k in roster],
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


# -- attack vectors -----------------------------------------------------------------------------

ATTACK_PRESET, ATTACK_PLAYERS, ATTACK_SEED = "durak", 2, 3
HONEST, CHEAT = 0, 1


def attack_table(**kwargs: Any) -> Table:
    return Table(
        ATTACK_PRESET, ATTACK_PLAYERS, seed=kwargs.pop("seed", ATTACK_SEED), watch=HONEST, **kwargs
    )


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
    out: dict[str, Any] = {"name": name, "description": description}
    if table.config != attack_table().config:
        out["config"] = jv(table.config.to_wire())  # this case's own table settings
    if table.seed != ATTACK_SEED:
        out["peers"] = table.peers_json()  # this case's own per-game secrets
    return out | {"steps": steps_json(table.steps), "expect": result}


def add_matches(result: dict[str, Any]) -> None:
    for item in result["rejected"]:
        item["match"] = item["reason"].split(":")[0]


def _pass_input(session: PeerSession, stage: str) -> list[bytes]:
    """The input of ``session``'s own pass of ``stage`` (it has applied that pass already)."""
    deck = session.deck
    assert deck is not None
    seat = session.my_seat
    if stage == m.SHUFFLE1:
        return deck.initial if seat == 0 else deck.pass1[seat - 1]
    return deck.pass1[-1] if seat == 0 else deck.pass2[seat - 1]


def _lying_table(seed: int) -> Table | None:
    """A table whose cheater says "none" in the D3 round of a trump it holds, and does not
    check itself; ``None`` if the cheater does not hold the trump shown first."""
    probe = attack_table(seed=seed)
    probe.start()
    probe.settle()
    shown = [c for c in claims_of(probe.watched) if c[2] is not None]
    if not shown or shown[0][0] != probe.peers[CHEAT].my_seat:
        return None
    t = attack_table(seed=seed)
    liar = t.peers[CHEAT]
    honest_claim = liar._send_claim
    lied = {"done": False}

    def lying_claim() -> None:  # a client that hides its lowest trump once
        g = liar.game
        assert g is not None
        if not lied["done"] and g.hands[liar.my_seat] >> (liar.claim_rank * 4 + g.trump) & 1:
            lied["done"] = True
            liar._send(m.CLAIM, {"rank": liar.claim_rank, "card": None})
        else:
            honest_claim()

    liar._send_claim = lying_claim  # type: ignore[method-assign]
    liar.claim_book.deny = lambda denial: None  # type: ignore[method-assign]  # no self-check
    return t


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
    assert cheat.identity is not None
    keys_payload = m.encode_payload(
        cheat.game_id,  # type: ignore[arg-type]
        cheat.me,
        cheat.peers[cheat.me].next_seq,
        cheat.peers[cheat.me].last_hash,
        m.KEYS,
        {"keys": [[0, bytes(32)]]},
    )
    t.deliver(HONEST, signed_as(cheat.identity, m.LEAVE, keys_payload), force=True)
    wrong_kind = encode_frame(m.KEYS, keys_payload, cheat.identity.sign(m.LEAVE, keys_payload))
    t.deliver(HONEST, wrong_kind, force=True)
    t.step()
    cases.append(
        case(
            "kind-mismatch",
            "A keys message framed and signed as a leave, then framed as keys but signed as a "
            "leave: the kind is outside the payload and inside the signature, so both are "
            "rejected (a forged signature), and the game goes on.",
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
    assert cheat.identity is not None
    me = cheat.peers[cheat.me]
    garbage = framed(b"\xc1\xc1\xc1")
    not_a_map = signed_as(cheat.identity, m.KEYS, b"\x93\x01\x02\x03")
    wrong = pack(
        {
            "v": 2,
            "g": cheat.game_id,
            "f": cheat.me,
            "s": "seven",
            "p": me.last_hash,
            "t": "keys",
            "b": {"keys": [[0, bytes(32)]]},
            "h": [],
        }
    )
    wrong_type = signed_as(cheat.identity, m.KEYS, wrong)
    bad_body = pack(
        {
            "v": 2,
            "g": cheat.game_id,
            "f": cheat.me,
            "s": me.next_seq,
            "p": me.last_hash,
            "t": "move",
            "b": {"move": "take", "state": bytes(31), "cards": []},
            "h": [],
        }
    )
    bad_body_frame = signed_as(cheat.identity, m.MOVE, bad_body)
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
    assert cheat.identity is not None
    payload = m.encode_payload(
        cheat.game_id,  # type: ignore[arg-type]
        outsider.public_bytes,
        0,
        m.NO_PREVIOUS,
        m.LEAVE,
        {"reason": "hi"},
    )
    t.deliver(HONEST, signed_as(outsider, m.LEAVE, payload))
    payload = m.encode_payload(
        cheat.game_id,  # type: ignore[arg-type]
        cheat.me,
        0,
        m.NO_PREVIOUS,
        m.KEYS,
        {"keys": [[0, bytes(32)]]},
    )
    t.deliver(HONEST, signed_as(cheat.identity, m.KEYS, payload))
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
            "seats are drawn (seat -1: no game to forfeit). The game id is known by then, so "
            "the honest peer signs its verdict.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    while t.to_act() != CHEAT:
        t.step()
    cheat = t.peers[CHEAT]
    g = cheat.game
    assert g is not None and cheat.deck is not None
    state = bytes.fromhex(g.state_hash())
    moves = cheat.legal_moves()[:2]
    frames = []
    for mv in moves:
        cards = [
            [g.pos_of[c], cheat.deck.my_key(g.pos_of[c])]
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
            "evidence is both frames; the cheater forfeits.",
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
        keys[0][1] = (7).to_bytes(32, "little")  # a valid scalar, not the one of the key point
        body["keys"] = keys

    rewrite_first(t, m.KEYS, wrong_key)
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-key",
            "The cheater's deal keys message carries a key k for a position with "
            "k*B != K[j], the key point of its shuffle2.",
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
        case(
            "bad-shuffle-duplicate",
            "The cheater's pass-1 output repeats a point (a duplicated card): refused before "
            "its proof is even checked.",
            t,
        )
    )

    t = attack_table()

    def flip_proof(body: dict[str, Any]) -> None:
        proof = bytearray(body["proof"])
        proof[len(proof) // 2] ^= 1
        body["proof"] = bytes(proof)

    rewrite_first(t, m.SHUFFLE1, flip_proof)
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-shuffle-proof",
            "The cheater's pass-1 shuffle argument has one bit flipped (the message is signed "
            "again): the argument does not verify.",
            t,
        )
    )

    t = attack_table()

    def other_scalar(body: dict[str, Any]) -> None:
        cheat = t.peers[CHEAT]
        assert cheat.deck is not None and cheat.deck.secrets is not None
        other = grp.hash_to_scalar(b"another scalar")
        source = _pass_input(cheat, m.SHUFFLE1)
        body["points"] = [grp.mul(other, source[i]) for i in cheat.deck.secrets.permutation]

    rewrite_first(t, m.SHUFFLE1, other_scalar)
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-shuffle-scalar",
            "The cheater's pass-1 output is a permutation of its input under another scalar "
            "than the a of its A: the shuffle argument does not verify.",
            t,
        )
    )

    t = attack_table()

    def copy_cards(body: dict[str, Any]) -> None:
        cheat = t.peers[CHEAT]
        assert cheat.deck is not None and cheat.deck.secrets is not None
        secrets = cheat.deck.secrets
        source = _pass_input(cheat, m.SHUFFLE2)
        points = list(body["points"])
        for victim, target in ((0, 20), (2, 21), (4, 22)):  # the honest peer's first cards
            factor = grp.scalar_mul(secrets.scalar_inverse, secrets.keys[target])
            points[target] = grp.mul(factor, source[victim])
        body["points"] = points

    rewrite_first(t, m.SHUFFLE2, copy_cards)
    t.start()
    t.settle()
    assert t.watched.game is None and t.watched.keys == {}
    cases.append(
        case(
            "pass2-copy-attack",
            "Issue 10's copy attack: the cheater's pass 2 writes in[j] * a^-1 * k[j'] at "
            "stock positions j' (so that they would open, in public, to the cards at j), key "
            "points unchanged. The re-keying proof fails at the first copied position; no key "
            "is ever released.",
            t,
        )
    )

    t = attack_table()
    rewrite_first(t, m.SEAT, lambda body: body.update(secret=bytes(32)))
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-seat-secret",
            "The revealed seat secret does not open the hello's seat_commit.",
            t,
        )
    )

    # The cheater's messages after its hello are held back; its seat message is delivered by
    # hand, then a message whose prev is wrong.
    t = attack_table()
    t.tamper = lambda s, d, f: [] if s == CHEAT and message(f).seq >= 1 else [f]
    t.start()
    t.settle()
    cheat = t.peers[CHEAT]
    seat_frame = cheat.peers[cheat.me].accepted[1][1]
    t.deliver(HONEST, seat_frame)
    t.settle()
    t.deliver(HONEST, cheat.craft(m.KEYS, {"keys": [[0, bytes(32)]]}, seq=2, prev=bytes(32)))
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
        assert g is not None and cheat.deck is not None
        wanted = body["rank"] * 4 + g.trump
        mine = [
            p
            for p in range(len(g.face))
            if g.face[p] >= 0 and g.hands[cheat.my_seat] >> g.face[p] & 1 and g.face[p] != wanted
        ]
        body["card"] = [mine[0], cheat.deck.my_key(mine[0])]

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

    lying = None
    for seed in range(ATTACK_SEED, ATTACK_SEED + 200):
        lying = _lying_table(seed)
        if lying is None:
            continue
        lying.start()
        lying.play_out()
        verdict = lying.watched.verdict
        if verdict is not None and verdict.kind == v.FALSE_CLAIM and lying.watched.game:
            break
    else:  # pragma: no cover
        raise AssertionError("no seed where a hidden lowest trump is played")
    assert lying is not None
    cases.append(
        case(
            "false-denial",
            "D3 by selective disclosure: the cheater holds the round's trump and says 'none'. "
            "Nothing can be checked then; when it later plays that card from a position it "
            "held at its claim, it is named (false-claim), its claim and its move as evidence.",
            lying,
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
    t.inject(
        cheat.craft(
            m.VERDICT,
            {
                "kind": v.ILLEGAL_MOVE,
                "culprits": [t.peers[HONEST].me],
                "reason": "trust me",
                "evidence": [],
            },
        )
    )
    cases.append(
        case(
            "bogus-verdict",
            "The cheater stops the game mid-game with a verdict that proves nothing (v1's "
            "early audit, which harvested every seed): no key is released, and the sender of "
            "the verdict is named (left) and forfeits.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    t.step()
    t.emit(CHEAT, t.peers[CHEAT].leave("closed the window"))
    t.settle()
    cases.append(case("leave", "A peer leaves mid-game: verdict 'left' naming it; it forfeits.", t))

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
            "(timeout 5 s) the silent peer is named (seat -1: seats are not drawn yet, so "
            "there is no game to forfeit).",
            t,
        )
    )

    t = attack_table(timeout=5.0)
    dropping = {"on": False}

    def withhold(source: int, target: int, frame: bytes) -> list[bytes]:
        if source == CHEAT and (dropping["on"] or message(frame).type == m.KEYS):
            dropping["on"] = True
            return []
        return [frame]

    t.tamper = withhold
    t.start()
    t.settle()
    t.tick(4.0)
    t.tick(5.5)
    cases.append(
        case(
            "withheld-keys",
            "The cheater never sends its keys for the deal: at t=5.5 s (timeout 5 s) the "
            "honest peer names it (timeout) and it forfeits: it is the game's loser.",
            t,
        )
    )

    setup = attack_table()
    until_play(setup)
    prefix = steps_json(setup.steps)
    for item in cases:
        if "peers" not in item and item["steps"][: len(prefix)] == prefix:
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
            "including the frames the honest peer itself signed (its verdict message last, "
            "when it signs one). Feed them to a fresh observer (a session with no identity) "
            "with the given roster and table settings; 'expect' is what it must output, and "
            "'losers' the seats that forfeit. A step {\"tick\": t} lets time pass instead; a "
            "frame step without 'now' is received at time 0. A case with after_setup true "
            "starts with setup_steps (the honest game up to its first move: hellos, seats, "
            "both proven shuffle passes, deal keys, D3 claims); step indices in 'expect' count "
            "from the first setup step. A case with its own 'config' uses those table "
            "settings; one with its own 'peers' was played from other per-game secrets."
        ),
        "config": jv(config.to_wire()),
        "roster": [i.public_bytes.hex() for i in t.identities],
        "peers": t.peers_json(),
        "outsider_public_key": outsider.public_bytes.hex(),
        "setup_steps": prefix,
        "cases": cases,
    }


# -- whole games ---------------------------------------------------------------------------------

GAMES: list[tuple[str, str, int, int, dict[str, str]]] = [
    ("game-mustamaija-2.moska", "mustamaija", 2, 14, {}),
    ("game-durak-3.moska", "durak", 3, 36, {}),  # D3 claim rounds
]
# A denial settled at the end: peers that keep their trumps (seed from disclosing_seed()).
DISCLOSE_GAME = ("game-durak-disclose-2.moska", "durak", 2, 5)


def game_table(
    preset: str, players: int, seed: int, options: dict[str, str], keep_trumps: bool = False
) -> Table:
    t = Table(preset, players, seed=seed, **options)  # type: ignore[arg-type]
    t.keep_trumps = keep_trumps
    t.start()
    t.play_out()
    assert all(p.stage == STAGES.index("done") for p in t.peers), [stage_name(p) for p in t.peers]
    return t


def disclosing_seed() -> int:
    """The first seed from 1 whose durak game, played by peers that keep their trumps, ends
    with a disclosure (rare in random play: the loser must still hold a card face down from
    its hand at a claim round, and have drawn the denied trump and kept it)."""
    _, preset, players, _ = DISCLOSE_GAME
    for seed in range(1, 400):
        t = Table(preset, players, seed=seed)
        t.keep_trumps = True
        t.start()
        t.play_out(max_moves=600)
        if all(p.stage == STAGES.index("done") for p in t.peers) and disclosures_of(t.watched):
            return seed
    raise AssertionError("no seed with a disclosure")  # pragma: no cover


def game_entry(directory: Path, file_name: str, t: Table) -> dict[str, Any]:
    owner = t.watched
    path = directory / file_name
    write_transcript(path, owner.me, t.config, owner.roster, owner.transcript)
    report = verify_transcript(path)
    assert report.valid, report.fault
    kinds: dict[str, int] = {}
    for frame in owner.transcript:
        kind = message(frame).type
        kinds[kind] = kinds.get(kind, 0) + 1
    return {
        "file": file_name,
        "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
        "preset": t.config.preset,
        "players": t.config.players,
        "seed": t.seed,
        "config": jv(t.config.to_wire()),
        "peers": t.peers_json(),
        "dealer": owner.dealer,
        "seats": [k.hex() for k in owner.seats],
        "message_counts": kinds,
        "moves": [[seat, text] for seat, text in owner.moves],
        "claims": claims_of(owner),
        "disclosures": disclosures_of(owner),
        "verify": report.to_json(),
    }


def game_vectors(directory: Path) -> tuple[dict[str, Any], Table, Table]:
    games = []
    durak = None
    for file_name, preset, players, seed, options in GAMES:
        t = game_table(preset, players, seed, options)
        games.append(game_entry(directory, file_name, t))
        if preset == "durak":
            durak = t
    assert durak is not None
    file_name, preset, players, seed = DISCLOSE_GAME
    disclosing = game_table(preset, players, seed, {}, keep_trumps=True)
    assert disclosures_of(disclosing.watched), "no disclosure: pick a seed with disclosing_seed()"
    games.append(game_entry(directory, file_name, disclosing))
    return (
        {
            "description": (
                "Whole games played by honest peers; each .moska file is peer index 0's "
                "transcript (PROTOCOL.md section 17), which verifies with no secret. 'verify' "
                "is what verify_transcript reports for it; 'claims' are the D3 claims "
                "[seat, rank, shown position or null], 'disclosures' [seat, positions]."
            ),
            "games": games,
        },
        durak,
        disclosing,
    )


# -- main ----------------------------------------------------------------------------------------


def session_vectors() -> dict[str, Any]:
    """Sessions of games (PROTOCOL.md §22): the settings of a session's first and second
    game with their canonical forms and ids, a signed session result, and the ``next`` link
    message."""
    from moska_p2p.net.wire import NEXT, net_frame
    from moska_p2p.protocol.config import session_id
    from moska_p2p.protocol.frames import SESSION_RESULT
    from moska_p2p.protocol.tally import GameRecord, sign_result

    ids = [Identity.from_seed(s) for s in IDENTITY_SEEDS[:2]]
    roster = sorted(i.public_bytes for i in ids)
    first = TableConfig("durak", 2, TABLE_NONCE, games=3)
    previous = hashlib.sha256(b"game 1").digest()
    seats = [roster[1], roster[0]]
    second = first.next_game(previous, seats, 1)

    def settings(config: TableConfig) -> dict[str, Any]:
        return {
            "config": jv(config.to_wire()),
            "canonical": config.canonical().hex(),
            "table_id": table_id(config, roster).hex(),
            "session_id": session_id(config, roster).hex(),
        }

    games = [
        GameRecord(1, previous, hashlib.sha256(b"state 1").digest(), (1,), False, 0),
        GameRecord(2, table_id(second, roster), b"", (0,), True, 1),
    ]
    digests = [hashlib.sha256(f"transcript {n}".encode()).digest() for n in (1, 2)]
    sid = session_id(first, roster)
    frame = sign_result(ids[0], sid, seats, games, digests, [], "game 2 was stopped by a verdict")
    kind, payload, signature = open_frame(frame[4:])
    assert kind == SESSION_RESULT
    return {
        "roster_sorted": hexes(roster),
        "first_game": settings(first),
        "second_game": settings(second),
        "result": {
            "signer_seed": IDENTITY_SEEDS[0].hex(),
            "frame": frame.hex(),
            "kind": kind,
            "payload": jv(msgpack.unpackb(payload, raw=False)),
            "signature": signature.hex(),
            "signing_input_sha256": hashlib.sha256(signing_input(kind, payload)).hexdigest(),
        },
        "next": net_frame(ids[1], NEXT, {"game": 1, "go": True}).hex(),
    }


def dump(data: Any) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def generate(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    games, durak, disclosing = game_vectors(directory)
    files = {
        "framing.json": framing_vectors(durak, disclosing),
        "crypto.json": crypto_vectors(),
        "attacks.json": attack_vectors(),
        "games.json": games,
        "sessions.json": session_vectors(),
    }
    written = [directory / name for name, *_ in GAMES] + [directory / DISCLOSE_GAME[0]]
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
