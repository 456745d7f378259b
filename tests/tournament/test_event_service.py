"""The event's two roles, sans-IO: a director and its entrants exchange statements (the
carrier is a loop here) through a whole event, and every record reaches the same standings;
a closure that leaves an entrant's item out is refused; an altered table result is refused."""

from __future__ import annotations

import dataclasses

import pytest
from club_harness import Club

from moska_p2p.protocol.frames import pack
from moska_p2p.tournament import TournamentError, digest, read
from moska_p2p.tournament.record import COMMITS, close, follow


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
    body = one.body()
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
