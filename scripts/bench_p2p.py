#!/usr/bin/env python3
"""Benchmark the peer-to-peer protocol in one process (no sockets).

For 2, 4 and 6 peers: the time from the first hello until every peer can make its first
decision (seating, the two-pass shuffle, the deal's key releases), and a whole game between
random bots through the protocol against the very same game replayed on the engine alone.
Every peer runs in this one thread, so the figures add up the work of all peers: on a real
table each peer does its share in parallel. Medians of several runs.

    python scripts/bench_p2p.py --runs 5
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import group
from moska_p2p.crypto.identity import Identity
from moska_p2p.engine import new_game
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.simulate import Network, SimulationResult, make_peers
from moska_p2p.table.simulate import run_game


def _table(preset: str, players: int, seed: int) -> Network:
    ids = [Identity.from_seed(bytes([seed % 200 + i + 1]) * 32) for i in range(players)]
    config = TableConfig(preset, players, seed.to_bytes(32, "big"))
    return Network(make_peers(config, ids, seed=seed))


def time_to_first_decision(preset: str, players: int, seed: int) -> float:
    net = _table(preset, players, seed)
    start = time.perf_counter()
    for index, session in enumerate(net.sessions):
        net.handle(index, session.start())
    net.deliver_all()
    elapsed = time.perf_counter() - start
    assert any(s.my_turn for s in net.sessions), "nobody can act after the deal"
    return elapsed


def whole_game(preset: str, players: int, seed: int) -> tuple[float, float, int, int, int]:
    """(protocol seconds, engine seconds, moves, frames delivered, bytes delivered)."""
    net = _table(preset, players, seed)
    bots = [RandomBot(seed * 10 + i) for i in range(players)]
    start = time.perf_counter()
    result = run_game(net, bots)
    protocol = time.perf_counter() - start
    assert result.finished, [s.stage for s in result.sessions]
    first = result.sessions[0]
    faces = _faces(result)  # every face, from every peer's secrets
    moves = first.moves
    start = time.perf_counter()
    game = new_game(preset, players, deck=faces, dealer=first.dealer)
    for seat, text in moves:
        game.play(text, seat=seat)
    engine = time.perf_counter() - start
    assert game.state_hash() == first.final_hash
    return protocol, engine, len(moves), result.frames, result.bytes


def _faces(result: SimulationResult) -> list[int]:
    """Every face of the dealt deck, from every peer's secret permutation (the benchmark
    holds all peers; no peer of a real game ever can)."""
    by_seat = sorted(result.sessions, key=lambda s: s.my_seat)
    perms = []
    for session in by_seat:
        assert session.deck is not None and session.deck.secrets is not None
        perms.append(session.deck.secrets.permutation)
    cards = by_seat[0].cards
    faces = []
    for j in range(len(cards)):
        index = j
        for perm in reversed(perms):
            index = perm[index]
        faces.append(cards[index])
    return faces


@contextlib.contextmanager
def without_proofs() -> Iterator[None]:
    """The baseline: the same protocol with the passes computed but no proof made or
    checked (inputs still checked for validity and distinctness). Only for this benchmark."""
    saved = (mp.pass1, mp.pass2, mp.verify_pass1, mp.verify_pass2)

    def pass1(secrets: mp.DeckSecrets, context: bytes, points: Any) -> tuple[list[bytes], bytes]:
        mp.check_points(points, secrets.size)
        return [group.mul(secrets.scalar, points[i]) for i in secrets.permutation], b""

    def pass2(
        secrets: mp.DeckSecrets, context: bytes, points: Any
    ) -> tuple[list[bytes], list[bytes], bytes]:
        mp.check_points(points, secrets.size)
        inverse = secrets.scalar_inverse
        out = [
            group.mul(group.scalar_mul(inverse, k), p)
            for k, p in zip(secrets.keys, points, strict=True)
        ]
        return out, list(secrets.key_points), b""

    def verify1(context: bytes, inputs: Any, outputs: Any, scalar: bytes, proof: bytes) -> None:
        mp.check_points(outputs, len(inputs))

    def verify2(
        context: bytes, inputs: Any, outputs: Any, scalar: bytes, keys: Any, proof: bytes
    ) -> None:
        mp.check_points(outputs, len(inputs))

    mp.pass1, mp.pass2, mp.verify_pass1, mp.verify_pass2 = pass1, pass2, verify1, verify2  # type: ignore[assignment]
    try:
        yield
    finally:
        mp.pass1, mp.pass2, mp.verify_pass1, mp.verify_pass2 = saved  # type: ignore[assignment]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--preset", default="moska")
    args = parser.parse_args()
    print(f"seating + shuffle + deal ({args.preset}), every proof made and checked by every")
    print(f"peer, all peers in this one thread; median of {args.runs}:")
    for players in (2, 4, 6):
        times = [time_to_first_decision(args.preset, players, run) for run in range(args.runs)]
        with without_proofs():
            bare = [time_to_first_decision(args.preset, players, run) for run in range(args.runs)]
        proven, baseline = statistics.median(times), statistics.median(bare)
        print(
            f"  {players} peers: {proven * 1000:7.1f} ms with proofs, {baseline * 1000:7.1f} ms"
            f" without (x{proven / baseline:.1f})"
        )
    print(f"whole {args.preset} game, 4 peers, random bots, median of {args.runs}:")
    rows = [whole_game(args.preset, 4, run + 100) for run in range(args.runs)]
    protocol = statistics.median(r[0] for r in rows)
    engine = statistics.median(r[1] for r in rows)
    print(f"  through the protocol: {protocol * 1000:8.1f} ms")
    print(
        f"  engine alone:         {engine * 1000:8.2f} ms"
        f"  (protocol/engine = {protocol / engine:.0f}x)"
    )
    print(f"  moves per game:       {statistics.median(r[2] for r in rows):8.0f}")
    print(f"  frames delivered:     {statistics.median(r[3] for r in rows):8.0f} (relays included)")
    print(f"  bytes delivered:      {statistics.median(r[4] for r in rows):8.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
