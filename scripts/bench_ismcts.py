#!/usr/bin/env python3
"""Benchmark the ISMCTS bot: search iterations (one playout each) per second, against a
baseline version of the bot measured in the same run.

The positions are fixed: decisions with a real choice taken along random games of a few
presets dealt from fixed seeds. At each, both bots search the same number of iterations
from the same bot seed; the figure is iterations per CPU second over all positions, the
median of several runs, old and new alternating position by position so that a change in
the machine's load hits both. Each iteration makes one playout, so this is also playouts
per second.

The baseline is a version of ``ismcts.py`` read from git (``git show REV:PATH``) and loaded
as a throw-away module; by default the last version of the top-level ``bots/ismcts.py``,
before the bot moved into the package. With the same seeds and iteration counts an
unchanged algorithm chooses the same moves: the script counts how many agree, a check that
a speed-up changed nothing else.

A third row, ``infer``, is the package's bot with ``infer="on"`` (determinizations weighted
by what the other seats' moves revealed, ``moska_p2p.bots.inference``): the cost of reading
the history once per decision and of the weighted deal on every iteration. A fourth,
``net``, is the bot with ``value="net"``: playouts cut after ``--depth`` moves and the leaf
scored by the learned value network (``moska_p2p.bots.network``), so its iterations are
evaluations per second, each a short playout and one batched network call.

    python scripts/bench_ismcts.py                       # old bots/ismcts.py vs the package's
    python scripts/bench_ismcts.py --runs 7 --iterations 300 --presets moska,durak
    python scripts/bench_ismcts.py --baseline HEAD~3:moska_p2p/bots/ismcts.py
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from moska_p2p.bots import ismcts  # noqa: E402
from moska_p2p.engine import Game, new_game  # noqa: E402

OLD_PATH = "bots/ismcts.py"


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def default_baseline() -> str:
    """``REV:PATH`` of the last top-level ``bots/ismcts.py``: HEAD's while it is there, else
    the one in the parent of the commit that removed it."""
    try:
        _git("cat-file", "-e", f"HEAD:{OLD_PATH}")
        return f"HEAD:{OLD_PATH}"
    except (OSError, subprocess.CalledProcessError):
        pass
    try:
        removed = _git("rev-list", "-1", "HEAD", "--", OLD_PATH).strip()
    except (OSError, subprocess.CalledProcessError):
        removed = ""
    if not removed:
        raise SystemExit(f"no commit has {OLD_PATH}: give --baseline REV:PATH")
    return f"{removed}^:{OLD_PATH}"


def load_baseline(spec: str, directory: Path) -> ModuleType:
    """The module at ``spec`` (``REV:PATH``), imported from a temporary file."""
    try:
        source = _git("show", spec)
    except subprocess.CalledProcessError as error:
        raise SystemExit(f"git show {spec} failed: {error.stderr.strip()}") from None
    path = directory / "ismcts_baseline.py"
    path.write_text(source)
    loader_spec = importlib.util.spec_from_file_location("ismcts_baseline", path)
    assert loader_spec is not None and loader_spec.loader is not None
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules["ismcts_baseline"] = module
    try:
        loader_spec.loader.exec_module(module)
    except ImportError as error:  # the old bot read engine internals that may have moved
        raise SystemExit(f"the baseline {spec} no longer imports: {error}") from None
    return module


def positions(presets: list[str], per_preset: int, players: int) -> list[Game]:
    """Decisions with more than one legal move along random games, from fixed seeds."""
    found: list[Game] = []
    for preset in presets:
        seats = 4 if preset == "durak-teams" else players
        taken = 0
        seed = 0
        while taken < per_preset:
            rng = random.Random(f"{preset}-{seed}")
            game = new_game(preset, players=seats, seed=seed)
            while game.to_act_seat >= 0 and taken < per_preset:
                if game.count_legal_moves() > 1 and rng.random() < 0.15:
                    found.append(game.copy())
                    taken += 1
                game.play(game.random_move(rng))
            seed += 1
    return found


def search(bot_class: Any, game: Game, seed: int, iterations: int) -> tuple[float, str]:
    """CPU seconds of this process for one search of ``game``, and the move chosen.

    CPU time, not wall-clock time: other processes on a busy machine then slow the figure
    far less (the bots' own budgets are wall-clock, but an iteration count is not)."""
    bot = bot_class(seed=seed, iterations=iterations)
    view = game.view(game.to_act_seat)
    legal = game.legal_moves()
    start = time.process_time()
    move = bot.choose(view, legal)
    elapsed = time.process_time() - start
    assert bot.last_iterations == iterations
    return elapsed, str(move)


def run(
    bots: dict[str, Any], games: list[Game], iterations: int
) -> tuple[dict[str, float], dict[str, list[str]]]:
    """One run: every position searched by each bot in turn, the order alternating from one
    position to the next, so that a burst of load lands on both; CPU seconds and moves."""
    seconds = dict.fromkeys(bots, 0.0)
    moves: dict[str, list[str]] = {label: [] for label in bots}
    labels = list(bots)
    for i, game in enumerate(games):
        for label in labels if i % 2 == 0 else labels[::-1]:
            elapsed, move = search(bots[label], game, i, iterations)
            seconds[label] += elapsed
            moves[label].append(move)
    return seconds, moves


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is reported")
    parser.add_argument("--iterations", type=int, default=100, help="iterations per search")
    parser.add_argument("--positions", type=int, default=8, help="positions per preset")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--presets", default="moska,durak,mustamaija,kaavi")
    parser.add_argument("--baseline", help="REV:PATH of the old bot (default: see above)")
    parser.add_argument("--depth", type=int, default=8, help="playout moves before the net")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    spec = args.baseline or default_baseline()
    games = positions([p for p in args.presets.split(",") if p], args.positions, args.players)
    searched = len(games) * args.iterations
    with tempfile.TemporaryDirectory() as tmp:
        old = load_baseline(spec, Path(tmp))
        bots = {
            "old": old.IsmctsBot,
            # the playout bot: the same algorithm as the baseline, so its moves must agree
            "new": functools.partial(ismcts.IsmctsBot, value="playout"),
            "infer": functools.partial(ismcts.IsmctsBot, value="playout", infer="on"),
            "net": functools.partial(ismcts.IsmctsBot, value="net", depth=args.depth),
        }
        rates: dict[str, list[float]] = {label: [] for label in bots}
        for _ in range(args.runs):
            seconds, moves = run(bots, games, args.iterations)
            for label in bots:
                rates[label].append(searched / seconds[label])
    old_rate = statistics.median(rates["old"])
    new_rate = statistics.median(rates["new"])
    infer_rate = statistics.median(rates["infer"])
    net_rate = statistics.median(rates["net"])
    same = sum(a == b for a, b in zip(moves["old"], moves["new"], strict=True))
    print(
        f"{len(games)} positions ({args.presets}), {args.iterations} iterations each,"
        f" median of {args.runs} runs"
    )
    print(f"old  {spec:40s} {old_rate:9.0f} iterations/s")
    print(f"new  {'moska_p2p/bots/ismcts.py value=playout':40s} {new_rate:9.0f} iterations/s")
    print(f"infer {'moska_p2p/bots/ismcts.py infer=on':39s} {infer_rate:9.0f} iterations/s")
    print(f"ratio new/old: {new_rate / old_rate:.2f}; same move chosen: {same}/{len(games)}")
    net_label = f"moska_p2p/bots/ismcts.py value=net depth={args.depth}"
    print(f"net  {net_label:40s} {net_rate:9.0f} iterations/s")
    print(f"ratio infer/new: {infer_rate / new_rate:.2f}")
    print(f"ratio net/new: {net_rate / new_rate:.2f}")
    if args.json:
        payload = {
            "baseline": spec,
            "positions": len(games),
            "iterations": args.iterations,
            "runs": rates,
            "old_per_s": old_rate,
            "new_per_s": new_rate,
            "infer_per_s": infer_rate,
            "net_per_s": net_rate,
            "net_depth": args.depth,
            "ratio": new_rate / old_rate,
            "same_moves": same,
        }
        args.json.write_text(json.dumps(payload, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
