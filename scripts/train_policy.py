#!/usr/bin/env python3
"""Train the policy prior of the search (``moska_p2p/bots/weights/policy-v1.npz``).

Self-play by the search itself: four ``ismcts`` bots (the value network's search) with a
fixed number of iterations a move, so that the games, and hence the file, are a function of
the arguments. At every decision with a choice, the row of each move the search considered
at its root (``policy.move_rows``) is kept with the share of the root's visits that move got:
the target the policy learns, with a softmax over the decision's moves and the cross-entropy
against those shares. Games are split by game into training and validation (every tenth
game validates).

Reproducible: the same arguments give the same file, byte for byte, on the same numpy (one
BLAS thread is forced below, before numpy loads; training is full-batch Adam in float32):

    python scripts/train_policy.py                 # the shipped weights' arguments
    python scripts/train_policy.py --games 4 --iterations 20 --epochs 5 --out /tmp/p.npz
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # one thread: the same sums in the same order
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import argparse
import json
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from moska_p2p.bots.ismcts import IsmctsBot
from moska_p2p.bots.policy import DEFAULT_POLICY, FEATURES, PolicyNet, move_rows, save_policy
from moska_p2p.engine import new_game
from scripts.lib.training import Adam, backward, forward, initial_params

MAX_MOVES = 2000  # a game longer than this (a bot cycle) is dropped

Data = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]


def play_games(games: int, seed: int, iterations: int, presets: list[str], players: int) -> Data:
    """Self-play ``games`` games; return the rows (float32), their visit shares, each row's
    decision number (rows of a decision are contiguous) and each decision's game number."""
    rng = random.Random(seed)
    rows: list[list[float]] = []
    shares: list[float] = []
    decision_of_row: list[int] = []
    game_of_decision: list[int] = []
    for number in range(games):
        preset = presets[number % len(presets)]
        game = new_game(preset, players, seed=rng.getrandbits(63))
        bots = [IsmctsBot(seed=rng.getrandbits(63), iterations=iterations) for _ in range(players)]
        kept: list[tuple[list[list[float]], list[float]]] = []
        moves = 0
        while game.to_act_seat >= 0 and moves < MAX_MOVES:
            seat = game.to_act_seat
            legal = game.legal_moves()
            if len(legal) == 1:
                game.play_unchecked(legal[0])
                moves += 1
                continue
            bot = bots[seat]
            cands = bot.candidates(game)  # what the root considers: the view's own moves
            move = bot.choose(game.view(seat), legal)
            visits = [bot.last_visits.get(m, 0) for m, _, _ in cands]
            total = sum(visits)
            if len(cands) > 1 and total:
                found = move_rows(game, [m for m, _, _ in cands], [s for _, _, s in cands])
                kept.append((found, [v / total for v in visits]))
            game.play(move)
            moves += 1
        if game.to_act_seat >= 0:
            continue
        for found, share in kept:
            decision = len(game_of_decision)
            game_of_decision.append(number)
            rows.extend(found)
            shares.extend(share)
            decision_of_row.extend([decision] * len(found))
    return (
        np.asarray(rows, dtype=np.float32).reshape(-1, FEATURES),
        np.asarray(shares, dtype=np.float32),
        np.asarray(decision_of_row, dtype=np.int64),
        np.asarray(game_of_decision, dtype=np.int64),
    )


def group_softmax(z: np.ndarray, starts: np.ndarray, group: np.ndarray) -> np.ndarray:
    """The softmax of ``z`` within each decision (rows contiguous, ``starts`` their first)."""
    top = np.maximum.reduceat(z, starts)[group]
    e = np.exp(z - top)
    return np.asarray(e / np.add.reduceat(e, starts)[group], dtype=np.float32)


def cross_entropy(p: np.ndarray, t: np.ndarray, starts: np.ndarray) -> float:
    """The mean over decisions of the cross-entropy of the priors against the visit shares."""
    return float(-(t * np.log(np.clip(p, 1e-7, 1.0))).sum() / max(1, len(starts)))


def _starts(group: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each decision's first row, and each row's decision renumbered from 0."""
    _, starts, inverse = np.unique(group, return_index=True, return_inverse=True)
    return starts, inverse


def train(
    x: np.ndarray,
    t: np.ndarray,
    group: np.ndarray,
    hidden: list[int],
    epochs: int,
    seed: int,
    rate: float,
    decay: float,
    log: Any = print,
) -> PolicyNet:
    """Full-batch Adam (with decoupled weight decay) on the decisions' cross-entropy."""
    rng = np.random.default_rng(seed)
    sizes = [FEATURES, *hidden, 1]
    params = initial_params(sizes, rng)
    adam = Adam(params)
    starts, inverse = _starts(group)
    decisions = max(1, len(starts))
    layers = len(sizes) - 1
    for step in range(1, epochs + 1):
        acts = forward(params, x)
        p = group_softmax(acts[-1][:, 0], starts, inverse)
        grad = ((p - t) / decisions).astype(np.float32)[:, None]
        adam.step(params, backward(params, acts, grad), rate, decay)
        if step % 100 == 0 or step == epochs:
            log(f"  step {step}/{epochs}: training loss {cross_entropy(p, t, starts):.4f}")
    return PolicyNet([(params[2 * i], params[2 * i + 1]) for i in range(layers)])


def evaluate(net: PolicyNet, x: np.ndarray, t: np.ndarray, group: np.ndarray) -> dict[str, float]:
    """Validation figures: the net's cross-entropy against the heuristic ranking's (a
    softmax of minus the rank) and the uniform prior's, and how often each one's likeliest
    move is the search's most visited."""
    starts, inverse = _starts(group)
    if not len(starts):
        return {}
    p = group_softmax(net.logits(x), starts, inverse)
    heuristic_rank = x[:, -2]  # the move's rank among the node's moves, 0 = best (policy.py)
    heuristic = group_softmax(-4.0 * heuristic_rank, starts, inverse)
    sizes = np.diff(np.append(starts, len(x)))
    uniform = (1.0 / sizes)[inverse].astype(np.float32)

    def agrees(q: np.ndarray) -> float:
        hits = 0
        for a, b in zip(starts, np.append(starts[1:], len(x)), strict=True):
            hits += int(t[a + int(np.argmax(q[a:b]))] == t[a:b].max())
        return round(hits / len(starts), 4)

    return {
        "validation_loss": round(cross_entropy(p, t, starts), 5),
        "heuristic_loss": round(cross_entropy(heuristic, t, starts), 5),
        "uniform_loss": round(cross_entropy(uniform, t, starts), 5),
        "top_move_agrees": agrees(p),
        "heuristic_top_move_agrees": agrees(heuristic),
    }


def make_parser() -> argparse.ArgumentParser:
    """The options; their defaults are the shipped file's."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--games", type=int, default=120, help="self-play games")
    parser.add_argument("--iterations", type=int, default=150, help="search iterations a move")
    parser.add_argument("--presets", default="moska,durak")
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--hidden", default="32,16", help="hidden layer sizes")
    parser.add_argument("--epochs", type=int, default=600, help="full-batch Adam steps")
    parser.add_argument("--rate", type=float, default=3e-3, help="Adam's learning rate")
    parser.add_argument("--decay", type=float, default=1e-4, help="AdamW's weight decay")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=DEFAULT_POLICY)
    parser.add_argument(
        "--data", type=Path, help="keep the self-play here and reuse it while its arguments match"
    )
    return parser


def self_play(args: argparse.Namespace, presets: list[str]) -> Data:
    """The self-play of ``args``, from ``args.data`` when it holds that very self-play (the
    training's options can then be tried without playing again)."""
    key = json.dumps([args.games, args.seed, args.iterations, presets, args.players])
    if args.data is not None and args.data.is_file():
        with np.load(args.data, allow_pickle=False) as stored:
            if str(stored["key"]) == key:
                print(f"  self-play read from {args.data}", flush=True)
                return (stored["x"], stored["t"], stored["group"], stored["game_of"])
    data = play_games(args.games, args.seed, args.iterations, presets, args.players)
    if args.data is not None:
        x, t, group, game_of = data
        np.savez(args.data, key=np.asarray(key), x=x, t=t, group=group, game_of=game_of)
    return data


def main(argv: list[str] | None = None) -> int:
    args = make_parser().parse_args(argv)
    hidden = [int(h) for h in args.hidden.split(",") if h]
    began = time.perf_counter()
    presets = args.presets.split(",")
    print(f"self-play: {args.games} games of {', '.join(presets)}", flush=True)
    x, t, group, game_of = self_play(args, presets)
    played = time.perf_counter() - began
    print(f"  {len(game_of)} decisions, {len(x)} moves in {played:.0f} s", flush=True)
    held = (game_of % 10 == 9)[group]
    net = train(x[~held], t[~held], group[~held], hidden, args.epochs, args.seed, args.rate,
                args.decay)  # fmt: skip
    figures = evaluate(net, x[held], t[held], group[held])
    print("  " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    net.meta["training"] = {
        "script": "scripts/train_policy.py",
        "arguments": {k: v for k, v in vars(args).items() if k not in ("out", "data")},
        "decisions": len(np.unique(group[~held])),
        "validation_decisions": len(np.unique(group[held])),
        **figures,
        "numpy": np.__version__,
    }
    save_policy(args.out, net)
    print(f"wrote {args.out}: self-play {played:.0f} s, in all {time.perf_counter() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
