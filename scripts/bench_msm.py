#!/usr/bin/env python3
"""Benchmark batch verification: the native multi-scalar multiplication against item by item.

What had to be measured before batching (PROTOCOL.md §11.5), CPU time of this process,
medians of several runs:

- ``Σ s_i·P_i`` for n = 53, 105, 261 points (the sizes of a 52-card deck's key check, a
  104-term shuffle sum and a pass-2 batch), with full 253-bit scalars and with 128-bit
  weights, through moska_p2p.crypto.msm (Straus, Pippenger and the automatic choice; point
  decoding included), against the same sum one product at a time through libsodium and
  through libdecaf's decoded points;
- a 52-position pass-2 verification: position by position (libsodium; libdecaf) and batched;
- a reveal's 52 released keys: ``k·B == K`` one by one against one batch
  ``(Σ z_i·k_i)·B == Σ z_i·K_i``.

    python scripts/bench_msm.py
    python scripts/bench_msm.py --runs 9
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moska_p2p.crypto import decaf, dleq, msm
from moska_p2p.crypto import deck as mp
from moska_p2p.crypto import group as g

L = g.GROUP_ORDER


def median_ms(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return statistics.median(times) * 1e3


def scalar(bits: int) -> bytes:
    return g.scalar_of_int(int.from_bytes(os.urandom(40), "little") % min(2**bits, L))


def products_pure(points: list[bytes], scalars: list[bytes]) -> bytes:
    return msm.reference_combination(points, scalars)


def products_decaf(points: list[bytes], scalars: list[bytes]) -> bytes:
    total = decaf.decode(g.IDENTITY)
    for point, s in zip(points, scalars, strict=True):
        total = decaf.add(total, decaf.mul(s, decaf.decode(point)))
    return decaf.encode(total)


def row(points: list[bytes], scalars: list[bytes], runs: int) -> list[float]:
    """Milliseconds for one sum: libsodium, libdecaf, Straus (w=5), Pippenger (c=6), auto."""
    assert msm.combination(points, scalars) == products_pure(points, scalars)
    return [
        median_ms(lambda: products_pure(points, scalars), max(3, runs // 2)),
        median_ms(lambda: products_decaf(points, scalars), runs),
        median_ms(lambda: msm.combination(points, scalars, method=1, parameter=5), runs),
        median_ms(lambda: msm.combination(points, scalars, method=2, parameter=6), runs),
        median_ms(lambda: msm.combination(points, scalars), runs),
    ]


def sums(runs: int) -> None:
    print("Σ s_i·P_i, ms (decoding included)")
    print("  n  bits   pure  decaf  straus5  pippenger6   auto  per point (auto)")
    points: list[bytes] = []
    for n in (53, 105, 261):
        points = [g.base_mul(scalar(253)) for _ in range(n)]
        for bits in (253, 128):
            pure, fast, straus, pippenger, auto = row(
                points, [scalar(bits) for _ in range(n)], runs
            )
            print(
                f"{n:3} {bits:5} {pure:6.2f} {fast:6.2f} {straus:8.2f} {pippenger:11.2f}"
                f" {auto:6.2f}  {auto / n * 1e3:5.1f} µs"
            )
    zeros = [bytes(32)] * len(points)
    decoding = median_ms(lambda: msm.combination(points, zeros), runs)
    print(f"of which decoding {len(points)} points: {decoding:.2f} ms")


@contextlib.contextmanager
def _without_native_sums() -> Iterator[None]:
    """libdecaf's calls alone (the accelerator as it was before the native sums)."""
    saved = msm.available
    msm.available = lambda: False  # type: ignore[assignment]
    try:
        yield
    finally:
        msm.available = saved  # type: ignore[assignment]


def pass2(runs: int) -> None:
    size = 52
    game_id = bytes(range(32))
    first = mp.DeckSecrets.from_seed(b"\x01" * 32, game_id, 0, size)
    second = mp.DeckSecrets.from_seed(b"\x02" * 32, game_id, 1, size)
    cards = mp.card_points(game_id, range(size))
    inputs, proof1 = mp.pass1(first, mp.deck_context(game_id, 0, "shuffle1"), cards)
    context = mp.deck_context(game_id, 1, "shuffle2")
    outputs, key_points, proof = mp.pass2(second, context, inputs)
    statement = (context, inputs, outputs, second.public_scalar, key_points, proof)
    items = [proof[i : i + 32] for i in range(0, len(proof), 32)]

    def each() -> None:
        dleq._verify_each(context, inputs, outputs, second.public_scalar, key_points, items)

    print("\npass-2 verification of 52 positions (verify_pass2 adds its output check), ms")
    with decaf.use(False):
        pure = median_ms(each, runs)
        pure_pass = median_ms(lambda: mp.verify_pass2(*statement), runs)
    with decaf.use():
        fast = median_ms(each, runs)
        batch = median_ms(lambda: dleq.verify_rekey(*statement), runs)
        batch_pass = median_ms(lambda: mp.verify_pass2(*statement), runs)
    print(f"position by position, libsodium: {pure:6.2f}   (verify_pass2 {pure_pass:.2f})")
    print(f"position by position, libdecaf:  {fast:6.2f}")
    print(f"batched (native MSM of 261):     {batch:6.2f}   (verify_pass2 {batch_pass:.2f})")
    print(f"batched against libsodium x{pure / batch:.1f}, against libdecaf x{fast / batch:.1f}")

    pass1 = (mp.deck_context(game_id, 0, "shuffle1"), cards, inputs, first.public_scalar, proof1)
    with decaf.use(False):
        pure1 = median_ms(lambda: mp.verify_pass1(*pass1), runs)
    with decaf.use():
        native1 = median_ms(lambda: mp.verify_pass1(*pass1), runs)
        with _without_native_sums():
            fast1 = median_ms(lambda: mp.verify_pass1(*pass1), runs)
    print("\npass-1 verification of 52 cards (compact form, the same bytes on every path), ms")
    print(
        f"libsodium: {pure1:6.2f}   libdecaf: {fast1:6.2f}   libdecaf + native sums: {native1:6.2f}"
    )

    keys = list(second.keys)

    def keys_each() -> None:
        assert all(mp.check_key(k, kp) for k, kp in zip(keys, key_points, strict=True))

    def keys_batch() -> None:
        weights = dleq.fresh_weights(size)
        total = sum(z * int.from_bytes(k, "little") for z, k in zip(weights, keys, strict=True))
        points = [g.BASE, *key_points]
        scalars = [g.scalar_of_int(total), *(g.scalar_of_int(z) for z in weights)]
        assert msm.combination(points, scalars, b"\x00" + b"\x01" * size) == g.IDENTITY

    print("\n52 released keys, ms")
    print(f"one by one (k·B, libsodium):  {median_ms(keys_each, runs):.2f}")
    print(f"one batch (native MSM of 53): {median_ms(keys_batch, runs):.2f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7, help="runs; the median is reported")
    args = parser.parse_args()
    if not msm.available():
        print(f"no native multi-scalar multiplication: {msm.unavailable_reason()}")
        return 1
    print(f"load average {os.getloadavg()[0]:.2f}, CPU time, median of {args.runs}\n")
    sums(args.runs)
    pass2(args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
