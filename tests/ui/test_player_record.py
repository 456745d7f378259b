"""The person's record of ``moska play``: per preset, table size and level, kept across
sessions (and restarts), written atomically, never written over when it cannot be read."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from moska_p2p.engine import Move, View
from moska_p2p.ui import player_record
from moska_p2p.ui.local import LocalTable, play_session, seat_names
from moska_p2p.ui.player_record import PlayerRecord, RecordError, Table, Tally, add_game
from moska_p2p.ui.terminal import TerminalPlayer

ROOT = Path(__file__).resolve().parents[2]
MOSKA_4_MEDIUM = Table("moska", 4, "medium")


class _FirstMove(TerminalPlayer):
    """The person's seat with its decisions made by rule (the drawing is the real one)."""

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        return legal_moves[0]


def test_a_run_of_losses_stands_korokkeella_at_two_and_poronmuna_from_three() -> None:
    """RULES M24, counted over the person's games at one table and level."""
    tally = Tally()
    standings = []
    for lost in (True, True, True, True, False, True, True):
        tally.add(lost)
        standings.append(tally.standing)
    assert standings == [
        None, "korokkeella", "poronmuna", "poronmuna", None, None, "korokkeella",
    ]  # fmt: skip
    assert (tally.games, tally.losses, tally.run) == (7, 6, 2)
    assert (tally.longest_run, tally.poronmunat) == (4, 1)


def test_the_record_survives_a_restart_and_keeps_each_table_apart(tmp_path: Path) -> None:
    path = tmp_path / "moska-p2p" / "record.json"
    add_game(path, MOSKA_4_MEDIUM, lost=True)
    add_game(path, MOSKA_4_MEDIUM, lost=True)
    add_game(path, Table("durak", 2, "hard"), lost=False)
    again = PlayerRecord.load(path)  # what a new process reads
    assert again.tallies == {
        MOSKA_4_MEDIUM: Tally(games=2, losses=2, run=2, longest_run=2),
        Table("durak", 2, "hard"): Tally(games=1),
    }
    assert add_game(path, MOSKA_4_MEDIUM, lost=True).standing == "poronmuna"


def test_a_crash_while_saving_leaves_the_old_record_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "record.json"
    add_game(path, MOSKA_4_MEDIUM, lost=True)
    before = path.read_bytes()

    def crash(source: str, target: str) -> None:
        raise KeyboardInterrupt  # the process stopped between the write and the rename

    monkeypatch.setattr(player_record.os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        add_game(path, MOSKA_4_MEDIUM, lost=False)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["record.json"]  # no temporary left


@pytest.mark.parametrize(
    "text",
    [
        "{not json",
        "[]",
        '{"version": 99, "tallies": []}',
        '{"version": 1, "tallies": [{"preset": "moska", "players": 4, "level": "easy",'
        ' "games": 1, "losses": 5, "run": 0, "longest_run": 0, "poronmunat": 0}]}',
        '{"version": 1, "tallies": [{"preset": "moska"}]}',
        "\udcff",
    ],
)
def test_a_record_that_cannot_be_read_is_said_and_never_written_over(
    tmp_path: Path, text: str
) -> None:
    path = tmp_path / "record.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    with pytest.raises(RecordError, match=r"record\.json is not a record moska can read"):
        add_game(path, MOSKA_4_MEDIUM, lost=True)
    assert path.read_bytes() == text.encode("utf-8", "surrogateescape")


def test_each_game_of_a_session_is_counted_and_shown_and_the_next_session_goes_on(
    tmp_path: Path,
) -> None:
    path = tmp_path / "record.json"
    table = LocalTable("mustamaija", 3, ["greedy"], seed=4, level="easy", record=path)
    texts = []
    for _ in range(2):  # two sessions: two runs of the program
        out = io.StringIO()
        person = _FirstMove(seat_names("you", ["greedy"] * 2, "easy"), stdout=out,
                            interactive=False, color=False)  # fmt: skip
        play_session(table, person, games=2)
        texts.append(out.getvalue())
    lines = re.findall(r"Your record at mustamaija, 3 players, easy: (\d+) games?", "".join(texts))
    assert lines == ["1", "2", "3", "4"]
    tally = PlayerRecord.load(path).tallies[Table("mustamaija", 3, "easy")]
    # the person's losses of each session, from its last score line ("you: 1 loss; ...")
    person_losses = [int(re.findall(r"After 2 games: you: (\d+) loss", t)[0]) for t in texts]
    assert (tally.games, tally.losses) == (4, sum(person_losses))
    assert "easy 1" in texts[0] and "easy 2" in texts[0]  # the level shown at the table


def test_a_session_with_an_unreadable_record_says_so_once_and_leaves_it(tmp_path: Path) -> None:
    path = tmp_path / "record.json"
    path.write_text("garbage")
    out = io.StringIO()
    person = _FirstMove(seat_names("you", ["greedy"]), stdout=out, interactive=False, color=False)
    table = LocalTable("durak", 2, ["greedy"], seed=1, record=path)
    play_session(table, person, games=2)
    assert out.getvalue().count("No record is kept: ") == 1
    assert out.getvalue().count("Game over after") == 2
    assert path.read_text() == "garbage"


def test_chosen_bots_are_recorded_apart_from_the_levels(tmp_path: Path) -> None:
    table = LocalTable("durak", 3, ["greedy", "random"], record=tmp_path / "r.json")
    assert table.record_table == Table("durak", 3, "bots greedy,random")
    assert LocalTable("durak", 3, ["expert"], level="medium").record_table.level == "medium"


def _moska(home: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), XDG_DATA_HOME=str(home), NO_COLOR="1")
    env["COLUMNS"] = "200"
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", *args],
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_moska_stats_prints_the_record_and_refuses_a_broken_one(tmp_path: Path) -> None:
    done = _moska(tmp_path, "stats")
    assert done.returncode == 0, done.stderr
    assert "No games yet" in done.stdout
    path = tmp_path / "moska-p2p" / "record.json"
    for lost in (True, True, False, True, True):
        add_game(path, MOSKA_4_MEDIUM, lost)
    done = _moska(tmp_path, "stats")
    assert done.returncode == 0, done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("moska "))
    assert row.split()[:5] == ["moska", "4", "medium", "5", "4"]
    assert row.endswith("2 (korokkeella)")
    path.write_text(json.dumps({"version": 1, "tallies": "x"}))
    done = _moska(tmp_path, "stats")
    assert done.returncode != 0
    assert "is not a record moska can read" in done.stderr
    assert path.read_text() == json.dumps({"version": 1, "tallies": "x"})


def test_moska_play_seats_the_default_level_and_refuses_a_wrong_one(tmp_path: Path) -> None:
    done = _moska(tmp_path, "play", "--plain", "--seed", "2", "--games", "1", stdin="quit\n")
    assert "medium 1" in done.stdout, done.stdout  # experts, named by their level
    done = _moska(tmp_path, "play", "--level", "expert")
    assert done.returncode != 0
    assert "unknown level" in done.stderr and "strongest" in done.stderr
    done = _moska(tmp_path, "play", "--level", "easy", "--bots", "greedy")
    assert done.returncode != 0
    assert "not both" in done.stderr
