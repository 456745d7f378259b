"""An event's folder: everything an entrant (or the director) keeps of an event, and the
check that proves its standings from it.

::

    EVENT_FOLDER/
      event.moska-event        every signed statement of the event, in the order it came
                               (the settings and entry list, acknowledgements, each round's
                               commitments, reveals, closures, table results, standings)
      round-1/table-2/         the transcripts of the tables this member played:
        NAME.moska             a single game, or NAME-g1.moska ... and NAME-session.moska
      standings.txt            the last standings, as text, for a person

The statements file is rewritten whole (a temporary file renamed over it, as
:func:`moska_p2p.net.persist.write_private` does), so a crash leaves the old one or the new
one, never half of either. :func:`verify_event` recomputes the draw of every round, the
seating, each table's result and the standings from the signed statements alone, checks the
tables' transcripts the folder holds against the results counted, and refuses an event whose
published standings differ.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path

from ..crypto.identity import fingerprint_of
from ..net.persist import write_private
from ..protocol.frames import FrameDecoder, FrameError, pack, unpack
from ..protocol.tally import (
    GameRecord,
    TallyError,
    Transcript,
    check_session,
    file_digest,
    is_session_file,
    read_session_file,
)
from ..protocol.transcript import INCOMPLETE, INVALID, Report, verify_transcript
from ..tournament import Row, Statement, TournamentError, read
from ..tournament.record import EventRecord, EventState, follow, table_nonce

EVENT_FILE = "event.moska-event"
STANDINGS_FILE = "standings.txt"
MAGIC = "moska-event"

VALID, NOT_AN_EVENT = "valid", "not-an-event"


class FolderError(ValueError):
    """An event folder that cannot be read (not an event's, or a damaged file)."""


def is_event_folder(path: Path) -> bool:
    return path.is_dir() and (path / EVENT_FILE).is_file()


def table_folder(folder: Path, round_number: int, table: int) -> Path:
    return folder / f"round-{round_number}" / f"table-{table + 1}"


def save(folder: Path, event: bytes, record: EventRecord) -> None:
    """Write every statement of ``record`` to the folder, atomically."""
    header = pack({MAGIC: 1, "event": event})
    parts = [struct.pack(">I", len(header)), header]
    for statement in record.statements.values():
        data = statement.to_bytes()
        parts += [struct.pack(">I", len(data)), data]
    write_private(folder / EVENT_FILE, b"".join(parts))


def load(folder: Path) -> tuple[bytes, EventRecord]:
    """(event id, record) of a folder; every statement's signature checked."""
    path = folder / EVENT_FILE
    try:
        data = path.read_bytes()
    except OSError as error:
        raise FolderError(f"{path}: {error.strerror or error}") from None
    decoder = FrameDecoder()
    try:
        records = decoder.feed(data)
    except FrameError as error:
        raise FolderError(f"{path.name}: {error}") from None
    if decoder.pending:
        raise FolderError(f"{path.name}: truncated (its last record is cut)")
    try:
        header = unpack(records[0]) if records else None
    except FrameError as error:
        raise FolderError(f"{path.name}: bad header: {error}") from None
    if not isinstance(header, dict) or header.get(MAGIC) != 1:
        raise FolderError(f"{path.name}: not a moska-p2p event file")
    event = header.get("event")
    if not isinstance(event, bytes):
        raise FolderError(f"{path.name}: bad header")
    record = EventRecord()
    for number, item in enumerate(records[1:], start=1):
        try:
            record.add(read(item))
        except TournamentError as error:
            raise TournamentError(f"{path.name}, statement {number}: {error}") from None
    return event, record


def write_standings(folder: Path, lines: list[str]) -> None:
    write_private(folder / STANDINGS_FILE, ("\n".join(lines) + "\n").encode())


@dataclass
class EventReport:
    """What :func:`verify_event` found: ``status`` is valid, invalid, incomplete or
    not-an-event; ``fault`` says why when it is not valid."""

    status: str
    fault: str | None = None
    state: EventState | None = None
    lines: list[str] = field(default_factory=list)  # what was checked, for a person

    @property
    def rows(self) -> list[Row] | None:
        return self.state.standing() if self.state is not None else None


def verify_event(folder: Path) -> EventReport:
    """Recompute the event from the folder (see the module docstring)."""
    if not is_event_folder(folder):
        return EventReport(NOT_AN_EVENT, f"{folder} holds no {EVENT_FILE}")
    try:
        event, record = load(folder)
        state = follow(record)
    except FolderError as error:
        return EventReport(NOT_AN_EVENT, str(error))
    except TournamentError as error:
        return EventReport(INVALID, str(error))
    if state.entry is None or state.entry.event != event:
        return EventReport(INVALID, "the folder holds no entry list of its event")
    report = EventReport(VALID, state=state, lines=list(state.notes))
    if state.conflicts:
        report.status, report.fault = INVALID, "; ".join(state.conflicts)
        return report
    try:
        _check_tables(folder, state, report)
    except TournamentError as error:
        report.status, report.fault = INVALID, str(error)
        return report
    if report.status == VALID and not state.finished():
        played = sum(1 for r in state.rounds if r.published is not None)
        report.status = INCOMPLETE
        report.fault = f"the event stopped after {played} published round(s)"
    return report


def _check_tables(folder: Path, state: EventState, report: EventReport) -> None:
    """Every table transcript the folder holds: valid, of that table (its nonce is the
    one the event, round and table give), and saying what the counted result says."""
    assert state.entry is not None
    event = state.entry.event
    for current in state.rounds:
        tables = current.tables or []
        for number, members in enumerate(tables):
            where = table_folder(folder, current.number, number)
            if not where.is_dir():
                continue
            counted = (
                current.result.tables[number].games
                if current.result is not None and number < len(current.result.tables)
                else None
            )
            games = _games_of(where, table_nonce(event, current.number, number), members, report)
            if games is None:
                continue
            if counted is not None and games != counted:
                raise TournamentError(
                    f"round {current.number}, table {number + 1}: the result counted differs "
                    "from the table's transcripts in this folder"
                )
            report.lines.append(
                f"round {current.number}, table {number + 1}: transcripts verify"
                + (", and say what the standings count" if counted is not None else "")
            )


def _games_of(
    where: Path, nonce: bytes, members: tuple[bytes, ...], report: EventReport
) -> tuple[GameRecord, ...] | None:
    """The games a table's transcripts in ``where`` record (None: nothing complete there)."""
    checked: list[Transcript] = []
    results: list[bytes] = []
    for path in sorted(where.glob("*.moska")):
        if is_session_file(path):
            try:
                results += read_session_file(path)[2]
            except TallyError as error:
                raise TournamentError(f"{path}: {error}") from None
            continue
        found: Report = verify_transcript(path)
        if found.status == INCOMPLETE:
            report.status = INCOMPLETE
            report.fault = f"{path}: {found.fault}"
            return None
        if not found.valid or found.config is None:
            raise TournamentError(f"{path}: {found.fault}")
        if found.config.table_nonce != nonce or sorted(found.roster) != sorted(members):
            raise TournamentError(f"{path} is a game of another table than this one")
        checked.append(Transcript(found, file_digest(path), path.name))
    if not checked:
        return None
    if checked[0].report.config is not None and checked[0].report.config.in_session:
        check = check_session(checked, results)
        if check.fault is not None or check.tally is None:
            raise TournamentError(f"{where}: {check.fault}")
        return tuple(check.tally.games)
    return counted_games(checked[0].report)


def counted_games(report: Report) -> tuple[GameRecord, ...]:
    """What a single game's transcript counts for its table: its game, once the game had
    its seats (one stopped before, at the table's start, counts none). The one rule both
    of a member's signed result (:func:`~.tables.result_of`) and of the folder's check of
    it, so that the two cannot disagree."""
    return (game_of(report),) if report.valid and report.seats else ()


def game_of(report: Report) -> GameRecord:
    """A single game's record, as a session would count it (:mod:`~.protocol.tally`)."""
    return GameRecord(
        1,
        bytes.fromhex(report.game_id or ""),
        bytes.fromhex(report.final_state_hash or ""),
        tuple(sorted(report.losers)) if report.verdict is not None else tuple(report.losers),
        report.verdict is not None,
        report.dealer,
    )


def statements_of(record: EventRecord) -> list[Statement]:
    return list(record.statements.values())


def take_over(
    source: Path, target: Path, key: bytes, *, succeed: bool = False
) -> tuple[bytes, EventRecord]:
    """The director's folder is lost, its key is not: continue the event from a member's
    folder ``source`` into ``target`` (a new folder, or one that holds this event already:
    the two are joined). Only the signed statements are taken (the member's transcripts are
    its own), and only from a folder that verifies so far, of an event whose entry closed
    and that the key ``key`` directs (with ``succeed``: an entrant's key, which succeeds a
    director whose key is lost too); :class:`FolderError` says why not. The event id and
    the record ``target`` now holds."""
    if source.resolve() == target.resolve():
        raise FolderError(
            f"{source} is the folder the director resumes from anyway: leave out --from"
            if not succeed
            else f"{source} is an entrant's folder: the successor's is another (--folder)"
        )
    found = verify_event(source)
    if found.status == NOT_AN_EVENT:
        raise FolderError(f"{source}: {found.fault}")
    if found.status == INVALID or found.state is None or found.state.entry is None:
        raise FolderError(f"{source} does not verify ({found.fault}): the event is not continued")
    entry = found.state.entry
    entrant = key in entry.entrant_keys()
    if succeed and not entrant:
        raise FolderError(
            f"only an entrant of the event of {source} succeeds its director: this identity "
            f"({fingerprint_of(key)}) is "
            + ("its director: leave out --succeed" if key == entry.director else "not one")
        )
    if not succeed and entry.director != key:
        raise FolderError(
            f"{source} holds an event directed by {fingerprint_of(entry.director)}, not by "
            f"this identity ({fingerprint_of(key)}): only its director continues it"
            + (
                " (an entrant succeeds a director whose key is lost with --succeed)"
                if entrant
                else ""
            )
        )
    if not found.state.entry_closed:
        raise FolderError(f"{source} holds an event whose entry never closed: start a new one")
    event, record = load(source)
    if is_event_folder(target):
        held_event, held = load(target)
        if held_event != event:
            raise FolderError(f"{target} holds another event: name a new --folder")
        for statement in record.statements.values():
            held.add(statement)
        try:
            follow(held)
        except TournamentError as error:
            raise FolderError(f"{source} and {target} disagree: {error}") from None
        record = held
    target.mkdir(parents=True, exist_ok=True)
    save(target, event, record)
    return event, record
