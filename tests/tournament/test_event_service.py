"""The event's two roles, sans-IO: a director and its entrants exchange statements (the
carrier is a loop here) through a whole event, and every record reaches the same standings;
a closure that leaves an entrant's item out is refused; an altered table result is refused."""

from __future__ import annotations

import dataclasses

import pytest

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol.tally import GameRecord
from moska_p2p.tournament import BOT, EventSpec, TournamentError, digest
from moska_p2p.tournament.record import (
    COMMITS,
    EventRecord,
    close,
    expected_table_id,
    follow,
    table_result,
)
from moska_p2p.tournament.service import Director, EntrantRole, enter

SPEC = EventSpec("club night", "moska", seats_per_table=3, rounds=2, games_per_round=1,
                 final_size=3, final_games=1)  # fmt: skip
NONCE = bytes(range(32))


def ids(count: int, base: int = 1) -> list[Identity]:
    return [Identity.from_seed(bytes([base + i]) * 32) for i in range(count)]


class Club:
    """A director and its entrants; every statement goes to every record (the carrier)."""

    def __init__(self, count: int = 6) -> None:
        self.director_id = Identity.from_seed(bytes([200]) * 32)
        self.director = Director(self.director_id, SPEC, NONCE, EventRecord(), count)
        self.people = ids(count)
        self.roles = [EntrantRole(p, EventRecord()) for p in self.people]
        self.blocked: set[bytes] = set()  # statements the director does not carry
        for n, person in enumerate(self.people):
            self.director.admit(enter(person, self.director.event, f"bot{n}", BOT))

    def records(self) -> list[EventRecord]:
        return [self.director.record, *(r.record for r in self.roles)]

    def carry(self, statements: list) -> None:  # type: ignore[type-arg]
        for statement in statements:
            if statement.to_bytes() in self.blocked:
                continue
            for record in self.records():
                record.add(statement)

    def play_tables(self, loser_seat: int = 0) -> None:
        for role in self.roles:
            table = role.table_to_play()
            if table is None:
                continue
            entry = follow(role.record).entry
            assert entry is not None
            key = expected_table_id(entry, table.round_number, table.table, table.members)
            game = GameRecord(1, bytes(32), bytes(32), (loser_seat,), False, 0)
            self.carry([table_result(role.identity, entry.event, table.round_number,
                                     table.table, key, table.members, [game])])  # fmt: skip

    def run(self, rounds: int = 50) -> None:
        present = {p.public_bytes for p in self.people}
        for _ in range(rounds):
            self.carry(self.director.step(present))
            for role in self.roles:
                self.carry(role.step())
            self.play_tables()


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
    present = {p.public_bytes for p in club.people}
    club.carry(club.director.step(present))  # the entry list
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
    assert club.director.step(present) == []  # the event stops


def test_a_table_result_with_one_changed_loss_is_refused() -> None:
    club = Club()
    club.run(rounds=6)
    record = club.director.record
    results = record.of("tournament/result", 1)
    assert results
    one = results[0]
    body = one.body()
    body[5][0][3] = [1]  # the loser's seat changed
    altered = dataclasses.replace(one, payload=__import__("moska_p2p").protocol.frames.pack(body))
    from moska_p2p.tournament import read

    with pytest.raises(TournamentError, match="bad signature"):
        read(altered.to_bytes())
