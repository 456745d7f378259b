#!/usr/bin/env python3
"""Benchmark the rules engine: complete random games per second, per preset.

Each game is dealt from its own seed and played to the end by choosing a move uniformly at
random from ``legal_moves()`` (what the arena's ``random`` bot does). Every figure is the
median of several runs. As a yardstick measured in the same run, ``calib`` times a fixed
pure-Python workload, so figures from different machines can be compared as ratios.

    python scripts/bench_engine.py                 # every preset, 4 players
    python scripts/bench_engine.py --games 5000 --runs 5 --presets moska,durak
    python scripts/bench_engine.py --hidden        # also the hidden-information path
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moska_p2p.engine import PRESETS, new_game


def play_games(preset: str, players: int, games: int, first_seed: int) -> tuple[float, int]:
    """Seconds to play ``games`` random games, and the moves they took."""
    rng = random.Random(first_seed)
    choice = rng.choice
    moves = 0
    start = time.perf_counter()
    for seed in range(first_seed, first_seed + games):
        game = new_game(preset, players=players, seed=seed)
        legal = game.legal_moves
        play = game.play
        while game.to_act_seat >= 0:
            play(choice(legal()))
            moves += 1
    return time.perf_counter() - start, moves


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000, help="games per run and preset")
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is reported")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--presets", default=",".join(PRESETS))
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    presets = [p for p in args.presets.split(",") if p]
    calib = statistics.median(calibration() for _ in range(args.runs))
    print(f"calibration workload: {calib * 1000:.1f} ms (median of {args.runs})")
    print(f"{'preset':22s} {'games/s':>9s} {'moves/s':>10s} {'moves/game':>10s} {'vs moska':>8s}")
    results = {}
    for preset in presets:
        players = args.players
        if preset == "durak-teams" and players % 2:
            players = 4
        rates, move_rates, per_game = [], [], []
        for run in range(args.runs):
            seconds, moves = play_games(preset, players, args.games, run * args.games)
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
