"""Ctrl-C in ``moska arena`` keeps the games played: their table is printed, the JSON written
(marked ``interrupted``), and the exit code is 130, not ``error: LeaveTable: interrupted``
with every game thrown away."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from moska_p2p.arena.arena import CHUNKS

ROOT = Path(__file__).resolve().parents[2]
GAMES = 64 * CHUNKS  # chunks of 64 games


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_ctrl_c_in_the_arena_reports_the_games_played(tmp_path: Path, jobs: str) -> None:
    saved, report = tmp_path / "games", tmp_path / "out.json"
    run = subprocess.Popen(
        [sys.executable, "-m", "moska_p2p", "arena", "--bots", "greedy,random", "--games",
         str(GAMES), "--jobs", jobs, "--save", str(saved), "--json", str(report)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,  # its own process group: the Ctrl-C of a terminal reaches all
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(saved.glob("*.json"))) < 3 * 64:
            time.sleep(0.1)  # past two whole chunks, whichever worker played them
        os.killpg(run.pid, signal.SIGINT)
        out, err = run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
            run.wait(10)
    assert run.returncode == 130, (out, err)
    assert "LeaveTable" not in err and "error:" not in err, err
    data = json.loads(report.read_text())
    assert data["interrupted"] is True and 0 < data["games"] < GAMES, data
    assert f"interrupted after {data['games']} of {GAMES} games" in err, err
    assert f"moska, 2 players, {data['games']} games" in out, out
