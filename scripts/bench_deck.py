#!/usr/bin/env python3
"""Benchmark the proven mental-poker deck (moska_p2p.crypto.deck v2): what a shuffle costs.

Every figure is the median of several runs (5 by default), all in this one process:

- the group operations everything is made of (moska_p2p.crypto.group, and rbcl alone);
- for decks of 36 and 52 cards, one seat's pass-1 and pass-2 proof: prove and verify time, the
  pass without its proof (the v1 cost: input check and one multiplication a card) and the
  operations each proof makes (counted, so you can see where the time goes);
- for 2, 4 and 6 peers: the whole shuffle without proofs (baseline) against the proven one:
  every seat proves both passes, and every proof is verified once. "All verify" is what a table
  pays when every peer verifies every other peer's proofs, ``(peers - 1)`` verifications of
  each (measured once, multiplied); "per peer" what one machine pays for that (its own proofs
  and its ``peers - 1`` verifications of each other seat's two proofs). "Threads" runs those
  verifications on one thread a core: libsodium releases the GIL, so they overlap.

    python scripts/bench_deck.py
    python scripts/bench_deck.py --runs 9 --json deck.json
    python scripts/bench_deck.py --cpu     # on a busy machine: CPU time, not wall time
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rbcl  # type: ignore[import-untyped]

from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import dleq, group, proofs, shuffle_proof
from moska_p2p.crypto.fiat_shamir import Transcript

GAME_ID = hashlib.sha256(b"bench").digest()
PEERS = (2, 4, 6)
SIZES = (36, 52)


CLOCK: Callable[[], float] = time.perf_counter


def median_seconds(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = CLOCK()
        work()
        times.append(CLOCK() - start)
    return statistics.median(times)


def shown(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.1f} ms"


# -- primitives ---------------------------------------------------------------------------------


def bench_primitives(runs: int) -> dict[str, float]:
    reps = 500
    s = group.hash_to_scalar(b"s")
    t = group.hash_to_scalar(b"t")
    p = group.hash_to_point(b"p")
    q = group.hash_to_point(b"q")
    work: dict[str, Callable[[], object]] = {
        "mul": lambda: group.mul(s, p),
        "mul (rbcl alone)": lambda: rbcl.crypto_scalarmult_ristretto255(s, p),
        "base_mul": lambda: group.base_mul(s),
        "add": lambda: group.add(p, q),
        "is_point": lambda: group.is_point(p),
        "hash_to_point": lambda: group.hash_to_point(b"tag", b"x"),
        "scalar_mul": lambda: group.scalar_mul(s, t),
        "challenge": lambda: Transcript(b"d").challenge_scalar(b"c"),
    }
    return {
        name: median_seconds(lambda f=f: [f() for _ in range(reps)], runs) / reps  # type: ignore[misc]
        for name, f in work.items()
    }


# -- operation counts (where the time goes) -----------------------------------------------------

_COUNTED = ("mul", "base_mul", "add", "sub", "sum_points", "is_point")


@contextlib.contextmanager
def counting() -> Iterator[tuple[Counter[str], Counter[str]]]:
    """Count the group operations the proof modules make and time them where they run (a unit
    price from a tight loop is optimistic: libsodium's tables get evicted between calls).
    ``sum_points`` counts as its additions; its items are built before its clock starts."""
    counts: Counter[str] = Counter()
    times: Counter[str] = Counter()
    saved: list[tuple[object, str, object]] = []

    def wrap(name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        kind = {"sub": "add", "sum_points": "add"}.get(name, name)

        def counted(*args: Any) -> Any:
            if name == "sum_points":
                args = (list(args[0]),)
                counts[kind] += max(len(args[0]) - 1, 0)
            else:
                counts[kind] += 1
            start = time.perf_counter()
            try:
                return original(*args)
            finally:
                times[kind] += time.perf_counter() - start

        return counted

    for module in (dleq, shuffle_proof, proofs, mp):
        for name in _COUNTED:
            if hasattr(module, name):
                saved.append((module, name, getattr(module, name)))
                setattr(module, name, wrap(name, getattr(module, name)))
    try:
        yield counts, times
    finally:
        for module, name, original in saved:
            setattr(module, name, original)


def where(job: Callable[[], object]) -> str:
    """Run ``job`` once, counting and timing its group operations; the rest is hashing,
    scalar arithmetic and Python."""
    with counting() as (counts, times):
        start = time.perf_counter()
        job()
        total = time.perf_counter() - start
    rows = [("mul", "mul"), ("base", "base_mul"), ("add", "add"), ("point checks", "is_point")]
    parts = [f"{counts[key]} {name} {shown(times[key])}" for name, key in rows]
    rest = total - sum(times[key] for _, key in rows)
    return ", ".join(parts) + f", rest {shown(rest)} (of {shown(total)})"


# -- passes -------------------------------------------------------------------------------------


def baseline_pass1(secrets: mp.DeckSecrets, points: list[bytes]) -> list[bytes]:
    """Pass 1 as v1 did it: check the input, one multiplication a card, no proof."""
    mp.check_points(points, secrets.size)
    return [group.mul(secrets.scalar, points[i]) for i in secrets.permutation]


def baseline_pass2(secrets: mp.DeckSecrets, points: list[bytes]) -> list[bytes]:
    mp.check_points(points, secrets.size)
    return [
        group.mul(group.scalar_mul(secrets.scalar_inverse, k), p)
        for k, p in zip(secrets.keys, points, strict=True)
    ]


def make_secrets(size: int, peers: int) -> list[mp.DeckSecrets]:
    return [
        mp.DeckSecrets.from_seed(hashlib.sha256(bytes([peers, seat])).digest(), GAME_ID, seat, size)
        for seat in range(peers)
    ]


def ctx(seat: int, stage: str) -> bytes:
    return mp.deck_context(GAME_ID, seat, stage)


def bench_one_seat(size: int, runs: int) -> dict[str, Any]:
    """One seat's two passes, with and without proofs, over a deck of ``size`` cards."""
    peer = make_secrets(size, 1)[0]
    _ = peer.public_scalar, peer.key_points  # derived once per game, not per pass
    cards = mp.card_points(GAME_ID, range(size))
    out1, proof1 = mp.pass1(peer, ctx(0, "shuffle1"), cards)
    out2, keys2, proof2 = mp.pass2(peer, ctx(0, "shuffle2"), out1)
    a = peer.public_scalar
    jobs: dict[str, Callable[[], object]] = {
        "pass1 baseline": lambda: baseline_pass1(peer, cards),
        "pass1 prove": lambda: mp.pass1(peer, ctx(0, "shuffle1"), cards),
        "pass1 verify": lambda: mp.verify_pass1(ctx(0, "shuffle1"), cards, out1, a, proof1),
        "pass2 baseline": lambda: baseline_pass2(peer, out1),
        "pass2 prove": lambda: mp.pass2(peer, ctx(0, "shuffle2"), out1),
        "pass2 verify": lambda: mp.verify_pass2(ctx(0, "shuffle2"), out1, out2, a, keys2, proof2),
    }
    result: dict[str, Any] = {name: median_seconds(job, runs) for name, job in jobs.items()}
    for name in ("pass1 prove", "pass1 verify", "pass2 prove", "pass2 verify"):
        result[name + " ops"] = where(jobs[name])
    result["pass1 proof bytes"] = len(proof1)
    result["pass2 proof bytes"] = len(proof2)
    return result


def bench_table(size: int, peers: int, runs: int) -> dict[str, float]:
    """A whole shuffle at a table: baseline, proving and verifying (each proof once)."""
    secrets = make_secrets(size, peers)
    for peer in secrets:
        _ = peer.public_scalar, peer.key_points
    cards = mp.card_points(GAME_ID, range(size))

    def baseline() -> None:
        current = cards
        for peer in secrets:
            current = baseline_pass1(peer, current)
        for peer in secrets:
            current = baseline_pass2(peer, current)

    messages: dict[str, list[Any]] = {"p1": [], "p2": []}

    def prove1() -> None:
        messages["p1"] = []
        current = cards
        for seat, peer in enumerate(secrets):
            out, proof = mp.pass1(peer, ctx(seat, "shuffle1"), current)
            messages["p1"].append((current, out, proof))
            current = out

    def prove2() -> None:
        messages["p2"] = []
        current = messages["p1"][-1][1]
        for seat, peer in enumerate(secrets):
            out, keys, proof = mp.pass2(peer, ctx(seat, "shuffle2"), current)
            messages["p2"].append((current, out, keys, proof))
            current = out

    def verify(which: str) -> Callable[[], None]:
        def run() -> None:
            for seat, peer in enumerate(secrets):
                if which == "p1":
                    inp, out, proof = messages["p1"][seat]
                    mp.verify_pass1(ctx(seat, "shuffle1"), inp, out, peer.public_scalar, proof)
                else:
                    inp, out, keys, proof = messages["p2"][seat]
                    mp.verify_pass2(
                        ctx(seat, "shuffle2"), inp, out, peer.public_scalar, keys, proof
                    )

        return run

    def all_verify_threaded() -> None:
        """Every peer verifies every other peer's two proofs, on a pool of one thread a core:
        libsodium runs with the GIL released (ctypes), so verifications overlap."""
        jobs = [verify(which) for which in ("p1", "p2") for _ in range(peers - 1)]
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
            for future in [pool.submit(job) for job in jobs]:
                future.result()

    result = {"baseline": median_seconds(baseline, runs)}
    result["prove p1"] = median_seconds(prove1, runs)
    result["verify p1"] = median_seconds(verify("p1"), runs)
    result["prove p2"] = median_seconds(prove2, runs)
    result["verify p2"] = median_seconds(verify("p2"), runs)
    result["prove"] = result["prove p1"] + result["prove p2"]
    verify_once = result["verify p1"] + result["verify p2"]
    result["verify once"] = verify_once
    result["total, verify once"] = result["prove"] + verify_once
    result["total, all verify"] = result["prove"] + (peers - 1) * verify_once
    result["per peer"] = (result["prove"] + (peers - 1) * verify_once) / peers
    if CLOCK is time.perf_counter:  # CPU time would add the threads up: wall clock only
        result["all verify, threads"] = result["prove"] + median_seconds(all_verify_threaded, runs)
    return result


# -- report -------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="runs; the median is reported")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    parser.add_argument(
        "--cpu",
        action="store_true",
        help="measure this process's CPU time, not wall time (on a busy machine); no threads",
    )
    args = parser.parse_args()
    runs: int = args.runs
    global CLOCK
    if args.cpu:
        CLOCK = time.process_time
    report: dict[str, Any] = {}

    unit = bench_primitives(runs)
    report["primitives"] = unit
    clock = "CPU time of this process" if args.cpu else "wall time"
    print(f"proven mental-poker deck, ristretto255 via rbcl (libsodium); {clock}, median of {runs}")
    print()
    print("group operations: " + ", ".join(f"{name} {shown(t)}" for name, t in unit.items()))

    print("\none seat's pass and its proof")
    header = f"{'N':>3} {'pass':>4} {'no proof':>9} {'prove':>9} {'verify':>9} {'bytes':>6}  ratio"
    print(header)
    for size in SIZES:
        one = bench_one_seat(size, runs)
        report[f"one seat, {size} cards"] = one
        for p in ("1", "2"):
            base, prove, verify = (one[f"pass{p} {k}"] for k in ("baseline", "prove", "verify"))
            print(
                f"{size:>3} {p:>4} {shown(base):>9} {shown(prove):>9} {shown(verify):>9} "
                f"{one[f'pass{p} proof bytes']:>6}  prove x{prove / base:.1f}, "
                f"verify x{verify / base:.1f}"
            )
        for p in ("1", "2"):
            for k in ("prove", "verify"):
                print(f"      pass {p} {k:6s}: {one[f'pass{p} {k} ops']}")

    print("\na whole shuffle: every seat proves both passes (prove), each proof verified once")
    print("(verify); 'all verify' = proving + every peer verifying every other peer's proofs,")
    print("one after the other, and its ratio to the shuffle without proofs; 'per peer' = what")
    print("one machine pays of that; 'threads' = 'all verify' with the verifications on")
    print(f"{os.cpu_count()} threads")
    print(
        f"{'N':>3} {'peers':>5} {'no proofs':>10} {'prove p1':>9} {'verify p1':>10} "
        f"{'prove p2':>9} {'verify p2':>10} {'all verify':>11} {'ratio':>6} {'per peer':>9} "
        f"{'threads':>9}"
    )
    for size in SIZES:
        for peers in PEERS:
            t = bench_table(size, peers, runs)
            report[f"table, {size} cards, {peers} peers"] = t
            threads = t.get("all verify, threads")
            print(
                f"{size:>3} {peers:>5} {shown(t['baseline']):>10} {shown(t['prove p1']):>9} "
                f"{shown(t['verify p1']):>10} {shown(t['prove p2']):>9} "
                f"{shown(t['verify p2']):>10} {shown(t['total, all verify']):>11} "
                f"x{t['total, all verify'] / t['baseline']:>5.1f} {shown(t['per peer']):>9} "
                f"{shown(threads) if threads is not None else 'n/a':>9}"
            )
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
