"""The quitter's matrix through real processes on 127.0.0.1: does a seat that quits a game it
is losing escape its loss, and is an honest seat ever named?

Each cell is one game of real ``moska`` processes: honest ``greedy`` seats, and one seat run by
``scripts/lib/cheater.py`` (a ``random`` bot, so that it is often the one losing) that quits
in one of its ways once it is losing (``kill``, ``stop``, ``stop-back``: SIGSTOP, then SIGCONT
after ``--wake`` seconds, ``bogus``, ``silent``, ``half-silent``: its session sends nothing
more but its node still answers ``sync`` requests, so some peers get its frames when they ask)
or once the moves make it the loser (``die-decided``). A cell where the cheater never got to
lose is retried with the next seed.
Every honest peer's transcript is then checked with ``moska verify --json``:

* ``loses``: records where the cheater is among the losers (what should happen);
* ``annulled``: records with no result (the quit worked);
* ``finished``: records of a game that played out (no verdict: the cheater's frames still
  came, as ``half-silent``'s do when asked; an honest loser there lost at cards);
* ``honest named``: records of a stopped game naming an honest seat as a loser or as lost
  contact;
* ``disagree``: games whose honest records do not agree on the losers;
* ``end apart``: games whose honest records agree on the losers but not on how the game
  ended (one finished, another stopped; or two verdicts of different kinds).

    python scripts/quit_matrix_net.py --runs 2                 # every cell, twice
    python scripts/quit_matrix_net.py --modes kill,bogus --tables moska:3

Bounded: every game has ``--game-timeout`` seconds, every process is killed at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ("kill", "stop", "stop-back", "bogus", "silent", "half-silent", "die-decided")
JOIN = re.compile(r"join with: moska join 127\.0\.0\.1:(\d+)")
SEAT = re.compile(r"you are seat (\d)")


@dataclass
class Cell:
    preset: str
    players: int
    mode: str
    tried: int = 0
    games: int = 0  # games where the cheater got to quit
    records: int = 0
    loses: int = 0
    annulled: int = 0
    finished: int = 0
    honest_named: int = 0
    disagree: int = 0
    apart: int = 0
    notes: list[str] = field(default_factory=list)


def spawn(args: list[str], out: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    with open(out, "wb") as stdout, open(out.with_suffix(".err"), "wb") as stderr:
        return subprocess.Popen(
            [sys.executable, *args], cwd=ROOT, stdout=stdout, stderr=stderr, env=env
        )


def wait_for(path: Path, pattern: re.Pattern[str], timeout: float) -> re.Match[str] | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = pattern.search(path.read_text(errors="replace")) if path.exists() else None
        if found:
            return found
        time.sleep(0.1)
    return None


def play(cell: Cell, seed: int, folder: Path, args: argparse.Namespace) -> None:
    env = dict(
        os.environ,
        PYTHONUNBUFFERED="1",
        PYTHONPATH=str(ROOT),
        XDG_CONFIG_HOME=str(folder / "config"),
        XDG_DATA_HOME=str(folder / "data"),
    )
    common = ["--bind", "127.0.0.1", "-q"]
    procs: dict[str, subprocess.Popen[bytes]] = {}
    try:
        procs["h"] = spawn(
            ["-m", "moska_p2p", "host", "--preset", cell.preset, "--players", str(cell.players),
             "--no-announce", "--bot", "greedy", "--seed", str(seed), "--timeout",
             str(args.timeout), "--transcript", str(folder / "h.moska"), "--wait", "30", *common],
            folder / "h.out", env,
        )
        found = wait_for(folder / "h.out", JOIN, 20)
        if found is None:
            cell.notes.append(f"seed {seed}: the host did not open")
            return
        address = f"127.0.0.1:{found.group(1)}"
        for i in range(cell.players - 2):
            procs[f"j{i}"] = spawn(
                ["-m", "moska_p2p", "join", address, "--bot", "greedy", "--seed", str(seed + i + 1),
                 "--transcript", str(folder / f"j{i}.moska"), *common],
                folder / f"j{i}.out", env,
            )
        mode = "stop" if cell.mode == "stop-back" else cell.mode
        procs["c"] = spawn(
            ["-m", "scripts.lib.cheater", mode, "--", "join", address, "--bot", "random",
             "--seed", str(seed + 99), "--transcript", str(folder / "c.moska"), *common],
            folder / "c.out", env,
        )
        deadline = time.monotonic() + args.game_timeout
        woke = False
        honest = [name for name in procs if name != "c"]
        while time.monotonic() < deadline:
            if all(procs[name].poll() is not None for name in honest):
                break
            if cell.mode == "stop-back" and not woke:
                triggered = wait_for(folder / "c.err", re.compile("cheater:"), 0.1)
                if triggered:
                    time.sleep(args.wake)
                    procs["c"].send_signal(signal.SIGCONT)
                    woke = True
            time.sleep(0.2)
        else:
            cell.notes.append(f"seed {seed}: honest peers still running at the bound")
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait(5)
    cell.tried += 1
    cheater_err = (folder / "c.err").read_text(errors="replace")
    seat_match = SEAT.search((folder / "c.out").read_text(errors="replace"))
    if "cheater:" not in cheater_err or seat_match is None:
        return  # the cheater never got to lose: not a game of this cell
    cheater = int(seat_match.group(1))
    cell.games += 1
    outcomes: list[tuple[int, ...]] = []
    endings: list[str] = []
    for name in ("h", *[f"j{i}" for i in range(cell.players - 2)]):
        path = folder / f"{name}.moska"
        if not path.exists():
            cell.notes.append(f"seed {seed}: {name} wrote no transcript")
            continue
        verified = subprocess.run(
            [sys.executable, "-m", "moska_p2p", "verify", "--json", str(path)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
        )
        record = json.loads(verified.stdout.splitlines()[0])
        if not record.get("valid"):
            cell.notes.append(f"seed {seed}: {name}'s record does not verify")
        losers = set(record.get("losers") or [])
        lost = set(record.get("lost_contact") or [])
        cell.records += 1
        cell.loses += cheater in losers
        cell.annulled += not losers
        finished = record.get("verdict") is None
        cell.finished += finished
        cell.honest_named += not finished and bool((losers | lost) - {cheater})
        outcomes.append(tuple(sorted(losers)))
        endings.append(str(record.get("verdict") or "finished").split(":")[0])
    if len(set(outcomes)) > 1:
        cell.disagree += 1
        cell.notes.append(f"seed {seed}: the honest records disagree: losers {outcomes}")
    elif len(set(endings)) > 1:
        cell.apart += 1
        cell.notes.append(f"seed {seed}: the honest records end apart: {endings}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="games per cell where it quits")
    parser.add_argument("--tries", type=int, default=4, help="seeds tried per wanted game")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--tables", default="moska:3,durak:4", help="PRESET:PLAYERS,...")
    parser.add_argument("--timeout", type=float, default=6.0, help="the table's timeout")
    parser.add_argument("--wake", type=float, default=4.0, help="stop-back: seconds stopped")
    parser.add_argument("--game-timeout", type=float, default=120.0)
    parser.add_argument(
        "--keep", action="store_true", help="keep every game's folder (printed) to look into"
    )
    args = parser.parse_args()
    cells = []
    for table in args.tables.split(","):
        preset, players = table.split(":")
        for mode in args.modes.split(","):
            if mode not in MODES:
                raise SystemExit(f"unknown mode {mode}: one of {', '.join(MODES)}")
            cells.append(Cell(preset, int(players), mode))
    base = Path(tempfile.mkdtemp(prefix="quit-matrix-"))
    try:
        for cell in cells:
            seed = 1
            while cell.games < args.runs and cell.tried < args.runs * args.tries:
                folder = base / f"{cell.preset}-{cell.players}-{cell.mode}-{seed}"
                folder.mkdir()
                play(cell, seed, folder, args)
                seed += 1
            print(
                f"{cell.preset}/{cell.players} {cell.mode:11} games {cell.games}/{cell.tried}  "
                f"records {cell.records}: loses {cell.loses}, annulled {cell.annulled}, "
                f"finished {cell.finished}, "
                f"honest named {cell.honest_named}; games disagreeing {cell.disagree}, "
                f"ending apart {cell.apart}"
                + ("".join(f"\n    {note}" for note in cell.notes)),
                flush=True,
            )
    finally:
        if args.keep:
            print(f"the games' folders: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
