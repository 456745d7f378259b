"""A person enters an event from a pseudo-terminal (pexpect, on a VT100 emulator), with two
bots, each its own process: the person's client goes to its table by itself, the person plays
the round on the full-screen table (the first legal move each turn), the event ends, and the
person's folder proves the same standings as the bots'."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from moska_p2p.event.folder import verify_event
from moska_p2p.tournament import digest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ui"))
from screen_harness import Term, term_env

ROOT = Path(__file__).resolve().parents[2]
OPEN_LINE = re.compile(r"open on 127\.0\.0\.1:(\d+)")
DEADLINE = 240.0


def test_a_person_at_the_terminal_plays_an_event_with_two_bots(tmp_path: Path) -> None:
    env = term_env(XDG_DATA_HOME=str(tmp_path / "data"), XDG_CONFIG_HOME=str(tmp_path / "cfg"))
    common = ["--bind", "127.0.0.1"]
    procs: list[subprocess.Popen[bytes]] = []
    person: Term | None = None
    try:
        with open(tmp_path / "director.out", "wb") as out:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "moska_p2p", "tournament", "direct", "--preset",
                 "mustamaija", "--seats", "3", "--rounds", "1", "--entrants", "3", *common,
                 "--folder", str(tmp_path / "director"), "--identity", str(tmp_path / "d.pem")],
                cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env,
            ))  # fmt: skip
        end = time.monotonic() + 60
        while not (found := OPEN_LINE.search((tmp_path / "director.out").read_text())):
            assert time.monotonic() < end and procs[0].poll() is None
            time.sleep(0.1)
        address = f"127.0.0.1:{found.group(1)}"
        for n in range(2):
            with open(tmp_path / f"bot{n}.out", "wb") as out:
                procs.append(subprocess.Popen(
                    [sys.executable, "-m", "moska_p2p", "tournament", "enter", address, "--bot",
                     "random", "--name", f"bot{n}", "--identity", str(tmp_path / f"b{n}.pem"),
                     "--folder", str(tmp_path / f"bot{n}"), "-q", *common],
                    cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env,
                ))  # fmt: skip
        person = Term(
            ["-m", "moska_p2p", "tournament", "enter", address, "--name", "ann", "--identity",
             str(tmp_path / "ann.pem"), "--folder", str(tmp_path / "ann"), *common],
            24, 80, env=env,
        )  # fmt: skip
        child = person
        moves, at = 0, -1

        def ready() -> re.Match[str] | None:
            text = child.text()
            ended = re.search(r"^the event folder: .*", text, re.M)
            if ended:
                return ended
            lines = child.lines()
            header = child.header()
            if header is None or int(header.group(1)) <= at:
                return None
            if not lines[child.rows - 1].startswith(">"):
                return None
            return re.search("Your move", lines[child.rows - 3])

        while True:
            found = child.wait_for(ready, DEADLINE, "the person's move or the event's end")
            assert found is not None
            if found.group(0) != "Your move":
                break
            at = child.move_number()
            child.send(child.legal()[0] + "\r")
            moves += 1
            assert moves < 500
        shown = child.text()  # the board the person had full screen, left on the terminal
        assert "club evening · final standings" in shown and "▶" in shown, shown
        assert "the event's report: " in shown, shown
        assert child.exit_code(60) == 0
        for popen in procs:
            assert popen.wait(timeout=60) == 0
    finally:
        if person is not None:
            person.close()
        for popen in procs:
            if popen.poll() is None:
                popen.kill()
                popen.wait()
    assert moves > 0
    boards = set()
    for folder in ("director", "ann", "bot0", "bot1"):
        report = verify_event(tmp_path / folder)
        assert report.status == "valid", (folder, report.fault)
        boards.add(digest(report.rows or []))
    assert len(boards) == 1
