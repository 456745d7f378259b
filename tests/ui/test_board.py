"""The standings board: drawn at 80 and 120 columns (every line fits, the columns line up,
a long or wide name is cut, never the numbers), ties decided by lot marked, who plays at
which table; printed when not on a terminal; full screen in a pseudo-terminal, redrawn as a
table's session goes on, left with q or Ctrl-C."""

from __future__ import annotations

import hashlib
import io
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from prompt_toolkit.utils import get_cwidth
from screen_harness import Term, term_env

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol.tally import GameRecord
from moska_p2p.tournament import (
    PERSON,
    Entrant,
    EventSpec,
    RoundResult,
    Row,
    TableResult,
    standings,
)
from moska_p2p.tournament.report import DONE, NO_RESULT, BoardState, TableStatus
from moska_p2p.ui.board import BoardScreen, fit, render_board

SPEC = EventSpec(
    "club night", "moska", seats_per_table=3, rounds=3, games_per_round=3,
    final_size=3, final_games=2,
)  # fmt: skip
LONG = "Wolfgang Amadeus Mozart-Korhonen-Virtanen"[:40]
NAMES = ["alice", "bob", LONG, "dave", "eve", "周杰伦周杰伦周杰伦周杰伦周杰伦"]
WAIT = 60.0


def game(number: int, *losers: int) -> GameRecord:
    return GameRecord(number, hashlib.sha256(bytes([number, *losers])).digest(), b"s", losers,
                      False, 0)  # fmt: skip


def entrants() -> list[Entrant]:
    return [
        Entrant(Identity.from_seed(bytes([i + 1]) * 32).public_bytes, name, PERSON)
        for i, name in enumerate(NAMES)
    ]


E = entrants()
K = [e.key for e in E]
ROUND1 = RoundResult(
    hashlib.sha256(b"1").digest(),
    (
        TableResult((K[0], K[1], K[2]), (game(1, 1), game(2, 1), game(3, 2))),
        TableResult((K[3], K[4], K[5]), (game(1, 0), game(2, 1), game(3, 2))),
    ),
    games_per_round=3,
)


def rows(*rounds: RoundResult, final: TableResult | None = None) -> tuple[Row, ...]:
    return tuple(standings([(e.key, e.name) for e in E], rounds, final))


def round2(played: int = 1, state: str = "playing") -> BoardState:
    return BoardState(
        SPEC,
        rows(ROUND1),
        2,
        (TableStatus(1, (K[0], K[3], K[5]), played, 3, state),
         TableStatus(2, (K[1], K[2], K[4]), 3, 3, DONE)),
    )  # fmt: skip


def columns(line: str) -> int:
    """Display columns (a CJK character takes two)."""
    return sum(get_cwidth(c) for c in line)


def upto(line: str, cols: int) -> str:
    """The first ``cols`` display columns of ``line``."""
    return fit(line, cols, ellipsis="")


@pytest.mark.parametrize("width", [80, 120])
def test_the_board_fits_the_width_and_its_columns_line_up(width: int) -> None:
    lines = render_board(round2(), width, you=K[1])
    assert lines[0] == "club night · round 2 of 3"
    assert all(columns(line) <= width - 1 for line in lines)
    head = lines[1]
    assert head.split() == ["#", "name", "losses", "games", "kor.", "por.", "forf.", "now"]
    body = lines[2:8]
    edge = head.index("forf.") + len("forf.")  # numbers right-aligned under their heading
    assert all(upto(line, edge).endswith(("0", "1", "2", "3")) for line in body), lines
    by_name = {n: line for n in NAMES for line in body if n[:5] in line}
    assert by_name["alice"].endswith("table 1, game 2/3")
    assert by_name["bob"].startswith("▶") and by_name["bob"].endswith("table 2: done")
    assert "1 of 2 tables playing · table 1, game 2/3 · table 2: done" in lines
    if width == 80:  # the long names are cut, with an ellipsis, never the numbers
        assert "…" in by_name[LONG] and "…" in by_name[NAMES[5]]
        assert LONG not in by_name[LONG] and NAMES[5] not in by_name[NAMES[5]]
    else:  # at 120 every name is whole
        assert LONG in by_name[LONG] and NAMES[5] in by_name[NAMES[5]]


def test_ties_decided_by_lot_share_a_rank_and_are_explained() -> None:
    lines = render_board(round2(), 120)
    # alice lost none; four lost one game each of three, none twice in a row; bob two.
    assert [line.split()[0] for line in lines[2:8]] == ["1", "2=", "2=", "2=", "2=", "6"]
    assert "= tied: the order between them is by lot" in lines


NAME = st.text(
    st.characters(codec="utf-8", categories=["L", "M", "N", "P", "S", "Zs"]),
    min_size=1,
    max_size=40,
).filter(str.isprintable)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(NAME, min_size=2, max_size=8, unique_by=str.casefold),
    st.lists(st.integers(0, 2500), min_size=8, max_size=8),
    st.integers(60, 200),
)
def test_any_names_at_any_width_fit_and_keep_the_numbers_in_their_column(
    names: list[str], points: list[int], width: int
) -> None:
    board_rows = tuple(
        Row(hashlib.sha256(name.encode()).digest(), name, points=p, games=p + 3)
        for name, p in zip(names, sorted(points), strict=False)
    )
    state = BoardState(SPEC, board_rows, 1, (TableStatus(1, (board_rows[0].key,), 0, 3),))
    lines = render_board(state, width)
    assert all(columns(line) <= width - 1 for line in lines)
    edge = lines[1].index("losses") + len("losses")
    for row, line in zip(board_rows, lines[2:], strict=False):
        assert upto(line, edge).endswith(" " + str(row.points)), (line, edge)


def test_the_phases_the_final_column_and_tables_without_a_result() -> None:
    before = BoardState(SPEC, rows(), 0)
    assert render_board(before, 80)[0] == "club night · before round 1"
    assert "now" not in render_board(before, 80)[1]  # nobody plays yet: no column
    nothing = RoundResult(hashlib.sha256(b"2").digest(),
                          (TableResult((K[0], K[3], K[5]), None),), forfeited=(K[1], K[2], K[4]),
                          games_per_round=3)  # fmt: skip
    final = TableResult((K[0], K[3], K[4]), (game(1, 1), game(2, 2)))
    done = rows(ROUND1, nothing, nothing, final=final)
    lines = render_board(BoardState(SPEC, done, 4, finished=True), 80)
    assert lines[0] == "club night · final standings"
    assert lines[1].split()[-1] == "final"
    footer = " ".join(line.strip() for line in lines)
    assert "a table that left no result (round): alice (2, 3), dave (2, 3)," in footer
    at_final = BoardState(SPEC, done, 4, (TableStatus(1, (K[0], K[3], K[4]), 0, 2),))
    text = render_board(at_final, 80)
    assert text[0] == "club night · final table"
    assert "sits out" not in "".join(text)  # a final table seats the best, nobody sits out
    cut = BoardState(SPEC, rows(ROUND1), 2, (TableStatus(1, (K[0], K[1], K[2]), 2, 3,
                                                           NO_RESULT),))  # fmt: skip
    assert "table 1: no result" in render_board(cut, 80)[2]
    assert any("sits out" in line for line in render_board(cut, 80))


def test_a_short_screen_keeps_the_top_and_your_own_row() -> None:
    state = round2()
    last = state.rows[-1]
    lines = render_board(state, 80, height=8, you=last.key, symbols=False)
    assert len(lines) <= 8
    assert lines[0] == "club night . round 2 of 3"
    assert lines[2].split()[1] == state.rows[0].name
    assert any(line.startswith(">") and last.name[:5] in line for line in lines)
    assert any("more not shown" in line for line in lines)


def test_not_on_a_terminal_the_board_is_printed_each_time_it_changes() -> None:
    out = io.StringIO()
    board = BoardScreen(interactive=False, out=out)
    board.update(round2(1))
    board.update(round2(1))  # the same board: not printed again
    board.update(round2(2))
    board.note("table 2's result is in")
    text = out.getvalue()
    assert text.count("club night · round 2 of 3") == 2
    assert "table 1, game 2/3" in text and "table 1, game 3/3" in text
    assert text.endswith("table 2's result is in\n") and board.wait(0)


SCRIPT = """
import sys, time
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_board import K, round2
from moska_p2p.ui.board import BoardScreen

folder = Path({folder!r})
board = BoardScreen(interactive=True, out=sys.stdout, you=K[1])
board.update(round2(1))
end = time.monotonic() + 60
while not (folder / "next").exists() and time.monotonic() < end:
    time.sleep(0.05)
board.update(round2(3, "done"))
left = board.wait(60)
board.close()
print("left the board" if left else "timed out")
"""


def run_script(tmp_path: Path, source: str) -> Term:
    """``source`` run on a pseudo-terminal of 24 x 80, once its board is on screen."""
    script = tmp_path / "board.py"
    tests = str(Path(__file__).parent)
    script.write_text(textwrap.dedent(source).format(tests=tests, folder=str(tmp_path)))
    term = Term([str(script)], 24, 80, env=term_env(), command=sys.executable)
    try:
        term.wait("club night · round 2 of 3", WAIT, row=0)
    except BaseException:
        term.close()
        raise
    return term


@pytest.mark.parametrize("key", ["q", "\x03"])
def test_the_full_screen_board_redraws_and_leaves_on_q_or_ctrl_c(tmp_path: Path, key: str) -> None:
    term = run_script(tmp_path, SCRIPT)
    try:
        term.wait(r"table 1, game 2/3", WAIT)
        term.check(all(len(line) <= 80 for line in term.lines()), "a line is too wide")
        term.wait(r"q: leave the board", WAIT)
        (tmp_path / "next").touch()
        term.wait(r"2 tables.*table 1: done|0 of 2 tables playing", WAIT)
        term.send(key)
        assert term.exit_code(WAIT) == 0
        printed = "".join(term.raw)
        assert "left the board" in printed
        assert "table 1: done" in printed.split("left the board")[0]
    finally:
        term.close()


@pytest.mark.usefixtures("finnish")
def test_the_board_speaks_finnish() -> None:
    lines = render_board(round2(), 80)
    assert lines[0] == "club night · kierros 2/3"
    assert lines[1].split() == ["#", "nimi", "häviöt", "pelit", "kor.", "por.", "luov.", "nyt"]
    assert "1/2 pöytää pelaa · pöytä 1, peli 2/3 · pöytä 2: valmis" in lines
    assert all(columns(line) <= 79 for line in lines)


PERSON_SCRIPT = """
import sys
from pathlib import Path
import trio
sys.path.insert(0, {tests!r})
from test_board import K, round2
from moska_p2p.cli.tournament import PersonBoard

folder = Path({folder!r})

async def main() -> None:
    person = PersonBoard(K[1])
    person.show(round2(1))  # a round just seated: the person's table takes the screen
    print("a seated round is not shown" if person.board is None else "shown")
    person.show(round2(3, "done"))
    end = trio.current_time() + 60
    while person.board is not None and trio.current_time() < end:
        if (folder / "next").exists():
            person.close()  # the person's next table starts
            print("to the next table")
            return
        await trio.sleep(0.05)
    print("left the board" if person.board is None else "timed out")

trio.run(main)
"""


@pytest.mark.parametrize("leave", ["q", "next table"])
def test_a_person_entrant_has_the_board_full_screen_between_its_tables(
    tmp_path: Path, leave: str
) -> None:
    """An event's person entrant: a round's standings full screen until q or its next
    table (the event's own thread closes it either way), then left on the terminal."""
    term = run_script(tmp_path, PERSON_SCRIPT)
    try:
        term.wait(r"q: leave the board", WAIT)
        term.wait(r"0 of 2 tables playing", WAIT)
        if leave == "q":
            term.send("q")
        else:
            (tmp_path / "next").touch()
        assert term.exit_code(WAIT) == 0
        printed = "".join(term.raw)
        said = "left the board" if leave == "q" else "to the next table"
        assert "a seated round is not shown" in printed and said in printed
        assert "table 1: done" in printed.split(said)[0]
    finally:
        term.close()
