#!/usr/bin/env python3
"""A long, structure-aware fuzz run of the decoders and of live sessions (issue 11, item 10).

It plays a few real games in memory (``protocol.simulate``), snapshotting the receiving
session just before chosen deliveries. Then, for each input, it takes a real frame of one of
those games, mutates it with the message's structure in mind (a field set to another value,
type or size, fields dropped or added, numbers moved by one or to a boundary, list items
swapped or duplicated, the type or sender changed, a leave or verdict made up with real
frames as evidence, a wider msgpack encoding) or byte by byte (flips, inserts, deletes, cuts),
signs it again with the real sender's key for most mutations (so that the signature passes
and the mutation reaches the handlers), and feeds it to an honest session restored at the
matching point of the game. A session that changed (it accepted, queued or stopped) is
replaced by a fresh copy of its snapshot for the next input.

A share of the inputs goes to the pure decoders instead: the frame decoder and
``open_frame``, ``parse_payload``, ``TableConfig.from_wire``, ``wire.classify`` (lobby and link
messages, roster entries, link proofs), ``parse_announcement``, ``parse_move``,
``read_transcript`` and, rarely, ``verify_transcript``.

A finding is any exception that escapes ``PeerSession.receive`` (or ``tick``), any decoder
error other than the one the decoder documents, or a verifier that failed on its own
(a ``LocalError``). Each is printed once per place (type and innermost project line) with the
input as hex and a traceback, and saved under ``--findings``; the run goes on and exits with
status 1 at the end. ``--only N`` replays input ``N`` of a run (same ``--seed``) verbosely.

    python scripts/fuzz.py --inputs 20000
    nohup python scripts/fuzz.py --inputs 1000000 > /tmp/fuzz-1m.log 2>&1 &
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import pickle
import random
import re
import resource
import struct
import sys
import tempfile
import time
import traceback
import types
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgpack

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.cards import CARD_TEXT
from moska_p2p.crypto.identity import Identity
from moska_p2p.engine import MoveSyntaxError, parse_move
from moska_p2p.engine.moves import KIND_NAMES
from moska_p2p.net import discovery, wire
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import ConfigError, TableConfig, lobby_id, table_id
from moska_p2p.protocol.frames import (
    BEACON,
    LENGTH_SIZE,
    MAX_FRAME,
    MAX_PAYLOAD_OF,
    NET_KINDS,
    PRE_AUTH_MAX_FRAME,
    FrameDecoder,
    FrameError,
    open_frame,
    unpack,
)
from moska_p2p.protocol.session import DONE, STAGES, STOPPED, WINDOW, PeerSession, drbg
from moska_p2p.protocol.simulate import Network, make_peers
from moska_p2p.protocol.transcript import (
    Report,
    TranscriptError,
    read_transcript,
    verify_transcript,
    write_transcript,
)
from moska_p2p.table.simulate import run_game

BATCH = 64  # consecutive inputs against one checkpoint (its session stays warm)
SLOW_INPUT = 2.0  # seconds: an input slower than this is listed at the end
MAX_HEX = 8192  # hex characters of an input printed in the log (the findings file has all)
# Checkpoint weights: a shuffle's proof check takes ~50 ms; a disclosure is rare in a game.
WEIGHTS = {"shuffle1": 0.08, "shuffle2": 0.12, "disclose": 8.0}

# -- the games -------------------------------------------------------------------------------


class KeepTrumps:
    """A bot that never lays a trump while it has another move: its D3 denials are often
    settled by disclosure at the end."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: Any, legal_moves: Sequence[Any]) -> Any:
        thrifty = [mv for mv in legal_moves if not any(c & 3 == view.trump_suit for c in mv[1])]
        return self.rng.choice(thrifty or list(legal_moves))


@dataclass(frozen=True)
class GameSpec:
    name: str
    preset: str
    players: int
    seed: int
    options: tuple[tuple[str, str], ...] = ()
    keep_trumps: bool = False


GAMES = (
    GameSpec("mustamaija-2", "mustamaija", 2, 1),
    GameSpec("durak-2", "durak", 2, 2, keep_trumps=True),  # a disclosure at the end
    GameSpec("perevodnoy-3", "perevodnoy", 3, 3, (("transfer_show_trump", "on"),)),
    GameSpec("moska-4", "moska", 4, 4, (("self_execution", "on"), ("deck_kill", "on"))),
)


@dataclass
class Game:
    spec: GameSpec
    config: TableConfig
    identities: dict[bytes, Identity]
    roster: list[bytes]
    log: list[tuple[int, bytes, float]] = field(default_factory=list)  # target, frame, clock
    frames: list[bytes] = field(default_factory=list)  # every distinct frame, first seen first
    by_type: dict[str, list[bytes]] = field(default_factory=lambda: defaultdict(list))
    hashes: list[bytes] = field(default_factory=list)
    moves: list[str] = field(default_factory=list)
    keys: list[tuple[int, bytes]] = field(default_factory=list)
    points: list[bytes] = field(default_factory=list)
    states: list[bytes] = field(default_factory=list)
    game_id: bytes = b""
    table: bytes = b""
    final: list[PeerSession] = field(default_factory=list)


@dataclass
class Checkpoint:
    game: int
    target: int
    at: int  # index of the pending delivery in the game's log
    kind: str
    frame: bytes
    clock: float
    stage: str
    blob: bytes = b""

    @property
    def label(self) -> str:
        return f"{GAMES[self.game].name}/peer{self.target}/delivery{self.at}/{self.kind}"


class _Pickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, store: dict[bytes, Identity]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.store = store

    def persistent_id(self, obj: Any) -> Any:
        if isinstance(obj, Identity):
            self.store[obj.public_bytes] = obj
            return ("identity", obj.public_bytes)
        if isinstance(obj, types.FunctionType):
            return ("function",)
        return None


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, store: dict[bytes, Identity]) -> None:
        super().__init__(file)
        self.store = store

    def persistent_load(self, pid: Any) -> Any:
        if pid[0] == "identity":
            return self.store[pid[1]]
        return drbg(bytes(32))  # a session draws from its random source only when it is made


class Snapshots:
    """Sessions pickled with their identities (and their random source) kept by reference:
    restoring one is 4-5 times faster than copy.deepcopy."""

    def __init__(self) -> None:
        self.identities: dict[bytes, Identity] = {}

    def dumps(self, session: PeerSession) -> bytes:
        buffer = io.BytesIO()
        _Pickler(buffer, self.identities).dump(session)
        return buffer.getvalue()

    def loads(self, blob: bytes) -> PeerSession:
        session = _Unpickler(io.BytesIO(blob), self.identities).load()
        assert isinstance(session, PeerSession)
        return session


def _kind(frame: bytes) -> str:
    return open_frame(frame[LENGTH_SIZE:])[0]


def _message(frame: bytes) -> m.Message:
    return m.parse_payload(open_frame(frame[LENGTH_SIZE:])[1])


def play(index: int, snapshots: Snapshots, budget: int) -> tuple[Game, list[Checkpoint]]:
    """Play one game, snapshotting receivers before a sample of the deliveries."""
    spec = GAMES[index]
    config = TableConfig(spec.preset, spec.players, bytes([index + 1]) * 32, dict(spec.options))
    identities = [Identity.from_seed(bytes([spec.seed, i + 1]) * 16) for i in range(spec.players)]
    game = Game(spec, config, {i.public_bytes: i for i in identities}, [])
    network: Network | None = None
    candidates: list[Checkpoint] = []
    counts: Counter[tuple[int, str]] = Counter()
    stride = spec.players + 2

    def tamper(source: int, target: int, frame: bytes) -> list[bytes]:
        assert network is not None
        session = network.sessions[target]
        game.log.append((target, frame, network.clock))
        kind = _kind(frame)
        counts[target, kind] += 1
        frequent = kind in ("move", "keys")
        if session.stage not in (DONE, STOPPED) and (
            not frequent or counts[target, kind] % stride == 1
        ):
            candidates.append(
                Checkpoint(
                    index,
                    target,
                    len(game.log) - 1,
                    kind,
                    frame,
                    network.clock,
                    STAGES[session.stage],
                    snapshots.dumps(session),
                )
            )
        return [frame]

    sessions = make_peers(config, identities, seed=spec.seed)
    network = Network(sessions, tamper=tamper)
    bots: list[Any] = [
        KeepTrumps(spec.seed * 10 + i) if spec.keep_trumps else RandomBot(spec.seed * 10 + i)
        for i in range(spec.players)
    ]
    result = run_game(network, bots)
    if not result.finished:
        raise SystemExit(f"{spec.name}: the game did not finish: {result.verdicts}")
    game.final = result.sessions
    game.roster = list(result.sessions[0].roster)
    game.game_id = result.sessions[0].game_id or b""
    game.table = result.sessions[0].table_id
    seen: set[bytes] = set()
    for _, frame, _ in game.log:
        if frame in seen:
            continue
        seen.add(frame)
        game.frames.append(frame)
        msg = _message(frame)
        game.by_type[msg.type].append(frame)
        game.hashes.append(msg.hash)
        if msg.type == m.MOVE:
            game.moves.append(msg.body["move"])
            game.states.append(msg.body["state"])
        if msg.type in (m.SHUFFLE1, m.SHUFFLE2):
            game.points.extend(msg.body["points"][:4])
    for session in result.sessions:
        game.keys.extend((pos, key) for (_, pos), key in session.keys.items())
    game.keys = sorted(set(game.keys))[:400]
    # The rare kinds all stay; frequent ones are thinned to the budget, evenly.
    rare = [c for c in candidates if c.kind not in ("move", "keys")]
    frequent = [c for c in candidates if c.kind in ("move", "keys")]
    room = max(budget - len(rare), budget // 2)
    if len(frequent) > room:
        step = len(frequent) / room
        frequent = [frequent[int(i * step)] for i in range(room)]
    kept = sorted(rare + frequent, key=lambda c: c.at)
    return game, kept


def validate(checkpoints: list[Checkpoint], snapshots: Snapshots) -> list[Checkpoint]:
    """Keep the checkpoints whose restored session takes the honest pending frame as the
    live one did (no refusal, no verdict, no exception)."""
    good = []
    for checkpoint in checkpoints:
        session = snapshots.loads(checkpoint.blob)
        try:
            outputs = session.receive(checkpoint.frame, checkpoint.clock)
        except Exception as error:  # reported: a snapshot that does not behave is a bug here
            print(f"  checkpoint {checkpoint.label} raised {error!r}: dropped")
            continue
        if any(isinstance(o, v.Rejected | v.Stopped) for o in outputs):
            print(f"  checkpoint {checkpoint.label} does not replay honestly: dropped")
            continue
        good.append(checkpoint)
    return good


# -- values ----------------------------------------------------------------------------------

INTS = [0, 1, -1, 2, 3, 4, 5, 6, 7, 12, 13, 31, 32, 33, 40, 41, 51, 52, 53, 63, 64, 127, 128]
INTS += [255, 256, WINDOW - 1, WINDOW, WINDOW + 1, 65535, 65536, 2**20 - 1, 2**20, 2**20 + 1]
INTS += [2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**53, 2**63 - 1, -(2**63), 2**64 - 1, -(2**31)]
FLOATS = [0.0, -0.0, 1.0, 0.5, 15.0, 30.0, 3600.0, 3600.5, 1e-300, 1e308, -1.0]
FLOATS += [math.nan, math.inf, -math.inf]
LIMITS = [8, 20, 21, 32, 40, 41, 64, 80, 81, 200, 201, 400, 401, 2000, 5000]
TEXTS = ["", " ", "x", "hello", "move", "verdict", "net/hi", "beacon", "take", "pass"]
TEXTS += ["\x00", "\n", "é", "ß", "²", "\u202e", "\ud7ff", "🂡", "A" * 1000, "durak", "moska"]
TEXTS += [*v.__dict__.get("__all__", []), v.TIMEOUT, v.LEFT, v.EQUIVOCATION, v.ILLEGAL_MOVE]
TEXTS += [v.PROTOCOL, v.BAD_KEY, v.FALSE_CLAIM, v.DISAGREEMENT, v.BAD_SHUFFLE, v.OUT_OF_TURN]
VERDICT_KINDS = [v.TIMEOUT, v.LEFT, v.EQUIVOCATION, v.ILLEGAL_MOVE, v.PROTOCOL, v.BAD_KEY]
VERDICT_KINDS += [v.FALSE_CLAIM, v.DISAGREEMENT, v.BAD_SHUFFLE, v.OUT_OF_TURN, v.BAD_CARD]
VERDICT_KINDS += [v.BAD_SEED, "", "x", "timeout "]
SMALL_ORDER = bytes([1]) + bytes(31)  # the identity point: the forgery of issue 11
I64_MIN, U64_MAX = -(2**63), 2**64 - 1


class Context:
    """What a mutation may draw on: the game's real values, the live session's state."""

    def __init__(self, rng: random.Random, game: Game, session: PeerSession | None) -> None:
        self.rng = rng
        self.game = game
        self.session = session

    def key(self) -> bytes:
        r = self.rng.random()
        if r < 0.6:
            return self.rng.choice(self.game.roster)
        if r < 0.7:
            return SMALL_ORDER
        if r < 0.8:
            return bytes(32)
        return self.rng.randbytes(32)

    def hash(self) -> bytes:
        r = self.rng.random()
        if r < 0.5 and self.game.hashes:
            return self.rng.choice(self.game.hashes)
        if r < 0.65:
            return self.game.game_id
        if r < 0.75:
            return self.game.table
        if r < 0.85 and self.game.states:
            return self.rng.choice(self.game.states)
        if r < 0.9:
            return m.NO_PREVIOUS
        return self.rng.randbytes(32)

    def move_text(self) -> str:
        r = self.rng.random()
        if r < 0.5 and self.game.moves:
            return self.rng.choice(self.game.moves)
        if r < 0.8:
            words = [self.rng.choice(KIND_NAMES)]
            words += [self.rng.choice(CARD_TEXT) for _ in range(self.rng.randrange(4))]
            return " ".join(words)
        return self.rng.choice(TEXTS)

    def text(self) -> str:
        r = self.rng.random()
        if r < 0.3:
            return self.rng.choice(TEXTS)
        if r < 0.5:
            return "y" * self.rng.choice(LIMITS)
        if r < 0.7:
            return self.move_text()
        return "".join(chr(self.rng.randrange(0x20, 0x2FF)) for _ in range(self.rng.randrange(12)))

    def pair(self) -> list[Any]:
        if self.game.keys and self.rng.random() < 0.8:
            pos, key = self.rng.choice(self.game.keys)
            if self.rng.random() < 0.2:
                pos = self.rng.choice([pos + 1, pos - 1, 52, 51, 0, -1, 255])
            return [pos, key]
        return [self.rng.randrange(-1, 60), self.key()]

    def scalar(self) -> Any:
        """A random msgpack value of any type (rarely a container)."""
        r = self.rng.random()
        choices: list[Callable[[], Any]] = [
            lambda: None,
            lambda: self.rng.random() < 0.5,
            lambda: self.rng.choice(INTS),
            lambda: self.rng.choice(FLOATS),
            self.text,
            self.key,
            self.hash,
            lambda: self.rng.randbytes(self.rng.choice([0, 1, 8, 31, 33, 64, 65, 300])),
            lambda: [],
            lambda: {},
        ]
        if r < 0.03:
            if self.rng.random() < 0.3:
                return msgpack.Timestamp(self.rng.randrange(2**32), 0)  # extension type -1
            return msgpack.ExtType(self.rng.randrange(128), self.rng.randbytes(3))
        if r < 0.04:
            return [[[[[]]]]] * 3
        return self.rng.choice(choices)()

    def value(self, depth: int = 0) -> Any:
        r = self.rng.random()
        if depth < 3 and r < 0.12:
            return [self.value(depth + 1) for _ in range(self.rng.randrange(5))]
        if depth < 3 and r < 0.2:
            return {self.text()[:8]: self.value(depth + 1) for _ in range(self.rng.randrange(4))}
        if r < 0.25:
            return self.pair()
        return self.scalar()


def mutate_value(old: Any, ctx: Context) -> Any:
    """Another value for a field: usually of the same type, near the old one or at a bound."""
    rng = ctx.rng
    if rng.random() < 0.15:
        return ctx.value()
    if isinstance(old, bool):
        return rng.choice([not old, 0, 1, None])
    if isinstance(old, int):
        return rng.choice(
            [
                old + 1,
                old - 1,
                old + rng.randrange(2, 300),
                old - rng.randrange(2, 300),
                -old,
                old * 2,
                rng.choice(INTS),
                rng.choice(INTS),
                float(old),
                str(old),
                True,
                None,
            ]
        )
    if isinstance(old, float):
        return rng.choice(
            [*FLOATS, old + 1, old - 1, old / 2, int(old) if math.isfinite(old) else 0]
        )
    if isinstance(old, str):
        options: list[Callable[[], Any]] = [
            lambda: "",
            lambda: old + "x",
            lambda: old[:-1],
            lambda: old * rng.randrange(2, 30),
            lambda: "z" * rng.choice(LIMITS),
            lambda: old.upper(),
            lambda: old + rng.choice(TEXTS),
            lambda: old.encode(),
            ctx.move_text,
            ctx.text,
        ]
        return rng.choice(options)()
    if isinstance(old, bytes):
        data = bytearray(old)
        r = rng.random()
        if r < 0.2 and data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
            return bytes(data)
        if r < 0.3:
            return bytes(data[: rng.randrange(len(data) + 1)])
        if r < 0.4:
            return bytes(data) + rng.randbytes(rng.choice([1, 1, 2, 32]))
        if r < 0.55:
            return ctx.key()
        if r < 0.7:
            return ctx.hash()
        if r < 0.78 and ctx.game.points:
            return rng.choice(ctx.game.points)
        if r < 0.84:
            return bytes(len(old))
        if r < 0.9:
            return rng.randbytes(len(old))
        return rng.choice([b"", old * 2, old.hex(), SMALL_ORDER, b"\xff" * len(old)])
    if isinstance(old, list):
        items = list(old)
        r = rng.random()
        if r < 0.15 and items:
            del items[rng.randrange(len(items))]
        elif r < 0.3 and items:
            items.insert(rng.randrange(len(items) + 1), rng.choice(items))
        elif r < 0.45 and len(items) > 1:
            i, j = rng.randrange(len(items)), rng.randrange(len(items))
            items[i], items[j] = items[j], items[i]
        elif r < 0.5:
            items.reverse()
        elif r < 0.6:
            items.append(ctx.value())
        elif r < 0.67:
            return []
        elif r < 0.74 and items:
            return items * rng.choice([2, 7, 53, 257])
        elif r < 0.8:
            return [items]
        elif r < 0.9:
            return [ctx.pair() for _ in range(rng.randrange(1, 6))]
        else:
            return dict(enumerate(items)) if rng.random() < 0.5 else ctx.value()
        return items
    if isinstance(old, dict):
        items_d = dict(old)
        r = rng.random()
        if r < 0.3 and items_d:
            del items_d[rng.choice(list(items_d))]
        elif r < 0.55:
            items_d[rng.choice([ctx.text()[:10], "preset", "x", "", "version", "b", "t"])] = (
                ctx.value()
            )
        elif r < 0.65:
            return []
        elif r < 0.75:
            return {}
        elif r < 0.8:
            return {1: "int key", b"k": "bin key"}
        else:
            return ctx.value()
        return items_d
    return ctx.value()


def containers(tree: Any, limit: int = 3000) -> list[tuple[Any, Any]]:
    """Every (container, key) of a decoded message, the envelope's first."""
    out: list[tuple[Any, Any]] = []
    stack = [tree]
    while stack and len(out) < limit:
        node = stack.pop(0)
        pairs = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, value in pairs:
            out.append((node, key))
            if isinstance(value, dict | list):
                stack.append(value)
    return out


# -- building frames ---------------------------------------------------------------------------


def raw_frame(kind: Any, payload: Any, signature: Any) -> bytes:
    body: bytes = msgpack.packb([kind, payload, signature], use_bin_type=True)
    return len(body).to_bytes(LENGTH_SIZE, "big") + body


def pack_any(obj: Any) -> bytes | None:
    try:
        return msgpack.packb(obj, use_bin_type=True)  # type: ignore[no-any-return]
    except (OverflowError, TypeError, ValueError):
        return None


def wide(obj: Any, rng: random.Random) -> bytes:
    """A valid but non-canonical msgpack encoding: some headers in their widest form."""
    w = rng.random() < 0.5
    if obj is None or isinstance(obj, bool):
        return msgpack.packb(obj)  # type: ignore[no-any-return]
    if isinstance(obj, int):
        if w and 0 <= obj <= U64_MAX:
            return b"\xcf" + obj.to_bytes(8, "big")
        if w and I64_MIN <= obj < 0:
            return b"\xd3" + obj.to_bytes(8, "big", signed=True)
        return msgpack.packb(obj)  # type: ignore[no-any-return]
    if isinstance(obj, float):
        return b"\xcb" + struct.pack(">d", obj)
    if isinstance(obj, str):
        data = obj.encode("utf-8", "surrogatepass")
        return (b"\xdb" + len(data).to_bytes(4, "big") if w else _str_header(len(data))) + data
    if isinstance(obj, bytes):
        return (b"\xc6" + len(obj).to_bytes(4, "big") if w else _bin_header(len(obj))) + obj
    if isinstance(obj, list | tuple):
        head = b"\xdd" + len(obj).to_bytes(4, "big") if w else _array_header(len(obj))
        return head + b"".join(wide(item, rng) for item in obj)
    if isinstance(obj, dict):
        head = b"\xdf" + len(obj).to_bytes(4, "big") if w else _map_header(len(obj))
        return head + b"".join(wide(k, rng) + wide(val, rng) for k, val in obj.items())
    return msgpack.packb(obj, use_bin_type=True)  # type: ignore[no-any-return]


def _str_header(n: int) -> bytes:
    if n < 32:
        return bytes([0xA0 | n])
    if n < 256:
        return b"\xd9" + bytes([n])
    return (b"\xda" + n.to_bytes(2, "big")) if n < 65536 else (b"\xdb" + n.to_bytes(4, "big"))


def _bin_header(n: int) -> bytes:
    if n < 256:
        return b"\xc4" + bytes([n])
    return (b"\xc5" + n.to_bytes(2, "big")) if n < 65536 else (b"\xc6" + n.to_bytes(4, "big"))


def _array_header(n: int) -> bytes:
    if n < 16:
        return bytes([0x90 | n])
    return (b"\xdc" + n.to_bytes(2, "big")) if n < 65536 else (b"\xdd" + n.to_bytes(4, "big"))


def _map_header(n: int) -> bytes:
    if n < 16:
        return bytes([0x80 | n])
    return (b"\xde" + n.to_bytes(2, "big")) if n < 65536 else (b"\xdf" + n.to_bytes(4, "big"))


def flip_bytes(data: bytes, rng: random.Random) -> bytes:
    """Byte-level damage: flips, inserts, deletes, a cut or an extension."""
    out = bytearray(data)
    for _ in range(rng.choice([1, 1, 1, 2, 3, 8])):
        r = rng.random()
        if r < 0.45 and out:
            out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
        elif r < 0.6 and out:
            out[rng.randrange(len(out))] = rng.choice([0, 0xFF, 0xC0, 0xC1, 0xDD, 0xDF, 0xD4])
        elif r < 0.72:
            at = rng.randrange(len(out) + 1)
            out[at:at] = rng.randbytes(rng.choice([1, 1, 2, 4, 9]))
        elif r < 0.84 and out:
            at = rng.randrange(len(out))
            del out[at : at + rng.choice([1, 1, 2, 4, 9])]
        elif r < 0.92:
            del out[rng.randrange(len(out) + 1) :]
        else:
            out += rng.randbytes(rng.choice([1, 4, 100]))
    return bytes(out)


class Mutator:
    """Mutations of one real frame, for one live session (see the module docstring)."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.rng = ctx.rng
        self.signers: set[bytes] = set()

    def sign(self, kind: str, payload: bytes, sender: bytes) -> bytes:
        identity = self.ctx.game.identities.get(sender)
        if identity is None or not isinstance(kind, str):
            return self.rng.randbytes(64)
        self.signers.add(sender)
        try:
            return identity.sign(kind, payload)
        except ValueError:  # a kind that is no signature tag: nobody could sign it
            return self.rng.randbytes(64)

    def envelope_of(self, frame: bytes) -> tuple[str, dict[str, Any], bytes]:
        kind, payload, signature = open_frame(frame[LENGTH_SIZE:])
        env = msgpack.unpackb(payload, raw=False)
        return kind, env, signature

    def finish(self, env: Any, kind: str, sender: bytes, op: str) -> tuple[bytes, str]:
        """Encode a mutated envelope and sign it (usually as its own ``t``)."""
        rng = self.rng
        payload = pack_any(env)
        if payload is None:  # a number msgpack cannot hold: damage the bytes instead
            payload = flip_bytes(pack_any(self._clean(env)) or b"\x80", rng)
            op += "+bytes"
        if rng.random() < 0.05:
            payload = wide(env, rng) if pack_any(env) else payload
            op += "+wide"
        out_kind = kind
        if isinstance(env, dict) and isinstance(env.get("t"), str) and rng.random() < 0.95:
            out_kind = env["t"]
        if rng.random() < 0.03:
            out_kind = rng.choice([*MAX_PAYLOAD_OF, "x", "", "hello\x00", "verdicts"])
            op += "+kind"
        if rng.random() < 0.04:
            return raw_frame(out_kind, payload, rng.randbytes(64)), op + "+unsigned"
        signer = env.get("f") if isinstance(env, dict) else None
        if not isinstance(signer, bytes) or signer not in self.ctx.game.identities:
            signer = sender
        return raw_frame(out_kind, payload, self.sign(out_kind, payload, signer)), op

    def _clean(self, tree: Any) -> Any:
        if isinstance(tree, int) and not isinstance(tree, bool):
            return max(I64_MIN, min(tree, U64_MAX))
        if isinstance(tree, list):
            return [self._clean(item) for item in tree]
        if isinstance(tree, dict):
            return {k: self._clean(val) for k, val in tree.items()}
        return tree

    # -- the operators

    def mutate(self, frame: bytes, depth: int = 0) -> tuple[bytes, str]:
        rng = self.rng
        try:
            kind, env, signature = self.envelope_of(frame)
        except (FrameError, ValueError):
            return flip_bytes(frame, rng), "bytes-frame"
        sender = env.get("f", b"") if isinstance(env, dict) else b""
        r = rng.random()
        if r < 0.12:
            return self._frame_level(frame, kind, env, signature, sender)
        if r < 0.22:
            payload = flip_bytes(msgpack.packb(env, use_bin_type=True), rng)
            if rng.random() < 0.9:
                return raw_frame(kind, payload, self.sign(kind, payload, sender)), "bytes-payload"
            return raw_frame(kind, payload, signature), "bytes-payload-unsigned"
        if r < 0.30:
            return self._wide(env, kind, sender)
        if r < 0.40 and depth == 0:
            return self._synthesize(env, kind, sender)
        if r < 0.52:
            return self._envelope_op(env, kind, sender)
        if r < 0.70:
            return self._body_op(env, kind, sender)
        ops = rng.choice([1, 1, 1, 2, 3])
        for _ in range(ops):
            self._tree_op(env)
        return self.finish(env, kind, sender, f"tree x{ops}")

    def _wide(self, env: Any, kind: str, sender: bytes) -> tuple[bytes, str]:
        payload = wide(env, self.rng)
        return raw_frame(kind, payload, self.sign(kind, payload, sender)), "wide-encoding"

    def _tree_op(self, env: Any) -> None:
        nodes = containers(env)
        if not nodes:
            return
        rng = self.rng
        if rng.random() < 0.5:  # the envelope's and the body's own fields, more often
            top = [(c, k) for c, k in nodes if c is env or c is env.get("b")]
            nodes = top or nodes
        container, key = rng.choice(nodes)
        r = rng.random()
        if r < 0.75:
            container[key] = mutate_value(container[key], self.ctx)
        elif r < 0.87:
            del container[key]
        elif isinstance(container, dict):
            container[rng.choice([self.ctx.text()[:12], "x", "h", "b", "v"])] = self.ctx.value()
        else:
            container.insert(rng.randrange(len(container) + 1), self.ctx.value())

    def _frame_level(
        self, frame: bytes, kind: str, env: Any, signature: bytes, sender: bytes
    ) -> tuple[bytes, str]:
        rng = self.rng
        payload = msgpack.packb(env, use_bin_type=True)
        r = rng.random()
        if r < 0.35:
            return flip_bytes(frame, rng), "frame-bytes"
        if r < 0.45:
            length = rng.choice([0, 1, len(frame) - 5, len(frame) - 3, MAX_FRAME + 1, 2**32 - 1])
            return length.to_bytes(LENGTH_SIZE, "big") + frame[LENGTH_SIZE:], "frame-length"
        if r < 0.55:
            other = rng.choice([*MAX_PAYLOAD_OF, "x", "", 7, None, b"move"])
            sig: Any = self.sign(other, payload, sender) if isinstance(other, str) else signature
            return raw_frame(other, payload, sig), "frame-kind"
        if r < 0.65:
            sig = rng.choice(
                [
                    bytes(64),
                    SMALL_ORDER + bytes(32),
                    signature[:63],
                    signature + b"\x00",
                    _non_canonical_s(signature),
                    _message_signature(rng.choice(self.ctx.game.frames)),
                    "sig",
                ]
            )
            return raw_frame(kind, payload, sig), "frame-signature"
        if r < 0.75:
            body = rng.choice(
                [
                    [kind, payload],
                    [kind, payload, signature, b""],
                    {"kind": kind, "payload": payload},
                    [kind, payload.hex(), signature],
                    [kind, [payload], signature],
                ]
            )
            data = msgpack.packb(body, use_bin_type=True)
            return len(data).to_bytes(LENGTH_SIZE, "big") + data, "frame-shape"
        if r < 0.85:
            big = payload + bytes(rng.choice([MAX_PAYLOAD_OF.get(kind, 512), MAX_FRAME]))
            return raw_frame(kind, big, self.sign(kind, big, sender)), "frame-oversize"
        body = frame[LENGTH_SIZE:]
        return rng.choice(
            [body, frame + frame[:7], frame[: rng.randrange(len(frame))]]
        ), "frame-cut"

    def _envelope_op(self, env: dict[str, Any], kind: str, sender: bytes) -> tuple[bytes, str]:
        rng = self.rng
        ctx = self.ctx
        session = ctx.session
        what = rng.choice(["s", "s", "p", "g", "f", "t", "t", "h", "h", "v"])
        if what == "s":
            nxt = session.peers[sender].next_seq if session and sender in session.peers else 0
            env["s"] = rng.choice(
                [env["s"] + 1, env["s"] - 1, nxt, nxt + 1, nxt + WINDOW - 1, nxt + WINDOW, 0, 2**20]
            )
        elif what == "p":
            env["p"] = ctx.hash()
        elif what == "g":
            env["g"] = rng.choice([ctx.game.table, ctx.game.game_id, bytes(32), ctx.hash()])
        elif what == "f":
            env["f"] = ctx.key()
        elif what == "t":
            new = rng.choice(m.MESSAGE_TYPES)
            env["t"] = new
            donors = ctx.game.by_type.get(new)
            if donors and rng.random() < 0.6:  # a real body of that type: type confusion
                env["b"] = msgpack.unpackb(open_frame(rng.choice(donors)[4:])[1], raw=False)["b"]
        elif what == "h":
            heads = env.get("h")
            if isinstance(heads, list) and heads and rng.random() < 0.7:
                i = rng.randrange(len(heads))
                count, digest = heads[i]
                heads[i] = rng.choice(
                    [
                        [count + 1, digest or bytes(8)],
                        [max(count - 1, 0), digest if count > 1 else b""],
                        [count, rng.randbytes(8) if count else b""],
                        [count, digest + b"\x00"],
                        [0, digest],
                        [2**20 + 1, bytes(8)],
                    ]
                )
            else:
                env["h"] = mutate_value(heads, ctx)
        else:
            env["v"] = mutate_value(env.get("v", m.VERSION), ctx)
        return self.finish(env, kind, sender, f"envelope-{what}")

    def _body_op(self, env: dict[str, Any], kind: str, sender: bytes) -> tuple[bytes, str]:
        """A semantic change to the body, with the values its handler looks at."""
        rng = self.rng
        ctx = self.ctx
        body = env.get("b")
        kind_t = env.get("t")
        if not isinstance(body, dict):
            self._tree_op(env)
            return self.finish(env, kind, sender, "body-tree")
        g = ctx.session.game if ctx.session is not None else None
        if kind_t == m.MOVE:
            field_ = rng.choice(["move", "move", "state", "cards", "cards"])
            if field_ == "move":
                body["move"] = ctx.move_text()
            elif field_ == "state":
                current = bytes.fromhex(g.state_hash()) if g is not None else ctx.hash()
                body["state"] = rng.choice([current, ctx.hash(), rng.choice(ctx.game.states)])
            else:
                cards = list(body.get("cards") or [])
                r = rng.random()
                if r < 0.3 and cards:
                    cards[rng.randrange(len(cards))] = ctx.pair()
                elif r < 0.5:
                    cards.append(ctx.pair())
                elif r < 0.65 and cards:
                    cards.append(rng.choice(cards))
                elif r < 0.8:
                    cards = []
                else:
                    cards = [ctx.pair() for _ in range(rng.randrange(1, 5))]
                body["cards"] = cards
        elif kind_t in (m.KEYS, m.DISCLOSE):
            keys = list(body.get("keys") or [])
            r = rng.random()
            if r < 0.3 and keys:
                i = rng.randrange(len(keys))
                keys[i] = [keys[i][0], ctx.pair()[1]]
            elif r < 0.45 and keys:
                keys[rng.randrange(len(keys))] = [rng.choice([-1, 52, 51, 0, 2**20]), keys[0][1]]
            elif r < 0.6:
                keys.append(ctx.pair())
            elif r < 0.7 and keys:
                keys.append(keys[0])
            elif r < 0.8:
                keys = []
            else:
                keys = [ctx.pair() for _ in range(rng.randrange(1, 8))]
            body["keys"] = keys
        elif kind_t == m.CLAIM:
            if rng.random() < 0.5:
                body["rank"] = rng.choice([0, 1, 2, 3, 4, 11, 12, 13, -1, body["rank"] + 1])
            else:
                body["card"] = None if body.get("card") else ctx.pair()
        elif kind_t == m.RESULT:
            r = rng.random()
            if r < 0.4:
                body["losers"] = rng.choice([[], [0], [1], [0, 1], [5], [0, 0], [6], [-1]])
            elif r < 0.7:
                current = bytes.fromhex(g.state_hash()) if g is not None else ctx.hash()
                body["state"] = rng.choice([current, ctx.hash()])
            else:
                body["transcript"] = ctx.hash()
        elif kind_t == m.HELLO:
            r = rng.random()
            if r < 0.4 and isinstance(body.get("config"), dict):
                config = body["config"]
                name = rng.choice(list(config))
                config[name] = mutate_value(config[name], ctx)
                if rng.random() < 0.2:
                    config["options"] = {rng.choice(["preset", "players", "deck_kill", "x"]): "on"}
            elif r < 0.6:
                roster = list(body.get("roster") or [])
                body["roster"] = mutate_value(roster, ctx) if roster else [ctx.key()]
            else:
                name = rng.choice(["name", "nonce", "seat_commit"])
                body[name] = mutate_value(body.get(name), ctx)
        elif kind_t in (m.SHUFFLE1, m.SHUFFLE2):
            name = rng.choice([n for n in ("points", "keys", "proof", "scalar") if n in body])
            body[name] = mutate_value(body[name], ctx)
        else:
            name = rng.choice(list(body)) if body else None
            if name is not None:
                body[name] = mutate_value(body[name], ctx)
        return self.finish(env, kind, sender, f"body-{kind_t}")

    def _synthesize(self, env: dict[str, Any], kind: str, sender: bytes) -> tuple[bytes, str]:
        """A message the game never had, in the sender's place in its order: a leave, or a
        verdict with real (or mutated, re-signed) frames as evidence."""
        rng = self.rng
        ctx = self.ctx
        if rng.random() < 0.3:
            env["t"] = m.LEAVE
            env["b"] = {"reason": ctx.text()[:250]}
            return self.finish(env, m.LEAVE, sender, "made-up-leave")
        evidence: list[Any] = []
        for _ in range(rng.choice([0, 1, 1, 2, 4, 5])):
            r = rng.random()
            base = rng.choice(ctx.game.frames)
            if r < 0.45:
                evidence.append(base)
            elif r < 0.8:
                evidence.append(self.mutate(base, depth=1)[0])
            elif r < 0.9:
                evidence.append(rng.randbytes(rng.randrange(60)))
            else:
                evidence.append(rng.choice([b"", bytes(13000), "frame", 7]))
        culprits = rng.sample(ctx.game.roster, rng.randrange(len(ctx.game.roster) + 1))
        if rng.random() < 0.15:
            culprits.append(ctx.key())
        env["t"] = m.VERDICT
        env["b"] = {
            "kind": rng.choice(VERDICT_KINDS),
            "culprits": culprits,
            "reason": ctx.text()[:420],
            "evidence": evidence,
        }
        if rng.random() < 0.2:
            self._tree_op(env)
        return self.finish(env, m.VERDICT, sender, "made-up-verdict")

    def ahead(self, frame: bytes, count: int) -> list[bytes]:
        """``count`` leaves from the frame's sender, numbered after it (a flood)."""
        _, env, _ = self.envelope_of(frame)
        out = []
        for i in range(1, count + 1):
            env = dict(env, s=env["s"] + i, t=m.LEAVE, b={"reason": f"flood {i}"})
            payload = msgpack.packb(env, use_bin_type=True)
            out.append(raw_frame(m.LEAVE, payload, self.sign(m.LEAVE, payload, env["f"])))
        return out


ED25519_L = 2**252 + 27742317777372353535851937790883648493


def _non_canonical_s(signature: bytes) -> bytes:
    """The same signature with S + L for S: the same point, a malleated (refused) encoding."""
    s = int.from_bytes(signature[32:], "little") + ED25519_L
    return signature[:32] + (s.to_bytes(32, "little") if s < 2**256 else signature[32:])


def _message_signature(frame: bytes) -> bytes:
    return open_frame(frame[LENGTH_SIZE:])[2]


# -- the run -------------------------------------------------------------------------------------


@dataclass
class Stats:
    inputs: int = 0
    session_inputs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    by_op: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    decoders: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    rejections: Counter[str] = field(default_factory=Counter)
    verdict_reasons: Counter[str] = field(default_factory=Counter)
    exceptions: Counter[str] = field(default_factory=Counter)
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)
    blamed_other: Counter[str] = field(default_factory=Counter)
    blamed_examples: dict[str, str] = field(default_factory=dict)
    time_by_kind: Counter[str] = field(default_factory=Counter)
    count_by_kind: Counter[str] = field(default_factory=Counter)
    slow: list[tuple[float, int, str]] = field(default_factory=list)
    restores: int = 0
    harness_errors: Counter[str] = field(default_factory=Counter)


def _normalize(reason: str) -> str:
    reason = re.sub(r"0x[0-9a-f]+|[0-9A-F]{4}(-[0-9A-F]{4}){3}|\b\d+\b", "N", reason)
    reason = re.sub(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\([^)]*\)", "…", reason)
    return reason[:70]


def _where(error: BaseException) -> str:
    """Where an exception comes from: its type, and the innermost project line of the
    deepest exception it was raised from (a LocalError wraps the real cause)."""
    names = [type(error).__name__]
    root = error
    while root.__cause__ is not None and len(names) < 5:
        root = root.__cause__
        names.append(type(root).__name__)
    frames = traceback.extract_tb(root.__traceback__)
    ours = [f for f in frames if "moska_p2p" in f.filename] or frames
    last = ours[-1] if ours else None
    place = f"{Path(last.filename).name}:{last.lineno}" if last else "?"
    return f"{' from '.join(names)} at {place}"


class Fuzzer:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.seed: int = args.seed
        self.snapshots = Snapshots()
        self.games: list[Game] = []
        self.checkpoints: list[Checkpoint] = []
        self.stats = Stats()
        self.findings_dir = Path(args.findings)
        self.live: tuple[int, PeerSession] | None = None
        self.tmp = Path(tempfile.mkdtemp(prefix="moska-fuzz-"))
        self.net_frames: list[tuple[bytes, Identity]] = []
        self.announcements: list[bytes] = []
        self.configs: list[dict[str, Any]] = []

    # -- setup

    def setup(self) -> None:
        start = time.perf_counter()
        for index, spec in enumerate(GAMES):
            t0 = time.perf_counter()
            game, checkpoints = play(index, self.snapshots, self.args.checkpoints)
            checkpoints = validate(checkpoints, self.snapshots)
            self.games.append(game)
            self.checkpoints.extend(checkpoints)
            kinds = Counter(c.kind for c in checkpoints)
            size = sum(len(c.blob) for c in checkpoints) >> 10
            print(
                f"  {spec.name:14} {len(game.frames):4} frames, {len(checkpoints):3} checkpoints"
                f" ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}), {size} KiB,"
                f" {time.perf_counter() - t0:.1f} s"
            )
        if not any(g.by_type.get(m.DISCLOSE) for g in self.games):
            print("  (no game has a disclosure this time)")
        self.weights = [WEIGHTS.get(c.kind, 1.0) for c in self.checkpoints]
        for game in self.games:
            for frame in game.by_type[m.HELLO][:1]:
                self.configs.append(_message(frame).body["config"])
        self._net_setup()
        print(f"  setup {time.perf_counter() - start:.1f} s, {len(self.checkpoints)} checkpoints")

    def _net_setup(self) -> None:
        game = self.games[0]
        config = game.config
        host, joiner = (game.identities[k] for k in game.roster[:2])
        lobby = lobby_id(config)
        table = table_id(config, game.roster)
        n_host, n_join = bytes([7]) * 32, bytes([8]) * 32
        entry_host = wire.Entry.sign(host, lobby, "alice", "", 7000)
        entry_join = wire.Entry.sign(joiner, lobby, "bob", "192.0.2.2", 7001)
        dialer = wire.link_proof(
            joiner, lobby, joiner.public_bytes, host.public_bytes, n_join, n_host, wire.DIALER
        )
        listener = wire.link_proof(
            host, table, joiner.public_bytes, host.public_bytes, n_join, n_host, wire.LISTENER
        )
        bodies: list[tuple[Identity, str, dict[str, Any]]] = [
            (host, wire.HI, {"nonce": n_host, "name": "alice", "config": config.to_wire()}),
            (host, wire.HI, {"nonce": n_host, "name": "alice"}),
            (
                joiner,
                wire.JOIN,
                {
                    "nonce": n_join,
                    "table": lobby,
                    "proof": dialer,
                    "name": "bob",
                    "host": "192.0.2.2",
                    "port": 7001,
                    "sig": entry_join.sig,
                },
            ),
            (joiner, wire.LINK, {"nonce": n_join, "table": table, "proof": dialer}),
            (host, wire.WELCOME, {"proof": listener}),
            (
                host,
                wire.START,
                {
                    "config": config.to_wire(),
                    "roster": [entry_host.to_wire(), entry_join.to_wire()],
                },
            ),
            (joiner, wire.SYNC, {"have": [[host.public_bytes, 3], [joiner.public_bytes, 0]]}),
            (joiner, wire.BYE, {"reason": "done"}),
            (host, wire.REFUSE, {"reason": "the table is full"}),
        ]
        self.net_frames = [(wire.net_frame(i, kind, body), i) for i, kind, body in bodies]
        self.lobby = lobby
        for seq, (seats, is_open) in enumerate([(1, True), (2, False)]):
            self.announcements.append(
                discovery.announcement(
                    host, config, name="alice", port=7000, seats=seats, seq=seq, open=is_open
                )
            )

    # -- findings

    def finding(
        self, where: str, index: int, error: BaseException, inputs: list[bytes], note: str
    ) -> None:
        key = f"{where}: {_where(error)}"
        self.stats.exceptions[f"{where}: {type(error).__name__}"] += 1
        if key in self.stats.findings:
            self.stats.findings[key]["count"] += 1
            return
        tb = "".join(traceback.format_exception(error))
        record = {
            "where": where,
            "error": repr(error),
            "seed": self.seed,
            "input": index,
            "note": note,
            "count": 1,
            "inputs_hex": [x.hex() for x in inputs],
            "traceback": tb,
        }
        self.stats.findings[key] = record
        self.findings_dir.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9]+", "-", key)[:100]
        (self.findings_dir / f"{name}.json").write_text(json.dumps(record, indent=1))
        print(f"\n!!! FINDING {key} (input {index}, {note})", flush=True)
        for i, data in enumerate(inputs):
            text = data.hex()
            cut = f" ... ({len(text)} hex digits in all)" if len(text) > MAX_HEX else ""
            print(f"    input[{i}] = {text[:MAX_HEX]}{cut}")
        print("    " + tb.replace("\n", "\n    "), flush=True)

    # -- one input

    def run_one(self, index: int, verbose: bool = False) -> None:
        rng = random.Random((self.seed << 40) ^ index)
        started = time.perf_counter()
        r = rng.random()
        if r < self.args.session_share:
            label = self.session_input(index, rng, verbose)
        else:
            label = self.decoder_input(index, rng, verbose)
        spent = time.perf_counter() - started
        self.stats.inputs += 1
        self.stats.time_by_kind[label] += spent  # type: ignore[assignment]
        self.stats.count_by_kind[label] += 1
        if spent > SLOW_INPUT:
            self.stats.slow.append((spent, index, label))

    def _session_for(self, number: int) -> PeerSession:
        if self.live is not None and self.live[0] == number:
            return self.live[1]
        self.stats.restores += 1
        session = self.snapshots.loads(self.checkpoints[number].blob)
        self.live = (number, session)
        return session

    def session_input(self, index: int, rng: random.Random, verbose: bool) -> str:
        batch = random.Random((self.seed << 40) ^ (1 << 39) ^ (index // BATCH))
        number = batch.choices(range(len(self.checkpoints)), self.weights)[0]
        checkpoint = self.checkpoints[number]
        game = self.games[checkpoint.game]
        session = self._session_for(number)
        ctx = Context(rng, game, session)
        mutator = Mutator(ctx)
        try:
            frames, follow, op = self._craft(rng, mutator, checkpoint, game)
        except Exception as error:  # a bug of this script, not of the library
            self.harness_error(index, error)
            return checkpoint.kind
        now = checkpoint.clock
        if rng.random() < 0.1:
            now += rng.choice([checkpoint_timeout(game) / 2, checkpoint_timeout(game) + 1])
        tick = rng.random() < 0.03
        crafted = (frames, follow, op, now, tick)
        return self._feed(index, checkpoint, session, game, mutator, crafted, verbose)

    def _craft(
        self, rng: random.Random, mutator: Mutator, checkpoint: Checkpoint, game: Game
    ) -> tuple[list[bytes], list[bytes], str]:
        r = rng.random()
        if r < 0.8:
            base = checkpoint.frame
        elif r < 0.9:
            base = rng.choice(game.frames)
        else:
            base = rng.choice([c.frame for c in self.checkpoints if c.game == checkpoint.game])
        follow: list[bytes] = []
        if rng.random() < 0.002:
            frames, op = mutator.ahead(base, rng.choice([3, 20, WINDOW - 1, WINDOW + 1])), "flood"
        else:
            frame, op = mutator.mutate(base)
            frames = [frame]
            r = rng.random()
            if r < 0.04:
                frames.append(frame)
                op += "+again"
            elif r < 0.12:
                later = [f for t, f, _ in game.log[checkpoint.at + 1 :] if t == checkpoint.target]
                follow = later[: rng.randrange(1, 4)]
                op += "+honest"
        return frames, follow, op

    def _feed(
        self,
        index: int,
        checkpoint: Checkpoint,
        session: PeerSession,
        game: Game,
        mutator: Mutator,
        crafted: tuple[list[bytes], list[bytes], str, float, bool],
        verbose: bool,
    ) -> str:
        frames, follow, op, now, tick = crafted
        before = (session.stage, len(session.transcript), len(session._seen), len(session._limbo))
        outputs: list[v.Output] = []
        fed: list[bytes] = []
        try:
            for frame in [*frames, *follow]:
                fed.append(frame)
                outputs += session.receive(frame, now)
            if tick:
                outputs += session.tick(now + checkpoint_timeout(game) + 1)
        except Exception as error:
            self.finding(
                "receive",
                index,
                error,
                fed,
                f"checkpoint {checkpoint.label}, stage {checkpoint.stage}, op {op}, now {now}",
            )
            self.live = None
            self.stats.outcomes["exception"] += 1
            self.stats.by_op[_op_family(op)]["exception"] += 1
            return checkpoint.kind
        after = (session.stage, len(session.transcript), len(session._seen), len(session._limbo))
        # A timeout this peer saw itself (a tick, or a verdict adopted after waiting) names a
        # silent peer by design: only other verdicts against a non-signer are suspicious.
        timed = tick or now > checkpoint.clock
        outcome = self._classify(
            outputs, before, after, mutator.signers | _signers(fed, game), timed
        )
        self.stats.session_inputs += 1
        self.stats.outcomes[outcome] += 1
        self.stats.by_op[_op_family(op)][outcome.split(":")[0]] += 1
        dirty = tick or before != after or any(not isinstance(o, v.Rejected) for o in outputs)
        if dirty:
            self.live = None
        if verbose:
            print(f"input {index}: checkpoint {checkpoint.label} op {op} now {now}")
            for frame in fed:
                print(f"  fed {frame.hex()}")
            for out in outputs:
                print(f"  -> {out!r}"[:400])
            print(f"  outcome {outcome}")
        return checkpoint.kind

    def _classify(
        self,
        outputs: list[v.Output],
        before: tuple[Any, ...],
        after: tuple[Any, ...],
        signers: set[bytes],
        timed: bool,
    ) -> str:
        stopped = [o for o in outputs if isinstance(o, v.Stopped)]
        if stopped:
            verdict = stopped[0].verdict
            self.stats.verdict_reasons[f"{verdict.kind}: {_normalize(verdict.reason)}"] += 1
            expected = timed and verdict.kind == v.TIMEOUT
            if not set(verdict.keys) <= signers and not expected:
                self.stats.blamed_other[verdict.kind] += 1
                self.stats.blamed_examples.setdefault(verdict.kind, verdict.reason[:200])
            return f"stopped:{verdict.kind}"
        rejected = [o for o in outputs if isinstance(o, v.Rejected)]
        if rejected:
            self.stats.rejections[_normalize(rejected[0].reason)] += 1
            return "rejected"
        if after[1] > before[1]:
            return "accepted:applied"
        if after[2] > before[2] or after[3] > before[3]:
            return "accepted:queued"
        return "ignored (a copy)"

    # -- the pure decoders

    def decoder_input(self, index: int, rng: random.Random, verbose: bool) -> str:
        game = rng.choice(self.games)
        ctx = Context(rng, game, None)
        mutator = Mutator(ctx)
        name = rng.choices(
            ["frames", "message", "config", "net", "announcement", "move text", "transcript"],
            [5, 5, 4, 5, 4, 3, 1.5],
        )[0]
        if name == "transcript" and rng.random() < self.args.verify_share:
            name = "verify"
        handler: Callable[[random.Random, Context, Mutator], tuple[str, list[bytes]]] = getattr(
            self, "_decode_" + name.replace(" ", "_")
        )
        try:
            outcome, inputs = handler(rng, ctx, mutator)
        except _Foreign as foreign:
            self.finding(f"decoder {name}", index, foreign.error, foreign.inputs, foreign.note)
            self.stats.decoders[name]["FINDING"] += 1
            return f"decoder {name}"
        except Exception as error:  # a bug of this script, not of the library
            self.harness_error(index, error)
            return f"decoder {name}"
        self.stats.decoders[name][outcome] += 1
        if verbose:
            print(f"input {index}: decoder {name}: {outcome}")
            for data in inputs:
                print(f"  input {data.hex()}")
        return f"decoder {name}"

    def harness_error(self, index: int, error: Exception) -> None:
        key = _where(error)
        self.stats.harness_errors[key] += 1
        if self.stats.harness_errors[key] == 1:
            print(f"\n(fuzzer bug at input {index}, not a finding) {key}", flush=True)
            traceback.print_exception(error)

    def _decode_frames(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        parts = []
        for _ in range(rng.randrange(1, 5)):
            r = rng.random()
            base = rng.choice(ctx.game.frames)
            if r < 0.35:
                parts.append(base)
            elif r < 0.75:
                parts.append(mutator.mutate(base)[0])
            elif r < 0.9:
                parts.append(rng.randbytes(rng.randrange(40)))
            else:
                parts.append(
                    rng.choice([0, 1, 64, PRE_AUTH_MAX_FRAME + 1, 2**32 - 1]).to_bytes(4, "big")
                )
        stream = b"".join(parts)
        cap = rng.choice([PRE_AUTH_MAX_FRAME, MAX_FRAME, 64, 0])
        decoder = FrameDecoder(cap)
        outcome = "ok"
        at = 0
        try:
            while at < len(stream):
                step = rng.choice([1, 7, 100, 5000, len(stream)])
                for body in decoder.feed(stream[at : at + step]):
                    outcome = _open_and_parse(body)
                at += step
        except FrameError:
            outcome = "FrameError"
        except Exception as error:
            raise _Foreign(error, [stream], f"cap {cap}") from None
        return outcome, [stream]

    def _decode_message(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        frame, _ = mutator.mutate(rng.choice(ctx.game.frames))
        try:
            _, payload, _ = open_frame(frame[LENGTH_SIZE:])
        except FrameError:
            try:
                outer = msgpack.unpackb(frame[LENGTH_SIZE:], raw=False, strict_map_key=False)
                payload = outer[1] if isinstance(outer, list) and len(outer) > 1 else frame
            except Exception:
                payload = frame
            if not isinstance(payload, bytes):
                payload = frame
        try:
            msg = m.parse_payload(payload)
        except FrameError as error:
            return type(error).__name__, [payload]
        except Exception as error:
            raise _Foreign(error, [payload], "parse_payload") from None
        return f"parsed {msg.type}", [payload]

    def _decode_config(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        value: Any = json_copy(rng.choice(self.configs))
        for _ in range(rng.choice([1, 1, 2, 3])):
            nodes = containers({"c": value})
            container, key = rng.choice(nodes)
            container[key] = mutate_value(container[key], ctx)
            value = nodes[0][0]["c"]
        data = pack_any(value) or b""
        try:
            config = TableConfig.from_wire(value)
        except ConfigError:
            return "ConfigError", [data]
        except Exception as error:
            raise _Foreign(
                error, [data], "TableConfig.from_wire (the input is its msgpack)"
            ) from None
        try:
            assert TableConfig.from_wire(config.to_wire()) == config, "to_wire does not round trip"
        except Exception as error:
            raise _Foreign(error, [data], "TableConfig round trip") from None
        return "accepted", [data]

    def _decode_net(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        frame, identity = rng.choice(self.net_frames)
        kind, payload, signature = open_frame(frame[LENGTH_SIZE:])
        r = rng.random()
        if r < 0.15:
            body = flip_bytes(frame[LENGTH_SIZE:], rng)
        else:
            obj = msgpack.unpackb(payload, raw=False)
            for _ in range(rng.choice([1, 1, 2])):
                mutator._tree_op(obj)
            data = pack_any(obj) or flip_bytes(payload, rng)
            if r < 0.25:
                data = flip_bytes(data, rng)
            if rng.random() < 0.05:
                kind = rng.choice([*NET_KINDS, "net/x", "move", BEACON])
            key = obj.get("key") if isinstance(obj, dict) else None
            signer = ctx.game.identities.get(key) if isinstance(key, bytes) else None
            signer = signer or identity
            sig = signature if rng.random() < 0.05 else signer.sign(kind, data)
            body = msgpack.packb([kind, data, sig], use_bin_type=True)
        try:
            message = wire.classify(body)
        except FrameError:
            return "FrameError", [body]
        except Exception as error:
            raise _Foreign(error, [body], "classify") from None
        if message is None:
            return "a game frame", [body]
        try:
            if message.kind == wire.START:
                for entry in message.body["roster"]:
                    with contextlib.suppress(FrameError):
                        wire.Entry.from_wire(entry).verify(self.lobby)
            if message.kind in (wire.JOIN, wire.LINK, wire.WELCOME):
                b = message.body
                for role in (wire.DIALER, wire.LISTENER):
                    wire.check_link_proof(
                        b["proof"],
                        b.get("table", self.lobby),
                        message.key,
                        ctx.rng.choice(ctx.game.roster),
                        b.get("nonce", bytes(32)),
                        bytes(32),
                        role,
                    )
        except Exception as error:
            raise _Foreign(error, [body], f"after classify: a {message.kind}") from None
        return f"verified {message.kind}", [body]

    def _decode_announcement(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        datagram = rng.choice(self.announcements)
        _, payload, signature = open_frame(datagram[LENGTH_SIZE:])
        r = rng.random()
        if r < 0.2:
            data = flip_bytes(datagram, rng)
        else:
            obj = msgpack.unpackb(payload, raw=False)
            for _ in range(rng.choice([1, 1, 2])):
                mutator._tree_op(obj)
            new = pack_any(obj) or flip_bytes(payload, rng)
            key = obj.get("key") if isinstance(obj, dict) else None
            signer = ctx.game.identities.get(key) if isinstance(key, bytes) else None
            signer = signer or ctx.game.identities[ctx.game.roster[0]]
            sig = signature if rng.random() < 0.05 else signer.sign(BEACON, new)
            body = msgpack.packb([BEACON, new, sig], use_bin_type=True)
            data = len(body).to_bytes(LENGTH_SIZE, "big") + body
        try:
            found = discovery.parse_announcement(data, "192.0.2.1")
        except FrameError:
            return "FrameError", [data]
        except Exception as error:
            raise _Foreign(error, [data], "parse_announcement") from None
        try:
            found.describe()
            _ = found.joinable, found.endpoint, found.fingerprint
            discovery.Collector().feed(data, "192.0.2.1")
        except Exception as error:
            raise _Foreign(error, [data], "after parse_announcement") from None
        return "verified", [data]

    def _decode_move_text(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        text = ctx.move_text()
        for _ in range(rng.choice([0, 1, 1, 2])):
            changed = mutate_value(text, ctx)
            text = changed if isinstance(changed, str) else text
        if rng.random() < 0.2:
            words = text.split()
            rng.shuffle(words)
            text = rng.choice([" ", ",", " , ", "\t"]).join(words)
        data = text.encode("utf-8", "surrogatepass")
        try:
            move = parse_move(text)
        except MoveSyntaxError:
            return "MoveSyntaxError", [data]
        except Exception as error:
            raise _Foreign(error, [data], "parse_move (the input is the text in UTF-8)") from None
        try:
            assert parse_move(str(move)) == move, f"{move} does not parse back"
        except Exception as error:
            raise _Foreign(error, [data], "parse_move round trip") from None
        return "parsed", [data]

    def _transcript_file(self, rng: random.Random, ctx: Context, mutator: Mutator) -> bytes:
        game = ctx.game
        owner = game.final[rng.randrange(len(game.final))]
        frames = list(owner.transcript)
        for _ in range(rng.choice([1, 1, 2, 3])):
            if not frames:
                break
            i = rng.randrange(len(frames))
            op = rng.choice(["flip", "mutate", "drop", "dup", "swap", "truncate", "cut"])
            if op == "flip":
                frames[i] = flip_bytes(frames[i], rng)
            elif op == "mutate":
                frames[i] = mutator.mutate(frames[i])[0]
            elif op == "drop":
                del frames[i]
            elif op == "dup":
                frames.insert(rng.randrange(len(frames) + 1), frames[i])
            elif op == "swap":
                j = rng.randrange(len(frames))
                frames[i], frames[j] = frames[j], frames[i]
            elif op == "truncate":
                frames = frames[:i]
            else:
                frames[i] = frames[i][: rng.randrange(len(frames[i]))]
        path = self.tmp / "game.moska"
        write_transcript(path, owner.me, owner.config, owner.roster, frames)
        data = path.read_bytes()
        if rng.random() < 0.15:
            data = flip_bytes(data[:300], rng) + data[300:]
            path.write_bytes(data)
        return data

    def _decode_transcript(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        data = self._transcript_file(rng, ctx, mutator)
        try:
            read_transcript(self.tmp / "game.moska")
        except TranscriptError:
            return "TranscriptError", [data]
        except Exception as error:
            raise _Foreign(error, [data], "read_transcript (the input is the file)") from None
        return "read", [data]

    def _decode_verify(
        self, rng: random.Random, ctx: Context, mutator: Mutator
    ) -> tuple[str, list[bytes]]:
        data = self._transcript_file(rng, ctx, mutator)
        try:
            report = verify_transcript(self.tmp / "game.moska")
            assert isinstance(report, Report)
            json.dumps(report.to_json())
        except Exception as error:
            raise _Foreign(error, [data], "verify_transcript (the input is the file)") from None
        if report.fault and "the verifier failed" in report.fault:
            failed = RuntimeError(report.fault)
            raise _Foreign(failed, [data], "verify_transcript: the verifier failed on its own")
        return ("valid" if report.valid else "invalid"), [data]

    # -- the whole run

    def run(self) -> int:
        args = self.args
        if args.only is not None:
            self.run_one(args.only, verbose=True)
            self.print_summary(0.0)
            return 1 if self.stats.findings else 0
        start = time.perf_counter()
        last = start
        for index in range(args.inputs):
            self.run_one(index)
            if (index + 1) % args.report_every == 0:
                now = time.perf_counter()
                rate = args.report_every / (now - last)
                last = now
                print(
                    f"  {index + 1:>9} inputs  {rate:6.0f}/s now  "
                    f"{(index + 1) / (now - start):6.0f}/s overall  {now - start:7.0f} s  "
                    f"peak RSS {_peak_rss_mb():.0f} MB  findings {len(self.stats.findings)}",
                    flush=True,
                )
        self.print_summary(time.perf_counter() - start)
        return 1 if self.stats.findings else 0

    def print_summary(self, elapsed: float) -> None:
        s = self.stats
        print("\n== summary ==")
        rate = s.inputs / elapsed if elapsed else 0.0
        print(f"inputs {s.inputs:,} in {elapsed:.0f} s: {rate:.0f} inputs/s; seed {self.seed}")
        print(f"peak RSS {_peak_rss_mb():.0f} MB; session restores {s.restores:,}")
        print(f"\nlive sessions: {s.session_inputs:,} inputs")
        _table("outcome", s.outcomes, s.session_inputs)
        print("\nby mutation (outcome family):")
        families = sorted({k for c in s.by_op.values() for k in c})
        print(f"  {'mutation':24}" + "".join(f"{f[:12]:>13}" for f in families))
        for op, counts in sorted(s.by_op.items(), key=lambda kv: -sum(kv[1].values())):
            print(f"  {op[:24]:24}" + "".join(f"{counts.get(f, 0):>13,}" for f in families))
        print("\nmost common refusals:")
        _table("reason", Counter(dict(s.rejections.most_common(15))), None)
        print("\nmost common verdicts:")
        _table("verdict", Counter(dict(s.verdict_reasons.most_common(20))), None)
        if s.blamed_other:
            print("\nverdicts naming a key that signed nothing in the input (by kind):")
            for kind, count in s.blamed_other.most_common():
                print(f"  {kind:20} {count:>9,}  e.g. {s.blamed_examples[kind]!r}")
        print("\npure decoders:")
        for name, counts in sorted(s.decoders.items()):
            total = sum(counts.values())
            parts = ", ".join(f"{k} {n:,}" for k, n in counts.most_common(8))
            print(f"  {name:13} {total:>9,}: {parts}")
        print("\ncost by checkpoint kind / decoder:")
        for label, count in s.count_by_kind.most_common():
            mean = 1000 * s.time_by_kind[label] / count
            print(f"  {label:22} {count:>9,} inputs  {mean:8.2f} ms each")
        if s.slow:
            print(f"\ninputs slower than {SLOW_INPUT} s:")
            for spent, index, label in sorted(s.slow, reverse=True)[:10]:
                print(f"  input {index}: {spent:.1f} s ({label})")
        print("\nexceptions by type:")
        if not s.exceptions:
            print("  none")
        for key, count in s.exceptions.most_common():
            print(f"  {key:50} {count:>9,}")
        if s.findings:
            print(f"\n{len(s.findings)} finding(s), saved in {self.findings_dir}:")
            for key, record in s.findings.items():
                print(f"  {key}  x{record['count']}  first at input {record['input']}")


class _Foreign(Exception):
    def __init__(self, error: BaseException, inputs: list[bytes], note: str) -> None:
        super().__init__(repr(error))
        self.error = error
        self.inputs = inputs
        self.note = note


def _open_and_parse(body: bytes) -> str:
    kind, payload, _ = open_frame(body)
    if kind in m.MESSAGE_TYPES:
        m.parse_payload(payload)
        return "parsed"
    unpack(payload, limit=MAX_PAYLOAD_OF[kind])
    return "unpacked"


def _signers(frames: list[bytes], game: Game) -> set[bytes]:
    """Keys whose valid signature any fed frame (or its evidence) could carry: the senders
    named in the frames, which a fuzzer holding every key may have signed for."""
    out: set[bytes] = set()
    for frame in frames:
        try:
            msg = _message(frame)
        except (FrameError, ValueError):
            continue
        out.add(msg.sender)
    return out & set(game.identities)


def _op_family(op: str) -> str:
    return op.split("+")[0]


def checkpoint_timeout(game: Game) -> float:
    return float(game.config.timeout)


def json_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: json_copy(x) for k, x in value.items()}
    if isinstance(value, list):
        return [json_copy(x) for x in value]
    return value


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _table(title: str, counts: Counter[str], total: int | None) -> None:
    total = total or sum(counts.values()) or 1
    for key, count in counts.most_common():
        print(f"  {key[:72]:72} {count:>10,}  {100 * count / total:5.1f}%")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=1_000_000, help="inputs to run")
    parser.add_argument("--seed", type=int, default=1, help="seed of the inputs (games are fixed)")
    parser.add_argument("--report-every", type=int, default=50_000, help="progress every N")
    parser.add_argument("--checkpoints", type=int, default=80, help="snapshots per game, about")
    parser.add_argument(
        "--session-share", type=float, default=0.72, help="share of inputs fed to sessions"
    )
    parser.add_argument(
        "--verify-share",
        type=float,
        default=0.02,
        help="share of the transcript inputs replayed by verify_transcript (slow)",
    )
    parser.add_argument(
        "--findings", default="/tmp/moska-fuzz-findings", help="where findings are saved"
    )
    parser.add_argument("--only", type=int, default=None, help="run input N alone, verbosely")
    args = parser.parse_args(argv)
    print(f"moska-p2p fuzz: {args.inputs:,} inputs, seed {args.seed}")
    fuzzer = Fuzzer(args)
    fuzzer.setup()
    return fuzzer.run()


if __name__ == "__main__":
    sys.exit(main())
