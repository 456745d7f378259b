"""The local session behind ``moska play``: bots at the other seats, games in a row."""

from __future__ import annotations

import io
import re
from collections.abc import Sequence

import pytest

from moska_p2p.engine import Move, View
from moska_p2p.ui.local import LocalTable, SessionEnd, bot_specs, play_session, seat_names
from moska_p2p.ui.terminal import TerminalPlayer


class _FirstMove(TerminalPlayer):
    """The person's seat with its decisions made by rule (the drawing is the real one)."""

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        return legal_moves[0]


def test_bot_specs_and_names() -> None:
    assert bot_specs(["greedy"], 3) == ["greedy"] * 3
    assert bot_specs([], 2) == ["greedy", "greedy"]
    assert bot_specs(["random", "ismcts:time=0.1"], 2) == ["random", "ismcts:time=0.1"]
    with pytest.raises(ValueError, match="1 or 3 bots"):
        bot_specs(["random", "greedy"], 3)
    assert seat_names("alice", ["greedy", "ismcts:time=0.1", "bots/example_bot.py:X"]) == [
        "alice",
        "greedy 1",
        "ismcts 2",
        "example_bot 3",
    ]


def test_a_session_of_games_prints_a_score_line_after_each() -> None:
    out = io.StringIO()
    names = seat_names("you", ["greedy", "random"])
    person = _FirstMove(names, stdout=out, interactive=False, color=False)
    table = LocalTable("mustamaija", 3, ["greedy", "random"], seed=4)
    assert play_session(table, person, games=3) == SessionEnd(3, left=False)
    text = out.getvalue()
    scores = re.findall(r"After (\d) games?: (.*)", text)
    assert [n for n, _ in scores] == ["1", "2", "3"]
    losses = [int(x) for x in re.findall(r"(\d+) loss", scores[-1][1])]
    assert sum(losses) == 3  # Mustamaija always has one loser
    assert text.count("Game over after") == 3


def test_no_more_games_when_the_person_declines() -> None:
    out = io.StringIO()
    person = _FirstMove(
        seat_names("you", ["greedy"]), stdin=io.StringIO("n\n"), stdout=out, interactive=False
    )
    table = LocalTable("durak", 2, ["greedy"], seed=1)
    assert play_session(table, person, ask_again=True) == SessionEnd(1, left=False)
    assert "play again? [y/N]" in out.getvalue()


@pytest.mark.parametrize("answer", ["\n", "x\n", ""])
def test_play_again_is_no_unless_the_person_says_yes(answer: str) -> None:
    """A habitual Enter (or anything but yes, or the end of input) ends the session."""
    out = io.StringIO()
    person = _FirstMove(
        seat_names("you", ["greedy"]), stdin=io.StringIO(answer), stdout=out, interactive=False
    )
    table = LocalTable("durak", 2, ["greedy"], seed=1)
    assert play_session(table, person, ask_again=True) == SessionEnd(1, left=False)
    assert out.getvalue().count("Game over after") == 1


def test_quitting_a_game_is_leaving_it() -> None:
    """``quit`` before the end: no game finished and the session says it was left
    (``moska play`` exits 130 then)."""
    out = io.StringIO()
    person = TerminalPlayer(
        seat_names("you", ["greedy"]),
        stdin=io.StringIO("quit\n"),
        stdout=out,
        interactive=False,
        auto_pass=0,
    )
    table = LocalTable("durak", 2, ["greedy"], seed=1)
    assert play_session(table, person, games=1) == SessionEnd(0, left=True)
    assert "You left the game." in out.getvalue()
