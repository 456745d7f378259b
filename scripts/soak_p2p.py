#!/usr/bin/env python3
"""Soak the trust layer: many arena games of every family through the full protocol.

For each family of ``moska_p2p.engine``'s presets (Moska, Kaavi, Durak, Mustamaija: the
first preset of each, or every preset with ``--all-presets``) it runs ``moska arena --p2p``
with honest built-in bots (greedy, shedder, random, in turn at the seats) and prints the
games, the verdicts, the disagreements between peers and the games per second. Every game
is played by one peer per seat, each with its own engine and deck share, every shuffle and
key proven and checked. Honest bots must give 0 verdicts and 0 disagreements: the script
exits 1 on any (and names the games), 0 otherwise.

    python scripts/soak_p2p.py --games 1000 --jobs 2          # the issue's soak
    nice python scripts/soak_p2p.py --games 200 --json /tmp/soak.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moska_p2p.arena.arena import run_arena
from moska_p2p.engine import PRESETS, make_rules

BOTS = ("greedy", "shedder", "random")


def families(all_presets: bool) -> list[str]:
    """The presets to soak: the first of each family, or all of them."""
    if all_presets:
        return list(PRESETS)
    seen: dict[str, str] = {}
    for preset in PRESETS:
        seen.setdefault(make_rules(preset).family, preset)
    return list(seen.values())


def players_for(preset: str, wanted: int) -> int:
    """``wanted`` players, within the preset's limits (durak-teams needs an even table)."""
    rules = make_rules(preset)
    count = max(rules.min_players, min(rules.max_players, wanted))
    if rules.teams and count % 2:
        count += 1
    return count


def soak(preset: str, players: int, games: int, seed: int, jobs: int) -> dict[str, Any]:
    bots = [BOTS[i % len(BOTS)] for i in range(players)]
    start = time.perf_counter()
    step = max(1, games // 10)
    shown = [0]

    def progress(done: int, total: int) -> None:
        if done >= shown[0] + step and done < total:
            shown[0] = done
            seconds = time.perf_counter() - start
            print(f"    {preset}: {done}/{total} games, {seconds:.0f} s", flush=True)

    result = run_arena(preset, bots, games, seed=seed, jobs=jobs, p2p=True, progress=progress)
    seconds = time.perf_counter() - start
    data = result.to_json()
    return {
        "preset": preset,
        "family": make_rules(preset).family,
        "players": players,
        "games": result.games,
        "unfinished": result.unfinished,
        "forfeits": sum(s.forfeits for s in result.stats),
        "verdicts": data["verdicts"],
        "verdict_games": data["verdict_games"],
        "disagreements": data["disagreements"],
        "disagreement_games": data["disagreement_games"],
        "seconds": seconds,
        "games_per_s": result.games / seconds if seconds else 0.0,
        "losses": {s.name: s.losses for s in result.stats},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=1000, help="games per family")
    parser.add_argument("--players", type=int, default=4, help="players (within each preset)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument(
        "--all-presets", action="store_true", help="every preset, not one per family"
    )
    parser.add_argument("--presets", help="comma-separated presets instead of the families")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    presets = args.presets.split(",") if args.presets else families(args.all_presets)
    rows = []
    bad = 0
    print(f"soak: {args.games} games per preset through the protocol, --jobs {args.jobs}")
    for preset in presets:
        row = soak(preset, players_for(preset, args.players), args.games, args.seed, args.jobs)
        rows.append(row)
        print(
            f"  {row['preset']:20s} {row['players']} players: {row['games']:5d} games,"
            f" {row['verdicts']} verdicts, {row['disagreements']} disagreements,"
            f" {row['unfinished']} unfinished, {row['games_per_s']:.2f} games/s"
            f" ({row['seconds']:.0f} s)",
            flush=True,
        )
        for game in row["verdict_games"][:5]:
            print(f"    verdict in game {game['game']}: {game['kind']}: {game['reason']}")
        for game in row["disagreement_games"][:5]:
            print(f"    disagreement in game {game['game']}: seats {game['seats']}")
        bad += row["verdicts"] + row["disagreements"]
        if args.json:
            args.json.write_text(json.dumps(rows, indent=2) + "\n")
    total = sum(r["games"] for r in rows)
    print(f"total: {total} games, {bad} verdicts and disagreements")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
