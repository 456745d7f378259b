#!/usr/bin/env python3
"""Benchmark the mental-poker deck (moska_p2p.crypto.deck): what a shuffle costs a table.

Every figure is the median of several runs (5 by default):

- one scalar multiplication (the unit everything else is made of), through rbcl alone and
  through ``scalar_mult``, which first checks the scalar and the point;
- a whole 52-card shuffle for 2, 4 and 6 peers: every peer derives its secrets from its seed,
  then both passes by every peer, one after the other as on the wire (input checks included);
- the audit of that shuffle from the revealed seeds (``replay_shuffle``);
- a private draw of 6 cards at a 4-peer table: the other peers' keys checked against their
  commitments, then unmasked and identified by the drawer.

    python scripts/bench_deck.py
    python scripts/bench_deck.py --runs 9 --json deck.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rbcl  # type: ignore[import-untyped]

from moska_p2p.crypto.deck import (
    DeckSecrets,
    card_point,
    card_points,
    card_table,
    check_key,
    identify,
    pass1,
    pass2,
    replay_shuffle,
    scalar_mult,
    seed_commitment,
    unmask,
)

GAME_ID = hashlib.sha256(b"bench").digest()
CARDS = list(range(52))


def median_seconds(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def shuffle(seeds: list[bytes]) -> tuple[list[list[bytes]], list[list[bytes]], list[list[bytes]]]:
    """Both passes by every peer; returns the pass-1 outputs, pass-2 outputs, key commitments."""
    secrets = [DeckSecrets.from_seed(s, GAME_ID, seat, len(CARDS)) for seat, s in enumerate(seeds)]
    first: list[list[bytes]] = []
    current = card_points(GAME_ID, CARDS)
    for peer in secrets:
        current = pass1(peer, current)
        first.append(current)
    second: list[list[bytes]] = []
    commitments: list[list[bytes]] = []
    for peer in secrets:
        current, committed = pass2(peer, current)
        second.append(current)
        commitments.append(committed)
    return first, second, commitments


def bench_table(peers: int, runs: int) -> list[tuple[str, float]]:
    """The shuffle and its audit at a table of ``peers``."""
    seeds = [hashlib.sha256(bytes([peers, seat])).digest() for seat in range(peers)]
    shuffle_time = median_seconds(lambda: shuffle(seeds), runs)
    first, second, commitments = shuffle(seeds)
    seed_commitments = [seed_commitment(s, GAME_ID, seat) for seat, s in enumerate(seeds)]

    def audit() -> list[int]:
        return replay_shuffle(
            GAME_ID, seeds, seed_commitments, first, second, commitments, len(CARDS), CARDS
        )

    return [
        (f"shuffle, {peers} peers, 52 cards", shuffle_time),
        (f"audit (replay), {peers} peers", median_seconds(audit, runs)),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is reported")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args()
    runs: int = args.runs
    rows: list[tuple[str, float]] = []

    point = card_point(GAME_ID, 0)
    scalar = DeckSecrets.from_seed(bytes(32), GAME_ID, 0, 1).scalar
    reps = 1000
    rows.append(
        (
            "scalar multiplication, rbcl alone",
            median_seconds(
                lambda: [rbcl.crypto_scalarmult_ristretto255(scalar, point) for _ in range(reps)],
                runs,
            )
            / reps,
        )
    )
    rows.append(
        (
            "one scalar multiplication (checked)",
            median_seconds(lambda: [scalar_mult(scalar, point) for _ in range(reps)], runs) / reps,
        )
    )

    for peers in (2, 4, 6):
        rows.extend(bench_table(peers, runs))

    peers, drawer = 4, 1
    seeds = [hashlib.sha256(bytes([peers, seat])).digest() for seat in range(peers)]
    secrets = [DeckSecrets.from_seed(s, GAME_ID, seat, 52) for seat, s in enumerate(seeds)]
    _, second, commitments = shuffle(seeds)
    deck = second[-1]
    table = card_table(GAME_ID, CARDS)

    def private_draw() -> list[int]:
        hand = []
        for position in range(6):
            keys = []
            for seat, peer in enumerate(secrets):
                key = peer.keys[position]
                if seat != drawer:  # a released key: everyone checks it against its commitment
                    assert check_key(GAME_ID, seat, position, key, commitments[seat][position])
                keys.append(key)
            hand.append(identify(unmask(deck[position], keys), table))
        return hand

    rows.append(("private draw of 6 cards, 4 peers", median_seconds(private_draw, runs)))

    print(f"mental-poker deck, ristretto255 via rbcl (median of {runs} runs)")
    print(f"{'operation':36s} {'time':>10s}")
    for name, seconds in rows:
        shown = f"{seconds * 1e6:.1f} us" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"
        print(f"{name:36s} {shown:>10s}")
    if args.json:
        args.json.write_text(json.dumps({name: seconds for name, seconds in rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
