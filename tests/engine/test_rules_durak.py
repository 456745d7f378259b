"""Durak rules D1-D12 (RULES.md section 2; seed 002), one focused situation per test.

Every situation is a stacked deal (RULES C4) built with ``stack_deck``; every card that matters
is named. Unless a test says otherwise the dealer is seat 0 and ``first_game=False``, so seat 1
(the dealer's left) opens against seat 2 (D3, later games).
"""

from __future__ import annotations

from typing import Any

import pytest
from rule_helpers import moves, refused, run, state

from moska_p2p.engine import DealError, Game, IllegalMove, new_game
from moska_p2p.engine.scenario import stack_deck

PACK36 = {r + s for r in ("6", "7", "8", "9", "10", "J", "Q", "K", "A") for s in "CDHS"}
PACK52 = PACK36 | {r + s for r in ("2", "3", "4", "5") for s in "CDHS"}


def deal(
    hands: dict[int, str],
    *,
    preset: str = "durak",
    players: int = 4,
    dealer: int = 0,
    indicator: str | None = None,
    stock: str = "",
    first_game: bool = False,
    **options: Any,
) -> Game:
    deck = stack_deck(
        preset, players, hands, dealer=dealer, indicator=indicator, stock=stock.split()
    )
    return new_game(preset, players, deck=deck, dealer=dealer, first_game=first_game, **options)


# A 4-player deal, trump hearts (indicator AH); the 6H and 7H wait in the stock.
BASE_HANDS = {
    1: "8C 8D JD 6S 7S 9C",
    2: "JC 10H 7D 9D QS KS",
    3: "8H 7C QC KC AC 6D",
    0: "AD KD QD 10C 10S 9S",
}
BASE_STOCK = "6C 10D 6H 7H 9H JH QH KH 8S JS AS"


def base(**kw: Any) -> Game:
    return deal(BASE_HANDS, indicator="AH", stock=BASE_STOCK, **kw)


# ---------------------------------------------------------------------------------- D1


def test_d1_durak_is_the_36_card_pack_six_to_ace() -> None:
    for seed in range(5):
        g = new_game("durak", 6, seed=seed)  # six hands of six use the whole pack (D2)
        cards = [c for s in range(6) for c in g.hand(s)]
        assert len(cards) == 36
        assert set(cards) == PACK36
        assert [g.hand_size(s) for s in range(6)] == [6] * 6


def test_d1_four_players_hands_of_six_and_a_stock_of_twelve() -> None:
    g = new_game("durak", 4, seed=11)
    assert [g.hand_size(s) for s in range(4)] == [6] * 4
    assert g.stock_size == 12  # 36 - 24, the indicator included
    assert g.trump_card in PACK36
    assert all(c in PACK36 for s in range(4) for c in g.hand(s))


def test_d1_a_deck_with_a_card_below_six_is_refused() -> None:
    deck = stack_deck("durak", 4, BASE_HANDS, indicator="AH", stock=BASE_STOCK.split())
    bad = [("5C" if c == "6C" else c) for c in deck]
    with pytest.raises(DealError, match="5C"):
        new_game("durak", 4, deck=bad)
    with pytest.raises(DealError):
        new_game("durak", 4, deck=[*deck, "2C"])  # 37 cards: 2C is not in the pack


def test_d1_durak_52_uses_the_full_pack() -> None:
    g = new_game("durak-52", 6, seed=3)
    cards = [c for s in range(6) for c in g.hand(s)]
    assert len(cards) == 36
    assert g.stock_size == 16  # 52 - 36: a stock even at six players
    assert set(cards) <= PACK52
    # A 36-card deck is not a durak-52 deck.
    deck36 = stack_deck("durak", 4, BASE_HANDS, indicator="AH", stock=BASE_STOCK.split())
    with pytest.raises(DealError):
        new_game("durak-52", 4, deck=deck36)
    g52 = deal({1: "2C 3C 4C 5C 2D 3D"}, preset="durak-52", indicator="AH")
    assert g52.hand(1) == ["2C", "2D", "3C", "3D", "4C", "5C"]
    assert g52.stock_size == 52 - 24


# ---------------------------------------------------------------------------------- D2

# Six players, 36 cards: no stock. The dealer (seat 0) gets AS last: trumps are spades.
SIX_HANDS = {
    1: "6C 6D 6H 6S 7C 7D",
    2: "7S 8C 8D 8H 8S 9D",
    3: "7H 9C 9H 10C 10D 10H",
    4: "9S 10S JS JC JD JH",
    5: "QC QD QH KC KD KH",
    0: "AC AD AH QS KS AS",
}


def six(**kw: Any) -> Game:
    return deal(SIX_HANDS, players=6, **kw)


def test_d2_six_players_no_stock_dealer_keeps_the_indicator() -> None:
    g = six(first_game=True)
    assert g.stock_size == 0
    assert g.trump_card == "AS"
    assert g.hand(0) == ["QS", "KS", "AC", "AD", "AH", "AS"]  # the indicator stays in hand
    assert [g.hand_size(s) for s in range(6)] == [6] * 6
    # D3 still applies: 6S is the lowest trump in any hand.
    assert (g.to_act_seat, g.decision, g.defender) == (1, "open", 2)


def test_d2_no_exchange_without_a_stock() -> None:
    g = six(first_game=True)
    assert g.to_act_seat == 1 and "6S" in g.hand(1)
    assert "exchange" not in moves(g)
    refused(g, "exchange", "no longer in the stock")


# ---------------------------------------------------------------------------------- D3


def test_d3_first_game_lowest_trump_in_any_hand_attacks() -> None:
    # Trumps are hearts; 6H and 7H are in the stock, so 8H (seat 3) is the lowest in a hand.
    g = base(first_game=True)
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (3, "open", 3, 0)
    assert "8H" in g.hand(3)  # shown, but it stays in hand
    assert g.hand_size(3) == 6
    assert moves(g) == {f"attack {c}" for c in g.hand(3)}  # not obliged to lead it


def test_d3_first_game_nobody_holds_a_trump_dealers_left_attacks() -> None:
    hands = {
        3: "6C 7C 8C 9C 10C JC",
        0: "QC KC AC 6D 7D 8D",
        1: "9D 10D JD QD KD AD",
        2: "6S 7S 8S 9S 10S JS",
    }
    g = deal(hands, dealer=2, indicator="AH", stock="6H 7H 8H", first_game=True)
    assert all(not c.endswith("H") for s in range(4) for c in g.hand(s))
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (3, "open", 3, 0)


def test_d3_later_game_dealers_left_attacks() -> None:
    g = base(first_game=False)  # seat 3 holds the lowest trump, yet seat 1 opens
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (1, "open", 1, 2)
    g = base(first_game=False, dealer=2)
    assert (g.to_act_seat, g.attacker, g.defender) == (3, 3, 0)


# ---------------------------------------------------------------------------------- D4


def test_d4_opening_is_exactly_one_card() -> None:
    g = base()
    assert moves(g) == {
        "attack 6S",
        "attack 7S",
        "attack 8C",
        "attack 8D",
        "attack 9C",
        "attack JD",
    }
    refused(g, "attack 8C 8D", "exactly one card")
    refused(g, "pass", "may not pass")


def test_d4_throw_in_ranks_include_the_beating_cards() -> None:
    g = base()
    run(g, "1: attack 8C")
    assert moves(g) == {"kill 8C JC", "kill 8C 10H", "take"}
    run(g, "2: kill 8C JC")
    assert (g.to_act_seat, g.decision) == (1, "throw-in")
    # 8 is the attack rank, J the beating card's rank; 9C, 6S and 7S are refused.
    assert moves(g) == {"attack 8D", "attack JD", "attack 8D JD", "pass"}
    refused(g, "attack 9C", "rank")


def test_d4_no_throw_in_while_a_live_card_is_on_the_table() -> None:
    g = base()
    run(g, "1: attack 8C")
    assert (g.to_act_seat, g.decision) == (2, "defend")
    before = state(g)
    with pytest.raises(IllegalMove):
        g.play("attack 8D", seat=1)  # the attacker may not add to a live card
    with pytest.raises(IllegalMove):
        g.play("pass")  # nor may the defender pass
    assert state(g) == before


def test_d4_priority_order_principal_attacker_then_clockwise_from_defenders_left() -> None:
    g = base()
    run(g, "1: attack 8C", "2: kill 8C JC", "1: pass")
    assert (g.to_act_seat, g.decision) == (3, "throw-in")  # the defender's left
    assert moves(g) == {"attack 8H", "pass"}
    run(g, "3: attack 8H")
    assert (g.to_act_seat, g.decision) == (2, "defend")  # the defender acts after any card
    assert moves(g) == {"kill 8H 10H", "take"}
    run(g, "2: kill 8H 10H")
    # The next round starts again with the principal attacker.
    assert (g.to_act_seat, g.decision) == (1, "throw-in")
    assert moves(g) == {"attack 8D", "attack JD", "attack 8D JD", "pass"}
    run(g, "1: pass")
    assert (g.to_act_seat, moves(g)) == (3, {"pass"})  # asked although it holds nothing useful
    run(g, "3: pass")
    assert g.to_act_seat == 0
    assert moves(g) == {"attack 10C", "attack 10S", "attack 10C 10S", "pass"}  # 10 via 10H
    run(g, "0: pass")
    assert g.table == [] and g.discard_size == 4


# ---------------------------------------------------------------------------------- D5


def test_d5_at_most_six_attack_cards_and_then_no_throw_in_round() -> None:
    g = six()
    run(g, "1: attack 6C", "2: kill 6C 7S")
    assert g.bout_limit == 6
    assert "attack 6D 6H 6S 7C 7D" in moves(g)  # five more: six in all
    run(g, "1: attack 6D 6H 6S 7C 7D")
    run(g, "2: kill 6D 8D", "2: kill 6H 8H", "2: kill 6S 8S", "2: kill 7C 8C")
    run(g, "2: kill 7D 9D")
    # Six attack cards: the bout is beaten off at once, although seats 3 (7H) and 4 could add.
    assert g.table == [] and g.discard_size == 12
    assert (g.to_act_seat, g.decision) == (3, "open")


def test_d5_six_is_the_cap_even_for_a_bigger_hand() -> None:
    g = deal({1: "6C 7C 8C 9C 10C JC", 0: "6D 7D 8D 9D 10D JD"}, players=2, indicator="AH")
    run(g, "1: attack 6C", "0: take", "1: pass")
    assert g.hand_size(0) == 7 and g.hand_size(1) == 6  # the attacker refilled
    assert (g.to_act_seat, g.attacker, g.defender) == (1, 1, 0)  # the taker is attacked again
    assert g.bout_limit == 6


def five_player_game(**kw: Any) -> Game:
    """Five players, trumps diamonds (AD), a stock of six: AD under JS KS AH AS KH."""
    hands = {
        1: "6C 9S 6D 6H 6S 8D",
        2: "8C 9C 9D 10C 10D 10H",
        3: "JC 10S QC QD QH QS",
        4: "JD 7C 7D 7H 7S KD",
        0: "9H JH KC AC 8H 8S",
    }
    return deal(hands, players=5, indicator="AD", stock="JS KS AH AS KH", **kw)


def five_player_two_bouts() -> Game:
    g = five_player_game()
    # Bout 1: seat 1 against seat 2, beaten off; seats 1 and 2 draw JS and KS.
    run(g, "1: attack 6C", "2: kill 6C 8C", "1: pass", "3: pass", "4: pass", "0: pass")
    assert g.stock_size == 4
    # Bout 2: seat 2 against seat 3, who takes six cards; the giving round runs 2, 4, 0, 1.
    run(g, "2: attack 9C")
    assert g.hand_size(2) == 5 and g.stock_size == 4  # D7: nobody draws during the bout
    run(g, "3: kill 9C JC", "2: attack 9D", "3: take")
    assert (g.to_act_seat, g.decision) == (2, "give")
    run(g, "2: pass", "4: attack JD", "0: attack 9H JH", "1: attack 9S")
    return g


def test_d7_refill_principal_attacker_first_clockwise_defender_last() -> None:
    g = five_player_two_bouts()
    assert g.stock_size == 0 and g.table == []
    # Seat 2 (principal) draws AH AS, then clockwise from it: seat 4 draws KH, seat 0 the
    # indicator AD (one of the two it lacks), and seat 1 nothing: the stock ran out.
    assert g.hand(2) == ["10C", "10D", "10H", "KS", "AH", "AS"]
    assert g.hand(4) == ["7C", "7D", "7H", "7S", "KD", "KH"]
    assert g.hand(0) == ["8H", "8S", "KC", "AC", "AD"]
    assert g.hand(1) == ["6D", "6H", "6S", "8D", "JS"]
    assert g.hand_size(3) == 12  # the taker: 5 left + all 7 cards on the table


def test_d5_limit_is_the_defenders_hand_when_the_bout_opened() -> None:
    g = five_player_two_bouts()
    # Seat 3 took, so seat 4 attacks seat 0, who holds five cards: at most five attack cards.
    assert (g.to_act_seat, g.attacker, g.defender) == (4, 4, 0)
    assert g.bout_limit == 5
    run(g, "4: attack 7C", "0: kill 7C KC")
    offered = {m for m in moves(g, "attack")}
    assert "attack 7D 7H 7S KD" in offered
    assert max(len(m.split()) - 1 for m in offered) == 4
    refused(g, "attack 7D 7H 7S KD KH", "allows 4")
    run(g, "4: attack 7D 7H 7S KD", "0: take")
    # Five cards reached the limit: no giving round; seat 0 picks up all six table cards.
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (1, "open", 1, 2)
    assert g.hand_size(0) == 4 + 6


def test_d5_first_bout_limit_five() -> None:
    hands = {
        1: "7C 7D 7H 7S KD KH",
        2: "KC 6C 6D 6H 8S 9S",
        3: "8C 8D 8H 9C 9D 9H",
        0: "10C 10D 10H JC JD JH",
    }
    plain = deal(hands, indicator="AS")
    run(plain, "1: attack 7C", "2: kill 7C KC")
    assert plain.bout_limit == 6
    assert "attack 7D 7H 7S KD KH" in moves(plain)

    g = deal(hands, indicator="AS", first_bout_limit="5")
    assert g.bout_limit == 5
    run(g, "1: attack 7C", "2: kill 7C KC")
    assert "attack 7D 7H 7S KD KH" not in moves(g)
    assert "attack 7D 7H 7S KD" in moves(g)
    refused(g, "attack 7D 7H 7S KD KH", "allows 4")
    run(g, "1: attack 7D 7H 7S KD", "2: take")  # five cards: no giving round
    # Only the first bout of the game is capped at five.
    assert (g.to_act_seat, g.decision, g.defender) == (3, "open", 0)
    assert g.bout_limit == 6


# ---------------------------------------------------------------------------------- D6


def test_d6_take_giving_round_then_defender_takes_every_card_on_the_table() -> None:
    g = base()
    run(g, "1: attack 8C", "2: kill 8C JC", "1: attack 8D", "2: take")
    assert (g.to_act_seat, g.decision) == (1, "give")
    assert g.table == [("8C", "JC"), ("8D", None)]  # the beaten pair stays on the table
    assert moves(g) == {"attack JD", "pass"}  # J counts: it beat 8C
    run(g, "1: attack JD")
    assert (g.to_act_seat, moves(g)) == (3, {"attack 8H", "pass"})
    run(g, "3: attack 8H", "0: pass", "1: pass", "3: pass")
    assert g.table == []
    assert g.discard_size == 0  # nothing was discarded: the beaten pair was picked up too
    assert g.hand(2) == ["7D", "8C", "8D", "8H", "9D", "10H", "JC", "JD", "QS", "KS"]


def test_d6_defender_may_not_kill_during_the_giving_round() -> None:
    g = base()
    run(g, "1: attack 8C", "2: take")
    assert g.to_act_seat == 1
    refused(g, "kill 8C JC", "not possible now")
    with pytest.raises(IllegalMove):
        g.play("kill 8C JC", seat=2)


# ---------------------------------------------------------------------------------- D7


def test_d7_refill_only_at_bout_end_in_order() -> None:
    g = base()
    run(g, "1: attack 8C", "2: kill 8C JC", "1: pass", "3: attack 8H")
    assert g.hand_size(1) == 5 and g.hand_size(3) == 5 and g.stock_size == 12
    run(g, "2: kill 8H 10H", "1: pass", "3: pass", "0: pass")
    # Seat 1 draws 6C, seat 3 draws 10D, seat 0 needs none, the defender last: 6H 7H.
    assert g.hand(1) == ["6C", "6S", "7S", "8D", "9C", "JD"]
    assert g.hand(3) == ["6D", "7C", "10D", "QC", "KC", "AC"]
    assert g.hand(2) == ["6H", "7D", "7H", "9D", "QS", "KS"]
    assert g.stock_size == 8


# ---------------------------------------------------------------------------------- D8

D8_HANDS = {
    1: "6H 7C 8C 9C 10C JC",
    2: "7H 8D 9D 10D JD QD",
    3: "6C 6D 6S KC AC KD",
    0: "QS KS AS 7S 8S 9S",
}


def test_d8_exchange_the_six_of_trumps_dealt_to_you() -> None:
    g = deal(D8_HANDS, indicator="KH")
    assert "exchange" in moves(g)
    run(g, "1: exchange")
    # The exchange is not the seat's move: it still opens.
    assert (g.to_act_seat, g.decision) == (1, "open")
    assert g.hand(1) == ["7C", "8C", "9C", "10C", "JC", "KH"]
    assert g.trump_card == "6H"
    assert g.stock_size == 12
    assert "exchange" not in moves(g)


def test_d8_no_exchange_with_a_picked_up_six() -> None:
    g = deal(D8_HANDS, indicator="KH")
    run(g, "1: attack 6H", "2: take", "1: pass", "3: pass", "0: pass")
    assert "6H" in g.hand(2) and g.stock_size > 0
    run(g, "3: attack 6S", "0: kill 6S 7S", "3: pass", "1: pass")
    assert (g.to_act_seat, g.decision) == (2, "throw-in")
    assert "exchange" not in moves(g)
    refused(g, "exchange", "picked up")


def test_d8_exchange_the_six_of_trumps_drawn() -> None:
    hands = {**D8_HANDS, 1: "7C 8C 9C 10C JC QC"}
    g = deal(hands, indicator="KH", stock="6H")
    run(g, "1: attack 7C", "2: kill 7C 7H", "1: pass", "3: pass", "0: pass")
    assert "6H" in g.hand(1)  # drawn from the top of the stock
    run(g, "2: attack 8D", "3: kill 8D KD", "2: pass", "0: pass")
    assert (g.to_act_seat, g.decision) == (1, "throw-in")
    assert "exchange" in moves(g)
    run(g, "1: exchange")
    assert (g.to_act_seat, g.decision) == (1, "throw-in")
    assert "KH" in g.hand(1) and "6H" not in g.hand(1)
    assert g.trump_card == "6H"


def test_d8_durak_52_exchanges_the_two_of_trumps() -> None:
    g = deal({1: "2H 6H 7C 8C 9C 10C", 3: "3H 4H 5H 2C 3C 4C"}, preset="durak-52", indicator="KH")
    assert "exchange" in moves(g)
    run(g, "1: exchange")
    assert g.hand(1) == ["6H", "7C", "8C", "9C", "10C", "KH"]
    assert g.trump_card == "2H"
    g = deal({3: "2H 6H 7C 8C 9C 10C"}, preset="durak-52", indicator="KH")
    assert g.to_act_seat == 1 and "exchange" not in moves(g)


# ---------------------------------------------------------------------------------- D9


def test_d9_defender_who_held_attacks_next() -> None:
    g = base()
    run(g, "1: attack 8C", "2: kill 8C JC", "1: pass", "3: pass", "0: pass")
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (2, "open", 2, 3)


def test_d9_defender_who_took_is_skipped() -> None:
    g = base()
    run(g, "1: attack 8C", "2: take", "1: pass", "3: attack 8H", "0: pass", "1: pass")
    run(g, "3: pass")
    assert g.hand_size(2) == 8
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (3, "open", 3, 0)


# --------------------------------------------------------------------------------- D10


def six_after_two_bouts() -> Game:
    """Six players, no stock: two bouts of six beaten cards empty seats 1-4."""
    g = six()
    run(g, "1: attack 6C", "2: kill 6C 7S", "1: attack 6D 6H 6S 7C 7D")
    # Seat 1 has no cards left, but it is not out before the bout ends.
    assert g.hand_size(1) == 0 and not g.is_out(1) and not g.is_over
    run(g, "2: kill 6D 8D", "2: kill 6H 8H", "2: kill 6S 8S", "2: kill 7C 8C", "2: kill 7D 9D")
    assert g.is_out(1) and g.is_out(2)
    # The defender who held is out: the next seat still in attacks.
    assert (g.to_act_seat, g.attacker, g.defender) == (3, 3, 4)
    run(g, "3: attack 7H", "4: kill 7H 9S", "3: attack 9C 9H", "4: kill 9C 10S", "4: kill 9H JS")
    run(g, "3: attack 10C 10D 10H", "4: kill 10C JC", "4: kill 10D JD", "4: kill 10H JH")
    assert [g.is_out(s) for s in range(6)] == [False, True, True, True, True, False]
    assert (g.to_act_seat, g.attacker, g.defender) == (5, 5, 0)
    return g


def test_d10_players_without_cards_are_out_when_the_bout_ends() -> None:
    g = six_after_two_bouts()
    assert not g.is_over


def test_d10_the_last_player_holding_cards_is_the_fool() -> None:
    g = six_after_two_bouts()
    run(g, "5: attack QC", "0: kill QC KS", "5: attack QD QH KC KD KH", "0: kill QD AD")
    assert g.hand_size(5) == 0 and not g.is_over
    run(g, "0: take")  # seat 5 has no cards: nobody is asked to give
    assert g.is_over and g.to_act_seat < 0 and g.decision == "over"
    assert g.loser == 0 and list(g.loser_seats) == [0]
    assert g.hand_size(0) == 12


def test_d10_nobody_holding_cards_is_a_draw_and_no_end_mid_bout() -> None:
    g = six_after_two_bouts()
    run(g, "5: attack QC", "0: kill QC KS", "5: attack QD QH KC KD KH")
    run(g, "0: kill QD AD", "0: kill QH AH", "0: kill KC AC", "0: kill KD QS")
    # Seat 5 is empty and seat 0 alone holds a card, yet the bout goes on (D10).
    assert not g.is_over
    assert (g.to_act_seat, g.decision, g.hand(0)) == (0, "defend", ["AS"])
    run(g, "0: kill KH AS")
    assert g.is_over
    assert g.loser is None and list(g.loser_seats) == []


# --------------------------------------------------------------------------------- D11

# Perevodnoy, trumps hearts (indicator AH): the four sevens are spread over the table.
PEREVOD_HANDS = {
    1: "7C 6C 6D 8S 10S QS",
    2: "7D 7H 8D 9C 9D 10D",
    3: "7S 8C 9S JC QC 10H",
    0: "KD AD KS AS 8H 9H",
}


def perevod(**kw: Any) -> Game:
    return deal(PEREVOD_HANDS, preset="perevodnoy", indicator="AH", **kw)


def test_d11_transfer_by_laying_a_card_of_the_attacks_rank() -> None:
    g = perevod()
    run(g, "1: attack 7C")
    assert moves(g) == {"kill 7C 9C", "kill 7C 7H", "take", "transfer 7D", "transfer 7H"}
    run(g, "2: transfer 7D")
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (3, "defend", 2, 3)
    assert g.table == [("7C", None), ("7D", None)]
    assert "7D" not in g.hand(2)
    assert g.bout_count == 2


def test_d11_transfer_needs_the_attacks_rank() -> None:
    g = perevod()
    run(g, "1: attack 7C")
    refused(g, "transfer 8D", "rank")


def test_d11_no_transfer_once_a_card_is_beaten() -> None:
    g = perevod()
    run(g, "1: attack 7C", "2: transfer 7D", "3: kill 7C 8C")
    assert (g.to_act_seat, g.decision) == (3, "defend")
    assert "7S" in g.hand(3)
    assert moves(g, "transfer") == set()
    refused(g, "transfer 7S", "none beaten")


def test_d11_transfer_can_come_back_round_to_the_first_attacker() -> None:
    hands = {**PEREVOD_HANDS, 2: "7D 8H 8D 9C 9D 10D", 0: "KD AD KS AS 7H 9H"}
    g = deal(hands, preset="perevodnoy", indicator="AH")
    run(g, "1: attack 7C", "2: transfer 7D", "3: transfer 7S", "0: transfer 7H")
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (1, "defend", 0, 1)
    assert [a for a, _ in g.table] == ["7C", "7D", "7S", "7H"]
    assert g.bout_limit == 5  # seat 1's hand at the transfer


def test_d11_transferring_player_becomes_principal_attacker() -> None:
    g = perevod()
    run(g, "1: attack 7C", "2: transfer 7D", "3: kill 7C 8C", "3: kill 7D 10H")
    # Throw-in order: seat 2 (principal) first, then clockwise from seat 0, seat 1 last.
    assert (g.to_act_seat, g.decision) == (2, "throw-in")
    run(g, "2: pass", "0: pass", "1: pass")
    assert (g.to_act_seat, g.attacker, g.defender) == (3, 3, 0)  # the defender who held


def test_d11_plain_durak_has_no_transfer() -> None:
    g = deal(PEREVOD_HANDS, indicator="AH")
    run(g, "1: attack 7C")
    assert moves(g, "transfer") == set()
    refused(g, "transfer 7D", "not possible now")


def test_d11_transfer_show_refused_without_the_option() -> None:
    g = perevod()
    run(g, "1: attack 7C")
    assert moves(g, "transfer show") == set()
    refused(g, "transfer show 7H", "showing a trump")


def test_d11_transfer_show_a_trump_keeps_the_card() -> None:
    g = perevod(transfer_show_trump="on")
    run(g, "1: attack 7C")
    assert moves(g, "transfer show") == {"transfer show 7H"}  # 7D is no trump
    refused(g, "transfer show 7D", "not a trump")
    run(g, "2: transfer show 7H")
    assert (g.to_act_seat, g.attacker, g.defender) == (3, 2, 3)
    assert g.table == [("7C", None)]
    assert "7H" in g.hand(2)


def test_d11_transfer_show_once_per_bout_per_player() -> None:
    hands = {1: "7C 7D 8C 9C 10C JC", 0: "7H 8D 9D 10D JD QD"}
    g = deal(hands, preset="perevodnoy", players=2, indicator="AH", transfer_show_trump="on")
    run(g, "1: attack 7C", "0: transfer show 7H", "1: transfer 7D")
    assert (g.to_act_seat, g.defender) == (0, 0)
    assert "transfer show 7H" not in moves(g)
    assert "transfer 7H" in moves(g)  # laying it is still allowed
    refused(g, "transfer show 7H", "already")


def perevod_six(**kw: Any) -> Game:
    """Six players, no stock, dealer 4 (AH: trumps hearts); seat 5 attacks seat 0."""
    hands = {
        5: "8C 6C 6D 6S QC QD",
        0: "10C 9D 9S JD JS 7C",
        1: "7D 6H 9H 10H JC JH",
        2: "7H 7S QH QS KC KD",
        3: "8D 8S 10D 10S 9C 8H",
        4: "KH KS AC AD AS AH",
    }
    g = deal(hands, preset="perevodnoy", players=6, dealer=4, **kw)
    run(g, "5: attack 8C", "0: kill 8C 10C", "5: pass", "1: pass", "2: pass")
    run(g, "3: attack 8D 8S 10D 10S")
    run(g, "0: kill 8D 9D", "0: kill 8S 9S", "0: kill 10D JD", "0: kill 10S JS")
    run(g, "5: pass", "1: pass", "2: pass", "3: pass", "4: pass")
    assert [g.hand_size(s) for s in range(6)] == [1, 6, 6, 2, 6, 5]
    run(g, "0: attack 7C", "1: transfer 7D")
    assert (g.to_act_seat, g.defender) == (2, 2)
    return g


def test_d11_transfer_limited_by_the_new_defenders_hand() -> None:
    g = perevod_six()
    # Seat 3 holds two cards: a third attack card may not be passed on to it.
    assert moves(g, "transfer") == set()
    refused(g, "transfer 7H", "at most 2")
    refused(g, "transfer 7S", "at most 2")


def test_d11_limit_counted_against_the_new_defender_after_a_shown_transfer() -> None:
    g = perevod_six(transfer_show_trump="on")
    assert moves(g, "transfer show") == {"transfer show 7H"}  # the count stays at two
    run(g, "2: transfer show 7H")
    assert (g.to_act_seat, g.attacker, g.defender) == (3, 2, 3)
    assert g.bout_limit == 2
    run(g, "3: kill 7C 9C", "3: kill 7D 8H")
    # The limit of two is used up: no throw-in round; seats 0 and 3 are out, empty.
    assert g.table == []
    assert g.is_out(0) and g.is_out(3)
    assert (g.to_act_seat, g.attacker, g.defender) == (4, 4, 5)


# --------------------------------------------------------------------------------- D12

# Teams: seats 0 and 2 against seats 1 and 3. Trumps spades (indicator QS, drawn by seat 2).
TEAM_HANDS = {
    1: "6C 6D 7C 9S 10S JH",
    2: "7S 8C 8D 8H 8S 9D",
    3: "6H 6S 7D AC AD AH",
    0: "7H 9C 9H 10C 10D 10H",
}
TEAM_STOCK = "JC JD QH JS KS AS QC QD KC KD KH"


def teams(**kw: Any) -> Game:
    return deal(TEAM_HANDS, preset="durak-teams", indicator="QS", stock=TEAM_STOCK, **kw)


def test_d12_teams_need_an_even_table_of_four_or_six() -> None:
    with pytest.raises(ValueError):
        new_game("durak-teams", 3, seed=1)
    with pytest.raises(ValueError):
        new_game("durak-teams", 5, seed=1)
    assert new_game("durak-teams", 6, seed=1).stock_size == 0


def test_d12_partner_of_the_defender_never_throws_in() -> None:
    g = teams()
    assert (g.attacker, g.defender) == (1, 2)
    run(g, "1: attack 6C", "2: kill 6C 7S", "1: pass")
    assert g.to_act_seat == 3  # the attacker's partner may throw in
    run(g, "3: pass")
    # Seat 0 holds 7H, a table rank, but is the defender's partner: never asked.
    assert g.table == [] and g.discard_size == 2
    assert (g.to_act_seat, g.attacker, g.defender) == (2, 2, 3)


def test_d12_partner_of_the_defender_never_gives() -> None:
    g = teams()
    run(g, "1: attack 6C", "2: kill 6C 7S", "1: attack 6D 7C", "2: take")
    assert (g.to_act_seat, g.decision) == (1, "give")
    run(g, "1: pass")
    assert g.to_act_seat == 3
    assert moves(g, "attack") == {
        "attack 6H",
        "attack 6S",
        "attack 7D",
        "attack 6H 6S",
        "attack 6H 7D",
        "attack 6S 7D",
        "attack 6H 6S 7D",
    }
    run(g, "3: pass")
    assert g.table == [] and g.hand_size(2) == 9  # seat 0 (7H) was never asked
    assert (g.to_act_seat, g.attacker, g.defender) == (3, 3, 0)


def teams_after_bout_one() -> Game:
    g = teams()
    run(g, "1: attack 6C", "2: kill 6C 7S", "1: attack 6D 7C", "2: kill 6D 8D")
    run(g, "2: kill 7C 8C", "1: pass", "3: attack 6H 6S 7D")
    run(g, "2: kill 6H 8H", "2: kill 6S 8S", "2: kill 7D 9D")
    # Refill drained the stock: 1 drew JC JD QH, 3 drew JS KS AS, 2 the rest and QS last.
    assert g.stock_size == 0
    assert g.hand(2) == ["QC", "QD", "QS", "KC", "KD", "KH"]
    assert (g.to_act_seat, g.attacker, g.defender) == (2, 2, 3)
    return g


def test_d12_attack_skips_a_partner_to_the_next_opponent() -> None:
    g = teams_after_bout_one()
    run(g, "2: attack QC", "3: kill QC JS", "2: attack QD QS", "3: kill QD AD", "3: kill QS KS")
    run(g, "2: attack KC KD KH", "3: take")
    assert g.is_out(2) and not g.is_over
    assert (g.to_act_seat, g.attacker, g.defender) == (0, 0, 1)
    run(g, "0: attack 7H", "1: kill 7H 9S")
    assert g.to_act_seat == 0  # seat 2 is out, seat 3 is the defender's partner
    run(g, "0: pass")
    # Seat 1 held; its next seat still in is its partner 3, so it attacks seat 0.
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (1, "open", 1, 0)


def teams_after_bout_two() -> Game:
    g = teams_after_bout_one()
    run(g, "2: attack QC", "3: kill QC JS", "2: attack QD QS", "3: kill QD AD", "3: kill QS KS")
    run(g, "2: attack KC KD KH", "3: kill KC AC", "3: kill KD AS", "3: kill KH AH")
    assert g.is_out(2) and g.is_out(3) and not g.is_over  # one member of each team left
    assert (g.to_act_seat, g.attacker, g.defender) == (0, 0, 1)
    run(g, "0: attack 7H", "1: kill 7H 9S", "0: attack 9C 9H", "1: kill 9C 10S", "1: kill 9H JH")
    run(g, "0: attack 10C 10D 10H")
    return g


def test_d12_team_out_when_all_members_out_losers_are_the_team() -> None:
    g = teams_after_bout_two()
    run(g, "1: take")
    assert g.is_over
    assert list(g.loser_seats) == [1, 3]
    assert g.loser == 1  # the team's seat still holding cards


def test_d12_both_teams_out_is_a_draw() -> None:
    g = teams_after_bout_two()
    run(g, "1: kill 10C JC", "1: kill 10D JD", "1: kill 10H QH")
    assert g.is_over
    assert list(g.loser_seats) == [] and g.loser is None
