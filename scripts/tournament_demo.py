#!/usr/bin/env python3
"""A whole club event with real processes on 127.0.0.1, and what the event costs over the
same games played as separate tables.

The event: ``moska tournament direct`` and one ``moska tournament enter --bot`` process per
entrant (each its own key and folder), ``--rounds`` rounds of tables of ``--seats`` and a
final table of the best ``--final``. Then every folder is verified (``verify_event``: the
draw, the seating, the results and the standings recomputed) and every member's board must
be the same.

The baseline: the same table shapes, round by round, played as separate tables
(``moska host --games G`` and ``moska join`` processes, every table of a round side by
side, one round after the other). The overhead is the event's wall time minus the
baseline's: entry, the draws (commit, reveal, acknowledgements), the results and the
standings, and each process's start-up once instead of once per table. Different deals:
a game's length varies, so compare medians of several ``--runs``.

    python scripts/tournament_demo.py          # 12 bots, 3 tables of 4, 3 rounds, a final of 4
    python scripts/tournament_demo.py --runs 3 --preset durak --bot random
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from moska_p2p.event.folder import verify_event  # noqa: E402
from moska_p2p.tournament import digest  # noqa: E402

OPEN_LINE = re.compile(r"open on 127\.0\.0\.1:(\d+)")
JOIN_LINE = re.compile(r"join with: moska join 127\.0\.0\.1:(\d+)")
DEADLINE = 1800.0


def start(folder: Path, name: str, args: list[str]) -> tuple[subprocess.Popen[bytes], Path]:
    out = folder / f"{name}.out"
    env = dict(
        os.environ,
        PYTHONUNBUFFERED="1",
        PYTHONPATH=str(ROOT),
        XDG_CONFIG_HOME=str(folder / "config"),
        XDG_DATA_HOME=str(folder / "data"),
    )
    with open(out, "wb") as sink:
        popen = subprocess.Popen(
            [sys.executable, "-m", "moska_p2p", *args],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env=env,
            stdin=subprocess.DEVNULL,
        )
    return popen, out


def wait_line(pattern: re.Pattern[str], out: Path, timeout: float = 120.0) -> str:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        found = pattern.search(out.read_text(errors="replace"))
        if found:
            return found.group(1)
        time.sleep(0.05)
    raise SystemExit(f"no {pattern.pattern!r} in {out}:\n{out.read_text(errors='replace')}")


def finish(procs: list[tuple[subprocess.Popen[bytes], Path]]) -> None:
    end = time.monotonic() + DEADLINE
    try:
        for popen, out in procs:
            code = popen.wait(timeout=max(1.0, end - time.monotonic()))
            if code:
                raise SystemExit(f"{out.name} exited {code}:\n{out.read_text(errors='replace')}")
    finally:
        for popen, _ in procs:
            if popen.poll() is None:
                popen.kill()
                popen.wait()


def run_event(folder: Path, a: argparse.Namespace) -> tuple[float, list[list[int]], int]:
    """The event's wall time, each round's table sizes, and the event file's size."""
    folder.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    director = start(
        folder,
        "director",
        [
            "tournament",
            "direct",
            "--preset",
            a.preset,
            "--seats",
            str(a.seats),
            "--rounds",
            str(a.rounds),
            "--games",
            str(a.games),
            "--final",
            str(a.final),
            "--entrants",
            str(a.entrants),
            "--bind",
            "127.0.0.1",
            "--folder",
            str(folder / "director"),
            "--identity",
            str(folder / "director.pem"),
        ],
    )
    port = wait_line(OPEN_LINE, director[1])
    procs = [director]
    for n in range(a.entrants):
        procs.append(
            start(
                folder,
                f"bot{n}",
                [
                    "tournament",
                    "enter",
                    f"127.0.0.1:{port}",
                    "--bot",
                    a.bot,
                    "--name",
                    f"bot{n}",
                    "--identity",
                    str(folder / f"bot{n}.pem"),
                    "--folder",
                    str(folder / f"bot{n}"),
                    "--bind",
                    "127.0.0.1",
                    "-q",
                ],
            )
        )
    finish(procs)
    took = time.monotonic() - began
    boards = set()
    for name in ["director", *(f"bot{n}" for n in range(a.entrants))]:
        report = verify_event(folder / name)
        if report.status != "valid":
            raise SystemExit(f"{name}'s folder does not verify: {report.fault}")
        boards.add(digest(report.rows or []))
    if len(boards) != 1:
        raise SystemExit("the members' standings differ")
    state = verify_event(folder / "director").state
    assert state is not None
    shapes = [[len(t) for t in r.tables or []] for r in state.rounds]
    size = (folder / "director" / "event.moska-event").stat().st_size
    return took, shapes, size


def run_tables(folder: Path, shapes: list[list[int]], a: argparse.Namespace) -> float:
    """The same tables played as separate tables: each round's side by side."""
    folder.mkdir(parents=True, exist_ok=True)
    began = time.monotonic()
    for number, sizes in enumerate(shapes, start=1):
        games = a.games
        procs = []
        for t, size in enumerate(sizes):
            tag = f"r{number}t{t}"
            host = start(
                folder,
                f"{tag}-host",
                [
                    "host",
                    "--preset",
                    a.preset,
                    "--players",
                    str(size),
                    "--games",
                    str(games),
                    "--bot",
                    a.bot,
                    "--bind",
                    "127.0.0.1",
                    "--port",
                    "0",
                    "--no-announce",
                    "-q",
                    "--identity",
                    str(folder / f"{tag}-0.pem"),
                    "--transcript",
                    str(folder / tag / "host.moska"),
                ],
            )
            port = wait_line(JOIN_LINE, host[1])
            procs.append(host)
            for seat in range(1, size):
                procs.append(
                    start(
                        folder,
                        f"{tag}-{seat}",
                        [
                            "join",
                            f"127.0.0.1:{port}",
                            "--bot",
                            a.bot,
                            "--bind",
                            "127.0.0.1",
                            "-q",
                            "--identity",
                            str(folder / f"{tag}-{seat}.pem"),
                            "--transcript",
                            str(folder / tag / f"seat{seat}.moska"),
                        ],
                    )
                )
        finish(procs)
    return time.monotonic() - began


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the processes are killed too
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entrants", type=int, default=12)
    parser.add_argument("--seats", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--games", type=int, default=1)
    parser.add_argument("--final", type=int, default=4, help="the final table's size (0: none)")
    parser.add_argument("--preset", default="moska")
    parser.add_argument("--bot", default="greedy")
    parser.add_argument("--runs", type=int, default=1)
    a = parser.parse_args()
    events, tables = [], []
    for run in range(1, a.runs + 1):
        with tempfile.TemporaryDirectory(prefix="moska-event-") as temp:
            folder = Path(temp)
            took, shapes, size = run_event(folder / "event", a)
            alone = run_tables(folder / "tables", shapes, a)
        events.append(took)
        tables.append(alone)
        print(
            f"run {run}: event {took:.1f} s (tables per round {shapes}, event file {size} B);"
            f" the same tables alone {alone:.1f} s; overhead {took - alone:+.1f} s",
            flush=True,
        )
    event, alone = statistics.median(events), statistics.median(tables)
    print(
        f"median of {a.runs}: {a.entrants} {a.bot} bots, {a.preset}, {a.rounds} rounds"
        f"{f' and a final of {a.final}' if a.final else ''}: event {event:.1f} s, separate"
        f" tables {alone:.1f} s, overhead {event - alone:+.1f} s"
        f" ({100 * (event - alone) / alone:+.0f}%)"
    )


if __name__ == "__main__":
    main()
