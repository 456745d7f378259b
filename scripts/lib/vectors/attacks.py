"""``attacks.json``: frame sequences delivered to one peer, with the outcome an observer
reaches (the cases in :mod:`.attack_rejected` and :mod:`.attack_verdicts`).
"""

from __future__ import annotations

from typing import Any

from moska_p2p.crypto.identity import Identity
from scripts.lib.vectors.attack_rejected import rejected_cases
from scripts.lib.vectors.attack_tools import attack_table, until_play
from scripts.lib.vectors.attack_verdicts import verdict_cases
from scripts.lib.vectors.base import OUTSIDER_SEED, jv, steps_json


def attack_vectors() -> dict[str, Any]:
    outsider = Identity.from_seed(OUTSIDER_SEED)
    cases = rejected_cases(outsider) + verdict_cases()

    setup = attack_table()
    until_play(setup)
    prefix = steps_json(setup.steps)
    for item in cases:
        if "peers" not in item and item["steps"][: len(prefix)] == prefix:
            item["steps"] = item["steps"][len(prefix) :]
            item["after_setup"] = True
        else:
            item["after_setup"] = False
    t = attack_table()
    config = t.config
    return {
        "description": (
            "Each case: frames delivered, in order, to one honest peer (seat-keys of "
            "identity_seed bytes([i+1])*32; the honest peer is index 0, the cheater index 1), "
            "including the frames the honest peer itself signed (its verdict message last, "
            "when it signs one). Feed them to a fresh observer (a session with no identity) "
            "with the given roster and table settings; 'expect' is what it must output, and "
            "'losers' the seats that forfeit (convicted; a timeout names, never convicts). A "
            "step {\"tick\": t} lets time pass instead; a "
            "frame step without 'now' is received at time 0. A case with after_setup true "
            "starts with setup_steps (the honest game up to its first move: hellos, seats, "
            "both proven shuffle passes, deal keys, D3 claims); step indices in 'expect' count "
            "from the first setup step. A case with its own 'config' uses those table "
            "settings; one with its own 'peers' was played from other per-game secrets."
        ),
        "config": jv(config.to_wire()),
        "roster": [i.public_bytes.hex() for i in t.identities],
        "peers": t.peers_json(),
        "outsider_public_key": outsider.public_bytes.hex(),
        "setup_steps": prefix,
        "cases": cases,
    }
