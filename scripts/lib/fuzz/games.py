"""The fuzz run's material: a few real games played in memory, with snapshots of the
receiving session taken just before chosen deliveries (the checkpoints inputs are fed at).
"""

from __future__ import annotations

import io
import pickle
import random
import types
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.frames import (
    LENGTH_SIZE,
    open_frame,
)
from moska_p2p.protocol.session import DONE, STAGES, STOPPED, PeerSession, drbg
from moska_p2p.protocol.simulate import Network, make_peers
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
            game.moves.append(msg.body.move)
            game.states.append(msg.body.state)
        if msg.type in (m.SHUFFLE1, m.SHUFFLE2):
            game.points.extend(msg.body.points[:4])
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
