#!/usr/bin/env python3
"""A long, structure-aware fuzz run of the decoders and of live sessions.

It plays a few real games in memory (``protocol.simulate``), snapshotting the receiving
session just before chosen deliveries. Then, for each input, it takes a real frame of one of
those games, mutates it with the message's structure in mind (a field set to another value,
type or size, fields dropped or added, numbers moved by one or to a boundary, list items
swapped or duplicated, the type or sender changed, a leave or verdict made up with real
frames as evidence, a wider msgpack encoding) or byte by byte (flips, inserts, deletes, cuts),
signs it again with the real sender's key for most mutations (so that the signature passes
and the mutation reaches the handlers), and feeds it to an honest session restored at the
matching point of the game. A session that changed (it accepted, queued or stopped) is
replaced by a fresh copy of its snapshot for the next input.

A share of the inputs goes to the pure decoders instead: the frame decoder and
``open_frame``, ``parse_payload``, ``TableConfig.from_wire``, ``wire.classify`` (lobby and link
messages, roster entries, link proofs), ``parse_announcement``, ``parse_move``,
``read_transcript`` and, rarely, ``verify_transcript``.

A finding is any exception that escapes ``PeerSession.receive`` (or ``tick``), any decoder
error other than the one the decoder documents, or a verifier that failed on its own
(a ``LocalError``). Each is printed once per place (type and innermost project line) with the
input as hex and a traceback, and saved under ``--findings``; the run goes on and exits with
status 1 at the end. ``--only N`` replays input ``N`` of a run (same ``--seed``) verbosely.

    python scripts/fuzz.py --inputs 20000
    nohup python scripts/fuzz.py --inputs 1000000 > /tmp/fuzz-1m.log 2>&1 &

The work is in ``scripts/lib/fuzz/`` (the games, the mutations, the fuzzer); this is its entry
point.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from scripts.lib.fuzz.fuzzer import Fuzzer


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=1_000_000, help="inputs to run")
    parser.add_argument("--seed", type=int, default=1, help="seed of the inputs (games are fixed)")
    parser.add_argument("--report-every", type=int, default=50_000, help="progress every N")
    parser.add_argument("--checkpoints", type=int, default=80, help="snapshots per game, about")
    parser.add_argument(
        "--session-share", type=float, default=0.72, help="share of inputs fed to sessions"
    )
    parser.add_argument(
        "--verify-share",
        type=float,
        default=0.02,
        help="share of the transcript inputs replayed by verify_transcript (slow)",
    )
    parser.add_argument(
        "--findings", default="/tmp/moska-fuzz-findings", help="where findings are saved"
    )
    parser.add_argument("--only", type=int, default=None, help="run input N alone, verbosely")
    args = parser.parse_args(argv)
    print(f"moska-p2p fuzz: {args.inputs:,} inputs, seed {args.seed}")
    fuzzer = Fuzzer(args)
    fuzzer.setup()
    return fuzzer.run()


if __name__ == "__main__":
    sys.exit(main())
