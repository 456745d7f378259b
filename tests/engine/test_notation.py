"""Cards and move notation: RULES C1 (card text) and C6 (move text)."""

from __future__ import annotations

import random

import pytest

from moska_p2p.cards import CardError, card_text, parse_card, parse_cards
from moska_p2p.engine import IllegalMove, Move, new_game, parse_move
from moska_p2p.engine.scenario import stack_deck

RANKS = ["2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A"]
SUITS = ["C", "D", "H", "S"]
ALL_CARDS = [r + s for r in RANKS for s in SUITS]


# ------------------------------------------------------------------------------ C1 cards


def test_c1_every_card_round_trips_in_canonical_form() -> None:
    """C1: each of the 52 canonical texts parses and prints back unchanged, all distinct."""
    codes = [parse_card(text) for text in ALL_CARDS]
    assert len(set(codes)) == 52
    assert [card_text(c) for c in codes] == ALL_CARDS


def test_c1_rank_order_low_to_high_and_suit_order() -> None:
    """C1: ranks run 2..A and suits C D H S; sorting parsed cards gives that order."""
    shuffled = list(ALL_CARDS)
    random.Random(3).shuffle(shuffled)
    assert [card_text(c) for c in sorted(parse_card(t) for t in shuffled)] == ALL_CARDS


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("TH", "10H"),
        ("th", "10H"),
        ("10h", "10H"),
        ("qs", "QS"),
        ("aC", "AC"),
        ("Q♠", "QS"),
        ("10♥", "10H"),
        ("T♦", "10D"),
        ("2♣", "2C"),
        ("k♦", "KD"),
        (" 7s ", "7S"),
    ],
)
def test_c1_parser_accepts_t_lower_case_and_suit_symbols(text: str, canonical: str) -> None:
    """C1: T for ten, lower case and the symbols ♣ ♦ ♥ ♠ are accepted; output is canonical."""
    assert card_text(parse_card(text)) == canonical


def test_c1_parse_cards_spaces_and_commas() -> None:
    """C1: a card list may be separated by spaces or commas; aliases are accepted."""
    cards = parse_cards("3h, 3S  t♦,A♣")
    assert [card_text(c) for c in cards] == ["3H", "3S", "10D", "AC"]
    assert [card_text(c) for c in parse_cards(["qs", "2d"])] == ["QS", "2D"]


@pytest.mark.parametrize("text", ["11X", "1H", "10", "ZZ", "H", "", "10Z", "1O H"])
def test_c1_not_a_card_is_refused(text: str) -> None:
    """C1: text that is not a card raises CardError (a ValueError)."""
    with pytest.raises(ValueError):
        parse_card(text)


def test_c1_error_message_names_the_text() -> None:
    """C1: the error for "11X" is a CardError/ValueError starting '"11X" is not a card:'."""
    with pytest.raises(CardError) as info:
        parse_card("11X")
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith('"11X" is not a card:')


# ------------------------------------------------------------------------------ C6 moves


def test_c6_attack_cards_printed_in_canonical_order() -> None:
    """C6: attack cards by rank, then suit C D H S, whatever order they were typed in."""
    assert str(parse_move("attack 7S 2D 7C 2S 7H")) == "attack 2D 2S 7C 7H 7S"
    assert str(parse_move("attack 3S 3H")) == "attack 3H 3S"
    assert str(parse_move("ATTACK 10s th 9c")) == "attack 9C 10H 10S"


def test_c6_attack_in_any_order_is_the_same_move() -> None:
    """C6: two spellings of one attack parse to equal moves."""
    a = parse_move("attack 3S 3H")
    b = parse_move("Attack 3♥ 3♠")
    assert a == b
    assert isinstance(a, Move)
    assert a.kind_name == "attack"
    assert [card_text(c) for c in a.cards] == ["3H", "3S"]


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("kill 3H 7H", "kill 3H 7H"),
        ("KILL 7h 3h", "kill 7H 3H"),
        ("kill 3s 3♦", "kill 3S 3D"),
        ("self 9S 8S", "self 9S 8S"),
        ("self 8s 9s", "self 8S 9S"),
        ("beg 3H 9H", "beg 3H 9H"),
        ("beg 9h 3h", "beg 9H 3H"),
    ],
)
def test_c6_kill_self_beg_keep_their_card_order(text: str, canonical: str) -> None:
    """C6: kill, self and beg name the attacked card first, then the killer: never sorted."""
    assert str(parse_move(text)) == canonical


@pytest.mark.parametrize(
    ("text", "canonical", "kind"),
    [
        ("attack deck", "attack deck", "attack deck"),
        ("ATTACK DECK", "attack deck", "attack deck"),
        ("transfer show 7D", "transfer show 7D", "transfer show"),
        ("Transfer Show 7♦", "transfer show 7D", "transfer show"),
        ("transfer 7c", "transfer 7C", "transfer"),
        ("deck-kill", "deck-kill", "deck-kill"),
        ("take", "take", "take"),
        ("PASS", "pass", "pass"),
        ("exchange", "exchange", "exchange"),
    ],
)
def test_c6_other_move_forms(text: str, canonical: str, kind: str) -> None:
    """C6: every move has one text form; parsing is case-insensitive."""
    move = parse_move(text)
    assert str(move) == canonical
    assert move.kind_name == kind
    assert parse_move(str(move)) == move


def test_c6_attack_deck_is_not_an_attack_with_cards() -> None:
    """C6: "attack deck" is its own move, distinct from attacking with named cards."""
    assert parse_move("attack deck").cards == ()
    assert parse_move("attack deck") != parse_move("attack 2C")


@pytest.mark.parametrize(
    "text",
    ["", "jump 3H", "kill 3H", "kill 3H 7H 8H", "attack", "take 3H", "attack 3H 3H", "kill 3H 3H"],
)
def test_c6_malformed_moves_are_refused(text: str) -> None:
    """C6: texts that are not moves raise a ValueError."""
    with pytest.raises(ValueError):
        parse_move(text)


def test_c6_bad_card_inside_a_move_names_it() -> None:
    """C1/C6: a bad card in a move is reported with the card error's wording."""
    with pytest.raises(ValueError, match='"11X" is not a card:'):
        parse_move("attack 3H 11X")


def test_c6_every_legal_move_text_parses_back_to_itself() -> None:
    """C6: the notation of every generated legal move round-trips, through random games."""
    rng = random.Random(11)
    seen = set()
    for seed in range(6):
        g = new_game("moska", 2 + seed % 5, seed=seed)
        for _ in range(300):
            if g.is_over:
                break
            moves = g.legal_moves()
            for move in moves:
                text = str(move)
                assert parse_move(text) == move
                assert parse_move(text.lower()) == move
                seen.add(move.kind_name)
            g.play(rng.choice(moves))
    assert {"attack", "kill", "take", "pass"} <= seen


def test_c6_game_accepts_aliases_and_prints_canonical_history() -> None:
    """C1/C6: a game takes moves in any accepted spelling; its history is canonical."""
    deck = stack_deck(
        "moska",
        4,
        hands={0: "3H 3S 7S 2C 4C 6C", 1: "3D 5D 10C KC 7H AH"},
        dealer=3,
        indicator="JD",
    )
    g = new_game("moska", 4, deck=deck, dealer=3)
    played = g.play("ATTACK 3♠ 3h")
    assert str(played) == "attack 3H 3S"
    g.play("Kill 3♥ 7♥")
    assert [(seat, str(m)) for seat, m in g.history] == [(0, "attack 3H 3S"), (1, "kill 3H 7H")]
    with pytest.raises(IllegalMove):
        g.play("kill 3S 7H")  # 7H is on the table now, no longer in North's hand
    assert len(g.history) == 2
