"""The real terminal program in a pseudo-terminal, checked on a VT100 emulator's screen.

Nothing is faked: ``moska play`` (and ``replay``, ``play --watch``) runs as a process with a
terminal of 80x24 or 60x20, draws its full-screen table, and gets keystrokes; the tests read
the screen as a person would (the legal moves above the input line) and type from it. Every
check that fails shows the screen (``screen_harness``).
"""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

import pytest
from screen_harness import Term, moska, term_env, unique_prefix

MOVE_ASKED = re.compile(r"Your move")


def _turn(term: Term, after: int) -> list[str] | None:
    """Wait for the person's next question: the legal moves (the table past move ``after``),
    or None at "play again?"."""

    def ready() -> re.Match[str] | None:
        lines = term.lines()
        if "play again?" in lines[term.rows - 1]:
            return re.search("play again", lines[term.rows - 1])
        header = term.header()
        if header is None or int(header.group(1)) <= after:
            return None
        if not lines[term.rows - 1].startswith(">"):
            return None
        return MOVE_ASKED.search(lines[term.rows - 3])

    found = term.wait_for(ready, 60, "the person's next question")
    assert found is not None
    if found.group(0) == "play again":
        return None
    term.check_table()
    return term.legal()


def _play(term: Term, move: str) -> int:
    """Type ``move`` and Enter; the move number it was typed at."""
    at = term.move_number()
    term.send(move + "\r")
    return at


def test_a_whole_game_typed_on_the_full_screen_table_with_a_resize() -> None:
    term = moska(
        "play", "--preset", "mustamaija", "--players", "2", "--seed", "3", "--bots", "greedy",
        "--pace", "0", "--auto-pass", "0",
    )  # fmt: skip
    try:
        legal = _turn(term, -1)
        assert legal
        assert term.lines()[0].startswith("mustamaija · trump")
        first_move = term.move_number()
        # ? opens the help in a pane, wrapped to the width; Esc closes it.
        term.send("?")
        term.wait(r"^help · Esc or q closes", row=0)
        term.check(all(len(line) < 80 for line in term.lines()), "help wider than the screen")
        term.send("\x1b")
        term.wait(r"^mustamaija · trump", row=0)
        # "help" typed, then q closes it too.
        term.send("help\r")
        term.wait(r"^help · ", row=0)
        term.send("q")
        term.wait(r"^mustamaija · trump", row=0)
        # A mistyped card: a reason on the status line, nothing played.
        term.send("k 3h 11x\r")
        term.wait(r"not played: ")  # the status, wrapped onto the rows it needs
        term.check(term.move_number() == first_move, "a mistyped move was played")
        # Ctrl-C asks in the input line; no stays.
        term.send("\x03")
        term.wait(r"^leave the game\? \[y/N\]", row=term.rows - 1)
        term.send("n\r")
        term.wait(r"^>", row=term.rows - 1)
        # The arrows pick a card of the hand, Up puts it on the line, Esc clears the line.
        term.send("\x1b[C")  # Right
        hand = term.hand_row()
        assert hand is not None
        term.wait(r"▶1", row=hand)
        term.send("\x1b[A")  # Up
        term.wait(r"^> [2-9JQKA10]+[CDHS]$", row=term.rows - 1)
        term.send("\x1b")
        term.wait(r"^>$", row=term.rows - 1)
        # Tab completes a unique prefix of a legal move; Enter plays it.
        move = legal[0]
        term.send(unique_prefix(move, legal) + "\t")
        term.wait("^> " + re.escape(move), row=term.rows - 1)
        at = _play(term, "")
        moves = 1
        resized = scrolled = False
        while (legal := _turn(term, at)) is not None:
            if moves == 6 and not resized:
                # A resize mid-game: the table is laid out again for 60x20.
                term.resize(20, 60)
                term.wait_for(
                    lambda: term.header() if len(_rule(term)) == 59 else None,
                    30,
                    "the table redrawn at 60 columns",
                )
                legal = _turn(term, at)
                assert legal is not None
                resized = True
            if resized and not scrolled and "PgUp: earlier" in term.text():
                # The log holds the whole game: PgUp shows the first moves, PgDn the latest.
                term.send("\x1b[5~")
                term.wait(r"── log \d+-\d+ of \d+ \(PgDn: later\)")
                for _ in range(30):  # to the first move
                    if re.search(r"── log 1-\d+ of", term.text()):
                        break
                    term.send("\x1b[5~")
                    term.pump(0.3)
                term.wait(r"── log 1-\d+ of \d+ \(PgDn: later\)")
                term.check(term.lines()[term.hand_row() + 3].startswith("greedy 1: attack"), "")
                for _ in range(30):  # back to the latest
                    if "PgDn: later" not in term.text():
                        break
                    term.send("\x1b[6~")
                    term.pump(0.3)
                term.wait(r"── log \(PgUp: earlier")
                scrolled = True
            at = _play(term, legal[0])
            moves += 1
            assert moves < 400
        assert resized and scrolled, (resized, scrolled)
        assert term.rows == 20 and term.header() is not None
        term.wait(r"^Game over after \d+ moves")  # at the end of the log
        term.wait(r"After 1 game: ", row=term.rows - 3)
        # Enter at "play again?" is no: the session ends, played to its end.
        term.send("\r")
        code = term.exit_code()
        text = term.text()
        assert "Game over after" in text and re.search(r"After 1 game: you: [01] loss", text)
    finally:
        term.close()
    assert code == 0


def _rule(term: Term) -> str:
    lines = term.lines()
    return lines[1] if len(lines) > 1 else ""


def test_at_60x20_hint_moves_rules_and_quit_exits_130() -> None:
    term = moska(
        "play", "--preset", "durak", "--players", "3", "--seed", "5", "--pace", "0",
        "--hint", "ismcts:iterations=50",
        rows=20, cols=60,
    )  # fmt: skip
    try:
        legal = _turn(term, -1)
        assert legal
        assert len(_rule(term)) == 59
        term.send("hint\r")
        hinted = term.wait(r"hint \(ismcts\): (\S+(?: \S+)*)", row=term.rows - 3).group(1)
        term.send("moves\r")
        term.wait(r"^legal moves · Esc or q closes", row=0)
        assert hinted.split("  ·")[0] in term.text()
        term.send("\x1b")
        term.send("rules\r")
        term.wait(r"^rules · Esc or q closes · PgUp/PgDn scroll", row=0)
        assert "Durak" in term.text()
        before = term.lines()[1]
        term.send("\x1b[6~")  # PgDn scrolls the pane
        term.wait_for(
            lambda: re.search(".", term.lines()[1]) if term.lines()[1] != before else None,
            20,
            "the rules scrolled",
        )
        term.send("q")
        term.wait(r"^durak · ", row=0)
        at = _play(term, legal[0])
        assert _turn(term, at) is not None
        term.send("quit\r")
        code = term.exit_code()
        assert "You left the game." in term.text()
    finally:
        term.close()
    assert code == 130  # a game left before its end


def test_the_readme_first_command_starts_a_game() -> None:
    """``moska play`` as typed after ``pip install .``: the installed script, no options,
    colours on, a person's game against three bots."""
    script = Path(sys.executable).with_name("moska")
    if not script.exists():
        pytest.skip("the moska script is not installed next to this Python")
    term = Term(["play"], env=term_env(color=True), command=str(script))
    try:
        legal = _turn(term, -1)
        assert legal
        assert re.search(r"^  medium 1 +\d+ cards", term.text(), re.M)  # the default level
        assert any(char.fg == "red" for row in term.screen.buffer.values() for char in row.values())
        # Ctrl-C just after a move, most likely while the bots play (at --pace 0.3), when
        # no question is open: it asks all the same.
        term.send(legal[0] + "\r")
        term.send("\x03")
        term.wait(r"^leave the game\? \[y/N\]", row=term.rows - 1)
        term.send("y\r")
        code = term.exit_code()
    finally:
        term.close()
    assert code == 130


def test_replay_steps_on_the_full_screen_table(tmp_path: Path) -> None:
    from moska_p2p.bots.builtin import GreedyBot
    from moska_p2p.engine import new_game
    from moska_p2p.table.local import play_game

    record = play_game(new_game("durak", players=2, seed=8), [GreedyBot(1), GreedyBot(2)])
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record.to_json()))
    term = moska("replay", str(path), "--open", rows=20, cols=60)
    try:
        status = term.rows - 3
        term.wait(r"the deal \(dealer: greedy \d\)", row=status)
        term.wait(r"^durak replay · ", row=0)
        term.send("\r")
        term.wait(r"move 1 of \d+: greedy \d played attack", row=status)
        term.send("n")
        term.wait(r"move 2 of \d+:", row=status)
        term.send("5\r")
        term.wait(r"move 5 of \d+:", row=status)
        assert term.header() is not None and term.move_number() == 5
        term.send("b")
        term.wait(r"move 4 of \d+:", row=status)
        term.send("e")
        term.wait(r"game over, lost:")  # the status, wrapped
        term.send("q")
        code = term.exit_code()
    finally:
        term.close()
    assert code == 0


def test_watch_plays_the_named_bots_at_the_pace_and_q_stops() -> None:
    term = moska(
        "play", "--watch", "--preset", "durak", "--players", "2", "--bots", "random,greedy",
        "--seed", "2", "--pace", "0.2",
    )  # fmt: skip
    try:
        term.wait(r"^durak \(watching\) · ", row=0)
        term.wait(r"^  random 0 ", row=None)
        term.wait(r"^  greedy 1 ", row=None)
        first = int(term.wait(r"move (\d+): ", row=term.rows - 3).group(1))
        start = time.monotonic()
        # Paced: 0.2 s at least between two moves.
        term.wait_for(lambda: None if term.move_number() < first + 5 else term.header(), 30, "+5")
        assert time.monotonic() - start >= 0.75
        term.send("q")
        code = term.exit_code()
    finally:
        term.close()
    assert code == 130  # stopped before the end


def test_plain_mode_on_a_terminal_prints_lines() -> None:
    term = moska("play", "--plain", "--preset", "durak", "--players", "2", "--seed", "1")
    try:
        term.wait(r"^legal: ")
        term.wait(r"^> $|^>$")
        assert term.header() is not None  # the table printed as lines, from the top
        term.send("quit\r")
        code = term.exit_code()
        assert "You left the game." in term.text()
    finally:
        term.close()
    assert code == 130
