"""A person through a whole network session (``moska host --games 2``, RULES M24): the host
runs in a pseudo-terminal (pexpect into pyte, ``tests/ui/screen_harness``), one bot joins
with ``moska join --bot random``, 2-player durak (the quickest game), every process real and
every byte on 127.0.0.1.

The person reads the ``legal:`` line and types its first move, game after game. Between
games the full-screen table is closed (the final table and the score stay on the terminal)
and "next game? [y/N]" is a line question there, in either mode: y plays the next game in a
new full-screen table; Enter is no (tested with ``--plain``, whose question is the same);
Ctrl-C is no too (exit 0, not 130: every counted game was played to its
end and signed, so the session ended as it should, only sooner). ``--plain`` plays the
whole session in line mode, on a terminal too. Every wait is bounded; every process is
killed in ``finally`` (the fixture).
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from moska_p2p.protocol.tally import read_session_file
from moska_p2p.protocol.transcript import verify_transcript
from moska_p2p.table.networked import PersonAtTable
from moska_p2p.ui.terminal import TerminalPlayer

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))
from screen_harness import Term, term_env

PORT = re.compile(r"join with: moska join 127\.0\.0\.1:(\d+)")
TIMEOUT = 30  # one wait: a loaded CI machine is slow to start Python
GAME_TIMEOUT = 60  # a whole game of durak for two takes a few seconds
QUESTION = re.compile(r"^next game\? \[y/N\]", re.M)
ALT_SCREEN = "\x1b[?1049h"  # prompt_toolkit enters the alternate screen with this


class Session:
    """The person's ``host --games 2`` on a pty and the bot's ``join`` process."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = term_env(
            MOSKA_DISCOVERY_IF="127.0.0.1",
            XDG_DATA_HOME=str(folder / "data"),
            XDG_CONFIG_HOME=str(folder / "config"),
        )
        self.person: Term | None = None
        self.bot: subprocess.Popen[bytes] | None = None

    def open(self, *extra: str) -> Term:
        args = [
            "-m", "moska_p2p", "host",
            "--preset", "durak", "--players", "2", "--games", "2",
            "--port", "0", "--bind", "127.0.0.1", "--no-announce",
            "--identity", str(self.folder / "a.pem"),
            "--transcript", str(self.folder / "a.moska"),
            "--auto-pass", "0", *extra,
        ]  # fmt: skip
        child = Term(args, 24, 80, env=self.env)
        self.person = child
        port = child.wait(PORT, TIMEOUT).group(1)
        args = [
            sys.executable, "-m", "moska_p2p", "join", f"127.0.0.1:{port}",
            "--bot", "random", "--seed", "1", "--name", "bot1", "--bind", "127.0.0.1",
            "--identity", str(self.folder / "b.pem"),
            "--transcript", str(self.folder / "b.moska"),
        ]  # fmt: skip
        with open(self.folder / "b.out", "wb") as out:
            self.bot = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        return child

    def bot_output(self) -> str:
        return (self.folder / "b.out").read_text(errors="replace")

    def bot_code(self) -> int:
        assert self.bot is not None
        return self.bot.wait(timeout=GAME_TIMEOUT)

    def kill(self) -> None:
        if self.person is not None:
            self.person.close()
        if self.bot is not None and self.bot.poll() is None:
            self.bot.kill()
            self.bot.wait(timeout=10)


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    made = Session(tmp_path)
    try:
        yield made
    finally:
        made.kill()


def _raw(child: Term) -> str:
    return "".join(child.raw)


def _turn(child: Term, after: int, screens: int) -> list[str] | None:
    """Wait for the person's next move on the ``screens``-th full-screen table (past move
    ``after``): its legal moves, or None once that game is over and its screen closed (the
    node's "transcript verified" is printed on the terminal after it)."""

    def ready() -> re.Match[str] | None:
        raw = _raw(child)
        if raw.count(ALT_SCREEN) < screens:
            return None
        if raw.count(ALT_SCREEN) == screens and raw.rfind("transcript verified: ") > raw.rfind(
            ALT_SCREEN
        ):
            return re.search("transcript verified", "transcript verified")
        lines = child.lines()
        status = lines[child.rows - 3]
        child.check("not played: " not in status, "the person typed a move not legal here")
        header = child.header()
        if header is None or int(header.group(1)) <= after:
            return None
        if not lines[child.rows - 1].startswith(">"):
            return None
        return re.search("Your move", status)

    def settled() -> re.Match[str] | None:
        # A frame read halfway (the new header over the last turn's legal line) would have
        # the person type a stale move: the screen must be quiet a moment first.
        if ready() is None:
            return None
        for _ in range(10):
            size = len(child.raw)
            child.pump(0.05)
            if len(child.raw) == size:
                break
        return ready()

    found = child.wait_for(settled, GAME_TIMEOUT, f"the person's next move on screen {screens}")
    assert found is not None
    if found.group(0) != "Your move":
        return None
    child.check_table()
    return child.legal()


def _play_game(child: Term, screens: int) -> int:
    """Play one game to its end, typing the first legal move each time: the moves typed."""
    at, typed = -1, 0
    while (legal := _turn(child, at, screens)) is not None:
        at = child.move_number()
        if at == 0:  # nothing played yet: the status names no move (none of the last game)
            child.check(child.status().startswith("Your move"), "a stale move on the status")
        child.send(legal[0] + "\r")
        typed += 1
        assert typed < 300
    return typed


def _at_question(child: Term) -> None:
    """The game's screen is closed, its final table and the score line are on the
    terminal, and the line question waits."""
    child.wait(QUESTION, TIMEOUT)
    text = child.text()
    child.check(
        re.search(r"^Game over after \d+ moves", text, re.M) is not None, "no final table"
    )
    child.check(re.search(r"^after game 1 of 2: ", text, re.M) is not None, "no score line")


def _ended_after_one_game(session: Session, child: Term) -> None:
    child.wait(r"session over \(ended after game 1 of 2\)", TIMEOUT)
    text = child.text()
    assert re.search(r"^you end the session here", text, re.M)  # on a line of its own
    assert "session results: 1 of 2 games" in text
    assert session.person is not None and child.exit_code(GAME_TIMEOUT) == 0
    assert session.bot_code() == 0, session.bot_output()
    assert "ends the session here" in session.bot_output()
    assert "session over (ended after game 1 of 2)" in session.bot_output()
    assert not (session.folder / "a-g2.moska").exists()
    assert verify_transcript(session.folder / "a-g1.moska").valid


def test_a_person_plays_a_session_of_two_games_and_says_yes(session: Session) -> None:
    child = session.open()
    assert _play_game(child, 1) > 0
    _at_question(child)
    child.send("y\r")
    assert _play_game(child, 2) > 0
    child.wait(r"session over \(all 2 games played\)", TIMEOUT)
    text = child.text()
    assert "session results: 2 of 2 games" in text
    assert re.search(r"^after game 2 of 2: ", text, re.M)
    assert child.exit_code(GAME_TIMEOUT) == 0
    assert session.bot_code() == 0, session.bot_output()
    assert "session over (all 2 games played)" in session.bot_output()
    assert _raw(child).count(ALT_SCREEN) == 2  # a full-screen table per game, none between
    reports = [verify_transcript(session.folder / f"{n}-g{g}.moska") for n in "ab" for g in (1, 2)]
    assert all(r.valid for r in reports), [r.fault for r in reports]
    _, _, signed = read_session_file(session.folder / "a-session.moska")
    assert len(signed) == 2  # both players signed the session's result


def test_ctrl_c_at_next_game_is_no_and_exits_0(session: Session) -> None:
    child = session.open()
    _play_game(child, 1)
    _at_question(child)
    time.sleep(0.2)
    child.send("\x03")
    _ended_after_one_game(session, child)
    assert "interrupted" not in child.text()


def _plain_prompt(child: Term, seen: int) -> re.Match[str]:
    """The next line prompt printed after ``seen`` characters of the output: a move's
    (the ``legal:`` line above it) or "next game?"."""

    def ready() -> re.Match[str] | None:
        raw = _raw(child)[seen:]
        return re.search(r"^next game\? \[y/N\] $", raw, re.M) or re.search(
            r"^legal: (.*)\r?\n> $", raw, re.M
        )

    found = child.wait_for(ready, GAME_TIMEOUT, "a plain prompt")
    assert found is not None
    return found


def test_host_plain_plays_in_line_mode_and_enter_at_next_game_is_no(session: Session) -> None:
    """``--plain`` on a terminal: lines, never the alternate screen; and Enter at "next
    game?" (the same line question as after a full-screen game) ends the session."""
    child = session.open("--plain")
    typed = 0
    seen = 0
    while True:
        found = _plain_prompt(child, seen)
        seen += found.end()
        if found.group(0).startswith("next game?"):
            break
        move = re.sub(r" \(\+\d+ more: Tab or moves\)$", "", found.group(1)).split(" | ")[0]
        child.send(move.strip() + "\r")
        typed += 1
        assert typed < 300
    assert typed > 0
    child.send("\r")  # Enter: no, by default
    _ended_after_one_game(session, child)
    raw = _raw(child)
    assert ALT_SCREEN not in raw  # never the full-screen table
    assert re.search(r"^Your move: ", raw, re.M) and re.search(r"^hand ", raw, re.M)


@pytest.mark.parametrize(("typed", "answer"), [("y\n", True), ("\n", False), ("", False)])
def test_next_game_is_a_line_question_when_no_table_is_on_the_screen(
    typed: str, answer: bool
) -> None:
    """Between games the full-screen table is closed: the question is a line (no full
    screen opened for it); Enter and the end of input are no."""
    out = io.StringIO()
    person = TerminalPlayer([], stdin=io.StringIO(typed), stdout=out, interactive=True)
    assert PersonAtTable(person).next_game("after game 1 of 2: a 0 losses; b 1 loss") is answer
    assert out.getvalue().startswith("after game 1 of 2: a 0 losses; b 1 loss\nnext game? [y/N] ")
    assert person._screen is None
