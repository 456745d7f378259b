"""Random games of every preset end, and cards are conserved at every step."""

from __future__ import annotations

import random

import pytest

from moska_p2p.engine import PRESETS, new_game


def _cards_in_play(g) -> int:  # type: ignore[no-untyped-def]
    on_table = len(g.tab_a) + sum(1 for k in g.tab_k if k >= 0)
    return sum(g.hand_sizes()) + g.stock_size + g.discard_size + on_table


@pytest.mark.parametrize("preset", PRESETS)
def test_random_games_end_and_conserve_cards(preset: str) -> None:
    rng = random.Random(preset)
    for seed in range(20):
        players = 4 if preset == "durak-teams" else 2 + seed % 5
        g = new_game(preset, players=players, seed=seed)
        size = g.rules.pack_size
        for _ in range(5000):
            if g.is_over:
                break
            moves = g.legal_moves()
            assert moves, f"{preset} seed {seed}: no legal move for a {g.decision}"
            g.play(rng.choice(moves))
            assert _cards_in_play(g) == size
        assert g.is_over, f"{preset} seed {seed} did not end"
