"""``Game.play_unchecked`` reaches exactly the state ``play`` reaches (the search API)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from moska_p2p.engine import PRESETS, new_game

# Every preset at its defaults, plus the option values that open move kinds the defaults
# never generate (deck-kill M22, self execution M20/M21, exposed stock M23, D11 by showing).
CASES: list[tuple[str, dict[str, Any]]] = [(preset, {}) for preset in PRESETS] + [
    ("moska", {"deck_kill": "on", "self_execution": "on-with-draw"}),
    ("moska", {"expose_second_last": "on", "limit": "hand", "trump_exchange": "never"}),
    ("taraki-mm", {"deck_kill": "on", "throw_in_ranks": "attack-only"}),
    ("perevodnoy", {"transfer_show_trump": "on", "first_bout_limit": "5"}),
]


@pytest.mark.parametrize(("preset", "options"), CASES)
def test_play_unchecked_matches_play(preset: str, options: dict[str, Any]) -> None:
    for seed in range(12):
        players = 4 if preset == "durak-teams" else 2 + seed % 5
        checked = new_game(preset, players=players, seed=seed, **options)
        fast = new_game(preset, players=players, seed=seed, **options)
        rng = random.Random(seed)
        while not checked.is_over:
            # Alternate the two sources search takes moves from.
            if rng.random() < 0.5:
                move = rng.choice(checked.legal_moves())
            else:
                move = checked.random_move(rng)
            checked.play(move)
            fast.play_unchecked(move)
            assert fast.state_hash() == checked.state_hash()
            assert fast.hands == checked.hands
            assert fast.stock == checked.stock
            assert fast.history == checked.history
        assert fast.is_over
        assert fast.loser_seats == checked.loser_seats
