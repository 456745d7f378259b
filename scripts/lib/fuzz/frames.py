"""Building the mutated frames: raw and wide msgpack encodings, byte flips, and the
:class:`Mutator` that turns a real frame of a game into an input (most signed again with
the real sender's key, so that the mutation reaches the handlers).
"""

from __future__ import annotations

import random
import struct
from typing import Any

import msgpack

from moska_p2p.protocol import messages as m
from moska_p2p.protocol.frames import (
    LENGTH_SIZE,
    MAX_FRAME,
    MAX_PAYLOAD_OF,
    FrameError,
    open_frame,
)
from moska_p2p.protocol.session import WINDOW
from scripts.lib.fuzz.values import (
    I64_MIN,
    SMALL_ORDER,
    U64_MAX,
    VERDICT_KINDS,
    Context,
    containers,
    mutate_value,
)

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
