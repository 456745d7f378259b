"""The pieces every vector file uses: fixed seeds, the JSON form of msgpack values
(PROTOCOL.md §18), an in-memory table that records what one peer saw, and replaying its
steps on an observer.
"""

from __future__ import annotations

import hashlib
import random
import struct
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.frames import (
    encode_frame,
    open_frame,
)
from moska_p2p.protocol.session import (
    STAGES,
    STOPPED,
    PeerSession,
    drbg,
)
from moska_p2p.protocol.simulate import make_peers

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
            card = msg.body.card
            out.append([session.seat_of[msg.sender], msg.body.rank, card and card[0]])
    return out


def disclosures_of(session: PeerSession) -> list[list[Any]]:
    """Every disclosure in a transcript: [seat, [positions]]."""
    return [
        [session.seat_of[msg.sender], sorted(pos for pos, _ in msg.body.keys)]
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
        # The watched peer signs its verdict (unless it is a culprit; before the game id is
        # known, for the table): the last frame of its transcript, and a step of this case.
        signs = table.watched.me not in honest.keys
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
