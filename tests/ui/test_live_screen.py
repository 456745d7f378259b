"""The full-screen table's own parts, without a terminal: what it draws for a game's end seen
by a spectator, and that no fault in drawing takes the screen (and the keys that leave it)
away."""

from __future__ import annotations

import io
from dataclasses import dataclass

from moska_p2p.bots.api import GameResult
from moska_p2p.engine import Game, make_rules
from moska_p2p.ui.app import FullScreen
from moska_p2p.ui.render import WAIT_DECISIONS, render_table, wait_text
from moska_p2p.ui.terminal import TerminalPlayer, help_text


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
    through: tuple[tuple[int, int], ...] = ()
    cut_off: tuple[tuple[int, float], ...] = ()


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
        "bob is not answering: the game waits 45 s for them"
    )
    assert wait_text(_Wait("result", (0, 2), ("", ""), (False, False)), names) == (
        "the end: waiting for ann, cy (45 s left)"
    )
    assert wait_text(_Wait("play", ()), names, view) == ""  # this seat's own move


def test_the_status_says_whose_frames_come_through_another_seat() -> None:
    """A peer whose link to bob is down hears bob through cy: the status line says so, after
    what the table waits for, or alone on this seat's own move."""
    names = ["ann", "bob", "cy"]
    assert wait_text(_Wait("play", (), through=((1, 2),)), names) == (
        "bob's frames come through cy"
    )
    waiting = _Wait("result", (1,), ("",), (False,), 12.0, through=((1, 2), (7, 0)))
    assert wait_text(waiting, names) == (
        "the end: waiting for bob (12 s left); bob's frames come through cy;"
        " seat 7's frames come through ann"
    )


def _texts(rows: list) -> list[str]:  # type: ignore[type-arg]
    return ["".join(text for _style, text, *_rest in row) for row in rows]


def test_a_terminal_too_small_says_so_and_keeps_the_hand() -> None:
    """At 40x12 the table's window has 9 rows: the hand, the table's last rows, was cut off
    with no word."""
    screen = FullScreen(color=False)
    table = [f"row {n}" for n in range(12)] + ["hand   1   2", "       7♥  9♠"]
    screen.show(lambda width, picked: "\n".join(table), 2, ["ann: attack 7H"])
    rows = _texts(screen.lines(40, 9))
    assert rows[0] == "terminal too small: needs 60x20"
    assert rows[-2:] == ["hand   1   2", "       7♥  9♠"]
    assert len(rows) == 9
    assert _texts(screen.lines(80, 30))[0] == "row 0"  # room enough: no notice


def test_a_long_status_wraps_and_keeps_its_end() -> None:
    """A refused move's reason ends with what to do: a status cut at the width lost it."""
    screen = FullScreen(color=False)
    reason = (
        "not played: 9C fits more than one attack card on the table (7C and 8C): name the"
        " attack card too, as in: kill 7C 9C"
    )
    screen.status(reason)
    rows = screen.status_rows(60)
    assert len(rows) == 2 and all(len(row) <= 59 for row in rows)
    assert rows[-1].endswith("as in: kill 7C 9C")
    assert screen.status_rows(200) == [reason]
    screen.status("word " * 100)
    assert len(screen.status_rows(60)) == 3 and screen.status_rows(60)[-1].endswith("…")


def test_the_help_lists_only_the_moves_of_the_game_in_plain_words() -> None:
    mustamaija = help_text("mustamaija")
    assert "kill 3H 7H" in mustamaija and "take " in mustamaija
    for other in ("transfer", "beg ", "attack deck", "exchange", "self 8S", "deck-kill"):
        assert other not in mustamaija, other
    assert "C6" not in mustamaija and "RULES" not in mustamaija
    assert "transfer 7C" in help_text("perevodnoy") and "beg 3H" not in help_text("perevodnoy")
    assert "beg 3H" in help_text("kaavi") and "self 8S" in help_text("taraki")


def test_mustamaijas_end_says_the_loser_holds_the_black_maija() -> None:
    """MM4, MM7: the Q♠ never leaves play, so the loser is left holding it; the end said
    only who lost."""
    out = io.StringIO()
    person = TerminalPlayer(["ann", "bob"], stdout=out, interactive=False, color=False)
    person.start_game(Game(make_rules("mustamaija"), 2, list(range(52)), dealer=0).view(0))
    person.end_game(GameResult(0, (1,), None, "", 40))
    assert "bob holds the Q♠, the Black Maija: nothing beats it (MM4)" in out.getvalue()
    moska = TerminalPlayer(["ann", "bob"], stdout=io.StringIO(), interactive=False)
    moska.start_game(Game(make_rules("moska"), 2, list(range(52)), dealer=0).view(0))
    moska.end_game(GameResult(0, (1,), None, "", 40))
    assert "Black Maija" not in moska.out.getvalue()  # type: ignore[attr-defined]


def test_a_long_line_of_the_log_wraps_instead_of_losing_its_end() -> None:
    """The node's seats line ran past the width and was cut at the start of the game."""
    screen = FullScreen(color=False)
    seats = (
        "seats: ann (seat 0, 5E45-A8E4-80DC-8E09), bob (seat 1, F09D-ECA9-3598-3234);"
        " dealer: seat 1; you are seat 0"
    )
    screen.show(lambda width, picked: "header", 0, ["bob: attack 7H"])
    screen.note(seats)
    rows = _texts(screen.lines(60, 8))
    assert rows[0] == "header" and rows[1].startswith("── log")
    assert rows[2] == "bob: attack 7H"
    assert " ".join(row.strip() for row in rows[3:]) == seats
    assert all(len(row) <= 59 for row in rows)
    tail = _texts(screen.lines(60, 4))  # room for two rows of the log: its last rows
    assert tail[-1].strip().endswith("you are seat 0")
