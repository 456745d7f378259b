"""legal_moves(), its kinds, counting and uniform sampling (issue: huge move lists, M7, M10).

``count_legal_moves`` and ``random_move`` must agree with the full list without building it,
and every listed move must be playable (the validator and the generator agree).
"""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from moska_p2p.engine import PRESETS, IllegalMove, new_game, parse_move
from moska_p2p.engine.game import Game


def _random_state(preset: str, players: int, seed: int, steps: int) -> Game:
    g = new_game(preset, players=players, seed=seed)
    rng = random.Random(seed)
    for _ in range(steps):
        if g.is_over:
            break
        g.play(rng.choice(g.legal_moves()))
    return g


@settings(max_examples=60)
@given(
    preset=st.sampled_from(PRESETS),
    seed=st.integers(0, 10**6),
    steps=st.integers(0, 400),
)
def test_every_listed_move_is_playable_and_counts_agree(preset: str, seed: int, steps: int) -> None:
    players = 4 if preset == "durak-teams" else 2 + seed % 5
    g = _random_state(preset, players, seed, steps)
    moves = g.legal_moves()
    assert len(set(moves)) == len(moves), "a move is listed twice"
    assert g.count_legal_moves() == len(moves)
    for move in moves:
        trial = g.copy()
        trial.play(move)
        # The text form parses back to the same move (C6).
        assert parse_move(str(move)) == move
    by_kind = Counter(m.kind_name for m in moves)
    for kind, count in by_kind.items():
        assert len(g.legal_moves(kind)) == count
    if moves:
        rng = random.Random(seed)
        for _ in range(5):
            assert g.random_move(rng) in set(moves)


def test_unlisted_moves_are_refused_and_leave_the_game_unchanged() -> None:
    g = _random_state("moska", 4, 3, 30)
    legal = {str(m) for m in g.legal_moves()}
    before = g.state_hash()
    candidates = ["take", "pass", "attack deck", "kill 2C 3C", "attack 2C 2D", "exchange"]
    for text in candidates:
        if text not in legal:
            try:
                g.play(text)
            except IllegalMove:
                pass
            else:  # pragma: no cover - the assertion below reports it
                raise AssertionError(f"{text} was accepted but is not legal")
            assert g.state_hash() == before


def _big_opening(defender_cards: int) -> Game:
    """Turamoska (limit=hand): an attacker with 30 cards opens against a large hand (hands no
    deal gives, so set in the game's state by hand)."""
    g = new_game("turamoska", 4, seed=1)
    rng = random.Random(5)
    hand = rng.sample(range(52), 30)
    rest = [c for c in range(52) if c not in hand]
    g._state.hands[g.attacker] = sum(1 << c for c in hand)
    g._state.hands[g.defender] = sum(1 << c for c in rest[:defender_cards])
    return g


def test_count_of_a_huge_opening_matches_the_list() -> None:
    g = _big_opening(12)
    assert g.count_legal_moves() == len(g.legal_moves()) == 162164


def test_huge_opening_is_counted_and_sampled_without_listing() -> None:
    g = _big_opening(30)
    count = g.count_legal_moves()
    assert count > 10**6
    rng = random.Random(1)
    for _ in range(50):
        move = g.random_move(rng)
        g.copy().play(move)  # legal: the validator accepts it
    assert len(g.legal_moves("take")) == 0
    assert len(g.legal_moves("attack deck")) == 1


def test_random_move_is_uniform() -> None:
    """Sampling through the counting tables is uniform over the listed moves."""
    g = _big_opening(4)
    moves = g.legal_moves()
    rng = random.Random(7)
    draws = 200 * len(moves)
    counts = Counter(g.random_move(rng) for _ in range(draws))
    assert set(counts) == set(moves)
    for move in moves:
        assert 120 < counts[move] < 280, (str(move), counts[move])
