"""The attacks that end the game with a verdict naming the sender: the second half of
``attacks.json``.
"""

from __future__ import annotations

from typing import Any

from moska_p2p.crypto import group as grp
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.play_phase import hand_cards
from scripts.lib.vectors.attack_tools import (
    ATTACK_SEED,
    CHEAT,
    HONEST,
    _lying_table,
    _pass_input,
    attack_table,
    case,
    rewrite_first,
    until_play,
)
from scripts.lib.vectors.base import message


def verdict_cases() -> list[dict[str, Any]]:
    """Frames that end the game with a verdict, in the order of ``attacks.json``."""
    cases: list[dict[str, Any]] = []

    t = attack_table()
    t.start()
    cheat = t.peers[CHEAT]
    hello = message(cheat.peers[cheat.me].accepted[0][1])
    other = dict(m.to_wire(hello.body), name="another name")
    t.deliver(HONEST, cheat.craft(m.HELLO, other, seq=0, prev=m.NO_PREVIOUS))
    t.settle()
    cases.append(
        case(
            "equivocation-hello",
            "Two different hellos with sequence number 0 from one key: equivocation, before "
            "seats are drawn (seat -1: no game to forfeit). The game id is known by then, so "
            "the honest peer signs its verdict.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    while t.to_act() != CHEAT:
        t.step()
    cheat = t.peers[CHEAT]
    g = cheat.game
    assert g is not None and cheat.deck is not None
    state = bytes.fromhex(g.state_hash())
    moves = cheat.legal_moves()[:2]
    frames = []
    for mv in moves:
        cards = [
            [g.pos_of[c], cheat.deck.my_key(g.pos_of[c])]
            for c in hand_cards(g, mv)
            if not g.shown[cheat.my_seat] >> c & 1
        ]
        frames.append(cheat.craft(m.MOVE, {"move": str(mv), "state": state, "cards": cards}))
    t.deliver(HONEST, frames[0])
    t.deliver(HONEST, frames[1])
    cases.append(
        case(
            "equivocation-move",
            "Two different moves, each legal, with one sequence number: equivocation; the "
            "evidence is both frames; the cheater forfeits.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    t.step()
    while t.to_act() != CHEAT:
        t.step()
    cheat = t.peers[CHEAT]
    g = cheat.game
    assert g is not None
    text = "take" if g.decision in ("open", "throw-in") else "attack AS"
    state = bytes.fromhex(g.state_hash())
    t.inject(cheat.craft(m.MOVE, {"move": text, "state": state, "cards": []}))
    cases.append(case("illegal-move", f"The seat to act sends '{text}', illegal here.", t))

    t = attack_table()
    until_play(t)
    while t.to_act() != HONEST:
        t.step()
    cheat = t.peers[CHEAT]
    g = cheat.game
    assert g is not None
    state = bytes.fromhex(g.state_hash())
    t.inject(cheat.craft(m.MOVE, {"move": "take", "state": state, "cards": []}))
    cases.append(
        case("out-of-turn", "A move for the current state by a seat that is not to act.", t)
    )

    t = attack_table()
    until_play(t)
    past = bytes.fromhex(t.peers[CHEAT].game.state_hash())  # type: ignore[union-attr]
    t.step()
    t.step()
    cheat = t.peers[CHEAT]
    t.inject(cheat.craft(m.MOVE, {"move": "pass", "state": past, "cards": []}))
    cases.append(case("past-state", "A move whose state field names a state already past.", t))

    t = attack_table()

    def wrong_key(body: dict[str, Any]) -> None:
        keys = [list(pair) for pair in body["keys"]]
        keys[0][1] = (7).to_bytes(32, "little")  # a valid scalar, not the one of the key point
        body["keys"] = keys

    rewrite_first(t, m.KEYS, wrong_key)
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-key",
            "The cheater's deal keys message carries a key k for a position with "
            "k*B != K[j], the key point of its shuffle2.",
            t,
        )
    )

    t = attack_table()

    def duplicate_point(body: dict[str, Any]) -> None:
        points = list(body["points"])
        points[3] = points[4]
        body["points"] = points

    rewrite_first(t, m.SHUFFLE1, duplicate_point)
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-shuffle-duplicate",
            "The cheater's pass-1 output repeats a point (a duplicated card): refused before "
            "its proof is even checked.",
            t,
        )
    )

    t = attack_table()

    def flip_proof(body: dict[str, Any]) -> None:
        proof = bytearray(body["proof"])
        proof[len(proof) // 2] ^= 1
        body["proof"] = bytes(proof)

    rewrite_first(t, m.SHUFFLE1, flip_proof)
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-shuffle-proof",
            "The cheater's pass-1 shuffle argument has one bit flipped (the message is signed "
            "again): the argument does not verify.",
            t,
        )
    )

    t = attack_table()

    def other_scalar(body: dict[str, Any]) -> None:
        cheat = t.peers[CHEAT]
        assert cheat.deck is not None and cheat.deck.secrets is not None
        other = grp.hash_to_scalar(b"another scalar")
        source = _pass_input(cheat, m.SHUFFLE1)
        body["points"] = [grp.mul(other, source[i]) for i in cheat.deck.secrets.permutation]

    rewrite_first(t, m.SHUFFLE1, other_scalar)
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-shuffle-scalar",
            "The cheater's pass-1 output is a permutation of its input under another scalar "
            "than the a of its A: the shuffle argument does not verify.",
            t,
        )
    )

    t = attack_table()

    def copy_cards(body: dict[str, Any]) -> None:
        cheat = t.peers[CHEAT]
        assert cheat.deck is not None and cheat.deck.secrets is not None
        secrets = cheat.deck.secrets
        source = _pass_input(cheat, m.SHUFFLE2)
        points = list(body["points"])
        for victim, target in ((0, 20), (2, 21), (4, 22)):  # the honest peer's first cards
            factor = grp.scalar_mul(secrets.scalar_inverse, secrets.keys[target])
            points[target] = grp.mul(factor, source[victim])
        body["points"] = points

    rewrite_first(t, m.SHUFFLE2, copy_cards)
    t.start()
    t.settle()
    assert t.watched.game is None and t.watched.keys == {}
    cases.append(
        case(
            "pass2-copy-attack",
            "The copy attack: the cheater's pass 2 writes in[j] * a^-1 * k[j'] at "
            "stock positions j' (so that they would open, in public, to the cards at j), key "
            "points unchanged. The re-keying proof fails at the first copied position; no key "
            "is ever released.",
            t,
        )
    )

    t = attack_table()
    rewrite_first(t, m.SEAT, lambda body: body.update(secret=bytes(32)))
    t.start()
    t.settle()
    cases.append(
        case(
            "bad-seat-secret",
            "The revealed seat secret does not open the hello's seat_commit.",
            t,
        )
    )

    # The cheater's messages after its hello are held back; its seat message is delivered by
    # hand, then a message whose prev is wrong.
    t = attack_table()
    t.tamper = lambda s, d, f: [] if s == CHEAT and message(f).seq >= 1 else [f]
    t.start()
    t.settle()
    cheat = t.peers[CHEAT]
    seat_frame = cheat.peers[cheat.me].accepted[1][1]
    t.deliver(HONEST, seat_frame)
    t.settle()
    t.deliver(HONEST, cheat.craft(m.KEYS, {"keys": [[0, bytes(32)]]}, seq=2, prev=bytes(32)))
    cases.append(
        case(
            "broken-chain",
            "A message whose p is not the SHA-256 of the sender's previous payload.",
            t,
        )
    )

    t = attack_table()
    t.tamper = lambda s, d, f: [] if s == CHEAT else [f]
    t.start()
    t.settle()
    cheat = t.peers[CHEAT]
    body = m.to_wire(message(cheat.peers[cheat.me].accepted[0][1]).body)
    body["config"] = dict(body["config"], timeout=31.0)
    t.deliver(HONEST, cheat.craft(m.HELLO, body, seq=0, prev=m.NO_PREVIOUS))
    cases.append(
        case(
            "disagreement",
            "A hello whose table settings differ (timeout 31 s instead of 30 s).",
            t,
        )
    )

    t = attack_table()

    def false_claim(body: dict[str, Any]) -> None:
        cheat = t.peers[CHEAT]
        g = cheat.game
        assert g is not None and cheat.deck is not None
        wanted = body["rank"] * 4 + g.trump
        mine = [
            p
            for p in range(len(g.face))
            if g.face[p] >= 0 and g.hands[cheat.my_seat] >> g.face[p] & 1 and g.face[p] != wanted
        ]
        body["card"] = [mine[0], cheat.deck.my_key(mine[0])]

    rewrite_first(t, m.CLAIM, false_claim)
    t.start()
    t.settle()
    cases.append(
        case(
            "false-claim",
            "In the first D3 round the cheater shows a card of its hand that is not the "
            "round's trump.",
            t,
        )
    )

    lying = None
    for seed in range(ATTACK_SEED, ATTACK_SEED + 200):
        lying = _lying_table(seed)
        if lying is None:
            continue
        lying.start()
        lying.play_out()
        verdict = lying.watched.verdict
        if verdict is not None and verdict.kind == v.FALSE_CLAIM and lying.watched.game:
            break
    else:  # pragma: no cover
        raise AssertionError("no seed where a hidden lowest trump is played")
    assert lying is not None
    cases.append(
        case(
            "false-denial",
            "D3 by selective disclosure: the cheater holds the round's trump and says 'none'. "
            "Nothing can be checked then; when it later plays that card from a position it "
            "held at its claim, it is named (false-claim), its claim and its move as evidence.",
            lying,
        )
    )

    t = attack_table()
    until_play(t)
    t.step()
    cheat = t.peers[CHEAT]
    t.inject(cheat.craft(m.KEYS, {"keys": []}))
    cases.append(case("empty-keys", "A keys message with no key.", t))

    t = attack_table()
    until_play(t)
    t.step()
    cheat = t.peers[CHEAT]
    t.inject(
        cheat.craft(
            m.VERDICT,
            {
                "kind": v.ILLEGAL_MOVE,
                "culprits": [t.peers[HONEST].me],
                "reason": "trust me",
                "evidence": [],
            },
        )
    )
    cases.append(
        case(
            "bogus-verdict",
            "The cheater stops the game mid-game with a verdict that proves nothing (v1's "
            "early audit, which harvested every seed): no key is released, and the sender of "
            "the verdict is named (left) and forfeits.",
            t,
        )
    )

    t = attack_table()
    until_play(t)
    t.step()
    t.emit(CHEAT, t.peers[CHEAT].leave("closed the window"))
    t.settle()
    cases.append(case("leave", "A peer leaves mid-game: verdict 'left' naming it; it forfeits.", t))

    t = attack_table(timeout=5.0)
    t.start(only=[HONEST])
    t.settle()
    t.steps.append({"tick": 4.0})
    t.steps.append({"tick": 5.5})
    t.emit(t.watch, t.watched.tick(5.5))
    cases.append(
        case(
            "timeout",
            "Only the honest peer's hello ever arrives; at t=4 s nothing happens, at t=5.5 s "
            "(timeout 5 s) the silent peer is named (seat -1: seats are not drawn yet, so "
            "there is no game to forfeit). With no game id yet, the honest peer signs its "
            "verdict for the table (g = the table id, s = 1).",
            t,
        )
    )

    t = attack_table(timeout=5.0)
    dropping = {"on": False}

    def withhold(source: int, target: int, frame: bytes) -> list[bytes]:
        if source == CHEAT and (dropping["on"] or message(frame).type == m.KEYS):
            dropping["on"] = True
            return []
        return [frame]

    t.tamper = withhold
    t.start()
    t.settle()
    t.tick(4.0)
    t.tick(5.5)
    cases.append(
        case(
            "withheld-keys",
            "The cheater never sends its keys for the deal: at t=5.5 s (timeout 5 s) the "
            "honest peer names it (timeout): it lost contact with it, which convicts nobody "
            "(PROTOCOL.md 15.4), so 'losers' is empty.",
            t,
        )
    )

    return cases
