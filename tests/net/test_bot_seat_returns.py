"""A bot seat is a stable identity: ``moska join HOST:PORT --bot NAME``, with no ``--identity``,
killed mid-game and run again as the very same command, comes back into its seat (its key
is kept in the data folder under the seat's name); and a refusal a flag can fix names it.

Real processes on 127.0.0.1; every wait is bounded and whatever still runs is killed."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from net_harness import JOIN_LINE, Peer

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol.transcript import verify_transcript

SEATS = re.compile(r"^seats: ", re.M)


@pytest.fixture
def peers() -> Iterator[list[Peer]]:
    started: list[Peer] = []
    try:
        yield started
    finally:
        for peer in started:
            peer.kill()


def _host(folder: Path, players: int, peers: list[Peer], *extra: str) -> int:
    key = folder / "host.pem"
    Identity.generate().save(key)
    args = [
        "host", "--players", str(players), "--port", "0", "--bind", "127.0.0.1", "-q",
        "--bot", "greedy", "--identity", str(key), "--transcript", str(folder / "host.moska"),
        "--wait", "30", *extra,
    ]  # fmt: skip
    peers.append(Peer("host", args, folder))
    return int(peers[0].wait_for(JOIN_LINE).group(1))


def _grown(folder: Path, size: int, timeout: float) -> Path:
    """The one transcript in ``folder`` once it has grown past ``size`` bytes (the deal's
    proofs, into the play)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list(folder.glob("*.moska"))
        if found and found[0].stat().st_size >= size:
            return found[0]
        time.sleep(0.02)
    raise AssertionError(f"no transcript past {size} bytes in {folder}: {list(folder.iterdir())}")


def test_a_bot_seat_with_no_identity_comes_back_by_the_same_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, peers: list[Peer]
) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("XDG_DATA_HOME", str(data))  # the children's data folder
    port = _host(tmp_path, 3, peers, "--timeout", "60", "--pace", "0.02")
    other = tmp_path / "other.pem"
    Identity.generate().save(other)
    peers.append(Peer("other", [
        "join", f"127.0.0.1:{port}", "--bot", "random", "--identity", str(other),
        "--transcript", str(tmp_path / "other.moska"), "--bind", "127.0.0.1", "-q",
    ], tmp_path))  # fmt: skip
    bare = ["join", f"127.0.0.1:{port}", "--bot", "random", "--bind", "127.0.0.1", "-q"]
    seat = Peer("bare", bare, tmp_path)  # the README's bot line: no --identity, no --transcript
    peers.append(seat)
    made = seat.wait_for(r"made a key for the bot seat 'random': (\S+) ")
    assert Path(made.group(1)) == data / "moska-p2p" / "bots" / "random.pem"
    for peer in peers:
        peer.wait_for(SEATS)
    games = data / "moska-p2p" / "games"
    transcript = _grown(games, 60_000, 30)
    assert "result:" not in seat.out, "the game ended before the kill"
    seat.kill()
    # the killed seat's own record is incomplete, not a forgery (verify's exit 3), and its
    # replay opens its own cards with the secret in its .resume
    cut = subprocess.run(
        [sys.executable, "-m", "moska_p2p", "verify", str(transcript)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert cut.returncode == 3, cut
    assert cut.stderr.startswith(f"incomplete: {transcript.name}: the writer stopped after frame")
    shown = subprocess.run(
        [sys.executable, "-m", "moska_p2p", "replay", str(transcript), "--no-color"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert shown.returncode == 0 and "!! INCOMPLETE: the writer stopped" in shown.stdout, shown
    assert "its own cards as it saw them" in shown.stdout
    seat.start()  # the very same command
    codes = [peer.finish(60) for peer in peers]
    output = "\n".join(f"--- {p.name}\n{p.out}\n{p.err}" for p in peers)
    assert codes == [0, 0, 0], output
    resumed = re.search(r"resumed the game saved in (\S+): (\d+) moves so far", seat.out)
    assert resumed and int(resumed.group(2)) > 0, output
    assert "made a key" not in seat.out, "the second run found the seat's key"
    report = verify_transcript(transcript)
    assert report.valid, report.fault
    assert not list(games.glob("*.resume")), "a finished game leaves no resume file"
    # its secret stays (0600), and with it the seat's own replay opens the cards it held
    assert transcript.with_name(transcript.name + ".secret").stat().st_mode & 0o077 == 0
    shown = subprocess.run(
        [sys.executable, "-m", "moska_p2p", "replay", str(transcript), "--no-color"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "who wrote this transcript): its own cards as it saw them" in shown.stdout


def test_a_late_bot_seat_is_told_which_flag_brings_a_seat_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, peers: list[Peer]
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    port = _host(tmp_path, 2, peers, "--pace", "0.2")
    bot = ["join", f"127.0.0.1:{port}", "--bot", "greedy", "--bind", "127.0.0.1", "-q"]
    peers.append(Peer("seated", bot, tmp_path))
    peers[0].wait_for(SEATS, 30)
    late = Peer("late", bot, tmp_path)  # a second seat named greedy: a key of its own
    peers.append(late)
    assert late.finish(30) == 1, late.out + late.err
    assert "refused: the game has started" in late.err, late.err
    assert "--identity FILE" in late.err and "--name" in late.err, late.err
    assert "greedy-2.pem" in late.out, late.out  # the first seat's key was held


def _saved_bob(tmp_path: Path) -> tuple[Path, Path, Path]:
    """Bob's key, and a saved game of his (transcript, resume file) at alice's table at
    127.0.0.1:9, with a timeout of 300 s."""
    from moska_p2p.net.persist import SavedGame
    from moska_p2p.net.wire import Entry
    from moska_p2p.protocol.config import TableConfig, lobby_id

    alice, bob = Identity.generate(), Identity.generate()
    key = tmp_path / "bob.pem"
    bob.save(key)
    config = TableConfig("moska", 2, bytes(32), {}, 300.0)
    roster = (
        Entry.sign(alice, lobby_id(config), "alice", "127.0.0.1", 9),
        Entry.sign(bob, lobby_id(config), "bob", "", 7001),
    )
    transcript = tmp_path / "bob.moska"
    transcript.write_bytes(b"")
    saved = SavedGame(transcript, bytes(range(32)), config, roster, 1, "bob", ("127.0.0.1", 9))
    saved.save()
    return key, transcript, saved.state_path


def _join(key: Path, transcript: Path, port: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", "join", f"127.0.0.1:{port}", "--bot", "random",
         "--identity", str(key), "--transcript", str(transcript), "--timeout", "1",
         "--bind", "127.0.0.1", "--wait", "2"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False,
    )  # fmt: skip


def test_a_saved_game_nobody_waits_for_leaves_no_resume_file(tmp_path: Path) -> None:
    """A seat whose game the others gave up (older than its grace and its timeout) can never
    come back to it: the next run of its command starts afresh and leaves no ``.resume`` (nor a
    ``.resume.stale``) behind; the game's secret stays, for its replay."""
    key, transcript, state = _saved_bob(tmp_path)
    old = time.time() - 3600
    for path in (transcript, state):
        os.utime(path, (old, old))
    done = _join(key, transcript, 9)
    assert "older than its grace and its timeout" in done.stdout, done.stdout + done.stderr
    assert not list(tmp_path.glob("*.resume*")), list(tmp_path.iterdir())
    assert transcript.with_name("bob.moska.secret").exists()


def test_a_join_that_names_another_table_does_not_resume_a_saved_game(tmp_path: Path) -> None:
    """A seat comes back by the command that played it; the same bot joining another table
    meanwhile joins that table, it does not resume the saved game of the first."""
    key, transcript, state = _saved_bob(tmp_path)
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    done = _join(key, transcript, port)
    assert "of another table than this command names: not resuming it" in done.stdout, done
    assert f"could not join 127.0.0.1:{port}" in done.stderr, done.stderr
    assert state.exists()  # still there for the command that played it
