"""The standings: who lost most, counted from the tables' signed session results.

Moska has no winner, only a loser (RULES M13), and a club evening ends with "who lost most
tonight": an entrant's **points are its losses**, and fewer is better. What counts, round by
round (docs/TOURNAMENT.md says the same for people):

* every game an entrant lost at its table is a point; a forfeit (a cheat convicted, a signed
  leave, an abandonment the table corroborated) is a loss like any other, counted apart too;
* a game that ended without a result (lost contact nobody could corroborate, PROTOCOL.md
  §15.4) is nobody's point;
* a table that left no signed session result scores nothing for that round, and its entrants
  are shown with "no result" for it;
* an entrant that sat a round out at the draw (no commitment, a withheld or false reveal,
  :mod:`.draw`) forfeits it: a point for each game of the round, every one a forfeit;
* *korokkeella* (two losses in a row) and *poronmuna* (three) are counted within each table's
  session, as RULES M24 counts them (seed 000).

Ties are broken, in order, by fewer *poronmuna*, fewer *korokkeella*, fewer forfeits, more
games with a result played, then by lot: the hash of the last round's seed and the key, which
nobody chose (:mod:`.draw`). After a final table, its entrants come first, ordered by their
losses at the final (the same tie-breaks within it), then everyone else as before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..protocol.frames import pack
from ..protocol.tally import GameRecord, Tally
from .spec import TournamentError

STANDINGS_TAG = b"moska-p2p/tournament/standings\n"


@dataclass(frozen=True)
class TableResult:
    """One table of one round: its entrants in seat order and the games its signed session
    result counts (``None``: the table left no signed result)."""

    members: tuple[bytes, ...]
    games: tuple[GameRecord, ...] | None


@dataclass(frozen=True)
class RoundResult:
    seed: bytes
    tables: tuple[TableResult, ...]
    forfeited: tuple[bytes, ...] = ()  # sat the round out at the draw
    games_per_round: int = 1


@dataclass
class Row:
    key: bytes
    name: str
    points: int = 0
    games: int = 0  # games with a result it played
    forfeits: int = 0
    korokkeella: int = 0
    poronmuna: int = 0
    no_result: list[int] = field(default_factory=list)  # rounds its table left no result
    final_points: int | None = None

    def to_wire(self) -> list[object]:
        return [
            self.key,
            self.name,
            self.points,
            self.games,
            self.forfeits,
            self.korokkeella,
            self.poronmuna,
            list(self.no_result),
            -1 if self.final_points is None else self.final_points,
        ]


def _count_table(rows: dict[bytes, Row], table: TableResult, number: int) -> None:
    if table.games is None:
        for key in table.members:
            rows[key].no_result.append(number)
        return
    tally = Tally([rows[key].name for key in table.members])
    for game in table.games:
        if any(not 0 <= seat < len(table.members) for seat in game.losers):
            raise TournamentError(f"round {number}: a game names a seat the table does not have")
        tally.record(game)
        decided = not (game.forfeit and not game.losers)
        for key in table.members:
            rows[key].games += decided
    for seat, key in enumerate(table.members):
        row = rows[key]
        row.points += tally.losses[seat]
        row.forfeits += tally.forfeits[seat]
        row.korokkeella += tally.korokkeella[seat]
        row.poronmuna += tally.poronmuna[seat]


def standings(
    names: Sequence[tuple[bytes, str]],
    rounds: Sequence[RoundResult],
    final: TableResult | None = None,
) -> list[Row]:
    """The standings after ``rounds`` (and the final table, if played), best first."""
    rows = {key: Row(key, name) for key, name in names}
    if len(rows) != len(names):
        raise TournamentError("an entrant is listed twice")
    for number, result in enumerate(rounds, start=1):
        seated: list[bytes] = [k for t in result.tables for k in t.members]
        for key in [*seated, *result.forfeited]:
            if key not in rows:
                raise TournamentError(f"round {number} seats a key that is not an entrant")
        if len(set(seated)) != len(seated) or set(seated) & set(result.forfeited):
            raise TournamentError(f"round {number} seats an entrant twice")
        for table in result.tables:
            _count_table(rows, table, number)
        for key in result.forfeited:
            rows[key].points += result.games_per_round
            rows[key].forfeits += result.games_per_round
    lot = rounds[-1].seed if rounds else b""

    def rank(row: Row) -> tuple[object, ...]:
        return (
            row.points,
            row.poronmuna,
            row.korokkeella,
            row.forfeits,
            -row.games,
            hashlib.sha256(lot + row.key).digest(),
        )

    order = sorted(rows.values(), key=rank)
    if final is None:
        return order
    if not set(final.members) <= set(rows) or len(set(final.members)) != len(final.members):
        raise TournamentError("the final table seats a key that is not an entrant")
    finalists = {key: Row(key, rows[key].name) for key in final.members}
    _count_table(finalists, final, len(rounds) + 1)
    place = {row.key: i for i, row in enumerate(order)}
    for key, scored in finalists.items():
        rows[key].final_points = scored.points
        rows[key].no_result += scored.no_result

    def final_rank(row: Row) -> tuple[object, ...]:
        scored = finalists[row.key]
        return (scored.points, scored.poronmuna, scored.korokkeella, place[row.key])

    at_final = sorted((rows[k] for k in final.members), key=final_rank)
    return at_final + [row for row in order if row.key not in finalists]


def best(rows: Sequence[Row], count: int) -> tuple[bytes, ...]:
    """The keys of the ``count`` best entrants: who plays the final table."""
    if count > len(rows):
        raise TournamentError(f"a final table of {count} from {len(rows)} entrants")
    return tuple(row.key for row in rows[:count])


def digest(rows: Sequence[Row]) -> bytes:
    """What a published standings board is compared by: a hash of every row, in order."""
    return hashlib.sha256(STANDINGS_TAG + pack([row.to_wire() for row in rows])).digest()
