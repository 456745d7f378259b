"""Beliefs about the hidden hands: the laying moves weigh what they should, every weight
stays a soft one, every deal drawn from the beliefs keeps the view's hard knowledge, and the
search uses them behind its option."""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moska_p2p.bots import beliefs as beliefs_module
from moska_p2p.bots.beliefs import DEFAULT_STRENGTH, Beliefs, belief_weights
from moska_p2p.bots.inference import (
    FLOOR,
    GROUP_REST,
    GROUP_REST_TRUMP,
    OPEN_LOWER,
    infer_weights,
)
from moska_p2p.bots.ismcts import IsmctsBot
from moska_p2p.bots.loader import load_bot
from moska_p2p.cards import cards_list
from moska_p2p.engine import ATTACK, Game, make_move, new_game
from tests.bots.deal_checks import CASES, check_deal, players_for, random_moves


def _opening(preset: str, players: int, size: int) -> Game:
    """A game whose first move is an opening of ``size`` plain cards of one rank, not the
    opener's lowest rank (so that lower plain cards are in play)."""
    for seed in range(400):
        g = new_game(preset, players, seed=seed)
        hand = cards_list(g.hands[g.to_act_seat])
        plain = [c for c in hand if c & 3 != g.trump]
        for rank in sorted({c >> 2 for c in plain}):
            cards = tuple(c for c in plain if c >> 2 == rank)[:size]
            if len(cards) != size or rank == min(c >> 2 for c in plain):
                continue
            move = make_move(ATTACK, cards)
            if move in g.legal_moves():
                g.play(move)
                return g
    raise AssertionError("no deal fits")


@pytest.mark.parametrize(("preset", "size"), [("durak", 1), ("moska", 2)])
def test_an_opening_weighs_the_rest_of_its_rank_and_the_cheaper_plain_cards(
    preset: str, size: int
) -> None:
    """M5, M6, D4: an opener lays its cheapest, and a rank's cards together."""
    g = _opening(preset, 3, size)
    ((opener, (_, laid)),) = g.history
    trump = g.trump
    low = min(c >> 2 for c in laid)
    rank = laid[0] >> 2
    view = g.view((opener + 1) % 3)
    plain_table = infer_weights(view)[opener]
    weights = infer_weights(view, extended=True)[opener]
    assert plain_table == [1.0] * 52  # an attack alone tells the inference nothing
    for c in range(52):
        if c in laid:
            continue
        if c >> 2 == rank:
            assert weights[c] == (GROUP_REST_TRUMP if c & 3 == trump else GROUP_REST)
        elif c & 3 != trump and c >> 2 < low:
            assert weights[c] == OPEN_LOWER
        else:
            assert weights[c] == 1.0
    # The other seats laid nothing: nothing is read about them.
    for s in range(3):
        if s != opener:
            assert infer_weights(view, extended=True)[s] == [1.0] * 52


def test_mustamaija_lays_by_suit_and_reads_nothing_from_ranks() -> None:
    """MM3: attacks go by suit, so a laid rank says nothing of the rest of it."""
    g = new_game("mustamaija", 3, seed=5)
    rng = random.Random(5)
    random_moves(g, 12, rng)
    view = g.view(0)
    assert infer_weights(view, extended=True) == infer_weights(view)


def test_the_beliefs_sharpen_the_table_and_never_exclude_a_card() -> None:
    g = _opening("moska", 4, 2)
    view = g.view(1)
    table = infer_weights(view, extended=True)
    sharp = belief_weights(view)
    for row, out in zip(table, sharp, strict=True):
        for w, b in zip(row, out, strict=True):
            assert b == pytest.approx(max(FLOOR, w**DEFAULT_STRENGTH))
            assert FLOOR <= b <= 1.0
    assert any(
        b < w for row, out in zip(table, sharp, strict=True) for w, b in zip(row, out, strict=True)
    )
    assert belief_weights(view, strength=1.0) == [[max(FLOOR, w) for w in r] for r in table]
    with pytest.raises(ValueError, match="strength"):
        belief_weights(view, strength=0)


def test_the_beliefs_deal_the_opener_fewer_of_its_rank() -> None:
    """The sampler follows the weights: the opener's rank turns up less in its hand."""
    g = _opening("durak", 2, 1)
    ((opener, (_, laid)),) = g.history
    view = g.view(1 - opener)
    unseen, _ = view.unseen()
    rest = sum(1 << c for c in range(52) if c >> 2 == laid[0] >> 2 and c not in laid) & unseen
    assert rest
    rng = random.Random(3)
    believing = Beliefs(view)
    n = 1500
    believed = sum((believing.deal(rng)[opener] & rest).bit_count() for _ in range(n))
    uniform = sum((view.determinize(rng).hands[opener] & rest).bit_count() for _ in range(n))
    assert believed < 0.85 * uniform


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), seed=st.integers(0, 10_000), count=st.integers(0, 120))
def test_every_deal_from_the_beliefs_keeps_the_hard_knowledge(
    case: tuple[str, dict[str, Any]], seed: int, count: int
) -> None:
    """Cards shown, picked up or exchanged stay where they are known to be, hand sizes are
    exact, only unseen cards are dealt, and the public state is the real one's."""
    preset, opts = case
    rng = random.Random(seed)
    real = new_game(preset, players_for(preset, seed), seed=seed, **opts)
    random_moves(real, count, rng)
    if real.to_act_seat < 0:
        return
    view = real.view(rng.randrange(real.n))
    believing = Beliefs(view)
    assert all(FLOOR <= w <= 1.0 for row in believing.weights for w in row)
    for _ in range(3):
        hands = believing.deal(rng)
        check_deal(real, view, hands, view.determinize(rng, hands))
    game = believing.determinize(rng)
    assert game.state_hash() == real.state_hash()


def test_the_search_deals_from_the_beliefs_behind_its_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    g = new_game("moska", 4, seed=2)
    rng = random.Random(2)
    random_moves(g, 10, rng)
    while len(g.legal_moves()) < 2:
        random_moves(g, 1, rng)
    seat = g.to_act_seat
    legal = g.legal_moves()
    dealt: list[int] = []
    real = Beliefs.determinize

    def counting(self: Beliefs, rng: random.Random) -> Game:
        dealt.append(1)
        return real(self, rng)

    monkeypatch.setattr(beliefs_module.Beliefs, "determinize", counting)
    IsmctsBot(seed=1, iterations=20).choose(g.view(seat), legal)
    assert not dealt
    bot = IsmctsBot(seed=1, iterations=20, beliefs=1)
    first = bot.choose(g.view(seat), legal)
    assert len(dealt) == 20
    assert IsmctsBot(seed=1, iterations=20, beliefs=1).choose(g.view(seat), legal) == first


def test_the_option_is_parsed_and_checked() -> None:
    bot = load_bot("ismcts:beliefs=1,iterations=5", seed=1)
    assert isinstance(bot, IsmctsBot) and bot.beliefs
    assert not IsmctsBot(beliefs="off").beliefs
    with pytest.raises(ValueError, match="beliefs must be 1 or 0"):
        IsmctsBot(beliefs=2)
    assert IsmctsBot(beliefs=1, belief_strength=1).belief_strength == 1.0
    with pytest.raises(ValueError, match="belief_strength must be positive"):
        IsmctsBot(beliefs=1, belief_strength=0)
