"""What an event shows and leaves behind, drawn from what its statements establish: the
standings board's state while it runs, and the report written into every member's folder
at its end.

Both come from :func:`~moska_p2p.tournament.record.follow`'s state alone (the entry list
and the rounds' signed results), so every member whose record holds the same statements
draws the same board and writes the same report, and ``moska tournament report`` draws it
again from any folder that verifies.
"""

from __future__ import annotations

from pathlib import Path

from ..net.persist import write_private
from ..protocol.tally import is_session_file
from ..tournament import (
    DONE,
    NO_RESULT,
    PLAYING,
    BoardState,
    EventReport,
    RoundResult,
    TableResult,
    TableStatus,
    event_report,
    standings,
    standings_table,
)
from ..tournament.record import EventState

REPORT_FILES = ("report.txt", "report.html", "losses.svg")


def board_state(state: EventState, upto: int | None = None) -> BoardState | None:
    """The board of the event as far as ``state`` goes (``upto``: as it stood at the end of
    that round): the last published standings (all at nought before the first), and the
    tables of the round seated last, each playing, done (its round's results are counted)
    or without a result (``None``: no entry list yet)."""
    entry = state.entry
    if entry is None:
        return None
    spec = entry.spec
    rounds = state.rounds if upto is None else state.rounds[:upto]
    finished = state.finished() and len(rounds) == len(state.rounds)
    published = [r for r in rounds if r.published is not None and r.rows is not None]
    rows = published[-1].rows if published else None
    if rows is None:
        rows = standings([(e.key, e.name) for e in entry.entrants], [])
    seated = [r for r in rounds if r.tables is not None]
    if not seated:
        return BoardState(spec, tuple(rows), finished=finished)
    current = seated[-1]
    assert current.tables is not None
    games = spec.final_games if current.final else spec.games_per_round
    counted = current.result.tables if current.result is not None else None
    tables = []
    for number, members in enumerate(current.tables, start=1):
        if counted is None:
            tables.append(TableStatus(number, members, 0, games, PLAYING))
            continue
        result = counted[number - 1].games
        if result is None:
            tables.append(TableStatus(number, members, 0, games, NO_RESULT))
        else:
            tables.append(TableStatus(number, members, min(len(result), games), games, DONE))
    return BoardState(spec, tuple(rows), current.number, tuple(tables), finished)


def standings_text(board: BoardState) -> list[str]:
    """The standings as the folder's ``standings.txt`` keeps them: plain English lines, as
    the report's (a file passed round the club, not a screen in its reader's language)."""
    if board.finished:
        title = "final standings"
    elif board.at_final:
        title = "standings after the final table"
    else:
        title = f"standings after round {board.round} of {board.spec.rounds}"
    return [f"{board.spec.name}: {title} (points are losses, fewer is better)", "",
            *standings_table(board.rows)]  # fmt: skip


def event_results(state: EventState) -> tuple[list[RoundResult], TableResult | None]:
    """The published rounds' results and the final table's (``None``: not played)."""
    rounds: list[RoundResult] = []
    final: TableResult | None = None
    for current in state.rounds:
        if current.published is None or current.result is None:
            break
        if current.final:
            final = current.result.tables[0]
        else:
            rounds.append(current.result)
    return rounds, final


def report_of(state: EventState) -> EventReport:
    """The event's report (:func:`~moska_p2p.tournament.report.event_report`) from its
    published rounds."""
    entry = state.entry
    if entry is None:
        raise ValueError("an event without an entry list has no report")
    rounds, final = event_results(state)
    return event_report(entry.spec, entry.entrants, rounds, final, event=entry.event)


def write_report(state: EventState, folder: Path) -> list[Path]:
    """Write the report's files (:data:`REPORT_FILES`) into ``folder``, each atomically;
    their paths."""
    paths = []
    for name, text in report_of(state).files().items():
        write_private(folder / name, text.encode())
        paths.append(folder / name)
    return paths


def game_transcripts(folder: Path) -> list[Path]:
    """Every game transcript an event folder holds (its tables' games, not the session
    results), in round and table order."""
    found = folder.glob("round-*/table-*/*.moska")
    return sorted((p for p in found if not is_session_file(p)), key=_table_order)


def _table_order(path: Path) -> tuple[int, int, str]:
    table, round_ = path.parent.name, path.parent.parent.name
    number = (table.rpartition("-")[2], round_.rpartition("-")[2])
    if not all(part.isdigit() for part in number):
        return (0, 0, str(path))
    return (int(number[1]), int(number[0]), path.name)
