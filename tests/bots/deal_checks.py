"""Checks shared by the tests of the weighted deals (inference, beliefs): every hard
constraint a determinization must keep, and random positions of every preset to check it on."""

from __future__ import annotations

import random
from typing import Any

from moska_p2p.engine import PRESETS, Game, Move, View

# As in tests/engine/test_view_privacy.py: every preset at its defaults, and options that
# reach what the defaults never do (M22's turned card, M23's face-up stock card, M20/M21).
CASES: list[tuple[str, dict[str, Any]]] = [(preset, {}) for preset in PRESETS] + [
    ("moska", {"deck_kill": "on", "self_execution": "on-with-draw"}),
    ("moska", {"expose_second_last": "on", "limit": "hand"}),
    ("taraki-mm", {"deck_kill": "on", "expose_second_last": "on"}),
    ("perevodnoy", {"transfer_show_trump": "on"}),
]


def random_moves(g: Game, count: int, rng: random.Random) -> list[Move]:
    moves: list[Move] = []
    while len(moves) < count and not g.is_over:
        moves.append(g.play(g.random_move(rng)))
    return moves


def players_for(preset: str, seed: int) -> int:
    return 4 if preset == "durak-teams" else 2 + seed % 5


def check_deal(real: Game, view: View, hands: list[int], g: Game) -> None:
    """Every hard constraint of a determinization of ``view`` (taken of ``real``)."""
    unseen, counts = view.unseen()
    dealt = 0
    for s, mask in enumerate(hands):
        assert mask & ~unseen == 0  # only cards the seat cannot place
        assert mask & dealt == 0  # each card to one hand
        assert mask.bit_count() == counts[s]  # hand sizes exact
        dealt |= mask
    assert hands[view.seat] == 0
    me = view.seat
    assert g.hands[me] == real.hands[me]
    for s in range(real.n):
        assert g.hand_size(s) == real.hand_size(s)
        assert g.hands[s] & view.known_mask[s] == view.known_mask[s]  # shown cards stay
        if s != me:
            assert g.hands[s] == view.known_mask[s] | hands[s]
            for t in range(real.n):  # no card known to be in another hand
                if t != s:
                    assert g.hands[s] & view.known_mask[t] == 0
    table = 0
    for a, k in view.table_codes:
        table |= 1 << a | (1 << k if k >= 0 else 0)
    hand_cards = 0
    for mask in g.hands:
        assert mask & hand_cards == 0
        hand_cards |= mask
    assert hand_cards & (table | view.discard_mask) == 0
    for place, card in view.stock_known:  # the face-up stock cards (indicator, M23)
        assert g.face[g.stock[place]] == card
        assert not hand_cards >> card & 1
    # Every card of the pack placed exactly once, and the public state is the real one's.
    assert sorted(g.face) == sorted(real.face)
    assert g.state_hash() == real.state_hash()
