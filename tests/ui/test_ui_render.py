"""The table as text: it fits 80x24, respects NO_COLOR, shows roles, pairs and the hand."""

from __future__ import annotations

import random
import re

import pytest

from moska_p2p.engine import PRESETS, Game, new_game
from moska_p2p.ui.render import (
    color_wanted,
    render_table,
    sort_hand,
    strip_ansi,
    visible_width,
)

NAMES = ["alice", "greedy 1", "greedy 2", "greedy 3", "greedy 4", "greedy 5"]


def _games(preset: str, players: int, seed: int) -> list[Game]:
    """Snapshots of one random game, every few moves."""
    game = new_game(preset, players=players, seed=seed)
    rng = random.Random(seed)
    snaps = [game.copy()]
    while not game.is_over:
        game.play(game.random_move(rng))
        if len(game.history) % 7 == 0:
            snaps.append(game.copy())
    snaps.append(game)
    return snaps


@pytest.mark.parametrize("preset", PRESETS)
def test_every_line_fits_80_columns_and_the_table_20_lines(preset: str) -> None:
    players = 6 if preset != "durak-teams" else 4
    for game in _games(preset, players, seed=3):
        for seat in (0, players - 1):
            text = render_table(game.view(seat), NAMES[:players], color=True)
            lines = text.split("\n")
            assert len(lines) <= 20, text
            assert max(visible_width(line) for line in lines) <= 80, text


def test_a_huge_hand_still_fits_80_columns() -> None:
    # Moska with no attack limit: the defender may take a whole table of cards.
    game = new_game("turamoska-pyhaselka", players=2, seed=5)
    rng = random.Random(5)
    biggest = game.copy()
    while not game.is_over:
        game.play(game.random_move(rng))
        if max(game.hand_sizes()) > max(biggest.hand_sizes()):
            biggest = game.copy()
    seat = max(range(2), key=lambda s: biggest.hand_size(s))
    text = strip_ansi(render_table(biggest.view(seat), NAMES[:2], color=False))
    assert max(len(line) for line in text.split("\n")) <= 80
    assert len(text.split("\n")) <= 20


def test_no_color_means_no_escape_codes(monkeypatch: pytest.MonkeyPatch) -> None:
    game = new_game("moska", players=4, seed=1)
    monkeypatch.setenv("NO_COLOR", "1")
    assert not color_wanted()
    text = render_table(game.view(0), NAMES[:4])
    assert "\x1b[" not in text
    monkeypatch.delenv("NO_COLOR")
    assert "\x1b[" in render_table(game.view(0), NAMES[:4])
    assert "\x1b[" not in render_table(game.view(0), NAMES[:4], color=False)


def test_red_suits_are_red_and_black_suits_are_not() -> None:
    game = new_game("moska", players=2, deck=_deck_with_hand("3H 4C 5D 6S 7C 8H"), dealer=1)
    text = render_table(game.view(0), NAMES[:2], color=True)
    assert "\x1b[31m3♥" in text or "\x1b[31;1m3♥" in text
    assert "\x1b[31m5♦" in text or "\x1b[31;1m5♦" in text
    assert "\x1b[31m4♣" not in text and "\x1b[31m6♠" not in text


def _deck_with_hand(cards: str) -> list[int]:
    """A 52-card deck, top first, whose first cards are dealt to seat 0 of two (dealer 1:
    seat 0 is dealt first, one card at a time)."""
    from moska_p2p.engine import stack_deck

    return list(stack_deck("moska", 2, hands={0: cards}, dealer=1))


def test_roles_whose_decision_and_pairs() -> None:
    game = new_game("moska", players=3, seed=11)
    while True:
        assert not game.is_over, "no bout with a killed card: pick another seed"
        game.play(game.legal_moves()[0])
        killed = [pair for pair in game.table if pair[1] is not None]
        if killed and game.decision in ("defend", "throw-in"):
            break
    view = game.view(0)
    text = strip_ansi(render_table(view, NAMES[:3], color=False))
    lines = text.split("\n")
    seat_lines = lines[2:5]
    assert "attacker" in seat_lines[view.attacker]
    assert "defender" in seat_lines[view.defender]
    assert seat_lines[view.to_act].startswith("▶ ")
    assert sum(line.startswith("▶") for line in seat_lines) == 1
    assert "(you)" in seat_lines[0]
    # The bout: attack cards on one row, the killing card right under its attack card.
    top = next(i for i, line in enumerate(lines) if line.startswith("table"))
    attack_row, kill_row = lines[top], lines[top + 1]
    for attack, kill in view.table:
        a = _face(attack)
        column = attack_row.index(a, 6)
        under = kill_row[column : column + 3].strip()
        assert under == (_face(kill) if kill else "·")


def _face(card: str) -> str:
    return card[:-1] + "♣♦♥♠"["CDHS".index(card[-1])]


def test_out_and_lost_are_shown_at_the_end() -> None:
    game = _games("moska", 3, seed=2)[-1]
    assert game.is_over
    text = strip_ansi(
        render_table(game.view(0), NAMES[:3], losers=list(game.loser_seats), color=False)
    )
    seat_lines = text.split("\n")[2:5]
    for seat in range(3):
        if seat in game.loser_seats:
            assert "LOST" in seat_lines[seat]
        else:
            assert " out" in seat_lines[seat]


def test_the_hand_is_sorted_by_suit_trump_last_and_numbered() -> None:
    assert sort_hand(["AS", "2H", "3C", "KD", "4S", "9H"], trump="D") == [
        "3C",
        "4S",
        "AS",
        "2H",
        "9H",
        "KD",
    ]
    game = new_game("moska", players=2, seed=4)
    view = game.view(0)
    text = strip_ansi(render_table(view, NAMES[:2], color=False))
    lines = text.split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith("hand"))
    numbers = lines[at].split()[1:]
    cards = lines[at + 1].split()
    assert numbers == [str(i) for i in range(1, len(view.hand) + 1)]
    assert cards == [_face(c) for c in sort_hand(view.hand, view.trump)]


def test_letters_instead_of_symbols() -> None:
    game = new_game("moska", players=2, seed=4)
    text = render_table(game.view(0), NAMES[:2], color=False, symbols=False)
    assert not set(text) & set("♣♦♥♠─▶·…")
    assert text.isascii()


def test_open_hands_show_every_card() -> None:
    game = new_game("durak", players=3, seed=9)
    hands = {s: game.hand(s) for s in range(3)}
    text = strip_ansi(render_table(game.view(0), NAMES[:3], hands=hands, you=-1, color=False))
    seat_lines = text.split("\n")[2:5]
    for seat in (1, 2):
        for card in hands[seat]:
            assert _face(card) in seat_lines[seat]
    assert "(you)" not in text


@pytest.mark.parametrize("preset", ["moska", "durak-52", "mustamaija"])
def test_a_ten_keeps_the_table_and_hand_columns_in_place(preset: str) -> None:
    """Every card of the bout's and the hand's grids starts at a column of its own (7, 11,
    15...), a three-character 10 as much as any other: nothing after a 10 drifts."""
    tens = 0
    for game in _games(preset, 3, seed=11):
        for seat in range(3):
            lines = strip_ansi(render_table(game.view(seat), NAMES[:3], color=False)).split("\n")
            for at, line in enumerate(lines):
                if not line.startswith(("table ", "hand ")):
                    continue
                for row in lines[at : at + 2]:
                    for card in re.finditer(r"(?:10|[2-9JQKA])[♣♦♥♠]", row):
                        tens += card.group().startswith("10")
                        where = f"{card.group()} at column {card.start()}:\n{row}"
                        assert (card.start() - 7) % 4 == 0, where
    assert tens > 0  # the games did put tens on the table and in hands
