#!/usr/bin/env python3
"""Measure the levels of ``moska play --level`` against ``expert`` (docs/LEVELS.md).

For each level and preset, two arena runs (duplicate deals, seats rotated, as ``moska
arena``): one ``expert`` against three bots of the level, and the level's bot against three
``expert``s. Each prints the loss rate of the lone seat with its 95% Wilson interval (par: one
in four). ``medium`` *is* ``expert``: its rows would be par by definition and are skipped.

The searching levels think for a fixed time, so their games are slow and their strength
depends on the machine's load: the default sample sizes are small for them (say so when
quoting), larger for the fast bots.

    python scripts/measure_levels.py                                 # every level, 3 presets
    python scripts/measure_levels.py --levels easy,hard --presets moska --games 300
    python scripts/measure_levels.py --levels hard --games 48,120 --seed 2  # another sample
    python scripts/measure_levels.py --json levels.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from moska_p2p.arena.arena import run_arena  # noqa: E402
from moska_p2p.bots.levels import LEVELS  # noqa: E402
from moska_p2p.engine import IMPLEMENTATION  # noqa: E402

# (the lone expert's run, the lone level's run): games, smaller where three seats search
DEFAULT_GAMES = {
    "easy": (300, 300),
    "hard": (24, 60),
    "strongest": (8, 20),
}


def lone_seat(preset: str, lone: str, others: str, games: int, seed: int) -> dict[str, Any]:
    """The loss rate of ``lone`` against three ``others`` over ``games`` duplicate deals."""
    start = time.perf_counter()
    result = run_arena(preset, [lone, others, others, others], games, seed=seed, budget=None)
    stats = next(s for s in result.stats if s.name == lone)
    low, high = stats.ci95
    return {
        "preset": preset,
        "lone": lone,
        "others": others,
        "games": stats.games,
        "losses": stats.losses,
        "loss_rate": stats.loss_rate,
        "ci95": [low, high],
        "unfinished": result.unfinished,
        "seconds": time.perf_counter() - start,
        "command": f"moska arena --preset {preset} --bots {lone},{others},{others},{others}"
        f" --games {games} --seed {seed}",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--levels", default="easy,hard,strongest")
    parser.add_argument("--presets", default="moska,durak,mustamaija")
    parser.add_argument(
        "--games",
        help="games of every run, or N,M: N for the lone expert, M for the lone level's bot"
        " (default: per level)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    print(f"rules engine: {IMPLEMENTATION}", flush=True)
    rows = []
    for name in args.levels.split(","):
        level = LEVELS[name]
        if level.bot == "expert":
            continue
        expert_games, level_games = DEFAULT_GAMES.get(name, (100, 100))
        if args.games:
            counts = [int(n) for n in args.games.split(",")]
            expert_games, level_games = counts[0], counts[-1]
        for preset in args.presets.split(","):
            for lone, others, games in (
                ("expert", level.bot, expert_games),
                (level.bot, "expert", level_games),
            ):
                row = lone_seat(preset, lone, others, games, args.seed) | {"level": name}
                rows.append(row)
                low, high = row["ci95"]
                print(
                    f"{name:9s} {preset:10s} {lone:>16s} vs 3 {others:16s}"
                    f" {row['losses']:4d}/{row['games']:<4d} {100 * row['loss_rate']:5.1f}%"
                    f" [{100 * low:4.1f}, {100 * high:4.1f}]  ({row['seconds']:.0f} s)",
                    flush=True,
                )
                if args.json:
                    args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
