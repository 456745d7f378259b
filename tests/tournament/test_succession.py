"""The director's key is lost too: an entrant directs in its place from a stage on (a
signed succession that counts once more than half of the entrants acknowledged it, and
never while a closure of the director's of that stage or a later one is on record). The
successor closes and publishes as the director did and nothing more: whatever a faction
tries with it (a second successor, dropping an entrant's item, another entry list, other
standings), the event stops with the conflict named, or the statement is refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from club_harness import Club

from moska_p2p.crypto.identity import Identity
from moska_p2p.event.folder import FolderError, save, take_over, verify_event
from moska_p2p.tournament import Row, TournamentError, digest
from moska_p2p.tournament.entry import close_entry
from moska_p2p.tournament.record import (
    COMMITS,
    REVEALS,
    acknowledge_succession,
    close,
    decisions_before,
    follow,
    point_of,
    publish,
    succeed,
)
from moska_p2p.tournament.signed import CLOSE, COMMIT, SUCCEED, SUCCEED_ACK


def director_lost_after_round_1(successor: int = 3) -> Club:
    club = Club()
    club.until_published(1)
    club.succeeded_by(successor)
    return club


def test_a_successor_acknowledged_by_a_majority_finishes_the_event(tmp_path: Path) -> None:
    club = director_lost_after_round_1()
    successor = club.director
    assert successor.step() == []  # no entrant's record in yet: it may lack a closure
    for role in club.roles[:4]:
        club.reconnect(role)
    (succession,) = successor.step()  # the records of more than half are in
    assert succession.kind == SUCCEED and succession.author == club.people[3].public_bytes
    club.carry([succession])
    for role in club.roles[4:]:
        club.reconnect(role)
    club.run()
    states = [follow(record) for record in club.records()]
    assert all(s.finished() and not s.conflicts for s in states)
    assert len({digest(s.standing() or []) for s in states}) == 1
    assert {s.successor for s in states} == {club.people[3].public_bytes}
    assert {s.since for s in states} == {point_of(2, COMMITS)}
    folder = tmp_path / "bot0"
    save(folder, club.director.event, club.roles[0].record)
    assert verify_event(folder).status == "valid"


def test_a_succession_acknowledged_by_half_the_entrants_does_not_count() -> None:
    club = director_lost_after_round_1()
    successor = club.director
    for role in club.roles:
        club.reconnect(role)
    (succession,) = successor.step()
    club.carry([succession])
    for role in club.roles[:2]:  # with bot3's own: three of six
        club.carry(role.step())
    state = follow(successor.record)
    assert state.successor is None
    assert successor.step() == []  # it waits for more
    early = close(club.people[3], successor.event, 2, COMMITS, successor.record.of(COMMIT, 2))
    successor.record.add(early)
    with pytest.raises(TournamentError, match="who does not direct it"):
        follow(successor.record)


def test_a_succession_the_directors_closure_of_its_stage_voids_and_a_new_one_follows() -> None:
    """The director closed round 2's commitments and only bot0 got it; the successor, not
    knowing, named that stage; the closure comes to light (bot0's record): the succession
    never counts, and the successor's next one starts after the director's closure."""
    club = Club()
    club.until_published(1)
    (lost,) = club.director.step()
    assert lost.kind == CLOSE
    club.roles[0].record.add(lost)
    successor = club.succeeded_by(3)
    for role in club.roles[1:]:
        club.reconnect(role)
    (first,) = successor.step()
    assert first.body()[1:3] == [2, COMMITS]
    club.carry([first])
    for role in club.roles[1:]:
        club.carry(role.step())  # a majority acknowledges it
    assert follow(successor.record).successor == club.people[3].public_bytes
    club.reconnect(club.roles[0])  # the director's closure of that very stage
    state = follow(successor.record)
    assert state.successor is None
    assert any("does not count: the director closed" in note for note in state.notes)
    (second,) = successor.step()
    assert second.body()[1:3] == [2, REVEALS]
    club.carry([second])
    club.run()
    states = [follow(record) for record in club.records()]
    assert all(s.finished() and not s.conflicts for s in states)
    assert {s.since for s in states} == {point_of(2, REVEALS)}


def test_two_directors_closures_of_one_stage_are_a_conflict_named() -> None:
    club = Club()
    club.until_published(1)
    (hidden,) = club.director.step()  # the director's closure, carried nowhere yet
    successor = club.succeeded_by(3)
    for role in club.roles:
        club.reconnect(role)
    club.run(4)
    assert follow(successor.record).successor == club.people[3].public_bytes
    club.carry([hidden])  # the old director's closure of the stage the successor closed
    for record in club.records():
        state = follow(record)
        assert any("two directors" in c and "the commits of round 2" in c for c in state.conflicts)
    assert successor.step() == []  # the event stops


def test_two_successions_that_each_count_are_a_conflict_naming_who_acknowledged_both() -> None:
    club = Club()
    club.until_published(1)
    record = club.director.record
    event, director = club.director.event, club.director_id.public_bytes
    held = decisions_before(record, director, point_of(2, COMMITS))
    a = succeed(club.people[3], event, 2, COMMITS, held)
    b = succeed(club.people[4], event, 2, COMMITS, held)
    acks = [acknowledge_succession(club.people[n], a) for n in (0, 1, 2)]
    acks += [acknowledge_succession(club.people[n], b) for n in (0, 2, 5)]
    club.carry([a, b, *acks])
    state = follow(record)
    (conflict,) = state.conflicts
    assert "two successions" in conflict and "bot0" in conflict and "bot2" in conflict
    assert "bot1" not in conflict and "bot5" not in conflict


def test_an_entrant_acknowledges_one_standing_succession_of_its_hub_with_its_decisions() -> None:
    club = Club()
    club.until_published(1)
    event, director = club.director.event, club.director_id.public_bytes
    role = club.roles[0]
    held = decisions_before(role.record, director, point_of(2, COMMITS))

    def acknowledges(succession: object) -> bool:
        return any(s.kind == SUCCEED_ACK for s in role.step())

    other = succeed(club.people[4], event, 2, COMMITS, bytes(32))  # other decisions held
    role.record.add(other)
    role.hub = club.people[4].public_bytes
    assert not acknowledges(other)
    stray = succeed(club.people[5], event, 2, COMMITS, held)  # not the hub it went to
    role.record.add(stray)
    assert not acknowledges(stray)
    right = succeed(club.people[4], event, 2, REVEALS, held)
    role.record.add(right)
    assert acknowledges(right)
    role.hub = club.people[5].public_bytes
    assert not acknowledges(stray)  # one standing succession acknowledged: no second


def successor_directs(club: Club | None = None) -> Club:
    """bot3 succeeds the director after round 1 (in ``club``, where it was just made the
    successor), and its succession counts."""
    club = club or director_lost_after_round_1()
    for role in club.roles:
        club.reconnect(role)
    club.carry(club.director.step())
    for role in club.roles:
        club.carry(role.step())
    assert follow(club.director.record).successor == club.people[3].public_bytes
    return club


def test_a_successor_cannot_drop_an_entrants_item_rewrite_the_entry_or_the_standings() -> None:
    club = successor_directs()
    successor = club.director
    me = club.people[3]
    commits = successor.record.of(COMMIT, 2)
    dropped = club.people[0].public_bytes  # a rival left out of the draw
    unfair = close(me, successor.event, 2, COMMITS, [c for c in commits if c.author != dropped])
    club.carry([unfair])
    for role in club.roles:
        club.carry(role.step())
    state = follow(club.roles[0].record)
    assert any(c.startswith("bot0 (") and "refused" in c for c in state.conflicts)
    assert successor.step() == []

    club = successor_directs()
    entry = follow(club.director.record).entry
    assert entry is not None
    friends = close_entry(club.people[3], entry.spec, entry.nonce, entry.entrants[:4])
    club.director.record.add(friends.statement)
    with pytest.raises(TournamentError, match="only the event's director signs one"):
        follow(club.director.record)

    club = successor_directs()
    rows = follow(club.director.record).rounds[0].rows or []
    flattered = publish(club.people[3], club.director.event, 1,
                        [Row(r.key, r.name, 0, r.games) for r in rows])  # fmt: skip
    club.director.record.add(flattered)
    with pytest.raises(TournamentError, match="differ"):
        follow(club.director.record)


def test_only_an_entrant_succeeds_the_director() -> None:
    club = Club()
    club.until_published(1)
    stranger = Identity.from_seed(bytes([42]) * 32)
    held = decisions_before(club.director.record, club.director_id.public_bytes, (2, 0))
    club.director.record.add(succeed(stranger, club.director.event, 2, COMMITS, held))
    with pytest.raises(TournamentError, match="not an entrant"):
        follow(club.director.record)


def test_the_lost_director_coming_back_signs_nothing_once_a_successor_directs() -> None:
    club = Club()
    club.until_published(1)
    old = club.director
    club.succeeded_by(3)
    successor_directs(club)
    for statement in club.director.record.statements.values():
        old.record.add(statement)
    assert follow(old.record).successor == club.people[3].public_bytes
    assert old.step(deadline=True) == []


def test_only_an_entrant_of_the_folders_event_runs_a_successors_hub(tmp_path: Path) -> None:
    club = Club()
    club.until_published(1)
    source = tmp_path / "bot3"
    save(source, club.director.event, club.roles[3].record)
    bot3, director = club.people[3].public_bytes, club.director_id.public_bytes
    stranger = Identity.from_seed(bytes([42]) * 32).public_bytes
    with pytest.raises(FolderError, match=r"only an entrant .* is not one"):
        take_over(source, tmp_path / "hub", stranger, succeed=True)
    with pytest.raises(FolderError, match="its director: leave out --succeed"):
        take_over(source, tmp_path / "hub", director, succeed=True)
    with pytest.raises(FolderError, match="with --succeed"):
        take_over(source, tmp_path / "hub", bot3)  # an entrant, without --succeed
    with pytest.raises(FolderError, match="the successor's is another"):
        take_over(source, source, bot3, succeed=True)
    assert not (tmp_path / "hub").exists()
    event, record = take_over(source, tmp_path / "hub", bot3, succeed=True)
    assert event == club.director.event and len(record) == len(club.roles[3].record)
