"""The club's leaderboard: an event's games as rankings (losers last), rated with the arena's
own OpenSkill update, carried from one event to the next in a file that is written
atomically, reads back, rates an event once, and survives a damaged file without losing it."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path

import pytest

from moska_p2p.arena.ratings import Leaderboard as ArenaLeaderboard
from moska_p2p.arena.ratings import save as save_arena_ratings
from moska_p2p.arena.stats import GameOutcome
from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol.tally import GameRecord
from moska_p2p.tournament import BOT, PERSON, Entrant, RoundResult, TableResult
from moska_p2p.tournament.leaderboard import RankedGame, ranked_games
from moska_p2p.ui.club_leaderboard import (
    DAMAGED,
    FORMAT,
    ClubLeaderboard,
    LeaderboardError,
    default_path,
    load,
    parse,
    record_event,
    save,
)

NOW = "2026-12-07T21:00:00Z"
E = [
    Entrant(Identity.from_seed(bytes([i + 1]) * 32).public_bytes, name, BOT if i == 3 else PERSON)
    for i, name in enumerate(["alice", "bob", "carol", "greedy", "eve"])
]
K = [e.key for e in E]
EVENT1, EVENT2 = hashlib.sha256(b"event 1").digest(), hashlib.sha256(b"event 2").digest()


def game(number: int, *losers: int, forfeit: bool = False) -> GameRecord:
    gid = hashlib.sha256(bytes([number, *losers, forfeit])).digest()
    return GameRecord(number, gid, b"s", losers, forfeit, 0)


ROUND1 = RoundResult(
    hashlib.sha256(b"r1").digest(),
    (
        TableResult((K[0], K[1]), (game(1, 1), game(2, 1), game(3, forfeit=True))),
        TableResult((K[2], K[3]), (game(1, 0, forfeit=True), game(2), game(3, 0))),
    ),
    forfeited=(K[4],),
    games_per_round=3,
)
ROUND2 = RoundResult(
    hashlib.sha256(b"r2").digest(),
    (TableResult((K[0], K[2], K[4]), (game(1, 2), game(2, 1), game(3, 2))),
     TableResult((K[1], K[3]), None)),
    games_per_round=3,
)  # fmt: skip
FINAL = TableResult((K[0], K[3]), (game(1, 1),))


def test_an_events_rated_games_are_its_games_with_a_result_losers_last() -> None:
    games = ranked_games([ROUND1, ROUND2], FINAL)
    assert games == [
        RankedGame((K[0], K[1]), (1,)),
        RankedGame((K[0], K[1]), (1,)),  # game 3: contact lost, nobody's loss: not rated
        RankedGame((K[2], K[3]), (0,)),  # a forfeit at the table: a loss the rules gave
        RankedGame((K[2], K[3]), ()),  # a draw: both tied
        RankedGame((K[2], K[3]), (0,)),
        RankedGame((K[0], K[2], K[4]), (2,)),
        RankedGame((K[0], K[2], K[4]), (1,)),
        RankedGame((K[0], K[2], K[4]), (2,)),
        RankedGame((K[0], K[3]), (1,)),  # the final table's; eve's sat-out round and
    ]  # round 2's table without a result are no games


def test_an_event_is_rated_exactly_as_the_arena_rates_its_games() -> None:
    board = ClubLeaderboard("moska")
    games = ranked_games([ROUND1, ROUND2], FINAL)
    assert board.rate_event(EVENT1, "club night", E, games, NOW) == len(games)
    # The arena's leaderboard, given the same games as bots named by key, agrees exactly.
    arena = ArenaLeaderboard("moska")
    order = [key.hex() for key in K]
    outcomes = [
        GameOutcome(n, tuple(order.index(k.hex()) for k in g.players), g.losers, None, "",
                    False, 0)
        for n, g in enumerate(games)
    ]  # fmt: skip
    arena.update(order, outcomes, NOW)
    for key in K:
        mine, theirs = board.members[key.hex()], arena.bots[key.hex()]
        assert (mine.rating.mu, mine.rating.sigma, mine.rating.games) == (
            theirs.mu, theirs.sigma, theirs.games,
        )  # fmt: skip
    assert board.members[K[3].hex()].plays == BOT and board.members[K[3].hex()].events == 1
    ranked = [member.name for _rank, _key, member in board.standings()]
    assert ranked.index("alice") < ranked.index("bob")  # bob lost every game against alice
    with pytest.raises(LeaderboardError, match="on the leaderboard already"):
        board.rate_event(EVENT1, "club night", E, games, NOW)
    with pytest.raises(LeaderboardError, match="seats a non-entrant"):
        board.rate_event(EVENT2, "next", E[:2], games, NOW)


def test_the_file_carries_ratings_from_event_to_event_and_rates_an_event_once(
    tmp_path: Path,
) -> None:
    path = tmp_path / "club" / "leaderboard-moska.json"
    first = record_event(path, "moska", EVENT1, "club night", E, ranked_games([ROUND1]), NOW)
    assert first.rated == 5 and first.kept_aside is None
    again = record_event(path, "moska", EVENT1, "club night", E, ranked_games([ROUND1]), NOW)
    assert again.rated == 0  # a runner that records its event twice changes nothing
    after_one = path.read_bytes()
    second = record_event(path, "moska", EVENT2, "week two", E, ranked_games([ROUND2]), NOW)
    assert second.rated == 3
    # Carried: the two events in one board give the same ratings as the file gives.
    both = ClubLeaderboard("moska")
    both.rate_event(EVENT1, "club night", E, ranked_games([ROUND1]), NOW)
    both.rate_event(EVENT2, "week two", E, ranked_games([ROUND2]), NOW)
    read_back = load(path, "moska")
    assert read_back.to_json() == both.to_json() == second.board.to_json()
    assert [rated.name for rated in read_back.events] == ["club night", "week two"]
    assert read_back.members[K[0].hex()].events == 2 and read_back.games == 8
    data = json.loads(path.read_text())
    assert data["format"] == FORMAT and data["version"] == 1
    assert after_one != path.read_bytes()


def test_a_damaged_file_is_kept_aside_never_lost(tmp_path: Path) -> None:
    path = tmp_path / "leaderboard-moska.json"
    for broken in (b'{"format": "moska-club-lead', b"", b"[1, 2]"):
        path.write_bytes(broken)
        damaged = f"{re.escape(str(path))}: (damaged leaderboard|not a leaderboard file)"
        with pytest.raises(LeaderboardError, match=damaged) as caught:
            load(path, "moska")
        assert caught.value.damaged
        done = record_event(path, "moska", EVENT1, "club night", E, ranked_games([ROUND1]), NOW)
        assert done.kept_aside is not None and done.kept_aside.read_bytes() == broken
        assert done.kept_aside.name.startswith(path.name + DAMAGED)
        assert load(path, "moska").has_event(EVENT1) and done.rated == 5
        path.unlink()
    assert len(list(tmp_path.glob(f"*{DAMAGED}*"))) == 3  # three set aside, none over another
    good = ClubLeaderboard("moska")
    good.rate_event(EVENT1, "club night", E, ranked_games([ROUND1]), NOW)
    for field_, value in (("players", []), ("games", -1), ("events", [{"id": "zz"}])):
        data = good.to_json() | {field_: value}
        with pytest.raises(LeaderboardError, match="damaged leaderboard") as caught:
            parse(data, "f.json")
        assert caught.value.damaged
    player = next(iter(good.to_json()["players"]))
    data = good.to_json()
    data["players"][player]["sigma"] = 0
    with pytest.raises(LeaderboardError, match="sigma must be a positive number"):
        parse(data, "f.json")


def test_a_sound_file_that_is_not_for_this_is_refused_and_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "leaderboard.json"
    newer = ClubLeaderboard("moska").to_json() | {"version": 2}
    arena = tmp_path / "arena.json"
    save_arena_ratings(arena, ArenaLeaderboard("moska"))
    durak = tmp_path / "durak.json"
    save(durak, ClubLeaderboard("durak"))
    path.write_text(json.dumps(newer))
    cases = [(path, "newer than this moska reads"), (arena, "not a club leaderboard"),
             (durak, "rates durak and this event is moska")]  # fmt: skip
    for file, message in cases:
        before = file.read_bytes()
        with pytest.raises(LeaderboardError, match=message) as caught:
            record_event(file, "moska", EVENT1, "x", E, ranked_games([ROUND1]), NOW)
        assert not caught.value.damaged and file.read_bytes() == before
    assert not list(tmp_path.glob(f"*{DAMAGED}*"))
    with pytest.raises(LeaderboardError, match="no such leaderboard file"):
        load(tmp_path / "none.json")


def test_the_file_is_replaced_whole_or_not_at_all(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "leaderboard-moska.json"
    record_event(path, "moska", EVENT1, "club night", E, ranked_games([ROUND1]), NOW)
    before = path.read_bytes()

    def crash(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="No space left"):
        record_event(path, "moska", EVENT2, "week two", E, ranked_games([ROUND2]), NOW)
    assert path.read_bytes() == before and sorted(tmp_path.iterdir()) == [path]


def test_the_default_file_is_in_the_data_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path("moska") == tmp_path / "moska-p2p" / "leaderboard-moska.json"
