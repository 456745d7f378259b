"""An event's games as rankings, for the club's ratings that carry from one event to the next.

The standings rank an event by losses; a club that meets every week also wants a rating
that says how strong each member (person or bot) is over all its events, the OpenSkill
rating the arena keeps for its bots. Each game with a result is one ranking: its losers
last, everyone else of the table tied ahead of them (a draw: everyone tied), as the arena
rates a game. What is not a game between the table's players is not rated: a game that
ended without a result (contact lost, nobody's loss), a table that left no signed result,
and a round an entrant sat out at the draw (a forfeit in the standings, but nobody played
it). A forfeit at the table (a convicted cheat, a signed leave) is rated: it is a loss the
table's rules gave.

Pure: the file that keeps the ratings is :mod:`moska_p2p.ui.club_leaderboard`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .standings import RoundResult, TableResult


@dataclass(frozen=True)
class RankedGame:
    """One game as a ranking: its players in seat order and the seats that lost (last)."""

    players: tuple[bytes, ...]
    losers: tuple[int, ...]


def ranked_games(
    rounds: Sequence[RoundResult], final: TableResult | None = None
) -> list[RankedGame]:
    """Every rated game of an event, in the order played: round by round, table by table,
    game by game, then the final table's."""
    tables = [table for result in rounds for table in result.tables]
    if final is not None:
        tables.append(final)
    return [
        RankedGame(table.members, game.losers)
        for table in tables
        for game in table.games or ()
        if not (game.forfeit and not game.losers)
    ]
