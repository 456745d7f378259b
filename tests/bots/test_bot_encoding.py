"""Stable move ids and the fixed-size view encoding for learning bots
(moska_p2p.bots.encoding)."""

from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moska_p2p.bots.encoding import (
    DENSE_MOVE_IDS,
    MULTI_ATTACK_BASE,
    VIEW_DECISIONS,
    VIEW_LAYOUT,
    VIEW_OFFSETS,
    VIEW_SIZE,
    encode_view,
    move_from_id,
    move_id,
)
from moska_p2p.cards import cards_list
from moska_p2p.engine import PRESETS, Game, Move, View, make_move, new_game, parse_move
from moska_p2p.engine.moves import KIND_NAMES

# The documented formula, pinned: these ids may never change.
PINNED = [
    ("attack deck", 0),
    ("take", 1),
    ("pass", 2),
    ("exchange", 3),
    ("deck-kill", 4),
    ("attack 2C", 5),
    ("attack AS", 56),
    ("kill 2C 2D", 58),
    ("kill 3H 7H", 57 + 6 * 52 + 22),
    ("self 8S 9S", 2761 + 27 * 52 + 31),
    ("beg 3H 9H", 5465 + 6 * 52 + 30),
    ("transfer 7C", 8169 + 20),
    ("transfer show 7D", 8221 + 21),
    ("attack 2C 2D", 8273 + 0b11),
    ("attack 2D 2S 7C 7H 7S", 8273 + (1 << 1) + (1 << 3) + (1 << 20) + (1 << 22) + (1 << 23)),
]


@pytest.mark.parametrize(("text", "ident"), PINNED)
def test_move_ids_follow_the_documented_formula(text: str, ident: int) -> None:
    assert move_id(parse_move(text)) == ident
    assert move_id(text) == ident
    assert str(move_from_id(ident)) == text


def _games(preset: str, count: int) -> list[tuple[Game, random.Random]]:
    games = []
    for seed in range(count):
        players = 4 if preset == "durak-teams" else 2 + seed % 5
        games.append((new_game(preset, players=players, seed=seed), random.Random(seed)))
    return games


@pytest.mark.parametrize("preset", PRESETS)
def test_every_legal_move_met_in_random_games_round_trips(preset: str) -> None:
    seen: dict[int, Move] = {}
    kinds: set[int] = set()
    for game, rng in _games(preset, 6):
        while not game.is_over:
            moves = game.legal_moves()
            ids = [move_id(move) for move in moves]
            assert len(set(ids)) == len(moves), "two legal moves share an id"
            for move, ident in zip(moves, ids, strict=True):
                assert move_from_id(ident) == move
                assert seen.setdefault(ident, move) == move
                kinds.add(move.kind)
            game.play(rng.choice(moves))
    assert kinds  # the loop saw moves


_cards = st.integers(0, 51)
_pairs = st.tuples(_cards, _cards).filter(lambda p: p[0] != p[1])
_moves = st.one_of(
    st.sampled_from(["attack deck", "take", "pass", "exchange", "deck-kill"]).map(parse_move),
    st.sets(_cards, min_size=1, max_size=52).map(lambda cs: make_move(0, tuple(cs))),
    st.tuples(st.sampled_from([2, 6, 10]), _pairs).map(lambda kp: make_move(kp[0], kp[1])),
    st.tuples(st.sampled_from([8, 9]), _cards).map(lambda kc: make_move(kc[0], (kc[1],))),
)


@given(_moves)
def test_any_well_formed_move_round_trips(move: Move) -> None:
    ident = move_id(move)
    assert 0 <= ident < 2**53  # exact as a JSON number / JavaScript double
    assert (ident < DENSE_MOVE_IDS) == (move.kind != 0 or len(move.cards) == 1)
    assert move_from_id(ident) == move
    assert move_id(str(move)) == ident


@given(st.integers(0, DENSE_MOVE_IDS + 5000))
def test_ids_name_one_move_or_are_refused(ident: int) -> None:
    try:
        move = move_from_id(ident)
    except ValueError:
        return
    assert move_id(move) == ident


@pytest.mark.parametrize(
    "bad", [-1, MULTI_ATTACK_BASE + 1, MULTI_ATTACK_BASE + (1 << 52), 57 + 6 * 52 + 6, True, 1.0]
)
def test_ids_that_name_no_move_are_refused(bad: object) -> None:
    with pytest.raises(ValueError):
        move_from_id(bad)  # type: ignore[arg-type]


def test_every_kind_has_ids() -> None:
    for kind in range(len(KIND_NAMES)):
        cards: tuple[int, ...] = ()
        if kind in (0, 8, 9):
            cards = (7,)
        elif kind in (2, 6, 10):
            cards = (7, 11)
        assert move_from_id(move_id(make_move(kind, cards))) == (kind, cards)


# ---------------------------------------------------------------------------- encode_view


def test_layout_is_fixed() -> None:
    assert VIEW_SIZE == sum(size for _, size in VIEW_LAYOUT) == 622
    assert VIEW_OFFSETS["hand"] == 0 and VIEW_OFFSETS["room"] == VIEW_SIZE - 1


def _block(vector: list[float], name: str, size: int = 52) -> list[float]:
    start = VIEW_OFFSETS[name]
    return vector[start : start + size]


def _cards_of(block: list[float]) -> list[int]:
    return [i for i, x in enumerate(block) if x]


def _check(view: View) -> None:
    vector = encode_view(view)
    assert len(vector) == VIEW_SIZE
    assert all(0.0 <= x <= 1.0 for x in vector)
    n, seat = view.players, view.seat
    assert _cards_of(_block(vector, "hand")) == cards_list(view.hand_mask)
    assert _cards_of(_block(vector, "discarded")) == cards_list(view.discard_mask)
    live = sorted(a for a, k in view.table_codes if k < 0)
    assert _cards_of(_block(vector, "live")) == live
    assert _cards_of(_block(vector, "killers")) == sorted(k for _, k in view.table_codes if k >= 0)
    for step in range(1, 6):
        known = _cards_of(_block(vector, f"known_left_{step}"))
        expected = cards_list(view.known_mask[(seat + step) % n]) if step < n else []
        assert known == expected
    trump = _block(vector, "trump_suit", 4)
    assert trump == [1.0 if s == view.trump_suit else 0.0 for s in range(4)]
    sizes = _block(vector, "hand_sizes", 6)
    assert [round(x * 52) for x in sizes[:n]] == [view.hand_sizes[(seat + i) % n] for i in range(n)]
    assert _block(vector, "present", 6) == [1.0] * n + [0.0] * (6 - n)
    decision = _block(vector, "decision", len(VIEW_DECISIONS))
    assert decision[VIEW_DECISIONS.index(view.decision)] == 1.0 and sum(decision) == 1.0
    attacker = _block(vector, "attacker", 6)
    assert attacker.index(1.0) == (view.attacker - seat) % n
    to_act = _block(vector, "to_act", 6)
    if view.to_act is None:
        assert sum(to_act) == 0
    else:
        assert to_act.index(1.0) == (view.to_act - seat) % n


@pytest.mark.parametrize("preset", PRESETS)
def test_encode_view_has_a_fixed_size_and_values_in_0_1(preset: str) -> None:
    for game, rng in _games(preset, 3):
        step = 0
        while True:
            if game.is_over or step % 7 == 0:
                for seat in range(game.n):
                    _check(game.view(seat))
            else:
                _check(game.view(game.to_act_seat))
            if game.is_over:
                break
            game.play(rng.choice(game.legal_moves()))
            step += 1


def test_cards_a_seat_picked_up_are_known_to_the_others() -> None:
    # Durak D3: cards taken from the table are public; the taker's left neighbour sees them
    # in its block for the seat two places to its left (at a table of three).
    for seed in range(20):
        game = new_game("durak", players=3, seed=seed)
        rng = random.Random(seed)
        while not game.is_over:
            if game.table and "take" in [str(m) for m in game.legal_moves()]:
                taker = game.to_act_seat
                game.play("take")
                on_table: set[int] = set()
                while game.table and not game.is_over:  # the giving round (D6)
                    on_table = {c for pair in game.view(taker).table_codes for c in pair if c >= 0}
                    game.play(rng.choice(game.legal_moves()))
                if game.is_over:
                    break
                viewer = (taker + 1) % 3
                vector = encode_view(game.view(viewer))
                assert on_table
                assert on_table <= set(_cards_of(_block(vector, "known_left_2")))
                return
            game.play(rng.choice(game.legal_moves()))
    pytest.fail("no take met")
