#!/usr/bin/env python3
"""Benchmark the rules engine: complete random games per second, per preset.

Each game is dealt from its own seed and played to the end by choosing a move uniformly at
random from ``legal_moves()`` (what the arena's ``random`` bot does). Every figure is the
median of several runs. As a yardstick measured in the same run, ``calib`` times a fixed
pure-Python workload, so figures from different machines can be compared as ratios.

    python scripts/bench_engine.py                 # every preset, 4 players
    python scripts/bench_engine.py --games 5000 --runs 5 --presets moska,durak
    python scripts/bench_engine.py --baseline HEAD # this tree against a git revision
    python scripts/bench_engine.py --engines       # the pure engine against the compiled one
    python scripts/bench_engine.py --engines --baseline main  # both against main's engine

``--baseline REV`` measures the engine of git revision ``REV`` (extracted with ``git
archive`` into a temporary directory, so the repository is not touched) against the engine
of this working tree, in one run: every (run, preset) pair plays the same seeds in a fresh
subprocess for each side, the two sides interleaved and their order alternated, so a machine
that slows down or speeds up during the run weighs on both alike; each side's time is its
process's CPU time. It prints both medians, their ratio, the median of the paired per-run
ratios and the ratio of the fastest runs (this tree / baseline; above 1 is faster).

``--engines`` measures this tree twice, the same way: its pure engine
(``MOSKA_PURE_ENGINE=1``) and its compiled one (where the install built it, see
``hatch_build.py``; each side prints which engine it really ran); with ``--baseline`` both
are compared with the baseline, else the compiled one with the pure one.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PURE_ENGINE_VARIABLE = "MOSKA_PURE_ENGINE"  # moska_p2p/engine/__init__.py


def _engine(root: Path) -> Any:
    """The ``moska_p2p.engine`` package of the tree at ``root`` (imported once)."""
    sys.path.insert(0, str(root))
    engine = importlib.import_module("moska_p2p.engine")
    if not Path(engine.__file__).resolve().is_relative_to(root.resolve()):
        raise SystemExit(f"imported {engine.__file__}, not the engine under {root}")
    return engine


def play_games(
    engine: Any, preset: str, players: int, games: int, first_seed: int, cpu: bool = False
) -> tuple[float, int]:
    """Seconds to play ``games`` random games (wall clock, or this process's CPU time with
    ``cpu``), and the moves they took."""
    clock = time.process_time if cpu else time.perf_counter
    new_game = engine.new_game
    rng = random.Random(first_seed)
    choice = rng.choice
    moves = 0
    start = clock()
    for seed in range(first_seed, first_seed + games):
        game = new_game(preset, players=players, seed=seed)
        legal = game.legal_moves
        play = game.play
        while game.to_act_seat >= 0:
            play(choice(legal()))
            moves += 1
    return clock() - start, moves


def calibration() -> float:
    """Seconds for a fixed pure-Python workload (a machine yardstick)."""
    rng = random.Random(0)
    start = time.perf_counter()
    total = 0
    for _ in range(200):
        data = [rng.random() for _ in range(1000)]
        data.sort()
        total += len({int(x * 100) for x in data})
    return time.perf_counter() - start


def _players(preset: str, players: int) -> int:
    return 4 if preset == "durak-teams" and players % 2 else players


def _worker(args: argparse.Namespace) -> int:
    """One measurement in this process, printed as JSON (the comparison's subprocesses)."""
    engine = _engine(Path(args.root))
    seconds, moves = play_games(
        engine, args.presets, args.players, args.games, args.first_seed, cpu=True
    )
    implementation = getattr(engine, "IMPLEMENTATION", "pure Python")
    print(json.dumps({"seconds": seconds, "moves": moves, "implementation": implementation}))
    return 0


class Side:
    """One engine of a comparison: a tree, and whether its pure engine is forced."""

    def __init__(self, name: str, root: Path, pure: bool) -> None:
        self.name, self.root, self.pure = name, root, pure
        self.implementation = ""

    def measure(self, preset: str, players: int, games: int, first_seed: int) -> float:
        """Games per CPU second, measured in a fresh subprocess (CPU time: on a shared
        machine other processes' load weighs on it far less than on wall time)."""
        command = [sys.executable, str(Path(__file__).resolve()), "--worker"]
        command += ["--root", str(self.root), "--presets", preset, "--players", str(players)]
        command += ["--games", str(games), "--first-seed", str(first_seed)]
        env = dict(os.environ)
        env.pop(PURE_ENGINE_VARIABLE, None)
        if self.pure:
            env[PURE_ENGINE_VARIABLE] = "1"
        result = subprocess.run(
            command, capture_output=True, text=True, check=True, cwd=self.root, env=env
        )
        report = json.loads(result.stdout.splitlines()[-1])
        self.implementation = report["implementation"]
        return games / float(report["seconds"])


def _extract(rev: str, into: Path) -> None:
    """The files of git revision ``rev`` under ``into`` (no worktree, no index change)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def _compare(args: argparse.Namespace, presets: list[str]) -> int:
    """Engines against the first one, interleaved (see the module docstring)."""
    calib = statistics.median(calibration() for _ in range(args.runs))
    print(f"calibration workload: {calib * 1000:.1f} ms (median of {args.runs})")
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        sides: list[Side] = []
        if args.baseline:
            _extract(args.baseline, Path(tmp))
            sides.append(Side("base", Path(tmp), pure=False))
            print(f"base: git revision {args.baseline}; this tree: {REPO}")
        if args.engines:
            sides += [Side("pure", REPO, pure=True), Side("compiled", REPO, pure=False)]
        else:
            sides.append(Side("tree", REPO, pure=False))
        rates = {p: {side.name: [] for side in sides} for p in presets}
        for run in range(args.runs):
            for i, preset in enumerate(presets):
                players = _players(preset, args.players)
                seed = run * args.games
                shift = (run + i) % len(sides)  # each side first in turn
                for side in sides[shift:] + sides[:shift]:
                    rate = side.measure(preset, players, args.games, seed)
                    rates[preset][side.name].append(rate)
            print(f"  run {run + 1}/{args.runs} done", file=sys.stderr)
    for side in sides:
        print(f"{side.name}: {side.implementation}")
    base, others = sides[0], sides[1:]
    # "ratio": of the two medians; "paired": the median of each run's side/base ratio, the
    # two measured back to back on the same seeds; "best": of each side's fastest run (on a
    # busy machine the run least disturbed by others is the closest to the engine's speed).
    print(f"games per CPU second, medians of {args.runs} runs; ratios against {base.name}")
    header = f"{'preset':22s} {base.name + ' g/s':>13s}"
    for side in others:
        header += f" {side.name + ' g/s':>13s} {'ratio':>6s} {'paired':>6s} {'best':>6s}"
    print(header)
    results: dict[str, Any] = {}
    means: dict[str, dict[str, list[float]]] = {
        side.name: {"ratio": [], "paired": [], "best": []} for side in others
    }
    for preset in presets:
        base_runs = rates[preset][base.name]
        b = statistics.median(base_runs)
        line = f"{preset:22s} {b:13.0f}"
        results[preset] = {f"{base.name}_games_per_s": b, f"{base.name}_runs": base_runs}
        for side in others:
            runs = rates[preset][side.name]
            t = statistics.median(runs)
            paired = statistics.median(x / y for x, y in zip(runs, base_runs, strict=True))
            best = max(runs) / max(base_runs)
            for key, value in (("ratio", t / b), ("paired", paired), ("best", best)):
                means[side.name][key].append(value)
            line += f" {t:13.0f} {t / b:6.2f} {paired:6.2f} {best:6.2f}"
            results[preset] |= {f"{side.name}_games_per_s": t, f"{side.name}_runs": runs}
            results[preset] |= {f"{side.name}_ratio": t / b, f"{side.name}_paired_ratio": paired}
            results[preset] |= {f"{side.name}_best_ratio": best}
        print(line)
    line = f"{'geometric mean':22s} {'':13s}"
    for side in others:
        m = {key: statistics.geometric_mean(values) for key, values in means[side.name].items()}
        line += f" {'':13s} {m['ratio']:6.2f} {m['paired']:6.2f} {m['best']:6.2f}"
        results[f"geometric_mean_{side.name}"] = m
    print(line)
    if args.json:
        payload = {"calibration_s": calib, "games": args.games, "runs": args.runs}
        payload |= {"baseline": args.baseline, "clock": "process CPU time"}
        payload |= {"engines": {side.name: side.implementation for side in sides}}
        args.json.write_text(json.dumps(payload | {"presets": results}, indent=2))
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games per run and preset")
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is reported")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--presets", default="")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--baseline", metavar="REV", help="also measure git revision REV, interleaved"
    )
    parser.add_argument(
        "--engines",
        action="store_true",
        help="measure this tree's pure and compiled engines (and the baseline, if given)",
    )
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--root", default=str(REPO), help=argparse.SUPPRESS)
    parser.add_argument("--first-seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return _worker(args)
    engine = _engine(REPO)
    presets = [p for p in args.presets.split(",") if p] or list(engine.PRESETS)
    if args.baseline or args.engines:
        return _compare(args, presets)
    calib = statistics.median(calibration() for _ in range(args.runs))
    print(f"calibration workload: {calib * 1000:.1f} ms (median of {args.runs})")
    print(f"{'preset':22s} {'games/s':>9s} {'moves/s':>10s} {'moves/game':>10s} {'vs moska':>8s}")
    results = {}
    for preset in presets:
        players = _players(preset, args.players)
        rates, move_rates, per_game = [], [], []
        for run in range(args.runs):
            seconds, moves = play_games(engine, preset, players, args.games, run * args.games)
            rates.append(args.games / seconds)
            move_rates.append(moves / seconds)
            per_game.append(moves / args.games)
        results[preset] = {
            "games_per_s": statistics.median(rates),
            "moves_per_s": statistics.median(move_rates),
            "moves_per_game": statistics.median(per_game),
            "runs": rates,
        }
    base = results.get("moska", {}).get("games_per_s")
    for preset, r in results.items():
        ratio = f"{r['games_per_s'] / base:8.2f}" if base else "       -"
        print(
            f"{preset:22s} {r['games_per_s']:9.0f} {r['moves_per_s']:10.0f}"
            f" {r['moves_per_game']:10.1f} {ratio}"
        )
    if args.json:
        payload = {"calibration_s": calib, "games": args.games, "runs": args.runs}
        args.json.write_text(json.dumps(payload | {"presets": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
