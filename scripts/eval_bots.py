#!/usr/bin/env python3
"""Time a built-in bot's moves: milliseconds per decision, overall and in the endgame.

The arena gives loss rates (``moska arena``) but not how long a bot thinks; a heuristic
with a search inside (``expert``'s endgame) must stay fast enough for it. This plays games
of each preset with the bot at seat 0 and ``greedy`` at the other seats, times every
decision of seat 0 (``time.perf_counter``, wall clock) and prints the mean, median, 99th
percentile and maximum, and the same for the decisions taken with the stock empty (where
``expert`` may search).

    python scripts/eval_bots.py                                   # expert, 4 presets
    python scripts/eval_bots.py --bot expert:nodes=500 --games 50 --presets moska,durak
    python scripts/eval_bots.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from moska_p2p.bots import load_bot  # noqa: E402
from moska_p2p.engine import View, new_game  # noqa: E402


def _summary(times: list[float]) -> dict[str, float]:
    if not times:
        return {"decisions": 0}
    ordered = sorted(times)
    return {
        "decisions": len(ordered),
        "mean_ms": 1000 * statistics.fmean(ordered),
        "median_ms": 1000 * ordered[len(ordered) // 2],
        "p99_ms": 1000 * ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))],
        "max_ms": 1000 * ordered[-1],
    }


def measure(bot_spec: str, preset: str, players: int, games: int) -> dict[str, Any]:
    every: list[float] = []
    endgame: list[float] = []
    for seed in range(games):
        game = new_game(preset, players, seed=seed)
        bots = [load_bot(bot_spec, seed=seed)] + [load_bot("greedy") for _ in range(players - 1)]
        while not game.is_over and len(game.history) < 5000:
            seat = game.to_act_seat
            moves = game.legal_moves()
            view = View(game, seat)
            start = time.perf_counter()
            move = bots[seat].choose(view, moves)
            spent = time.perf_counter() - start
            if seat == 0:
                every.append(spent)
                if view.stock_size == 0:
                    endgame.append(spent)
            game.play(move)
    return {"preset": preset, "players": players, "games": games,
            "all": _summary(every), "stock_empty": _summary(endgame)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bot", default="expert")
    parser.add_argument("--presets", default="moska,durak,mustamaija,kaavi")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    results = []
    for preset in args.presets.split(","):
        result = measure(args.bot, preset, args.players, args.games)
        results.append(result)
        line = f"{preset:12} {args.bot}:"
        for part in ("all", "stock_empty"):
            s = result[part]
            if s["decisions"]:
                line += (
                    f"  {part} {s['decisions']} decisions, mean {s['mean_ms']:.2f} ms,"
                    f" median {s['median_ms']:.2f}, p99 {s['p99_ms']:.1f}, max {s['max_ms']:.1f}"
                )
        print(line, flush=True)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
