"""Common rules C1-C7 and base Moska M1-M13 (preset ``moska``, default options).

Every test names the rule it checks. Situations are built with stacked decks (C4) so the
expected outcomes are computed by hand from RULES.md and seed 000, never from the engine.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from moska_p2p.cards import parse_card
from moska_p2p.engine import DealError, Game, IllegalMove, new_game
from moska_p2p.engine.scenario import stack_deck

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
ALL_CARDS = [r + s for r in RANKS for s in "CDHS"]


# ------------------------------------------------------------------------------ helpers


def legal(g: Game, kind: str | None = None) -> set[str]:
    return {str(m) for m in g.legal_moves(kind)}


def canon(cards: str) -> list[str]:
    """Card texts in canonical order (rank, then suit C D H S), as ``Game.hand`` gives them."""
    return sorted(cards.split(), key=parse_card)


def snapshot(g: Game) -> tuple[Any, ...]:
    return (
        g.to_act_seat,
        g.decision,
        g.attacker,
        g.defender,
        [g.hand(s) for s in range(len(g.hand_sizes()))],
        g.table,
        g.stock_size,
        g.discard_size,
        g.trump_card,
        len(g.history),
    )


def assert_illegal(g: Game, move: str, match: str | None = None) -> None:
    """The move is refused with IllegalMove and the game is left unchanged."""
    before = snapshot(g)
    with pytest.raises(IllegalMove, match=match):
        g.play(move)
    assert snapshot(g) == before


def pass_round(g: Game) -> list[int]:
    """Everyone asked in the current throw-in/giving round passes; returns who was asked."""
    asked = []
    while g.decision in ("throw-in", "give"):
        seat = g.to_act_seat
        assert seat is not None
        asked.append(seat)
        g.play("pass")
    return asked


# Seed 000 "Example of a Bout": West=0, North=1, East=2, South=3, dealer South, diamonds trump.
WEST, NORTH, EAST, SOUTH = 0, 1, 2, 3
SEED_HANDS = {
    WEST: "3H 3S 7S 2C 4C 6C",
    NORTH: "3D 5D 10C KC 7H AH",
    EAST: "7C 5C 10H 3C 8C 9C",
    SOUTH: "5S 5H 4H 6H JC QC",
}
SEED_STOCK = ["8H", "8S", "9H", "9S", "JH", "JS", "QH", "QS", "KH", "KS", "AC", "AS", "4S", "6S"]


def seed_game() -> Game:
    deck = stack_deck("moska", 4, SEED_HANDS, dealer=SOUTH, indicator="JD", stock=SEED_STOCK)
    return new_game("moska", 4, deck=deck, dealer=SOUTH)


def seed_example() -> Game:
    """Play the seed's bout up to "The table in front of North now looks like this".

    C7: throw-ins come in rounds only while no live card is on the table, principal attacker
    first, so West passes the first round, East throws in 7C, North kills it, and West throws
    in 7S in the next round.
    """
    g = seed_game()
    g.play("attack 3H 3S")
    g.play("kill 3H 7H")
    g.play("kill 3S 3D")
    g.play("pass")  # West
    g.play("attack 7C")  # East
    g.play("kill 7C 10C")
    g.play("attack 7S")  # West
    return g


def six_player_drain(
    hands: dict[int, str], bottom: str, stock: list[str] | None = None, **options: Any
) -> Game:
    """Six players, dealer 0, trumps hearts (indicator 2H): three bouts empty the stock.

    Seat 1 opens six cards at seat 2, who takes; seat 3 opens six at seat 4, who takes; seat 5
    is then to open at seat 0 holding 8C 8D 9C 9D 10C 10D, with 4 cards left in the stock
    (``bottom`` and the indicator, drawn last).
    """
    base = {1: "2C 2D 3C 3D 4C 4D", 3: "5C 5D 6C 6D 7C 7D", 5: "8C 8D 9C 9D 10C 10D"}
    deck = stack_deck(
        "moska",
        6,
        base | hands,
        dealer=0,
        indicator="2H",
        stock=stock or [],
        stock_bottom=bottom.split(),
    )
    g = new_game("moska", 6, deck=deck, dealer=0, **options)
    g.play("attack 2C 2D 3C 3D 4C 4D")
    g.play("take")
    pass_round(g)
    g.play("attack 5C 5D 6C 6D 7C 7D")
    g.play("take")
    pass_round(g)
    assert (g.to_act_seat, g.decision, g.defender, g.stock_size) == (5, "open", 0, 4)
    return g


ENDGAME_HANDS = {
    0: "JC JD QC QD KC KD",
    2: "3H 4H 5H 6H 7H AH",
    4: "8H 9H 10H JH QH KH",
}
ENDGAME_STOCK = ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "JS", "QS", "KS"]


def endgame() -> Game:
    """The six-player drain, then seat 0 kills all six cards of seat 5's opening with its last
    six cards while the stock is empty: seat 0 is out (M13) and seat 1 attacks seat 2 (M11)."""
    g = six_player_drain(ENDGAME_HANDS, "AC AD AS", stock=ENDGAME_STOCK)
    g.play("attack 8C 8D 9C 9D 10C 10D")
    for kill in ("8C JC", "8D JD", "9C QC", "9D QD", "10C KC", "10D KD"):
        g.play("kill " + kill)
    return g


# ------------------------------------------------------------------------- C2 seats, left


def test_c2_defender_is_next_seat_clockwise() -> None:
    """C2/M5: seats are clockwise; the defender is the attacker's left (next seat)."""
    for players in range(2, 7):
        for dealer in range(players):
            g = new_game("moska", players, seed=players * 10 + dealer, dealer=dealer)
            assert g.attacker == (dealer + 1) % players
            assert g.defender == (dealer + 2) % players


def test_c2_left_skips_seats_that_are_out() -> None:
    """C2: with seat 0 out, rounds skip it, and the left of seat 5 is seat 1: when seat 5
    takes, seat 1 attacks (M12) and its left, seat 2, defends."""
    g = endgame()
    g.play("attack 2S")  # seat 1 at seat 2
    g.play("kill 2S AH")
    assert pass_round(g) == [1, 3, 4, 5]  # seat 5 passes here, keeps its cards
    # beaten off: seat 2 attacks seat 3
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (2, "open", 2, 3)
    g.play("attack 2C")
    g.play("take")
    assert pass_round(g) == [2, 4, 5, 1]  # C7 order, seat 0 (out) never asked
    # seat 4 attacks seat 5
    assert (g.to_act_seat, g.attacker, g.defender) == (4, 4, 5)
    g.play("attack 5C")
    g.play("take")
    pass_round(g)
    # seat 5 took: its left (skipping out seat 0) attacks, and that seat's left defends
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (1, "open", 1, 2)


# --------------------------------------------------------------------------- C3 beating


def test_c3_same_suit_higher_or_any_trump_beats_a_non_trump() -> None:
    """C3: 9H (trump D) is beaten by 10H, AH and any diamond; not by 8H, 9S or KC."""
    deck = stack_deck(
        "moska", 4, {0: "9H 2C 4C 6C 8C 9C", 1: "8H 10H AH 3D 9S KC"}, dealer=3, indicator="JD"
    )
    g = new_game("moska", 4, deck=deck, dealer=3)
    g.play("attack 9H")
    assert legal(g) == {"kill 9H 10H", "kill 9H AH", "kill 9H 3D", "take"}
    assert_illegal(g, "kill 9H 8H", match="C3")
    assert_illegal(g, "kill 9H 9S", match="C3")
    assert_illegal(g, "kill 9H KC", match="C3")


def test_c3_a_trump_is_beaten_only_by_a_higher_trump() -> None:
    """C3: 5D (trump D) is beaten by 6D and AD only; 4D, AS, AC do not beat it."""
    deck = stack_deck(
        "moska", 4, {0: "5D 2C 4C 6C 8C 9C", 1: "4D 6D AD AS AC KH"}, dealer=3, indicator="JD"
    )
    g = new_game("moska", 4, deck=deck, dealer=3)
    g.play("attack 5D")
    assert legal(g) == {"kill 5D 6D", "kill 5D AD", "take"}
    assert_illegal(g, "kill 5D 4D", match="C3")
    assert_illegal(g, "kill 5D AS", match="C3")


# ------------------------------------------------------------------------ C4 stacked deal


def shuffled_pack(seed: int) -> list[str]:
    deck = list(ALL_CARDS)
    random.Random(seed).shuffle(deck)
    return deck


def dealt(deck: list[str], players: int, dealer: int, seat: int) -> list[str]:
    """C4: the cards of ``deck`` dealt to ``seat``: one at a time from the dealer's left."""
    return [deck[i] for i in range(6 * players) if (dealer + 1 + i) % players == seat]


def test_c4_cards_dealt_one_at_a_time_from_the_dealers_left() -> None:
    """C4: deck[i] goes to seat (dealer+1+i) % n; deck[24] is the indicator; the stock is the
    rest with deck[25] on top; the stock size counts the indicator."""
    deck = shuffled_pack(1)
    g = new_game("moska", 4, deck=deck, dealer=2)
    for seat in range(4):
        assert g.hand(seat) == canon(" ".join(dealt(deck, 4, 2, seat)))
    assert g.trump_card == deck[24]
    assert g.stock_size == 28
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (3, "open", 3, 0)
    # the attacker opens with one card and draws deck[25], the top of the stock (M8)
    card = g.hand(3)[0]
    g.play("attack " + card)
    kept = [c for c in dealt(deck, 4, 2, 3) if c != card]
    assert g.hand(3) == canon(" ".join([*kept, deck[25]]))
    assert g.stock_size == 27


def test_c4_dealer_is_seat_0_unless_given() -> None:
    """C4: with no dealer given, seat 0 deals: seat 1 gets deck[0] and attacks first (M5)."""
    deck = shuffled_pack(2)
    g = new_game("moska", 3, deck=deck)
    assert g.dealer == 0
    assert g.hand(1) == canon(" ".join(dealt(deck, 3, 0, 1)))
    assert deck[0] in g.hand(1)
    assert (g.attacker, g.defender, g.to_act_seat) == (1, 2, 1)
    assert g.trump_card == deck[18]
    assert g.stock_size == 52 - 18


def test_c4_deck_missing_a_card_is_refused() -> None:
    """C4: a stacked deck without every card is refused with a DealError naming the card."""
    deck = shuffled_pack(3)
    deck.remove("QS")
    with pytest.raises(DealError, match="QS") as info:
        new_game("moska", 4, deck=deck)
    assert isinstance(info.value, ValueError)


def test_c4_deck_with_a_duplicate_card_is_refused() -> None:
    """C4: a deck holding a card twice (and so lacking another) is refused, naming it."""
    deck = shuffled_pack(4)
    i, j = deck.index("7H"), deck.index("2C")
    deck[j] = deck[i]  # 7H twice, 2C missing
    with pytest.raises(DealError, match="7H"):
        new_game("moska", 4, deck=deck)


def test_c4_same_seed_same_game() -> None:
    """C4: a game from a seed is the same on every run."""
    a = new_game("moska", 5, seed=1234)
    b = new_game("moska", 5, seed=1234)
    assert a.dealer == b.dealer
    assert [a.hand(s) for s in range(5)] == [b.hand(s) for s in range(5)]
    assert a.trump_card == b.trump_card


# ---------------------------------------------------------------------- C5 one decision


def test_c5_opener_may_not_pass() -> None:
    """C5: the opener of a bout may not pass."""
    g = seed_game()
    assert "pass" not in legal(g)
    assert_illegal(g, "pass", match="C5")


def test_c5_defender_may_not_pass() -> None:
    """C5/M9: a defender facing live cards kills or takes; it may not pass."""
    g = seed_game()
    g.play("attack 3H 3S")
    assert "pass" not in legal(g)
    assert_illegal(g, "pass")


def test_c5_seat_with_nothing_to_do_has_only_pass() -> None:
    """C5: a seat asked in a throw-in round with no card to add is offered exactly [pass]."""
    g = seed_example()
    g.play("kill 7S 5D")
    assert (g.to_act_seat, g.decision) == (WEST, "throw-in")
    assert [str(m) for m in g.legal_moves()] == ["pass"]


def test_c5_only_the_seat_to_act_may_move() -> None:
    """C5: exactly one seat acts; a move claimed for another seat is refused."""
    g = seed_game()
    assert g.to_act_seat == WEST
    before = snapshot(g)
    with pytest.raises(IllegalMove):
        g.play("kill 3H 7H", seat=NORTH)
    assert snapshot(g) == before


# ------------------------------------------------------------------ C7 priority order


def test_c7_throw_in_order_principal_attacker_then_from_defenders_left() -> None:
    """C7: five players, attacker 2, defender 3: a throw-in round asks 2, 4, 0, 1 (never 3)."""
    deck = stack_deck(
        "moska", 5, {2: "5C 2D 2H 2S 3D 3H", 3: "9C 4D 4H 4S 6D 6H"}, dealer=1, indicator="JS"
    )
    g = new_game("moska", 5, deck=deck, dealer=1)
    g.play("attack 5C")
    g.play("kill 5C 9C")
    assert pass_round(g) == [2, 4, 0, 1]
    # all passed: beaten off, the defender attacks its left (M11)
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (3, "open", 3, 4)


def test_c7_round_restarts_at_principal_attacker_after_a_card_is_added() -> None:
    """C7: West passes, East throws 7C; after North kills it, the next round asks West first."""
    g = seed_game()
    g.play("attack 3H 3S")
    g.play("kill 3H 7H")
    g.play("kill 3S 3D")
    assert (g.to_act_seat, g.decision) == (WEST, "throw-in")
    g.play("pass")
    assert (g.to_act_seat, g.decision) == (EAST, "throw-in")
    g.play("attack 7C")
    assert (g.to_act_seat, g.decision) == (NORTH, "defend")
    g.play("kill 7C 10C")
    assert (g.to_act_seat, g.decision) == (WEST, "throw-in")


def test_c7_seat_without_cards_is_not_asked() -> None:
    """C7/M13: a seat that laid its last cards is out and no longer asked; nor is an out seat."""
    g = endgame()
    g.play("attack 2S")  # seat 1 at seat 2 (stock empty)
    g.play("kill 2S AH")
    assert g.to_act_seat == 1
    g.play("pass")
    g.play("pass")  # seat 3
    g.play("pass")  # seat 4
    assert g.to_act_seat == 5
    g.play("attack AS 2H AC AD")  # seat 5 lays its last four cards
    assert g.is_out(5) and g.hand_size(5) == 0
    assert (g.to_act_seat, g.decision) == (2, "defend")
    g.play("kill 2H 3H")
    g.play("kill AC 4H")
    g.play("kill AD 5H")
    g.play("kill AS 6H")
    # one card of room left (5 of 6 used); round: 1, 3, 4; out seats 5 and 0 are skipped
    assert g.bout_count == 5
    assert pass_round(g) == [1, 3, 4]
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (2, "open", 2, 3)


def test_c7_giving_round_wraps_until_all_pass_in_a_row() -> None:
    """C7/M12: seed branch 3: West passes, East gives 10H, then South, West and East are asked
    again (wrapping round) before North picks up."""
    g = seed_example()
    g.play("take")
    asked = [g.to_act_seat]
    g.play("pass")  # West
    asked.append(g.to_act_seat)
    g.play("attack 10H")  # East
    asked += pass_round(g)
    assert asked == [WEST, EAST, SOUTH, WEST, EAST]


def test_c7_no_round_when_limit_is_used_up() -> None:
    """C7/M6: a take after all L cards were laid runs no giving round: next bout at once."""
    deck = stack_deck("moska", 6, {1: "2C 2D 3C 3D 4C 4D"}, dealer=0, indicator="2H")
    g = new_game("moska", 6, deck=deck, dealer=0)
    g.play("attack 2C 2D 3C 3D 4C 4D")
    g.play("take")
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (3, "open", 3, 4)
    assert g.hand_size(2) == 12


# ------------------------------------------------------------------- M1, M3, M5 basics


@pytest.mark.parametrize("players", [2, 3, 4, 5, 6])
def test_m1_52_cards_hands_of_six(players: int) -> None:
    """M1: 52 cards, hands of 6; the stock holds the rest (with the indicator, C4)."""
    g = new_game("moska", players, seed=players)
    assert g.hand_sizes() == [6] * players
    assert g.stock_size == 52 - 6 * players
    cards = [c for s in range(players) for c in g.hand(s)]
    assert len(set(cards)) == 6 * players
    assert g.trump_card not in cards


@pytest.mark.parametrize("players", [1, 7])
def test_m1_two_to_six_players(players: int) -> None:
    """M1: Moska is for 2 to 6 players."""
    with pytest.raises(ValueError):
        new_game("moska", players, seed=1)


def test_m2_first_dealer_drawn_from_the_seed() -> None:
    """M2: with no dealer given, the seed picks it: in range, the same for the same seed, and
    not always the same seat; the dealer's left opens (M5)."""
    dealers = set()
    for seed in range(20):
        g = new_game("moska", 4, seed=seed)
        assert g.dealer == new_game("moska", 4, seed=seed).dealer
        assert g.to_act_seat == g.attacker == (g.dealer + 1) % 4
        dealers.add(g.dealer)
    assert dealers <= {0, 1, 2, 3}
    assert len(dealers) > 1


def test_m3_indicator_is_drawn_last() -> None:
    """M3: the indicator 2H is the last card drawn: seat 5's refill empties the stock with it."""
    g = six_player_drain({}, "JH JS QS")
    g.play("attack 8C 8D 9C 9D 10C 10D")
    assert g.stock_size == 0
    assert g.hand(5) == canon("JH JS QS 2H")


def test_m5_first_attacker_is_dealers_left() -> None:
    """M5: dealer 3 of 4: seat 0 opens against seat 1."""
    g = seed_game()
    assert (g.dealer, g.to_act_seat, g.decision, g.attacker, g.defender) == (3, 0, "open", 0, 1)


# ---------------------------------------------------------------- M4 trump exchange


def exchange_game() -> Game:
    """Four players, dealer 3, trumps diamonds (KD); West holds 2D, the low trump."""
    deck = stack_deck(
        "moska",
        4,
        {0: "2D 5C 6C 7C 8C 9C", 1: "3S 4S 5S 6S 7S 8S", 2: "5H 9S 10S JS QS KS"},
        dealer=3,
        indicator="KD",
        stock="AC AS",
    )
    return new_game("moska", 4, deck=deck, dealer=3)


def test_m4_exchange_on_own_opening_then_still_opens() -> None:
    """M4: the holder of the 2 of trumps exchanges on its decision: KD to hand, 2D under the
    stock; it is not its move: it still opens."""
    g = exchange_game()
    assert "exchange" in legal(g)
    g.play("exchange")
    assert g.hand(0) == canon("5C 6C 7C 8C 9C KD")
    assert g.trump_card == "2D"
    assert g.stock_size == 28
    assert (g.to_act_seat, g.decision) == (0, "open")
    assert "exchange" not in legal(g)
    assert_illegal(g, "exchange")
    g.play("attack 5C")
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert g.hand(0) == canon("6C 7C 8C 9C KD AC")


def test_m4_exchange_only_by_the_holder_on_its_own_decision() -> None:
    """M4: a seat without the 2 of trumps may not exchange; nor the holder out of turn."""
    g = exchange_game()
    g.play("attack 5C")
    assert "exchange" not in legal(g)
    assert_illegal(g, "exchange", match="M4")
    before = snapshot(g)
    with pytest.raises(IllegalMove):
        g.play("exchange", seat=0)
    assert snapshot(g) == before


def test_m4_exchange_while_defending_then_kill_with_old_indicator() -> None:
    """M4: the defender holding 2D exchanges on its defend decision and kills with KD."""
    deck = stack_deck(
        "moska", 4, {0: "5C 6C 7C 8C 9C 10C", 1: "2D 3S 4S 5S 6S 7S"}, dealer=3, indicator="KD"
    )
    g = new_game("moska", 4, deck=deck, dealer=3)
    g.play("attack 5C")
    assert legal(g) == {"take", "exchange", "kill 5C 2D"}
    g.play("exchange")
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert legal(g) == {"take", "kill 5C KD"}
    g.play("kill 5C KD")
    assert g.table == [("5C", "KD")]


def test_m4_exchange_during_a_throw_in_round() -> None:
    """M4: East, holding 2D, exchanges when asked in a throw-in round, then still decides."""
    deck = stack_deck(
        "moska",
        4,
        {0: "5C 6C 7C 8C 9C 10C", 1: "JC 3S 4S 5S 6S 8S", 2: "2D 5H 9S 10S JS QS"},
        dealer=3,
        indicator="KD",
    )
    g = new_game("moska", 4, deck=deck, dealer=3)
    g.play("attack 5C")
    g.play("kill 5C JC")
    g.play("pass")  # West
    assert (g.to_act_seat, g.decision) == (2, "throw-in")
    assert legal(g) == {"pass", "attack 5H", "attack JS", "attack 5H JS", "exchange"}
    g.play("exchange")
    assert (g.to_act_seat, g.decision) == (2, "throw-in")
    assert legal(g) == {"pass", "attack 5H", "attack JS", "attack 5H JS"}
    assert "KD" in g.hand(2) and "2D" not in g.hand(2)
    g.play("attack 5H")
    assert (g.to_act_seat, g.decision) == (1, "defend")


def test_m4_exchanged_two_is_the_bottom_and_drawn_last() -> None:
    """M4/M3: after the exchange 2H lies under the stock and is the last card drawn."""
    hands = {1: "2H 3C 3D 4C 4D 2C", 3: "5C 5D 6C 6D 7C 7D", 5: "8C 8D 9C 9D 10C 10D"}
    deck = stack_deck(
        "moska", 6, hands, dealer=0, indicator="KH", stock_bottom=["AC", "AD", "AS", "QS", "JS"]
    )
    g = new_game("moska", 6, deck=deck, dealer=0)
    g.play("exchange")
    assert g.trump_card == "2H" and "KH" in g.hand(1)
    g.play("attack 3C 3D 4C 4D")  # 4 of 6: seat 1 draws 4
    g.play("take")
    pass_round(g)
    g.play("attack 5C 5D 6C 6D 7C 7D")
    g.play("take")
    assert (g.to_act_seat, g.stock_size) == (5, 6)
    g.play("attack 8C 8D 9C 9D 10C 10D")
    assert g.stock_size == 0
    assert g.hand(5) == canon("AC AD AS QS JS 2H")


# --------------------------------------------------------------------- M6 bout limit


def test_m6_limit_is_six_with_a_big_hand_and_counts_killed_cards() -> None:
    """M6: the defender holds 12, L = 6; five cards laid (killed or not) leave room for one."""
    g = endgame()
    assert g.hand_size(2) == 12
    assert g.bout_limit == 6
    g.play("attack 2S")
    g.play("kill 2S AH")
    for _ in range(3):
        g.play("pass")
    g.play("attack AS 2H AC AD")
    g.play("kill 2H 3H")
    g.play("kill AC 4H")
    assert g.bout_count == 5
    g.play("kill AD 5H")
    g.play("kill AS 6H")
    # seat 1 holds 3S..7S: ranks 3,4,5,6 were played (killing cards); only one card fits
    assert g.to_act_seat == 1
    assert legal(g) == {"pass", "attack 3S", "attack 4S", "attack 5S", "attack 6S"}
    assert_illegal(g, "attack 3S 4S", match="M6")
    g.play("attack 6S")
    g.play("kill 6S 7H")
    # six used: the bout is beaten off without another round (M11)
    assert (g.to_act_seat, g.decision, g.attacker) == (2, "open", 2)


def test_m6_limit_is_the_defenders_hand_when_below_six() -> None:
    """M6: seat 5 defends holding 4 cards: L = 4; a six-card opening is refused."""
    g = endgame()
    g.play("attack 2S")  # seat 1 at seat 2
    g.play("take")
    assert pass_round(g) == [1, 3, 4, 5]
    g.play("attack 8S")  # seat 3 at seat 4
    g.play("kill 8S 8H")
    pass_round(g)
    assert (g.to_act_seat, g.attacker, g.defender) == (4, 4, 5)
    assert g.hand_size(5) == 4
    assert g.bout_limit == 4
    assert_illegal(g, "attack 5C 5D 6C 6D 7C 7D", match="M6")
    assert max(len(m.cards) for m in g.legal_moves("attack")) == 4
    g.play("attack 5C 5D 6C 6D")
    assert g.table == [("5C", None), ("5D", None), ("6C", None), ("6D", None)]


# -------------------------------------------------------------------- M7 openings


def opening_game(west: str) -> Game:
    deck = stack_deck(
        "moska", 4, {0: west, 1: "3S 4S 5S 7S 8S 9S"}, dealer=3, indicator="KD", stock="QS AS"
    )
    return new_game("moska", 4, deck=deck, dealer=3)


def test_m7_every_legal_opening() -> None:
    """M7: single cards, attack deck, and unions of equal-rank groups of two or more."""
    g = opening_game("5C 5D 8H 6C 6D 6H")
    assert legal(g) == {
        "attack 5C",
        "attack 5D",
        "attack 6C",
        "attack 6D",
        "attack 6H",
        "attack 8H",
        "attack deck",
        "attack 5C 5D",
        "attack 6C 6D",
        "attack 6C 6H",
        "attack 6D 6H",
        "attack 6C 6D 6H",
        "attack 5C 5D 6C 6D",
        "attack 5C 5D 6C 6H",
        "attack 5C 5D 6D 6H",
        "attack 5C 5D 6C 6D 6H",
    }


def test_m7_unmatched_card_in_a_group_opening_is_refused() -> None:
    """M7: never "5C 5D 8H" (one 8 alone); nor two unrelated singles."""
    g = opening_game("5C 5D 8H 6C 6D 6H")
    assert_illegal(g, "attack 5C 5D 8H", match="M7")
    assert_illegal(g, "attack 5C 8H", match="M7")
    assert_illegal(g, "attack 9S")  # not in hand


def test_m7_two_groups_opening_in_any_order() -> None:
    """M7/C6: "6C 6D 6H 2S 2D" is a legal opening; it is laid in canonical order."""
    g = opening_game("2D 2S 6C 6D 6H 9C")
    played = g.play("attack 6H 2S 6C 2D 6D")
    assert str(played) == "attack 2D 2S 6C 6D 6H"
    assert g.table == [(c, None) for c in ["2D", "2S", "6C", "6D", "6H"]]
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert g.hand_size(0) == 6  # 9C and five drawn at once (M8), stock top first
    assert {"9C", "QS", "AS"} <= set(g.hand(0))
    assert g.stock_size == 28 - 5


def test_m7_pair_opening_and_refill() -> None:
    """M7/M8: "3H 3S" is a legal opening; the attacker at once draws two from the stock top."""
    g = seed_game()
    g.play("attack 3H 3S")
    assert g.table == [("3H", None), ("3S", None)]
    assert g.hand(WEST) == canon("7S 2C 4C 6C 8H 8S")
    assert g.stock_size == 26


def test_m7_attack_deck_turns_the_top_stock_card() -> None:
    """M7 (b): the top stock card QS becomes the single attack card; the attacker still holds
    six cards and draws nothing (M8)."""
    g = opening_game("5C 5D 8H 6C 6D 6H")
    g.play("attack deck")
    assert g.table == [("QS", None)]
    assert g.hand(0) == canon("5C 5D 8H 6C 6D 6H")
    assert g.stock_size == 27
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert legal(g) == {"take"}  # 3S..9S cannot beat QS; no trump in hand


# ---------------------------------------------------------------------- M8 refill


def test_m8_thrower_refills_at_once_defender_only_at_bout_end() -> None:
    """M8: East refills after throwing 7C, West after 7S; North never draws mid-bout."""
    g = seed_game()
    g.play("attack 3H 3S")
    g.play("kill 3H 7H")
    g.play("kill 3S 3D")
    g.play("pass")
    g.play("attack 7C")
    assert g.hand(EAST) == canon("5C 10H 3C 8C 9C 9H")
    assert g.hand_size(NORTH) == 4
    g.play("kill 7C 10C")
    g.play("attack 7S")
    assert g.hand(WEST) == canon("2C 4C 6C 8H 8S 9S")
    assert g.hand(NORTH) == canon("5D KC AH")
    assert g.stock_size == 24


# ------------------------------------------------------------------- M9 defending


def test_m9_defender_kills_one_live_card_with_any_beating_card() -> None:
    """M9: North may kill either live card, with a trump even though it holds same-suit
    higher cards (no suit to follow)."""
    g = seed_game()
    g.play("attack 3H 3S")
    assert legal(g) == {
        "kill 3H 7H",
        "kill 3H AH",
        "kill 3H 3D",
        "kill 3H 5D",
        "kill 3S 3D",
        "kill 3S 5D",
        "take",
    }
    g.play("kill 3H 5D")  # a trump on a heart while holding 7H and AH
    assert g.table == [("3H", "5D"), ("3S", None)]
    assert (g.to_act_seat, g.decision) == (NORTH, "defend")


def test_m9_illegal_kills_are_refused() -> None:
    """M9: a card not live, a killer not held, or a killed card again are refused."""
    g = seed_game()
    g.play("attack 3H 3S")
    g.play("kill 3H 7H")
    assert_illegal(g, "kill 3H AH")  # 3H is already killed
    assert_illegal(g, "kill 4S 5D")  # 4S is not on the table
    assert_illegal(g, "kill 3S 9D")  # North does not hold 9D


# --------------------------------------------------------------------- M10 throw-in


def test_m10_throw_in_ranks_include_killing_cards() -> None:
    """M10: after 3H/7H and 3S/3D the played ranks are 3 and 7 (7 only from a killer)."""
    g = seed_game()
    g.play("attack 3H 3S")
    g.play("kill 3H 7H")
    g.play("kill 3S 3D")
    assert legal(g) == {"pass", "attack 7S"}  # West: 7S 2C 4C 6C 8H 8S
    g.play("pass")
    assert legal(g) == {"pass", "attack 3C", "attack 7C", "attack 3C 7C"}  # East
    assert_illegal(g, "attack 8C")
    assert_illegal(g, "attack 5C")


def test_m10_defender_may_not_throw_in() -> None:
    """M10/C7: the defender is never asked in a throw-in round (no self execution here)."""
    g = seed_example()
    g.play("kill 7S 5D")
    assert pass_round(g) == [WEST, EAST, SOUTH]


# ------------------------------------------------- seed 000 "Example of a Bout", step by step


def test_seed000_example_table_before_norths_options() -> None:
    """Seed 000 example (C7, M8-M10): the table and North's hand before its options."""
    g = seed_example()
    assert g.table == [("3H", "7H"), ("3S", "3D"), ("7C", "10C"), ("7S", None)]
    assert g.hand(NORTH) == canon("5D KC AH")
    assert (g.to_act_seat, g.decision) == (NORTH, "defend")
    assert legal(g) == {"kill 7S 5D", "take"}
    assert g.bout_count == 4 and g.bout_limit == 6
    assert g.trump_card == "JD"


def test_seed000_option_kill_then_all_pass_beats_off() -> None:
    """Seed 000, M11: North kills 7S with 5D; nobody adds: 8 cards are discarded, North draws
    four and attacks East."""
    g = seed_example()
    g.play("kill 7S 5D")
    g.play("pass")  # West
    assert legal(g) == {
        "pass",
        "attack 3C",
        "attack 5C",
        "attack 10H",
        "attack 3C 5C",
        "attack 3C 10H",
        "attack 5C 10H",
    }
    assert_illegal(g, "attack 3C 5C 10H", match="M6")  # 7 attack cards > L = 6
    g.play("pass")  # East
    assert legal(g) == {"pass", "attack 5H", "attack 5S", "attack 5H 5S"}  # South
    g.play("pass")
    assert g.table == []
    assert g.discard_size == 8
    assert g.hand(NORTH) == canon("KC AH JH JS QH QS")
    assert g.stock_size == 20
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (NORTH, "open", NORTH, EAST)


def test_seed000_option_six_cards_killed_ends_the_bout() -> None:
    """Seed 000 (1), M6/M11: 10H and 5C added and killed with AH and KC: six attack cards were
    used, the bout ends without another round, 12 cards discarded, North draws six and
    attacks East."""
    g = seed_example()
    g.play("kill 7S 5D")
    g.play("pass")  # West
    g.play("attack 10H 5C")  # East
    assert g.hand(EAST) == canon("3C 8C 9C 9H JH JS")
    assert (g.to_act_seat, g.decision) == (NORTH, "defend")
    assert legal(g) == {"kill 5C KC", "kill 10H AH", "take"}
    g.play("kill 10H AH")
    g.play("kill 5C KC")
    assert g.discard_size == 12
    assert g.table == []
    assert g.hand(NORTH) == canon("QH QS KH KS AC AS")
    assert g.stock_size == 16
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (NORTH, "open", NORTH, EAST)


def test_seed000_option_unkillable_5s_then_one_card_given() -> None:
    """Seed 000 (2), M12: 5S added; North cannot kill it and takes: 8 cards discarded at once;
    with 5 of 6 attack cards used one more card may be given; North ends with A K 5 5 and
    draws two; East attacks South."""
    g = seed_example()
    g.play("kill 7S 5D")
    g.play("pass")  # West
    g.play("pass")  # East
    g.play("attack 5S")  # South
    assert g.hand(SOUTH) == canon("5H 4H 6H JC QC JH")
    assert legal(g) == {"take"}
    g.play("take")
    assert g.discard_size == 8
    assert g.table == [("5S", None)]
    assert (g.to_act_seat, g.decision) == (WEST, "give")
    assert legal(g) == {"pass"}
    g.play("pass")
    assert (g.to_act_seat, g.decision) == (EAST, "give")
    assert legal(g) == {"pass", "attack 3C", "attack 5C", "attack 10H"}
    assert_illegal(g, "attack 3C 5C", match="M6")  # only one more card fits
    g.play("attack 5C")
    # the limit is used up: North picks up at once and draws to six
    assert g.hand(EAST) == canon("3C 8C 9C 9H 10H JS")
    assert g.hand(NORTH) == canon("5C 5S KC AH QH QS")
    assert g.stock_size == 20
    assert g.table == []
    assert g.discard_size == 8
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (EAST, "open", EAST, SOUTH)


def test_seed000_option_take_7s_then_only_3s_7s_10s_given() -> None:
    """Seed 000 (3), M12/M10: North takes the 7S unkilled: 6 cards discarded; two more may be
    given, only of ranks 3, 7 and 10 (5 was not played); East gives 10H; North holds
    5D 7S 10H KC AH and draws a sixth; East attacks South."""
    g = seed_example()
    g.play("take")
    assert g.discard_size == 6
    assert g.table == [("7S", None)]
    assert (g.to_act_seat, g.decision) == (WEST, "give")
    assert legal(g) == {"pass"}
    g.play("pass")
    assert (g.to_act_seat, g.decision) == (EAST, "give")
    assert legal(g) == {"pass", "attack 3C", "attack 10H", "attack 3C 10H"}
    assert_illegal(g, "attack 5C")  # rank 5 was not played in this branch
    g.play("attack 10H")
    assert g.hand(EAST) == canon("3C 5C 8C 9C 9H JH")
    assert (g.to_act_seat, g.decision) == (SOUTH, "give")
    assert legal(g) == {"pass"}  # South's 5S 5H may not be given
    g.play("pass")
    g.play("pass")  # West
    assert (g.to_act_seat, g.decision) == (EAST, "give")
    assert legal(g) == {"pass", "attack 3C"}
    g.play("pass")
    assert g.hand(NORTH) == canon("5D 7S 10H KC AH JS")
    assert g.stock_size == 22
    assert g.discard_size == 6
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (EAST, "open", EAST, SOUTH)


# --------------------------------------------------------------------- M11 beaten off


def test_m11_defender_out_next_seat_still_in_attacks() -> None:
    """M11/M13: seat 0 kills six cards with its last six with the stock empty: it is out at
    once, all 12 cards are discarded and the next seat still in, seat 1, attacks seat 2."""
    g = endgame()
    assert g.is_out(0)
    assert g.hand_size(0) == 0
    assert g.stock_size == 0
    assert g.discard_size == 12
    assert g.table == []
    assert (g.to_act_seat, g.decision, g.attacker, g.defender) == (1, "open", 1, 2)
    assert not g.is_over


# ------------------------------------------------------------------------- M12 take


def test_m12_taker_with_big_hand_draws_nothing_and_is_skipped() -> None:
    """M12: seat 2 takes six cards: 12 in hand, no draw; its left (seat 3) attacks next."""
    deck = stack_deck("moska", 6, {1: "2C 2D 3C 3D 4C 4D"}, dealer=0, indicator="2H")
    g = new_game("moska", 6, deck=deck, dealer=0)
    g.play("attack 2C 2D 3C 3D 4C 4D")
    assert g.stock_size == 10
    g.play("take")
    assert g.stock_size == 10
    assert g.hand_size(2) == 12
    assert {"2C", "2D", "3C", "3D", "4C", "4D"} <= set(g.hand(2))
    assert (g.to_act_seat, g.attacker, g.defender) == (3, 3, 4)


# ---------------------------------------------------------------------- M13 out and end


def test_m13_attacker_laying_last_cards_is_out_at_once() -> None:
    """M13: with the stock empty, seat 5 throws in its last four cards and is out at once,
    while the bout goes on."""
    g = endgame()
    g.play("attack 2S")
    g.play("kill 2S AH")
    g.play("pass")
    g.play("pass")
    g.play("pass")
    assert not g.is_out(5)
    g.play("attack 2H AC AD AS")
    assert g.is_out(5)
    assert not g.is_over
    assert g.live_cards == ["2H", "AC", "AD", "AS"]


def test_m13_defender_facing_live_cards_is_not_out() -> None:
    """M13 (needs limit=none to arise): seat 0 kills down to no cards while JH is still live:
    it is not out and must take; it picks JH up and stays in."""
    g = six_player_drain({0: "JC JD QC QD KH AH"}, "JH JS QS", limit="none")
    g.play("attack 8C 8D 9C 9D")
    assert g.stock_size == 0
    for kill in ("8C JC", "8D JD", "9C QC", "9D QD"):
        g.play("kill " + kill)
    assert (g.to_act_seat, g.decision) == (5, "throw-in")
    g.play("attack JH JS QS")
    g.play("kill JS KH")
    g.play("kill QS AH")
    assert g.hand_size(0) == 0
    assert not g.is_out(0)
    assert (g.to_act_seat, g.decision) == (0, "defend")
    assert legal(g) == {"take"}
    g.play("take")
    pass_round(g)
    assert g.hand(0) == ["JH"]
    assert not g.is_out(0)
    assert (g.to_act_seat, g.attacker, g.defender) == (1, 1, 2)


def two_player_drain() -> Game:
    """Two players, dealer 0, trumps spades (9S). Seat 1 opens six paired cards seven times
    and seat 0 takes each time; seat 1 ends holding 9H 9S 10C 10H with the stock empty."""
    seat0 = "JS QS KS AS JH QH"
    final = ["9H", "10C", "10H"]
    rest = [c for c in ALL_CARDS if c not in seat0.split() + final + ["9S"]]
    batches = [rest[i : i + 6] for i in range(0, 42, 6)]
    deck = stack_deck(
        "moska",
        2,
        {0: seat0, 1: " ".join(batches[0])},
        dealer=0,
        indicator="9S",
        stock=[c for b in batches[1:] for c in b] + final,
    )
    g = new_game("moska", 2, deck=deck, dealer=0)
    for batch in batches:
        assert (g.to_act_seat, g.decision, g.defender) == (1, "open", 0)
        g.play("attack " + " ".join(batch))
        g.play("take")
    return g


def test_m13_two_players_attacker_laying_its_last_cards_wins_at_once() -> None:
    """M13 (seed 000 Endgame): seat 1 lays all its last cards; seat 0 could kill them all
    (JS QS KS JH) but loses at once as the last player holding cards."""
    g = two_player_drain()
    assert g.stock_size == 0
    assert g.hand(1) == canon("9H 9S 10C 10H")
    assert g.hand_size(0) == 48
    assert (g.to_act_seat, g.decision) == (1, "open")
    g.play("attack 9H 9S 10C 10H")
    assert g.is_over
    assert g.to_act_seat < 0
    assert g.decision == "over"
    assert g.loser == 0
    assert list(g.loser_seats) == [0]
    with pytest.raises(IllegalMove):
        g.play("take")


def test_m13_game_goes_on_while_two_players_hold_cards() -> None:
    """M13: laying only part of the last cards does not end the game."""
    g = two_player_drain()
    g.play("attack 9H 9S")
    assert not g.is_over
    assert g.loser is None
    assert (g.to_act_seat, g.decision) == (0, "defend")
    kills = legal(g)
    assert {"take", "kill 9H JH", "kill 9H AS", "kill 9S JS", "kill 9S AS"} <= kills
    assert "kill 9S KH" not in kills  # a heart never beats a trump (C3)
