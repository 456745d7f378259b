"""Kaavi Moska (preset ``kaavi``): RULES.md K1-K5 (seed 001, "Kaavin moska").

Scenarios are stacked with :func:`stack_deck`. A Kaavi deal has no indicator (K1): the first
name in ``stock`` is ``deck[6n]``, the card turned as the trump after the twos round (K2), and
the following names are the cards drawn next, in order.
"""

from __future__ import annotations

import random
from itertools import combinations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from moska_p2p.engine import Game, IllegalMove, OptionError, new_game
from moska_p2p.engine.scenario import stack_deck

RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUITS = ("C", "D", "H", "S")
PACK = [r + s for r in RANKS for s in SUITS]
MOVE_CAP = 5000


# ----------------------------------------------------------------------------- helpers


def _game(
    players: int, hands: dict[int, str], *, dealer: int = 0, stock: tuple[str, ...] = ()
) -> Game:
    deck = stack_deck("kaavi", players, hands, dealer=dealer, stock=list(stock))
    return new_game("kaavi", players, deck=deck, dealer=dealer)


def _moves(g: Game, kind: str | None = None) -> set[str]:
    return {str(m) for m in g.legal_moves(kind)}


def _state(g: Game) -> tuple[object, ...]:
    """Everything a refused move must leave unchanged."""
    return (
        g.to_act_seat,
        g.decision,
        g.table,
        [g.hand(s) for s in range(g.n)],
        g.stock_size,
        g.trump_card,
        g.discard_size,
        g.bout_count,
        [str(m) for m in g.legal_moves()],
        len(g.history),
    )


def _refused(g: Game, move: str, match: str | None = None) -> None:
    before = _state(g)
    with pytest.raises(IllegalMove, match=match):
        g.play(move)
    assert _state(g) == before


def _beats(a: str, k: str, trump: str) -> bool:
    """C3, computed here independently of the engine."""
    ra, sa = RANKS.index(a[:-1]), a[-1]
    rk, sk = RANKS.index(k[:-1]), k[-1]
    return (sa == sk and rk > ra) or (sk == trump and sa != trump)


def _attack(*groups: str) -> str:
    """``attack`` text of the given card groups (twos first: they sort lowest, C6)."""
    return "attack " + " ".join(g for g in groups if g)


def _on_table(g: Game) -> int:
    return sum(1 + (k is not None) for _, k in g.table)


# A 4-player Kaavi deal, dealer 0: the dealer's right is seat 3, the twos round asks 3, 1, 2.
# After the round the trump is 10H (hearts); the dealer holds 2H, the two of trumps.
BASE_HANDS = {
    0: "2H 3S 7C 9D QH KS",
    1: "2D 3C 4C 5C 6C 7D",
    2: "3D 4D 5D 6D 8C 9C",
    3: "2C 2S 4S 5S 7S 8S",
}
BASE_STOCK = ("10H", "QC", "JD", "JS", "KH", "AH", "AS")


def _base() -> Game:
    return _game(4, BASE_HANDS, stock=BASE_STOCK)


def _base_after_twos() -> Game:
    """Seat 3 lays 2C 2S, seat 1 lays 2D, seat 2 passes; the dealer now defends (K2)."""
    g = _base()
    g.play("attack 2C 2S")
    g.play("attack 2D")
    g.play("pass")
    return g


# A 2-player deal, dealer 0 (seat 1 is both its right and its left); trump 10S after K2.
S2_HANDS = {0: "2H 3C 4D 8S 9C JD", 1: "2C 2D 5H 6C 6S KD"}
S2_STOCK = ("10S", "AC", "AD", "2S", "6H", "QH", "9H")


def _s2_opening_against_dealer() -> Game:
    """Seat 1 passes the twos, the dealer attacks 4D, seat 1 kills it and attacks the dealer."""
    g = _game(2, S2_HANDS, stock=S2_STOCK)
    g.play("pass")  # K1: the twos round
    g.play("attack 4D")  # K2: nobody laid a two, the dealer opens; it draws AC (M8)
    g.play("kill 4D KD")
    g.play("pass")  # the dealer throws nothing in: beaten off, seat 1 draws AD (M11)
    assert (g.to_act_seat, g.decision, g.defender) == (1, "open", 0)
    assert g.hand(1) == ["2C", "2D", "5H", "6C", "6S", "AD"]
    return g


# ----------------------------------------------------------------------------- K1


def test_k1_no_trump_at_deal_dealers_right_opens_twos_round() -> None:
    g = _base()
    assert g.trump_card is None
    assert (g.to_act_seat, g.decision) == (3, "twos")
    assert (g.attacker, g.defender) == (3, 0)
    assert g.stock_size == 52 - 24
    assert _moves(g) == {"attack 2C", "attack 2S", "attack 2C 2S", "pass"}


def test_k1_twos_round_order_principal_then_clockwise_from_dealers_left() -> None:
    """K1, C7: 6 players, dealer 2: asked 1 (its right), then 3, 4, 5, 0; never the dealer."""
    hands = {
        0: "3C 4C 5C 6C 7C 8C",
        1: "2C 3D 4D 5D 6D 7D",
        2: "2D 3H 4H 5H 6H 7H",
        3: "3S 4S 5S 6S 7S 8S",
        4: "2H 8D 9C 9D 9H 9S",
        5: "10C 10D 10H 10S JC JD",
    }
    g = _game(6, hands, dealer=2, stock=("KC",))
    asked = []
    while g.decision == "twos":
        asked.append(g.to_act_seat)
        g.play("pass")
    assert asked == [1, 3, 4, 5, 0]
    # K2: nobody laid a two, so the dealer attacks its left in an ordinary first bout.
    assert g.trump_card == "KC"
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (2, "open", 2, 3)


def test_k1_seat_without_twos_must_still_answer_pass() -> None:
    """K1, C5: seat 2 holds no two; it is asked and can only pass."""
    g = _base()
    g.play("pass")
    g.play("pass")
    assert (g.to_act_seat, g.decision) == (2, "twos")
    assert _moves(g) == {"pass"}


def test_k1_twos_round_takes_only_twos() -> None:
    g = _base()
    _refused(g, "attack 4S", "only twos")
    _refused(g, "attack 2C 4S", "only twos")
    _refused(g, "attack 2D")  # seat 3 does not hold 2D
    _refused(g, "attack deck")
    _refused(g, "kill 2C 4S")


def test_k1_nobody_draws_during_twos_round() -> None:
    g = _base()
    g.play("attack 2C 2S")
    assert g.hand(3) == ["4S", "5S", "7S", "8S"]
    assert g.stock_size == 28
    assert g.trump_card is None
    assert g.table == [("2C", None), ("2S", None)]
    assert (g.to_act_seat, g.decision) == (1, "twos")
    g.play("attack 2D")
    assert g.hand(1) == ["3C", "4C", "5C", "6C", "7D"]
    assert g.stock_size == 28
    assert g.trump_card is None
    assert (g.to_act_seat, g.decision) == (2, "twos")


def test_k1_stacked_deal_has_no_indicator_deck_6n_tops_the_stock() -> None:
    """K1, C4: a plain deck, canonical order, 4 players: deck[24] = 8C becomes the trump."""
    g = new_game("kaavi", 4, deck=PACK, dealer=0)
    # C4: dealt one at a time clockwise from the dealer's left; no card is set aside.
    assert g.hand(1) == ["2C", "3C", "4C", "5C", "6C", "7C"]
    assert g.hand(0) == ["2S", "3S", "4S", "5S", "6S", "7S"]
    assert g.stock_size == 28
    assert g.trump_card is None
    for _ in range(3):
        g.play("pass")
    assert g.trump_card == "8C"
    assert g.stock_size == 28  # K2: the indicator goes under the stock and still counts
    # M7 opening by the dealer: K3 does not apply when the dealer attacks (no "2S 3S").
    assert _moves(g) == {f"attack {c}S" for c in "234567"} | {"attack deck"}


def test_k1_stack_deck_refuses_an_indicator() -> None:
    with pytest.raises(ValueError, match="no trump indicator"):
        stack_deck("kaavi", 4, {}, indicator="4D")


def test_k_other_option_values_refused() -> None:
    """RULES K: Moska with options at their defaults; other option values are refused."""
    with pytest.raises(OptionError):
        new_game("kaavi", 4, seed=1, limit="hand")
    with pytest.raises(OptionError):
        new_game("kaavi", 4, seed=1, self_execution="on")


# ----------------------------------------------------------------------------- K2


def test_k2_trump_turned_and_layers_refill_in_laying_order() -> None:
    """K2: seat 3 laid first, so it draws QC JD before seat 1 draws JS (not seat order)."""
    g = _base_after_twos()
    assert g.trump_card == "10H"
    assert g.hand(3) == ["4S", "5S", "7S", "8S", "JD", "QC"]
    assert g.hand(1) == ["3C", "4C", "5C", "6C", "7D", "JS"]
    assert g.hand(2) == ["3D", "4D", "5D", "6D", "8C", "9C"]
    assert g.hand(0) == ["2H", "3S", "7C", "9D", "QH", "KS"]
    assert g.stock_size == 28 - 3


def test_k2_twos_bout_goes_on_against_the_dealer() -> None:
    """K2, M9, K5, M4: the dealer defends; kill, take, exchange and its own two are offered."""
    g = _base_after_twos()
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (0, "defend", 3, 0)
    assert g.table == [("2C", None), ("2S", None), ("2D", None)]
    assert g.bout_count == 3
    assert _moves(g) == {
        "kill 2C 2H",
        "kill 2C 7C",
        "kill 2C QH",
        "kill 2D 2H",
        "kill 2D 9D",
        "kill 2D QH",
        "kill 2S 2H",
        "kill 2S 3S",
        "kill 2S KS",
        "kill 2S QH",
        "take",
        "exchange",
        "self 2H QH",
    }


def test_k2_dealer_may_exchange_after_the_trump_is_turned() -> None:
    """K2, M4: the exchange is not the dealer's move; it still defends afterwards."""
    g = _base_after_twos()
    g.play("exchange")
    assert g.trump_card == "2H"
    assert g.hand(0) == ["3S", "7C", "9D", "10H", "QH", "KS"]
    assert g.stock_size == 25
    assert (g.to_act_seat, g.decision) == (0, "defend")
    assert "exchange" not in _moves(g)
    assert not _moves(g, "self")  # no two left for K5


def test_k2_no_exchange_in_twos_round_others_may_exchange_later() -> None:
    """K2, M4: the trump is unknown during the twos round; afterwards anyone holding 2H may."""
    hands = {
        0: "3S 4S 5S 6S 7S 8S",
        1: "3C 4C 5C 6C 7C 8C",
        2: "3D 4D 5D 6D 7D 8D",
        3: "2H 3H 4H 5H 6H 7H",
    }
    g = _game(4, hands, stock=("10H", "9S"))
    assert _moves(g) == {"attack 2H", "pass"}
    _refused(g, "exchange")
    for _ in range(3):
        g.play("pass")
    assert g.trump_card == "10H"
    assert (g.to_act_seat, g.decision, g.defender) == (0, "open", 1)
    g.play("attack 3S")
    g.play("take")
    # M12 giving round in C7 order: the dealer (principal attacker), then 2, then 3.
    assert (g.to_act_seat, g.decision) == (0, "give")
    assert _moves(g) == {"pass"}
    g.play("pass")
    assert (g.to_act_seat, _moves(g)) == (2, {"attack 3D", "pass"})
    g.play("pass")
    assert (g.to_act_seat, _moves(g)) == (3, {"attack 3H", "pass", "exchange"})
    g.play("exchange")
    assert g.trump_card == "2H"
    assert g.hand(3) == ["3H", "4H", "5H", "6H", "7H", "10H"]
    assert (g.to_act_seat, g.decision) == (3, "give")
    assert _moves(g) == {"attack 3H", "pass"}


def test_k2_dealer_takes_the_twos_and_is_skipped() -> None:
    """K2, M12: the giving round asks 3, 1, 2; the dealer picks up; its left attacks next."""
    g = _base_after_twos()
    g.play("take")
    asked = []
    while g.decision == "give":
        asked.append(g.to_act_seat)
        assert _moves(g) == {"pass"}
        g.play("pass")
    assert asked == [3, 1, 2]
    assert g.hand(0) == ["2C", "2D", "2H", "2S", "3S", "7C", "9D", "QH", "KS"]
    assert g.table == []
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (1, "open", 1, 2)


def test_k2_throw_in_after_twos_in_c7_order_then_dealer_attacks() -> None:
    """K2, C7, M11: throw-ins ask 3, 1, 2 (never the dealer, K5); the dealer then attacks 1."""
    g = _base_after_twos()
    g.play("kill 2C 7C")
    g.play("kill 2S 3S")
    g.play("kill 2D 9D")
    asked = []
    while g.decision == "throw-in":
        asked.append(g.to_act_seat)
        g.play("pass")
    assert asked == [3, 1, 2]
    assert g.discard_size == 6
    assert g.hand(0) == ["2H", "QH", "KH", "KS", "AH", "AS"]  # M11: refilled from the stock
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (0, "open", 0, 1)


# ----------------------------------------------------------------------------- K3


def test_k3_opening_against_dealer_adds_any_twos() -> None:
    """K3: any number of twos join a single card or a legal group; ``attack deck`` has none."""
    g = _s2_opening_against_dealer()
    bases = ["", "5H", "6C", "6S", "AD", "6C 6S"]
    twos = ["", "2C", "2D", "2C 2D"]
    expected = {_attack(t, b) for b in bases for t in twos if b or t} | {"attack deck"}
    assert _moves(g) == expected
    assert "attack 2C 5H" in expected and "attack 2D 6C 6S" in expected  # the seed's examples


def test_k3_opening_against_dealer_still_needs_a_legal_base() -> None:
    g = _s2_opening_against_dealer()
    _refused(g, "attack 2C 5H 6C", "M7")
    _refused(g, "attack 5H 6C", "M7")
    with pytest.raises(ValueError):
        g.play("attack deck 2C")  # not a move at all (C6)


def test_k3_opening_with_twos_is_played() -> None:
    g = _s2_opening_against_dealer()
    g.play("attack 2D 6C 6S")
    assert g.table == [("2D", None), ("6C", None), ("6S", None)]
    assert (g.to_act_seat, g.decision) == (0, "defend")
    assert g.bout_count == 3
    assert len(g.hand(1)) == 6  # M8: the attacker refilled at once


def test_k3_twos_thrown_in_whatever_ranks_are_on_the_table() -> None:
    """K3: the table holds 6s, 9, 8 only; every two may still be thrown in, 5H may not."""
    g = _s2_opening_against_dealer()
    g.play("attack 6C 6S")  # seat 1 draws 2S 6H
    g.play("kill 6C 9C")
    g.play("kill 6S 8S")
    assert (g.to_act_seat, g.decision) == (1, "throw-in")
    cards = ["2C", "2D", "2S", "6H"]
    subsets = {"attack " + " ".join(c) for k in range(1, 5) for c in combinations(cards, k)}
    assert _moves(g) == subsets | {"pass", "exchange"}
    _refused(g, "attack 5H", "rank")
    g.play("attack 2C 2D")
    assert (g.to_act_seat, g.decision) == (0, "defend")
    assert g.table[-2:] == [("2C", None), ("2D", None)]


def test_k3_twos_given_whatever_ranks_are_on_the_table() -> None:
    """K3, M12: after the dealer takes, twos may be given although no two was played."""
    g = _s2_opening_against_dealer()
    g.play("attack 6C 6S")
    g.play("take")
    assert (g.to_act_seat, g.decision) == (1, "give")
    cards = ["2C", "2D", "2S", "6H"]
    subsets = {"attack " + " ".join(c) for k in range(1, 5) for c in combinations(cards, k)}
    assert _moves(g) == subsets | {"pass", "exchange"}
    _refused(g, "attack 5H", "rank")
    g.play("attack 2C 2D")
    assert (g.to_act_seat, g.decision) == (1, "give")  # the round goes on (C7)
    g.play("pass")
    assert g.hand(0) == ["2C", "2D", "2H", "3C", "6C", "6S", "8S", "9C", "JD", "AC"]
    assert (g.to_act_seat, g.decision, g.defender) == (1, "open", 0)  # M12: the dealer is skipped


def test_k3_limit_still_holds_for_twos() -> None:
    """K3, M6: L = 6; four cards laid, so only two more fit, twos included."""
    g = _s2_opening_against_dealer()
    g.play("attack 2C 2D 6C 6S")  # seat 1 draws 2S 6H QH 9H
    assert g.bout_limit == 6
    g.play("kill 2C 3C")
    g.play("kill 2D JD")
    g.play("kill 6C 9C")
    g.play("kill 6S 8S")
    assert (g.to_act_seat, g.decision) == (1, "throw-in")
    assert g.hand(1) == ["2S", "5H", "6H", "9H", "QH", "AD"]
    assert _moves(g) == {
        "attack 2S",
        "attack 6H",
        "attack 9H",
        "attack 2S 6H",
        "attack 2S 9H",
        "attack 6H 9H",
        "exchange",
        "pass",
    }
    _refused(g, "attack 2S 6H 9H", "limit")


def test_k3_no_free_twos_when_another_seat_defends() -> None:
    """K3 is only against the dealer: seat 1 defends, so the dealer's 2H is off-rank."""
    g = _game(2, S2_HANDS, stock=S2_STOCK)
    g.play("pass")
    g.play("attack 4D")
    g.play("kill 4D KD")
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    assert _moves(g) == {"pass"}
    _refused(g, "attack 2H", "rank")


# ----------------------------------------------------------------------------- K4


def test_k4_beg_offered_for_killed_attack_cards() -> None:
    g = _base_after_twos()
    g.play("kill 2C 7C")
    assert _moves(g) == {
        "kill 2S 2H",
        "kill 2S 3S",
        "kill 2S KS",
        "kill 2S QH",
        "kill 2D 2H",
        "kill 2D 9D",
        "kill 2D QH",
        "take",
        "exchange",
        "self 2H QH",
        "beg 2C 2H",
        "beg 2C QH",
    }


def test_k4_beg_swaps_the_killer_and_the_dealer_still_defends() -> None:
    g = _base_after_twos()
    g.play("kill 2C 7C")
    g.play("beg 2C QH")
    assert g.table == [("2C", "QH"), ("2S", None), ("2D", None)]
    assert g.hand(0) == ["2H", "3S", "7C", "9D", "KS"]
    assert (g.to_act_seat, g.decision) == (0, "defend")
    assert g.bout_count == 3  # no attack card was added
    assert not {m for m in _moves(g) if m.startswith("beg 2C")}
    _refused(g, "beg 2C 2H", "once")


def test_k4_taken_back_rank_stays_played_and_new_rank_is_played() -> None:
    """K4, M10: 7C went back to hand, yet seat 3 may throw in 7S; the beggar's Q counts too."""
    g = _base_after_twos()
    g.play("kill 2C 7C")
    g.play("beg 2C QH")
    g.play("kill 2S 3S")
    g.play("kill 2D 9D")
    assert g.table == [("2C", "QH"), ("2S", "3S"), ("2D", "9D")]
    assert (g.to_act_seat, g.decision) == (3, "throw-in")
    assert _moves(g) == {"attack 7S", "attack QC", "attack 7S QC", "pass"}


def test_k4_beg_needs_a_killed_card_and_a_beating_card() -> None:
    g = _base_after_twos()
    g.play("kill 2C 7C")
    _refused(g, "beg 2S 3S", "not killed")  # 2S is still live
    _refused(g, "beg 2C 9D", "does not beat")  # C3
    _refused(g, "beg 2C KH")  # not in the dealer's hand
    _refused(g, "beg 5C QH", "not on the table")


def test_k4_any_defender_may_beg() -> None:
    """K4 is not the dealer's alone: dealer 1 attacks seat 0, which begs."""
    hands = {1: "4C 4H 7D 8D 9D 10D", 0: "3D 3S 5C 6H KH AC"}
    g = _game(2, hands, dealer=1, stock=("JS", "5D", "AD"))
    assert (g.to_act_seat, g.decision, _moves(g)) == (0, "twos", {"pass"})
    g.play("pass")
    assert (g.trump_card, g.to_act_seat, g.decision, g.defender) == ("JS", 1, "open", 0)
    g.play("attack 4C 4H")  # the dealer draws 5D AD
    g.play("kill 4C 5C")
    assert _moves(g) == {
        "kill 4H 3S",
        "kill 4H 6H",
        "kill 4H KH",
        "take",
        "beg 4C 3S",
        "beg 4C AC",
    }
    g.play("beg 4C AC")
    assert g.table == [("4C", "AC"), ("4H", None)]
    assert g.hand(0) == ["3D", "3S", "5C", "6H", "KH"]
    _refused(g, "beg 4C 3S", "once")
    g.play("kill 4H 6H")
    # The taken-back 5C and the new AC both made their ranks playable (M10).
    assert (g.to_act_seat, g.decision) == (1, "throw-in")
    assert _moves(g) == {"attack 5D", "attack AD", "attack 5D AD", "pass"}


def test_k4_dealers_own_two_cannot_be_begged() -> None:
    g = _base_after_twos()
    g.play("self 2H QH")  # K5: the dealer draws KH AH
    assert "KH" in g.hand(0)
    assert not {m for m in _moves(g) if m.startswith("beg 2H")}
    _refused(g, "beg 2H KH", "own two")


# ----------------------------------------------------------------------------- K5


def test_k5_dealers_own_two_draws_two_and_leaves_the_limit() -> None:
    g = _base_after_twos()
    g.play("self 2H QH")
    assert g.table == [("2C", None), ("2S", None), ("2D", None), ("2H", "QH")]
    assert g.hand(0) == ["3S", "7C", "9D", "KH", "KS", "AH"]
    assert g.stock_size == 23
    assert g.bout_count == 3
    assert g.bout_limit == 6
    assert (g.to_act_seat, g.decision) == (0, "defend")
    assert not _moves(g, "self")


def test_k5_both_ranks_played_and_no_limit_used() -> None:
    """K5, M10, M6: Q counts as played; 3 of 6 used, so seat 3 may still throw two cards."""
    g = _base_after_twos()
    g.play("self 2H QH")
    g.play("kill 2C 7C")
    g.play("kill 2S 3S")
    g.play("kill 2D 9D")
    assert (g.to_act_seat, g.decision) == (3, "throw-in")
    assert _moves(g) == {"attack 7S", "attack QC", "attack 7S QC", "pass"}


def test_k5_only_the_dealer_kills_its_own_twos() -> None:
    """K5: seat 1 defends and holds 2C 6C, but may not play ``self``."""
    g = _game(2, S2_HANDS, stock=S2_STOCK)
    g.play("pass")
    g.play("attack 4D")
    assert (g.to_act_seat, g.decision, g.defender) == (1, "defend", 1)
    assert _moves(g) == {"kill 4D 6S", "kill 4D KD", "take"}
    _refused(g, "self 2C 6C", "K5")


def test_k5_dealer_self_must_kill_its_two() -> None:
    g = _base_after_twos()
    _refused(g, "self 2H KS", "does not beat")  # a spade does not beat the two of trumps
    _refused(g, "self 3S KS", "K5")  # only twos


def _dealer_defending_with_stock(stock: int) -> Game:
    """The first random Kaavi game state (deterministic seeds) where the dealer defends with
    ``stock`` cards left and holds a two and a card beating it."""
    for players in range(2, 7):
        for seed in range(300):
            g = new_game("kaavi", players, seed=seed)
            rng = random.Random(seed)
            for _ in range(MOVE_CAP):
                if g.is_over:
                    break
                if (
                    g.decision == "defend"
                    and g.defender == g.dealer
                    and g.stock_size == stock
                    and _own_two_selves(g)
                ):
                    return g
                g.play(rng.choice(g.legal_moves()))
    raise AssertionError(f"no random game reached a dealer defence with stock {stock}")


def _own_two_selves(g: Game) -> set[str]:
    hand = g.hand(g.dealer)
    trump = g.trump_card[-1] if g.trump_card else ""
    return {f"self {a} {k}" for a in hand if a.startswith("2") for k in hand if _beats(a, k, trump)}


def test_k5_with_two_cards_in_stock_the_dealer_draws_the_indicator_last() -> None:
    g = _dealer_defending_with_stock(2)
    selves = _own_two_selves(g)
    assert _moves(g, "self") == selves
    move = sorted(selves)[0]
    _, a, k = move.split()
    hand = set(g.hand(g.dealer)) - {a, k}
    indicator = g.trump_card
    count = g.bout_count
    g.play(move)
    assert g.stock_size == 0
    assert indicator in g.hand(g.dealer)  # C4: the indicator is the last card drawn
    assert len(g.hand(g.dealer)) == len(hand) + 2
    assert hand < set(g.hand(g.dealer))
    assert (a, k) in g.table
    assert g.bout_count == count


def test_k5_needs_two_cards_in_stock() -> None:
    g = _dealer_defending_with_stock(1)
    assert not _moves(g, "self")
    _refused(g, sorted(_own_two_selves(g))[0], "K5")


# ----------------------------------------------------------------------------- properties


def _cards_in_play(g: Game) -> int:
    return sum(g.hand_size(s) for s in range(g.n)) + g.stock_size + g.discard_size + _on_table(g)


def _random_illegal(g: Game, rng: random.Random, legal: set[str]) -> str:
    """A move text in C6 notation that is not among the legal moves."""
    seat = g.to_act_seat
    assert seat is not None
    near = g.hand(seat) + [c for pair in g.table for c in pair if c]
    while True:
        pool = near if near and rng.random() < 0.7 else PACK
        kind = rng.choice(["attack", "kill", "self", "beg", "take", "pass", "exchange", "deck"])
        if kind in ("take", "pass", "exchange"):
            text = kind
        elif kind == "deck":
            text = rng.choice(["attack deck", "deck-kill", "transfer 7C"])
        elif kind == "attack":
            cards = rng.sample(PACK if len(pool) < 4 else pool, rng.randint(1, 4))
            text = "attack " + " ".join(sorted(cards, key=PACK.index))
        else:
            src = PACK if len(pool) < 2 else pool
            text = f"{kind} " + " ".join(rng.sample(src, 2))
        if text not in legal:
            return text


@settings(deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 6))
def test_property_cards_conserved(seed: int, players: int) -> None:
    """C4, K1, K2, K5: 52 cards in hands, stock, discard and on the table at every step."""
    g = new_game("kaavi", players, seed=seed)
    rng = random.Random(seed)
    assert _cards_in_play(g) == 52
    for _ in range(MOVE_CAP):
        if g.is_over:
            break
        g.play(rng.choice(g.legal_moves()))
        assert _cards_in_play(g) == 52


@settings(deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 6))
def test_property_game_ends_within_cap(seed: int, players: int) -> None:
    """M13: every random Kaavi game ends, with exactly one loser holding cards."""
    g = new_game("kaavi", players, seed=seed)
    rng = random.Random(seed)
    for _ in range(MOVE_CAP):
        if g.is_over:
            break
        g.play(rng.choice(g.legal_moves()))
    assert g.is_over
    assert g.to_act_seat < 0
    assert g.stock_size == 0
    if g.loser is not None:
        assert [s for s in range(players) if g.hand_size(s)] == [g.loser]
    else:
        assert not any(g.hand_size(s) for s in range(players))


@settings(deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 6))
def test_property_seat_to_act_always_has_a_move(seed: int, players: int) -> None:
    """C5: after every legal move, the game is over or the seat to act has a legal move."""
    g = new_game("kaavi", players, seed=seed)
    rng = random.Random(seed)
    for _ in range(MOVE_CAP):
        if g.is_over:
            break
        g.play(rng.choice(g.legal_moves()))
        assert g.is_over or (g.to_act_seat >= 0 and g.legal_moves())


@settings(deadline=None)
@given(seed=st.integers(0, 2**32 - 1), players=st.integers(2, 6))
def test_property_illegal_move_refused_and_game_unchanged(seed: int, players: int) -> None:
    """C6, IllegalMove: a move not in legal_moves raises and leaves the game unchanged."""
    g = new_game("kaavi", players, seed=seed)
    rng = random.Random(seed)
    for _ in range(MOVE_CAP):
        if g.is_over:
            break
        legal = [str(m) for m in g.legal_moves()]
        bad = _random_illegal(g, rng, set(legal))
        before = (g.table, [g.hand(s) for s in range(players)], g.to_act_seat, g.stock_size)
        with pytest.raises(IllegalMove):
            g.play(bad)
        assert [str(m) for m in g.legal_moves()] == legal
        assert (g.table, [g.hand(s) for s in range(players)], g.to_act_seat, g.stock_size) == before
        g.play(rng.choice(legal))
