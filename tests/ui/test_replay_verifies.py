"""``moska replay`` shows a transcript only if ``moska verify`` accepts it.

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


@pytest.mark.parametrize("which", ["second", "middle"])
def test_a_dropped_frame_is_refused_with_verifys_fault(
    transcript: Path, tmp_path: Path, which: str
) -> None:
    frames = len(read_transcript(transcript)[3])
    index = {"second": 1, "middle": frames // 2}[which]
    _refused_as_verify_says(_dropped(transcript, tmp_path / "dropped.moska", index))


def _cut(path: Path, out: Path, how: str) -> tuple[Path, int]:
    """A copy of ``path`` as a writer that stopped leaves it; the number of whole frames."""
    owner, config, roster, frames = read_transcript(path)
    keep = {"last frame": len(frames) - 1, "half": len(frames) // 2, "mid-write": 40}[how]
    write_transcript(out, owner, config, roster, frames[:keep])
    if how == "mid-write":  # the next frame's length and a part of it: a write cut short
        out.write_bytes(out.read_bytes() + frames[keep][: len(frames[keep]) // 3])
    return out, keep


@pytest.mark.parametrize("how", ["last frame", "half", "mid-write"])
def test_a_cut_transcript_is_incomplete_not_a_forgery(
    transcript: Path, tmp_path: Path, how: str
) -> None:
    """A crash or a cut stops a record where a forgery would make one frame fail: verify
    says which (exit 3, not 1), and the replay shows the honest part with a banner."""
    cut, whole = _cut(transcript, tmp_path / "cut.moska", how)
    stopped = f"the writer stopped after frame {whole - 1} (a crash or a cut)"
    verify = runner.invoke(app, ["verify", str(cut)])
    assert verify.exit_code == 3, verify.output
    assert verify.stderr.startswith(f"incomplete: cut.moska: {stopped}"), verify.stderr
    assert "INVALID" not in verify.output
    report = verify_transcript(cut)
    assert not report.valid and report.status == "incomplete"
    assert report.fault and report.fault.startswith(f"incomplete: {stopped}")
    as_json = runner.invoke(app, ["verify", "--json", str(cut)])
    assert as_json.exit_code == 3 and '"status": "incomplete"' in as_json.stdout
    run = runner.invoke(app, ["replay", str(cut)])
    assert run.exit_code == 0, run.output
    screens = [s for s in run.stdout.split("\n\n") if s.strip()]
    assert all(s.lstrip().startswith(f"!! INCOMPLETE: {stopped} !!") for s in screens)


@pytest.mark.parametrize("content", [b"", b"hello, world\n", bytes(range(256)) * 40],
                         ids=["empty", "text", "binary"])  # fmt: skip
def test_a_file_that_is_no_transcript_is_told_apart(tmp_path: Path, content: bytes) -> None:
    other = tmp_path / "notes.moska"
    other.write_bytes(content)
    verify = runner.invoke(app, ["verify", str(other)])
    assert verify.exit_code == 4, verify.output
    assert verify.stderr.startswith("notes.moska: not a moska transcript"), verify.stderr
    assert verify_transcript(other).status == "not-a-transcript"


def test_several_files_exit_with_the_gravest(transcript: Path, tmp_path: Path) -> None:
    """A forgery outweighs a file that is no transcript, which outweighs a cut one."""
    cut, _ = _cut(transcript, tmp_path / "cut.moska", "half")
    other = tmp_path / "other.moska"
    other.write_bytes(b"no transcript")
    forged = _flipped(transcript, tmp_path / "forged.moska", "middle frame")
    assert runner.invoke(app, ["verify", str(transcript), str(cut)]).exit_code == 3
    assert runner.invoke(app, ["verify", str(cut), str(other)]).exit_code == 4
    assert runner.invoke(app, ["verify", str(other), str(forged), str(cut)]).exit_code == 1


def test_verify_of_a_missing_folder_says_so(tmp_path: Path) -> None:
    run = runner.invoke(app, ["verify", str(tmp_path / "out") + "/"])
    assert run.exit_code == 2
    assert f"nothing at {tmp_path / 'out'}: no such file or folder" in run.stderr


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
