#!/usr/bin/env python3
"""Train the value network the search uses (``moska_p2p/bots/weights/value-v1.npz``).

Self-play: every preset at every player count it allows, all seats playing the search's own
heuristic playout policy (``ismcts.policy_move``) with a few random moves mixed in for
variety. A sample of the positions is kept, each as the seat to act would see it with every
hand known (``network.position_features``, as in the search's determinizations) and labelled
with which seats ended among the losers. A small perceptron (627-128-64-6) learns those
labels with AdamW on a masked binary cross-entropy; the games are split into training and
validation by game, so no position of a validation game is trained on.

The net predicts what a playout from the position would end in, which is what the search
needs at a leaf (see ``moska_p2p/bots/network.py``).

Reproducible: the same arguments give the same file, byte for byte, on the same numpy and
BLAS (one BLAS thread is forced below, before numpy loads):

    python scripts/train_value.py                       # the shipped weights (~5 min, ~8 GB)
    python scripts/train_value.py --games 200 --epochs 2 --out /tmp/v.npz   # a quick try
"""

from __future__ import annotations

import os

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # one thread: the same sums in the same order
os.environ["OMP_NUM_THREADS"] = "1"
os.environ["MKL_NUM_THREADS"] = "1"

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np

from moska_p2p.bots.encoding import MAX_SEATS
from moska_p2p.bots.ismcts import policy_move, search_moves
from moska_p2p.bots.network import (
    DEFAULT_WEIGHTS,
    INPUT_SIZE,
    ValueNet,
    position_features,
    save_network,
)
from moska_p2p.engine import PRESETS, make_rules, new_game
from scripts.lib.training import Adam, backward, forward, initial_params

MAX_MOVES = 2000  # a game longer than this (a bot cycle) is dropped


def tables() -> list[tuple[str, int]]:
    """Every (preset, players) the engine allows, in a fixed order."""
    out = []
    for preset in PRESETS:
        rules = make_rules(preset)
        for players in range(rules.min_players, rules.max_players + 1):
            if rules.teams and players % 2:
                continue
            out.append((preset, players))
    return out


def play_games(
    games: int, seed: int, sample: float, explore: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Self-play ``games`` games; return features (float16), losses and masks (uint8) and
    each position's game number."""
    rng = random.Random(seed)
    everywhere = tables()
    features: list[np.ndarray] = []  # float16 rows: 1.9 million Python lists need ~16 GB
    losses: list[list[int]] = []
    masks: list[list[int]] = []
    numbers: list[int] = []
    for number in range(games):
        preset, players = everywhere[number % len(everywhere)]
        game = new_game(preset, players, seed=rng.getrandbits(63))
        kept: list[tuple[list[float], int]] = []
        moves = 0
        while game.to_act_seat >= 0 and moves < MAX_MOVES:
            seat = game.to_act_seat
            if rng.random() < sample:
                kept.append((position_features(game, seat), seat))
            choices = search_moves(game, rng)
            if rng.random() < explore:
                move = choices[rng.randrange(len(choices))]
            else:
                move = policy_move(game, choices)
            game.play_unchecked(move)
            moves += 1
        if game.to_act_seat >= 0:
            continue
        losers = set(game.loser_seats)
        for values, seat in kept:
            features.append(np.asarray(values, dtype=np.float16))
            losses.append(
                [int((seat + step) % players in losers) if step < players else 0
                 for step in range(MAX_SEATS)]
            )  # fmt: skip
            masks.append([int(step < players) for step in range(MAX_SEATS)])
            numbers.append(number)
    return (
        np.stack(features) if features else np.zeros((0, INPUT_SIZE), dtype=np.float16),
        np.asarray(losses, dtype=np.uint8),
        np.asarray(masks, dtype=np.uint8),
        np.asarray(numbers, dtype=np.int64),
    )


def masked_bce(p: np.ndarray, y: np.ndarray, m: np.ndarray) -> float:
    p = np.clip(p, 1e-6, 1 - 1e-6)
    terms = -(y * np.log(p) + (1 - y) * np.log(1 - p)) * m
    return float(terms.sum() / m.sum())


def train(
    x: np.ndarray,
    y: np.ndarray,
    m: np.ndarray,
    hidden: list[int],
    epochs: int,
    seed: int,
    rate: float,
    batch: int,
    decay: float = 0.0,
    log: Any = print,
) -> ValueNet:
    """Adam on the masked binary cross-entropy of the sigmoid outputs, with decoupled weight
    decay (AdamW) on the weight matrices: positions of one game are alike, and the decay
    keeps the net from learning the training games by heart."""
    rng = np.random.default_rng(seed)
    sizes = [INPUT_SIZE, *hidden, MAX_SEATS]
    params = initial_params(sizes, rng)
    adam = Adam(params)
    count = len(x)
    layers = len(sizes) - 1
    for epoch in range(epochs):
        order = rng.permutation(count)
        total = 0.0
        lr = rate * (0.5 ** (epoch // max(1, epochs // 3)))  # halves twice over the run
        for start in range(0, count, batch):
            idx = order[start : start + batch]
            xb = x[idx].astype(np.float32)
            yb = y[idx].astype(np.float32)
            mb = m[idx].astype(np.float32)
            acts = forward(params, xb)
            p = 1.0 / (1.0 + np.exp(-np.clip(acts[-1], -30, 30)))
            weight = mb.sum()
            total += masked_bce(p, yb, mb) * weight
            grad = (p - yb) * mb / weight  # d(mean BCE)/d(logits)
            adam.step(params, backward(params, acts, grad), lr, decay)
        log(f"  epoch {epoch + 1}/{epochs}: training loss {total / m.sum():.4f} (rate {lr:g})")
    return ValueNet([(params[2 * i], params[2 * i + 1]) for i in range(layers)])


def evaluate(net: ValueNet, x: np.ndarray, y: np.ndarray, m: np.ndarray) -> dict[str, float]:
    """Validation figures: the net's loss against a constant guess per table size, and how
    often its likeliest loser is a real one."""
    p = np.concatenate([net.forward(x[i : i + 4096].astype(np.float32))
                        for i in range(0, len(x), 4096)])  # fmt: skip
    players = m.sum(axis=1)
    base = np.zeros_like(p)
    for n in np.unique(players):
        rows = players == n
        base[rows] = (y[rows] * m[rows]).sum(axis=0) / m[rows].sum(axis=0).clip(1)
    masked = np.where(m > 0, p, -1.0)
    hit = y[np.arange(len(y)), masked.argmax(axis=1)].mean()
    return {
        "validation_loss": round(masked_bce(p, y, m), 5),
        "constant_guess_loss": round(masked_bce(base, y, m), 5),
        "likeliest_loser_is_a_loser": round(float(hit), 4),
    }


def make_parser() -> argparse.ArgumentParser:
    """The options; their defaults are the shipped file's (a test keeps them equal)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=250000, help="self-play games")
    parser.add_argument("--sample", type=float, default=0.08, help="share of positions kept")
    parser.add_argument("--explore", type=float, default=0.05, help="share of random moves")
    parser.add_argument("--hidden", default="128,64", help="hidden layer sizes")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--rate", type=float, default=1e-3, help="Adam's learning rate")
    parser.add_argument("--batch", type=int, default=512)
    parser.add_argument("--decay", type=float, default=0.01, help="AdamW's weight decay")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=DEFAULT_WEIGHTS)
    return parser


def main() -> int:
    args = make_parser().parse_args()
    hidden = [int(h) for h in args.hidden.split(",") if h]
    began = time.perf_counter()
    print(f"self-play: {args.games} games over {len(tables())} tables", flush=True)
    x, y, m, numbers = play_games(args.games, args.seed, args.sample, args.explore)
    played = time.perf_counter() - began
    print(f"  {len(x)} positions in {played:.0f} s", flush=True)
    held_out = numbers % 10 == 9  # every tenth game validates
    net = train(
        x[~held_out], y[~held_out], m[~held_out], hidden, args.epochs, args.seed, args.rate,
        args.batch, args.decay,
    )  # fmt: skip
    trained = time.perf_counter() - began - played
    figures = evaluate(net, x[held_out], y[held_out], m[held_out])
    print("  " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    net.meta["training"] = {
        "script": "scripts/train_value.py",
        "arguments": {k: v for k, v in vars(args).items() if k != "out"},
        "positions": int((~held_out).sum()),
        "validation_positions": int(held_out.sum()),
        **figures,
        "numpy": np.__version__,
    }
    save_network(args.out, net)
    print(
        f"wrote {args.out} ({args.out.stat().st_size // 1024} kB): self-play {played:.0f} s,"
        f" training {trained:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
