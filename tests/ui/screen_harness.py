"""The real program in a pseudo-terminal (pexpect), its output fed to a VT100 emulator
(pyte), so a test checks what is on the screen, row by row, never raw escape-laden text.

Every wait polls the screen until a pattern shows (generous timeouts: a loaded 2-core CI
machine is slow to start Python); a wait that fails raises with the screen as text.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pexpect
import pyte

TIMEOUT = 45.0
ROOT = Path(__file__).resolve().parents[2]
HEADER = re.compile(
    r"^\S.* · (?:trump \S+|no trump yet) · stock \d+(?: \(face up: [^)]*\))? · out of play \d+"
    r" · move (\d+)"
)


def term_env(color: bool = False, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", PYTHONUNBUFFERED="1", **extra)
    env.pop("NO_COLOR", None)
    env.pop("LINES", None)
    env.pop("COLUMNS", None)
    if not color:
        env["NO_COLOR"] = "1"
    return env


class Term:
    """One program on a pseudo-terminal of ``rows`` x ``cols``, and its screen."""

    def __init__(
        self,
        argv: Sequence[str],
        rows: int = 24,
        cols: int = 80,
        *,
        env: dict[str, str] | None = None,
        command: str = sys.executable,
    ) -> None:
        self.rows, self.cols = rows, cols
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.Stream(self.screen)
        self.raw: list[str] = []
        self.child = pexpect.spawn(
            command,
            list(argv),
            dimensions=(rows, cols),
            env=env or term_env(),
            encoding="utf-8",
            codec_errors="replace",
            timeout=TIMEOUT,
            cwd=str(ROOT),
        )

    # ------------------------------------------------------------------ reading

    def pump(self, wait: float = 0.05) -> bool:
        """Feed what the program wrote meanwhile to the screen; False once it has ended."""
        try:
            while True:
                data = self.child.read_nonblocking(65536, timeout=wait)
                self.raw.append(data)
                self.stream.feed(data)
                wait = 0.01
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False

    def lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def text(self) -> str:
        return "\n".join(self.lines())

    def shown(self) -> str:
        """The screen as a framed block, for a failing check's message."""
        bar = "+" + "-" * self.cols + "+"
        body = "\n".join(f"|{line.ljust(self.cols)}|" for line in self.screen.display)
        return f"\nscreen {self.cols}x{self.rows}:\n{bar}\n{body}\n{bar}"

    def wait(
        self, pattern: str | re.Pattern[str], timeout: float = TIMEOUT, row: int | None = None
    ) -> re.Match[str]:
        """Wait until ``pattern`` is on the screen (on ``row`` only, if given)."""
        found = self.wait_for(lambda: self._search(pattern, row), timeout, f"{pattern!r}")
        assert found is not None
        return found

    def _search(self, pattern: str | re.Pattern[str], row: int | None) -> re.Match[str] | None:
        lines = self.lines()
        text = lines[row] if row is not None else "\n".join(lines)
        if isinstance(pattern, str):
            pattern = re.compile(pattern, re.M)
        return pattern.search(text)

    def wait_for(
        self, check: Callable[[], re.Match[str] | None], timeout: float, what: str
    ) -> re.Match[str] | None:
        end = time.monotonic() + timeout
        alive = True
        while True:
            found = check()
            if found:
                return found
            if not alive or time.monotonic() > end:
                raise AssertionError(f"not on the screen: {what}" + self.shown())
            alive = self.pump(0.1)

    def check(self, condition: bool, what: str) -> None:
        if not condition:
            raise AssertionError(what + self.shown())

    # ------------------------------------------------------------------ the table

    def header(self) -> re.Match[str] | None:
        return HEADER.search(self.lines()[0])

    def move_number(self) -> int:
        found = self.header()
        self.check(found is not None, "no header on the first row")
        assert found is not None
        return int(found.group(1))

    def status(self) -> str:
        return self.lines()[self.rows - 3]

    def legal(self) -> list[str]:
        line = self.lines()[self.rows - 2]
        self.check(line.startswith("legal: "), "no legal moves above the input line")
        line = re.sub(r" \(\+\d+ more: Tab or moves\)$", "", line[len("legal: ") :])
        return line.split(" | ")

    def input_line(self) -> str:
        return self.lines()[self.rows - 1]

    def hand_row(self) -> int | None:
        for number, line in enumerate(self.lines()):
            if line.startswith("hand "):
                return number
        return None

    def check_table(self) -> None:
        """The header on the first row, the hand under the table, the status, legal and
        input lines at the bottom: the fixed layout at this size."""
        self.check(self.header() is not None, "the header is not on the first row")
        self.check(self.hand_row() is not None, "the hand is not on the screen")
        self.check(
            all(len(line) <= self.cols for line in self.lines()), "a line is wider than the screen"
        )

    # ------------------------------------------------------------------ writing

    def send(self, text: str) -> None:
        self.child.send(text)

    def resize(self, rows: int, cols: int) -> None:
        self.pump(0.05)
        self.rows, self.cols = rows, cols
        self.screen.resize(rows, cols)
        self.child.setwinsize(rows, cols)

    def exit_code(self, timeout: float = TIMEOUT) -> int | None:
        end = time.monotonic() + timeout
        while self.pump(0.1):
            if time.monotonic() > end:
                raise AssertionError("the program did not end" + self.shown())
        self.child.close()
        return self.child.exitstatus

    def close(self) -> None:
        if self.child.isalive():
            self.child.close(force=True)


def moska(*args: str, rows: int = 24, cols: int = 80, color: bool = False) -> Term:
    return Term(["-m", "moska_p2p", *args], rows, cols, env=term_env(color))


def unique_prefix(move: str, legal: list[str]) -> str:
    """The shortest prefix of ``move`` that only it starts with (Tab completes it)."""
    words = [*legal, "help", "rules", "hint", "moves", "quit"]
    for size in range(1, len(move) + 1):
        prefix = move[:size]
        if [w for w in words if w.startswith(prefix)] == [move]:
            return prefix
    return move
