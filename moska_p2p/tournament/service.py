"""The two roles of an event, sans-IO: statements in, statements out.

The carrier (:mod:`moska_p2p.event`) feeds every statement it receives to the role's record
and asks :meth:`Director.step` or :meth:`EntrantRole.step` what to sign next; it sends what
comes out and plays the tables :meth:`EntrantRole.table_to_play` names. Neither role keeps
anything the record does not hold, so a role rebuilt from a saved record (a crash, a
restart) carries on where it was:

* an entrant's draw secret is a hash of its own signature over the event and the round
  (Ed25519 signs deterministically), so the same key finds the same secret again, and
  nobody without the key can compute it;
* the director counts what the record holds and who is in contact (the carrier says).
  A director that starts again from a record (its own folder, or a member's when its own
  is lost) may lack a closure it signed before it stopped and some entrants hold: it signs
  no closure until it has taken every entrant's record (:meth:`Director.take_held`) or the
  stage's deadline passed, so it never signs a second, different closure of a stage that
  an entrant holds (the same items closed again give the very same statement: Ed25519
  signs deterministically).

**What the director (the star every statement passes through) can and cannot do.** It
cannot alter, forge or reorder what it carries (everything is signed by its author), nor
choose the draw (its closure of commitments or reveals counts only once every entrant whose
item it counts has acknowledged it, and an entrant whose own item it leaves out refuses it:
the event stops with the refusal on record). It *can* delay, and it can leave out an entrant
it is no longer in contact with: that entrant sits the round out. An entrant the director
cuts off cannot make its refusal reach the others through the director; its own folder keeps
it, and ``moska verify`` on that folder names the conflict.
"""

from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass

from ..crypto.identity import Identity
from .draw import commit, commit_set, reveal
from .entry import Entrant, acknowledge, close_entry
from .record import (
    COMMITS,
    RESULTS,
    REVEALS,
    STAGE_KIND,
    STAGES,
    EventRecord,
    EventState,
    RoundState,
    acknowledge_closure,
    acknowledge_succession,
    check_claim,
    close,
    closure_body,
    decisions_before,
    follow,
    item_hash,
    point_of,
    publish,
    read_result,
    refuse_closure,
    succeed,
    succession_body,
    voided,
)
from .signed import (
    ACK,
    CLOSE,
    CLOSE_ACK,
    COMMIT,
    ENTER,
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
from .spec import EventSpec, TournamentError, event_id

SECRET_KIND = "tournament/secret"
ENTRANT_KINDS = frozenset({ACK, COMMIT, REVEAL, CLOSE_ACK, REFUSE, TABLE, RESULT, SUCCEED_ACK})
"""What an entrant signs; the entry list, closures and standings are the director's."""
DIRECTOR_KINDS = frozenset({ENTRY, CLOSE, STANDINGS, SUCCEED})
"""What a director signs (a successor: its succession, closures and standings)."""


def enter(identity: Identity, event: bytes, name: str, plays: str) -> Statement:
    """An entrant's signed request to play in ``event``."""
    return sign(identity, ENTER, [event, name, plays])


def draw_secret(identity: Identity, event: bytes, round_number: int) -> bytes:
    """The entrant's secret for a round's draw: its key alone computes it, again after a
    restart."""
    signature = identity.sign(SECRET_KIND, event + struct.pack(">I", round_number))
    return hashlib.sha256(signature).digest()


def current_round(state: EventState) -> RoundState | None:
    """The round under way: the last one the record reached, unless its standings are out."""
    if not state.rounds:
        return None
    last = state.rounds[-1]
    return None if last.published is not None else last


@dataclass(frozen=True)
class TableToPlay:
    """A table this entrant sits at: its round, number and players (the host first)."""

    round_number: int
    table: int
    members: tuple[bytes, ...]

    @property
    def host(self) -> bytes:
        return self.members[0]


class Director:
    """The director's side: it collects entries, closes the entry and each stage, and
    publishes the standings. It plays no seat and draws no secret."""

    def __init__(
        self,
        identity: Identity,
        spec: EventSpec,
        nonce: bytes,
        record: EventRecord,
        wanted: int,
        director: bytes | None = None,
    ) -> None:
        self.identity = identity
        self.spec = spec
        self.nonce = nonce
        self.record = record
        self.wanted = wanted  # entrants the entry closes with
        self.director = director or identity.public_bytes  # the event's, whose key is lost
        self.succeeding = self.director != identity.public_bytes  # an entrant directs
        self.event = event_id(spec, self.director, nonce)
        self.entrants: dict[bytes, Entrant] = {}
        self.unheard: set[bytes] = set()  # entrants whose records a resumed director awaits
        self.clashes: list[str] = []  # closures of its own it was handed and did not take

    def resume(self) -> None:
        """Start again from the record (a restart, or a member's folder when the director's
        own is lost): the entry list is the record's, and no closure is signed until every
        entrant's record was taken (:meth:`take_held`) or a stage's deadline passed, since
        an entrant may hold a closure this record lacks."""
        entry = follow(self.record).entry
        if entry is not None:
            self.entrants = {e.key: e for e in entry.entrants}
            self.unheard = set(entry.entrant_keys())

    def take_held(
        self, sender: bytes, statements: list[Statement], *, last: bool = True
    ) -> list[Statement]:
        """What an entrant's record holds (``last``: the whole of it is now in), sent when it
        (re)connects: the statements new to this record that may be carried (the others are
        left out, never an error: a member may hold what the director would refuse to
        carry), the director's own (a closure it signed and lost) last, each only if the
        record still follows with it. The statements taken, to carry to everyone."""
        taken: list[Statement] = []
        directors = {self.identity.public_bytes, self.director}  # a successor's too
        ours = [s for s in statements if s.author in directors and s.kind in DIRECTOR_KINDS]
        for statement in [s for s in statements if s not in ours] + ours:
            if item_hash(statement) in self.record.statements:
                continue
            try:
                if statement in ours:
                    self._own_again(statement)
                else:
                    self.admissible(statement)
                    self.record.add(statement)
            except TournamentError:
                continue
            taken.append(statement)
        if last:
            self.unheard.discard(sender)
        return taken

    def _own_again(self, statement: Statement) -> None:
        """Take back a statement of this director's key (or, for a successor, of the
        director's) that the record lacks (signed before a restart): refused when the record
        holds another closure of its stage (two closures of one stage: the conflict a
        resumed director must never carry) or does not follow with it."""
        if statement.event() != self.event:
            raise TournamentError("a statement of another event")
        if statement.kind == CLOSE:
            _, number, stage, _ = closure_body(statement)
            for held in self.record.of(CLOSE, number):
                if closure_body(held)[2] == stage:
                    self.clashes.append(
                        f"an entrant holds another closure of the {stage} of round {number}, "
                        f"signed by {statement.by()} before this director resumed: not carried"
                    )
                    raise TournamentError(self.clashes[-1])
        self.record.add(statement)
        try:
            follow(self.record)
        except TournamentError:
            self.record.discard(statement)
            raise

    def admit(self, statement: Statement) -> Entrant:
        """An entry request: refused (an error naming why) once the list is closed to it."""
        body = statement.body()
        if statement.kind != ENTER or len(body) != 3 or body[0] != self.event:
            raise TournamentError("not an entry to this event")
        _, name, plays = body
        if not isinstance(name, str) or not isinstance(plays, str):
            raise TournamentError("an entry is [event, name, person|bot]")
        entrant = Entrant(statement.author, name, plays)
        state = follow(self.record)
        if state.entry is not None:
            return state.entry.entrant(statement.author)  # a member coming back
        if statement.author not in self.entrants and len(self.entrants) >= self.wanted:
            raise TournamentError("the entry is full")
        others = [e for k, e in self.entrants.items() if k != statement.author]
        if any(e.name.casefold() == name.casefold() for e in others):
            raise TournamentError(f"the name {name!r} is taken: enter with another --name")
        if len(others) + 1 >= self.spec.rules().min_players:  # the list's own checks, early
            close_entry(self.identity, self.spec, self.nonce, [*others, entrant])
        self.entrants[statement.author] = entrant
        return entrant

    def admissible(self, statement: Statement) -> None:
        """:class:`TournamentError` unless ``statement`` is one an entrant may add to the
        event's record: the director carries nothing that would spoil every member's record
        (a second, different commitment or reveal, an acknowledgement of another list, a
        statement only the director signs)."""
        state = follow(self.record)
        entry = state.entry
        if entry is None or statement.author not in entry.entrant_keys():
            raise TournamentError("a statement by somebody who is not an entrant")
        if statement.event() != entry.event or statement.kind not in ENTRANT_KINDS:
            raise TournamentError(f"an entrant does not sign a {statement.kind} of this event")
        body = statement.body()
        if statement.kind == ACK:
            if body != [entry.event, entry.digest()]:
                raise TournamentError(f"the acknowledgement by {statement.by()} is of another list")
            return
        if statement.kind == SUCCEED_ACK:
            if len(body) != 2 or not isinstance(body[1], bytes):
                raise TournamentError("an acknowledgement of a succession is [event, its hash]")
            return
        number = body[1] if len(body) > 1 else None
        if type(number) is not int or number < 1:
            raise TournamentError(f"a {statement.kind} by {statement.by()} names no round")
        if statement.kind == TABLE and (
            len(body) != 4 or not all(type(x) is int for x in body[2:])
        ):
            raise TournamentError("a table's address is [event, round, table, port]")
        if statement.kind in (COMMIT, REVEAL):
            try:
                if statement.kind == COMMIT:
                    commit_set(entry, number, [statement])
                elif len(body) != 4:
                    raise TournamentError("a reveal is [event, round, secret, commit set]")
            except TournamentError as error:
                raise TournamentError(f"a {statement.kind} by {statement.by()}: {error}") from None
            if any(
                s.author == statement.author and s != statement
                for s in self.record.of(statement.kind, number)
            ):
                raise TournamentError(
                    f"{entry.entrant(statement.author).label()} signed a second, different "
                    f"{statement.kind} for round {number}: not carried"
                )

    def step(self, *, deadline: bool = False) -> list[Statement]:
        """What the director signs now: a stage is closed once every entrant who owes an item
        to it has sent it, or when ``deadline`` says the stage's time is up (then with what
        is in: whoever did not answer in time is out of contact and sits the round out)."""
        state = follow(self.record)
        out: list[Statement] = []
        if state.entry is None:
            if len(self.entrants) >= self.wanted:
                entry = close_entry(
                    self.identity, self.spec, self.nonce, list(self.entrants.values())
                )
                out.append(entry.statement)
            return self._keep(out)
        if not state.entry_closed or state.conflicts or state.finished():
            return out
        me = self.identity.public_bytes
        if state.successor not in (None, me):
            return out  # a successor directs the event now
        if self.succeeding and state.successor != me:
            return self._keep(self._succession(state, deadline))
        current = current_round(state)
        if current is None:
            return out
        entry = state.entry
        everyone = set(entry.entrant_keys())
        number = current.number
        for stage in (COMMITS, REVEALS, RESULTS):
            found = current.stages[stage]
            if found.closure is not None:
                if not found.closed:
                    return out  # waiting for the acknowledgements
                continue
            if stage != RESULTS and current.final:
                continue
            items = self.record.of(STAGE_KIND[stage], number)
            if stage == RESULTS:
                items = [s for s in items if self._counts(state, current, s)]
            expected = self._expected(current, stage, everyone)
            if state.closer(number, stage) != me:
                return out  # a stage before a successor's: the director's to close
            if deadline or (expected <= {s.author for s in items} and not self.unheard):
                out.append(close(self.identity, self.event, number, stage, items))
            return self._keep(out)
        if current.rows is not None and current.published is None:
            out.append(publish(self.identity, self.event, number, current.rows))
        return self._keep(out)

    def _succession(self, state: EventState, deadline: bool) -> list[Statement]:
        """An entrant that directs in place of the director whose key is lost: its signed
        succession from the first stage nobody closed, once the records of more than half
        of the entrants are in (they may hold closures this record lacks) or the deadline
        passed; none while one of its own is still to be acknowledged."""
        assert state.entry is not None
        director, me = state.entry.director, self.identity.public_bytes
        mine = [s for s in self.record.of(SUCCEED) if s.author == me]
        if any(not voided(self.record, director, s) for s in mine):
            return []  # acknowledged by more than half of the entrants, it counts
        everyone = set(state.entry.entrant_keys())
        if 2 * len(everyone - self.unheard) <= len(everyone) and not deadline:
            return []
        current = current_round(state)
        if current is None:
            return []
        number, stage = current.number + 1, COMMITS  # every stage of this round closed
        for kind in STAGES:
            if current.stages[kind].closure is None and (kind == RESULTS or not current.final):
                number, stage = current.number, kind
                break
        held = decisions_before(self.record, director, point_of(number, stage))
        return [succeed(self.identity, self.event, number, stage, held)]

    def _counts(self, state: EventState, current: RoundState, statement: Statement) -> bool:
        """Whether a table result may be counted: a member's, of its own table of this
        round (anything else stays out of the closure, so it cannot spoil the round)."""
        assert state.entry is not None and current.tables is not None
        try:
            claim = read_result(statement)
            members = current.tables[claim.table] if 0 <= claim.table < len(current.tables) else ()
            check_claim(state.entry, current.number, claim.table, members, claim)
        except TournamentError:
            return False
        return True

    def _expected(self, current: RoundState, stage: str, everyone: set[bytes]) -> set[bytes]:
        """Who owes an item to the stage: every entrant a commitment, every committed one
        its reveal, every seated one its table's result."""
        if stage == COMMITS:
            return everyone
        if stage == REVEALS:
            assert current.commit_set is not None
            return set(current.commit_set.committed())
        return {key for table in current.tables or [] for key in table}

    def _keep(self, out: list[Statement]) -> list[Statement]:
        for statement in out:
            self.record.add(statement)
        return out


class EntrantRole:
    """An entrant's side: it acknowledges the entry list, commits and reveals, checks every
    closure against its own items, and says which table to play."""

    def __init__(self, identity: Identity, record: EventRecord) -> None:
        self.identity = identity
        self.record = record
        self.me = identity.public_bytes
        self.hub: bytes | None = None  # whose statements the carrier brings (it says)

    def step(self) -> list[Statement]:
        state = follow(self.record)
        out: list[Statement] = []
        entry = state.entry
        if entry is None or self.me not in entry.entrant_keys():
            return out
        if self.me not in state.acked:
            out.append(acknowledge(self.identity, entry))
            return self._keep(out)
        if state.conflicts:
            return out
        succession = self._succession_to_acknowledge(state)
        if succession is not None:
            out.append(acknowledge_succession(self.identity, succession))
            return self._keep(out)
        current = current_round(state)
        if current is None or not state.entry_closed:
            return out
        number = current.number
        for stage in (COMMITS, REVEALS, RESULTS):
            if current.final and stage != RESULTS:
                continue  # the final table is the best N: no draw
            found = current.stages[stage]
            mine = self._mine(stage, number)
            if (
                found.closure is not None
                and self.me not in found.acked
                and not self._refused(found.closure)
            ):
                if mine is not None and mine not in found.items:
                    out.append(refuse_closure(self.identity, found.closure, mine))
                elif mine is not None:
                    out.append(acknowledge_closure(self.identity, found.closure))
                return self._keep(out)
            if found.closure is None:
                if stage == COMMITS and not current.final and mine is None:
                    secret = draw_secret(self.identity, entry.event, number)
                    out.append(commit(self.identity, entry.event, number, secret))
                elif (
                    stage == REVEALS
                    and mine is None
                    and current.commit_set is not None
                    and self.me in current.commit_set.committed()
                ):
                    secret = draw_secret(self.identity, entry.event, number)
                    out.append(reveal(self.identity, entry.event, current.commit_set, secret))
                return self._keep(out)
            if not found.closed:
                return out
        return out

    def _succession_to_acknowledge(self, state: EventState) -> Statement | None:
        """A succession this entrant acknowledges: by the member whose hub it is connected
        to (the director is lost to it: it went to the successor), not voided by a closure
        of the director's of its stage or a later one, holding the same decisions of the
        director as this record, and no other succession acknowledged that still stands."""
        entry = state.entry
        if entry is None or self.hub is None or state.successor is not None:
            return None
        acked = {a.body()[1] for a in self.record.of(SUCCEED_ACK) if a.author == self.me}
        standing = [
            s
            for s in self.record.of(SUCCEED)
            if item_hash(s) in acked and not voided(self.record, entry.director, s)
        ]
        if standing:
            return None
        for succession in self.record.of(SUCCEED):
            if succession.author != self.hub or voided(self.record, entry.director, succession):
                continue
            number, stage, held = succession_body(succession)
            if held == decisions_before(self.record, entry.director, point_of(number, stage)):
                return succession
        return None

    def table_to_play(self) -> TableToPlay | None:
        """The table this entrant should be playing now (the round drawn, no result of its
        own sent yet)."""
        state = follow(self.record)
        current = current_round(state)
        if current is None or current.tables is None or state.conflicts:
            return None
        if current.stages[RESULTS].closure is not None:
            return None
        if self._mine(RESULTS, current.number) is not None:
            return None
        for number, members in enumerate(current.tables):
            if self.me in members:
                return TableToPlay(current.number, number, members)
        return None

    def _mine(self, stage: str, number: int) -> Statement | None:
        for statement in self.record.of(STAGE_KIND[stage], number):
            if statement.author == self.me:
                return statement
        return None

    def _refused(self, closure: Statement) -> bool:
        closed = item_hash(closure)
        return any(r.author == self.me and r.body()[3] == closed for r in self.record.of(REFUSE))

    def _keep(self, out: list[Statement]) -> list[Statement]:
        for statement in out:
            self.record.add(statement)
        return out
