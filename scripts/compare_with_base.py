#!/usr/bin/env python3
"""Behaviour unchanged: whole games played by the code of a base git ref and by this tree,
compared byte for byte.

A refactor that means to change nothing a peer can see is checked here: every game of a fixed
schedule (presets of every family, 2 to 6 seats, several bots, a reordering network, a peer that
falls silent, a corrupted frame, a bot that raises) is played through the real protocol, each
seat its own :class:`~moska_p2p.protocol.session.PeerSession`, by both trees; every frame on the
wire (in delivery order, sender and receiver), every peer's transcript, every output a session
gave its driver (sends, moves, rejections, verdicts with their evidence), every final state hash,
loser and verdict must be equal.

    python scripts/compare_with_base.py                    # 30 games against main
    python scripts/compare_with_base.py --base HEAD~3 --games 10
    python scripts/compare_with_base.py --tree ../other    # another checkout instead of this one

Exit status 0: identical; 1: the first difference, named (game, what, where), with the two
decoded frames when a frame differs; 2: a tree could not play (its traceback is printed).

Why it is deterministic. Nothing here reads a clock or a thread: the peers live in one process on
the in-memory :class:`~moska_p2p.protocol.simulate.Network`, which delivers frames in FIFO order
(or in an order drawn from a seeded ``random.Random`` for the reordering games); time is the
network's virtual clock, moved only by the driver (:func:`moska_p2p.table.simulate.run_game`);
identities derive from fixed seeds (``Identity.from_seed``), each peer's nonces, seat secret and
deck seed from its seeded DRBG (``make_peers(..., seed=...)``), the bots from their seeds, and
the built-in bots are called inline (no budget timer). The network layer's trio links are left
out on purpose: their heads and retries depend on scheduling, so their frames differ run to run
on the same code; the protocol's frames do not.

How. The base ref is checked out with ``git worktree add --detach`` into a temporary directory
(removed at the end); this same file then runs twice as a subprocess (``--emit``), once with
``PYTHONPATH`` set to each tree, both with the pure engine (``MOSKA_PURE_ENGINE=1``: only one of
the trees may have a compiled one), and prints one JSON line per game. ``--emit`` uses only the
protocol's public calls, so it runs on the base's code as it was.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
REPO = HERE.parent.parent

# (preset, seats, bots played round the table, network) - the schedule, cycled for --games
# beyond its length with a new seed. "fifo"/"reorder": honest games; "silent": the last peer's
# frames stop reaching anyone after 40 deliveries (a timeout verdict); "corrupt": one byte of
# the 25th frame the first peer sends is flipped on its way (a rejection, then a resend or a
# verdict); "raise": the last seat's bot raises at its fourth decision (a signed leave).
SCHEDULE: list[tuple[str, int, tuple[str, ...], str]] = [
    ("moska", 2, ("random", "greedy"), "fifo"),
    ("durak", 2, ("shedder", "random"), "fifo"),
    ("mustamaija", 2, ("greedy", "shedder"), "fifo"),
    ("turamoska", 3, ("random", "greedy", "shedder"), "fifo"),
    ("durak", 3, ("greedy", "random", "expert"), "fifo"),
    ("moska", 4, ("random",), "reorder"),
    ("durak-teams", 4, ("greedy", "random"), "fifo"),
    ("perevodnoy", 3, ("random", "shedder"), "fifo"),
    ("mustamaija", 3, ("random",), "reorder"),
    ("kaavi", 2, ("greedy", "random"), "fifo"),
    ("taraki", 3, ("shedder", "random"), "fifo"),
    ("moska", 5, ("random", "greedy"), "fifo"),
    ("durak-52", 6, ("random",), "fifo"),
    ("moska", 3, ("random",), "silent"),
    ("durak", 2, ("random",), "corrupt"),
    ("moska-simple", 2, ("expert", "random"), "fifo"),
    ("taraki-mm", 4, ("random", "greedy"), "reorder"),
    ("turamoska-pyhaselka", 2, ("random",), "fifo"),
    ("durak", 4, ("random",), "raise"),
    ("moska", 6, ("random", "shedder"), "fifo"),
    ("mustamaija", 4, ("shedder", "greedy"), "fifo"),
    ("perevodnoy", 2, ("random",), "reorder"),
    ("moska", 2, ("ismcts:iterations=20",), "fifo"),
    ("durak", 5, ("greedy",), "silent"),
    ("turamoska", 2, ("random",), "corrupt"),
    ("durak-teams", 6, ("random",), "fifo"),
    ("moska", 3, ("greedy", "random"), "raise"),
    ("mustamaija", 2, ("random",), "reorder"),
    ("durak", 3, ("shedder",), "fifo"),
    ("moska", 4, ("shedder", "random", "greedy", "random"), "fifo"),
]


def game_plan(index: int) -> tuple[str, int, tuple[str, ...], str, int]:
    preset, players, bots, network = SCHEDULE[index % len(SCHEDULE)]
    return preset, players, bots, network, 1000 + index


# -- the player (runs in either tree) --------------------------------------------------------


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def frame_kind(frame: bytes) -> str:
    """The frame's kind and, for a game message, its type ("move", "net/...", ...)."""
    import msgpack

    try:
        kind, payload, _ = msgpack.unpackb(frame[4:], raw=False)
        body = msgpack.unpackb(payload, raw=False, strict_map_key=False)
        inner = body.get("t") if isinstance(body, dict) else None
        return str(kind) if inner in (None, kind) else f"{kind}/{inner}"
    except Exception:  # a corrupted frame is still a frame to compare
        return "?"


def plain(value: Any) -> Any:
    """A JSON form of a session's output that two trees' equal outputs share: bytes as their
    digest, dataclasses by type name and fields (so a repr's wording cannot differ)."""
    if isinstance(value, bytes | bytearray):
        return "sha256:" + digest(bytes(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            "type": type(value).__name__,
            **{f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)},
        }
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if isinstance(value, dict):
        return {str(plain(k)): plain(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return repr(value)


class RaisingBot:
    """Plays like ``inner`` until its ``fail_at``-th decision, then raises (a forfeit)."""

    def __init__(self, inner: Any, fail_at: int) -> None:
        self.inner = inner
        self.left = fail_at

    def choose(self, view: Any, legal_moves: Sequence[Any]) -> Any:
        self.left -= 1
        if self.left <= 0:
            raise ValueError("the comparison's bot fails here on purpose")
        return self.inner.choose(view, legal_moves)


def play(index: int, full: bool) -> dict[str, Any]:
    from moska_p2p.bots.loader import load_bot
    from moska_p2p.crypto.identity import Identity
    from moska_p2p.protocol.config import TableConfig
    from moska_p2p.protocol.simulate import Network, make_peers
    from moska_p2p.protocol.stages import STAGES
    from moska_p2p.table.simulate import run_game

    preset, players, bots, network_kind, seed = game_plan(index)
    nonce = hashlib.sha256(f"compare-with-base/{seed}".encode()).digest()
    config = TableConfig(preset, players, nonce, {})
    identities = [
        Identity.from_seed(hashlib.sha256(nonce + bytes([i])).digest()) for i in range(players)
    ]
    wire: list[tuple[int, int, bytes]] = []
    sent_by: dict[int, int] = {}

    def tamper(source: int, target: int, frame: bytes) -> list[bytes]:
        if network_kind == "silent" and source == players - 1 and len(wire) >= 40:
            frames = []
        elif network_kind == "corrupt" and source == 0:
            sent_by[target] = sent_by.get(target, 0) + 1
            if sent_by[target] == 25:
                frame = frame[:-5] + bytes([frame[-5] ^ 1]) + frame[-4:]
            frames = [frame]
        else:
            frames = [frame]
        wire.extend((source, target, f) for f in frames)
        return frames

    network = Network(
        make_peers(config, identities, seed=seed),
        tamper=tamper,
        reorder=network_kind == "reorder",
        seed=seed,
    )
    seats: list[Any] = [load_bot(bots[i % len(bots)], seed=seed * 10 + i) for i in range(players)]
    if network_kind == "raise":
        seats[-1] = RaisingBot(seats[-1], 4)
    result = run_game(network, seats, budget=None)
    peers = []
    for session in result.sessions:
        verdict = session.verdict
        stage = session.stage  # an index of STAGES, STOPPED one past them (or an enum)
        if isinstance(stage, int) and 0 <= stage < len(STAGES):
            stage_name = STAGES[stage]
        elif isinstance(stage, int) and stage == len(STAGES):
            stage_name = "stopped"
        else:
            stage_name = str(getattr(stage, "name", stage)).lower()
        peers.append(
            {
                "seat": session.my_seat,
                "stage": stage_name,
                "final_hash": session.final_hash,
                "losers": list(session.losers),
                "moves": [list(m) for m in session.moves],
                "verdict": plain(verdict) if verdict is not None else None,
                "transcript": [digest(f) for f in session.transcript],
            }
        )
    record: dict[str, Any] = {
        "game": index,
        "plan": [preset, players, list(bots), network_kind, seed],
        "clock": result.clock,
        "frames": result.frames,
        "bytes": result.bytes,
        "rejected": result.rejected,
        "wire": [[s, t, frame_kind(f), digest(f)] for s, t, f in wire],
        "peers": peers,
        "events": [[plain(out) for out in outs] for outs in result.events],
    }
    if full:
        record["wire_frames"] = [f.hex() for _, _, f in wire]
    return record


def emit(games: Sequence[int], full: bool) -> int:
    for index in games:
        print(json.dumps(play(index, full), sort_keys=True), flush=True)
    return 0


# -- the comparison ----------------------------------------------------------------------------


def describe(plan: Sequence[Any]) -> str:
    preset, players, bots, network, seed = plan
    return f"{preset}, {players} seats, bots {'/'.join(bots)}, {network} network, seed {seed}"


def first_difference(base: Any, current: Any, path: str = "") -> tuple[str, Any, Any] | None:
    """The first place (in document order) where two JSON values differ."""
    if type(base) is not type(current):
        return path, base, current
    if isinstance(base, dict):
        for key in sorted(set(base) | set(current)):
            if key not in base or key not in current:
                return f"{path}.{key}", base.get(key, "<absent>"), current.get(key, "<absent>")
            found = first_difference(base[key], current[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(base, list):
        for i, (a, b) in enumerate(zip(base, current, strict=False)):
            found = first_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(base) != len(current):
            i = min(len(base), len(current))
            return (
                f"{path}[{i}] (lengths {len(base)} and {len(current)})",
                base[i] if i < len(base) else "<end>",
                current[i] if i < len(current) else "<end>",
            )
        return None
    return (path, base, current) if base != current else None


def decoded(frame_hex: str) -> str:
    """A frame's kind and payload as text, for a person to see what field moved."""
    import msgpack

    frame = bytes.fromhex(frame_hex)
    try:
        kind, payload, _ = msgpack.unpackb(frame[4:], raw=False)
        body = msgpack.unpackb(payload, raw=False, strict_map_key=False)
    except Exception as error:
        return f"(undecodable: {error}) {frame_hex[:200]}"
    text = json.dumps(plain_hex(body), sort_keys=True)
    return f"{kind} {text[:800]}{'...' if len(text) > 800 else ''}"


def plain_hex(value: Any) -> Any:
    if isinstance(value, bytes):
        return value.hex() if len(value) <= 16 else value[:16].hex() + f"...({len(value)} bytes)"
    if isinstance(value, list):
        return [plain_hex(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain_hex(v) for k, v in value.items()}
    return value


def run_tree(tree: Path, games: Sequence[int], full: bool = False) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(tree), MOSKA_PURE_ENGINE="1", PYTHONHASHSEED="0")
    command = [sys.executable, str(HERE), "--emit", ",".join(map(str, games))]
    if full:
        command.append("--full")
    return subprocess.Popen(
        command,
        env=env,
        cwd=tree,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )


def collect(processes: dict[str, subprocess.Popen[str]]) -> dict[str, list[dict[str, Any]]]:
    records = {}
    for name, process in processes.items():
        out, err = process.communicate()
        if process.returncode:
            raise TreeFailed(f"the {name} tree could not play:\n{err[-4000:]}")
        records[name] = [json.loads(line) for line in out.splitlines() if line.strip()]
    return records


class TreeFailed(Exception):
    pass


def explain(
    game: int, path: str, base_tree: Path, tree: Path, base: Any, current: Any
) -> Iterator[str]:
    """The two frames behind a difference of the wire or of a transcript, decoded."""
    if not (path.startswith(".wire[") or ".transcript[" in path or ".events[" in path):
        return
    records = collect(
        {"base": run_tree(base_tree, [game], True), "current": run_tree(tree, [game], True)}
    )
    frames = {name: rs[0]["wire_frames"] for name, rs in records.items()}
    digests = {name: {r[3]: i for i, r in enumerate(rs[0]["wire"])} for name, rs in records.items()}
    for name, value in (("base", base), ("current", current)):
        text = json.dumps(value)
        for digest_text, i in digests[name].items():
            if digest_text in text:
                yield f"  {name} frame {i}: {decoded(frames[name][i])}"
                break


ORDER = ("plan", "wire", "peers", "events", "rejected", "frames", "bytes", "clock")


def ordered_difference(
    base: dict[str, Any], current: dict[str, Any]
) -> tuple[str, Any, Any] | None:
    """The wire first: the earliest frame that moved is the clearest name of a difference."""
    keys = [*ORDER, *sorted((set(base) | set(current)) - set(ORDER))]
    for key in keys:
        found = first_difference(base.get(key), current.get(key), f".{key}")
        if found:
            return found
    return None


def compare(base_tree: Path, tree: Path, games: int) -> int:
    indices = list(range(games))
    records = collect({"base": run_tree(base_tree, indices), "current": run_tree(tree, indices)})
    for base, current in zip(records["base"], records["current"], strict=True):
        found = ordered_difference(base, current)
        if found is None:
            continue
        path, a, b = found
        game = base["game"]
        print(f"DIFFERENT: game {game} ({describe(base['plan'])}), at {path}")
        print(f"  base:    {json.dumps(a)[:600]}")
        print(f"  current: {json.dumps(b)[:600]}")
        for line in explain(game, path, base_tree, tree, a, b):
            print(line)
        return 1
    frames = sum(len(r["wire"]) for r in records["base"])
    print(f"identical: {games} games, {frames} frames on the wire, every transcript and result")
    return 0


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(REPO), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--base", default="main", help="the git ref to compare with (main)")
    parser.add_argument("--games", type=int, default=30, help="games to play (30)")
    parser.add_argument("--tree", type=Path, default=REPO, help="the tree to check (this checkout)")
    parser.add_argument("--emit", help=argparse.SUPPRESS)  # games to play here, "0,1,2"
    parser.add_argument("--full", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.emit is not None:
        return emit([int(g) for g in args.emit.split(",") if g], args.full)
    if args.games < 1:
        parser.error("--games must be at least 1")
    try:
        commit = git("rev-parse", "--verify", f"{args.base}^{{commit}}")
    except subprocess.CalledProcessError as error:
        print(f"cannot resolve the base ref {args.base!r}: {error.stderr.strip()}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="moska-base-") as tmp:
        base_tree = Path(tmp) / "base"
        git("worktree", "add", "--detach", "--quiet", str(base_tree), commit)
        try:
            print(f"base {args.base} ({commit[:12]}) against {args.tree.resolve()}", flush=True)
            return compare(base_tree, args.tree.resolve(), args.games)
        except TreeFailed as failure:
            print(failure, file=sys.stderr)
            return 2
        finally:
            git("worktree", "remove", "--force", str(base_tree))


if __name__ == "__main__":
    sys.exit(main())
