#!/usr/bin/env python3
"""A random bot for moska-p2p as a separate process: the external bot protocol (docs/BOTS.md,
"Bots in any language") with the standard library only, no moska_p2p import.

    moska arena --preset moska --bots "exec:python3 bots/examples/external_random.py",random

The seed comes from the first command-line argument, else from the ``start`` message.
"""

from __future__ import annotations

import json
import random
import sys


def main() -> None:
    fixed_seed = int(sys.argv[1]) if len(sys.argv) > 1 else None
    rng = random.Random(fixed_seed)
    for line in sys.stdin:  # ends when the arena closes our stdin
        if not line.strip():
            continue
        message = json.loads(line)
        if message["type"] == "start":
            if fixed_seed is None and message["seed"] is not None:
                rng = random.Random(f"{message['seed']}:{message['game']}")
        elif message["type"] == "choose":
            move = rng.choice(message["legal_moves"])
            print(json.dumps({"state_id": message["state_id"], "move": move}), flush=True)
        # "event" and "end" need no answer.


if __name__ == "__main__":
    main()
