"""Inference about hidden hands: the weights move as designed, the
weighted sampler never deals a card where it cannot be, with equal weights it is the
uniform deal, and ISMCTS with it stays repeatable and private (RULES C5)."""

from __future__ import annotations

import ast
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moska_p2p.bots import inference
from moska_p2p.bots.inference import (
    FADE,
    FLOOR,
    KILL_CHEAPER,
    KILL_CHEAPER_TRUMP,
    PASS_RANK,
    PASS_TRUMP,
    TAKE_CHEAP,
    TAKE_TRUMP,
    WeightedDealer,
    beats,
    infer_weights,
)
from moska_p2p.bots.ismcts import IsmctsBot
from moska_p2p.bots.loader import load_bot
from moska_p2p.cards import cards_list
from moska_p2p.engine import (
    ATTACK,
    KILL,
    PASS,
    TAKE,
    Game,
    IllegalMove,
    Move,
    make_move,
    new_game,
)
from moska_p2p.engine.knowledge import DeterminizeError
from tests.bots.deal_checks import CASES, check_deal, players_for, random_moves


def _other_deal(a: Game, moves: list[Move], seat: int, rng: random.Random) -> Game | None:
    """A deal that differs from ``a``'s only in cards ``seat`` has never seen, replayed
    through the same moves (None if no such deal keeps every move legal and the public
    state the same)."""
    unknown = cards_list(a.unknown_to(seat))
    if len(unknown) < 2:
        return None
    for _ in range(50):
        deck = list(a.face)
        cards = list(unknown)
        while cards == unknown:
            rng.shuffle(cards)
        for card, new in zip(unknown, cards, strict=True):
            deck[a.pos_of[card]] = new
        b = new_game(a.rules.preset, a.n, deck=deck, dealer=a.dealer)
        try:
            for move in moves:
                b.play(move)
        except IllegalMove:
            continue
        if b.state_hash() == a.state_hash():
            return b
    return None


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    case=st.sampled_from(CASES),
    seed=st.integers(0, 10_000),
    count=st.integers(0, 120),
    skew=st.booleans(),
)
def test_the_weighted_sampler_never_deals_a_card_where_it_cannot_be(
    case: tuple[str, dict[str, Any]], seed: int, count: int, skew: bool
) -> None:
    preset, opts = case
    rng = random.Random(seed)
    real = new_game(preset, players_for(preset, seed), seed=seed, **opts)
    random_moves(real, count, rng)
    if real.to_act_seat < 0:
        return
    seat = rng.randrange(real.n)
    view = real.view(seat)
    weights = infer_weights(view)
    assert all(FLOOR <= w <= 1.0 for row in weights for w in row)  # weigh, never exclude
    if skew:  # extreme weights must not break the constraints either
        weights = [[rng.choice((FLOOR, 1.0)) for _ in range(52)] for _ in range(real.n)]
    dealer = WeightedDealer(view, weights)
    for _ in range(3):
        hands = dealer.deal(rng)
        check_deal(real, view, hands, view.determinize(rng, hands))


@pytest.mark.parametrize(("preset", "opts"), CASES)
def test_every_preset_deals_only_where_cards_can_be(preset: str, opts: dict[str, Any]) -> None:
    """The property above on every case for sure (hypothesis picks cases at random)."""
    checked = 0
    for seed in range(3):
        for count in (4, 30, 90):
            rng = random.Random(seed)
            real = new_game(preset, players_for(preset, seed), seed=seed, **opts)
            random_moves(real, count, rng)
            if real.to_act_seat < 0:
                continue
            for seat in range(real.n):
                view = real.view(seat)
                dealer = WeightedDealer(view)
                hands = dealer.deal(rng)
                check_deal(real, view, hands, view.determinize(rng, hands))
                checked += 1
    assert checked >= 10


def test_a_deal_that_breaks_the_view_is_refused() -> None:
    real = new_game("moska", 3, seed=4)
    view = real.view(0)
    unseen, counts = view.unseen()
    assert counts[0] == 0 and counts[1] == counts[2] == 6
    cards = cards_list(unseen)
    good = [0, sum(1 << c for c in cards[:6]), sum(1 << c for c in cards[6:12])]
    check_deal(real, view, good, view.determinize(random.Random(0), good))
    own = 1 << cards_list(real.hands[0])[0]
    for bad in (
        [0, good[1], good[1]],  # one card in two hands
        [0, good[1], good[2] >> 0 & ~(1 << cards[6])],  # a hand one short
        [0, good[1] ^ (1 << cards[0]) | own, good[2]],  # a card the seat holds itself
        [0, good[1]],  # not a mask per seat
    ):
        with pytest.raises(DeterminizeError):
            view.determinize(random.Random(0), bad)


def _first_bout(preset: str, players: int, moves: list[str]) -> tuple[Game, int]:
    """A game whose first bout is one attack card answered by ``moves`` (each ``kill`` kills
    it with the lowest killer in hand; None when the hands do not allow it), and the seed."""
    for seed in range(200):
        g = new_game(preset, players, seed=seed)
        attacker = g.to_act_seat
        hand = cards_list(g.hands[attacker])
        card = min(hand, key=lambda c: (c & 3 == g.trump, c >> 2))
        g.play(make_move(ATTACK, (card,)))
        ok = True
        for text in moves:
            if text == "kill":
                kills = [m for m in g.legal_moves() if m[0] == KILL]
                if not kills:
                    ok = False
                    break
                g.play(max(kills, key=lambda m: m[1][1] & 3 == g.trump))  # a trump if any
            else:
                g.play(text)
        if ok:
            return g, seed
    raise AssertionError("no deal fits")


def test_after_a_take_the_cards_that_would_have_killed_are_less_likely() -> None:
    g, _ = _first_bout("durak", 2, ["take"])
    (s0, (_, (attack,))), (taker, (kind, _)) = g.history
    assert kind == TAKE and taker != s0
    view = g.view(s0)
    weights = infer_weights(view)[taker]
    trump = g.trump
    # One live card, then the bout ended: the take's factor, faded once (a refill).
    for c in range(52):
        if beats(c, attack, trump, False):
            base = TAKE_TRUMP if c & 3 == trump else TAKE_CHEAP
            assert weights[c] == pytest.approx(1.0 - (1.0 - base) * FADE)
        else:
            assert weights[c] == 1.0
    # ... and the sampler deals the taker fewer of them than the uniform deal does.
    unseen, _ = view.unseen()
    killers = sum(1 << c for c in range(52) if beats(c, attack, trump, False)) & unseen
    assert killers
    rng = random.Random(1)
    weighted = WeightedDealer(view)
    uniform = WeightedDealer(view, [[1.0] * 52 for _ in range(2)])
    n = 1500
    w_count = sum((weighted.deal(rng)[taker] & killers).bit_count() for _ in range(n))
    u_count = sum((uniform.deal(rng)[taker] & killers).bit_count() for _ in range(n))
    assert w_count < 0.9 * u_count


def test_a_pass_and_a_dear_kill_weigh_what_they_reveal() -> None:
    g, _ = _first_bout("durak", 2, ["kill", "pass"])
    (s0, (_, (attack,))), (defender, (_, (_, killer))), (passer, (kind, _)) = g.history
    assert kind == PASS and passer == s0
    trump = g.trump
    view = g.view(defender)
    weights = infer_weights(view)
    ranks = {attack >> 2, killer >> 2}
    for c in range(52):  # the passer could have thrown in either rank (D4)
        if c >> 2 in ranks:
            expected = PASS_TRUMP if c & 3 == trump else PASS_RANK
            assert weights[passer][c] == pytest.approx(expected)
    cheaper = [
        c
        for c in range(52)
        if c != killer
        and beats(c, attack, trump, False)
        and (c >> 2) + 13 * (c & 3 == trump) < (killer >> 2) + 13 * (killer & 3 == trump)
    ]
    for c in cheaper:  # a card that killed as well and cost less: probably not held
        factor = KILL_CHEAPER_TRUMP if killer & 3 == trump and c & 3 != trump else KILL_CHEAPER
        assert weights[defender][c] == pytest.approx(factor)
    assert all(weights[defender][c] == 1.0 for c in range(52) if c not in cheaper)


def test_with_equal_weights_the_sampler_is_the_uniform_deal() -> None:
    """Chi-square of where two unseen cards go (hand 1, hand 2 or the stock, nine cells)
    against the exact uniform probabilities, for the weighted sampler with all weights
    equal and for ``View.determinize``: both are the uniform deal."""
    real = new_game("moska", 3, seed=9)
    view = real.view(0)
    unseen, counts = view.unseen()
    u = unseen.bit_count()
    places = [counts[1], counts[2], u - counts[1] - counts[2]]
    a, b = cards_list(unseen)[:2]
    expected = {
        (i, j): places[i] * (places[j] - (i == j)) / (u * (u - 1))
        for i in range(3)
        for j in range(3)
    }

    def where(g: Game, card: int) -> int:
        for s in (1, 2):
            if g.hands[s] >> card & 1:
                return s - 1
        return 2

    n = 3000
    flat = WeightedDealer(view, [[1.0] * 52 for _ in range(3)])
    for sample in (flat.determinize, view.determinize):
        rng = random.Random(5)
        seen: Counter[tuple[int, int]] = Counter()
        for _ in range(n):
            g = sample(rng)
            seen[where(g, a), where(g, b)] += 1
        chi2 = sum((seen[cell] - n * p) ** 2 / (n * p) for cell, p in expected.items())
        assert chi2 < 26.12  # 8 degrees of freedom, p = 0.001


def test_the_bot_with_inference_is_repeatable() -> None:
    def moves(seed: int) -> list[str]:
        g = new_game("moska", 3, seed=2)
        bot = IsmctsBot(seed=seed, iterations=20, infer="on")
        out = []
        for _ in range(12):
            if g.is_over:
                break
            move = bot.choose(g.view(g.to_act_seat), g.legal_moves())
            out.append(str(move))
            g.play(move)
        return out

    assert moves(7) == moves(7)


@pytest.mark.parametrize(("preset", "players"), [("moska", 4), ("durak", 3), ("mustamaija", 3)])
def test_the_bot_with_inference_reads_nothing_outside_its_view(preset: str, players: int) -> None:
    """Two deals that differ only in cards hidden from the seat to act give the same move."""
    compared = 0
    for seed in range(8):
        rng = random.Random(seed)
        a = new_game(preset, players, seed=seed)
        moves = random_moves(a, 6 + 3 * seed, rng)
        seat = a.to_act_seat
        if seat < 0 or a.count_legal_moves() < 2:
            continue
        b = _other_deal(a, moves, seat, rng)
        if b is None:
            continue
        assert b.hands != a.hands
        move_a = IsmctsBot(seed=1, iterations=25, infer="on").choose(a.view(seat), a.legal_moves())
        move_b = IsmctsBot(seed=1, iterations=25, infer="on").choose(b.view(seat), b.legal_moves())
        assert move_a == move_b
        compared += 1
    assert compared >= 3


def test_the_option_is_parsed_and_checked() -> None:
    bot = load_bot("ismcts:infer=on,iterations=5")
    assert isinstance(bot, IsmctsBot) and bot.infer
    assert not IsmctsBot().infer  # off until measured
    with pytest.raises(ValueError, match="infer"):
        IsmctsBot(infer="maybe")


def test_inference_imports_only_the_public_engine() -> None:
    """Like the ISMCTS bot, a model for bots outside the package (tests/bots/test_ismcts.py)."""
    tree = ast.parse(Path(inference.__file__).read_text())
    allowed = {"moska_p2p.engine", "moska_p2p.cards"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            assert module in allowed or module.split(".")[0] in sys.stdlib_module_names, module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] in sys.stdlib_module_names, alias.name
