"""An event's record: every signed statement of it, and everything that follows from them.

The carrier (``moska tournament``, :mod:`moska_p2p.event`) moves statements between the
members' machines; this module says what a set of statements *means*, the same way on every
machine and in ``moska verify``:

* the entry list (:mod:`.entry`) and who acknowledged it;
* round by round, the director's **closures** of the commitments, of the reveals and of the
  tables' results. A closure names the items it counts (their hashes); it counts only once
  every author of an item it counts has signed an acknowledgement of it, and an entrant that
  finds its own item left out signs a refusal instead, which stops the event with the
  conflict on record (docs/TOURNAMENT.md, "Carrying the statements");
* a **succession**: when the director's key is lost, an entrant directs from a stage on
  (:func:`succeed`); it counts once more than half of the entrants acknowledged it and only
  while the record holds no closure of the director's of that stage or a later one (two
  directors' closures of one stage are a conflict, named). A successor closes and publishes
  as the director did, nothing more: the draw, the results and the standings stay the
  entrants' own signed items (docs/TOURNAMENT.md, "A successor");
* the draw (:mod:`.draw`) from the closed commit set and reveals, the seating
  (:mod:`.pairing`), each table's result from its members' signed results, and the standings
  (:mod:`.standings`), with the digest the director published after each round.

A table's settings are a pure function of the event, the round and the table's number
(:func:`table_settings`): its nonce is a hash of them, so the table's id and its session's id
bind the games to this very table of this very event, and a result of another evening (same
people, same preset) has another id and is refused.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..crypto.identity import Identity
from ..protocol.config import ConfigError, TableConfig, table_id
from ..protocol.tally import GameRecord, TallyError, open_result
from .draw import CommitSet, Draw, commit_set, draw
from .entry import PERSON, EntryList, missing_acknowledgements, read_entry
from .pairing import meetings, seat_tables
from .signed import (
    ACK,
    CLOSE,
    CLOSE_ACK,
    COMMIT,
    ENTRY,
    REFUSE,
    RESULT,
    REVEAL,
    STANDINGS,
    SUCCEED,
    SUCCEED_ACK,
    TABLE,
    Statement,
    sign,
)
from .spec import TournamentError
from .standings import RoundResult, Row, TableResult, best, digest, standings

COMMITS, REVEALS, RESULTS = "commits", "reveals", "results"
STAGES = (COMMITS, REVEALS, RESULTS)
STAGE_KIND = {COMMITS: COMMIT, REVEALS: REVEAL, RESULTS: RESULT}
ITEM_TAG = b"moska-p2p/tournament/item\n"
DECISIONS_TAG = b"moska-p2p/tournament/decisions\n"
TABLE_TAG = b"moska-p2p/tournament/table\n"
BOT_TIMEOUT, PERSON_TIMEOUT = 30.0, 300.0
"""A table's timeout: as ``moska host``'s defaults, a person's when a person sits there."""


def item_hash(statement: Statement) -> bytes:
    """How a closure names a statement: a hash of its signed bytes."""
    return hashlib.sha256(ITEM_TAG + statement.to_bytes()).digest()


def table_nonce(event: bytes, round_number: int, table: int) -> bytes:
    return hashlib.sha256(TABLE_TAG + event + struct.pack(">II", round_number, table)).digest()


def games_of_round(entry: EntryList, round_number: int) -> int:
    spec = entry.spec
    return spec.final_games if round_number > spec.rounds else spec.games_per_round


def table_settings(
    entry: EntryList, round_number: int, table: int, members: Sequence[bytes]
) -> TableConfig:
    """The settings of table ``table`` of round ``round_number`` (the final table is round
    ``rounds + 1``): every member computes the same ones, and they bind the table's games to
    this event, round and table."""
    person = any(entry.entrant(key).plays == PERSON for key in members)
    try:
        return TableConfig(
            entry.spec.preset,
            len(members),
            table_nonce(entry.event, round_number, table),
            {},
            PERSON_TIMEOUT if person else BOT_TIMEOUT,
            games=games_of_round(entry, round_number),
        )
    except ConfigError as error:
        raise TournamentError(f"round {round_number}, table {table + 1}: {error}") from None


def expected_table_id(
    entry: EntryList, round_number: int, table: int, members: Sequence[bytes]
) -> bytes:
    """The id of the table's first game (its session's id when it plays several)."""
    return table_id(table_settings(entry, round_number, table, members).first(), members)


# ---------------------------------------------------------------------- signing


def close(
    director: Identity, event: bytes, round_number: int, stage: str, items: Iterable[Statement]
) -> Statement:
    """The director's closure of a stage of a round: the items it counts."""
    if stage not in STAGES:
        raise TournamentError(f"no stage {stage!r}")
    hashes = sorted(item_hash(item) for item in items)
    return sign(director, CLOSE, [event, round_number, stage, hashes])


def acknowledge_closure(entrant: Identity, closure: Statement) -> Statement:
    event, number, stage, _ = closure_body(closure)
    return sign(entrant, CLOSE_ACK, [event, number, stage, item_hash(closure)])


def refuse_closure(entrant: Identity, closure: Statement, mine: Statement) -> Statement:
    """An entrant's signed refusal of a closure that leaves ``mine`` (its own item) out."""
    event, number, stage, _ = closure_body(closure)
    return sign(entrant, REFUSE, [event, number, stage, item_hash(closure), mine.to_bytes()])


def table_open(host: Identity, event: bytes, round_number: int, table: int, port: int) -> Statement:
    return sign(host, TABLE, [event, round_number, table, port])


def table_result(
    member: Identity,
    event: bytes,
    round_number: int,
    table: int,
    table_key: bytes,
    seats: Sequence[bytes],
    games: Sequence[GameRecord],
    session_results: Sequence[bytes] = (),
) -> Statement:
    """A member's signed result of its table: the table's id, the seats in seat order and
    every game counted; with the table's signed session results when it played several
    games (each checked against the same facts)."""
    return sign(
        member,
        RESULT,
        [
            event,
            round_number,
            table,
            table_key,
            list(seats),
            [g.to_wire() for g in games],
            list(session_results),
        ],
    )


def publish(director: Identity, event: bytes, round_number: int, rows: Sequence[Row]) -> Statement:
    return sign(director, STANDINGS, [event, round_number, digest(rows)])


Point = tuple[int, int]
"""A stage's place in the event: (round, index of the stage in :data:`STAGES`)."""


def point_of(round_number: int, stage: str) -> Point:
    return (round_number, STAGES.index(stage))


def decisions_before(record: EventRecord, director: bytes, point: Point) -> bytes:
    """What a successor holds of the director's decisions: a hash of the director's
    closures of the stages before ``point``. An entrant acknowledges a succession only when
    its own record gives the same hash (they agree on what was decided)."""
    hashes = sorted(
        item_hash(c)
        for c in record.of(CLOSE)
        if c.author == director and _place(closure_body(c)[1:3]) < point
    )
    return hashlib.sha256(DECISIONS_TAG + b"".join(hashes)).digest()


def succeed(
    successor: Identity, event: bytes, round_number: int, stage: str, held: bytes
) -> Statement:
    """An entrant's signed succession: it directs the event from the ``stage`` of round
    ``round_number`` on, holding the director's decisions ``held``
    (:func:`decisions_before`)."""
    if stage not in STAGES:
        raise TournamentError(f"no stage {stage!r}")
    return sign(successor, SUCCEED, [event, round_number, stage, held])


def acknowledge_succession(entrant: Identity, succession: Statement) -> Statement:
    return sign(entrant, SUCCEED_ACK, [succession.event(), item_hash(succession)])


def succession_body(succession: Statement) -> tuple[int, str, bytes]:
    """(round, stage, held) of a succession."""
    body = succession.body()
    if succession.kind != SUCCEED or len(body) != 4:
        raise TournamentError("a succession is [event, round, stage, held]")
    _, number, stage, held = body
    if type(number) is not int or number < 1 or stage not in STAGES:
        raise TournamentError(f"a malformed succession by {succession.by()}")
    if not isinstance(held, bytes) or not isinstance(stage, str):
        raise TournamentError(f"a malformed succession by {succession.by()}")
    return number, stage, held


def closed_from(record: EventRecord, author: bytes, since: Point) -> list[tuple[int, str]]:
    """The stages (round, stage) ``author`` closed from ``since`` on, in order."""
    found = set()
    for closure in record.of(CLOSE):
        if closure.author == author:
            _, number, stage, _ = closure_body(closure)
            if point_of(number, stage) >= since:
                found.add((number, stage))
    return sorted(found, key=_place)


def _place(stage: tuple[int, str]) -> Point:
    return point_of(*stage)


def voided(record: EventRecord, director: bytes, succession: Statement) -> bool:
    """Whether the record holds a closure of the director's of the succession's stage or a
    later one: the director was not lost there, and the succession never counts."""
    return bool(closed_from(record, director, point_of(*succession_body(succession)[:2])))


# ---------------------------------------------------------------------- reading bodies


def closure_body(closure: Statement) -> tuple[bytes, int, str, list[bytes]]:
    body = closure.body()
    if closure.kind != CLOSE or len(body) != 4:
        raise TournamentError("a closure is [event, round, stage, item hashes]")
    event, number, stage, hashes = body
    if type(number) is not int or stage not in STAGES or not isinstance(hashes, list):
        raise TournamentError(f"a malformed closure by {closure.by()}")
    if not all(isinstance(h, bytes) and len(h) == 32 for h in hashes):
        raise TournamentError(f"a closure by {closure.by()} names an item that is no hash")
    assert isinstance(event, bytes)
    return event, number, stage, list(hashes)


def round_of(statement: Statement) -> int:
    """The round a statement is about (0: the entry)."""
    body = statement.body()
    if statement.kind in (ENTRY, ACK, SUCCEED_ACK):
        return 0
    number = body[1] if len(body) > 1 else None
    if type(number) is not int or number < 1:
        raise TournamentError(f"a {statement.kind} statement by {statement.by()} names no round")
    return number


@dataclass(frozen=True)
class ResultClaim:
    """A member's signed result of its table, its fields checked."""

    statement: Statement
    table: int
    table_key: bytes
    seats: tuple[bytes, ...]
    games: tuple[GameRecord, ...]
    session_results: tuple[bytes, ...]

    def facts(self) -> tuple[object, ...]:
        return (self.table, self.table_key, self.seats, self.games)


def read_result(statement: Statement) -> ResultClaim:
    body = statement.body()
    if statement.kind != RESULT or len(body) != 7:
        raise TournamentError("a table result is [event, round, table, id, seats, games, ...]")
    _, _, table, key, seats, games, frames = body
    if type(table) is not int or not isinstance(key, bytes) or not isinstance(seats, list):
        raise TournamentError(f"a malformed table result by {statement.by()}")
    if not isinstance(games, list) or not isinstance(frames, list):
        raise TournamentError(f"a malformed table result by {statement.by()}")
    if not all(isinstance(s, bytes) for s in seats) or not all(
        isinstance(f, bytes) for f in frames
    ):
        raise TournamentError(f"a malformed table result by {statement.by()}")
    try:
        records = tuple(GameRecord.from_wire(g) for g in games)
    except TallyError as error:
        raise TournamentError(f"the table result by {statement.by()}: {error}") from None
    return ResultClaim(statement, table, key, tuple(seats), records, tuple(frames))


def _check_session_results(claim: ResultClaim) -> None:
    """The session results a claim carries are signed by the table's players and say what
    the claim says (a claim that alters a loss no longer matches them)."""
    for frame in claim.session_results:
        try:
            result = open_result(frame)
        except TallyError as error:
            raise TournamentError(f"the table result by {claim.statement.by()}: {error}") from None
        if result.signer not in claim.seats or result.session != claim.table_key:
            raise TournamentError(
                f"the table result by {claim.statement.by()} carries a session result of "
                "another table"
            )
        if result.seats != claim.seats or result.games != claim.games:
            raise TournamentError(
                f"the table result by {claim.statement.by()} differs from the session result "
                f"its table signed"
            )


def check_claim(
    entry: EntryList,
    round_number: int,
    table: int,
    members: Sequence[bytes],
    claim: ResultClaim,
    expected: bytes | None = None,
) -> None:
    """:class:`TournamentError` unless ``claim`` is a member's result of this very table
    (its id is the one the event, round and table give) with the table's players."""
    author = entry.entrant(claim.statement.author).label()
    if claim.statement.author not in members:
        raise TournamentError(
            f"{author} signed a result of table {table + 1}, where it does not sit"
        )
    if expected is None:
        expected = expected_table_id(entry, round_number, table, members)
    if claim.table_key != expected:
        raise TournamentError(
            f"the result of table {table + 1} of round {round_number} by {author} is of another "
            "table or evening (its id is not this table's)"
        )
    if sorted(claim.seats) != sorted(members):
        raise TournamentError(f"the result by {author} seats other players than table {table + 1}")
    _check_session_results(claim)


def table_outcome(
    entry: EntryList,
    round_number: int,
    table: int,
    members: Sequence[bytes],
    claims: Sequence[ResultClaim],
) -> TableResult:
    """The table's games as its members signed them: counted when more than half of its
    members signed the same result and none signed another; else no result (a table whose
    members disagree, or that left too few signed results, scores nothing that round)."""
    facts: dict[tuple[object, ...], ResultClaim] = {}
    expected = expected_table_id(entry, round_number, table, members)
    for claim in claims:
        check_claim(entry, round_number, table, members, claim, expected)
        facts.setdefault(claim.facts(), claim)
    signers = {c.statement.author for c in claims}
    if len(facts) != 1 or 2 * len(signers) <= len(members):
        return TableResult(tuple(members), None)
    (claim,) = facts.values()
    return TableResult(claim.seats, claim.games)


# ---------------------------------------------------------------------- the record


@dataclass
class Stage:
    """One stage of a round: the director's closure, whether it counts yet, and refusals."""

    closure: Statement | None = None
    items: list[Statement] = field(default_factory=list)  # what the closure counts
    acked: set[bytes] = field(default_factory=set)
    needed: set[bytes] = field(default_factory=set)

    @property
    def closed(self) -> bool:
        return self.closure is not None and self.needed <= self.acked


@dataclass
class RoundState:
    number: int
    stages: dict[str, Stage] = field(default_factory=lambda: {s: Stage() for s in STAGES})
    commit_set: CommitSet | None = None
    draw: Draw | None = None
    tables: list[tuple[bytes, ...]] | None = None
    result: RoundResult | None = None
    rows: list[Row] | None = None  # the standings after this round
    published: bytes | None = None  # the digest the director signed
    where: dict[int, tuple[bytes, int]] = field(default_factory=dict)  # table -> (host, port)
    final: bool = False  # the final table of the best N (no draw)


@dataclass
class EventState:
    """What the statements of an event establish (:func:`follow`)."""

    entry: EntryList | None = None
    acked: set[bytes] = field(default_factory=set)
    rounds: list[RoundState] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # who sat a round out, and why
    successor: bytes | None = None  # who directs from ``since`` on (a succession counts)
    since: Point | None = None

    def closer(self, round_number: int, stage: str) -> bytes:
        """Whose closure of a stage counts: the director's, or from a succession's stage on,
        the successor's."""
        assert self.entry is not None
        since = self.since
        if self.successor is not None and since is not None:
            return self.successor if point_of(round_number, stage) >= since else self.entry.director
        return self.entry.director

    @property
    def entry_closed(self) -> bool:
        return self.entry is not None and self.acked >= set(self.entry.entrant_keys())

    def standing(self) -> list[Row] | None:
        """The last published standings."""
        done = [r for r in self.rounds if r.rows is not None and r.published is not None]
        return done[-1].rows if done else None

    def finished(self) -> bool:
        if self.entry is None:
            return False
        spec = self.entry.spec
        total = spec.rounds + (1 if spec.final_size else 0)
        return len(self.rounds) == total and self.rounds[-1].published is not None


class EventRecord:
    """Every statement of one event, once each, in the order they arrived."""

    def __init__(self) -> None:
        self.statements: dict[bytes, Statement] = {}
        self.followed: tuple[tuple[bytes, ...], EventState] | None = None  # follow's last

    def add(self, statement: Statement) -> bool:
        """Keep ``statement``; whether it is new."""
        key = item_hash(statement)
        if key in self.statements:
            return False
        self.statements[key] = statement
        return True

    def discard(self, statement: Statement) -> None:
        """Forget ``statement`` (one found not to follow with the others)."""
        self.statements.pop(item_hash(statement), None)

    def of(self, kind: str, round_number: int | None = None) -> list[Statement]:
        return [
            s
            for s in self.statements.values()
            if s.kind == kind and (round_number is None or round_number == round_of(s))
        ]

    def __len__(self) -> int:
        return len(self.statements)


def follow(record: EventRecord) -> EventState:
    """What the record establishes, as far as it goes; :class:`TournamentError` for a
    statement that does not verify against the others (a closure by somebody other than the
    director, an item it names that nobody has, published standings that differ).

    The answer is kept until the record changes (the carrier asks after every message, and
    a round's seating is a search): treat it as read-only."""
    held = tuple(record.statements)
    if record.followed is not None and record.followed[0] == held:
        return record.followed[1]
    state = _follow(record)
    record.followed = (held, state)
    return state


def _follow(record: EventRecord) -> EventState:
    state = EventState()
    entries = record.of(ENTRY)
    if not entries:
        return state
    if len({s.author for s in entries}) != 1:
        raise TournamentError(
            "entry lists signed by two keys: only the event's director signs one (a successor "
            "or an entrant cannot)"
        )
    if len({s.to_bytes() for s in entries}) != 1:
        raise TournamentError("the director signed two different entry lists for one event")
    entry = read_entry(entries[0])
    state.entry = entry
    acks = [a for a in record.of(ACK) if a.event() == entry.event]
    missing = missing_acknowledgements(entry, acks)
    state.acked = set(entry.entrant_keys()) - {e.key for e in missing}
    for statement in record.statements.values():
        if statement.event() != entry.event:
            raise TournamentError(
                f"a {statement.kind} statement by {statement.by()} of another event"
            )
    if not state.entry_closed:
        return state
    _succession(record, state)
    if state.conflicts:
        return state
    spec = entry.spec
    names = [(e.key, e.name) for e in entry.entrants]
    total = spec.rounds + (1 if spec.final_size else 0)
    for number in range(1, total + 1):
        final = number > spec.rounds
        current = RoundState(number, final=final)
        state.rounds.append(current)
        if not _follow_round(record, state, current, final, names):
            break
        if current.published is None:
            break
    return state


def _succession(record: EventRecord, state: EventState) -> None:
    """Which succession counts, if any: acknowledged by more than half of the entrants (its
    author's counts), and not voided by a closure of the director's of its stage or a later
    one. Two directors' closures of one stage, and two successions that each count, are
    conflicts, named."""
    assert state.entry is not None
    entry = state.entry
    everyone = set(entry.entrant_keys())
    counting: list[tuple[Statement, set[bytes]]] = []
    acks = record.of(SUCCEED_ACK)
    for succession in record.of(SUCCEED):
        if succession.author not in everyone:
            raise TournamentError(f"a succession by {succession.by()}, who is not an entrant")
        number, stage, _ = succession_body(succession)
        named = item_hash(succession)
        ackers = {succession.author} | {
            a.author for a in acks if a.author in everyone and a.body()[1:] == [named]
        }
        if 2 * len(ackers) <= len(everyone):
            continue  # not (yet) acknowledged by more than half of the entrants
        since = point_of(number, stage)
        by_successor = closed_from(record, succession.author, since)
        for r, kind in closed_from(record, entry.director, since):
            if (r, kind) in by_successor:
                state.conflicts.append(
                    f"two directors closed the {kind} of round {r}: the director and its "
                    f"successor {entry.entrant(succession.author).label()}"
                )
        if voided(record, entry.director, succession):
            state.notes.append(
                f"the succession by {entry.entrant(succession.author).label()} from the "
                f"{stage} of round {number} does not count: the director closed that stage "
                "or a later one"
            )
            continue
        counting.append((succession, ackers))
    if len(counting) > 1:
        twice = set.intersection(*(ackers for _, ackers in counting))
        state.conflicts.append(
            "two successions acknowledged by more than half of the entrants each: "
            + ", ".join(entry.entrant(k).label() for k in entry.entrant_keys() if k in twice)
            + " acknowledged more than one"
        )
    elif counting:
        (succession, _), = counting
        number, stage, _ = succession_body(succession)
        state.successor, state.since = succession.author, point_of(number, stage)


def _stage(record: EventRecord, state: EventState, number: int, stage: str) -> Stage:
    assert state.entry is not None
    entry = state.entry
    found = Stage()
    closures = [c for c in record.of(CLOSE, number) if closure_body(c)[2] == stage]
    closer = state.closer(number, stage)
    for closure in closures:
        if closure.author != closer:
            raise TournamentError(
                f"a closure of the {stage} of round {number} signed by {closure.by()}, who "
                "does not direct it"
                + ("" if state.successor is not None else " (the director does)")
            )
    if len({c.to_bytes() for c in closures}) > 1:
        raise TournamentError(
            f"the director closed the {stage} of round {number} twice, differently: an equivocation"
        )
    if not closures:
        return found
    closure = closures[0]
    found.closure = closure
    _, _, _, hashes = closure_body(closure)
    for h in hashes:
        item = record.statements.get(h)
        if item is None:
            raise TournamentError(
                f"the closure of the {stage} of round {number} counts a statement this "
                "record does not hold"
            )
        if item.kind != STAGE_KIND[stage] or round_of(item) != number:
            raise TournamentError(
                f"the closure of the {stage} of round {number} counts a {item.kind}"
            )
        found.items.append(item)
    found.needed = {item.author for item in found.items}
    closed = item_hash(closure)
    for ack in record.of(CLOSE_ACK, number):
        body = ack.body()
        if body == [entry.event, number, stage, closed]:
            entry.entrant(ack.author)
            found.acked.add(ack.author)
    for refusal in record.of(REFUSE, number):
        body = refusal.body()
        if len(body) == 5 and body[2] == stage and body[3] == closed:
            state.conflicts.append(
                f"{entry.entrant(refusal.author).label()} refused the director's closure of "
                f"the {stage} of round {number}: it leaves out that entrant's own {stage[:-1]}"
            )
    return found


def _follow_round(
    record: EventRecord,
    state: EventState,
    current: RoundState,
    final: bool,
    names: Sequence[tuple[bytes, str]],
) -> bool:
    """Fill ``current`` from the record; whether the round got as far as its standings."""
    assert state.entry is not None
    entry = state.entry
    spec = entry.spec
    number = current.number
    previous = [r for r in state.rounds if r is not current]
    for host_says in record.of(TABLE, number):
        body = host_says.body()
        if len(body) == 4 and type(body[2]) is int and type(body[3]) is int:
            current.where[body[2]] = (host_says.author, body[3])
    for stage in STAGES:
        current.stages[stage] = _stage(record, state, number, stage)
    if state.conflicts:
        return False
    if final:
        last = previous[-1].rows if previous else None
        if last is None:
            return False
        current.tables = [best(last, spec.final_size)]
    else:
        commits = current.stages[COMMITS]
        if not commits.closed:
            return False
        current.commit_set = commit_set(entry, number, commits.items)
        reveals = current.stages[REVEALS]
        if not reveals.closed:
            return False
        current.draw = draw(entry, current.commit_set, reveals.items)
        why = (
            (current.draw.absent, "no commitment in the commit set"),
            (current.draw.withheld, "no reveal against the commit set"),
            (current.draw.cheated, "revealed a secret that does not open its commitment: a cheat"),
        )
        for keys, reason in why:
            state.notes += [
                f"round {number}: {entry.entrant(k).label()} sits the round out ({reason})"
                for k in keys
            ]
        met = meetings([r.tables or [] for r in previous])
        players = current.draw.players
        current.tables = (
            seat_tables(players, current.draw.seed, met, spec.seats_per_table, spec.rules())
            if players
            else []
        )
    results = current.stages[RESULTS]
    if not results.closed:
        return False
    assert current.tables is not None
    claims = [read_result(s) for s in results.items]
    tables = tuple(
        table_outcome(entry, number, t, members, [c for c in claims if c.table == t])
        for t, members in enumerate(current.tables)
    )
    stray = [c for c in claims if not 0 <= c.table < len(current.tables)]
    if stray:
        raise TournamentError(f"round {number}: a result of a table the round does not have")
    rounds = [r.result for r in previous if r.result is not None and not r.final]
    if final:
        current.result = RoundResult(b"", tables, (), games_of_round(entry, number))
        current.rows = standings(names, rounds, tables[0])
    else:
        assert current.draw is not None
        current.result = RoundResult(
            current.draw.seed, tables, current.draw.forfeits(), spec.games_per_round
        )
        current.rows = standings(names, [*rounds, current.result])
    publishers = {entry.director, state.successor}
    published = [s for s in record.of(STANDINGS, number) if s.author in publishers]
    if len({s.to_bytes() for s in published if s.author == entry.director}) > 1:
        raise TournamentError(f"the director published two standings after round {number}")
    for statement in published:  # the director's, or its successor's: the same digest
        said = statement.body()[2] if len(statement.body()) == 3 else b""
        if said != digest(current.rows):
            raise TournamentError(
                f"the standings the director published after round {number} differ from "
                "those the signed results give"
            )
        current.published = said
    return True
