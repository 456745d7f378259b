"""moska simulate / verify / keygen, and transcripts that must be rejected when altered."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moska_p2p.cli import app

runner = CliRunner()


@pytest.fixture(scope="module")
def transcripts(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("transcripts")
    result = runner.invoke(
        app,
        [
            "simulate",
            "--preset",
            "durak",
            "--players",
            "3",
            "--bots",
            "greedy,random,shedder",
            "--seed",
            "5",
            "--transcripts",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "result:" in result.output
    paths = sorted(out.glob("*.moska"))
    assert len(paths) == 3
    return paths


def _verify(path: Path) -> dict[str, object]:
    result = runner.invoke(app, ["verify", "--json", str(path)])
    data = json.loads(result.stdout.strip().splitlines()[-1])
    assert (result.exit_code == 0) == data["valid"]
    return data


def test_every_transcript_verifies_with_one_final_state(transcripts: list[Path]) -> None:
    reports = [_verify(p) for p in transcripts]
    assert all(r["valid"] for r in reports), reports
    assert len({r["final_state_hash"] for r in reports}) == 1
    assert len({r["game_id"] for r in reports}) == 1
    assert len({tuple(r["losers"]) for r in reports}) == 1  # type: ignore[arg-type]
    text = runner.invoke(app, ["verify", str(transcripts[0])])
    assert text.exit_code == 0 and text.output.startswith("valid: ")


def _records(data: bytes) -> list[bytes]:
    out, at = [], 0
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        out.append(data[at : at + 4 + length])
        at += 4 + length
    return out


def test_a_changed_byte_is_rejected(transcripts: list[Path], tmp_path: Path) -> None:
    data = transcripts[0].read_bytes()
    for offset in (200, len(data) // 2, len(data) - 10):
        bad = bytearray(data)
        bad[offset] ^= 0x01
        path = tmp_path / f"byte{offset}.moska"
        path.write_bytes(bytes(bad))
        report = _verify(path)
        assert report["valid"] is False and report["fault"]


def test_a_dropped_frame_is_rejected(transcripts: list[Path], tmp_path: Path) -> None:
    records = _records(transcripts[1].read_bytes())
    for index in (3, len(records) // 2, len(records) - 2):
        path = tmp_path / f"drop{index}.moska"
        path.write_bytes(b"".join(records[:index] + records[index + 1 :]))
        assert _verify(path)["valid"] is False


def test_two_swapped_frames_are_rejected(transcripts: list[Path], tmp_path: Path) -> None:
    records = _records(transcripts[2].read_bytes())
    for index in (5, len(records) // 3, len(records) // 2, len(records) - 3):
        swapped = list(records)
        swapped[index], swapped[index + 1] = swapped[index + 1], swapped[index]
        if swapped == records:
            continue
        path = tmp_path / f"swap{index}.moska"
        path.write_bytes(b"".join(swapped))
        assert _verify(path)["valid"] is False, index


def test_verify_refuses_a_missing_or_foreign_file(tmp_path: Path) -> None:
    assert runner.invoke(app, ["verify", str(tmp_path / "nope")]).exit_code == 2
    junk = tmp_path / "junk.moska"
    junk.write_bytes(b"hello world")
    assert _verify(junk)["valid"] is False


def test_keygen_creates_and_keeps_a_key(tmp_path: Path) -> None:
    path = tmp_path / "id.pem"
    first = runner.invoke(app, ["keygen", "--identity", str(path)])
    assert first.exit_code == 0 and "created" in first.output
    again = runner.invoke(app, ["keygen", "--identity", str(path)])
    assert again.exit_code == 0 and "already" in again.output
    fingerprint = first.output.split("fingerprint: ")[1][:9]
    assert fingerprint in again.output


def test_simulate_refuses_bad_input() -> None:
    assert runner.invoke(app, ["simulate", "--preset", "nope"]).exit_code == 2
    two_bots = ["simulate", "--players", "3", "--bots", "random,greedy"]  # one bot fills all
    assert runner.invoke(app, two_bots).exit_code == 2
