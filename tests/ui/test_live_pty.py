"""A network table as its people see it, in a pseudo-terminal (``screen_harness``): the table,
the hand and what the table waits for are on every screen from the deal on, the countdown
moves while nothing else does, a killed seat is said to be gone, and every full-screen
command leaves on ``q`` or Ctrl-C at every stage.

Every process is real and every byte is on 127.0.0.1; every wait is bounded, every process
killed in ``finally``; a failing check shows the screen.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from screen_harness import Term, term_env

PORT = re.compile(r"join with: moska join 127\.0\.0\.1:(\d+)")
WAIT = 60.0  # one wait: a loaded 2-core machine is slow to start Python
COUNTDOWN = re.compile(r"\((\d+ s|\d+:\d\d) left\)")


class Table:
    """A person's ``moska host`` on a terminal and ``moska join --bot`` processes."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = term_env(
            MOSKA_DISCOVERY_IF="127.0.0.1",
            XDG_DATA_HOME=str(folder / "data"),
            XDG_CONFIG_HOME=str(folder / "config"),
        )
        self.terms: list[Term] = []
        self.bots: list[subprocess.Popen[bytes]] = []

    def host(self, *extra: str, players: int = 2) -> tuple[Term, str]:
        args = [
            "-m", "moska_p2p", "host", "--preset", "mustamaija", "--players", str(players),
            "--port", "0", "--bind", "127.0.0.1", "--no-announce",
            "--identity", str(self.folder / "host.pem"),
            "--transcript", str(self.folder / "host.moska"), "--auto-pass", "0", *extra,
        ]  # fmt: skip
        term = Term(args, 24, 80, env=self.env)
        self.terms.append(term)
        return term, term.wait(PORT, WAIT).group(1)

    def bot(self, port: str, number: int, *extra: str) -> subprocess.Popen[bytes]:
        args = [
            sys.executable, "-m", "moska_p2p", "join", f"127.0.0.1:{port}",
            "--bot", "random", "--seed", str(number), "--name", f"bot{number}",
            "--bind", "127.0.0.1", "--identity", str(self.folder / f"bot{number}.pem"),
            "--transcript", str(self.folder / f"bot{number}.moska"), *extra,
        ]  # fmt: skip
        with open(self.folder / f"bot{number}.out", "wb") as out:
            bot = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=self.env)
        self.bots.append(bot)
        return bot

    def person(self, *args: str, rows: int = 24, cols: int = 80) -> Term:
        term = Term(["-m", "moska_p2p", *args], rows, cols, env=self.env)
        self.terms.append(term)
        return term

    def kill(self) -> None:
        for term in self.terms:
            term.close()
        for bot in self.bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait(timeout=10)
            if bot.stdout is not None:
                bot.stdout.close()


@pytest.fixture
def table(tmp_path: Path) -> Iterator[Table]:
    made = Table(tmp_path)
    try:
        yield made
    finally:
        made.kill()


def _interrupted(term: Term) -> bool:
    """The program ended as interrupted: exit 130, or by SIGINT (a child of a shell)."""
    code = term.exit_code(WAIT)
    return code == 130 or (code is None and term.child.signalstatus == signal.SIGINT)


def _status_matches(term: Term, pattern: str, timeout: float = WAIT) -> re.Match[str]:
    """Wait until the status line matches ``pattern``, typing the first legal move each time
    the person is asked meanwhile (the game goes on until the table waits as wanted)."""
    found: re.Match[str] | None = None
    end = time.monotonic() + timeout
    while found is None:
        term.check(time.monotonic() < end, f"the status never matched {pattern!r}")
        term.pump(0.1)
        found = re.search(pattern, term.status())
        asked = term.status().startswith("Your move") and term.input_line().startswith(">")
        if found is None and asked and term.header() is not None:
            term.send(term.legal()[0] + "\r")
            term.wait_for(
                lambda: None if term.status().startswith("Your move") else re.match("", ""),
                WAIT,
                "the move to be taken",
            )
    return found


def test_from_the_deal_on_the_screen_shows_the_table_and_what_it_waits_for(
    table: Table,
) -> None:
    host, port = table.host()
    table.bot(port, 1, "--pace", "2.5")
    # The bot thinks for 2.5 s before each move: while it does, the person's screen has the
    # table and its own hand, and says who is waited for, to do what, and for how long.
    found = _status_matches(host, r"^waiting for bot1 to [a-z ]+ \((\d+ s|\d+:\d\d) left\)$")
    host.check_table()
    first = found.group(0)
    # The countdown is redrawn while nothing else moves (at least once a second).
    host.wait_for(
        lambda: re.search(r"^waiting for bot1", host.status()) if host.status() != first else None,
        10,
        "the countdown to move",
    )
    # The person's own move: the time left for it, after what is asked, once a second.
    clock = host.wait_for(
        lambda: re.search(r"^Your move.*  ·  ((\d+) s|\d+:\d\d) left$", host.status()),
        WAIT,
        "the person's own time left",
    )
    assert clock is not None
    host.wait_for(
        lambda: re.search(r"left$", host.status()) if host.status() != clock.group(0) else None,
        10,
        "the person's clock to move",
    )
    # The status does not repeat the log's last line (the move just made).
    log = [line for line in host.lines()[: host.rows - 3] if line]
    host.check(log[-1] not in host.status(), "the status repeats the log")


@pytest.mark.parametrize("players", [2, 3])
def test_a_killed_seat_is_said_to_be_gone_with_the_time_left(table: Table, players: int) -> None:
    """kill -9 of the seat the table waits for: once nobody has heard it for three missed
    keep-alives, the status line reads the contact clock ("bot1 is not answering: the game
    waits 31 s for them", the grace of PROTOCOL.md §15.1), at a table of two as of three
    (where the third seat still hears nothing of it either)."""
    host, port = table.host("--timeout", "20", players=players)
    bot = table.bot(port, 1, "--pace", "2.5")
    for number in range(2, players):
        table.bot(port, number, "--pace", "2.5")
    _status_matches(host, r"^waiting for bot1 to ")
    bot.send_signal(signal.SIGKILL)
    bot.wait(timeout=10)
    found = _status_matches(
        host, r"^bot1 is not answering: the game waits (\d+ s|\d+:\d\d) for them$"
    )
    host.check_table()
    assert found
    # Ctrl-C asks, yes leaves (exit 130): the person is not held for the whole timeout.
    host.send("\x03")
    host.wait(r"^leave the game\? \[y/N\]", row=host.rows - 1)
    host.send("y\r")
    assert host.exit_code(WAIT) == 130


def _bots_table(table: Table, pace: str) -> str:
    """A host bot and a joining bot, both ``pace`` seconds a move: the table's port."""
    args = [
        sys.executable, "-m", "moska_p2p", "host", "--players", "2", "--bot", "greedy",
        "--port", "0", "--no-announce", "--bind", "127.0.0.1", "-q", "--pace", pace,
        "--wait", "60", "--transcript", str(table.folder / "host.moska"),
    ]  # fmt: skip
    host = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=table.env, text=True
    )
    table.bots.append(host)  # type: ignore[arg-type]
    assert host.stdout is not None
    for line in host.stdout:
        found = PORT.search(line)
        if found:
            return found.group(1)
    raise AssertionError("the host printed no address")


def test_a_spectator_sees_the_wait_and_leaves_on_ctrl_c_or_q_at_every_stage(
    table: Table,
) -> None:
    port = _bots_table(table, "0.4")
    watch = ["watch", f"127.0.0.1:{port}", "--transcript"]
    # In the lobby (the table not full yet): Ctrl-C leaves at once.
    early = table.person(*watch, str(table.folder / "early.moska"))
    early.wait(r"waiting for the table to fill", WAIT)
    early.send("\x03")
    assert early.exit_code(WAIT) == 130
    late = table.person(*watch, str(table.folder / "late.moska"))
    end = table.person(*watch, str(table.folder / "end.moska"))
    table.bot(port, 1, "--pace", "0.4")
    # During the game: the table, and what it waits for, on the status line; q leaves.
    late.wait(r"^mustamaija \(watching\)|^moska \(watching\)", WAIT, row=0)
    late.wait_for(
        lambda: re.search(r"^waiting for \S+ to .* left\)$", late.status()),
        WAIT,
        "what the table waits for",
    )
    late.send("q")
    assert late.exit_code(WAIT) == 130
    # After the end: the last table stays until q, which leaves (the watch was whole: 0).
    end.wait(r"q:\s+close", 180)  # it may wrap: the result names a 128-bit fingerprint
    end.send("q")
    assert end.exit_code(WAIT) == 0


def test_host_and_join_leave_on_ctrl_c_in_the_lobby(table: Table) -> None:
    host, port = table.host(players=3)
    joiner = table.person(
        "join", f"127.0.0.1:{port}", "--bind", "127.0.0.1", "--name", "jo",
        "--identity", str(table.folder / "jo.pem"), "--transcript", str(table.folder / "jo.moska"),
    )  # fmt: skip
    joiner.wait(r"waiting for the table to fill", WAIT)  # both wait for the third seat
    joiner.send("\x03")
    assert _interrupted(joiner), joiner.shown()
    host.send("\x03")
    assert _interrupted(host), host.shown()


def _type_until(term: Term, pattern: str, timeout: float = 180, *, anywhere: bool = False) -> None:
    """Type the first legal move at each question until ``pattern`` is on the input line
    (``anywhere``: on the screen)."""
    end = time.monotonic() + timeout
    typed_at = -1
    while not re.search(pattern, term.text() if anywhere else term.input_line()):
        term.check(time.monotonic() < end, f"never at {pattern!r}")
        term.pump(0.1)
        header = term.header()
        asked = term.status().startswith("Your move") and term.input_line().startswith(">")
        if asked and header is not None and int(header.group(1)) != typed_at:
            typed_at = int(header.group(1))
            term.send(term.legal()[0] + "\r")


def test_play_leaves_on_ctrl_c_while_bots_move_and_at_play_again(table: Table) -> None:
    slow = table.person(
        "play", "--preset", "mustamaija", "--players", "3", "--seed", "4", "--pace", "3",
        "--auto-pass", "0",
    )  # fmt: skip
    slow.wait(r"^mustamaija · trump", WAIT, row=0)
    slow.wait(r"^Your move", WAIT, row=slow.rows - 3)
    slow.send(slow.legal()[0] + "\r")
    slow.wait_for(
        lambda: re.search(r"^waiting for", slow.status()), WAIT, "a bot on move, nothing asked"
    )
    slow.send("\x03")
    slow.wait(r"^leave the game\? \[y/N\]", WAIT, row=slow.rows - 1)
    slow.send("y\r")
    assert _interrupted(slow), slow.shown()
    fast = table.person(
        "play", "--preset", "mustamaija", "--players", "2", "--seed", "4", "--pace", "0",
        "--auto-pass", "0",
    )  # fmt: skip
    _type_until(fast, r"play again\?")
    fast.send("\x03")  # Ctrl-C at "play again?" is no: the session ends
    assert fast.exit_code(WAIT) == 0, fast.shown()


def test_replay_leaves_on_ctrl_c_and_play_watch_on_q_after_the_end(
    table: Table, tmp_path: Path
) -> None:
    watch = table.person(
        "play", "--watch", "--preset", "durak", "--players", "2", "--bots", "random,greedy",
        "--seed", "2", "--pace", "0",
    )  # fmt: skip
    watch.wait(r"q: close", WAIT)
    watch.send("q")
    assert watch.exit_code(WAIT) == 0, watch.shown()
    host, port = table.host("--timeout", "60")
    bot = table.bot(port, 1, "--pace", "1")
    _status_matches(host, r"^waiting for bot1")
    host.send("\x03")
    host.wait(r"^leave the game\? \[y/N\]", WAIT, row=host.rows - 1)
    host.send("y\r")
    assert _interrupted(host), host.shown()
    bot.wait(timeout=WAIT)
    replay = table.person("replay", str(table.folder / "host.moska"))
    replay.wait(r" replay · ", WAIT, row=0)
    replay.send("\r")
    replay.send("\x03")
    assert replay.exit_code(WAIT) in (0, 130), replay.shown()


def test_esc_clears_the_half_typed_word_and_a_line_typed_early_is_kept(table: Table) -> None:
    term = table.person(
        "play", "--preset", "mustamaija", "--players", "3", "--seed", "4", "--pace", "3",
        "--auto-pass", "0",
    )  # fmt: skip
    term.wait(r"^Your move", WAIT, row=term.rows - 3)
    # Tab opens the menu of moves; Esc closes it and clears the line, the half-typed
    # word too (it was left on the line).
    term.send("a")
    term.wait(r"^> a$", WAIT, row=term.rows - 1)
    term.send("\t")
    term.wait_for(lambda: re.search(r"^> attack", term.input_line()), WAIT, "a completion")
    term.send("\x1b")
    term.wait_for(lambda: re.match(r"^>$", term.input_line()), WAIT, "an empty input line")
    # A line typed and sent while the bots move is not dropped: it stays on the line, the
    # status says it was not taken, and it is still there when the move is asked.
    term.send(term.legal()[0] + "\r")
    term.wait_for(lambda: re.search(r"^waiting for", term.status()), WAIT, "a bot on move")
    term.send("take\r")
    term.wait(r"^not taken yet: nothing is asked now", WAIT)
    term.check(term.input_line().endswith("take"), "the early line was dropped")
    term.wait(r"^Your move", WAIT, row=term.rows - 3)
    term.check(term.input_line() == "> take", "the early line is gone at the question")


def test_a_resumed_seat_shows_its_table_at_once(table: Table) -> None:
    """A person's seat killed and started again with the same command: its table (and
    hand) is drawn as soon as the game is resumed, not at the next move."""
    args = [
        sys.executable, "-m", "moska_p2p", "host", "--players", "2", "--preset", "mustamaija",
        "--bot", "greedy", "--port", "0", "--no-announce", "--bind", "127.0.0.1", "-q",
        "--pace", "1", "--timeout", "120", "--transcript", str(table.folder / "host.moska"),
    ]  # fmt: skip
    host = subprocess.Popen(
        args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=table.env, text=True
    )
    table.bots.append(host)  # type: ignore[arg-type]
    assert host.stdout is not None
    port = next(found.group(1) for line in host.stdout if (found := PORT.search(line)))
    join = [
        "join", f"127.0.0.1:{port}", "--bind", "127.0.0.1", "--name", "pat", "--auto-pass", "0",
        "--identity", str(table.folder / "pat.pem"),
        "--transcript", str(table.folder / "pat.moska"),
    ]  # fmt: skip
    first = table.person(*join)
    _status_matches(first, r"^waiting for greedy")  # a move or two in
    first.child.kill(signal.SIGKILL)
    first.exit_code(WAIT)
    again = table.person(*join)
    again.wait(r"^mustamaija · ", 30, row=0)
    again.check_table()
    again.wait_for(
        lambda: re.search(r"^(waiting for|greedy is not answering|Your move)", again.status()),
        30,
        "what the resumed table waits for",
    )


def test_a_session_leaves_on_ctrl_c_between_games(table: Table) -> None:
    host, port = table.host("--games", "2", "--timeout", "60")
    table.bot(port, 1)
    _type_until(host, r"next game\? \[y/N\]", 240, anywhere=True)
    host.send("\x03")  # Ctrl-C at "next game?" is no: the session ends there
    code = host.exit_code(WAIT)
    host.check(code in (0, 130) or host.child.signalstatus == signal.SIGINT, f"exit {code}")


FAULT = """
import time
from moska_p2p.ui.app import FullScreen
screen = FullScreen(color=False)
screen.start()
def fault():
    raise ValueError("a fault in the loop")
screen.app.loop.call_soon_threadsafe(fault)
time.sleep(1)
alive = screen.running
screen.stop()
print("log:", screen.lines(80, 5)[-1], "running:", alive)
"""


def test_a_fault_in_the_screens_loop_is_a_line_and_the_screen_lives_on() -> None:
    """prompt_toolkit's own handler left the screen and waited for Enter on a terminal
    nobody drew (how a spectator hung after a bad frame)."""
    term = Term(["-c", FAULT], 24, 80, env=term_env())
    try:
        assert term.exit_code(WAIT) == 0
        output = "".join(term.raw)
        assert "Press ENTER" not in output
        assert "screen fault: a fault in the loop" in output and "running: True" in output
    finally:
        term.close()
