"""Real peers in real processes on 127.0.0.1: whole games, a killed peer, a
restarted peer, garbage on a listening port, Ctrl-C.

Each peer is ``python -m moska_p2p host|join --bot ...`` with its own identity file;
every wait is bounded and the fixture kills whatever still runs at the end.
"""

from __future__ import annotations

import re
import signal
import socket
import struct
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from net_harness import LISTEN_LINE, Table, assert_abandoned, mid_game

from moska_p2p.protocol.config import default_grace
from moska_p2p.protocol.frames import MAX_FRAME
from moska_p2p.protocol.transcript import verify_transcript

FINGERPRINT = r"[0-9A-F]{4}(-[0-9A-F]{4}){7}"
LOST = re.compile(rf"result: (seat \d \((greedy|random), {FINGERPRINT}\)( and )?)+ lost")


def _assert_one_verified_game(table: Table) -> None:
    reports = table.reports()
    assert all(r.valid for r in reports), [r.fault for r in reports]
    assert len({r.final_state_hash for r in reports}) == 1
    assert not list(table.folder.glob("*.resume")), "a finished game leaves no resume file"


@pytest.mark.parametrize(("preset", "players"), [("moska", 4), ("durak", 6), ("mustamaija", 3)])
def test_a_table_of_processes_plays_a_whole_game(
    make_table: Callable[..., Table], preset: str, players: int
) -> None:
    table = make_table(preset, players)
    codes = table.finish(45)
    assert codes == [0] * players, table.output()
    _assert_one_verified_game(table)
    for peer in table.peers:
        assert LOST.search(peer.out) or "result: a draw" in peer.out, peer.out
        assert "transcript verified" in peer.out


def test_a_killed_peer_loses_the_game_by_abandonment_corroborated_by_every_other(
    make_table: Callable[..., Table],
) -> None:
    """kill -9 of one of four: past the grace (twice the timeout here) the three others each
    sign that they lost it, and every one of them stops with ``abandoned``: the killed seat
    is the loser, corroborated by all three (PROTOCOL.md §15.5)."""
    timeout = 3.0
    table = make_table("moska", 4, timeout=timeout, pace=0.02)
    mid_game(table, 2)
    table.peers[2].kill()
    killed = time.monotonic()
    others = [p for i, p in enumerate(table.peers) if i != 2]
    grace = default_grace(timeout)
    codes = [p.finish(grace + 8) for p in others]
    elapsed = time.monotonic() - killed
    assert codes == [1, 1, 1], table.output()
    witnesses = [f for i, f in enumerate(table.fingerprints) if i != 2]
    for seat, peer in enumerate(table.peers):
        if seat == 2:
            continue
        assert re.search(rf"game stopped: abandoned: seat \d \(random, {table.fingerprints[2]}\)",
                         peer.out), peer.out  # fmt: skip
        assert_abandoned(verify_transcript(table.transcripts[seat]), table.fingerprints[2],
                         witnesses)  # fmt: skip
    # the grace runs from its last frame, the statements follow within a few ticks
    assert elapsed < grace + 4, elapsed


@pytest.mark.parametrize("victim", [0, 2], ids=["host", "joiner"])
def test_a_peer_killed_and_restarted_within_the_timeout_resumes(
    make_table: Callable[..., Table], victim: int
) -> None:
    table = make_table("moska", 4, timeout=8, pace=0.01)
    mid_game(table, victim)
    peer = table.peers[victim]
    peer.kill()
    time.sleep(0.3)
    peer.start()  # the very same command
    codes = table.finish(45)
    assert codes == [0, 0, 0, 0], table.output()
    resumed = re.search(r"resumed the game saved in .*: (\d+) moves so far", peer.out)
    assert resumed and int(resumed.group(1)) > 0, peer.out
    _assert_one_verified_game(table)


def test_a_joiner_stopped_after_the_table_filled_and_run_again_takes_its_seat(
    tmp_path: Path,
) -> None:
    """A joiner that stops (kill -9) after the host sealed the roster with it and before
    the start reached it has no saved game: run again, it joins anew, gets the same start
    (the roster lists the port its earlier run listened on), listens there again and plays.
    It was frozen (SIGSTOP) while the table filled, so that the host seated it for sure."""
    table = Table(tmp_path, "durak", 3, timeout=30)  # a restart under load fits
    try:
        table.start_host()
        first = table.start_joiner(1)
        port = first.wait_for(LISTEN_LINE, 30).group(1)
        first.kill(signal.SIGSTOP)
        table.start_joiner(2)
        table.peers[0].wait_for("all 3 players are here", 30)
        first.kill()
        first.start()  # the very same command
        codes = table.finish(90)
        assert codes == [0, 0, 0], table.output()
        assert f"listening on port {port} again, where the others look for it" in first.out
        assert "resumed" not in first.out
        _assert_one_verified_game(table)
    finally:
        table.kill_all()


def _closed_by_peer(sock: socket.socket, limit: float = 5.0) -> bool:
    sock.settimeout(limit)
    deadline = time.monotonic() + limit
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        return False
    return False


def test_garbage_and_an_oversized_frame_close_only_that_connection(
    make_table: Callable[..., Table],
) -> None:
    table = make_table("moska", 4, pace=0.01)
    mid_game(table, 1, 30_000)
    joiner_port = int(table.peers[1].wait_for(LISTEN_LINE).group(1))
    junk = [b"\x00\x00\x00\x05hello", struct.pack(">I", MAX_FRAME + 1) + b"x" * 100]
    for port in (table.port, joiner_port):
        for data in junk:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
                sock.sendall(data)
                assert _closed_by_peer(sock), f"port {port} kept a connection after {data!r}"
    codes = table.finish(45)
    assert codes == [0, 0, 0, 0], table.output()
    _assert_one_verified_game(table)
    for peer in table.peers[:2]:
        assert "closed a connection from 127.0.0.1" in peer.err, peer.err
        assert "over the limit" in peer.err, peer.err


def test_ctrl_c_leaves_with_a_signed_message(make_table: Callable[..., Table]) -> None:
    table = make_table("moska", 3, pace=0.02, timeout=10)
    mid_game(table, 1, 30_000)
    table.peers[1].kill(signal.SIGINT)
    codes = table.finish(15)
    assert codes == [1, 130, 1], table.output()
    assert "you left the table" in table.peers[1].out
    for i in (0, 2):
        assert re.search(rf"game stopped: left: seat \d \(random, {table.fingerprints[1]}\)",
                         table.peers[i].out), table.peers[i].out  # fmt: skip
