#!/usr/bin/env python3
"""Generate the wire protocol's test vectors in ``protocol/vectors/`` (protocol version 3).

Everything is deterministic: identities come from fixed seeds (``Identity.from_seed``), every
peer's nonce, seat secret and deck seed from its per-game secret ``SHA-256(f"{seed}/{index}")``
(``make_peers(..., seed=...)`` seeds each peer's DRBG so), the table nonce is fixed, the proofs'
nonces are derived (PROTOCOL.md §11.4), and moves are drawn by a seeded chooser defined here
(not a bot of ``moska_p2p.bots``, so that the vectors do not move when the bots do). Only the
protocol and the rules engine shape them.

    python scripts/make_vectors.py            # (re)write protocol/vectors/
    python scripts/make_vectors.py --check    # regenerate in memory, compare with the files

Files written (``protocol/README.md`` describes them, ``protocol/PROTOCOL.md`` §18 their JSON
conventions); ``proofs.json`` in the same directory belongs to the proof tests and is left alone:

- ``framing.json``  signed frames of every message type with their decoding, and invalid frames
- ``crypto.json``   signatures, table id, game id, seating, card points, seed derivations, a
                    Fiat-Shamir transcript, a small proven shuffle
- ``attacks.json``  frame sequences delivered to one peer, with the outcome an observer reaches
- ``games.json`` with ``game-*.moska``: whole-game transcripts and what ``verify`` reports

The work is in ``scripts/lib/vectors/``, one module per file written; this is its entry point.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from scripts.lib.vectors.attacks import attack_vectors
from scripts.lib.vectors.crypto import crypto_vectors
from scripts.lib.vectors.framing import framing_vectors
from scripts.lib.vectors.games import DISCLOSE_GAME, GAMES, game_vectors, session_vectors

OUT = Path(__file__).resolve().parent.parent / "protocol" / "vectors"


def dump(data: Any) -> str:
    return json.dumps(data, indent=1, ensure_ascii=False) + "\n"


def generate(directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    games, durak, disclosing = game_vectors(directory)
    files = {
        "framing.json": framing_vectors(durak, disclosing),
        "crypto.json": crypto_vectors(),
        "attacks.json": attack_vectors(),
        "games.json": games,
        "sessions.json": session_vectors(),
    }
    written = [directory / name for name, *_ in GAMES] + [directory / DISCLOSE_GAME[0]]
    for name, data in files.items():
        (directory / name).write_text(dump(data))
        written.append(directory / name)
    return written


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    parser.add_argument(
        "--check", action="store_true", help="compare with the files, write nothing"
    )
    parser.add_argument(
        "--out", type=Path, default=OUT, help="directory (default protocol/vectors)"
    )
    args = parser.parse_args()
    if not args.check:
        for path in generate(args.out):
            print(f"{path}  {path.stat().st_size} bytes")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        differ = []
        for path in generate(Path(tmp)):
            stored = args.out / path.name
            if not stored.exists() or stored.read_bytes() != path.read_bytes():
                differ.append(path.name)
    if differ:
        print("differ from a fresh generation: " + ", ".join(differ))
        return 1
    print("the vectors are up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
