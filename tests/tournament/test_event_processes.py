"""Whole events with real processes on 127.0.0.1: a director and six bot entrants, each its
own ``python -m moska_p2p tournament`` process with its own key and folder.

* two rounds of two tables of three, then a final table of the best three playing a session
  of two games: every entrant ends well, every folder verifies, one board for all;
* the director killed between the rounds and started again with the same command, and an
  entrant killed at its table of round 2 and started again with the same command: the event
  still ends, every folder verifies, one board for all."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from moska_p2p.event.folder import verify_event
from moska_p2p.event.results import REPORT_FILES
from moska_p2p.tournament import digest

ROOT = Path(__file__).resolve().parents[2]
OPEN_LINE = re.compile(r"open on 127\.0\.0\.1:(\d+)")
DEADLINE = 600.0  # seconds the whole event may take on a loaded machine


def start(name: str, args: list[str], folder: Path) -> tuple[subprocess.Popen[bytes], Path]:
    out = folder / f"{name}.out"
    env = dict(
        os.environ,
        PYTHONUNBUFFERED="1",
        LANGUAGE="en",  # what the outputs are checked for
        XDG_CONFIG_HOME=str(folder / "config"),
        XDG_DATA_HOME=str(folder / "data"),
    )
    with open(out, "wb") as sink:
        popen = subprocess.Popen(
            [sys.executable, "-m", "moska_p2p", "tournament", *args],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
        )
    return popen, out


def wait_for(pattern: re.Pattern[str], path: Path, timeout: float = 60.0) -> re.Match[str]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = pattern.search(path.read_text(errors="replace"))
        if found:
            return found
        time.sleep(0.1)
    raise AssertionError(f"no {pattern.pattern!r} in {path}:\n{path.read_text(errors='replace')}")


def test_six_bots_play_an_event_and_every_folder_proves_the_same_standings(
    tmp_path: Path,
) -> None:
    procs: list[tuple[subprocess.Popen[bytes], Path]] = []
    try:
        director = start(
            "director",
            ["direct", "--preset", "durak", "--seats", "3", "--rounds", "2", "--games", "1",
             "--final", "3", "--final-games", "2", "--entrants", "6", "--bind", "127.0.0.1",
             "--folder", str(tmp_path / "director"), "--identity", str(tmp_path / "d.pem")],
            tmp_path,
        )  # fmt: skip
        procs.append(director)
        port = wait_for(OPEN_LINE, director[1]).group(1)
        for n in range(6):
            procs.append(
                start(
                    f"bot{n}",
                    ["enter", f"127.0.0.1:{port}", "--bot", "greedy", "--name", f"bot{n}",
                     "--identity", str(tmp_path / f"bot{n}.pem"), "--folder",
                     str(tmp_path / f"bot{n}"), "--bind", "127.0.0.1", "-q"],
                    tmp_path,
                )
            )
        end = time.monotonic() + DEADLINE
        for popen, out in procs:
            left = max(1.0, end - time.monotonic())
            code = popen.wait(timeout=left)
            assert code == 0, out.read_text(errors="replace")
    finally:
        for popen, _ in procs:
            if popen.poll() is None:
                popen.kill()
                popen.wait()
    boards = set()
    checked_tables = []
    for folder in ["director", *(f"bot{n}" for n in range(6))]:
        report = verify_event(tmp_path / folder)
        assert report.status == "valid", (folder, report.fault)
        rows = report.rows or []
        assert len(rows) == 6 and sum(r.final_points is not None for r in rows) == 3
        boards.add(digest(rows))
        checked_tables.append(len(report.lines))  # tables whose transcripts it holds
    assert len(boards) == 1
    assert checked_tables[0] == 0 and sorted(checked_tables[1:]) == [2, 2, 2, 3, 3, 3]
    assert "after the final table" in (tmp_path / "bot0.out").read_text()
    said = (tmp_path / "director.out").read_text()
    assert "round 2: table 2: " in said and "round 3: table 1: " in said  # who plays where
    # the standings board: as each round is seated (where everyone plays), and after it
    assert re.search(r"club evening . round 2 of 2", said), said
    assert "table 2, game 1/1" in said and "final standings" in said
    reports = []
    members = ["director", *(f"bot{n}" for n in range(6))]
    for folder in members:
        out = (tmp_path / f"{folder}.out").read_text()
        assert re.search(r"club evening . final standings", out), out
        kept = {name: (tmp_path / folder / name).read_text() for name in REPORT_FILES}
        assert f"the event's report: {tmp_path / folder / 'report.txt'}" in out
        reports.append(kept)
    assert all(kept == reports[0] for kept in reports)  # one event, one report
    assert "Final table" in reports[0]["report.txt"] and "<svg" in reports[0]["report.html"]
    outs = [(tmp_path / f"{name}.out").read_text() for name in members]
    assert any("games of this event rated" in out for out in outs)  # one file: rated once
    assert all("club leaderboard " in out for out in outs)
    assert (tmp_path / "data" / "moska-p2p" / "leaderboard-durak.json").is_file()

    def verify(folder: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "moska_p2p", "verify", str(folder)],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    checked = verify(tmp_path / "bot0")
    assert checked.returncode == 0 and "valid: event" in checked.stdout, checked
    env = dict(os.environ, XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path),
               LANGUAGE="en")  # fmt: skip
    board = subprocess.run(
        [sys.executable, "-m", "moska_p2p", "tournament", "leaderboard", "--preset", "durak"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert board.returncode == 0 and "1 events" in board.stdout, board
    assert all(f" bot{n} " in board.stdout for n in range(6)), board.stdout
    again = subprocess.run(
        [sys.executable, "-m", "moska_p2p", "tournament", "report", str(tmp_path / "bot0"),
         "--out", str(tmp_path / "again"), "--export"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again
    assert (tmp_path / "again" / "report.txt").read_text() == reports[0]["report.txt"]
    records = sorted((tmp_path / "again" / "games").glob("*.txt"))
    assert len(records) >= 2 and f"{len(records)} games exported" in again.stdout, again
    transcript = next((tmp_path / "bot0" / "round-1").glob("table-*/*.moska"))
    data = bytearray(transcript.read_bytes())
    data[-10] ^= 1  # a byte of the last frame's signature
    transcript.write_bytes(bytes(data))
    tampered = verify(tmp_path / "bot0")
    assert tampered.returncode == 1 and "INVALID" in tampered.stderr, tampered


def director_args(tmp_path: Path, rounds: int, *extra: str) -> list[str]:
    return ["direct", "--preset", "durak", "--seats", "3", "--rounds", str(rounds), "--games",
            "1", "--entrants", "6", "--bind", "127.0.0.1", "--folder", str(tmp_path / "director"),
            "--identity", str(tmp_path / "d.pem"), *extra]  # fmt: skip


def entrant_args(tmp_path: Path, port: str, n: int) -> list[str]:
    return ["enter", f"127.0.0.1:{port}", "--bot", "greedy", "--name", f"bot{n}", "--identity",
            str(tmp_path / f"bot{n}.pem"), "--folder", str(tmp_path / f"bot{n}"), "--bind",
            "127.0.0.1", "-q"]  # fmt: skip


def test_a_director_and_an_entrant_killed_and_started_again_finish_the_event(
    tmp_path: Path,
) -> None:
    procs: dict[str, tuple[subprocess.Popen[bytes], Path]] = {}

    def run(name: str, args: list[str]) -> None:
        runs = sum(1 for key in procs if key.startswith(name))
        procs[f"{name}.{runs}"] = start(f"{name}.{runs}", args, tmp_path)

    try:
        run("director", director_args(tmp_path, 2, "--port", "0"))
        port = wait_for(OPEN_LINE, procs["director.0"][1]).group(1)
        for n in range(6):
            run(f"bot{n}", entrant_args(tmp_path, port, n))
        wait_for(re.compile("standings after round 1"), procs["director.0"][1], DEADLINE / 2)
        procs["director.0"][0].kill()
        procs["director.0"][0].wait()
        run("director", director_args(tmp_path, 2, "--port", port))  # the same command
        wait_for(re.compile("resuming the event"), procs["director.1"][1])
        wait_for(re.compile("round 2: table"), procs["bot0.0"][1], DEADLINE / 2)
        time.sleep(1.0)
        procs["bot0.0"][0].kill()  # in the middle of its table, most likely
        procs["bot0.0"][0].wait()
        run("bot0", entrant_args(tmp_path, port, 0))
        all_end_well(procs, killed={"director.0", "bot0.0"})
    finally:
        stop(procs)
    one_board(tmp_path, ["director", *(f"bot{n}" for n in range(6))])


Procs = dict[str, tuple[subprocess.Popen[bytes], Path]]


def all_end_well(procs: Procs, killed: set[str]) -> None:
    """Every process but the ``killed`` ones ends with 0, within the deadline."""
    end = time.monotonic() + DEADLINE
    for name, (popen, out) in procs.items():
        if name not in killed:
            code = popen.wait(timeout=max(1.0, end - time.monotonic()))
            assert code == 0, (name, out.read_text(errors="replace"))


def stop(procs: Procs) -> None:
    for popen, _ in procs.values():
        if popen.poll() is None:
            popen.kill()
            popen.wait()


def one_board(tmp_path: Path, folders: list[str]) -> None:
    """Every folder verifies a finished event, and all of them the same standings."""
    boards = set()
    for folder in folders:
        report = verify_event(tmp_path / folder)
        assert report.status == "valid", (folder, report.fault)
        assert report.state is not None and report.state.finished()
        boards.add(digest(report.rows or []))
    assert len(boards) == 1


def director_killed_after_round_1(
    tmp_path: Path, procs: Procs, director: str, entrant: str
) -> str:
    """A director and six bots (``entrant``: their names, by ``{n}``), the director killed
    once round 1's standings are out; its port."""
    procs[director] = start(director, director_args(tmp_path, 2), tmp_path)
    port = wait_for(OPEN_LINE, procs[director][1]).group(1)
    for n in range(6):
        name = entrant.format(n=n)
        procs[name] = start(name, entrant_args(tmp_path, port, n), tmp_path)
    wait_for(re.compile("standings after round 1"), procs[director][1], DEADLINE / 2)
    procs[director][0].kill()
    procs[director][0].wait()
    return port


def test_a_director_whose_folder_is_lost_continues_the_event_from_an_entrants_folder(
    tmp_path: Path,
) -> None:
    """The director killed between the rounds and its folder deleted; its key kept: started
    again with ``--from`` an entrant's folder (and the same port), it continues the event;
    every folder verifies, one board for all, and the entrant's transcripts stay its own."""
    procs: Procs = {}
    try:
        port = director_killed_after_round_1(tmp_path, procs, "director.0", "bot{n}")
        shutil.rmtree(tmp_path / "director")  # the folder is lost, the key is not
        again = ["direct", "--from", str(tmp_path / "bot3"), "--folder",
                 str(tmp_path / "director2"), "--bind", "127.0.0.1", "--port", port,
                 "--identity", str(tmp_path / "d.pem")]  # fmt: skip
        procs["director.1"] = start("director.1", again, tmp_path)
        wait_for(re.compile("continues from"), procs["director.1"][1])
        all_end_well(procs, killed={"director.0"})
    finally:
        stop(procs)
    one_board(tmp_path, ["director2", *(f"bot{n}" for n in range(6))])
    assert not list((tmp_path / "director2").glob("round-*"))  # bot3's tables are bot3's
    assert "final standings" in (tmp_path / "director.1.out").read_text()


def test_a_member_succeeds_a_director_whose_key_is_lost_and_the_event_ends(
    tmp_path: Path,
) -> None:
    """The director gone for good (killed, never started again) between the rounds: bot3
    directs in its place (``direct --from BOT3_FOLDER --succeed`` with its own key, on
    another port), every entrant starts again with the successor's address and its own
    folder; the succession counts, the event ends, every folder verifies, one board."""
    procs: Procs = {}
    gone = {"director", *(f"bot{n}.0" for n in range(6))}
    try:
        director_killed_after_round_1(tmp_path, procs, "director", "bot{n}.0")
        hub = ["direct", "--from", str(tmp_path / "bot3"), "--succeed", "--folder",
               str(tmp_path / "successor"), "--bind", "127.0.0.1", "--identity",
               str(tmp_path / "bot3.pem")]  # fmt: skip
        procs["successor"] = start("successor", hub, tmp_path)
        there = wait_for(OPEN_LINE, procs["successor"][1]).group(1)
        for n in range(6):
            procs[f"bot{n}.0"][0].kill()
            procs[f"bot{n}.0"][0].wait()
            procs[f"bot{n}.1"] = start(f"bot{n}.1", entrant_args(tmp_path, there, n), tmp_path)
        all_end_well(procs, killed=gone)
    finally:
        stop(procs)
    one_board(tmp_path, ["successor", *(f"bot{n}" for n in range(6))])
    said = (tmp_path / "successor.out").read_text()
    assert "succeeding the director from the" in said and "bot3 directs the event now" in said
    state = verify_event(tmp_path / "bot0").state
    assert state is not None and state.successor is not None
    assert state.entry is not None and state.entry.entrant(state.successor).name == "bot3"
