"""Card masks and their subsets: who beats whom (RULES C3, MM4), cards of given ranks, and
the groups of equal rank an opening is made of (M7), listed, counted and sampled uniformly.

Pure functions and tables on 52-bit card masks (bit ``4 * rank + suit``), shared by move
generation and by the rules' checks.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from ..cards import HIGHER_IN_SUIT, NUM_CARDS, RANK_MASKS, SUIT_MASKS
from .constants import QUEEN_OF_SPADES
from .moves import Move, attack_move, new_attack


def beat_table(trump: int, mustamaija: bool) -> tuple[int, ...]:
    """``table[a]``: the mask of every card that beats card ``a`` (RULES C3, MM4)."""
    trumps = SUIT_MASKS[trump]
    rows = []
    for a in range(NUM_CARDS):
        beaters = HIGHER_IN_SUIT[a]
        if a & 3 != trump:
            beaters |= trumps
        if mustamaija:
            beaters = 0 if a == QUEEN_OF_SPADES else beaters & ~(1 << QUEEN_OF_SPADES)
        rows.append(beaters)
    return tuple(rows)


BEAT = {(t, mm): beat_table(t, mm) for t in range(4) for mm in (False, True)}


# CARDS_OF_RANKS[ranks]: every card whose rank is in the 13-bit rank set ``ranks``.
CARDS_OF_RANKS: tuple[int, ...] = tuple(
    sum(RANK_MASKS[r] for r in range(13) if ranks >> r & 1) for ranks in range(1 << 13)
)
_NIBBLE_LOW = sum(1 << (4 * r) for r in range(13))  # bit 0 of every rank's nibble
_PAIR_BITS = _NIBBLE_LOW * 0x5
_COUNT_BITS = _NIBBLE_LOW * 0x3


def cards_of_ranks(ranks: int) -> int:
    """Every card whose rank is in the 13-bit rank set ``ranks``."""
    return CARDS_OF_RANKS[ranks]


def ranks_with_pairs(mask: int) -> int:
    """Nibble-low bits of the ranks of which ``mask`` holds two cards or more (branch-free
    popcount of every 4-bit rank group at once)."""
    pairs = (mask & _PAIR_BITS) + ((mask >> 1) & _PAIR_BITS)
    counts = (pairs & _COUNT_BITS) + ((pairs >> 2) & _COUNT_BITS)
    return ((counts >> 1) | (counts >> 2)) & _NIBBLE_LOW


# _SUBGROUPS[nibble]: the sub-groups of two cards or more of one rank's 4-bit group.
_SUBGROUPS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sub for sub in range(1, 16) if sub & nibble == sub and sub.bit_count() >= 2)
    for nibble in range(16)
)


def bit_list(mask: int) -> list[int]:
    """The card codes of ``mask``, lowest first."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


# _SUBGROUP_CARDS[rank][nibble]: (size, cards) of every sub-group of two or more cards of
# that rank whose 4-bit suit pattern is ``nibble``, cards in canonical order.
_SUBGROUP_CARDS: tuple[tuple[tuple[tuple[int, tuple[int, ...]], ...], ...], ...] = tuple(
    tuple(
        tuple(
            (sub.bit_count(), tuple(4 * r + b for b in range(4) if sub >> b & 1))
            for sub in _SUBGROUPS[nibble]
        )
        for nibble in range(16)
    )
    for r in range(13)
)


def group_options(mask: int) -> list[tuple[tuple[int, tuple[int, ...]], ...]]:
    """Per rank in ``mask`` holding two cards or more: every sub-group of two or more (M7)."""
    flags = ranks_with_pairs(mask)
    options = []
    while flags:
        low = flags & -flags
        shift = low.bit_length() - 1
        options.append(_SUBGROUP_CARDS[shift >> 2][(mask >> shift) & 0xF])
        flags ^= low
    return options


def group_attacks(mask: int, room: int) -> list[tuple[int, ...]]:
    """Every union of rank groups of two or more cards (M7 c), at most ``room`` cards, each
    as its cards in canonical order (groups are visited rank by rank, so concatenation keeps
    the order)."""
    options = group_options(mask)
    if not options:
        return []
    if len(options) == 1:
        return [cards for size, cards in options[0] if size <= room]
    result: list[tuple[int, ...]] = []
    last = len(options)

    def extend(i: int, acc: tuple[int, ...], size: int) -> None:
        for j in range(i, last):
            for sub_size, cards in options[j]:
                k = size + sub_size
                if k <= room:
                    combined = acc + cards
                    result.append(combined)
                    if k + 2 <= room:
                        extend(j + 1, combined, k)

    extend(0, (), 0)
    return result


Picker = Callable[[int, random.Random], Move]


def completion_table(
    options: list[tuple[tuple[int, tuple[int, ...]], ...]], room: int
) -> list[list[int]]:
    """``ways[j][c]``: choices of at most one sub-group from each of ``options[j:]`` (none
    included) with at most ``c`` cards in all: the counting behind uniform sampling."""
    last = len(options)
    ways = [[0] * (room + 1) for _ in range(last + 1)]
    ways[last] = [1] * (room + 1)
    for j in range(last - 1, -1, -1):
        below = ways[j + 1]
        row = ways[j]
        for c in range(room + 1):
            total = below[c]
            for size, _ in options[j]:
                if size <= c:
                    total += below[c - size]
            row[c] = total
    return ways


def unrank_groups(
    options: list[tuple[tuple[int, tuple[int, ...]], ...]],
    ways: list[list[int]],
    room: int,
    index: int,
) -> Move:
    """The ``index``-th choice in the order of :func:`_completion_table` (0 is "none")."""
    cards: tuple[int, ...] = ()
    cap = room
    for j, choices in enumerate(options):
        below = ways[j + 1]
        if index < below[cap]:
            continue  # no group of this rank
        index -= below[cap]
        for size, group in choices:
            if size > cap:
                continue
            if index < below[cap - size]:
                cards += group
                cap -= size
                break
            index -= below[cap - size]
    return new_attack(cards)


def pick_subset(cards: list[int], sizes: list[int], index: int, rng: random.Random) -> Move:
    """A uniformly random non-empty subset: its size by ``index`` (weighted by C(m, k))."""
    k = 1
    while index >= sizes[k]:
        index -= sizes[k]
        k += 1
    chosen = sorted(rng.sample(cards, k))
    return attack_move(tuple(chosen))
