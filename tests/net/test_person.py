"""A person at a network table (issue 6): ``moska host`` without ``--bot`` runs in a
pseudo-terminal (pexpect, 80x24) and bots join it with ``moska join --bot random``, every
process real and every byte on 127.0.0.1.

The person plays as a person would: it reads the ``legal:`` line printed above the prompt and
types the first move in it. Every wait is bounded (pexpect and subprocess timeouts) and every
process is killed in ``finally``.
"""

from __future__ import annotations

import getpass
import os
import re
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pexpect
import pytest
from typer.testing import CliRunner

from moska_p2p.cli import app
from moska_p2p.protocol.transcript import verify_transcript

LEGAL = re.compile(r"legal: ([^\r\n]*)\r\n")
PORT = re.compile(r"join with: moska join 127\.0\.0\.1:(\d+)")
TIMEOUT = 30  # one wait: a loaded CI machine is slow to start Python
GAME_TIMEOUT = 60  # a whole game (mustamaija for 4 takes a few seconds)


class Table:
    """The person's ``host`` in a pseudo-terminal and the bots' ``join`` processes."""

    def __init__(self, folder: Path, players: int, pace: float = 0.0) -> None:
        self.folder = folder
        self.players = players
        self.pace = pace  # seconds each bot waits before its move
        self.env = dict(os.environ)
        self.env.update(
            TERM="xterm",
            PROMPT_TOOLKIT_NO_CPR="1",
            MOSKA_DISCOVERY_IF="127.0.0.1",
            NO_COLOR="1",
            PYTHONUNBUFFERED="1",
            XDG_DATA_HOME=str(folder / "data"),
            XDG_CONFIG_HOME=str(folder / "config"),
        )
        self.person: pexpect.spawn | None = None
        self.bots: list[subprocess.Popen[bytes]] = []

    def open(self) -> pexpect.spawn:
        args = [
            "-m", "moska_p2p", "host",
            "--preset", "mustamaija", "--players", str(self.players),
            "--port", "0", "--bind", "127.0.0.1", "--no-announce",
            "--identity", str(self.folder / "a.pem"),
            "--transcript", str(self.folder / "a.moska"),
            "--auto-pass", "0",
        ]  # fmt: skip
        child = pexpect.spawn(
            sys.executable,
            args,
            dimensions=(24, 80),
            env=self.env,
            encoding="utf-8",
            timeout=TIMEOUT,
        )
        self.person = child
        child.expect(PORT)
        port = child.match.group(1)
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
        self.person.expect(pexpect.EOF, timeout=GAME_TIMEOUT)
        self.person.close()
        return self.person.exitstatus

    def kill(self) -> None:
        if self.person is not None and self.person.isalive():
            self.person.close(force=True)
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


def _first_legal(child: pexpect.spawn) -> str:
    return str(child.match.group(1)).split(" | ")[0].split(" (+")[0]


def test_a_person_plays_a_network_game_against_three_bots_over_loopback(
    table: Callable[[int], Table],
) -> None:
    t = table(4)
    child = t.open()
    child.expect(LEGAL, timeout=GAME_TIMEOUT)
    # The person's name is the login name; the table shows the bots' names.
    assert f"({getpass.getuser()}," in child.before
    assert "bot1" in child.before and "Your move" in child.before
    first = _first_legal(child)
    # A mistyped card and a move that is not legal here: a one-line reason, nothing sent.
    child.send("k 3h 11x\r")
    child.expect(r'not played: "kill 3h 11x" is not a move: "11x" is not a card')
    child.send("deck-kill 3h\r")
    child.expect(r"not played: [^\r\n]+\r\n")
    # Ctrl-C at the prompt asks; no keeps playing.
    child.sendcontrol("c")
    child.expect(r"leave the game\? \[y/N\] ")
    child.send("n\r")
    child.send("\r")  # an empty line redraws the table: still our move, nothing was sent
    child.expect(LEGAL)
    assert _first_legal(child) == first
    child.send(first + "\r")
    moves = 1
    while True:
        found = child.expect([LEGAL, r"transcript verified: [^\r\n]+"], timeout=GAME_TIMEOUT)
        if found == 1:
            break
        child.send(_first_legal(child) + "\r")
        moves += 1
        assert moves < 500
    assert "Game over after" in child.before and "result: " in child.before
    assert t.person_code() == 0
    assert t.bot_codes() == [0, 0, 0]
    reports = [verify_transcript(t.folder / f"{n}.moska") for n in ("a", "b0", "b1", "b2")]
    assert all(r.valid for r in reports), [r.fault for r in reports]
    hashes = {r.final_state_hash for r in reports}
    assert len(hashes) == 1 and None not in hashes


def test_ctrl_c_and_yes_leaves_with_a_signed_leave(table: Callable[..., Table]) -> None:
    t = table(3, pace=0.5)
    child = t.open()
    child.expect(LEGAL, timeout=GAME_TIMEOUT)
    # Ctrl-C right after a move, most likely while a bot thinks (a signal; else a key at the
    # next prompt): it asks first, and only yes sends the signed leave.
    child.send(_first_legal(child) + "\r")
    time.sleep(0.2)
    child.sendcontrol("c")
    child.expect(r"leave the game\? \[y/N\] ")
    child.send("y\r")
    child.expect("you left the table; the others were told with a signed message")
    assert t.person_code() == 130
    assert t.bot_codes() == [1, 1]
    for i in range(2):
        assert "game stopped: left: seat" in t.bot_output(i)
        assert "left the table: interrupted (Ctrl-C)" in t.bot_output(i)


def test_the_help_says_a_person_gets_a_humane_timeout() -> None:
    result = CliRunner().invoke(app, ["host", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "300 when you play at the terminal" in " ".join(result.output.split())
