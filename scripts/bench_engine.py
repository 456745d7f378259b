#!/usr/bin/env python3
"""Benchmark the rules engine: complete random games per second, per preset.

Each game is dealt from its own seed and played to the end by choosing a move uniformly at
random from ``legal_moves()`` (what the arena's ``random`` bot does). Every figure is the
median of several runs. As a yardstick measured in the same run, ``calib`` times a fixed
pure-Python workload, so figures from different machines can be compared as ratios.

    python scripts/bench_engine.py                 # every preset, 4 players
    python scripts/bench_engine.py --games 5000 --runs 5 --presets moska,durak
    python scripts/bench_engine.py --baseline HEAD # this tree against a git revision

``--baseline REV`` measures the engine of git revision ``REV`` (extracted with ``git
archive`` into a temporary directory, so the repository is not touched) against the engine
of this working tree, in one run: every (run, preset) pair plays the same seeds in a fresh
subprocess for each side, the two sides interleaved and their order alternated, so a machine
that slows down or speeds up during the run weighs on both alike; each side's time is its
process's CPU time. It prints both medians, their ratio, the median of the paired per-run
ratios and the ratio of the fastest runs (this tree / baseline; above 1 is faster).
"""

from __future__ import annotations

import argparse
import importlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent


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
    """One measurement in this process, printed as JSON (the --baseline subprocesses)."""
    engine = _engine(Path(args.root))
    seconds, moves = play_games(
        engine, args.presets, args.players, args.games, args.first_seed, cpu=True
    )
    print(json.dumps({"seconds": seconds, "moves": moves}))
    return 0


def _measure(root: Path, preset: str, players: int, games: int, first_seed: int) -> float:
    """Games per CPU second of the engine at ``root``, measured in a fresh subprocess (CPU
    time: on a shared machine other processes' load weighs on it far less than on wall
    time)."""
    command = [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        "--root",
        str(root),
        "--presets",
        preset,
        "--players",
        str(players),
        "--games",
        str(games),
        "--first-seed",
        str(first_seed),
    ]
    result = subprocess.run(command, capture_output=True, text=True, check=True, cwd=root)
    return games / float(json.loads(result.stdout.splitlines()[-1])["seconds"])


def _extract(rev: str, into: Path) -> None:
    """The files of git revision ``rev`` under ``into`` (no worktree, no index change)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev],
        capture_output=True,
        check=True,
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def _compare(args: argparse.Namespace, presets: list[str]) -> int:
    """This tree against ``args.baseline``, interleaved (see the module docstring)."""
    calib = statistics.median(calibration() for _ in range(args.runs))
    print(f"calibration workload: {calib * 1000:.1f} ms (median of {args.runs})")
    print(f"baseline: {args.baseline}; this tree: {REPO}")
    rates: dict[str, dict[str, list[float]]] = {p: {"base": [], "tree": []} for p in presets}
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        base = Path(tmp)
        _extract(args.baseline, base)
        for run in range(args.runs):
            for i, preset in enumerate(presets):
                players = _players(preset, args.players)
                seed = run * args.games
                sides = [("base", base), ("tree", REPO)]
                if (run + i) % 2:
                    sides.reverse()
                for side, root in sides:
                    rates[preset][side].append(_measure(root, preset, players, args.games, seed))
            print(f"  run {run + 1}/{args.runs} done", file=sys.stderr)
    # "ratio": of the two medians; "paired": the median of each run's tree/base ratio, the
    # two measured back to back on the same seeds; "best": of each side's fastest run (on a
    # busy machine the run least disturbed by others is the closest to the engine's speed).
    print("games per CPU second, medians of the runs")
    header = f"{'preset':22s} {'base g/s':>9s} {'tree g/s':>9s}"
    print(f"{header} {'ratio':>7s} {'paired':>7s} {'best':>7s}")
    results: dict[str, Any] = {}
    ratios, paired_ratios, best_ratios = [], [], []
    for preset in presets:
        base_runs, tree_runs = rates[preset]["base"], rates[preset]["tree"]
        b = statistics.median(base_runs)
        t = statistics.median(tree_runs)
        paired = statistics.median(x / y for x, y in zip(tree_runs, base_runs, strict=True))
        best = max(tree_runs) / max(base_runs)
        ratios.append(t / b)
        paired_ratios.append(paired)
        best_ratios.append(best)
        results[preset] = {"base_games_per_s": b, "tree_games_per_s": t, "ratio": t / b}
        results[preset] |= {"paired_ratio": paired, "best_ratio": best}
        results[preset] |= {"base_runs": base_runs, "tree_runs": tree_runs}
        print(f"{preset:22s} {b:9.0f} {t:9.0f} {t / b:7.3f} {paired:7.3f} {best:7.3f}")
    mean = statistics.geometric_mean(ratios)
    paired_mean = statistics.geometric_mean(paired_ratios)
    best_mean = statistics.geometric_mean(best_ratios)
    means = f"{mean:7.3f} {paired_mean:7.3f} {best_mean:7.3f}"
    print(f"{'geometric mean':22s} {'':9s} {'':9s} {means}")
    if args.json:
        payload = {"calibration_s": calib, "games": args.games, "runs": args.runs}
        payload |= {"baseline": args.baseline, "geometric_mean_ratio": mean}
        payload |= {"geometric_mean_paired_ratio": paired_mean, "clock": "process CPU time"}
        payload |= {"geometric_mean_best_ratio": best_mean}
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
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--root", default=str(REPO), help=argparse.SUPPRESS)
    parser.add_argument("--first-seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return _worker(args)
    engine = _engine(REPO)
    presets = [p for p in args.presets.split(",") if p] or list(engine.PRESETS)
    if args.baseline:
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
