"""Print the adversary matrix of issue 21: every stage, every fault, at 3, 4 and 6 seats.

Each cell is one in-memory table where one peer deviates at one message (see
``tests/protocol/adversary_matrix.py``, which this script runs); the table shows the verdict
kinds the honest peers reached and flags any honest seat named, honest transcript rejected,
honest peer left hanging or exception. Exits 1 if any cell fails.

    python scripts/adversary_matrix.py                 # the whole matrix (a few minutes)
    python scripts/adversary_matrix.py --seats 3 --faults equivocate
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "protocol"))

import adversary_matrix


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seats", type=int, nargs="*", default=[3, 4, 6])
    parser.add_argument("--faults", nargs="*", default=list(adversary_matrix.FAULTS))
    parser.add_argument("--stages", nargs="*", default=None, help="only these stages")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
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


if __name__ == "__main__":
    sys.exit(main())
