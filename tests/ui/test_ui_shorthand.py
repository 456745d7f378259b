"""What a person types: short verbs, hand numbers, one-card kills, and clear reasons."""

from __future__ import annotations

import io

import pytest

from moska_p2p.engine import Game, IllegalMove, MoveSyntaxError, new_game, stack_deck
from moska_p2p.ui.render import sort_hand
from moska_p2p.ui.shorthand import expand, expand_verb, personal, read_move
from moska_p2p.ui.terminal import LeaveGame, TerminalPlayer


def _defending() -> Game:
    """Seat 1 defends against 3H and 3S in Moska; seat 1 holds 7H 9S KC 4D 5D 6C."""
    deck = stack_deck(
        "moska",
        2,
        hands={0: "3H 3S 8C 8D 10C JD", 1: "7H 9S KC 4D 5D 6C"},
        dealer=1,
        indicator="2C",
    )
    game = new_game("moska", players=2, deck=deck, dealer=1)
    game.play("attack 3H 3S", seat=0)
    return game


def test_short_verbs_spell_out() -> None:
    assert expand_verb("k 3h 7h") == "kill 3h 7h"
    assert expand_verb("K") == "kill"
    assert expand_verb("t") == "take"
    assert expand_verb("a deck") == "attack deck"
    assert expand_verb("kill 3h") == "kill 3h"
    assert expand("p", []) == "pass"
    assert expand("x", []) == "exchange"
    assert expand("s 8s 9s", []) == "self 8s 9s"


def test_numbers_stand_for_hand_cards_in_their_shown_order() -> None:
    hand = ["4C", "9C", "AD", "2H"]
    assert expand("a 1 2", hand) == "attack 4C 9C"
    assert expand("k 3h 4", hand) == "kill 3h 2H"
    with pytest.raises(MoveSyntaxError, match="numbered 1 to 4"):
        expand("a 5", hand)
    with pytest.raises(MoveSyntaxError, match="numbered 1 to 4"):
        expand("a 0", hand)
    with pytest.raises(MoveSyntaxError, match="type a move"):
        expand("   ", hand)


def test_read_move_understands_every_form() -> None:
    game = _defending()
    view = game.view(1)
    legal = game.legal_moves()
    hand = sort_hand(view.hand, view.trump)
    seven = str(hand.index("7H") + 1)
    assert str(read_move("kill 3H 7H", view, legal)) == "kill 3H 7H"
    assert str(read_move("KILL 3h 7h", view, legal)) == "kill 3H 7H"
    assert str(read_move("k 3h 7h", view, legal)) == "kill 3H 7H"
    assert str(read_move(f"k 3h {seven}", view, legal)) == "kill 3H 7H"
    assert str(read_move("k 7h", view, legal)) == "kill 3H 7H"  # 7H fits only 3H
    assert str(read_move("k 3♥ 7♥", view, legal)) == "kill 3H 7H"
    assert str(read_move("t", view, legal)) == "take"


def test_a_mistyped_or_illegal_move_says_why() -> None:
    game = _defending()
    view = game.view(1)
    legal = game.legal_moves()
    with pytest.raises(MoveSyntaxError, match='"11X" is not a card'):
        read_move("k 3h 11X", view, legal)
    with pytest.raises(MoveSyntaxError, match="unknown word"):
        read_move("kil 3h 7h", view, legal)
    with pytest.raises(IllegalMove) as error:
        read_move("kill 3H 4D", view, legal)  # 4D does not beat 3H
    assert str(error.value) and "\n" not in str(error.value)
    with pytest.raises(IllegalMove, match="several"):
        read_move("k kc", view, legal)  # the trump KC could kill 3H or 3S
    assert str(read_move("k 9s", view, legal)) == "kill 3S 9S"  # 9S fits 3S only
    with pytest.raises(IllegalMove):
        read_move("a 1", view, legal)  # a defender cannot attack now


def test_the_terminal_player_reprompts_until_a_legal_move() -> None:
    game = _defending()
    typed = "help\nk 3h 11x\nkill 3H 4D\nmoves\nrules\n\nk 3h 7h\n"
    out = io.StringIO()
    player = TerminalPlayer(
        ["alice", "bob"], stdin=io.StringIO(typed), stdout=out, interactive=False, color=False
    )
    move = player.choose(game.view(1), game.legal_moves())
    assert str(move) == "kill 3H 7H"
    text = out.getvalue()
    assert "Commands: help" in text
    assert text.count("not played:") == 2
    assert '"11x" is not a card' in text
    assert "legal moves: " in text and "take" in text
    assert "Moves: attack" in text  # the rules' notation line
    assert "\x1b[" not in text


def test_quit_and_the_end_of_input_leave_the_game() -> None:
    game = _defending()
    for typed in ("quit\n", ""):
        player = TerminalPlayer(
            ["a", "b"], stdin=io.StringIO(typed), stdout=io.StringIO(), interactive=False
        )
        with pytest.raises(LeaveGame):
            player.choose(game.view(1), game.legal_moves())


def test_a_lone_pass_is_answered_without_asking() -> None:
    game = new_game("moska", players=3, seed=11)
    while not (len(game.legal_moves()) == 1 and str(game.legal_moves()[0]) == "pass"):
        game.play(game.legal_moves()[-1])
    out = io.StringIO()
    player = TerminalPlayer(
        ["a", "b", "c"], stdin=io.StringIO(""), stdout=out, interactive=False, auto_pass=0
    )
    seat = game.to_act_seat
    assert str(player.choose(game.view(seat), game.legal_moves())) == "pass"
    assert "passing for you" in out.getvalue()


def test_a_refusal_says_you_to_the_person_and_stays_seat_neutral_in_the_engine() -> None:
    """The engine's texts name seats (bots and logs read them); the person at seat 0 reads
    "you"."""
    game = new_game("durak", players=3, seed=2)
    while game.decision != "open":
        game.play(game.legal_moves()[0])
    seat = game.to_act_seat
    with pytest.raises(IllegalMove, match=f"seat {seat} must open the bout"):
        game.copy().play("take", seat=seat)
    view = game.view(seat)
    with pytest.raises(IllegalMove) as said:
        read_move("take", view, game.legal_moves())
    assert str(said.value).startswith("take is not possible now: you must open the bout")
    with pytest.raises(IllegalMove, match=r"^you open the bout and may not pass"):
        read_move("pass", view, game.legal_moves())
    absent = next(c for c in ("6C", "6D", "6H", "6S", "7C", "7D") if c not in view.hand)
    with pytest.raises(IllegalMove, match=rf"^you do not hold {absent}$"):
        read_move(f"attack {absent}", view, game.legal_moves())


def test_personal_turns_only_the_persons_own_seat_into_you() -> None:
    assert personal("seat 0 is the defender and may not attack itself", 0) == (
        "you are the defender and may not attack yourself"
    )
    assert personal("seat 2 may not move: it is seat 0's defend", 0) == (
        "seat 2 may not move: it is your defend"
    )
    assert personal("seat 1 could face at most 3 cards (D11)", 0) == (
        "seat 1 could face at most 3 cards (D11)"
    )
    assert personal("seat 10 does not hold 7H", 1) == "seat 10 does not hold 7H"
    assert personal("seat 3 defends against live cards", 3) == "you defend against live cards"
    assert personal("4D does not beat 3H (C3)", 0) == "4D does not beat 3H (C3)"


def test_the_terminal_player_shows_you_in_a_refusal() -> None:
    game = _defending()
    out = io.StringIO()
    player = TerminalPlayer(
        ["alice", "bob"],
        stdin=io.StringIO("pass\nk 3h 7h\n"),
        stdout=out,
        interactive=False,
        color=False,
    )
    assert str(player.choose(game.view(1), game.legal_moves())) == "kill 3H 7H"
    assert "you defend against live cards and may not pass" in out.getvalue()
    assert "seat 1 defends" not in out.getvalue()
