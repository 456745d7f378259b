"""OpenSkill ratings game by game and the leaderboard kept across runs (``moska arena
--ratings FILE``, ``moska ratings FILE``): runs add up, the stronger bot rises above the
weaker, a damaged or foreign file is refused before any game, writes are atomic. None of it
needs matplotlib."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moska_p2p.arena import ratings as ratings_module
from moska_p2p.arena.arena import run_arena
from moska_p2p.arena.ratings import (
    FORMAT,
    VERSION,
    Leaderboard,
    Rater,
    RatingsError,
    load,
    save,
    trajectory,
)
from moska_p2p.arena.stats import rate
from moska_p2p.cli import app

runner = CliRunner()


def _arena(path: Path, seed: int, *extra: str, bots: str = "greedy,random") -> str:
    args = ["arena", "--preset", "durak", "--bots", bots, "--games", "30", "--quiet"]
    result = runner.invoke(app, [*args, "--seed", str(seed), "--ratings", str(path), *extra])
    assert result.exit_code == 0, result.output
    return result.output


# -------------------------------------------------------------------- game by game


def test_a_trajectory_ends_where_the_arena_ratings_do() -> None:
    bots = ["greedy", "shedder", "random", "random"]
    result = run_arena("moska", bots, 24, seed=4)
    path = trajectory(bots, result.outcomes)
    assert path.games == list(range(25))  # the defaults, then one step a game
    assert {len(p) for p in path.points.values()} == {25}
    assert result.ratings is not None
    for r in result.ratings:
        mu, sigma = path.points[r.name][-1]
        assert (mu, sigma) == pytest.approx((r.mu, r.sigma), rel=1e-12)
    assert path.points["greedy"][0] == path.points["random"][0]  # all start equal


def test_unfinished_games_are_not_rated() -> None:
    result = run_arena("moska", ["greedy", "random"], 4, seed=1, max_moves=3)
    assert all(o.unfinished for o in result.outcomes)
    assert trajectory(result.bots, result.outcomes).games == [0]
    board = Leaderboard("moska")
    assert board.update(result.bots, result.outcomes) == 0
    assert board.bots == {} and board.runs == 1 and board.games == 0


def test_a_leaderboard_continues_from_the_file_exactly(tmp_path: Path) -> None:
    """Two runs rated through the file end where one rater over both runs' games does: the
    file keeps mu and sigma exactly (JSON floats round-trip)."""
    bots = ["greedy", "shedder", "random"]
    first = run_arena("durak", bots, 12, seed=1).outcomes
    second = run_arena("durak", bots, 12, seed=2).outcomes
    path = tmp_path / "club.json"
    board = load(path, "durak", missing_ok=True)
    board.update(bots, first, now="2026-01-01T00:00:00Z")
    save(path, board)
    board = load(path, "durak")
    board.update(bots, second, now="2026-01-08T00:00:00Z")
    save(path, board)
    rater = Rater()
    for game in [*first, *second]:
        rater.play(bots, game)
    again = load(path)
    assert {n: (r.mu, r.sigma) for n, r in again.bots.items()} == rater.current
    assert again.runs == 2 and again.games == 24 and again.updated == "2026-01-08T00:00:00Z"
    # Rated from scratch, the first run alone is the arena's own rating.
    fresh = Leaderboard("durak")
    fresh.update(bots, first)
    for r in rate(bots, first):
        assert (fresh.bots[r.name].mu, fresh.bots[r.name].sigma) == (r.mu, r.sigma)


def test_a_bot_with_two_seats_counts_each_game_once() -> None:
    bots = ["random", "random", "greedy"]
    result = run_arena("durak", bots, 9, seed=5)
    board = Leaderboard("durak")
    board.update(bots, result.outcomes)
    assert board.bots["random"].games == 9 and board.bots["greedy"].games == 9


# ----------------------------------------------------------------- across arena runs


def test_two_runs_accumulate_and_the_stronger_bot_rises(tmp_path: Path) -> None:
    path = tmp_path / "club.json"
    out = _arena(path, 1)
    assert f"30 games added to {path}" in out
    first = json.loads(path.read_text())
    assert first["format"] == FORMAT and first["version"] == VERSION
    assert first["runs"] == 1 and first["games"] == 30
    _arena(path, 2)
    second = json.loads(path.read_text())
    assert second["runs"] == 2 and second["games"] == 60
    greedy, random = second["bots"]["greedy"], second["bots"]["random"]
    assert greedy["games"] == random["games"] == 60
    assert greedy["mu"] - 3 * greedy["sigma"] > random["mu"] + 3 * random["sigma"]
    assert greedy["mu"] > first["bots"]["greedy"]["mu"] > 25 > random["mu"]
    assert greedy["sigma"] < first["bots"]["greedy"]["sigma"]  # more games, more certain
    # A new bot joins the leaderboard at the model's default and is rated from there.
    _arena(path, 3, bots="shedder,random")
    third = json.loads(path.read_text())
    assert set(third["bots"]) == {"greedy", "random", "shedder"}
    assert third["bots"]["greedy"] == greedy  # not in that run: untouched
    assert third["bots"]["shedder"]["games"] == 30


def test_moska_ratings_prints_the_leaderboard(tmp_path: Path) -> None:
    path = tmp_path / "club.json"
    _arena(path, 1, bots="greedy,shedder,random")
    result = runner.invoke(app, ["ratings", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    assert lines[0].startswith("durak: 3 bots, 30 games over 1 arena run, last updated ")
    assert lines[1].split() == ["rank", "bot", "ordinal", "mu", "sigma", "games", "last", "updated"]
    rows = [line.split() for line in lines[2:]]
    assert [r[0] for r in rows] == ["1", "2", "3"] and rows[-1][1] == "random"
    ordinals = [float(r[2]) for r in rows]
    assert ordinals == sorted(ordinals, reverse=True)
    assert all(r[5] == "30" for r in rows)
    as_json = runner.invoke(app, ["ratings", str(path), "--json"])
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.output)
    assert data["preset"] == "durak" and data["runs"] == 1 and data["games"] == 30
    board = data["leaderboard"]
    assert [b["rank"] for b in board] == [1, 2, 3]
    assert [b["bot"] for b in board] == [r[1] for r in rows]
    for b in board:
        assert b["ordinal"] == pytest.approx(b["mu"] - 3 * b["sigma"])
        assert set(b) == {"rank", "bot", "ordinal", "mu", "sigma", "games", "updated"}


def test_moska_ratings_of_an_empty_leaderboard(tmp_path: Path) -> None:
    path = tmp_path / "club.json"
    save(path, Leaderboard("moska"))
    result = runner.invoke(app, ["ratings", str(path)])
    assert result.exit_code == 0 and "no games rated yet" in result.output


# ------------------------------------------------------------------------ refusals


def _valid() -> dict[str, object]:
    board = Leaderboard("durak", 1, 5, "2026-01-01T00:00:00Z")
    board.update(["greedy", "random"], run_arena("durak", ["greedy", "random"], 4).outcomes)
    return board.to_json()


def _with(**changes: object) -> bytes:
    return json.dumps(_valid() | changes).encode()


def _bot(**changes: object) -> bytes:
    data = _valid()
    data["bots"]["greedy"] |= changes  # type: ignore[index]
    return json.dumps(data).encode()


BAD_FILES = [
    (b"", "not JSON"),
    (b"\x89PNG\r\n\x1a\n\x00\x00", "not JSON"),
    (b'{"format": "moska-ratings", "vers', "not JSON"),  # cut short
    (b"[1, 2]", "not a ratings file"),
    (b'{"preset": "moska", "games": 10, "bots": []}', "not a ratings file"),  # arena --json
    (_with(version=VERSION + 1), "newer than this moska reads"),
    (_with(version="1"), "no format version"),
    (_with(model="elo"), "another model"),
    (_with(bots=[]), "no bots"),
    (_with(runs=-1), "runs, games or updated"),
    (_with(preset=None), "no preset"),
    (_bot(sigma=-1.0), 'bot "greedy": sigma must be a positive number'),
    (_bot(mu="high"), 'bot "greedy": mu must be a number'),
    (_bot(games=True), 'bot "greedy": games must be a whole number'),
    (_bot(updated=3), 'bot "greedy": updated must be a date'),
]


@pytest.mark.parametrize(("content", "message"), BAD_FILES)
def test_a_damaged_or_foreign_file_is_refused(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "club.json"
    path.write_bytes(content)
    with pytest.raises(RatingsError, match=message):
        load(path, "durak", missing_ok=True)
    result = runner.invoke(app, ["ratings", str(path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {path}") and message in lines[0]


@pytest.mark.parametrize(("content", "message"), [BAD_FILES[2], BAD_FILES[4], BAD_FILES[11]])
def test_the_arena_refuses_a_bad_file_before_any_game(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path, saved = tmp_path / "club.json", tmp_path / "games"
    path.write_bytes(content)
    args = ["arena", "--bots", "greedy,random", "--games", "4", "--save", str(saved)]
    result = runner.invoke(app, [*args, "--ratings", str(path)])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --ratings {path}: ")
    assert message in lines[0]
    assert not saved.exists() and path.read_bytes() == content  # no game, file untouched


def test_a_file_of_another_preset_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "club.json"
    _arena(path, 1)
    before = path.read_bytes()
    args = ["arena", "--preset", "moska", "--bots", "greedy,random", "--games", "4"]
    result = runner.invoke(app, [*args, "--ratings", str(path)])
    assert result.exit_code == 2
    assert result.output.strip() == (
        f"error: --ratings {path} rates durak and this run is moska: name another ratings file"
    )
    assert path.read_bytes() == before


def test_missing_file_and_folder(tmp_path: Path) -> None:
    result = runner.invoke(app, ["ratings", str(tmp_path / "nowhere.json")])
    assert result.exit_code == 2 and "no such ratings file" in result.output
    result = runner.invoke(app, ["ratings", str(tmp_path)])
    assert result.exit_code == 2 and "that is a folder" in result.output
    args = ["arena", "--bots", "greedy,random", "--games", "2"]
    result = runner.invoke(app, [*args, "--ratings", str(tmp_path / "no" / "club.json")])
    assert result.exit_code == 2 and "does not exist" in result.output


# ----------------------------------------------------------------------- atomicity


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("where", ["fsync", "replace"])
def test_an_interrupted_write_leaves_the_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    path = tmp_path / "club.json"
    _arena(path, 1)
    before = path.read_bytes()
    board = load(path)
    board.update(["greedy", "random"], run_arena("durak", ["greedy", "random"], 4).outcomes)

    def interrupted(*args: object) -> None:
        raise KeyboardInterrupt  # Ctrl-C at the worst moment

    monkeypatch.setattr(ratings_module.os, where, interrupted)
    with pytest.raises(KeyboardInterrupt):
        save(path, board)
    monkeypatch.undo()
    assert path.read_bytes() == before and _leftovers(tmp_path) == []
    save(path, board)  # and then it works, replacing the file whole
    assert load(path).runs == 2 and _leftovers(tmp_path) == []


def test_a_write_keeps_the_file_permissions(tmp_path: Path) -> None:
    path = tmp_path / "club.json"
    save(path, Leaderboard("moska"))
    os.chmod(path, 0o640)
    save(path, Leaderboard("moska"))
    assert path.stat().st_mode & 0o777 == 0o640
