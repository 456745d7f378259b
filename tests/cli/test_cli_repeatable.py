"""``moska simulate`` is repeatable and predictable: ``--seed`` repeats
the game exactly (keys, table, shuffles, moves, transcript bytes), the i-th bot of
``--bots`` plays seat i whatever the seat draw, and one bot name fills every seat."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moska_p2p.cli import app

runner = CliRunner()
SEAT = re.compile(r"^  seat (\d): (\S+) \(peer(\d)", re.M)


def _simulate(*args: str) -> str:
    result = runner.invoke(app, ["simulate", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_the_same_seed_repeats_the_same_game_byte_for_byte(tmp_path: Path) -> None:
    bots = "shedder,greedy,random"
    runs = []
    for run in ("a", "b"):
        output = _simulate("--players", "3", "--bots", bots, "--seed", "1",
                           "--transcripts", str(tmp_path / run))  # fmt: skip
        files = sorted((tmp_path / run).glob("*.moska"))
        assert len(files) == 3
        runs.append((output.replace(str(tmp_path / run), "OUT"),
                     [(f.name, f.read_bytes()) for f in files]))  # fmt: skip
    assert runs[0] == runs[1]
    other = _simulate("--players", "3", "--bots", bots, "--seed", "2")
    assert other.splitlines()[0] != runs[0][0].splitlines()[0]  # another seed, another game


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_the_bots_sit_in_the_order_named(seed: int) -> None:
    bots = ["shedder", "greedy", "random", "greedy"]
    output = _simulate("--players", "4", "--bots", ",".join(bots), "--seed", str(seed))
    seats = SEAT.findall(output)
    assert [(int(s), name) for s, name, _ in seats] == list(enumerate(bots)), output


def test_the_seat_draw_still_permutes_the_peers() -> None:
    """The bots follow the seats, not the peers: over a few seeds, the peer at seat 0 is not
    always the first peer (so the test above is not passing by luck of the draw)."""
    firsts = set()
    for seed in range(1, 9):
        output = _simulate("--players", "3", "--bots", "greedy,random,shedder", "--seed",
                           str(seed))  # fmt: skip
        firsts.add(SEAT.findall(output)[0][2])
    assert len(firsts) > 1


def test_one_bot_name_fills_every_seat() -> None:
    output = _simulate("--players", "3", "--bots", "greedy", "--seed", "1")
    assert [name for _, name, _ in SEAT.findall(output)] == ["greedy"] * 3, output
    assert "result:" in output


def test_a_bot_with_parameters_is_one_seat() -> None:
    output = _simulate("--players", "2", "--bots", "ismcts:iterations=5,time=1,random",
                       "--seed", "1")  # fmt: skip
    names = [name for _, name, _ in SEAT.findall(output)]
    assert names == ["ismcts:iterations=5,time=1", "random"], output


def test_the_wrong_number_of_bots_is_refused() -> None:
    result = runner.invoke(app, ["simulate", "--players", "3", "--bots", "greedy,random"])
    assert result.exit_code == 2
    assert "3 players need 3 bots (or one for all), not 2" in result.output
