"""The event's two roles, sans-IO: a director and its entrants exchange statements (the
carrier is a loop here) through a whole event, and every record reaches the same standings;
a closure that leaves an entrant's item out is refused; an altered table result is refused."""

from __future__ import annotations

import copy
import dataclasses

import pytest
from club_harness import Club

from moska_p2p.protocol.frames import pack
from moska_p2p.protocol.tally import GameRecord
from moska_p2p.tournament import TournamentError, commit, digest, read
from moska_p2p.tournament.record import (
    COMMITS,
    check_claim,
    close,
    expected_table_id,
    follow,
    read_result,
    table_result,
)
from moska_p2p.tournament.signed import REVEAL, sign


def test_a_whole_event_gives_every_record_the_same_standings() -> None:
    club = Club()
    club.run()
    states = [follow(record) for record in club.records()]
    assert all(s.finished() for s in states)
    boards = {digest(s.standing() or []) for s in states}
    assert len(boards) == 1
    final = states[0].rounds[-1]
    assert final.final and final.tables is not None and len(final.tables[0]) == 3
    rows = states[0].standing() or []
    assert sum(r.points for r in rows) == 2 * 2  # one loser per table per round
    assert sum(r.final_points or 0 for r in rows) == 1  # and one at the final


def test_a_closure_that_leaves_out_an_entrants_commitment_is_refused_and_stops_the_event() -> None:
    club = Club()
    club.carry(club.director.step())  # the entry list
    for role in club.roles:
        club.carry(role.step())  # acknowledgements
    for role in club.roles:
        club.carry(role.step())  # commitments
    record = club.director.record
    commits = [s for s in record.of("tournament/commit", 1)]
    left_out = club.people[2].public_bytes
    unfair = close(club.director_id, club.director.event, 1, COMMITS,
                   [c for c in commits if c.author != left_out])  # fmt: skip
    club.carry([unfair])
    for role in club.roles:
        club.carry(role.step())
    state = follow(record)
    assert state.conflicts and "bot2" in state.conflicts[0]
    assert club.director.step() == []  # the event stops


def test_a_table_result_with_one_changed_loss_is_refused() -> None:
    club = Club()
    club.run(rounds=6)
    record = club.director.record
    results = record.of("tournament/result", 1)
    assert results
    one = results[0]
    body = copy.deepcopy(one.body())
    body[5][0][3] = [1]  # the loser's seat changed
    altered = dataclasses.replace(one, payload=pack(body))
    with pytest.raises(TournamentError, match="bad signature"):
        read(altered.to_bytes())


def test_a_stage_waits_for_every_entrant_until_its_deadline_then_the_silent_sit_out() -> None:
    club = Club()
    club.carry(club.director.step())  # the entry list
    for role in club.roles:
        club.carry(role.step())  # acknowledgements
    silent = club.roles.pop()  # it never commits (a crash, a lost network)
    for role in club.roles:
        club.carry(role.step())  # the others' commitments
    assert club.director.step() == []  # one is missing: no closure before the deadline
    club.carry(club.director.step(deadline=True))
    for _ in range(3):
        for role in club.roles:
            club.carry(role.step())
        club.carry(club.director.step())
    first = follow(club.director.record).rounds[0]
    assert first.draw is not None and first.draw.absent == (silent.me,)
    assert first.tables is not None and sorted(len(t) for t in first.tables) == [
        2,
        3,
    ]  # the five who committed


def test_an_entrant_revealing_another_secret_is_named_and_sits_the_round_out() -> None:
    """An entrant that sees the others' reveals first and reveals another secret (to seat
    itself with a friend) cannot: the secret does not open its commitment, it is named a
    cheat, forfeits the round, and the seed is the honest secrets'."""
    club = Club()
    club.carry(club.director.step())
    for _ in range(2):  # acknowledgements, then commitments
        for role in club.roles:
            club.carry(role.step())
    club.carry(club.director.step())  # the commit set closed...
    for role in club.roles:
        club.carry(role.step())  # ...and acknowledged
    cheat, honest = club.roles[0], club.roles[1:]
    for role in honest:
        club.carry(role.step())  # the honest reveals
    cset = follow(cheat.record).rounds[0].commit_set
    assert cset is not None
    chosen = bytes(32)  # a secret picked after seeing every other one
    event = club.director.event
    body: list[object] = [event, 1, chosen, cset.digest(event)]
    club.carry([sign(cheat.identity, REVEAL, body)])
    for _ in range(3):
        club.carry(club.director.step())
        for role in club.roles:  # the cheat acknowledges too: it wants to play
            club.carry(role.step())
    state = follow(club.director.record)
    first = state.rounds[0]
    assert first.draw is not None and first.draw.cheated == (cheat.me,)
    assert any("bot0" in note and "a cheat" in note for note in state.notes)
    assert first.tables is not None and cheat.me not in {k for t in first.tables for k in t}


def test_a_result_of_another_table_or_evening_is_refused_and_never_counted() -> None:
    """A member's result names its table's id, which the event, the round and the table
    fix: the same players' result of another round (or evening) has another id."""
    club = Club()
    for _ in range(5):  # up to the first round's tables
        club.carry(club.director.step())
        for role in club.roles:
            club.carry(role.step())
    role = club.roles[0]
    table = role.table_to_play()
    entry = follow(role.record).entry
    assert table is not None and entry is not None
    other = expected_table_id(entry, 2, table.table, table.members)  # not this table's id
    game = GameRecord(1, bytes(32), bytes(32), (0,), False, 0)
    stale = table_result(role.identity, entry.event, 1, table.table, other, table.members, [game])
    with pytest.raises(TournamentError, match="another table or evening"):
        check_claim(entry, 1, table.table, table.members, read_result(stale))
    club.carry([stale])
    club.run()
    assert stale not in follow(club.director.record).rounds[0].stages["results"].items


def test_the_director_carries_nothing_that_would_spoil_the_records() -> None:
    club = Club()
    club.carry(club.director.step())
    for _ in range(2):  # acknowledgements, then commitments
        for role in club.roles:
            club.carry(role.step())
    someone = club.roles[1]
    event = club.director.event
    for statement in club.director.record.of("tournament/commit", 1):
        club.director.admissible(statement)  # each one once: carried
    twice = commit(someone.identity, event, 1, bytes(32))
    with pytest.raises(TournamentError, match="second, different tournament/commit"):
        club.director.admissible(twice)
    entry = follow(club.director.record).entry
    assert entry is not None
    with pytest.raises(TournamentError, match="does not sign a tournament/close"):
        club.director.admissible(close(someone.identity, event, 1, COMMITS, []))
    with pytest.raises(TournamentError, match="another list"):
        club.director.admissible(sign(someone.identity, "tournament/ack", [event, bytes(32)]))
