"""The Moska options and the presets built from them (RULES "Moska options and presets").

Every test names the rule it checks: M4 (trump exchange), M6 (``limit``), M10/M12/M20
(``throw_in_ranks``), M20 and M21 (self execution), M22 (killing from the stock), M23 (the
second-to-last stock card), M24 (sessions) and the option/preset tables themselves. Every deal
is stacked (RULES C4) with the dealer to the first attacker's right, so seat 0 opens against
seat 1.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from rule_helpers import moves, refused

from moska_p2p.cards import parse_card
from moska_p2p.engine import Game, OptionError, make_rules, new_game
from moska_p2p.engine.options import MOSKA_OPTIONS
from moska_p2p.engine.scenario import stack_deck
from moska_p2p.engine.session import Session

# --------------------------------------------------------------------------- helpers


def deal(
    preset: str,
    hands: dict[int, str],
    *,
    indicator: str,
    stock: Iterable[str] = (),
    players: int = 4,
    **options: Any,
) -> Game:
    """A stacked game whose first attacker is seat 0 (the dealer is the last seat)."""
    dealer = players - 1
    deck = stack_deck("moska", players, hands, dealer=dealer, indicator=indicator, stock=stock)
    return new_game(preset, players, deck=deck, dealer=dealer, **options)


def play_all(g: Game, *texts: str) -> None:
    for text in texts:
        g.play(text)


# ------------------------------------------------------------- option and preset tables

PRESET_ROWS = {
    "moska": {},
    "turamoska": {"limit": "hand"},
    "turamoska-pyhaselka": {"limit": "none"},
    "moska-simple": {"throw_in_ranks": "attack-only"},
    "taraki": {"self_execution": "on", "trump_exchange": "never"},
    "taraki-mm": {"self_execution": "on-with-draw", "trump_exchange": "before-first-attack"},
}
DEFAULTS = {name: values[0] for name, values in MOSKA_OPTIONS.items()}


def test_options_table_values_and_defaults() -> None:
    """RULES option table: every Moska option, its values, the default first."""
    assert MOSKA_OPTIONS == {
        "limit": ("six-or-hand", "hand", "none"),
        "throw_in_ranks": ("all", "attack-only"),
        "trump_exchange": ("any-time", "before-first-attack", "never"),
        "self_execution": ("off", "on", "on-with-draw"),
        "deck_kill": ("off", "on"),
        "expose_second_last": ("off", "on"),
    }


@pytest.mark.parametrize("preset", sorted(PRESET_ROWS))
def test_preset_table_rows(preset: str) -> None:
    """RULES preset table: each Moska preset is the defaults with exactly its row changed."""
    assert make_rules(preset).options() == DEFAULTS | PRESET_ROWS[preset]
    g = new_game(preset, 4, seed=3)
    assert g.rules.options() == DEFAULTS | PRESET_ROWS[preset]


@pytest.mark.parametrize(
    ("name", "value"),
    [(name, value) for name, values in MOSKA_OPTIONS.items() for value in values],
)
def test_new_game_sets_each_option_independently(name: str, value: str) -> None:
    """RULES options: new_game(..., **options) changes that option and no other."""
    g = new_game("moska", 4, seed=1, **{name: value})
    assert g.rules.options() == DEFAULTS | {name: value}


def test_option_overrides_a_preset_and_keeps_the_rest() -> None:
    """RULES presets: options set on a preset change only themselves."""
    rules = make_rules("taraki", trump_exchange="any-time", deck_kill="on")
    assert rules.options() == DEFAULTS | {"self_execution": "on", "deck_kill": "on"}
    rules = make_rules("turamoska", self_execution="on-with-draw", expose_second_last="on")
    assert rules.limit == "hand"
    assert rules.self_execution == "on-with-draw"
    assert rules.expose_second_last == "on"


def test_unknown_option_is_refused_with_its_name() -> None:
    """RULES options: an unknown option raises OptionError (a ValueError) naming it."""
    assert issubclass(OptionError, ValueError)
    with pytest.raises(OptionError, match="self_kill"):
        make_rules("moska", self_kill="on")
    with pytest.raises(ValueError, match="self_kill"):
        new_game("taraki", 4, seed=1, self_kill="on")


def test_unknown_option_value_is_refused_listing_the_values() -> None:
    """RULES options: a value outside the table raises OptionError listing the allowed ones."""
    with pytest.raises(OptionError, match="limit") as info:
        make_rules("moska", limit="seven")
    assert "seven" in str(info.value)
    assert "six-or-hand" in str(info.value) and "none" in str(info.value)
    with pytest.raises(OptionError, match="on-with-draw"):
        new_game("moska", 4, seed=1, self_execution="sometimes")


def test_unknown_preset_is_refused() -> None:
    """RULES presets: an unknown preset raises OptionError naming it."""
    with pytest.raises(OptionError, match="turbomoska"):
        make_rules("turbomoska")


@pytest.mark.parametrize(
    ("name", "value"),
    [(name, values[1]) for name, values in MOSKA_OPTIONS.items()],
)
def test_kaavi_refuses_non_default_moska_options(name: str, value: str) -> None:
    """RULES K: Kaavi plays the Moska options at their defaults; other values are refused."""
    with pytest.raises(OptionError, match="kaavi"):
        make_rules("kaavi", **{name: value})
    with pytest.raises(OptionError, match="kaavi"):
        new_game("kaavi", 4, seed=2, **{name: value})
    assert make_rules("kaavi", **{name: MOSKA_OPTIONS[name][0]}) == make_rules("kaavi")


# ------------------------------------------------------------------- M6 limit=hand/none

# Two players, hearts trumps. Bout 1: seat 0 opens 3C 3D, seat 1 takes and is given 3H 3S, so
# it opens bout 2 holding ten cards. Bout 2: seat 0 opens six cards (4C 4D 5C 5D 5H 5S), seat 1
# kills all six and is left with 3C 3D 3H 3S; seat 0 has drawn 4H 4S JH JS QH 2C.
A_HANDS = {0: "3C 3D 3H 3S 4C 4D", 1: "JC JD QC QD QS 6H"}
A_STOCK = ["5C", "5D", "5H", "5S", "4H", "4S", "JH", "JS", "QH", "2C", "2D", "2S", "6C"]
A_STOCK += ["6D", "7C"]
A_KILLS = ("kill 4C JC", "kill 4D JD", "kill 5C QC", "kill 5D QD", "kill 5S QS", "kill 5H 6H")


def six_killed(preset: str) -> Game:
    g = deal(preset, A_HANDS, indicator="KH", stock=A_STOCK, players=2)
    play_all(g, "attack 3C 3D", "take", "attack 3H 3S", "pass")
    assert (g.to_act_seat, g.decision, g.defender, g.hand_size(1)) == (0, "open", 1, 10)
    g.play("attack 4C 4D 5C 5D 5H 5S")
    play_all(g, *A_KILLS)
    return g


def test_m6_six_or_hand_ends_the_bout_after_six_cards() -> None:
    """M6/M11 (default): L = min(6, 10) = 6; six killed cards end the bout at once."""
    g = six_killed("moska")
    assert g.table == []
    assert (g.to_act_seat, g.decision) == (1, "open")  # the defender held and attacks next
    assert g.hand_size(1) == 6  # 3C 3D 3H 3S and two drawn


def test_m6_limit_hand_has_no_cap_of_six() -> None:
    """M6 limit=hand (turamoska): after six attack cards a throw-in round still runs, and a
    throw-in may hold as many cards as the defender's hand (4), not one more."""
    g = six_killed("turamoska")
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    assert g.hand_size(1) == 4
    legal = moves(g)
    assert "attack 4H 4S JH JS" in legal
    assert "attack 4H 4S JH JS QH" not in legal
    # singles, pairs, triples and quadruples of the five cards of played ranks, and pass
    assert len(legal) == 5 + 10 + 10 + 5 + 1
    refused(g, "attack 4H 4S JH JS QH", "limit allows 4 more cards")
    g.play("attack 4H 4S JH JS")
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert len(g.live_cards) == 4


def test_m6_limit_hand_giving_counts_live_cards_against_the_hand() -> None:
    """M6 limit=hand, M12: after a take, cards may be given while live cards <= the
    defender's hand at that moment (4 in hand, 2 live: two more)."""
    g = six_killed("turamoska")
    g.play("attack 4H 4S")
    g.play("take")
    assert (g.to_act_seat, g.decision) == (0, "give")
    assert g.table == [("4H", None), ("4S", None)]
    assert moves(g) == {
        "attack JH",
        "attack JS",
        "attack QH",
        "attack JH JS",
        "attack JH QH",
        "attack JS QH",
        "pass",
    }
    refused(g, "attack JH JS QH", "limit allows 2 more cards")
    g.play("attack JH JS")
    # no room is left: the defender picks up at once and the next bout opens
    assert g.hand_size(1) == 8
    assert (g.to_act_seat, g.decision, g.defender) == (0, "open", 1)


def test_m6_limit_none_lays_more_than_the_defender_holds() -> None:
    """M6 limit=none (turamoska-pyhaselka): no count limit; five cards may be thrown in
    against a defender holding four."""
    g = six_killed("turamoska-pyhaselka")
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    assert "attack 4H 4S JH JS QH" in moves(g)
    g.play("attack 4H 4S JH JS QH")
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert len(g.live_cards) == 5 > g.hand_size(1) == 4
    g.play("take")
    # seat 0 drew 2D 2S 6C 6D 7C: 6 was a killer's rank, and both 6s may still be given
    assert (g.to_act_seat, g.decision) == (0, "give")
    assert moves(g) == {"attack 6C", "attack 6D", "attack 6C 6D", "pass"}
    g.play("attack 6C 6D")
    assert len(g.live_cards) == 7


# ------------------------------------------------------- throw_in_ranks=attack-only

# Spades trumps. Seat 0 opens 3H, seat 1 kills it with 7H; seat 0 still holds 3C and 7C.
I_HANDS = {
    0: "3H 3C 7C 5D 6D 8D",
    1: "7H 4C 4D 10C JC QC",
    2: "9H 10H JH QH KH AH",
    3: "2C 2D 2H 4H 5H 6H",
}


def test_m10_all_ranks_throw_in_the_killing_rank() -> None:
    """M10 (throw_in_ranks=all): the killing card's rank 7 may be thrown in."""
    g = deal("moska", I_HANDS, indicator="AS", stock=["9D", "10S"])
    play_all(g, "attack 3H", "kill 3H 7H")
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    assert moves(g) == {"attack 3C", "attack 7C", "attack 3C 7C", "pass"}


def test_m10_attack_only_a_killing_rank_opens_no_rank() -> None:
    """throw_in_ranks=attack-only (moska-simple), M10: only the attack rank 3 may follow."""
    g = deal("moska-simple", I_HANDS, indicator="AS", stock=["9D", "10S"])
    play_all(g, "attack 3H", "kill 3H 7H")
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    assert moves(g) == {"attack 3C", "pass"}
    refused(g, "attack 7C", "attack cards")
    refused(g, "attack 3C 7C", "attack cards")


def test_m12_attack_only_giving_takes_attack_ranks_only() -> None:
    """throw_in_ranks=attack-only, M12: after a take, a killer's rank may not be given."""
    for preset, expected in (("moska", {"attack 7C", "pass"}), ("moska-simple", {"pass"})):
        g = deal(preset, I_HANDS, indicator="AS", stock=["9D", "10S"])
        play_all(g, "attack 3H", "kill 3H 7H", "attack 3C", "take")
        assert (g.to_act_seat, g.decision) == (0, "give"), preset
        assert g.table == [("3C", None)]
        assert moves(g) == expected, preset


def test_m20_attack_only_self_execution_needs_an_attack_rank() -> None:
    """throw_in_ranks=attack-only with M20: the self-executed card must be of an attack rank;
    the rank of its killer (5) does not open a rank for the attackers either."""
    hands = dict(I_HANDS)
    hands[1] = "7H 3D 5D 7C 9C KC"
    hands[0] = "3H 3C 5C 6D 8D 10D"
    g = deal("moska-simple", hands, indicator="AS", stock=["9D", "10S"], self_execution="on")
    play_all(g, "attack 3H", "kill 3H 7H", "pass", "pass", "pass")
    assert (g.to_act_seat, g.decision) == (1, "throw-in")  # the defender, asked last
    assert moves(g) == {"self 3D 5D", "pass"}
    refused(g, "self 7C 9C", "rank was not among the attack cards")
    g.play("self 3D 5D")
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    assert moves(g) == {"attack 3C", "pass"}  # 5C: 5 is only a killer's rank


# --------------------------------------------------------------------- M4 trump exchange

# Hearts trumps, KH the indicator.
H_HANDS = {
    0: "3C 4C 5C 6C 8C 9C",
    1: "2H 3D 4D 5D 6D 8D",
    2: "3S 4S 5S 6S 8S 9S",
    3: "3H 4H 5H 6H 8H 9H",
}


def test_m4_any_time_exchange_is_not_the_defenders_move() -> None:
    """M4 (any-time): the defender exchanges 2H for KH, then still makes its decision."""
    g = deal("moska", H_HANDS, indicator="KH")
    g.play("attack 3C")
    assert "exchange" in moves(g)
    stock = g.stock_size
    g.play("exchange")
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert "KH" in g.hand(1) and "2H" not in g.hand(1)
    assert g.trump_card == "2H"
    assert g.stock_size == stock
    assert g.face[g.stock[0]] == parse_card("2H")  # the 2 is the new bottom, drawn last
    assert "exchange" not in moves(g)
    assert g.table == [("3C", None)]
    assert "kill 3C KH" in moves(g)


def test_m4_any_time_exchange_on_an_opening_decision() -> None:
    """M4 (any-time): the opener exchanges, then still opens."""
    hands = dict(H_HANDS)
    hands[0], hands[1] = H_HANDS[1], H_HANDS[0]
    g = deal("moska", hands, indicator="KH")
    assert (g.to_act_seat, g.decision) == (0, "open")
    g.play("exchange")
    assert (g.to_act_seat, g.decision) == (0, "open")
    assert "attack KH" in moves(g)


def test_m4_before_first_attack_exchange_round_opens_the_game() -> None:
    """M4 before-first-attack: every seat from the first attacker answers exchange or pass;
    the exchange is the seat's answer; then the first attacker opens."""
    hands = dict(H_HANDS)
    hands[1], hands[2] = H_HANDS[2], H_HANDS[1]  # seat 2 holds 2H
    g = deal("moska", hands, indicator="KH", trump_exchange="before-first-attack")
    seen = []
    while g.decision == "exchange-or-pass":
        seen.append((g.to_act_seat, moves(g)))
        g.play("exchange" if g.to_act_seat == 2 else "pass")
    assert seen == [
        (0, {"pass"}),
        (1, {"pass"}),
        (2, {"exchange", "pass"}),
        (3, {"pass"}),
    ]
    assert (g.to_act_seat, g.decision) == (0, "open")
    assert g.trump_card == "2H"
    assert "KH" in g.hand(2) and "2H" not in g.hand(2)


def test_m4_before_first_attack_refuses_other_moves_in_the_round() -> None:
    """M4 before-first-attack: in the exchange round only exchange (holding the 2) or pass."""
    g = deal("taraki-mm", H_HANDS, indicator="KH")
    assert (g.to_act_seat, g.decision) == (0, "exchange-or-pass")
    refused(g, "attack 3C", "exchange or pass")
    refused(g, "exchange", "does not hold 2H")


def test_m4_before_first_attack_no_exchange_later() -> None:
    """M4 before-first-attack: a holder of the 2 who passed in the round may not exchange
    later, on its opening or as defender."""
    g = deal("moska", H_HANDS, indicator="KH", trump_exchange="before-first-attack")
    play_all(g, "pass", "pass", "pass", "pass")
    assert (g.to_act_seat, g.decision) == (0, "open")
    g.play("attack 3C")
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert "exchange" not in moves(g)
    refused(g, "exchange", "only before the first attack")
    hands = dict(H_HANDS)
    hands[0], hands[1] = H_HANDS[1], H_HANDS[0]
    g = deal("moska", hands, indicator="KH", trump_exchange="before-first-attack")
    play_all(g, "pass", "pass", "pass", "pass")
    assert "exchange" not in moves(g)
    refused(g, "exchange", "only before the first attack")


def test_m4_never_refuses_the_exchange_with_a_reason() -> None:
    """M4 trump_exchange=never (taraki): the holder of the 2 is never offered the exchange."""
    g = deal("taraki", H_HANDS, indicator="KH")
    assert (g.to_act_seat, g.decision) == (0, "open")  # no exchange round
    g.play("attack 3C")
    assert "exchange" not in moves(g)
    refused(g, "exchange", "without trump exchange")


# ------------------------------------------------------------------ M20 self execution

# Seed 000, TARAKI example 1 (clubs trumps, two players). Bout 1: seat 0 opens 2C 2D, seat 1
# takes and holds eight cards. Bout 2: three 4s opened (L = min(6, 8) = 6), killed by two 6s
# and an 8; then the defender self-executes 8D with 9D.
B_HANDS = {0: "2C 2D 4D 4H 4S 5H", 1: "6D 6H 8S 8D 9D 9S"}
B_STOCK = ["6S", "7S", "9H", "8H", "3S"]


def taraki_three_fours() -> Game:
    g = deal("taraki", B_HANDS, indicator="AC", stock=B_STOCK, players=2)
    play_all(g, "attack 2C 2D", "take")
    assert moves(g) == {"pass"}  # seat 0 has no two left to give
    g.play("pass")
    assert g.hand_size(1) == 8
    g.play("attack 4D 4H 4S")
    assert g.bout_limit == 6
    play_all(g, "kill 4D 6D", "kill 4H 6H", "kill 4S 8S")
    return g


def test_m20_defender_is_asked_last_and_self_executes_8_with_9() -> None:
    """M20, seed 000 TARAKI: after the three 4s are killed, the attacker is asked first and
    the defender last, with every self execution of a played rank on offer."""
    g = taraki_three_fours()
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    g.play("pass")
    assert (g.to_act_seat, g.decision) == (1, "throw-in")
    assert moves(g) == {"self 8D 9D", "self 8D 2C", "pass"}  # 9S: rank 9 not played yet
    g.play("self 8D 9D")
    assert g.bout_count == 5  # 3 attack cards + 2 for the self execution
    assert g.table[-1] == ("8D", "9D")
    assert g.hand(1) == ["2C", "2D", "9S"]


def test_m20_after_self_execution_one_card_left_and_no_second_self() -> None:
    """M20, seed 000 TARAKI: five cards used, so one more attack card only, and no second
    self execution although the defender started with eight cards (the limit is 6)."""
    g = taraki_three_fours()
    play_all(g, "pass", "self 8D 9D")
    # a new throw-in round, the principal attacker first
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    assert moves(g) == {"attack 6S", "attack 8H", "attack 9H", "pass"}
    refused(g, "attack 6S 9H", "limit allows 1 more card")
    g.play("pass")
    # the defender (holding 9S and 2C, rank 9 played) is not asked: no room for two
    assert g.table == []
    assert (g.to_act_seat, g.decision) == (1, "open")
    assert g.discard_size == 8  # three killed 4s and the self-executed pair


def test_m20_self_execution_never_exceeds_the_limit() -> None:
    """M20: a self execution counting past L is neither offered nor accepted."""
    g = taraki_three_fours()
    play_all(g, "pass", "self 8D 9D", "attack 9H")
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert moves(g, "self") == set()
    refused(g, "self 9S 2C", "no room for a self execution")
    assert moves(g) == {"kill 9H 2C", "take"}
    g.play("kill 9H 2C")
    assert (g.to_act_seat, g.decision) == (1, "open")  # L used up: beaten off at once


# Seed 000 TARAKI example 2 (spades trumps, four players): the single 3 killed by the 4,
# the defender kills its own 4 with a 7 and its own 7 with an 8.
C_HANDS = {
    0: "3H 3C 4C 7H 8H KD",
    1: "4H 4D 7D 7C 8C 2H",
    2: "5H 6H 9H 10H JH QH",
    3: "5D 6D 9D 10D JD QD",
}


def test_m20_throw_in_order_asks_the_defender_last() -> None:
    """M20, C7: the throw-in round asks 0, then 2 and 3 clockwise, then the defender 1."""
    g = deal("taraki", C_HANDS, indicator="AS", stock=["5C"])
    play_all(g, "attack 3H", "kill 3H 4H")
    asked = []
    while g.to_act_seat != 1:
        asked.append(g.to_act_seat)
        g.play("pass")
    assert asked == [0, 2, 3]
    assert g.decision == "throw-in"
    assert moves(g) == {"self 4D 7D", "pass"}
    refused(g, "attack 4D", "may not attack itself")
    g.play("pass")
    assert (g.to_act_seat, g.decision) == (1, "open")  # everyone passed: beaten off


def test_m20_two_self_executions_after_a_single_card() -> None:
    """M20, seed 000 TARAKI: 3 killed by 4, self 4->7, self 7->8: five cards used, one more
    allowed, which must be a 3, 4, 7 or 8; each self execution restarts the round at seat 0."""
    g = deal("taraki", C_HANDS, indicator="AS", stock=["5C"])
    play_all(g, "attack 3H", "kill 3H 4H", "pass", "pass", "pass", "self 4D 7D")
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    play_all(g, "pass", "pass", "pass")
    assert (g.to_act_seat, g.decision) == (1, "throw-in")
    assert moves(g) == {"self 7C 8C", "pass"}
    g.play("self 7C 8C")
    assert g.bout_count == 5
    assert g.table == [("3H", "4H"), ("4D", "7D"), ("7C", "8C")]
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    assert moves(g) == {"attack 3C", "attack 4C", "attack 7H", "attack 8H", "pass"}
    play_all(g, "pass", "pass", "pass")
    # the defender holds one card: it is not asked; the bout is beaten off
    assert (g.to_act_seat, g.decision) == (1, "open")


def test_m20_last_card_taken_leaves_no_room_to_give() -> None:
    """M20/M12: after the sixth card (3 + 2 + 2 + 8H) is taken, nothing more can be given."""
    g = deal("taraki", C_HANDS, indicator="AS", stock=["5C"])
    play_all(g, "attack 3H", "kill 3H 4H", "pass", "pass", "pass", "self 4D 7D")
    play_all(g, "pass", "pass", "pass", "self 7C 8C", "attack 8H")
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert moves(g) == {"take"}
    g.play("take")
    assert (g.to_act_seat, g.decision, g.defender) == (2, "open", 3)
    assert "8H" in g.hand(1) and g.hand_size(1) == 6


# Seed 001, virpiminen: the defender holds 6 cards and two cards are on the table: at most two
# own cards may be killed (hearts trumps).
D_HANDS = {
    0: "5C 5D 2S 3S 4S 6S",
    1: "5S 9S 9C KC 9D KD",
    2: "2C 3C 4C 6C 7C 8C",
    3: "2D 3D 4D 6D 7D 8D",
}


def test_m20_self_execution_while_live_cards_remain() -> None:
    """M20 (seed 003 3.6.1): the defender self-executes on a defend decision with live cards
    on the table; the live cards stay and it defends again."""
    g = deal("taraki", D_HANDS, indicator="AH")
    g.play("attack 5C 5D")
    assert moves(g, "self") == {"self 5S 9S"}
    g.play("self 5S 9S")
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert g.table == [("5C", None), ("5D", None), ("5S", "9S")]
    assert g.live_cards == ["5C", "5D"]
    assert g.bout_count == 4


def test_m20_virpiminen_two_self_executions_at_most() -> None:
    """M20, seed 001 virpiminen: 6 cards in hand, 2 on the table: two self executions, not
    three (the third would need six cards against L = 6)."""
    g = deal("taraki", D_HANDS, indicator="AH")
    play_all(g, "attack 5C 5D", "self 5S 9S")
    assert moves(g, "self") == {"self 9C KC", "self 9D KD"}
    g.play("self 9C KC")
    assert g.bout_count == 6
    assert moves(g, "self") == set()
    refused(g, "self 9D KD", "no room for a self execution")
    assert moves(g) == {"kill 5D 9D", "kill 5D KD", "take"}


def test_m20_self_execution_refused_without_the_option() -> None:
    """M20: with self_execution=off (moska) no self is offered, the defender is not asked in
    throw-in rounds, and `self` is refused."""
    g = deal("moska", C_HANDS, indicator="AS", stock=["5C"])
    g.play("attack 3H")
    assert moves(g, "self") == set()
    refused(g, "self 4D 7D", "without self execution")
    play_all(g, "kill 3H 4H", "pass", "pass", "pass")
    assert (g.to_act_seat, g.decision) == (1, "open")


def test_m20_self_execution_needs_a_played_rank_and_a_beating_card() -> None:
    """M20, C3: A must be of a played rank and K must beat A."""
    g = deal("taraki", D_HANDS, indicator="AH")
    g.play("attack 5C 5D")
    refused(g, "self 9C KC", "rank was not played")
    refused(g, "self 9S 5S", "does not beat")


# Two players, spades trumps. Bout 1: seat 0 opens 2C 2D, seat 1 takes: eight cards. Bout 2:
# 4D 4H opened; the defender can chain self 4C 7C, self 7D 9D, self 9H 10H.
E_HANDS = {0: "2C 2D 4D 4H KC KD", 1: "4C 7C 7D 9D 9H 10H"}
E_STOCK = ["3C", "3D", "5C", "5D"]


def e_game(preset: str, **options: str) -> Game:
    g = deal(preset, E_HANDS, indicator="AS", stock=E_STOCK, players=2, **options)
    play_all(g, "attack 2C 2D", "take", "pass", "attack 4D 4H")
    assert (g.to_act_seat, g.decision, g.hand_size(1)) == (1, "defend", 8)
    assert moves(g, "self") == {"self 4C 7C"}
    play_all(g, "self 4C 7C", "self 7D 9D")
    return g


def test_m20_six_or_hand_limit_caps_self_executions_at_l() -> None:
    """M20 with limit=six-or-hand: 2 attack cards + 2 self executions = 6 = L, though the
    defender still holds 4 cards against 2 live ones."""
    g = e_game("taraki")
    assert g.bout_count == 6
    assert moves(g, "self") == set()
    refused(g, "self 9H 10H", "no room for a self execution")


def test_m20_limit_hand_self_needs_hand_minus_live_at_least_two() -> None:
    """M20 with limit=hand: a self execution is legal while hand - live >= 2 (4 - 2), past
    six cards; then (2 - 2) no more, nothing can be given, and the defender picks up."""
    g = e_game("turamoska", self_execution="on")
    assert moves(g, "self") == {"self 9H 10H"}
    g.play("self 9H 10H")
    assert g.hand(1) == ["2C", "2D"]
    assert moves(g) == {"take"}
    g.play("take")
    assert g.hand_size(1) == 6  # 2C 2D 4D 4H and two drawn
    assert {"4D", "4H"} <= set(g.hand(1))
    assert (g.to_act_seat, g.decision, g.defender) == (0, "open", 1)


def test_m21_self_execution_with_draw() -> None:
    """M21 (taraki-mm, on-with-draw): after a self execution the defender draws one card;
    under taraki (on) it does not."""
    stock = ["2H", "3H", "QS"]  # seat 0 draws 2H 3H after opening; QS is next
    for preset, drawn in (("taraki-mm", True), ("taraki", False)):
        g = deal(preset, D_HANDS, indicator="AH", stock=stock)
        if preset == "taraki-mm":
            play_all(g, "pass", "pass", "pass", "pass")  # the exchange round (M4)
        g.play("attack 5C 5D")
        size = g.stock_size
        g.play("self 5S 9S")
        assert ("QS" in g.hand(1)) is drawn, preset
        assert g.hand_size(1) == 4 + drawn, preset
        assert g.stock_size == size - drawn, preset
        assert (g.to_act_seat, g.decision) == (1, "defend"), preset


def test_taraki_mm_starts_with_the_exchange_round() -> None:
    """Preset taraki-mm: trump_exchange=before-first-attack, so the game opens with M4's round."""
    g = deal("taraki-mm", D_HANDS, indicator="AH")
    assert (g.to_act_seat, g.decision) == (0, "exchange-or-pass")


# --------------------------------------------------------------- M22 killing from the stock

# Hearts trumps. Seat 0 opens 5C 5D and draws KS QS; the stock's next card is turned.
F_HANDS = {
    0: "5C 5D 9D 4D 5S 2S",
    1: "7D 3C 3D 8S 10S JS",
    2: "6C 6D 6S 7C 7S 8C",
    3: "8D 9S 10C 10D JC QD",
}


def f_game(turned: str, opening: str = "attack 5C 5D") -> Game:
    g = deal("moska", F_HANDS, indicator="AH", stock=["KS", "QS", turned], deck_kill="on")
    g.play(opening)
    return g


def test_m22_deck_kill_is_offered_only_with_the_option() -> None:
    """M22: deck-kill is a defend move with deck_kill=on, refused at the default."""
    g = f_game("9C")
    assert moves(g) == {"kill 5D 7D", "take", "deck-kill"}
    plain = deal("moska", F_HANDS, indicator="AH", stock=["KS", "QS", "9C"])
    plain.play("attack 5C 5D")
    assert moves(plain) == {"kill 5D 7D", "take"}
    refused(plain, "deck-kill", "deck-kill is not possible")


def test_m22_turned_card_must_kill() -> None:
    """M22: a turned 9C beats 5C, so the defender's next move is `kill 5C 9C` and no other."""
    g = f_game("9C")
    size = g.stock_size
    g.play("deck-kill")
    assert g.stock_size == size - 1
    assert (g.to_act_seat, g.decision) == (1, "defend")
    assert moves(g) == {"kill 5C 9C"}
    assert "9C" not in g.hand(1)
    refused(g, "take", "take is not possible")
    refused(g, "kill 5D 7D", "must kill")
    g.play("kill 5C 9C")
    assert g.table == [("5C", "9C"), ("5D", None)]
    assert g.hand_size(1) == 6  # the turned card never entered the hand
    assert moves(g) == {"kill 5D 7D", "take", "deck-kill"}  # the bout goes on


def test_m22_defender_chooses_which_card_the_turned_card_kills() -> None:
    """M22: a turned trump beats both live cards; the defender chooses one."""
    g = f_game("3H")
    g.play("deck-kill")
    assert moves(g) == {"kill 5C 3H", "kill 5D 3H"}
    g.play("kill 5D 3H")
    assert g.table == [("5C", None), ("5D", "3H")]
    assert (g.to_act_seat, g.decision) == (1, "defend")


def test_m22_turned_card_rank_may_be_thrown_in() -> None:
    """M22, M10: a new rank brought by the turned card (9) may be thrown in."""
    g = f_game("9C")
    play_all(g, "deck-kill", "kill 5C 9C", "kill 5D 7D")
    assert (g.to_act_seat, g.decision) == (0, "throw-in")
    assert moves(g) == {"attack 5S", "attack 9D", "attack 5S 9D", "pass"}


def test_m22_turned_card_beating_nothing_is_taken() -> None:
    """M22, M12: a turned 4S beats no live card: it goes to the defender's hand, the defender
    has taken, and rank 4 (not played in the bout) may not be given."""
    g = f_game("4S")
    g.play("deck-kill")
    assert "4S" in g.hand(1)
    assert (g.to_act_seat, g.decision) == (0, "give")
    assert g.table == [("5C", None), ("5D", None)]
    assert moves(g) == {"attack 5S", "pass"}
    refused(g, "attack 4D", "rank was not among")
    while g.decision == "give":
        g.play("pass")
    assert {"4S", "5C", "5D"} <= set(g.hand(1))
    assert g.hand_size(1) == 9
    assert (g.to_act_seat, g.decision, g.defender) == (2, "open", 3)


def test_m22_turned_card_beating_nothing_after_a_kill_discards_the_pair() -> None:
    """M22, M12: after `kill 5D 7D` a turned 4S beats nothing; the killed pair is discarded at
    once and only the live 5C is picked up; 4 still may not be given, 7 may."""
    g = f_game("4S")
    play_all(g, "kill 5D 7D", "deck-kill")
    assert g.table == [("5C", None)]
    assert g.discard_size == 2
    assert (g.to_act_seat, g.decision) == (0, "give")
    assert moves(g) == {"attack 5S", "pass"}
    g.play("pass")
    assert (g.to_act_seat, g.decision) == (2, "give")
    assert moves(g) == {"attack 7C", "attack 7S", "attack 7C 7S", "pass"}


# ------------------------------------------------------ M23 exposing the second-last card

# Six players, spades trumps: 36 cards dealt, 15 in the stock above the indicator AS.
G_HANDS = {
    0: "3C 3D 3H 4C 4D 4H",
    1: "9C 9D 10C 10D JC JD",
    2: "5C 5D 5H 6C 6D 6H",
    3: "QC QD KC KD AC AD",
    4: "7C 7D 8C 8D 9H 10H",
    5: "2C 2D 2H JH QH KH",
}
G_STOCK = ["3S", "4S", "5S", "6S", "7S", "8S", "9S", "10S", "JS", "QS", "KS", "2S", "7H"]
G_STOCK += ["8H", "AH"]


def g_game(**options: str) -> Game:
    """Draw the stock down to two cards: 6 + 6 + 2 cards drawn by three openers."""
    g = deal("moska", G_HANDS, indicator="AS", stock=G_STOCK, players=6, **options)
    assert g.stock_size == 16
    play_all(g, "attack 3C 3D 3H 4C 4D 4H", "take", "attack 5C 5D 5H 6C 6D 6H", "take")
    assert g.stock_size == 4
    assert not g.public[g.stock[-1]]
    assert (g.to_act_seat, g.defender) == (4, 5)
    g.play("attack 7C 7D")
    assert g.stock_size == 2
    assert g.face[g.stock[-1]] == parse_card("AH")
    return g


def test_m23_second_last_card_turned_face_up() -> None:
    """M23: when exactly two cards are left, the upper one (AH) is turned face up."""
    g = g_game(expose_second_last="on")
    assert g.public[g.stock[-1]]
    assert g.public[g.stock[0]]  # the trump indicator, face up as ever


def test_m23_second_last_card_stays_hidden_by_default() -> None:
    """M23 off (default): the upper of the last two cards stays face down."""
    g = g_game()
    assert not g.public[g.stock[-1]]


def test_m23_exposed_card_stays_known_in_the_drawers_hand() -> None:
    """M23: the exposed AH is drawn later as a publicly known card of the drawer's hand."""
    g = g_game(expose_second_last="on")
    g.play("take")
    while g.decision == "give":
        g.play("pass")
    assert (g.to_act_seat, g.decision) == (0, "open")
    g.play("attack 3S")
    assert g.stock_size == 1
    assert "AH" in g.hand(0)
    assert g.shown[0] >> parse_card("AH") & 1
    plain = g_game()
    plain.play("take")
    while plain.decision == "give":
        plain.play("pass")
    plain.play("attack 3S")
    assert "AH" in plain.hand(0)
    assert not plain.shown[0] >> parse_card("AH") & 1


# ------------------------------------------------------------------------ M24 sessions


def play_until_seat_loses(g: Game, target: int) -> None:
    """Play a whole game in which ``target`` always takes and never adds a card, while the
    others kill when they can and pile cards onto ``target``; it loses (asserted)."""
    for _ in range(5000):
        if g.is_over:
            break
        texts = [str(m) for m in g.legal_moves()]
        attacks = [t for t in texts if t.startswith("attack") and t != "attack deck"]
        kills = [t for t in texts if t.startswith("kill")]
        if g.to_act_seat == target:
            if g.decision == "defend":
                choice = "take"
            elif g.decision == "open":
                choice = min(attacks, key=len)
            else:
                choice = "pass"
        elif g.decision == "defend":
            choice = kills[0] if kills else "take"
        elif g.decision == "open" or (g.defender == target and attacks):
            choice = max(attacks, key=lambda t: t.count(" "))
        else:
            choice = "pass"
        g.play(choice)
    assert g.is_over
    assert g.loser == target


def test_m24_loser_deals_next_and_losses_are_counted() -> None:
    """M24, M2: the first dealer as given; then each game's loser deals the next one, and the
    session counts every seat's losses."""
    s = Session("moska", 3, seed=5, dealer=1)
    expected_losses = [0, 0, 0]
    dealer = 1
    for target in (2, 0, 0, 1):
        g = s.new_game()
        assert g.dealer == dealer
        play_until_seat_loses(g, target)
        s.record(g)
        expected_losses[target] += 1
        dealer = target
        assert s.dealer == target
        assert s.losses == expected_losses
    assert s.games_played == 4
    assert s.results == [(2,), (0,), (0,), (1,)]
    assert s.new_game().dealer == 1


def test_m24_korokkeella_after_two_poronmuna_after_three() -> None:
    """M24 (seed 000): two losses in a row put a player on the pedestal (korokkeella), and the
    session may not end then; a third in a row makes a reindeer's egg (poronmuna). Another
    player's loss breaks the run."""
    s = Session("moska", 2, seed=0, dealer=1)
    seen = []
    for target in (0, 0, 1, 0, 0, 0):
        g = s.new_game()
        play_until_seat_loses(g, target)
        s.record(g)
        seen.append((s.korokkeella, s.poronmuna, s.may_end))
    assert seen == [
        ([], [], True),
        ([0], [], False),
        ([], [], True),  # seat 1 lost: seat 0's run is broken
        ([], [], True),
        ([0], [], False),
        ([], [0], True),
    ]
    assert s.losses == [5, 1]
    assert "poronmuna" in s.score_line()


def test_m24_session_passes_options_and_finishes_games_in_order() -> None:
    """M24: a session plays one table's options; a game must end before the next is dealt."""
    s = Session("taraki", 2, seed=3, deck_kill="on")
    assert s.rules.self_execution == "on" and s.rules.deck_kill == "on"
    g = s.new_game()
    assert g.rules == s.rules
    with pytest.raises(RuntimeError):
        s.new_game()
    with pytest.raises(ValueError):
        s.record(g)
