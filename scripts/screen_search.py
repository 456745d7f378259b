#!/usr/bin/env python3
"""Screen a setting of the search: one candidate ``ismcts`` against three of today's.

Each part of a stronger search (beliefs about the hidden hands, a policy prior) is kept only
if it wins. Here it plays at one seat of four against three ``ismcts`` (the value network's
search, the default) at the SAME time per move, over duplicate deals with the seats
rotated (``moska arena``'s deals), in each preset; it prints the candidate's loss rate with
its 95% Wilson interval (par 25%: one loser in four). Below par, and clearly (the interval's
top under 25%), it wins.

The time per move is small by default so that many games fit: a candidate that wins with a
few dozen iterations a move may still lose its edge with thousands, so a part kept here is
confirmed at the level's own time before it ships.

    python scripts/screen_search.py --candidate ismcts:beliefs=1 --games 200
    python scripts/screen_search.py --candidate ismcts:prior=1 --time 0.05 --presets durak
    python scripts/screen_search.py --candidate ismcts:time=0.5,beliefs=1 --base ismcts:time=0.5 \\
        --games 1000 --jobs 2 --json strongest.json        # the strongest level's own test
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
from moska_p2p.engine import IMPLEMENTATION  # noqa: E402


def with_time(spec: str, seconds: float) -> str:
    """``spec`` with ``time=seconds`` unless it already names a time."""
    name, _, options = spec.partition(":")
    if "time=" in options:
        return spec
    options = f"time={seconds:g}" + (f",{options}" if options else "")
    return f"{name}:{options}"


def screen(
    preset: str, candidate: str, base: str, games: int, seed: int, jobs: int
) -> dict[str, Any]:
    """The candidate's losses at one seat against three ``base`` over ``games`` deals."""
    if candidate == base:
        raise SystemExit("the candidate and the base are the same bot: nothing to screen")
    began = time.perf_counter()
    result = run_arena(preset, [candidate, base, base, base], games, seed=seed, jobs=jobs,
                       budget=None)  # fmt: skip
    stats = {s.name: s for s in result.stats}
    mine = stats[candidate]
    low, high = mine.ci95
    return {
        "preset": preset,
        "candidate": candidate,
        "base": base,
        "games": mine.games,
        "losses": mine.losses,
        "loss_rate": mine.loss_rate,
        "ci95": [low, high],
        "base_loss_rate": stats[base].loss_rate,
        "unfinished": result.unfinished,
        "seconds": round(time.perf_counter() - began, 1),
        "engine": IMPLEMENTATION,
        "command": f"moska arena --preset {preset} --bots {candidate},{base},{base},{base}"
        f" --games {games} --seed {seed} --jobs {jobs}",
    }


def verdict(low: float, high: float) -> str:
    if high < 0.25:
        return "wins"
    if low > 0.25:
        return "loses"
    return "no difference shown"


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--candidate", required=True, help="the bot screened: ismcts:beliefs=1")
    parser.add_argument("--base", default="ismcts", help="the three opponents (default: ismcts)")
    parser.add_argument("--time", type=float, default=0.02,
                        help="seconds a move, unless a spec names its own (0.02)")  # fmt: skip
    parser.add_argument("--presets", default="moska,durak")
    parser.add_argument("--games", type=int, default=200, help="deals per preset (200)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    candidate = with_time(args.candidate, args.time)
    base = with_time(args.base, args.time)
    print(f"rules engine: {IMPLEMENTATION}", flush=True)
    rows = []
    for preset in args.presets.split(","):
        row = screen(preset, candidate, base, args.games, args.seed, args.jobs)
        rows.append(row)
        low, high = row["ci95"]
        print(
            f"{preset:10s} {candidate} vs 3 {base}: {row['losses']}/{row['games']}"
            f" {100 * row['loss_rate']:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
            f" ({verdict(low, high)}; {row['seconds']:.0f} s)",
            flush=True,
        )
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
