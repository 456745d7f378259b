"""``moska replay`` shows a transcript only if ``moska verify`` accepts it (issue 13 item 3).

A file with one byte changed (in the unsigned header, a middle frame, the last frame, a length
prefix) or a frame dropped is refused with exactly the fault ``verify`` prints, one ``error:``
line and exit 1; ``--unverified`` shows it up to the fault with a banner on every screen.
"""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.cli import app
from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.simulate import Network, make_peers, save_transcripts
from moska_p2p.protocol.transcript import read_transcript, verify_transcript, write_transcript
from moska_p2p.table.simulate import run_game
from moska_p2p.ui.replay import NotVerified, Replay, load_replay

runner = CliRunner()


@pytest.fixture(scope="module")
def whole(transcript: Path) -> Replay:
    return load_replay(transcript)


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A whole two-player Durak game (the quickest real transcript, about 0.5 s)."""
    config = TableConfig("durak", 2, b"\x02" * 32)
    identities = [Identity.from_seed(bytes([i + 1]) * 32) for i in range(2)]
    net = Network(make_peers(config, identities, seed=4, names=["ann", "bo"]))
    result = run_game(net, [RandomBot(1), RandomBot(2)])
    assert result.finished
    path = save_transcripts(result, tmp_path_factory.mktemp("transcripts"))[0]
    assert verify_transcript(path).valid
    return path


def _flipped(path: Path, out: Path, where: str) -> Path:
    data = bytearray(path.read_bytes())
    (header,) = struct.unpack(">I", data[:4])
    _, _, _, frames = read_transcript(path)
    middle = 4 + header + sum(len(f) for f in frames[: len(frames) // 2]) + 30
    at = {
        "header": 4 + header // 2,
        "header-length": 2,
        "middle frame": middle,
        "a frame's length": 4 + header + 1,
        "last frame": len(data) - 1,
    }[where]
    data[at] ^= 0x10
    out.write_bytes(bytes(data))
    return out


def _dropped(path: Path, out: Path, index: int) -> Path:
    owner, config, roster, frames = read_transcript(path)
    write_transcript(out, owner, config, roster, frames[:index] + frames[index + 1 :])
    return out


def _refused_as_verify_says(file: Path) -> str:
    """Check that replay refuses ``file`` with the fault ``moska verify`` prints; that fault."""
    verify = runner.invoke(app, ["verify", str(file)])
    assert verify.exit_code == 1 and verify.stderr.startswith(f"INVALID: {file.name}: ")
    fault = verify.stderr.strip().removeprefix(f"INVALID: {file.name}: ")
    run = runner.invoke(app, ["replay", str(file)])
    assert run.exit_code == 1, run.output
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {file}: {fault}; "), run.stderr
    assert "move " not in run.stdout and "Traceback" not in run.output
    return fault


@pytest.mark.parametrize(
    "where", ["header", "header-length", "middle frame", "a frame's length", "last frame"]
)
def test_one_byte_changed_is_refused_with_verifys_fault(
    transcript: Path, tmp_path: Path, where: str
) -> None:
    _refused_as_verify_says(_flipped(transcript, tmp_path / "flipped.moska", where))


@pytest.mark.parametrize("which", ["second", "middle", "last"])
def test_a_dropped_frame_is_refused_with_verifys_fault(
    transcript: Path, tmp_path: Path, which: str
) -> None:
    frames = len(read_transcript(transcript)[3])
    index = {"second": 1, "middle": frames // 2, "last": frames - 1}[which]
    _refused_as_verify_says(_dropped(transcript, tmp_path / "dropped.moska", index))


def test_a_transcript_that_verifies_is_shown_without_a_banner(
    transcript: Path, whole: Replay
) -> None:
    run = runner.invoke(app, ["replay", str(transcript)])
    assert run.exit_code == 0, run.output
    assert "NOT VERIFIED" not in run.stdout and "game over, lost:" in run.stdout
    assert whole.warning == "" and whole.states[-1].is_over


def test_unverified_shows_it_up_to_the_fault_with_a_banner_on_every_screen(
    transcript: Path, whole: Replay, tmp_path: Path
) -> None:
    bad = _flipped(transcript, tmp_path / "flipped.moska", "middle frame")
    fault = verify_transcript(bad).fault
    assert fault
    shown = load_replay(bad, unverified=True)
    assert shown.warning == f"NOT VERIFIED: {fault}"
    assert 0 < len(shown.moves) < len(whole.moves)
    assert shown.moves == whole.moves[: len(shown.moves)]  # what came before the fault
    run = runner.invoke(app, ["replay", "--unverified", str(bad)])
    assert run.exit_code == 0, run.output
    screens = [s for s in run.stdout.split("\n\n") if s.strip()]
    assert len(screens) == len(shown.moves) + 1
    for screen in screens:
        assert screen.lstrip().startswith(f"!! NOT VERIFIED: {fault} !!"), screen


def test_unverified_with_nothing_before_the_fault_still_names_it(
    transcript: Path, tmp_path: Path
) -> None:
    bad = _dropped(transcript, tmp_path / "dropped.moska", 1)
    with pytest.raises(NotVerified, match="moska verify rejects"):
        load_replay(bad)
    run = runner.invoke(app, ["replay", "--unverified", str(bad)])
    assert run.exit_code == 1
    assert "frame 1 is out of order" in run.stderr and len(run.stderr.splitlines()) == 1
