"""The full-screen table's parts that need no terminal: its layout at a size, the log's
scrolling, wrapping help and rules to the width, the picked card; and ``play --watch`` in
plain mode (the pty tests drive the screen itself)."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from moska_p2p.cli import app
from moska_p2p.engine import new_game
from moska_p2p.rules_text import rules_text
from moska_p2p.ui.app import FullScreen, legal_line, wrap_text
from moska_p2p.ui.render import log_lines, render_table, strip_ansi
from moska_p2p.ui.terminal import HELP


def _text(rows: list[list[tuple[str, str]]]) -> list[str]:
    return ["".join(text for _, text in row) for row in rows]


def _screen_of_a_game(moves: int) -> tuple[FullScreen, int]:
    game = new_game("moska", players=4, seed=11)
    for _ in range(moves):
        game.play(game.legal_moves()[0])
    view = game.view(0)
    names = ["alice", "b", "c", "d"]
    screen = FullScreen(color=False)
    log = log_lines(view.history, names, color=False, symbols=True, trump=view.trump, width=200)
    screen.show(
        lambda width, picked: render_table(
            view, names, color=False, width=width, height=0, selected=picked
        ),
        len(view.hand),
        log,
    )
    return screen, len(log)


@pytest.mark.parametrize(("width", "height"), [(60, 17), (80, 21), (132, 40)])
def test_the_table_keeps_its_header_and_hand_and_the_log_takes_the_rest(
    width: int, height: int
) -> None:
    screen, logged = _screen_of_a_game(40)
    rows = _text(screen.lines(width, height))
    assert len(rows) == height  # every row used
    assert re.match(r"moska · trump .* · move 40$", rows[0])
    hand = next(i for i, row in enumerate(rows) if row.startswith("hand "))
    assert rows[hand + 2].startswith("── log")
    assert all(len(row) <= width for row in rows)
    shown = height - hand - 3
    assert f"{logged - shown} more" in rows[hand + 2] if logged > shown else True


def test_pgup_and_pgdn_scroll_the_log_a_page_and_stop_at_its_ends() -> None:
    screen, logged = _screen_of_a_game(40)
    rows = _text(screen.lines(80, 21))
    page = 21 - next(i for i, row in enumerate(rows) if row.startswith("── log")) - 1
    last = rows[-1]
    screen.scroll(-1)
    rows = _text(screen.lines(80, 21))
    label = f"log {logged - 2 * page + 1}-{logged - page} of {logged} (PgDn: later)"
    assert label in rows[-page - 1]
    for _ in range(50):
        screen.scroll(-1)
    rows = _text(screen.lines(80, 21))
    assert f"log 1-{page} of {logged}" in rows[-page - 1]
    assert rows[-page].startswith("b: attack") or ": attack" in rows[-page]  # the first move
    for _ in range(50):
        screen.scroll(1)
    rows = _text(screen.lines(80, 21))
    assert rows[-1] == last and "PgUp: earlier" in rows[-page - 1]


def test_a_pane_covers_the_table_wrapped_to_the_width_and_closes() -> None:
    screen, _ = _screen_of_a_game(5)
    screen.pane("help", HELP)
    rows = _text(screen.lines(60, 17))
    assert rows[0].startswith("help · Esc or q closes · PgUp/PgDn scroll")
    assert all(len(row) < 60 for row in rows)
    first = rows[1]
    screen.scroll(1)
    assert _text(screen.lines(60, 17))[1] != first
    screen.close_pane()
    assert _text(screen.lines(60, 17))[0].startswith("moska · trump")


@pytest.mark.parametrize("preset", ["moska", "durak", "mustamaija", "kaavi"])
def test_help_and_rules_wrap_to_60_columns_keeping_every_word(preset: str) -> None:
    for text in (HELP, rules_text(preset)):
        lines = wrap_text(text, 59)
        assert all(len(line) <= 59 for line in lines)
        assert " ".join(" ".join(lines).split()) == " ".join(text.split())


def test_the_legal_line_is_cut_at_whole_moves() -> None:
    moves = [f"kill {a}H {b}S" for a in range(2, 9) for b in range(2, 9)]
    line = legal_line(moves, 60)
    assert len(line) < 60 and line.startswith("legal: kill 2H 2S | ")
    assert re.search(r"\(\+\d+ more: Tab or moves\)$", line)
    assert legal_line(["take", "pass"], 60) == "legal: take | pass"


def test_the_picked_card_is_marked_and_put_on_the_line() -> None:
    screen, _ = _screen_of_a_game(3)
    screen.hand_cards = ["3C", "9D", "KS"]
    screen.pick(1)
    assert screen.picked_card() == "3C"
    screen.pick(-1)
    assert screen.picked_card() == "KS"
    rows = _text(screen.lines(80, 21))
    hand = next(row for row in rows if row.startswith("hand "))
    assert "▶" in hand
    table = strip_ansi(render_table(new_game("durak", players=2, seed=1).view(0), selected=1))
    assert re.search(r"^hand +1 +▶2 ", table, re.M)


def test_watch_without_a_terminal_prints_every_move_of_the_named_bots() -> None:
    result = CliRunner().invoke(
        app,
        ["play", "--watch", "--preset", "durak", "--players", "2", "--bots", "random,greedy",
         "--seed", "4", "--pace", "5"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    out = result.output
    assert "seat 0 (random 0): " in out and "seat 1 (greedy 1): " in out
    over = re.search(r"game over after (\d+) moves; lost: (random 0|greedy 1)", out)
    assert over, out[-300:]
    assert len(re.findall(r"^ +\d+\. seat [01] ", out, re.M)) == int(over.group(1))


def test_watch_needs_one_bot_or_one_per_seat() -> None:
    result = CliRunner().invoke(
        app, ["play", "--watch", "--players", "3", "--bots", "random,greedy"]
    )
    assert result.exit_code == 2
    assert "3 seats need 1 or 3 bots, not 2" in result.output
