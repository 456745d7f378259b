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
        --games 1000 --jobs 2 --chunk 40 --json strongest.json   # the strongest level's own test

A long screen is played in chunks (``--chunk``, each its own seed of deals) and recorded in
``--json`` after each: the same command run again goes on from the last whole chunk (an evening
at a time, or on the club's machines with ``--cluster``).
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

from moska_p2p.arena import wilson_interval  # noqa: E402
from moska_p2p.arena.arena import run_arena  # noqa: E402
from moska_p2p.engine import IMPLEMENTATION  # noqa: E402


def with_time(spec: str, seconds: float) -> str:
    """``spec`` with ``time=seconds`` unless it already names a time."""
    name, _, options = spec.partition(":")
    if "time=" in options:
        return spec
    options = f"time={seconds:g}" + (f",{options}" if options else "")
    return f"{name}:{options}"


CHUNK_SEEDS = 1000
"""Chunk ``k`` of a preset plays the deals of seed ``seed + k * CHUNK_SEEDS`` (chunk 0: the
seed itself, so one chunk is the same run as before chunks existed)."""


def play_chunk(
    preset: str, candidate: str, base: str, games: int, seed: int, jobs: int,
    cluster: str | None,
) -> dict[str, Any]:  # fmt: skip
    """The candidate's losses at one seat against three ``base`` over ``games`` deals."""
    began = time.perf_counter()
    result = run_arena(preset, [candidate, base, base, base], games, seed=seed, jobs=jobs,
                       budget=None, cluster=cluster)  # fmt: skip
    stats = {s.name: s for s in result.stats}
    return {
        "preset": preset,
        "seed": seed,
        "games": stats[candidate].games,
        "losses": stats[candidate].losses,
        "base_games": stats[base].games,
        "base_losses": stats[base].losses,
        "unfinished": result.unfinished,
        "seconds": round(time.perf_counter() - began, 1),
        "engine": IMPLEMENTATION,
        "command": f"moska arena --preset {preset} --bots {candidate},{base},{base},{base}"
        f" --games {games} --seed {seed} --jobs {jobs}",
    }


def summary(preset: str, candidate: str, base: str, chunks: list[dict[str, Any]]) -> dict[str, Any]:
    """One preset's figures over the chunks played of it."""
    mine = [c for c in chunks if c["preset"] == preset]
    games, losses = sum(c["games"] for c in mine), sum(c["losses"] for c in mine)
    base_games = sum(c["base_games"] for c in mine)
    low, high = wilson_interval(losses, games) if games else (0.0, 1.0)
    return {
        "preset": preset,
        "candidate": candidate,
        "base": base,
        "games": games,
        "losses": losses,
        "loss_rate": losses / games if games else 0.0,
        "ci95": [low, high],
        "base_loss_rate": sum(c["base_losses"] for c in mine) / base_games if base_games else 0.0,
        "unfinished": sum(c["unfinished"] for c in mine),
        "seconds": round(sum(c["seconds"] for c in mine), 1),
        "chunks": len(mine),
        "commands": [c["command"] for c in mine],
    }


def resumed(path: Path | None, settings: dict[str, Any]) -> list[dict[str, Any]]:
    """The chunks already played into ``path`` with the very same settings (none when the
    file is absent; an error, not a silent restart, when it holds another screen's)."""
    if path is None or not path.exists():
        return []
    try:
        held = json.loads(path.read_text())
    except (OSError, ValueError) as error:
        raise SystemExit(f"{path}: not a screen's record to resume ({error})") from None
    if not isinstance(held, dict) or held.get("settings") != settings:
        raise SystemExit(
            f"{path} holds another screen (other settings, or the old format): name another"
            " --json file, or delete it to start again"
        )
    chunks: list[dict[str, Any]] = held.get("chunks", [])
    return chunks


def save(path: Path, settings: dict[str, Any], chunks: list[dict[str, Any]],
         rows: list[dict[str, Any]]) -> None:  # fmt: skip
    """Write the record whole, then move it into place: a run stopped at any moment leaves
    the chunks it finished, never a file cut in half."""
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(json.dumps({"settings": settings, "rows": rows, "chunks": chunks},
                                    indent=1))  # fmt: skip
    temporary.replace(path)


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
    parser.add_argument("--chunk", type=int, default=0,
                        help="deals a chunk, a multiple of 4 (default: all the games at once);"
                        " with --json a stopped run goes on from its last whole one")  # fmt: skip
    parser.add_argument("--cluster", help="play the games on this Dask scheduler (moska arena"
                        " --cluster): the members' machines")  # fmt: skip
    parser.add_argument("--json", type=Path, help="the record: figures and every chunk played;"
                        " run again with the same settings, it resumes")  # fmt: skip
    args = parser.parse_args()
    candidate = with_time(args.candidate, args.time)
    base = with_time(args.base, args.time)
    if candidate == base:
        raise SystemExit("the candidate and the base are the same bot: nothing to screen")
    chunk = args.chunk or args.games
    if chunk != args.games and (chunk % 4 or args.games % chunk):
        raise SystemExit(
            f"--chunk {chunk}: a multiple of 4 (each chunk rotates the seats) that divides"
            f" --games {args.games} (every chunk whole, so that more games go on from them)"
        )
    presets = args.presets.split(",")
    # not the number of games: a record of 400 deals goes on to 1,000 with the same command
    settings = {"candidate": candidate, "base": base, "presets": presets, "seed": args.seed,
                "chunk": chunk}  # fmt: skip
    chunks = resumed(args.json, settings)
    print(f"rules engine: {IMPLEMENTATION}", flush=True)
    if chunks:
        print(f"resuming {args.json}: {len(chunks)} chunk(s) played already", flush=True)
    rows: list[dict[str, Any]] = []
    for preset in presets:
        played = {c["seed"] for c in chunks if c["preset"] == preset}
        for index, first in enumerate(range(0, args.games, chunk)):
            seed = args.seed + index * CHUNK_SEEDS
            if seed in played:
                continue
            size = min(chunk, args.games - first)
            chunks.append(play_chunk(preset, candidate, base, size, seed, args.jobs, args.cluster))
            if args.json:
                save(args.json, settings, chunks, rows)
            if size < args.games:
                done = sum(c["games"] for c in chunks if c["preset"] == preset)
                print(f"{preset:10s} {done} of {args.games} deals", flush=True)
        row = summary(preset, candidate, base, chunks)
        rows.append(row)
        low, high = row["ci95"]
        print(
            f"{preset:10s} {candidate} vs 3 {base}: {row['losses']}/{row['games']}"
            f" {100 * row['loss_rate']:.1f}% [{100 * low:.1f}, {100 * high:.1f}]"
            f" ({verdict(low, high)}; {row['seconds']:.0f} s)",
            flush=True,
        )
        if args.json:
            save(args.json, settings, chunks, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
