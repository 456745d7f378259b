"""The attacks an honest peer only rejects (no verdict, the game goes on): the first
half of ``attacks.json``.
"""

from __future__ import annotations

import struct
from typing import Any

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol import messages as m
from moska_p2p.protocol.frames import (
    encode_frame,
    pack,
)
from scripts.lib.vectors.attack_tools import CHEAT, HONEST, attack_table, case, until_play
from scripts.lib.vectors.base import OTHER_GAME, framed, message, signed_as


def rejected_cases(outsider: Identity) -> list[dict[str, Any]]:
    """Frames that are only rejected, in the order of ``attacks.json``."""
    cases: list[dict[str, Any]] = []

    t = attack_table()
    t.start()
    t.settle()
    first = next(s["frame"] for s in t.steps if message(s["frame"]).sender == t.peers[CHEAT].me)
    t = attack_table()
    t.start()
    bad = bytearray(first)
    bad[-1] ^= 0x55
    t.deliver(HONEST, bytes(bad))
    t.settle()
    cases.append(
        case(
            "forged-signature",
            "The cheater's hello with the last signature byte flipped arrives before the real "
            "one: rejected, nobody blamed, the game goes on to play.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    cheat = t.peers[CHEAT]
    assert cheat.identity is not None
    keys_payload = m.encode_payload(
        cheat.game_id,  # type: ignore[arg-type]
        cheat.me,
        cheat.peers[cheat.me].next_seq,
        cheat.peers[cheat.me].last_hash,
        m.KEYS,
        {"keys": [[0, bytes(32)]]},
    )
    t.deliver(HONEST, signed_as(cheat.identity, m.LEAVE, keys_payload), force=True)
    wrong_kind = encode_frame(m.KEYS, keys_payload, cheat.identity.sign(m.LEAVE, keys_payload))
    t.deliver(HONEST, wrong_kind, force=True)
    t.step()
    cases.append(
        case(
            "kind-mismatch",
            "A keys message framed and signed as a leave, then framed as keys but signed as a "
            "leave: the kind is outside the payload and inside the signature, so both are "
            "rejected (a forged signature), and the game goes on.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    cheat = t.peers[CHEAT]
    t.inject(cheat.craft(m.KEYS, {"keys": [[0, bytes(32)]]}, game=OTHER_GAME))
    t.step()
    cases.append(
        case(
            "another-game",
            "A well-signed keys message whose g is another game's id: rejected, game goes on.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    cheat = t.peers[CHEAT]
    assert cheat.identity is not None
    me = cheat.peers[cheat.me]
    garbage = framed(b"\xc1\xc1\xc1")
    not_a_map = signed_as(cheat.identity, m.KEYS, b"\x93\x01\x02\x03")
    wrong = pack(
        {
            "v": 2,
            "g": cheat.game_id,
            "f": cheat.me,
            "s": "seven",
            "p": me.last_hash,
            "t": "keys",
            "b": {"keys": [[0, bytes(32)]]},
            "h": [],
        }
    )
    wrong_type = signed_as(cheat.identity, m.KEYS, wrong)
    bad_body = pack(
        {
            "v": 2,
            "g": cheat.game_id,
            "f": cheat.me,
            "s": me.next_seq,
            "p": me.last_hash,
            "t": "move",
            "b": {"move": "take", "state": bytes(31), "cards": []},
            "h": [],
        }
    )
    bad_body_frame = signed_as(cheat.identity, m.MOVE, bad_body)
    good = cheat.craft(m.KEYS, {"keys": [[0, bytes(32)]]})
    short = struct.pack(">I", len(good) - 3) + good[4:]
    for frame in (garbage, not_a_map, wrong_type, bad_body_frame, short):
        t.deliver(HONEST, frame, force=True)
    t.step()
    cases.append(
        case(
            "malformed",
            "Five malformed frames (not msgpack; a payload that is no map; s of the wrong type; "
            "a move whose state is 31 bytes; a length prefix that does not match): each is "
            "rejected, then the game goes on.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    cheat = t.peers[CHEAT]
    assert cheat.identity is not None
    payload = m.encode_payload(
        cheat.game_id,  # type: ignore[arg-type]
        outsider.public_bytes,
        0,
        m.NO_PREVIOUS,
        m.LEAVE,
        {"reason": "hi"},
    )
    t.deliver(HONEST, signed_as(outsider, m.LEAVE, payload))
    payload = m.encode_payload(
        cheat.game_id,  # type: ignore[arg-type]
        cheat.me,
        0,
        m.NO_PREVIOUS,
        m.KEYS,
        {"keys": [[0, bytes(32)]]},
    )
    t.deliver(HONEST, signed_as(cheat.identity, m.KEYS, payload))
    t.step()
    cases.append(
        case(
            "unknown-sender-and-first-not-hello",
            "A frame signed by a key not on the roster, then a roster member's seq-0 message "
            "that is not a hello: both rejected.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    t.step()
    cheater_key = t.peers[CHEAT].me
    again = next(s["frame"] for s in reversed(t.steps) if message(s["frame"]).sender == cheater_key)
    t.deliver(HONEST, again, force=True)
    ignored = len(t.steps) - 1
    t.step()
    cases.append(
        case(
            "duplicate",
            "A frame already processed arrives again (a relay or a replay): no output at all.",
            t,
            ignored,
        )
    )

    return cases
