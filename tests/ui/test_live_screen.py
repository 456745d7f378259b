"""The full-screen table's own parts, without a terminal: what it draws for a game's end seen
by a spectator, and that no fault in drawing takes the screen (and the keys that leave it)
away."""

from __future__ import annotations

from dataclasses import dataclass

from moska_p2p.engine import Game, make_rules
from moska_p2p.ui.app import FullScreen
from moska_p2p.ui.render import WAIT_DECISIONS, render_table, wait_text


def test_a_hand_with_cards_never_shown_is_counted_not_drawn() -> None:
    """An observer's game holds ``??`` for a card nobody showed: the end of a watched game
    drew it and crashed the spectator's screen."""
    game = Game(make_rules("moska"), 3, list(range(52)), dealer=0)
    text = render_table(
        game.view(0),
        ["ann", "bob", "cy"],
        color=False,
        you=-1,
        spectating=True,
        hands={0: ["QS", "??", "??"], 1: ["??"], 2: []},
        losers=[0],
    )
    assert "Q♠ +2 never shown" in text
    assert "+1 never shown" in text
    assert "??" not in text


def test_a_fault_in_drawing_the_table_is_a_line_not_a_dead_screen() -> None:
    screen = FullScreen(color=False)

    def broken(width: int, picked: int | None) -> str:
        raise ValueError("no such card")

    screen.show(broken, 0, ["ann: attack 7H"])
    rows = ["".join(text for _style, text, *_rest in row) for row in screen.lines(80, 10)]
    assert rows[0] == "the table cannot be drawn: no such card"
    assert rows[-1] == "ann: attack 7H"


@dataclass(frozen=True)
class _Wait:
    stage: str
    seats: tuple[int, ...]
    names: tuple[str, ...] = ()
    unreachable: tuple[bool, ...] = ()
    left: float = 45.0


def test_the_wait_in_words_at_each_stage() -> None:
    names = ["ann", "bob", "cy"]
    game = Game(make_rules("moska"), 3, list(range(52)), dealer=0)
    view = game.view(game.to_act_seat)
    on_move = game.to_act_seat
    assert wait_text(_Wait("hello", (-1,), ("bob",), (False,)), names) == (
        "seating: waiting for bob (45 s left)"
    )
    assert wait_text(_Wait("shuffle1", (2,), ("",), (False,)), names) == (
        "dealing: cy's shuffle (seat 2) (45 s left)"
    )
    assert wait_text(_Wait("shuffle2", ()), names) == "dealing: checking the shuffles"
    doing = WAIT_DECISIONS[view.decision]
    assert wait_text(_Wait("play", (on_move,), ("",), (False,), 272.0), names, view) == (
        f"waiting for {names[on_move]} {doing} (4:32 left)"
    )
    assert wait_text(_Wait("play", (1,), ("",), (True,), 44.2), names, view) == (
        "bob is not answering: waiting 45 s for them to come back"
    )
    assert wait_text(_Wait("result", (0, 2), ("", ""), (False, False)), names) == (
        "the end: waiting for ann, cy (45 s left)"
    )
    assert wait_text(_Wait("play", ()), names, view) == ""  # this seat's own move
