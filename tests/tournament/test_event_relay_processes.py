"""A whole event through a relay, with real processes on 127.0.0.1: a ``moska relay``, a
director and six bot entrants, none of which listens (``--no-listen``, as ``moska host
--no-listen``): every statement between the director and its entrants, and every game link of
every table, goes through the relay; the entrants enter with the event's invite only.

Every folder verifies (``moska verify`` exits 0) and every member's board is the same; the
tables' transcripts show that their games were played through the relay. And the same event
with the director killed between the rounds and an entrant killed at its table of round 2,
each started again with the same command: the director prints the same invite, and the event
ends through the relay."""

from __future__ import annotations

import contextlib
import re
import subprocess
import sys
import time
from pathlib import Path

from test_event_processes import (
    DEADLINE,
    ROOT,
    Procs,
    all_end_well,
    one_board,
    start,
    stop,
    wait_for,
)

from moska_p2p.event.folder import verify_event
from moska_p2p.tournament import digest

RELAY_LINE = re.compile(r"relay listening on 127\.0\.0\.1:(\d+)")
INVITE_LINE = re.compile(r"event invite \(moska tournament enter INVITE\): (moska:[a-z2-7]+)")


def relay_process(folder: Path) -> tuple[subprocess.Popen[bytes], Path]:
    out = folder / "relay.out"
    with open(out, "wb") as sink:
        popen = subprocess.Popen(
            [sys.executable, "-m", "moska_p2p", "relay", "--bind", "127.0.0.1", "--port", "0",
             "--per-network", "32"],
            cwd=ROOT, stdout=sink, stderr=subprocess.STDOUT,
        )  # fmt: skip
    return popen, out


def ended(popen: subprocess.Popen[bytes]) -> None:
    """Whatever still runs when the test ends is killed (and reaped)."""
    if popen.poll() is None:
        popen.kill()
        popen.wait()


def test_six_bots_that_do_not_listen_play_an_event_through_a_relay(tmp_path: Path) -> None:
    with contextlib.ExitStack() as running:
        relay = relay_process(tmp_path)
        running.callback(ended, relay[0])
        relay_port = wait_for(RELAY_LINE, relay[1]).group(1)
        director = start(
            "director",
            ["direct", "--preset", "durak", "--seats", "3", "--rounds", "2", "--games", "1",
             "--entrants", "6", "--bind", "127.0.0.1", "--no-listen", "--relay",
             f"127.0.0.1:{relay_port}", "--folder", str(tmp_path / "director"),
             "--identity", str(tmp_path / "d.pem")],
            tmp_path,
        )  # fmt: skip
        running.callback(ended, director[0])
        invite = wait_for(INVITE_LINE, director[1]).group(1)
        members = [director]
        for n in range(6):
            members.append(
                start(
                    f"bot{n}",
                    ["enter", invite, "--bot", "greedy", "--name", f"bot{n}", "--no-listen",
                     "--identity", str(tmp_path / f"bot{n}.pem"), "--folder",
                     str(tmp_path / f"bot{n}"), "--bind", "127.0.0.1"],
                    tmp_path,
                )
            )  # fmt: skip
            running.callback(ended, members[-1][0])
        give_up = time.monotonic() + DEADLINE
        codes = [(p.wait(timeout=max(1.0, give_up - time.monotonic())), out) for p, out in members]
        assert all(code == 0 for code, _ in codes), [o.read_text() for c, o in codes if c]
    said = (tmp_path / "director.out").read_text()
    assert "open on" not in said  # the director never listened
    boards = set()
    for folder in ["director", *(f"bot{n}" for n in range(6))]:
        report = verify_event(tmp_path / folder)
        assert report.status == "valid", (folder, report.fault)
        assert len(report.rows or []) == 6
        boards.add(digest(report.rows or []))
        checked = subprocess.run(
            [sys.executable, "-m", "moska_p2p", "verify", str(tmp_path / folder)],
            cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
        assert checked.returncode == 0, checked
    assert len(boards) == 1
    for n in range(6):
        out = (tmp_path / f"bot{n}.out").read_text()
        # each table was reached through the relay: joiners say so, hosts were reached so
        assert "listening on" not in out, out
    joined = [
        (tmp_path / f"bot{n}.out").read_text().count(f"table at the relay 127.0.0.1:{relay_port}")
        for n in range(6)
    ]
    assert sum(joined) == 8, joined  # 2 rounds x 2 tables x 2 joiners, every one relayed


def relayed_director(tmp_path: Path, relay_port: str) -> list[str]:
    return ["direct", "--preset", "durak", "--seats", "3", "--rounds", "2", "--games", "1",
            "--entrants", "6", "--bind", "127.0.0.1", "--no-listen", "--relay",
            f"127.0.0.1:{relay_port}", "--folder", str(tmp_path / "director"),
            "--identity", str(tmp_path / "d.pem")]  # fmt: skip


def relayed_entrant(tmp_path: Path, invite: str, n: int) -> list[str]:
    return ["enter", invite, "--bot", "greedy", "--name", f"bot{n}", "--no-listen",
            "--identity", str(tmp_path / f"bot{n}.pem"), "--folder", str(tmp_path / f"bot{n}"),
            "--bind", "127.0.0.1", "-q"]  # fmt: skip


def test_a_relayed_director_and_entrant_killed_and_started_again_finish_the_event(
    tmp_path: Path,
) -> None:
    procs: Procs = {}
    try:
        procs["relay"] = relay_process(tmp_path)
        relay_port = wait_for(RELAY_LINE, procs["relay"][1]).group(1)
        procs["director.0"] = start("director.0", relayed_director(tmp_path, relay_port), tmp_path)
        invite = wait_for(INVITE_LINE, procs["director.0"][1]).group(1)
        for n in range(6):
            procs[f"bot{n}.0"] = start(f"bot{n}.0", relayed_entrant(tmp_path, invite, n), tmp_path)
        wait_for(re.compile("standings after round 1"), procs["director.0"][1], DEADLINE / 2)
        procs["director.0"][0].kill()
        procs["director.0"][0].wait()
        procs["director.1"] = start("director.1", relayed_director(tmp_path, relay_port), tmp_path)
        assert wait_for(INVITE_LINE, procs["director.1"][1]).group(1) == invite  # the same room
        wait_for(re.compile("round 2: table"), procs["bot0.0"][1], DEADLINE / 2)
        time.sleep(1.0)
        procs["bot0.0"][0].kill()  # in the middle of its table, most likely
        procs["bot0.0"][0].wait()
        procs["bot0.1"] = start("bot0.1", relayed_entrant(tmp_path, invite, 0), tmp_path)
        all_end_well(procs, killed={"relay", "director.0", "bot0.0"})
    finally:
        stop(procs)
    one_board(tmp_path, ["director", *(f"bot{n}" for n in range(6))])
