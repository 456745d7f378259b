"""The event folder: written and read back, and ``verify_event`` recomputing the draw,
the seating and the standings from the signed statements, refusing what does not add up."""

from __future__ import annotations

import copy
from pathlib import Path
from types import SimpleNamespace

import pytest
from club_harness import Club

from moska_p2p.bots.loader import load_bot
from moska_p2p.crypto.identity import Identity
from moska_p2p.event.folder import EVENT_FILE, counted_games, load, save, verify_event
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.frames import pack
from moska_p2p.protocol.simulate import Network, make_peers, save_transcripts
from moska_p2p.protocol.transcript import verify_transcript
from moska_p2p.table.simulate import run_game
from moska_p2p.tournament import Row, TournamentError
from moska_p2p.tournament.record import RESULTS, acknowledge_closure, close, follow, publish
from moska_p2p.tournament.signed import RESULT, STANDINGS, sign


def finished(tmp_path: Path) -> tuple[Club, Path]:
    club = Club()
    club.run()
    folder = tmp_path / "event"
    save(folder, club.director.event, club.director.record)
    return club, folder


def test_a_folder_reads_back_and_verifies(tmp_path: Path) -> None:
    club, folder = finished(tmp_path)
    event, record = load(folder)
    assert event == club.director.event and len(record) == len(club.director.record)
    report = verify_event(folder)
    assert report.status == "valid", report.fault
    assert [r.name for r in report.rows or []] == [
        r.name for r in follow(club.director.record).standing() or []
    ]


def test_published_standings_that_differ_are_refused(tmp_path: Path) -> None:
    club, folder = finished(tmp_path)
    _, record = load(folder)
    for key, statement in list(record.statements.items()):
        if statement.kind == STANDINGS and statement.body()[1] == 1:
            del record.statements[key]
    rows = follow(club.director.record).rounds[0].rows or []
    flattered = [Row(r.key, r.name, 0, r.games) for r in rows]  # nobody lost
    record.add(publish(club.director_id, club.director.event, 1, flattered))
    save(folder, club.director.event, record)
    report = verify_event(folder)
    assert report.status == "invalid"
    assert "published after round 1 differ" in (report.fault or "")


def test_a_member_who_signs_an_altered_loss_leaves_its_table_without_a_result(
    tmp_path: Path,
) -> None:
    """A table member signs a result with one loss moved to another seat: its table's
    members disagree, the table scores no result, and the standings the director published
    from the honest results no longer recompute: refused."""
    club, folder = finished(tmp_path)
    _, record = load(folder)
    honest = record.of(RESULT, 1)[0]
    cheat = next(p for p in club.people if p.public_bytes == honest.author)
    body = copy.deepcopy(honest.body())
    body[5] = [[*game[:3], [(game[3][0] + 1) % len(body[4])], *game[4:]] for game in body[5]]
    altered = sign(cheat, RESULT, body)
    record.add(altered)
    round_one = [s for s in record.of(RESULT, 1) if s != honest]
    for key, statement in list(record.statements.items()):
        if statement.kind == "tournament/close" and statement.body()[1:3] == [1, RESULTS]:
            del record.statements[key]
    closure = close(club.director_id, club.director.event, 1, RESULTS, round_one)
    record.add(closure)
    for person in club.people:  # every author of a counted result acknowledges it
        record.add(acknowledge_closure(person, closure))
    save(folder, club.director.event, record)
    with pytest.raises(TournamentError, match="published after round 1 differ"):
        follow(record)
    report = verify_event(folder)
    assert report.status == "invalid" and "differ" in (report.fault or "")
    for key, statement in list(record.statements.items()):
        if statement.kind == STANDINGS:
            del record.statements[key]
    first = follow(record).rounds[0]
    assert first.result is not None
    assert [t.games is None for t in first.result.tables].count(True) == 1  # no result


def test_a_damaged_or_foreign_folder(tmp_path: Path) -> None:
    assert verify_event(tmp_path).status == "not-an-event"
    (tmp_path / EVENT_FILE).write_bytes(b"\x00\x00\x00\x03abc")
    assert verify_event(tmp_path).status == "not-an-event"
    _, folder = finished(tmp_path / "x")
    data = (folder / EVENT_FILE).read_bytes()
    (folder / EVENT_FILE).write_bytes(data[:-40] + bytes(40))  # a signature damaged
    assert verify_event(folder).status == "invalid"
    assert pack  # the frames' packer is what the file holds


def test_an_event_cut_short_is_incomplete(tmp_path: Path) -> None:
    club = Club()
    club.run(rounds=4)
    folder = tmp_path / "event"
    save(folder, club.director.event, club.director.record)
    report = verify_event(folder)
    assert report.status == "incomplete", report.fault


def test_moska_verify_on_an_event_folder_says_so_by_its_exit_code(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from moska_p2p.cli import app

    _, folder = finished(tmp_path / "done")
    done = CliRunner().invoke(app, ["verify", str(folder)])
    assert done.exit_code == 0 and "after the final table" in done.output, done.output
    club = Club()
    club.run(rounds=4)
    save(tmp_path / "cut", club.director.event, club.director.record)
    assert CliRunner().invoke(app, ["verify", str(tmp_path / "cut")]).exit_code == 3
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / EVENT_FILE).write_bytes(b"not an event")
    assert CliRunner().invoke(app, ["verify", str(tmp_path / "junk")]).exit_code == 4


def _transcripts(tmp_path: Path, *, third_starts: bool) -> list[Path]:
    """The transcripts of two peers of a durak table of three whose third peer starts or
    never does (then the two stop at the table's start, with no seats known)."""
    config = TableConfig("durak", 3, bytes([5]) * 32, {}, 5.0)
    net = Network(make_peers(config, [Identity.from_seed(bytes([i + 1]) * 32) for i in range(3)],
                             seed=5))  # fmt: skip
    if third_starts:
        run_game(net, [load_bot("greedy", seed=i) for i in range(3)], budget=None)
    else:
        for at in (0.0, 10.0, 20.0, 40.0, 80.0):
            for index in (0, 1):
                session = net.sessions[index]
                net.handle(index, session.start(at) if at == 0.0 else session.tick(at))
            net.deliver_all()
    return save_transcripts(SimpleNamespace(sessions=net.sessions[:2]), tmp_path)


def test_a_table_stopped_at_its_start_counts_no_game_and_a_played_one_its_game(
    tmp_path: Path,
) -> None:
    """``counted_games``: what a member signs as its table's result and what the folder's
    check expects of the member's transcript, one rule for both (they once differed on a
    game stopped before its seats were known: a member signed no game, the check counted a
    forfeit, and the member's own folder failed to verify)."""
    for path in _transcripts(tmp_path / "stopped", third_starts=False):
        report = verify_transcript(path)
        assert report.valid and report.seats == () and report.verdict is not None
        assert counted_games(report) == ()
    played = [verify_transcript(p) for p in _transcripts(tmp_path / "played", third_starts=True)]
    assert all(r.valid and r.verdict is None for r in played), [r.fault for r in played]
    (game,) = counted_games(played[0])
    assert counted_games(played[1]) == (game,)
    assert game.losers == tuple(played[0].losers) and not game.forfeit
