"""Entrants to tables, from a round's seed: random where it may be, spread where it must be.

The seating is a pure function of the round's seed (:mod:`.draw`), the players in entry
order and who has met whom in the rounds before, so every entrant computes the same tables
and nobody (the director included) can choose them. Among the ways to seat the players it
looks for one where as few pairs as possible meet again: it starts from random seatings drawn
from the seed and improves each by swapping two players of different tables while that lowers
the cost (a pair that met ``k`` times before costs ``k**2`` when it meets again, so a third
meeting weighs more than two second ones), and keeps the cheapest. For small events that is
the optimum (tests compare it with every seating); for large ones it is close, and the
randomness of the start is what keeps it fair.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..engine import Rules
from ..protocol.drbg import drbg
from .spec import TournamentError

Pair = frozenset[bytes]
STARTS = 8
MAX_PASSES = 40


def _split(count: int, tables: int) -> list[int]:
    small, extra = divmod(count, tables)
    return [small + 1] * extra + [small] * (tables - extra)


def _fits(sizes: list[int], rules: Rules) -> bool:
    return all(
        rules.min_players <= size <= rules.max_players and not (rules.teams and size % 2)
        for size in sizes
    )


def table_sizes(count: int, seats: int, rules: Rules) -> list[int]:
    """How ``count`` players sit at tables of ``seats``: as few tables as that allows, their
    sizes as equal as possible (12 at fours: 4, 4, 4; 13: 4, 3, 3, 3). Where that leaves a
    table the preset cannot seat (3 at twos), one table fewer seats some a player more
    (one table of 3), within the preset's limits; nobody is left out of a round."""
    if count < rules.min_players:
        raise TournamentError(
            f"{count} players cannot make a table of {rules.preset} "
            f"(at least {rules.min_players})"
        )
    tables = -(-count // seats)
    for candidate in (tables, tables - 1):
        if candidate >= 1 and _fits(_split(count, candidate), rules):
            return _split(count, candidate)
    raise TournamentError(
        f"{count} players cannot sit at {rules.preset} tables of {seats}"
        + (": teams of two need even tables" if rules.teams else "")
    )


def _shuffled(items: Sequence[bytes], draw: Callable[[int], bytes]) -> list[bytes]:
    """Fisher-Yates with unbiased draws (rejection sampling) from the seed's stream."""
    out = list(items)
    for i in range(len(out) - 1, 0, -1):
        bound = i + 1
        limit = (1 << 64) - (1 << 64) % bound
        while True:
            value = int.from_bytes(draw(8), "big")
            if value < limit:
                break
        j = value % bound
        out[i], out[j] = out[j], out[i]
    return out


def _cost(table: Sequence[bytes], met: Mapping[Pair, int]) -> int:
    total = 0
    for i, a in enumerate(table):
        for b in table[i + 1 :]:
            k = met.get(frozenset((a, b)), 0)
            total += k * k
    return total


def _improve(tables: list[list[bytes]], met: Mapping[Pair, int]) -> int:
    """Swap players between tables while a swap lowers the cost (first improvement, in a
    fixed order); the final cost."""
    costs = [_cost(t, met) for t in tables]
    for _ in range(MAX_PASSES):
        improved = False
        for x in range(len(tables)):
            for y in range(x + 1, len(tables)):
                for i in range(len(tables[x])):
                    for j in range(len(tables[y])):
                        a, b = tables[x][i], tables[y][j]
                        tables[x][i], tables[y][j] = b, a
                        cx, cy = _cost(tables[x], met), _cost(tables[y], met)
                        if cx + cy < costs[x] + costs[y]:
                            costs[x], costs[y] = cx, cy
                            improved = True
                        else:
                            tables[x][i], tables[y][j] = a, b
        if not improved:
            break
    return sum(costs)


def seat_tables(
    players: Sequence[bytes],
    seed: bytes,
    met: Mapping[Pair, int],
    seats: int,
    rules: Rules,
) -> list[tuple[bytes, ...]]:
    """The round's tables: each a tuple of keys, its first the table's host."""
    if len(set(players)) != len(players):
        raise TournamentError("a player is drawn twice")
    sizes = table_sizes(len(players), seats, rules)
    stream = drbg(seed)
    best: list[list[bytes]] | None = None
    best_cost = -1
    for _ in range(STARTS):
        order = _shuffled(players, stream)
        tables, at = [], 0
        for size in sizes:
            tables.append(order[at : at + size])
            at += size
        cost = _improve(tables, met)
        if best is None or cost < best_cost:
            best, best_cost = tables, cost
        if best_cost == 0:
            break
    assert best is not None
    return [tuple(table) for table in best]


def meetings(rounds: Sequence[Sequence[Sequence[bytes]]]) -> dict[Pair, int]:
    """How often each pair sat at one table, over the given rounds' tables."""
    met: dict[Pair, int] = {}
    for tables in rounds:
        for table in tables:
            for i, a in enumerate(table):
                for b in table[i + 1 :]:
                    pair = frozenset((a, b))
                    met[pair] = met.get(pair, 0) + 1
    return met


def repeats(tables: Sequence[Sequence[bytes]], met: Mapping[Pair, int]) -> int:
    """The cost of a seating (0: nobody meets anybody again)."""
    return sum(_cost(table, met) for table in tables)
