"""Seating the rounds (as many different opponents as the numbers allow) and the standings
(losses, the pedestal and the reindeer's egg of RULES M24, tie-breaks, forfeits)."""

from __future__ import annotations

import hashlib
import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from moska_p2p.engine import make_rules
from moska_p2p.protocol.tally import GameRecord
from moska_p2p.tournament import (
    RoundResult,
    TableResult,
    TournamentError,
    best,
    digest,
    meetings,
    repeats,
    seat_tables,
    standings,
    table_sizes,
)

MOSKA = make_rules("moska")


def keys(count: int) -> list[bytes]:
    return [hashlib.sha256(bytes([i])).digest() for i in range(count)]


def seed(n: int) -> bytes:
    return hashlib.sha256(b"seed" + bytes([n])).digest()


def test_table_sizes_are_as_even_as_the_numbers_allow() -> None:
    assert table_sizes(12, 4, MOSKA) == [4, 4, 4]
    assert table_sizes(13, 4, MOSKA) == [4, 3, 3, 3]
    assert table_sizes(5, 6, MOSKA) == [5]
    assert table_sizes(3, 2, MOSKA) == [3]  # nobody sits out: one table of three
    with pytest.raises(TournamentError, match="at least 2"):
        table_sizes(1, 4, MOSKA)
    teams = make_rules("durak-teams")
    with pytest.raises(TournamentError, match="even tables"):
        table_sizes(10, 4, teams)  # 4, 3, 3 or 5, 5
    assert table_sizes(12, 4, teams) == [4, 4, 4]


@given(st.integers(2, 40), st.integers(2, 6), st.integers(0, 255))
def test_every_player_sits_at_exactly_one_table(count: int, seats: int, n: int) -> None:
    players = keys(count)
    tables = seat_tables(players, seed(n), {}, seats, MOSKA)
    assert sorted(k for t in tables for k in t) == sorted(players)
    assert [len(t) for t in tables] == table_sizes(count, seats, MOSKA)
    assert all(2 <= len(t) <= 6 for t in tables)


def test_the_seating_is_a_function_of_the_seed() -> None:
    players = keys(12)
    assert seat_tables(players, seed(1), {}, 4, MOSKA) == seat_tables(
        players, seed(1), {}, 4, MOSKA
    )
    different = {tuple(seat_tables(players, seed(n), {}, 4, MOSKA)) for n in range(10)}
    assert len(different) > 5


def optimum(players: list[bytes], seats: int, met: dict[frozenset[bytes], int]) -> int:
    """The least cost over every seating (small events only)."""
    sizes = table_sizes(len(players), seats, MOSKA)
    best_cost = None
    for order in itertools.permutations(players):
        tables, at = [], 0
        for size in sizes:
            tables.append(order[at : at + size])
            at += size
        cost = repeats(tables, met)
        best_cost = cost if best_cost is None else min(best_cost, cost)
    assert best_cost is not None
    return best_cost


@pytest.mark.parametrize(("count", "seats"), [(6, 3), (8, 4), (7, 3)])
def test_later_rounds_meet_new_opponents_as_well_as_any_seating_could(
    count: int, seats: int
) -> None:
    players = keys(count)
    history: list[list[tuple[bytes, ...]]] = []
    for round_number in range(4):
        met = meetings(history)
        tables = seat_tables(players, seed(round_number), met, seats, MOSKA)
        assert repeats(tables, met) == optimum(players, seats, met), round_number
        history.append(tables)


def test_twelve_at_fours_meet_every_possible_new_face_in_round_two() -> None:
    """12 players, 3 tables of 4: after round 1 each round-2 table must hold two players of one
    round-1 table (4 players, 3 old tables), so 3 repeats is the least; the draw finds it."""
    players = keys(12)
    first = seat_tables(players, seed(1), {}, 4, MOSKA)
    second = seat_tables(players, seed(2), meetings([first]), 4, MOSKA)
    assert repeats(second, meetings([first])) == 3


def game(number: int, *losers: int, forfeit: bool = False) -> GameRecord:
    return GameRecord(number, bytes(32), b"" if forfeit else b"s", losers, forfeit, 0)


NAMES = [(k, f"p{i}") for i, k in enumerate(keys(4))]
K = [k for k, _ in NAMES]


def test_losses_are_points_and_the_pedestal_and_egg_are_counted_as_m24_says() -> None:
    table = TableResult(tuple(K), (game(1, 0), game(2, 0), game(3, 0), game(4, 1)))
    rows = standings(NAMES, [RoundResult(seed(1), (table,), games_per_round=4)])
    by = {r.name: r for r in rows}
    assert (by["p0"].points, by["p0"].korokkeella, by["p0"].poronmuna) == (3, 1, 1)
    assert by["p1"].points == 1 and by["p2"].points == 0
    assert [r.name for r in rows][-2:] == ["p1", "p0"]


def test_a_game_without_a_result_is_nobodys_point_and_a_table_without_one_scores_nothing() -> None:
    lost_contact = game(1, forfeit=True)  # a forfeit naming nobody: lost contact
    a = TableResult((K[0], K[1]), (lost_contact, game(2, 1)))
    b = TableResult((K[2], K[3]), None)
    rows = standings(NAMES, [RoundResult(seed(1), (a, b), games_per_round=2)])
    by = {r.name: r for r in rows}
    assert by["p0"].points == 0 and by["p0"].games == 1
    assert by["p2"].no_result == [1] and by["p2"].points == 0


def test_sitting_a_round_out_at_the_draw_forfeits_every_game_of_it() -> None:
    a = TableResult((K[0], K[1], K[2]), (game(1, 0), game(2, 1), game(3, 2)))
    rows = standings(NAMES, [RoundResult(seed(1), (a,), forfeited=(K[3],), games_per_round=3)])
    assert rows[-1].name == "p3" and rows[-1].points == 3 and rows[-1].forfeits == 3


def test_ties_break_by_egg_then_pedestal_then_forfeits_then_lot() -> None:
    a = TableResult(tuple(K), (game(1, 0), game(2, 0), game(3, 1), game(4, 2, forfeit=True)))
    rows = standings(NAMES, [RoundResult(seed(1), (a,), games_per_round=4)])
    # p1 and p2 each lost one; p2's was a forfeit: p1 ranks above p2. p0 lost two in a row.
    assert [r.name for r in rows] == ["p3", "p1", "p2", "p0"]
    tie = TableResult(tuple(K), ())
    lots = {tuple(r.name for r in standings(NAMES, [RoundResult(seed(n), (tie,))]))
            for n in range(8)}
    assert len(lots) > 1  # a tie left to lot depends on the seed nobody chose


def test_the_final_table_ranks_its_players_first() -> None:
    r1 = TableResult(tuple(K), (game(1, 3), game(2, 2)))
    final = TableResult((K[0], K[1]), (game(1, 0),))
    rows = standings(NAMES, [RoundResult(seed(1), (r1,), games_per_round=2)], final)
    assert [r.name for r in rows][:2] == ["p1", "p0"] and rows[1].final_points == 1
    before_final = standings(NAMES, [RoundResult(seed(1), (r1,), games_per_round=2)])
    assert set(best(before_final, 2)) == {K[0], K[1]}  # the two without a loss


def test_one_changed_loss_changes_the_digest() -> None:
    a = TableResult(tuple(K), (game(1, 0), game(2, 1)))
    b = TableResult(tuple(K), (game(1, 0), game(2, 2)))
    one = digest(standings(NAMES, [RoundResult(seed(1), (a,), games_per_round=2)]))
    two = digest(standings(NAMES, [RoundResult(seed(1), (b,), games_per_round=2)]))
    assert one != two


def test_a_table_seating_a_stranger_or_someone_twice_is_refused() -> None:
    stranger = hashlib.sha256(b"x").digest()
    with pytest.raises(TournamentError, match="not an entrant"):
        standings(NAMES, [RoundResult(seed(1), (TableResult((K[0], stranger), ()),))])
    with pytest.raises(TournamentError, match="twice"):
        standings(NAMES, [RoundResult(seed(1), (TableResult((K[0], K[1]), ()),
                                                TableResult((K[1], K[2]), ())))])
    with pytest.raises(TournamentError, match="seat the table does not have"):
        standings(NAMES, [RoundResult(seed(1), (TableResult((K[0], K[1]), (game(1, 2),)),))])
