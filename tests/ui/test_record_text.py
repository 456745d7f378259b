"""The text game record: ``moska export`` writes it, ``moska replay`` reads
it back to the same states; a malformed record is one clear error line (docs/RECORD.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from moska_p2p.bots.builtin import GreedyBot, RandomBot
from moska_p2p.cli import app
from moska_p2p.crypto.identity import Identity
from moska_p2p.engine import new_game
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.simulate import Network, make_peers, save_transcripts
from moska_p2p.protocol.transcript import read_transcript, verify_transcript, write_transcript
from moska_p2p.table.local import play_game
from moska_p2p.table.simulate import run_game
from moska_p2p.ui.record_text import FORMAT, RecordError, parse_record, record_text
from moska_p2p.ui.replay import Replay, ReplayError, load_replay

runner = CliRunner()


@pytest.fixture(scope="module")
def arena_record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    game = new_game("moska", players=3, seed=5, deck_kill="on")
    record = play_game(game, [GreedyBot(1), RandomBot(2), GreedyBot(3)], seed=5)
    path = tmp_path_factory.mktemp("arena") / "game-000000.json"
    path.write_text(json.dumps(record.to_json()))
    return path


def _transcript(directory: Path, preset: str, players: int) -> Path:
    config = TableConfig(preset, players, b"\x03" * 32)
    identities = [Identity.from_seed(bytes([i + 7]) * 32) for i in range(players)]
    names = ["ann", "bo", "cy"][:players]
    net = Network(make_peers(config, identities, seed=6, names=names))
    result = run_game(net, [RandomBot(i + 1) for i in range(players)])
    assert result.finished
    return save_transcripts(result, directory)[1]  # seat 1's file: the writer is not seat 0


@pytest.fixture(scope="module", params=["durak", "mustamaija"])
def exported(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, Replay]:
    """A transcript (Durak's first game opens on the lowest trump shown, D3; Mustamaija
    buries spades turned for the trump, MM2), its export and its own replay."""
    preset = str(request.param)
    folder = tmp_path_factory.mktemp(preset)
    source = _transcript(folder, preset, 2)
    return source, _export(source, folder / "game.txt"), load_replay(source)


def _same_states(a: Replay, b: Replay) -> None:
    assert a.moves == b.moves and a.names == b.names and a.preset == b.preset
    assert [g.state_hash() for g in a.states] == [g.state_hash() for g in b.states]
    assert [g.face for g in a.states] == [g.face for g in b.states]
    for x, y in zip(a.states, b.states, strict=True):
        assert [x.hands[s] for s in range(x.n)] == [y.hands[s] for s in range(y.n)]


def _export(source: Path, out: Path) -> Path:
    run = runner.invoke(app, ["export", str(source), "-o", str(out)])
    assert run.exit_code == 0, run.output
    return out


def test_an_arena_record_round_trips_to_the_same_states(
    arena_record: Path, tmp_path: Path
) -> None:
    text_path = _export(arena_record, tmp_path / "game.txt")
    text = text_path.read_text()
    lines = text.splitlines()
    assert lines[0] == f'[Format "{FORMAT}"]' and '[Preset "moska"]' in lines
    assert any(line.startswith('[Options "') and "deck_kill=on" in line for line in lines)
    assert '[Seat1 "random 1"]' in lines and any(line.startswith("[Deck ") for line in lines)
    assert any(line.startswith('[Date "') for line in lines)
    assert "1. seat " in text
    original, back = load_replay(arena_record), load_replay(text_path)
    _same_states(original, back)
    assert back.full and back.warning == "" and back.losers == original.losers
    assert f'[Result "lost: seat {original.losers[0]}"]' in lines
    # Every move line is the rules' notation, the very text Game.play accepts.
    assert [line.split(": ", 1)[1] for line in lines if ". seat " in line] == [
        text for _, text in original.moves
    ]
    # The same screens as the JSON record, and an export of the export is the same text.
    shown = runner.invoke(app, ["replay", "--open", str(arena_record)]).stdout
    assert runner.invoke(app, ["replay", "--open", str(text_path)]).stdout == shown
    assert record_text(back) == text


def test_a_transcript_round_trips_to_the_same_public_states(
    exported: tuple[Path, Path, Replay],
) -> None:
    source, text_path, original = exported
    text = text_path.read_text()
    header = dict(
        line[1:-1].split(" ", 1) for line in text.splitlines() if line.startswith("[")
    )
    report = verify_transcript(source)
    assert header["Table"] == f'"{report.game_id}"'
    assert header["Writer"].startswith('"seat 1 (') and "Fingerprint0" in header
    assert header["Verified"].startswith('"no: a text copy without the signatures')
    if original.preset == "durak":
        assert "{lowest trump at " in text  # D3, as the observer learnt it
    assert "{public: " in text and " at deck position " in text  # readable, not {faces 3=9C}
    back = load_replay(text_path)
    _same_states(original, back)
    assert not back.full and back.owner == original.owner == 1
    assert back.warning == f"UNVERIFIED TEXT COPY (no signatures) of transcript {source.name}"
    run = runner.invoke(app, ["replay", str(text_path)])
    assert run.exit_code == 0, run.output
    screens = [s for s in run.stdout.split("\n\n") if s.strip()]
    assert len(screens) == len(back.moves) + 1
    assert all(s.lstrip().startswith("!! UNVERIFIED TEXT COPY") for s in screens)


def test_a_transcript_that_does_not_verify_is_not_exported(
    exported: tuple[Path, Path, Replay], tmp_path: Path
) -> None:
    owner, config, roster, frames = read_transcript(exported[0])
    cut = tmp_path / "cut.moska"
    write_transcript(cut, owner, config, roster, frames[:-3])
    fault = verify_transcript(cut).fault
    assert fault
    out = tmp_path / "out.txt"
    run = runner.invoke(app, ["export", str(cut), "-o", str(out)])
    assert run.exit_code == 1 and fault in run.stderr and len(run.stderr.splitlines()) == 1
    assert not out.exists()
    # export has no --unverified: the error names the command that has it
    assert f"moska replay --unverified {cut}" in run.stderr, run.stderr
    assert "(--unverified" not in run.stderr


def _broken(text: str, how: str) -> str:
    lines = text.splitlines()
    moves = [i for i, line in enumerate(lines) if ". seat " in line]
    if how == "bad header":
        lines[1] = "[Preset durak]"
    elif how == "no format":
        lines[0] = '[Format "pgn"]'
    elif how == "unknown preset":
        lines[1] = '[Preset "chess"]'
    elif how == "illegal move":
        lines[moves[3]] = lines[moves[3]].split(": ")[0] + ": kill 2C 3C"
    elif how == "truncated line":
        lines = lines[: moves[-1] + 1]
        lines[-1] = lines[-1][: lines[-1].index(": ") + 4]
    elif how == "a move missing":
        del lines[moves[len(moves) // 2]]
    elif how == "cut short":
        lines = lines[: moves[len(moves) // 2]]
    elif how == "not a move":
        lines.insert(moves[2], "hello")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("how", "said"),
    [
        ("bad header", 'line 2: not a header [Name "value"]'),
        ("no format", "not a text record: its first header must be"),
        ("unknown preset", 'the headers do not describe a game: unknown preset "chess"'),
        ("illegal move", "move 4 (kill 2C 3C):"),
        ("truncated line", "is not a move"),
        ("a move missing", "where move"),
        ("cut short", "it is cut short or edited"),
        ("not a move", "not a move 'N. seat S: MOVE': hello"),
    ],
)
def test_a_malformed_record_is_one_clear_error(
    arena_record: Path, tmp_path: Path, how: str, said: str
) -> None:
    text = _export(arena_record, tmp_path / "good.txt").read_text()
    bad = tmp_path / "bad.txt"
    bad.write_text(_broken(text, how))
    with pytest.raises(ReplayError, match="^" + str(bad)):
        load_replay(bad)
    run = runner.invoke(app, ["replay", str(bad)])
    assert run.exit_code == 2, run.output
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {bad}: "), run.stderr
    assert said in lines[0], lines[0]


def test_a_malformed_transcript_copy_is_one_clear_error(
    exported: tuple[Path, Path, Replay],
) -> None:
    text = exported[1].read_text()
    line = next(line for line in text.splitlines() if line.startswith("{public: "))
    with pytest.raises(RecordError, match="is not a card and its deck position"):
        parse_record(text.replace(line, "{public: ZZ at deck position 3}", 1))
    with pytest.raises(RecordError, match="is not a card and its deck position"):
        parse_record(text.replace(line, "{faces 3=ZZ}", 1))
    with pytest.raises(RecordError, match="line"):
        parse_record(text.replace(line, "", 1))  # the card a move needs is not known


def test_a_record_in_the_first_terse_form_still_reads(exported: tuple[Path, Path, Replay]) -> None:
    """Records were first written with ``{faces 14=7H}`` and ``{lowest trump at 3}``: the
    reader takes both forms, to the same states."""
    text = exported[1].read_text()

    def terse(match: re.Match[str]) -> str:
        items = re.findall(r"(\S+) at deck position (\d+)", match.group(1))
        return "{faces " + " ".join(f"{pos}={card}" for card, pos in items) + "}"

    old = re.sub(r"\{public: (.*)\}", terse, text).replace("trump at deck position", "trump at")
    old = re.sub(r'\[Faces "(.*)"\]', lambda m: '[Faces "' + terse(m)[7:-1] + '"]', old)
    assert "{public" not in old and " at deck position " not in old
    again, now = parse_record(old), parse_record(text)
    assert [g.state_hash() for g in again.states] == [g.state_hash() for g in now.states]


def test_an_arena_record_whose_moves_do_not_replay_is_refused(
    arena_record: Path, tmp_path: Path
) -> None:
    record = json.loads(arena_record.read_text())
    record["moves"][2][1] = "take"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(record))
    with pytest.raises(ReplayError, match="move 3 \\(take\\) does not replay"):
        load_replay(bad)
    run = runner.invoke(app, ["export", str(bad)])
    assert run.exit_code == 2 and "does not replay" in run.stderr


def test_export_prints_to_stdout_and_refuses_to_overwrite_its_source(
    arena_record: Path,
) -> None:
    run = runner.invoke(app, ["export", str(arena_record)])
    assert run.exit_code == 0 and run.stdout.startswith(f'[Format "{FORMAT}"]')
    same = runner.invoke(app, ["export", str(arena_record), "-o", str(arena_record)])
    assert same.exit_code == 2 and "that is the game being exported" in same.stderr
    assert json.loads(arena_record.read_text())["preset"] == "moska"
