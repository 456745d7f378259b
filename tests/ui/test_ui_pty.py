"""The real terminal program, driven through a pseudo-terminal (pexpect) at 80x24.

Nothing is faked: ``moska play`` runs as a process with a terminal, draws the table with
prompt_toolkit's prompt, and gets keystrokes. The tests play by reading the "legal:" line
printed above the prompt and typing a move from it, as a person would.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pexpect
import pytest

LEGAL = re.compile(r"legal: ([^\r\n]*)\r\n")
TIMEOUT = 45  # generous: a loaded 2-core CI machine is slow to start Python


def _spawn(*args: str, color: bool = False, script: str | None = None) -> pexpect.spawn:
    env = dict(os.environ)
    env.update(TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1", LINES="24", COLUMNS="80")
    env.pop("NO_COLOR", None)
    if not color:
        env["NO_COLOR"] = "1"
    if script is None:
        command, argv = sys.executable, ["-m", "moska_p2p", "play", *args]
    else:
        command, argv = script, ["play", *args]
    return pexpect.spawn(
        command, argv, dimensions=(24, 80), env=env, encoding="utf-8", timeout=TIMEOUT
    )


def _legal(child: pexpect.spawn) -> list[str]:
    """The legal moves of the line just matched (the first is always whole)."""
    text = child.match.group(1)
    text = re.sub(r" \(\+\d+ more: Tab or moves\)$", "", text)
    return text.split(" | ")


def _face(move: str) -> str:
    """A move as the table's log shows it (suit symbols)."""
    words = []
    for word in move.split():
        if word[-1] in "CDHS" and word[:-1] in {*"23456789JQKA", "10"}:
            word = word[:-1] + "♣♦♥♠"["CDHS".index(word[-1])]
        words.append(word)
    return " ".join(words)


_ESCAPES = r"(?:\x1b\[[0-9;?]*[A-Za-z])*"


def _drawn(text: str) -> str:
    """A pattern for ``text`` as a terminal program draws it: escapes may split it."""
    return _ESCAPES.join(re.escape(char) for char in text)


def _unique_prefix(move: str, legal: list[str]) -> str:
    words = [*legal, "help", "rules", "hint", "moves", "quit"]
    for size in range(1, len(move) + 1):
        prefix = move[:size]
        if [w for w in words if w.startswith(prefix)] == [move]:
            return prefix
    return move


def test_a_whole_game_against_a_bot_with_mistakes_help_completion_and_play_again() -> None:
    child = _spawn(
        "--preset", "mustamaija", "--players", "2", "--seed", "3", "--pace", "0", "--auto-pass", "0"
    )
    try:
        child.expect(LEGAL)
        assert "mustamaija" in child.before and "hand" in child.before
        # help, then a move that is not legal here, then a mistyped card: each gets its
        # one-line reason and the prompt again; nothing is played.
        child.send("help\r")
        child.expect("Commands: help")
        child.send("exchange\r")
        child.expect(r"not played: [^\r\n]+\r\n")
        child.send("k 3h 11x\r")
        child.expect(r'not played: "kill 3h 11x" is not a move: "11x" is not a card')
        # Ctrl-C asks before leaving; no stays.
        child.sendcontrol("c")
        child.expect(r"leave the game\? \[y/N\]")
        child.send("n\r")
        # Tab completion: a unique prefix of a legal move, completed and played.
        legal = _legal_again(child)
        move = legal[0]
        child.send(_unique_prefix(move, legal) + "\t")
        # The completed line is shown at the prompt; prompt_toolkit may draw it in pieces
        # with escape sequences between them, so match it across those.
        child.expect(_drawn(move))
        child.send("\r")
        child.expect(f"you: {re.escape(_face(move))}")
        # Play the game out with the first legal move each time.
        moves = 1
        while True:
            found = child.expect([LEGAL, r"play again\? \[Y/n\]"])
            if found == 1:
                break
            child.send(_legal(child)[0] + "\r")
            moves += 1
        assert "Game over after" in child.before
        assert re.search(r"After 1 game: you: [01] loss(es)?; greedy 1: [01] loss", child.before)
        child.send("n\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert moves > 5


def _legal_again(child: pexpect.spawn) -> list[str]:
    """After a question, an empty line redraws the table and its legal moves."""
    child.send("\r")
    child.expect(LEGAL)
    return _legal(child)


def test_hint_and_a_clean_quit() -> None:
    child = _spawn(
        "--preset",
        "durak",
        "--players",
        "3",
        "--seed",
        "5",
        "--pace",
        "0",
        "--hint",
        "ismcts:iterations=50",
    )
    try:
        child.expect(LEGAL)
        legal = _legal(child)
        child.send("hint\r")
        child.expect(r"hint \(ismcts\): ([^\r\n]+)\r\n")
        hinted = child.match.group(1)
        child.send("moves\r")
        child.expect(r"legal moves: ([^\r\n]+)\r\n")
        assert hinted in child.match.group(1).split(" | ")
        assert set(legal) <= set(child.match.group(1).split(" | "))
        child.send("rules\r")
        child.expect("Durak")
        child.send("quit\r")
        child.expect("You left the game.")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_the_readme_first_command_starts_a_game() -> None:
    """``moska play`` as typed after ``pip install .``: the installed script, no options,
    colours on, a person's game against three bots."""
    script = Path(sys.executable).with_name("moska")
    if not script.exists():
        pytest.skip("the moska script is not installed next to this Python")
    child = _spawn(script=str(script), color=True)
    try:
        child.expect(LEGAL, timeout=60)
        screen = child.before
        assert "moska" in screen and "stock" in screen and "(you)" not in screen
        assert "\x1b[" in screen  # coloured
        assert re.search(r"greedy 1 +\d+ cards", re.sub(r"\x1b\[[0-9;]*m", "", screen))
        child.send("quit\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


def test_replay_steps_on_a_terminal(tmp_path: Path) -> None:
    from moska_p2p.bots.builtin import GreedyBot
    from moska_p2p.engine import new_game
    from moska_p2p.table.local import play_game

    record = play_game(new_game("durak", players=2, seed=8), [GreedyBot(1), GreedyBot(2)])
    path = tmp_path / "game.json"
    path.write_text(json.dumps(record.to_json()))
    env = dict(os.environ, TERM="xterm", NO_COLOR="1")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "moska_p2p", "replay", str(path), "--open"],
        dimensions=(24, 80),
        env=env,
        encoding="utf-8",
        timeout=TIMEOUT,
    )
    try:
        child.expect(r"the deal \(dealer: greedy \d\)")
        child.expect("q: quit > ")
        child.send("\r")
        child.expect(r"move 1 of \d+: greedy \d played attack")
        child.send("5\r")
        child.expect(r"move 5 of \d+:")
        child.send("b\r")
        child.expect(r"move 4 of \d+:")
        child.send("q\r")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
