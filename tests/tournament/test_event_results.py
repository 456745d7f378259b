"""What an event shows and leaves behind, from folders of in-memory events (the carrier a
loop, :mod:`club_harness`): the standings board's state at each point of an event, the
standings file, the report every member writes (the same from every member's folder), and
``moska tournament report`` and ``leaderboard`` on such folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from club_harness import SPEC, Club

from moska_p2p.cli.tournament import report_event, show_leaderboard, verify_events
from moska_p2p.event.carrier import show_standings
from moska_p2p.event.folder import STANDINGS_FILE, load, save
from moska_p2p.event.results import (
    REPORT_FILES,
    board_state,
    event_results,
    report_of,
    standings_text,
)
from moska_p2p.protocol.tally import GameRecord
from moska_p2p.tournament import (
    DONE,
    NO_RESULT,
    PLAYING,
    BoardState,
    Row,
    digest,
    ranked_games,
)
from moska_p2p.tournament.record import EventState, expected_table_id, follow, publish
from moska_p2p.tournament.signed import STANDINGS
from moska_p2p.ui.board import render_board
from moska_p2p.ui.club_leaderboard import record_event

ROOT = Path(__file__).resolve().parents[2]


def steps(club: Club, until: object, limit: int = 30) -> EventState:
    """Let the roles decide (no table played) until ``until(state)``."""
    for _ in range(limit):
        state = follow(club.director.record)
        if until(state):  # type: ignore[operator]
            return state
        club.carry(club.director.step())
        for role in club.roles:
            club.carry(role.step())
    raise AssertionError("the event never got there")


def test_no_board_before_the_entry_list() -> None:
    assert board_state(EventState()) is None


def test_the_board_follows_a_round_from_its_seating_to_its_standings() -> None:
    club = Club()
    state = steps(club, lambda s: s.rounds and s.rounds[0].tables)
    board = board_state(state)
    assert board is not None and board.round == 1 and not board.finished
    assert [t.members for t in board.tables] == state.rounds[0].tables
    assert {t.state for t in board.tables} == {PLAYING}
    assert all(r.points == 0 for r in board.rows) and len(board.rows) == 6
    seated = board.tables[0].members[0]
    assert board.table_of(seated) is board.tables[0]
    text = "\n".join(render_board(board, 80, symbols=False))
    assert "table 1, game 1/1" in text and "round 1 of 2" in text

    club.play_tables(loser_seat=1)
    state = steps(club, lambda s: s.rounds[0].published is not None)
    board = board_state(state)
    assert board is not None and board.round == 1
    assert {t.state for t in board.tables} == {DONE} and all(t.played == 1 for t in board.tables)
    assert list(board.rows) == state.rounds[0].rows
    losers = {t.members[1] for t in board.tables}
    assert {r.key for r in board.rows if r.points == 1} == losers


def test_a_table_whose_members_disagree_shows_no_result() -> None:
    club = Club()
    state = steps(club, lambda s: s.rounds and s.rounds[0].tables)
    entry = state.entry
    assert entry is not None
    for role in club.roles:  # each member says another seat lost: no majority anywhere
        table = role.table_to_play()
        assert table is not None
        key = expected_table_id(entry, 1, table.table, table.members)
        seat = table.members.index(role.identity.public_bytes)
        game = GameRecord(1, bytes(32), bytes(32), (seat,), False, 0)
        from moska_p2p.tournament import table_result

        club.carry([table_result(role.identity, entry.event, 1, table.table, key,
                                 table.members, [game])])  # fmt: skip
    state = steps(club, lambda s: s.rounds[0].published is not None)
    board = board_state(state)
    assert board is not None and {t.state for t in board.tables} == {NO_RESULT}
    assert all(r.no_result == [1] for r in board.rows)
    assert "no result" in "\n".join(render_board(board, 80, symbols=False))


def test_the_finished_board_and_the_standings_file(tmp_path: Path) -> None:
    club = Club()
    club.run()
    state = follow(club.director.record)
    board = board_state(state)
    assert board is not None and board.finished and board.at_final
    assert list(board.rows) == state.standing()
    assert len(board.tables) == 1 and board.tables[0].state == DONE
    shown: list[BoardState] = []
    marker = show_standings(state, (0, 0), tmp_path, shown.append)
    assert shown == [board] and marker == (3, 3)
    assert show_standings(state, marker, tmp_path, shown.append) == marker and len(shown) == 1
    text = (tmp_path / STANDINGS_FILE).read_text()
    assert text == "\n".join(standings_text(board)) + "\n"
    assert "final standings" in text and all(r.name in text for r in board.rows)


def folders(tmp_path: Path) -> tuple[Club, list[Path]]:
    """A finished in-memory event, saved as the director's and two entrants' folders."""
    club = Club()
    club.run()
    paths = []
    for n, record in enumerate(club.records()[:3]):
        folder = tmp_path / f"member{n}"
        save(folder, club.director.event, record)
        paths.append(folder)
    return club, paths


def test_report_writes_the_same_files_from_every_members_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    club, paths = folders(tmp_path)
    written = []
    for folder in paths:
        assert report_event(folder, None, False) == 0
        written.append({name: (folder / name).read_text() for name in REPORT_FILES})
    assert written[0] == written[1] == written[2]
    state = follow(club.director.record)
    assert written[0] == report_of(state).files()
    text = written[0]["report.txt"]
    assert SPEC.name in text and f"standings digest {digest(state.standing() or []).hex()}" in text
    assert "Round 2" in text and "Final table" in text
    assert "<svg" in written[0]["losses.svg"] and "<html" in written[0]["report.html"]
    said = capsys.readouterr().out
    assert all(f"written: {paths[0] / name}" in said for name in REPORT_FILES)

    out = tmp_path / "elsewhere"
    assert report_event(paths[1], out, True) == 0  # no transcripts here: no game to export
    assert {p.name for p in out.iterdir()} >= set(REPORT_FILES)
    assert "0 games exported" in capsys.readouterr().out


def test_report_refuses_a_folder_that_does_not_verify(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    club, paths = folders(tmp_path)
    _event, record = load(paths[0])
    for key, statement in list(record.statements.items()):
        if statement.kind == STANDINGS and statement.body()[1] == 1:
            del record.statements[key]
    rows = follow(club.director.record).rounds[0].rows or []
    flattered = [Row(r.key, r.name, 0, r.games) for r in rows]
    record.add(publish(club.director_id, club.director.event, 1, flattered))
    save(paths[0], club.director.event, record)
    assert report_event(paths[0], None, False) == 1
    said = capsys.readouterr().err
    assert "does not verify" in said and "differ" in said
    assert not any((paths[0] / name).exists() for name in REPORT_FILES)
    assert report_event(tmp_path / "nothing", None, False) == 1
    assert "does not verify" in capsys.readouterr().err


def test_verify_prints_the_board(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _club, paths = folders(tmp_path)
    assert verify_events([paths[1]], False) == 0
    said = capsys.readouterr().out
    assert "valid: event" in said and "final standings" in said and "losses" in said


def test_the_leaderboard_command_shows_the_rated_event(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    club = Club()
    club.run()
    state = follow(club.director.record)
    entry = state.entry
    assert entry is not None
    rounds, final = event_results(state)
    assert len(rounds) == 2 and final is not None
    file = tmp_path / "club.json"
    games = ranked_games(rounds, final)
    record_event(file, SPEC.preset, entry.event, SPEC.name, entry.entrants, games)
    assert show_leaderboard(SPEC.preset, file) == 0
    said = capsys.readouterr().out
    assert f"1 events, {len(games)} games" in said
    assert all(f" {e.name} " in said for e in entry.entrants)

    file.write_text("{not json")
    assert show_leaderboard(SPEC.preset, file) == 1
    said = capsys.readouterr().err
    assert "not a leaderboard file (not JSON" in said and "keeps it aside" in said
    assert show_leaderboard(SPEC.preset, tmp_path / "none.json") == 0
    assert "no leaderboard yet" in capsys.readouterr().out


def test_the_subcommands_are_reached_from_the_command_line(tmp_path: Path) -> None:
    _club, paths = folders(tmp_path)
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), NO_COLOR="1", LANGUAGE="en")

    def moska(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "moska_p2p", "tournament", *args], cwd=ROOT, env=env,
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    done = moska("report", str(paths[0]), "--out", str(tmp_path / "out"))
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "report.html").is_file()
    done = moska("leaderboard", "--preset", "moska")
    assert done.returncode == 0 and "no leaderboard yet" in done.stdout, done


def test_a_round_published_and_the_next_seated_at_once_are_two_boards(tmp_path: Path) -> None:
    """The final table is seated by the very standings that end round 2: the board shows
    those standings first (each table done), then the final table playing."""
    club = Club()
    for _ in range(50):
        state = follow(club.director.record)
        if len(state.rounds) == 3 and state.rounds[2].tables is not None:
            break
        club.carry(club.director.step())
        for role in club.roles:
            club.carry(role.step())
        club.play_tables()
    assert state.rounds[1].published is not None and state.rounds[2].result is None
    shown: list[BoardState] = []
    assert show_standings(state, (2, 1), tmp_path, shown.append) == (3, 2)
    after, final = shown
    assert after.round == 2 and not after.at_final and {t.state for t in after.tables} == {DONE}
    assert list(after.rows) == state.rounds[1].rows
    assert final.at_final and {t.state for t in final.tables} == {PLAYING}
    assert "round 2 of 2" in (tmp_path / STANDINGS_FILE).read_text()
