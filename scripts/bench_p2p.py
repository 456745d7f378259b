#!/usr/bin/env python3
"""Benchmark the peer-to-peer protocol in one process (no sockets).

For 2, 4 and 6 peers: the time from the first hello until every peer can make its first
decision (seating, the two-pass shuffle, the deal's key releases), and a whole game between
random bots through the protocol against the very same game replayed on the engine alone.
Every peer runs in this one thread, so the figures add up the work of all peers: on a real
table each peer does its share in parallel. Medians of several runs.

    python scripts/bench_p2p.py --runs 5
    python scripts/bench_p2p.py --baseline 1a7eb9a --runs 5   # this tree against a revision

``--baseline REV`` extracts git revision ``REV`` with ``git archive`` into a temporary
directory (the repository is not touched) and measures, in one run, the three figures of
the proven deal's speed on both trees: a 6-peer proven deal in one process (wall seconds),
the CPU a peer
spends on it (the process's CPU time over the 6 peers, who do the same work), and a whole
4-peer game through the protocol. Every run measures each side in a fresh subprocess on the
same seed, the sides interleaved and their order alternated, so a machine that slows down
during the run weighs on all alike. ``--accel`` adds a third side, this tree with the optional
libdecaf accelerator (``MOSKA_P2P_ACCEL=decaf``, moska_p2p.crypto.decaf).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# A --worker measures the tree named by --root (the baseline's or this one): it must be first
# on the path before anything of moska_p2p is imported.
sys.path.insert(
    0,
    sys.argv[sys.argv.index("--root") + 1]
    if "--root" in sys.argv[:-1]
    else str(Path(__file__).resolve().parent.parent),
)

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import group
from moska_p2p.crypto.identity import Identity
from moska_p2p.engine import new_game
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.simulate import Network, SimulationResult, make_peers
from moska_p2p.table.simulate import run_game

REPO = Path(__file__).resolve().parent.parent
ROOT = Path(sys.path[0])


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


def time_to_first_decision_threaded(preset: str, players: int, seed: int) -> float:
    """The same deal with the sessions' costly deck steps as jobs (``offload``, as a network
    peer runs them) on a pool of two worker threads, one per core: the checks of the peers
    and the passes pipelined with them run in parallel (libsodium releases the GIL), the
    sessions themselves in this thread. A tree without offload measures inline."""
    net = _table(preset, players, seed)
    if not hasattr(net.sessions[0], "offload"):
        return time_to_first_decision(preset, players, seed)
    for session in net.sessions:
        session.offload = True
    running: dict[concurrent.futures.Future[object], tuple[int, Any]] = {}
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:

        def handle(index: int, outputs: list[Any]) -> None:
            net.handle(index, outputs)
            for job in net.sessions[index].take_jobs():
                running[pool.submit(job.run)] = (index, job)

        for index, session in enumerate(net.sessions):
            handle(index, session.start())
        while net.queue or running:
            done = [future for future in running if future.done()]
            if not done and not net.queue:
                done = list(concurrent.futures.wait(running, return_when="FIRST_COMPLETED")[0])
            for future in done:
                index, job = running.pop(future)
                handle(index, net.sessions[index].finish_job(job, future.result()))
            if net.queue:
                _, target, frame = net.queue.popleft()
                handle(target, net.sessions[target].receive(frame))
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


def _worker(args: argparse.Namespace) -> int:
    """One measurement of the tree at ``--root`` in this process, printed as JSON."""
    import moska_p2p

    if not Path(moska_p2p.__file__).resolve().is_relative_to(ROOT.resolve()):
        raise SystemExit(f"imported {moska_p2p.__file__}, not the tree under {ROOT}")
    time_to_first_decision(args.preset, 6, 1000)  # warm-up: imports, caches, generators
    cpu = time.process_time()
    deal = time_to_first_decision(args.preset, 6, args.seed)
    deal_cpu = time.process_time() - cpu
    game = whole_game(args.preset, 4, args.seed + 100)[0]
    threaded = time_to_first_decision_threaded(args.preset, 6, args.seed)
    figures = {"deal": deal, "threaded": threaded, "peer_cpu": deal_cpu / 6, "game": game}
    print(json.dumps(figures))
    return 0


def _extract(rev: str, into: Path) -> None:
    """The files of git revision ``rev`` under ``into`` (no worktree, no index change)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


def _measure(root: Path, preset: str, seed: int, accel: bool) -> dict[str, float]:
    """The three figures of the tree at ``root``, in a fresh subprocess."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MOSKA_P2P_ACCEL")}
    if accel:
        env["MOSKA_P2P_ACCEL"] = "decaf"
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", "--preset", preset]
    command += ["--seed", str(seed), "--root", str(root)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, cwd=root, env=env)
    figures: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return figures


FIGURES = (
    ("deal", "6-peer proven deal, one process (s)"),
    ("threaded", "the same, jobs on 2 threads (s)"),
    ("peer_cpu", "CPU per peer, 6-peer deal (s)"),
    ("game", "whole 4-peer game, protocol (s)"),
)


def _compare(args: argparse.Namespace) -> int:
    """This tree (and with --accel, this tree accelerated) against ``args.baseline``."""
    sides = ["base", "tree"] + (["tree+decaf"] if args.accel else [])
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="bench-p2p-") as tmp:
        base = Path(tmp)
        _extract(args.baseline, base)
        roots = {"base": base, "tree": REPO, "tree+decaf": REPO}
        for run in range(args.runs):
            order = sides if run % 2 == 0 else list(reversed(sides))
            for side in order:
                figures = _measure(roots[side], args.preset, run, side == "tree+decaf")
                runs[side].append(figures)
            print(f"  run {run + 1}/{args.runs} done", file=sys.stderr)
    print(f"baseline {args.baseline} against this tree ({args.preset}), medians of {args.runs}")
    print(f"{'':38s}" + "".join(f"{side:>12s}" for side in sides) + "  ratios (base/side)")
    for key, label in FIGURES:
        medians = {side: statistics.median(r[key] for r in runs[side]) for side in sides}
        ratios = "  ".join(f"x{medians['base'] / medians[side]:.2f}" for side in sides[1:])
        print(f"{label:38s}" + "".join(f"{medians[side]:12.3f}" for side in sides) + f"  {ratios}")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--preset", default="moska")
    parser.add_argument("--baseline", metavar="REV", help="compare with this git revision")
    parser.add_argument("--accel", action="store_true", help="with --baseline: a decaf side")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--root", help=argparse.SUPPRESS)
    parser.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        return _worker(args)
    if args.baseline:
        return _compare(args)
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
