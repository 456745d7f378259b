"""Every game of an event exported as text records: each replays to the transcript's own
states, two tables' files of the same name stay two records, and a transcript that does not
verify is reported while the others are still written."""

from __future__ import annotations

from pathlib import Path

import pytest

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.simulate import Network, make_peers, save_transcripts
from moska_p2p.table.simulate import run_game
from moska_p2p.ui.event_export import export_games
from moska_p2p.ui.record_text import parse_record
from moska_p2p.ui.replay import load_replay


def _table_game(folder: Path, seed: int) -> Path:
    """A verified transcript of a 2-player game, as ``folder/game-g1.moska``."""
    config = TableConfig("durak", 2, bytes([seed]) * 32)
    identities = [Identity.from_seed(bytes([seed + i]) * 32) for i in range(2)]
    net = Network(make_peers(config, identities, seed=seed, names=["ann", "bo"]))
    result = run_game(net, [RandomBot(seed), RandomBot(seed + 1)])
    assert result.finished
    saved = save_transcripts(result, folder / "saved")[0]
    target = folder / "game-g1.moska"
    saved.rename(target)
    return target


@pytest.fixture
def event_folder(tmp_path: Path) -> list[Path]:
    return [_table_game(tmp_path / "round-1" / f"table-{n}", 10 + 5 * n) for n in (1, 2, 3)]


def test_every_game_of_an_event_is_exported_and_replays_the_same(
    event_folder: list[Path], tmp_path: Path
) -> None:
    tampered = event_folder[2]
    data = bytearray(tampered.read_bytes())
    data[len(data) // 2] ^= 0x01
    tampered.write_bytes(bytes(data))
    out = tmp_path / "records"
    done = export_games([*event_folder[:2], tampered], out)
    assert [d.source for d in done] == [*event_folder[:2], tampered]
    first, second, bad = done
    assert first.record is not None and second.record is not None
    assert first.record.name == "table-1-game-g1.txt" != second.record.name
    for exported in (first, second):
        assert exported.record is not None
        record = parse_record(exported.record.read_text(encoding="utf-8"))
        original = load_replay(exported.source)
        assert record.moves == original.moves and record.names == ["ann", "bo"]
        assert [g.state_hash() for g in record.states] == [g.state_hash() for g in original.states]
    assert bad.record is None and bad.error  # reported, never written
    assert sorted(p.name for p in out.iterdir()) == sorted([first.record.name, second.record.name])
    assert export_games([], out) == []
