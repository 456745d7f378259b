"""Replays of arena saved games and of peer transcripts, in the table view."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from moska_p2p.bots.builtin import GreedyBot, RandomBot
from moska_p2p.crypto.identity import Identity
from moska_p2p.engine import new_game
from moska_p2p.net.persist import keep_secret
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.session import PeerSession
from moska_p2p.protocol.simulate import Network, make_peers, save_transcripts
from moska_p2p.protocol.transcript import read_transcript, write_transcript
from moska_p2p.table.local import play_game
from moska_p2p.table.simulate import run_game
from moska_p2p.ui.render import strip_ansi
from moska_p2p.ui.replay import ReplayError, load_replay, run_replay


@pytest.fixture(scope="module")
def saved_game(tmp_path_factory: pytest.TempPathFactory) -> Path:
    game = new_game("mustamaija", players=3, seed=5)
    record = play_game(game, [GreedyBot(1), RandomBot(2), GreedyBot(3)], seed=5)
    path = tmp_path_factory.mktemp("arena") / "game-000000.json"
    path.write_text(json.dumps(record.to_json()))
    return path


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    config = TableConfig("durak", 3, b"\x01" * 32)
    identities = [Identity.generate() for _ in range(3)]
    net = Network(make_peers(config, identities, seed=3, names=["ann", "bo", "cy"]))
    result = run_game(net, [RandomBot(1), RandomBot(2), RandomBot(3)])
    assert result.finished
    return save_transcripts(result, tmp_path_factory.mktemp("transcripts"))


def test_an_arena_game_replays_to_its_result(saved_game: Path) -> None:
    replay = load_replay(saved_game)
    record = json.loads(saved_game.read_text())
    assert replay.full and len(replay.states) == len(record["moves"]) + 1
    assert replay.states[-1].is_over and replay.losers == record["losers"]
    assert replay.names == ["greedy 0", "random 1", "greedy 2"]


def test_not_on_a_terminal_every_step_is_printed(saved_game: Path) -> None:
    replay = load_replay(saved_game)
    out = io.StringIO()
    run_replay(replay, seat=1, interactive=False, out=out, color=False)
    text = out.getvalue()
    assert "the deal (dealer:" in text
    for number in range(1, len(replay.moves) + 1):
        assert f"move {number} of {len(replay.moves)}:" in text
    assert "game over, lost:" in text and "LOST" in text
    assert "\x1b[" not in text


def test_stepping_forward_back_and_to_a_move(saved_game: Path) -> None:
    replay = load_replay(saved_game)
    answers = iter(["", "", "b", "7", "zz", "q"])
    out = io.StringIO()
    run_replay(replay, interactive=True, out=out, color=False, read=lambda _: next(answers))
    screens = [strip_ansi(s) for s in out.getvalue().split("\x1b[H\x1b[2J")[1:]]
    said = [
        next(line for line in s.split("\n") if line.startswith(("move", "the deal")))
        for s in screens
    ]
    assert said[0].startswith("the deal")
    assert said[1].startswith("move 1 of") and said[2].startswith("move 2 of")
    assert said[3].startswith("move 1 of") and said[4].startswith("move 7 of")
    assert '"zz"?' in screens[5]


def test_open_hands_show_every_seat(saved_game: Path) -> None:
    replay = load_replay(saved_game)
    out = io.StringIO()
    answers = iter(["q"])
    run_replay(
        replay,
        seat=0,
        open_hands=True,
        interactive=True,
        out=out,
        color=False,
        read=lambda _: next(answers),
    )
    text = out.getvalue()
    for seat in (1, 2):
        for card in replay.states[0].hand(seat):
            assert card[:-1] + "♣♦♥♠"["CDHS".index(card[-1])] in text


def test_a_transcript_replays_public_cards_only_to_its_end(transcripts: list[Path]) -> None:
    """Protocol v2 reveals no secret at the end: a replay shows what the observer saw,
    to the game's last state, and never a card nobody showed."""
    replay = load_replay(transcripts[1])
    assert not replay.full
    assert replay.names[replay.owner] == "bo"  # the writer's seat by default
    assert set(replay.names) == {"ann", "bo", "cy"}
    _, config, roster, frames = read_transcript(transcripts[1])
    observer = PeerSession(None, config, roster)
    for frame in frames:
        observer.receive(frame)
    assert replay.states[-1].state_hash() == observer.final_hash
    with pytest.raises(ReplayError, match="--open is not possible"):
        run_replay(replay, open_hands=True, interactive=False, out=io.StringIO())


def test_a_forged_transcript_is_refused(transcripts: list[Path], tmp_path: Path) -> None:
    owner, config, roster, frames = read_transcript(transcripts[0])
    forged = list(frames)
    bad = bytearray(forged[len(forged) // 2])
    bad[-1] ^= 1  # the signature's last byte
    forged[len(forged) // 2] = bytes(bad)
    path = tmp_path / "forged.moska"
    write_transcript(path, owner, config, roster, forged)
    with pytest.raises(ReplayError, match="forged signature"):
        load_replay(path)


def test_a_transcript_cut_before_its_audit_shows_public_cards_only(
    transcripts: list[Path], tmp_path: Path
) -> None:
    owner, config, roster, frames = read_transcript(transcripts[0])
    cut = tmp_path / "cut.moska"
    write_transcript(cut, owner, config, roster, frames[: len(frames) * 2 // 3])
    replay = load_replay(cut, unverified=True)  # a cut file does not verify
    assert not replay.full and len(replay.moves) > 0
    with pytest.raises(ReplayError, match="--open is not possible"):
        run_replay(replay, open_hands=True, interactive=False, out=io.StringIO())
    out = io.StringIO()
    run_replay(replay, interactive=False, out=out, color=False)
    assert "not seen yet" in out.getvalue()


def test_moska_replay_command(saved_game: Path, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "moska_p2p", "replay", str(saved_game), "--open", "--seat", "2"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, run.stderr
    assert "game over, lost:" in run.stdout and "\x1b[" not in run.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    run = subprocess.run(
        [sys.executable, "-m", "moska_p2p", "replay", str(bad)],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 2 and "not a saved game" in run.stderr


def test_the_writers_replay_opens_its_own_cards_with_its_secret(tmp_path: Path) -> None:
    """A transcript never opens its writer's private draws (only its own key, never sent,
    does); the per-game secret its node keeps beside it (GAME.moska.secret) does, so the
    writer's replay shows its hand as it saw it, and says whose view it is."""
    config = TableConfig("durak", 3, b"\x02" * 32)
    identities = [Identity.generate() for _ in range(3)]
    net = Network(make_peers(config, identities, seed=4, names=["ann", "bo", "cy"]))
    result = run_game(net, [RandomBot(1), RandomBot(2), RandomBot(3)])
    assert result.finished
    paths = save_transcripts(result, tmp_path)
    writer = identities[1].public_bytes
    path = next(p for p in paths if read_transcript(p)[0] == writer)
    secret = hashlib.sha256(b"4/1").digest()  # make_peers' seeded per-game secret of peer 1
    session = next(s for s in result.sessions if s.me == writer)
    seat = session.my_seat

    public = load_replay(path)
    assert public.opened is None and public.states[0].hidden[seat]
    replay = load_replay(path, secrets=[hashlib.sha256(b"4/2").digest(), secret])
    assert replay.opened == seat
    assert all(not state.hidden[seat] for state in replay.states)  # every card, by its move
    assert replay.states[-1].hand(seat) == session.game.hand(seat)
    assert replay.states[-1].state_hash() == public.states[-1].state_hash()  # the same game

    command = [sys.executable, "-m", "moska_p2p", "replay", str(path), "--no-color"]
    run = subprocess.run(command, capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)  # fmt: skip
    assert run.returncode == 0, run.stderr
    first = f"the view of seat {seat} (bo, who wrote this transcript): public cards only"
    said = [line for line in run.stdout.splitlines() if line.startswith("the view of ")]
    assert len(said) == len(public.states)  # on every screen
    assert said[0].startswith(first) and f"{path.name}.secret" in said[0]
    keep_secret(path, secret)
    assert path.with_name(path.name + ".secret").stat().st_mode & 0o077 == 0
    run = subprocess.run(command, capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert (
        f"\nthe view of seat {seat} (bo, who wrote this transcript): its own cards as it saw them\n"
        in run.stdout
    )
    assert "not seen yet" not in run.stdout
    other = (seat + 1) % 3
    run = subprocess.run([*command, "--seat", str(other)], capture_output=True, text=True,
                         timeout=60, stdin=subprocess.DEVNULL)  # fmt: skip
    assert f"\nthe view of seat {other} ({replay.names[other]}): public" in run.stdout
