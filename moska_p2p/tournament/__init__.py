"""A club tournament with no referee (the MM-kisat of seed 003, a club evening): the event's
settings and entry list, a draw nobody can stack, the seating of each round, and standings
anyone can recompute from the tables' signed session results; the event's report and the
state of its standings board (:mod:`.report`), and its games as rankings for the club's
ratings (:mod:`.leaderboard`).

Sans-IO like :mod:`moska_p2p.protocol`: statements in, statements and facts out; the caller
moves the bytes and keeps the files. ``docs/TOURNAMENT.md`` is the guide. ``__all__`` is what
the other packages use.
"""

from .draw import CommitSet, Draw, commit, commit_set, commitment, draw, reveal
from .entry import (
    BOT,
    PERSON,
    Entrant,
    EntryList,
    acknowledge,
    close_entry,
    missing_acknowledgements,
    read_entry,
)
from .leaderboard import RankedGame, ranked_games
from .pairing import meetings, repeats, seat_tables, table_sizes
from .record import (
    EventRecord,
    EventState,
    expected_table_id,
    follow,
    table_nonce,
    table_open,
    table_result,
    table_settings,
)
from .report import (
    DONE,
    NO_RESULT,
    PLAYING,
    BoardState,
    EventReport,
    TableStatus,
    event_report,
    ranks,
    standings_table,
    tied_by_lot,
)
from .service import Director, EntrantRole, TableToPlay, enter
from .signed import ENTER, SUCCEED, TABLE, Statement, read, sign
from .spec import EventSpec, TournamentError, event_id
from .standings import RoundResult, Row, TableResult, best, digest, standings

__all__ = [
    "BOT",
    "DONE",
    "ENTER",
    "NO_RESULT",
    "PERSON",
    "PLAYING",
    "SUCCEED",
    "TABLE",
    "BoardState",
    "CommitSet",
    "Director",
    "Draw",
    "Entrant",
    "EntrantRole",
    "EntryList",
    "EventRecord",
    "EventReport",
    "EventSpec",
    "EventState",
    "RankedGame",
    "RoundResult",
    "Row",
    "Statement",
    "TableResult",
    "TableStatus",
    "TableToPlay",
    "TournamentError",
    "acknowledge",
    "best",
    "close_entry",
    "commit",
    "commit_set",
    "commitment",
    "digest",
    "draw",
    "enter",
    "event_id",
    "event_report",
    "expected_table_id",
    "follow",
    "meetings",
    "missing_acknowledgements",
    "ranked_games",
    "ranks",
    "read",
    "read_entry",
    "repeats",
    "reveal",
    "seat_tables",
    "sign",
    "standings",
    "standings_table",
    "table_nonce",
    "table_open",
    "table_result",
    "table_settings",
    "table_sizes",
    "tied_by_lot",
]
