#!/usr/bin/env python3
"""Benchmark the arena against the bare engine, ``--jobs 2`` against ``--jobs 1``, a local
Dask cluster, and the arena through the protocol (``--p2p``) against the engine-only arena.

Up to five loops per run, interleaved so that a change in the machine's load hits them alike:
the engine's own random games (``play_games`` of ``scripts/bench_engine.py``, the very same
function), the arena with four ``random`` bots in one process, the same arena with two
worker processes, the same arena on a local Dask cluster of two worker processes (started
once, before the runs; its start-up time is reported on its own; skipped with
``--no-cluster`` or without the ``cluster`` extra), and ``--p2p-games`` games of the arena
through the full protocol in one process. Each figure is the median of ``--runs`` runs; the
ratios are given both as
the ratio of the medians and as the median of each run's ratio (the steadier of the two on a
busy machine); the arena-to-engine ratio also by CPU time, which other processes on the
machine disturb less than wall-clock time, and in moves per second (the two loops play
different games, whose mean lengths differ by a percent or two).

Targets: arena >= 90% of the engine's games/s; ``--jobs 2`` >= 1.7x ``--jobs 1``.

    python scripts/bench_arena.py                       # 3000 games, 5 runs, moska
    python scripts/bench_arena.py --games 5000 --preset durak --json /tmp/arena.json
    python scripts/bench_arena.py --runs 3 --p2p-games 20 --no-cluster
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

from bench_engine import play_games  # noqa: E402

import moska_p2p.engine as moska_engine  # noqa: E402
from moska_p2p.arena.arena import run_arena  # noqa: E402
from moska_p2p.arena.cluster import local_cluster  # noqa: E402


def arena_seconds(
    preset: str,
    players: int,
    games: int,
    seed: int,
    jobs: int,
    cluster: str | None = None,
    p2p: bool = False,
) -> tuple[float, float, int]:
    """Wall-clock and this process's CPU seconds of one arena run of ``random`` bots, and
    the moves its games took."""
    start, cpu = time.perf_counter(), time.process_time()
    result = run_arena(
        preset, ["random"] * players, games, seed=seed, jobs=jobs, cluster=cluster, p2p=p2p
    )
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    if result.games != games:
        raise SystemExit(f"the arena played {result.games} games, not {games}")
    return seconds, cpu, sum(o.moves for o in result.outcomes)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=3000, help="games per loop and run")
    parser.add_argument("--runs", type=int, default=5, help="runs; medians are reported")
    parser.add_argument("--preset", default="moska")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--p2p-games", type=int, default=8, help="games through the protocol per run (0: none)"
    )
    parser.add_argument("--no-cluster", action="store_true", help="skip the Dask cluster")
    args = parser.parse_args()
    games, players, preset = args.games, args.players, args.preset
    engine, arena1, arena2, cpu_ratio, move_ratio = [], [], [], [], []
    on_cluster: list[float] = []
    p2p: list[float] = []
    with contextlib.ExitStack() as stack:
        address, startup = (None, 0.0) if args.no_cluster else start_cluster(stack)
        for run in range(args.runs):
            one_run(args, run, engine, arena1, arena2, cpu_ratio, move_ratio)
            if address is not None:
                on_cluster.append(games / arena_seconds(preset, players, games, run, 1, address)[0])
            if args.p2p_games:
                wall = arena_seconds(preset, players, args.p2p_games, run, 1, p2p=True)[0]
                p2p.append(args.p2p_games / wall)
            print(
                f"run {run + 1}: engine {engine[-1]:6.0f} games/s, arena jobs 1 {arena1[-1]:6.0f},"
                f" jobs 2 {arena2[-1]:6.0f}"
                + (f", cluster {on_cluster[-1]:6.0f}" if on_cluster else "")
                + (f", p2p {p2p[-1]:.2f}" if p2p else ""),
                flush=True,
            )
    report(args, engine, arena1, arena2, cpu_ratio, move_ratio, on_cluster, startup, p2p)
    return 0


def start_cluster(stack: contextlib.ExitStack) -> tuple[str | None, float]:
    """A local cluster of two single-threaded worker processes, as ``--cluster local:2``
    makes, kept for every run; its address and how long it took to start."""
    try:
        import distributed
    except ImportError:
        print("no cluster: pip install 'moska-p2p[cluster]' (or --no-cluster)")
        return None, 0.0
    start = time.perf_counter()
    cluster = stack.enter_context(local_cluster(2))
    client = stack.enter_context(distributed.Client(cluster))
    client.wait_for_workers(2)
    return cluster.scheduler_address, time.perf_counter() - start


def one_run(
    args: argparse.Namespace,
    run: int,
    engine: list[float],
    arena1: list[float],
    arena2: list[float],
    cpu_ratio: list[float],
    move_ratio: list[float],
) -> None:
    """The engine and the engine-only arena with one and two jobs, once."""
    games, players, preset = args.games, args.players, args.preset
    cpu = time.process_time()
    seconds, engine_moves = play_games(moska_engine, preset, players, games, run * games)
    engine_cpu = time.process_time() - cpu
    engine.append(games / seconds)
    wall, arena_cpu, arena_moves = arena_seconds(preset, players, games, run, jobs=1)
    arena1.append(games / wall)
    cpu_ratio.append(engine_cpu / arena_cpu)
    move_ratio.append((arena_moves / wall) / (engine_moves / seconds))
    arena2.append(games / arena_seconds(preset, players, games, run, jobs=2)[0])


def report(
    args: argparse.Namespace,
    engine: list[float],
    arena1: list[float],
    arena2: list[float],
    cpu_ratio: list[float],
    move_ratio: list[float],
    on_cluster: list[float],
    startup: float,
    p2p: list[float],
) -> None:
    games, players, preset = args.games, args.players, args.preset
    med = statistics.median
    figures = {
        "preset": preset,
        "players": players,
        "games": games,
        "runs": args.runs,
        "engine_games_per_s": med(engine),
        "arena_jobs1_games_per_s": med(arena1),
        "arena_jobs2_games_per_s": med(arena2),
        "arena_vs_engine": med(arena1) / med(engine),
        "arena_vs_engine_per_run": med(a / e for a, e in zip(arena1, engine, strict=True)),
        "arena_vs_engine_cpu": med(cpu_ratio),
        "arena_vs_engine_moves_per_s": med(move_ratio),
        "jobs2_vs_jobs1": med(arena2) / med(arena1),
        "jobs2_vs_jobs1_per_run": med(b / a for a, b in zip(arena1, arena2, strict=True)),
    }
    print(
        f"{preset}, {players} random bots, {games} games, median of {args.runs} runs:\n"
        f"  engine         {figures['engine_games_per_s']:7.0f} games/s\n"
        f"  arena jobs 1   {figures['arena_jobs1_games_per_s']:7.0f} games/s"
        f"  = {figures['arena_vs_engine']:.1%} of the engine"
        f" (per-run median {figures['arena_vs_engine_per_run']:.1%};"
        f" by CPU time {figures['arena_vs_engine_cpu']:.1%};"
        f" in moves/s {figures['arena_vs_engine_moves_per_s']:.1%}; target 90%)\n"
        f"  arena jobs 2   {figures['arena_jobs2_games_per_s']:7.0f} games/s"
        f"  = {figures['jobs2_vs_jobs1']:.2f}x jobs 1"
        f" (per-run median {figures['jobs2_vs_jobs1_per_run']:.2f}x; target 1.7x)"
    )
    if on_cluster:
        figures["cluster_games_per_s"] = med(on_cluster)
        figures["cluster_vs_jobs1"] = med(on_cluster) / med(arena1)
        figures["cluster_startup_s"] = startup
        print(
            f"  local cluster  {figures['cluster_games_per_s']:7.0f} games/s"
            f"  = {figures['cluster_vs_jobs1']:.2f}x jobs 1 (2 Dask workers;"
            f" started in {startup:.1f} s, not counted)"
        )
    if p2p:
        figures["p2p_games"] = args.p2p_games
        figures["p2p_games_per_s"] = med(p2p)
        figures["p2p_vs_arena"] = med(p2p) / med(arena1)
        print(
            f"  arena --p2p    {figures['p2p_games_per_s']:7.2f} games/s"
            f"  = 1/{1 / figures['p2p_vs_arena']:.0f} of the engine-only arena"
            f" ({args.p2p_games} games a run, every peer in this one process)"
        )
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    sys.exit(main())
