"""An event's director and entrants in one process, the carrier a loop: what the sans-IO
tests of the event run on."""

from __future__ import annotations

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol.tally import GameRecord
from moska_p2p.tournament import BOT, EventSpec
from moska_p2p.tournament.record import EventRecord, expected_table_id, follow, table_result
from moska_p2p.tournament.service import Director, EntrantRole, enter

SPEC = EventSpec("club night", "moska", seats_per_table=3, rounds=2, games_per_round=1,
                 final_size=3, final_games=1)  # fmt: skip
NONCE = bytes(range(32))


def ids(count: int, base: int = 1) -> list[Identity]:
    return [Identity.from_seed(bytes([base + i]) * 32) for i in range(count)]


class Club:
    """A director and its entrants; every statement goes to every record (the carrier)."""

    def __init__(self, count: int = 6, nonce: bytes = NONCE) -> None:
        self.director_id = Identity.from_seed(bytes([200]) * 32)
        self.nonce = nonce
        self.director = Director(self.director_id, SPEC, nonce, EventRecord(), count)
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

    def director_lost(self, folder_of: int) -> Director:
        """The director's record is gone, its key is not: a director that continues the
        event from a copy of entrant ``folder_of``'s record (as ``direct --from`` does)."""
        record = EventRecord()
        for statement in self.roles[folder_of].record.statements.values():
            record.add(statement)
        self.director = Director(self.director_id, SPEC, self.nonce, record, len(self.people))
        self.director.resume()
        return self.director

    def succeeded_by(self, index: int) -> Director:
        """The director's key is lost: entrant ``index`` directs in its place from its own
        record, and every entrant connects to it (a hub whose key is the successor's)."""
        successor = self.people[index]
        record = EventRecord()
        for statement in self.roles[index].record.statements.values():
            record.add(statement)
        self.director = Director(successor, SPEC, self.nonce, record, len(self.people),
                                 director=self.director_id.public_bytes)  # fmt: skip
        self.director.resume()
        for role in self.roles:
            role.hub = successor.public_bytes
        return self.director

    def reconnect(self, role: EntrantRole) -> None:
        """An entrant (re)connects: the director takes what its record holds."""
        held = list(role.record.statements.values())
        self.carry(self.director.take_held(role.me, held))

    def until_published(self, round_number: int) -> None:
        """Run until the standings of ``round_number`` are out, and no further."""
        for _ in range(50):
            state = follow(self.director.record)
            if len(state.rounds) >= round_number and state.rounds[round_number - 1].published:
                return
            self.run(1)
        raise AssertionError(f"round {round_number} never published")

    def run(self, rounds: int = 50) -> None:
        for _ in range(rounds):
            self.carry(self.director.step())
            for role in self.roles:
                self.carry(role.step())
            self.play_tables()
