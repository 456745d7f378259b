"""A person at a network table: ``moska host`` without ``--bot`` runs in a
pseudo-terminal (pexpect, 80x24, its output on a VT100 emulator: ``tests/ui/screen_harness``)
and bots join it with ``moska join --bot random``, every process real and every byte on
127.0.0.1.

The person plays as a person would: it reads the ``legal:`` line of the full-screen table and
types the first move in it. Every wait is bounded (screen and subprocess timeouts) and every
process is killed in ``finally``; a failing check shows the screen.
"""

from __future__ import annotations

import getpass
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moska_p2p.cli import app
from moska_p2p.protocol.transcript import verify_transcript

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))
from screen_harness import Term, term_env

PORT = re.compile(r"join with: moska join 127\.0\.0\.1:(\d+)")
TIMEOUT = 30  # one wait: a loaded CI machine is slow to start Python
GAME_TIMEOUT = 60  # a whole game (mustamaija for 4 takes a few seconds)


class Table:
    """The person's ``host`` in a pseudo-terminal and the bots' ``join`` processes."""

    def __init__(self, folder: Path, players: int, pace: float = 0.0) -> None:
        self.folder = folder
        self.players = players
        self.pace = pace  # seconds each bot waits before its move
        self.env = term_env(
            MOSKA_DISCOVERY_IF="127.0.0.1",
            XDG_DATA_HOME=str(folder / "data"),
            XDG_CONFIG_HOME=str(folder / "config"),
        )
        self.person: Term | None = None
        self.bots: list[subprocess.Popen[bytes]] = []

    def open(self) -> Term:
        args = [
            "-m", "moska_p2p", "host",
            "--preset", "mustamaija", "--players", str(self.players),
            "--port", "0", "--bind", "127.0.0.1", "--no-announce",
            "--identity", str(self.folder / "a.pem"),
            "--transcript", str(self.folder / "a.moska"),
            "--auto-pass", "0",
        ]  # fmt: skip
        child = Term(args, 24, 80, env=self.env)
        self.person = child
        port = child.wait(PORT, TIMEOUT).group(1)
        for i in range(self.players - 1):
            args = [
                sys.executable, "-m", "moska_p2p", "join", f"127.0.0.1:{port}",
                "--bot", "random", "--seed", str(i), "--name", f"bot{i + 1}",
                "--bind", "127.0.0.1", "--pace", str(self.pace),
                "--identity", str(self.folder / f"b{i}.pem"),
                "--transcript", str(self.folder / f"b{i}.moska"),
            ]  # fmt: skip
            with open(self.folder / f"b{i}.out", "wb") as out:
                self.bots.append(
                    subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=self.env)
                )
        return child

    def bot_output(self, i: int) -> str:
        return (self.folder / f"b{i}.out").read_text(errors="replace")

    def bot_codes(self) -> list[int]:
        return [bot.wait(timeout=GAME_TIMEOUT) for bot in self.bots]

    def person_code(self) -> int | None:
        assert self.person is not None
        return self.person.exit_code(GAME_TIMEOUT)

    def kill(self) -> None:
        if self.person is not None:
            self.person.close()
        for bot in self.bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait(timeout=10)


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Callable[..., Table]]:
    made: list[Table] = []

    def make(players: int, pace: float = 0.0) -> Table:
        t = Table(tmp_path, players, pace)
        made.append(t)
        return t

    yield make
    for t in made:
        t.kill()


def _turn(child: Term, after: int) -> list[str] | None:
    """Wait for the person's next move (the table past move ``after``): its legal moves, or
    None once the game is over and the screen closed."""

    def ready() -> re.Match[str] | None:
        lines = child.lines()
        ended = re.search(r"^transcript verified: .*|^game stopped: .*", child.text(), re.M)
        if ended:
            return ended
        header = child.header()
        if header is None or int(header.group(1)) <= after:
            return None
        if not lines[child.rows - 1].startswith(">"):
            return None
        return re.search("Your move", lines[child.rows - 3])

    found = child.wait_for(ready, GAME_TIMEOUT, "the person's next move")
    assert found is not None
    if found.group(0) != "Your move":
        return None
    child.check_table()
    return child.legal()


def _log_and_status(child: Term) -> tuple[str, str]:
    """The last line of the log pane and the latest move named by the status line."""
    lines = child.lines()
    status = lines[child.rows - 3].split("  ·  ")[0]
    log = [line for line in lines[: child.rows - 3] if line]
    return log[-1], status


def test_a_person_plays_a_network_game_against_three_bots_over_loopback(
    table: Callable[[int], Table],
) -> None:
    t = table(4)
    child = t.open()
    legal = _turn(child, -1)
    assert legal
    # The person's name is the login name; the table shows the bots' names.
    assert re.search(rf"^▶? *{re.escape(getpass.getuser()[:16])} ", child.text(), re.M)
    assert "bot1" in child.text()
    first, at = legal[0], child.move_number()
    # A mistyped card and a move that is not legal here: a one-line reason, nothing sent.
    child.send("k 3h 11x\r")
    child.wait(r'not played: "kill 3h 11x" is not a move')  # the status, wrapped
    child.send("deck-kill 3h\r")
    child.wait(r"not played: (?!\"kill 3h 11x)")
    # Ctrl-C at the prompt asks; no keeps playing.
    child.send("\x03")
    child.wait(r"^leave the game\? \[y/N\]", row=child.rows - 1)
    child.send("n\r")
    child.wait(r"^>", row=child.rows - 1)
    child.check(child.move_number() == at and child.legal()[0] == first, "a move was sent")
    child.send(first + "\r")
    moves, named = 1, 0
    while (legal := _turn(child, at)) is not None:
        # The status line says what is asked; the log's last line is the move just made
        # (the status does not repeat it).
        last, status = _log_and_status(child)
        if child.move_number() > 0:
            child.check(
                status.startswith("Your move") and last not in status and ": " in last,
                f"the status {status!r} repeats the last move {last!r} or asks nothing",
            )
            named += 1
        at = child.move_number()
        child.send(legal[0] + "\r")
        moves += 1
        assert moves < 500
    assert named > 3
    child.wait(r"^transcript verified: ")
    text = child.text()
    assert re.search(r"^Game over after \d+ moves", text, re.M) and "result: " in text
    assert t.person_code() == 0
    assert t.bot_codes() == [0, 0, 0]
    reports = [verify_transcript(t.folder / f"{n}.moska") for n in ("a", "b0", "b1", "b2")]
    assert all(r.valid for r in reports), [r.fault for r in reports]
    hashes = {r.final_state_hash for r in reports}
    assert len(hashes) == 1 and None not in hashes


def test_ctrl_c_and_yes_leaves_with_a_signed_leave(table: Callable[..., Table]) -> None:
    t = table(3, pace=0.5)
    child = t.open()
    legal = _turn(child, -1)
    assert legal
    # Ctrl-C right after a move, most likely while a bot thinks (no question open: the
    # screen signals the process, whose Ctrl-C handling asks), else at the next question.
    child.send(legal[0] + "\r")
    time.sleep(0.2)
    child.send("\x03")
    child.wait(r"^leave the game\? \[y/N\]", row=child.rows - 1)
    child.send("y\r")
    child.wait("you left the table; the others were told with a signed message")
    assert t.person_code() == 130
    assert t.bot_codes() == [1, 1]
    for i in range(2):
        assert "game stopped: left: seat" in t.bot_output(i)
        assert "left the table: interrupted (Ctrl-C)" in t.bot_output(i)


def test_the_help_says_a_person_gets_a_humane_timeout() -> None:
    result = CliRunner().invoke(app, ["host", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    # rich wraps the help in a box: read it as words, the box's edges left out
    words = " ".join(result.output.replace("\u2502", " ").split())
    assert "300 when you play at the terminal" in words
