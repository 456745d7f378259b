"""Mutating a decoded value with its structure in mind: boundary numbers, other types,
sizes at the caps, fields dropped or added, list items swapped (:func:`mutate_value`).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

import msgpack

from moska_p2p.cards import CARD_TEXT
from moska_p2p.engine.moves import KIND_NAMES
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.session import WINDOW, PeerSession
from scripts.lib.fuzz.games import Game

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
SMALL_ORDER = bytes([1]) + bytes(31)  # the identity point: a key whose signatures anyone can forge
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
