"""What a peer keeps on disk to resume after a crash (moska_p2p/net/persist.py)."""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

import pytest

from moska_p2p.crypto.identity import Identity
from moska_p2p.net.persist import (
    SavedGame,
    SaveError,
    TranscriptFile,
    find_saved,
    load_saved,
    read_frames,
)
from moska_p2p.net.wire import Entry
from moska_p2p.protocol.config import TableConfig, lobby_id
from moska_p2p.protocol.frames import signed_frame
from moska_p2p.protocol.transcript import read_transcript

ALICE = Identity.from_seed(bytes([1]) * 32)
BOB = Identity.from_seed(bytes([2]) * 32)
CONFIG = TableConfig("moska", 2, bytes(32), {"deck_kill": "on"}, 5.0)
ROSTER = (
    Entry.sign(ALICE, lobby_id(CONFIG), "alice", "", 7000),
    Entry.sign(BOB, lobby_id(CONFIG), "bob", "192.168.1.7", 7001),
)


def test_a_saved_game_round_trips_is_private_and_goes_stale(tmp_path: Path) -> None:
    transcript = tmp_path / "game.moska"
    saved = SavedGame(transcript, bytes(range(32)), CONFIG, ROSTER, 1, "bob", ("10.0.0.2", 7000))
    saved.save()
    assert stat.S_IMODE(saved.state_path.stat().st_mode) == 0o600
    assert load_saved(saved.state_path) == saved
    assert find_saved(transcript, BOB.public_bytes) == saved.state_path
    assert saved.fresh()
    within = time.time() - CONFIG.grace - 2  # past twice the timeout, within grace + timeout
    os.utime(saved.state_path, (within, within))
    assert saved.fresh()
    past = time.time() - CONFIG.grace - CONFIG.timeout - 5  # the others have signed it gone
    os.utime(saved.state_path, (past, past))
    assert not saved.fresh()
    aside = saved.set_aside()
    assert aside.exists() and find_saved(transcript, BOB.public_bytes) is None


def test_a_damaged_saved_game_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "game.moska.resume"
    path.write_bytes(b"\x81\xa3abc\x01")
    with pytest.raises(SaveError):
        load_saved(path)


def test_the_transcript_grows_by_appends_and_forgives_a_torn_last_write(tmp_path: Path) -> None:
    path = tmp_path / "game.moska"
    frames = [signed_frame(ALICE, "move", {"n": i}) for i in range(3)]
    keys = [e.key for e in ROSTER]
    file = TranscriptFile(path, ALICE.public_bytes, CONFIG, keys)
    file.append(frames[:2])
    file.append(frames[2:])
    file.close()
    assert read_transcript(path) == (ALICE.public_bytes, CONFIG, sorted(keys), frames)
    with open(path, "ab") as out:
        out.write(frames[0][:9])  # a write cut short by SIGKILL
    assert read_frames(path, ALICE.public_bytes) == frames
    with pytest.raises(SaveError):
        read_frames(path, BOB.public_bytes)  # someone else's transcript
    rewritten = TranscriptFile(path, ALICE.public_bytes, CONFIG, keys, frames[:1])
    rewritten.close()
    assert read_frames(path, ALICE.public_bytes) == frames[:1]


def test_the_same_command_finds_a_session_games_saved_state(tmp_path: Path) -> None:
    """``--transcript club/bob.moska`` in a session saves game 3 as
    ``bob-g3.moska.resume``; a re-run of the command with the same ``--transcript`` finds it
    (the newest when several are left)."""
    named = tmp_path / "bob.moska"
    older = SavedGame(tmp_path / "bob-g2.moska", bytes(32), CONFIG, ROSTER, 1, "bob", None)
    newer = SavedGame(tmp_path / "bob-g3.moska", bytes(32), CONFIG, ROSTER, 1, "bob", None)
    older.save()
    past = time.time() - 60
    os.utime(older.state_path, (past, past))
    newer.save()
    (tmp_path / "bobby-g1.moska.resume").write_bytes(b"another name's")
    assert find_saved(named, BOB.public_bytes) == newer.state_path
    assert find_saved(tmp_path / "carol.moska", BOB.public_bytes) is None
