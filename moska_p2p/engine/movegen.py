"""Move generation: every legal move of the seat to act (RULES C5, C6), listed, counted or
drawn uniformly at random.

Functions over a :class:`~.state.GameState`. :func:`legal_moves` lists moves straight from
the hand's bitmask and the bout's state: openings (M7, D4, MM3, K3), kills (C3, M9),
throw-ins and gifts (M10, M12, D4, D6), self execution (M20, K5), transfers (D11), begging
(K4), the trump exchange (M4, D8). Where the list would be huge (a big hand's openings)
:func:`random_move` and :func:`count_legal_moves` work on counts instead (:mod:`.cardsets`).
"""

from __future__ import annotations

import random
from itertools import combinations
from math import comb

from ..cards import RANK_MASKS, SUIT_MASKS, make_card
from .cardsets import (
    Picker,
    bit_list,
    cards_of_ranks,
    completion_table,
    group_attacks,
    group_options,
    pick_subset,
    unrank_groups,
)
from .constants import (
    DEFEND,
    EXCHANGE_ROUND,
    F_DURAK,
    F_KAAVI,
    F_MOSKA,
    F_MUSTAMAIJA,
    FORCED_KILL,
    GIVE,
    OPEN,
    THROW_IN,
    TWOS,
    TWOS_MASK,
)
from .errors import HiddenCardError
from .flow import attack_room, played_ranks, self_room
from .moves import (
    ATTACK,
    ATTACK_DECK,
    ATTACK_DECK_MOVE,
    BEG,
    BEG_MOVES,
    DECK_KILL,
    DECK_KILL_MOVE,
    EXCHANGE,
    EXCHANGE_MOVE,
    KILL,
    KILL_MOVES,
    KIND_BY_NAME,
    PASS,
    PASS_MOVE,
    SELF,
    SELF_MOVES,
    SINGLE_ATTACK,
    TAKE,
    TAKE_MOVE,
    TRANSFER,
    TRANSFER_MOVES,
    TRANSFER_SHOW,
    TRANSFER_SHOW_MOVES,
    Move,
    attack_move,
    new_attack,
)
from .state import GameState


def legal_moves(g: GameState, kind: str | None = None) -> list[Move]:
    """Every legal move of the seat to act (RULES C6 text via ``str``).

    ``kind`` (``"attack"``, ``"kill"``, ...) lists that kind only, which is much cheaper
    than the whole list where openings are many (a large hand under ``limit=hand``).
    """
    seat = g.to_act_seat
    if seat < 0 or g.pending_public:
        return []
    if g.hidden[seat]:
        raise HiddenCardError(f"seat {seat}'s hand holds cards this engine cannot see")
    want = KIND_BY_NAME[kind] if kind is not None else -1
    phase = g.phase
    hand = g.hands[seat]
    moves: list[Move] = []
    if phase == DEFEND:
        if want < 0 or want == KILL:
            beat = g.beaters
            for a in g.tab_a:
                if g.live >> a & 1:
                    beaters = hand & beat[a]
                    if beaters:
                        row = KILL_MOVES[a]
                        while beaters:
                            low = beaters & -beaters
                            moves.append(row[low.bit_length() - 1])
                            beaters ^= low
        if want < 0 or want == TAKE:
            moves.append(TAKE_MOVE)
        if want < 0 or want == SELF:
            _self_moves(g, hand, moves)
        if g.rules.deck_kill == "on" and g.stock and (want < 0 or want == DECK_KILL):
            moves.append(DECK_KILL_MOVE)
        if g.rules.transfer and (want < 0 or want in (TRANSFER, TRANSFER_SHOW)):
            _transfer_moves(g, seat, hand, want, moves)
        if g.family == F_KAAVI and (want < 0 or want == BEG):
            _beg_moves(g, hand, moves)
    elif phase == OPEN:
        if want < 0 or want == ATTACK:
            _opening_moves(g, hand, moves)
        if (
            (want < 0 or want == ATTACK_DECK)
            and g.stock
            and g.family in (F_MOSKA, F_KAAVI)
        ):
            moves.append(ATTACK_DECK_MOVE)
    elif phase in (THROW_IN, GIVE):
        if seat == g.defender:
            if want < 0 or want == SELF:
                _self_moves(g, hand, moves)
        elif want < 0 or want == ATTACK:
            _add_moves(g, hand, moves)
        if want < 0 or want == PASS:
            moves.append(PASS_MOVE)
    elif phase == FORCED_KILL:
        if want < 0 or want == KILL:
            c = g.turned
            for a in g.tab_a:
                if g.live >> a & 1 and g.beaters[a] >> c & 1:
                    moves.append(KILL_MOVES[a][c])
    elif phase == EXCHANGE_ROUND:
        if want < 0 or want == PASS:
            moves.append(PASS_MOVE)
    elif phase == TWOS:
        if want < 0 or want == ATTACK:
            _subsets(hand & TWOS_MASK, attack_room(g), moves)
        if want < 0 or want == PASS:
            moves.append(PASS_MOVE)
    if (want < 0 or want == EXCHANGE) and may_exchange(g, seat):
        moves.append(EXCHANGE_MOVE)
    return moves


def _opening_moves(g: GameState, hand: int, moves: list[Move]) -> None:
    """Openings: one card, or groups of equal rank within the limit (M7, D4); one
    suit in Mustamaija (MM3); against the dealer, any twos with them (K3)."""
    room = attack_room(g)
    fam = g.family
    if fam == F_DURAK:
        for c in bit_list(hand):
            moves.append(SINGLE_ATTACK[c])  # D4
        return
    if fam == F_MUSTAMAIJA:
        for s in range(4):
            _subsets(hand & SUIT_MASKS[s], room, moves)  # MM3
        return
    if fam == F_KAAVI and g.defender == g.dealer:
        twos = hand & TWOS_MASK
        if twos:
            rest = hand & ~TWOS_MASK
            bases = [(), *((c,) for c in bit_list(rest)), *group_attacks(rest, room)]
            bits = bit_list(twos)
            two_sets = [combo for k in range(len(bits) + 1) for combo in combinations(bits, k)]
            for base in bases:
                for t in two_sets:
                    if (base or t) and len(base) + len(t) <= room:
                        moves.append(attack_move(t + base))  # twos rank lowest
            return
    for c in bit_list(hand):
        moves.append(SINGLE_ATTACK[c])  # M7 (a)
    if room >= 2:
        for cards in group_attacks(hand, room):
            moves.append(new_attack(cards))  # M7 (c)


def _add_moves(g: GameState, hand: int, moves: list[Move]) -> None:
    """Throw-in (M10, D4) and giving (M12, D6) attacks: played ranks, within the limit."""
    allowed = hand & cards_of_ranks(played_ranks(g))
    if g.family == F_KAAVI and g.defender == g.dealer:
        allowed |= hand & TWOS_MASK  # K3
    if allowed:
        _subsets(allowed, attack_room(g), moves)


def _subsets(mask: int, room: int, moves: list[Move]) -> None:
    """Every non-empty subset of ``mask`` of at most ``room`` cards, as attacks."""
    bits = bit_list(mask)
    top = min(room, len(bits))
    for c in bits:
        moves.append(SINGLE_ATTACK[c])
    for k in range(2, top + 1):
        for combo in combinations(bits, k):
            moves.append(attack_move(combo))


def _self_moves(g: GameState, hand: int, moves: list[Move]) -> None:
    """Self execution (M20): a card of a played rank killed from the defender's own
    hand; in Kaavi only the dealer's own twos (K5)."""
    fam = g.family
    if fam == F_KAAVI:
        # K5: the dealer's own twos, while live cards are on the table.
        if g.defender == g.dealer and g.phase == DEFEND and len(g.stock) >= 2:
            for a in bit_list(hand & TWOS_MASK):
                for k in bit_list(hand & g.beaters[a]):
                    moves.append(SELF_MOVES[a][k])
        return
    if g.rules.self_execution == "off" or not self_room(g):
        return
    beat = g.beaters
    for a in bit_list(hand & cards_of_ranks(played_ranks(g))):
        for k in bit_list(hand & beat[a]):
            moves.append(SELF_MOVES[a][k])


def _transfer_moves(g: GameState, seat: int, hand: int, want: int, moves: list[Move]) -> None:
    """D11: transfers to the next defender, by laying or by showing a trump."""
    rank = transfer_rank(g)
    if rank < 0:
        return
    nd = g.defender_for(seat)
    cap = g.first_cap if g.bout_number == 1 else 6
    count = len(g.tab_a)
    same = hand & RANK_MASKS[rank]
    if (want < 0 or want == TRANSFER) and count + 1 <= min(cap, g.hand_size(nd)):
        for c in bit_list(same):
            moves.append(TRANSFER_MOVES[c])
    if (
        (want < 0 or want == TRANSFER_SHOW)
        and g.rules.transfer_show_trump == "on"
        and not g.transfer_shown >> seat & 1
        and count <= min(cap, g.hand_size(nd))
    ):
        trump_card = same & SUIT_MASKS[g.trump]
        if trump_card:
            moves.append(TRANSFER_SHOW_MOVES[trump_card.bit_length() - 1])


def transfer_rank(g: GameState) -> int:
    """D11: the one rank of the attack, while no card has been beaten; else -1."""
    if any(k >= 0 for k in g.tab_k):
        return -1
    ranks = g.ranks_att
    if ranks & (ranks - 1):
        return -1
    return ranks.bit_length() - 1


def _beg_moves(g: GameState, hand: int, moves: list[Move]) -> None:
    """K4: exchange the killer of a killed attack card once for another that beats it."""
    beat = g.beaters
    for i, a in enumerate(g.tab_a):
        if g.tab_k[i] >= 0 and not g.begged[i] and not g.own_twos[i]:
            for k in bit_list(hand & beat[a]):
                moves.append(BEG_MOVES[a][k])


def may_exchange(g: GameState, seat: int) -> bool:
    """M4, D8: the low trump may be swapped for the indicator while it is in the stock."""
    if g.exchange_pos < 0 or g.trump < 0:
        return False
    fam = g.family
    if fam == F_MOSKA:
        mode = g.rules.trump_exchange
        if mode == "never" or (mode == "before-first-attack" and g.phase != EXCHANGE_ROUND):
            return False
    low = make_card(g.low_trump_rank, g.trump)
    if not g.hands[seat] >> low & 1:
        return False
    return not (fam == F_DURAK and g.picked >> low & 1)  # D8: not picked up


def random_move(g: GameState, rng: random.Random) -> Move:
    """A legal move chosen uniformly at random, without listing every move where the
    list would be large (an opening from a big hand, a throw-in of many cards)."""
    plan = _combinatorial_plan(g)
    if plan is None:
        return rng.choice(legal_moves(g))
    total = sum(count for count, _ in plan)
    index = rng.randrange(total)
    for count, pick in plan:
        if index < count:
            return pick(index, rng)
        index -= count
    raise AssertionError("unreachable: index within total")  # pragma: no cover


def count_legal_moves(g: GameState) -> int:
    """``len(legal_moves(g))``, computed without building the list where it is big."""
    plan = _combinatorial_plan(g)
    if plan is None:
        return len(legal_moves(g))
    return sum(count for count, _ in plan)


def _combinatorial_plan(g: GameState) -> list[tuple[int, Picker]] | None:
    """For decisions whose moves are subsets of a hand: blocks of (count, picker) that
    together list every legal move once; ``None`` where listing is cheap anyway."""
    seat = g.to_act_seat
    if seat < 0 or g.hidden[seat] or g.pending_public:
        return None
    phase = g.phase
    hand = g.hands[seat]
    plan: list[tuple[int, Picker]] = []
    if phase == OPEN and g.family == F_MOSKA:
        singles = bit_list(hand)
        room = min(attack_room(g), len(singles))  # no opening holds more than the hand
        plan.append((len(singles), lambda i, rng: SINGLE_ATTACK[singles[i]]))
        if room >= 2:
            options = group_options(hand)
            ways = completion_table(options, room)
            plan.append(
                (ways[0][room] - 1, lambda i, rng: unrank_groups(options, ways, room, i + 1))
            )
        if g.stock:
            plan.append((1, lambda i, rng: ATTACK_DECK_MOVE))
    elif phase in (THROW_IN, GIVE) and seat != g.defender:
        allowed = hand & cards_of_ranks(played_ranks(g))
        if g.family == F_KAAVI and g.defender == g.dealer:
            allowed |= hand & TWOS_MASK  # K3
        cards = bit_list(allowed)
        top = min(attack_room(g), len(cards))
        sizes = [comb(len(cards), k) for k in range(top + 1)]
        plan.append((sum(sizes[1:]), lambda i, rng: pick_subset(cards, sizes, i, rng)))
        plan.append((1, lambda i, rng: PASS_MOVE))
    else:
        return None
    if may_exchange(g, seat):
        plan.append((1, lambda i, rng: EXCHANGE_MOVE))
    return plan

