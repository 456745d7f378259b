"""Mustamaija rules MM1-MM7 (RULES.md section 3; seed 004), one focused situation per test.

Stacked Mustamaija deals (RULES C4, MM2) have no indicator at the deal: ``deck[5n]`` is the
top of the stock, and the trump is turned after the first attack. Unless a test says
otherwise the dealer is seat 0, so seat 1 attacks seat 2.
"""

from __future__ import annotations

import pytest
from rule_helpers import moves, refused, run

from moska_p2p.engine import DealError, Game, new_game
from moska_p2p.engine.scenario import stack_deck

RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
PACK52 = {r + s for r in RANKS for s in "CDHS"}


def deal(hands: dict[int, str], *, players: int = 4, dealer: int = 0, stock: str = "") -> Game:
    deck = stack_deck("mustamaija", players, hands, dealer=dealer, stock=stock.split())
    return new_game("mustamaija", players, deck=deck, dealer=dealer)


# Four players; the stock's top card 7H becomes the trump after the first attack.
FOUR_HANDS = {
    1: "2D 3D 6D 8S QS",
    2: "4D 9C 10C JC 2H",
    3: "2C 3C 4C 5C 6C",
    0: "7C 8C 2S 3S 4S",
}
FOUR_STOCK = "7H 6H 7D 8D 9H 10H"


def four() -> Game:
    return deal(FOUR_HANDS, stock=FOUR_STOCK)


# --------------------------------------------------------------------------------- MM1


def test_mm1_hands_of_five_from_the_52_card_pack() -> None:
    for players in range(2, 7):
        g = new_game("mustamaija", players, seed=players)
        cards = [c for s in range(players) for c in g.hand(s)]
        assert [g.hand_size(s) for s in range(players)] == [5] * players
        assert len(set(cards)) == 5 * players and set(cards) <= PACK52
        assert g.stock_size == 52 - 5 * players
    with pytest.raises(DealError):  # a 36-card deck is not a Mustamaija pack
        new_game("mustamaija", 4, deck=stack_deck("durak", 4, {}, indicator="AH"))


def test_mm1_no_throw_ins_defender_acts_again_and_bout_ends_by_itself() -> None:
    g = four()
    run(g, "1: attack 2D 3D", "2: kill 2D 4D")
    # A live card is left: the defender acts again; nobody else is asked.
    assert (g.to_act_seat, g.decision, g.table) == (2, "defend", [("2D", "4D"), ("3D", None)])
    run(g, "2: kill 3D 2H")
    # No live card: the bout ends at once. Seats 3 and 0 hold cards of the table's ranks
    # (2C 3C 4C, 2S 3S 4S) but nobody throws in: pairs discarded, the defender opens next.
    assert (g.to_act_seat, g.decision, g.table) == (2, "open", [])
    assert g.discard_size == 4


# --------------------------------------------------------------------------------- MM2


def test_mm2_no_trump_at_the_deal_dealers_left_attacks_its_left() -> None:
    g = deal(FOUR_HANDS, dealer=3, stock=FOUR_STOCK)
    assert g.trump_card is None
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (0, "open", 0, 1)
    assert g.stock_size == 32
    refused(g, "exchange", "no trump exchange")


def test_mm2_trump_turned_after_the_first_attack_before_the_attacker_refills() -> None:
    g = four()
    assert g.trump_card is None
    run(g, "1: attack 2D 3D")
    assert g.trump_card == "7H"
    # The attacker drew the two cards under the turned one; 7H stays in the stock, at
    # the bottom: 32 - 2.
    assert g.hand(1) == ["6D", "6H", "7D", "8S", "QS"]
    assert g.stock_size == 30
    # Hearts are trumps now: 2H beats both diamonds.
    assert moves(g) == {"kill 2D 4D", "kill 2D 2H", "kill 3D 4D", "kill 3D 2H", "take"}


def test_mm2_turned_spades_go_to_the_bottom_until_a_non_spade() -> None:
    g = deal(FOUR_HANDS, stock="KS 5S 9D 6H 7D 8D")
    run(g, "1: attack 2D 3D")
    assert g.trump_card == "9D"
    assert g.hand(1) == ["6D", "6H", "7D", "8S", "QS"]  # drawn from under 9D
    assert g.stock_size == 30
    # Diamonds are trumps: only higher diamonds beat the attack now, 2H no longer does.
    assert moves(g) == {"kill 2D 4D", "kill 3D 4D", "take"}


# A six-player deal that empties the stock in three bouts. Turned first: 4S (buried), then 2H
# (trumps hearts). Seat 1 draws 7D-JD, seat 2 draws 2D-6D and later QD KD AD QS AS, seat 3
# draws 2S 3S 5S 6S 7S; the buried 4S and the indicator 2H come last.
SIX_HANDS = {
    1: "2C 3C 4C 5C 6C",
    2: "3H 4H 5H 6H 7H",
    3: "8H 9H 10H JH QH",
    4: "8S 9S 10S JS KS",
    5: "7C 8C 9C 10C JC",
    0: "QC KC AC KH AH",
}
SIX_STOCK = "4S 2H 7D 8D 9D 10D JD 2D 3D 4D 5D 6D QD KD AD QS AS 2S 3S 5S 6S 7S"


def six_after_two_bouts() -> Game:
    g = deal(SIX_HANDS, players=6, stock=SIX_STOCK)
    assert g.stock_size == 22
    run(g, "1: attack 2C 3C 4C 5C 6C")
    assert g.trump_card == "2H"
    assert g.hand(1) == ["7D", "8D", "9D", "10D", "JD"]
    run(g, "2: kill 2C 3H", "2: kill 3C 4H", "2: kill 4C 5H", "2: kill 5C 6H", "2: kill 6C 7H")
    assert (g.to_act_seat, g.defender, g.stock_size) == (2, 3, 12)
    run(g, "2: attack 2D 3D 4D 5D 6D")
    run(g, "3: kill 2D 8H", "3: kill 3D 9H", "3: kill 4D 10H", "3: kill 5D JH", "3: kill 6D QH")
    assert g.hand(2) == ["QD", "QS", "KD", "AD", "AS"]
    assert g.hand(3) == ["2S", "3S", "5S", "6S", "7S"]
    assert (g.to_act_seat, g.defender, g.stock_size) == (3, 4, 2)
    return g


def test_mm2_buried_spades_are_drawn_just_before_the_indicator() -> None:
    g = six_after_two_bouts()
    run(g, "3: attack 2S")
    assert g.hand(3) == ["3S", "4S", "5S", "6S", "7S"]  # 4S, buried, comes before 2H
    assert g.stock_size == 1
    assert g.trump_card == "2H"


def six_after_three_bouts() -> Game:
    g = six_after_two_bouts()
    run(g, "3: attack 2S 3S 5S 6S 7S")
    assert g.hand(3) == ["2H", "4S"]  # the indicator is the very last card drawn
    assert g.stock_size == 0
    run(g, "4: kill 2S 8S", "4: kill 3S 9S", "4: kill 5S 10S", "4: kill 6S JS")
    assert not g.is_out(4)  # one card left, facing a live card
    run(g, "4: kill 7S KS")
    assert g.is_out(4)
    return g


def test_mm6_defender_who_covered_all_but_is_out_next_seat_attacks() -> None:
    g = six_after_three_bouts()
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (5, "open", 5, 0)


# --------------------------------------------------------------------------------- MM3


def test_mm3_an_attack_is_one_or_more_cards_of_one_suit() -> None:
    g = four()
    assert moves(g) == {
        "attack 2D",
        "attack 3D",
        "attack 6D",
        "attack 2D 3D",
        "attack 2D 6D",
        "attack 3D 6D",
        "attack 2D 3D 6D",
        "attack 8S",
        "attack QS",
        "attack 8S QS",
    }
    refused(g, "attack 2D 8S", "single suit")
    assert g.trump_card is None  # a refused attack turns no trump


def test_mm3_with_the_stock_empty_attack_at_most_the_defenders_hand() -> None:
    g = six_after_three_bouts()
    run(g, "5: attack 7C 8C 9C 10C")
    run(g, "0: kill 7C QC", "0: kill 8C KC", "0: kill 9C AC", "0: kill 10C KH")
    run(g, "0: attack AH")  # seat 0 lays its last card: out at once
    assert g.is_out(0)
    run(g, "1: take")
    # Seat 1 took, so seat 2 attacks seat 3, who holds two cards.
    assert (g.to_act_seat, g.attacker, g.defender, g.hand_size(3)) == (2, 2, 3, 2)
    assert moves(g) == {
        "attack QD",
        "attack KD",
        "attack AD",
        "attack QD KD",
        "attack QD AD",
        "attack KD AD",
        "attack QS",
        "attack AS",
        "attack QS AS",
    }
    refused(g, "attack QD KD AD", "allows 2")


# --------------------------------------------------------------------------------- MM4


def test_mm4_queen_of_spades_beats_nothing() -> None:
    hands = {1: "2S 3S 2C 3C 4C", 0: "QS 5C 6C 7C 8D"}
    g = deal(hands, players=2, stock="9H")
    run(g, "1: attack 2S 3S")
    assert g.trump_card == "9H"
    assert moves(g) == {"take"}  # QS outranks both spades, yet beats neither
    refused(g, "kill 2S QS", "does not beat")


def test_mm4_nothing_beats_the_queen_of_spades_not_even_a_trump() -> None:
    hands = {1: "2S QS 2C 3C 4C", 0: "KS AS AH 2H 5C"}
    g = deal(hands, players=2, stock="9H")
    run(g, "1: attack 2S QS")
    assert moves(g) == {"kill 2S KS", "kill 2S AS", "kill 2S 2H", "kill 2S AH", "take"}
    refused(g, "kill QS KS", "does not beat")
    refused(g, "kill QS AH", "does not beat")
    run(g, "0: kill 2S 2H", "0: take")
    assert "QS" in g.hand(0)
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (1, "open", 1, 0)


# --------------------------------------------------------------------------------- MM5


def test_mm5_attacker_refills_to_five_right_after_attacking() -> None:
    g = four()
    run(g, "1: attack 2D 3D 6D")
    assert (g.to_act_seat, g.decision) == (2, "defend")
    assert g.hand(1) == ["6H", "7D", "8D", "8S", "QS"]
    assert g.stock_size == 32 - 3


def test_mm5_covered_pairs_discarded_defender_takes_the_rest_and_refills() -> None:
    g = four()
    run(g, "1: attack 2D 3D 6D", "2: kill 2D 4D", "2: kill 3D 2H")
    assert moves(g) == {"take"}
    run(g, "2: take")
    assert g.table == []
    assert g.discard_size == 4  # the two covered pairs
    # The defender keeps 9C 10C JC, takes the uncovered 6D and draws 9H up to five.
    assert g.hand(2) == ["6D", "9C", "9H", "10C", "JC"]
    assert g.stock_size == 32 - 3 - 1


def test_mm5_defender_covers_one_card_at_a_time() -> None:
    g = four()
    run(g, "1: attack 2D 3D")
    refused(g, "kill 2D 9C", "does not beat")
    refused(g, "kill 8S 2H", "not a live attack card")
    run(g, "2: kill 2D 4D")
    refused(g, "kill 2D 2H", "not a live attack card")  # already covered
    assert g.table == [("2D", "4D"), ("3D", None)]


# --------------------------------------------------------------------------------- MM6


def test_mm6_all_covered_defender_attacks_next_and_refills() -> None:
    g = four()
    run(g, "1: attack 2D 3D", "2: kill 2D 4D", "2: kill 3D 2H")
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (2, "open", 2, 3)
    assert g.hand(2) == ["8D", "9C", "9H", "10C", "JC"]  # refilled from the stock


def test_mm6_defender_who_took_is_skipped() -> None:
    g = four()
    run(g, "1: attack 2D 3D", "2: kill 2D 4D", "2: take")
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (3, "open", 3, 0)
    assert g.hand(2) == ["2H", "3D", "9C", "10C", "JC"]  # five: nothing to draw


# --------------------------------------------------------------------------------- MM7


def test_mm7_an_empty_hand_leaves_play_at_once() -> None:
    g = six_after_three_bouts()
    run(g, "5: attack 7C 8C 9C 10C JC")
    # Seat 5 laid its last cards with the stock empty: it is out before seat 0 answers.
    assert g.is_out(5) and g.hand_size(5) == 0
    assert (g.to_act_seat, g.decision, g.is_over) == (0, "defend", False)
    run(g, "0: kill 7C QC", "0: kill 8C KC", "0: kill 9C AC", "0: kill 10C KH", "0: kill JC AH")
    assert g.is_out(0)
    assert (g.to_act_seat, g.attacker, g.defender) == (1, 1, 2)


def test_mm7_the_last_player_holding_cards_loses() -> None:
    g = six_after_three_bouts()
    run(g, "5: attack 7C 8C 9C 10C JC")
    run(g, "0: kill 7C QC", "0: kill 8C KC", "0: kill 9C AC", "0: kill 10C KH", "0: kill JC AH")
    run(g, "1: attack 7D 8D 9D 10D JD")
    assert g.is_out(1)
    run(g, "2: kill 7D QD", "2: kill 8D KD", "2: kill 9D AD")
    assert moves(g) == {"take"}  # QS covers nothing, AS is no trump
    run(g, "2: take")
    assert g.hand(2) == ["10D", "JD", "QS", "AS"]
    assert (g.to_act_seat, g.defender) == (3, 2)
    run(g, "3: attack 2H", "2: take")
    assert (g.to_act_seat, g.defender) == (3, 2)
    # Seat 3 lays its last card: only seat 2 holds cards, so it has lost at once, although
    # AS could cover 4S.
    run(g, "3: attack 4S")
    assert g.is_over and g.to_act_seat < 0
    assert g.loser == 2 and list(g.loser_seats) == [2]


# ----------------------------------------------------------------------- seed 004 example


def test_mm_worked_example_from_the_seed() -> None:
    """Seed 004: clubs trump; 6H 10H covered by 8H and 3C; the defender attacks next;
    the queen of spades could cover neither."""
    hands = {1: "6H 10H 2D 3D 4D", 0: "8H 3C QS 7D 8D"}
    g = deal(hands, players=2, stock="5C 9S 10S JD QD")
    run(g, "1: attack 6H 10H")
    assert g.trump_card == "5C"
    assert g.hand(1) == ["2D", "3D", "4D", "9S", "10S"]
    assert moves(g) == {"kill 6H 8H", "kill 6H 3C", "kill 10H 3C", "take"}
    refused(g, "kill 6H QS", "does not beat")
    refused(g, "kill 10H QS", "does not beat")
    run(g, "0: kill 6H 8H", "0: kill 10H 3C")
    assert g.table == [] and g.discard_size == 4
    assert g.hand(0) == ["7D", "8D", "JD", "QD", "QS"]  # refilled to five
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (0, "open", 0, 1)
