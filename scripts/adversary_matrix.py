"""Print the adversary matrix: every stage, every fault, at 3, 4 and 6 seats; or the quit matrix.

Each cell is one in-memory table where one peer deviates at one message (see
``tests/protocol/adversary_matrix.py``, which this script runs); the table shows the verdict
kinds the honest peers reached and flags any honest seat named, honest transcript rejected,
honest peer left hanging or exception. Exits 1 if any cell fails.

    python scripts/adversary_matrix.py                 # the whole matrix (a few minutes)
    python scripts/adversary_matrix.py --seats 3 --faults equivocate
    python scripts/adversary_matrix.py --quit --seats 2 3 4 6   # the losing seat quits

The quit matrix (``tests/protocol/quit_matrix.py``): the loser of a reference game quits
when the game is decided, or half way through it (kill, SIGSTOP, cut its own links, cut one
link, a bogus verdict naming each other seat, restart within or after the grace). Each cell
says the verdicts the honest peers reached and in how many honest records the quitter lost;
it exits 1 if an honest seat was named, a record rejected, or the records disagree.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "protocol"))

import adversary_matrix
import quit_matrix


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, nargs="*", default=[3, 4, 6])
    parser.add_argument("--faults", nargs="*", default=list(adversary_matrix.FAULTS))
    parser.add_argument("--stages", nargs="*", default=None, help="only these stages")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quit", action="store_true", help="the quit matrix instead")
    args = parser.parse_args()
    if args.quit:
        return quit_table(tuple(args.seats), args.seed)
    for fault in args.faults:
        if fault not in adversary_matrix.FAULTS:
            parser.error(f"unknown fault {fault!r}: one of {', '.join(adversary_matrix.FAULTS)}")
    started = time.perf_counter()
    results = adversary_matrix.matrix(
        tuple(args.seats),
        tuple(args.faults),
        only=(lambda _p, stage, _f: stage in args.stages) if args.stages else None,
        seed=args.seed,
    )
    print(adversary_matrix.table_text(results))
    for result in results:
        if not result.ok:
            print(
                f"FAILING {result.players} seats, {result.stage}, {result.fault}: "
                f"{result.error or ''}"
            )
            for o in result.outcomes:
                print(
                    f"    peer {o.index} (seat {o.seat}): {o.ended} {o.kind} "
                    f"names {o.culprits}; transcript: {o.verify_fault or 'verifies'}"
                )
    print(f"{time.perf_counter() - started:.0f} s")
    return 0 if all(r.ok for r in results) else 1


def quit_table(sizes: tuple[int, ...], seed: int) -> int:
    started = time.perf_counter()
    cells = quit_matrix.matrix(sizes, seed=seed)
    print(quit_matrix.table_text(cells))
    bad = [c for c in cells if c.error or c.honest_named or c.rejected or not c.agree]
    for cell in bad:
        print(f"FAILING {cell.players} seats, {cell.trigger}, {cell.fault}: {cell.error or ''}")
        for o in cell.outcomes:
            print(
                f"    peer {o.index} (seat {o.seat}): {o.ended} {o.kind} names {o.culprits},"
                f" losers {o.losers}; transcript: {o.verify_fault or 'verifies'}"
            )
    print(f"{time.perf_counter() - started:.0f} s")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
