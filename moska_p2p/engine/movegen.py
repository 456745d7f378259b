"""Move generation: every legal move of the seat to act (RULES C5, C6), listed, counted or
drawn uniformly at random.

:class:`MovesMixin` lists moves straight from the hand's bitmask and the bout's state:
openings (M7, D4, MM3, K3), kills (C3, M9), throw-ins and gifts (M10, M12, D4, D6), self
execution (M20, K5), transfers (D11), begging (K4), the trump exchange (M4, D8). Where the
list would be huge (a big hand's openings) :meth:`~MovesMixin.random_move` and
:meth:`~MovesMixin.count_legal_moves` work on counts instead (:mod:`.cardsets`).
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
from .flow import FlowMixin
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


class MovesMixin(FlowMixin):
    """Legal moves (a layer of :class:`~.game.Game`)."""

    __slots__ = ()

    def legal_moves(self, kind: str | None = None) -> list[Move]:
        """Every legal move of the seat to act (RULES C6 text via ``str``).

        ``kind`` (``"attack"``, ``"kill"``, ...) lists that kind only, which is much cheaper
        than the whole list where openings are many (a large hand under ``limit=hand``).
        """
        seat = self.to_act_seat
        if seat < 0 or self._pending_public:
            return []
        if self.hidden[seat]:
            raise HiddenCardError(f"seat {seat}'s hand holds cards this engine cannot see")
        want = KIND_BY_NAME[kind] if kind is not None else -1
        phase = self.phase
        hand = self.hands[seat]
        moves: list[Move] = []
        if phase == DEFEND:
            if want < 0 or want == KILL:
                beat = self._beat
                for a in self.tab_a:
                    if self.live >> a & 1:
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
                self._self_moves(hand, moves)
            if self.rules.deck_kill == "on" and self.stock and (want < 0 or want == DECK_KILL):
                moves.append(DECK_KILL_MOVE)
            if self.rules.transfer and (want < 0 or want in (TRANSFER, TRANSFER_SHOW)):
                self._transfer_moves(seat, hand, want, moves)
            if self.family == F_KAAVI and (want < 0 or want == BEG):
                self._beg_moves(hand, moves)
        elif phase == OPEN:
            if want < 0 or want == ATTACK:
                self._opening_moves(hand, moves)
            if (
                (want < 0 or want == ATTACK_DECK)
                and self.stock
                and self.family in (F_MOSKA, F_KAAVI)
            ):
                moves.append(ATTACK_DECK_MOVE)
        elif phase in (THROW_IN, GIVE):
            if seat == self.defender:
                if want < 0 or want == SELF:
                    self._self_moves(hand, moves)
            elif want < 0 or want == ATTACK:
                self._add_moves(hand, moves)
            if want < 0 or want == PASS:
                moves.append(PASS_MOVE)
        elif phase == FORCED_KILL:
            if want < 0 or want == KILL:
                c = self.turned
                for a in self.tab_a:
                    if self.live >> a & 1 and self._beat[a] >> c & 1:
                        moves.append(KILL_MOVES[a][c])
        elif phase == EXCHANGE_ROUND:
            if want < 0 or want == PASS:
                moves.append(PASS_MOVE)
        elif phase == TWOS:
            if want < 0 or want == ATTACK:
                self._subsets(hand & TWOS_MASK, self._room(), moves)
            if want < 0 or want == PASS:
                moves.append(PASS_MOVE)
        if (want < 0 or want == EXCHANGE) and self._may_exchange(seat):
            moves.append(EXCHANGE_MOVE)
        return moves

    def _opening_moves(self, hand: int, moves: list[Move]) -> None:
        """Openings: one card, or groups of equal rank within the limit (M7, D4); one
        suit in Mustamaija (MM3); against the dealer, any twos with them (K3)."""
        room = self._room()
        fam = self.family
        if fam == F_DURAK:
            for c in bit_list(hand):
                moves.append(SINGLE_ATTACK[c])  # D4
            return
        if fam == F_MUSTAMAIJA:
            for s in range(4):
                self._subsets(hand & SUIT_MASKS[s], room, moves)  # MM3
            return
        if fam == F_KAAVI and self.defender == self.dealer:
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

    def _add_moves(self, hand: int, moves: list[Move]) -> None:
        """Throw-in (M10, D4) and giving (M12, D6) attacks: played ranks, within the limit."""
        allowed = hand & cards_of_ranks(self._played_ranks())
        if self.family == F_KAAVI and self.defender == self.dealer:
            allowed |= hand & TWOS_MASK  # K3
        if allowed:
            self._subsets(allowed, self._room(), moves)

    @staticmethod
    def _subsets(mask: int, room: int, moves: list[Move]) -> None:
        """Every non-empty subset of ``mask`` of at most ``room`` cards, as attacks."""
        bits = bit_list(mask)
        top = min(room, len(bits))
        for c in bits:
            moves.append(SINGLE_ATTACK[c])
        for k in range(2, top + 1):
            for combo in combinations(bits, k):
                moves.append(attack_move(combo))

    def _self_moves(self, hand: int, moves: list[Move]) -> None:
        """Self execution (M20): a card of a played rank killed from the defender's own
        hand; in Kaavi only the dealer's own twos (K5)."""
        fam = self.family
        if fam == F_KAAVI:
            # K5: the dealer's own twos, while live cards are on the table.
            if self.defender == self.dealer and self.phase == DEFEND and len(self.stock) >= 2:
                for a in bit_list(hand & TWOS_MASK):
                    for k in bit_list(hand & self._beat[a]):
                        moves.append(SELF_MOVES[a][k])
            return
        if self.rules.self_execution == "off" or not self._self_room():
            return
        beat = self._beat
        for a in bit_list(hand & cards_of_ranks(self._played_ranks())):
            for k in bit_list(hand & beat[a]):
                moves.append(SELF_MOVES[a][k])

    def _transfer_moves(self, seat: int, hand: int, want: int, moves: list[Move]) -> None:
        """D11: transfers to the next defender, by laying or by showing a trump."""
        rank = self._transfer_rank()
        if rank < 0:
            return
        nd = self._defender_for(seat)
        cap = self._first_cap if self.bout_number == 1 else 6
        count = len(self.tab_a)
        same = hand & RANK_MASKS[rank]
        if (want < 0 or want == TRANSFER) and count + 1 <= min(cap, self._size(nd)):
            for c in bit_list(same):
                moves.append(TRANSFER_MOVES[c])
        if (
            (want < 0 or want == TRANSFER_SHOW)
            and self.rules.transfer_show_trump == "on"
            and not self.transfer_shown >> seat & 1
            and count <= min(cap, self._size(nd))
        ):
            trump_card = same & SUIT_MASKS[self.trump]
            if trump_card:
                moves.append(TRANSFER_SHOW_MOVES[trump_card.bit_length() - 1])

    def _transfer_rank(self) -> int:
        """D11: the one rank of the attack, while no card has been beaten; else -1."""
        if any(k >= 0 for k in self.tab_k):
            return -1
        ranks = self.ranks_att
        if ranks & (ranks - 1):
            return -1
        return ranks.bit_length() - 1

    def _beg_moves(self, hand: int, moves: list[Move]) -> None:
        """K4: exchange the killer of a killed attack card once for another that beats it."""
        beat = self._beat
        for i, a in enumerate(self.tab_a):
            if self.tab_k[i] >= 0 and not self._begged[i] and not self._own_twos[i]:
                for k in bit_list(hand & beat[a]):
                    moves.append(BEG_MOVES[a][k])

    def _may_exchange(self, seat: int) -> bool:
        """M4, D8: the low trump may be swapped for the indicator while it is in the stock."""
        if self._exch_pos < 0 or self.trump < 0:
            return False
        fam = self.family
        if fam == F_MOSKA:
            mode = self.rules.trump_exchange
            if mode == "never" or (mode == "before-first-attack" and self.phase != EXCHANGE_ROUND):
                return False
        low = make_card(self._low_trump_rank, self.trump)
        if not self.hands[seat] >> low & 1:
            return False
        return not (fam == F_DURAK and self.picked >> low & 1)  # D8: not picked up

    # ------------------------------------------------ without listing (search, the arena)

    def random_move(self, rng: random.Random) -> Move:
        """A legal move chosen uniformly at random, without listing every move where the
        list would be large (an opening from a big hand, a throw-in of many cards)."""
        plan = self._combinatorial_plan()
        if plan is None:
            return rng.choice(self.legal_moves())
        total = sum(count for count, _ in plan)
        index = rng.randrange(total)
        for count, pick in plan:
            if index < count:
                return pick(index, rng)
            index -= count
        raise AssertionError("unreachable: index within total")  # pragma: no cover

    def count_legal_moves(self) -> int:
        """``len(self.legal_moves())``, computed without building the list where it is big."""
        plan = self._combinatorial_plan()
        if plan is None:
            return len(self.legal_moves())
        return sum(count for count, _ in plan)

    def _combinatorial_plan(self) -> list[tuple[int, Picker]] | None:
        """For decisions whose moves are subsets of a hand: blocks of (count, picker) that
        together list every legal move once; ``None`` where listing is cheap anyway."""
        seat = self.to_act_seat
        if seat < 0 or self.hidden[seat] or self._pending_public:
            return None
        phase = self.phase
        hand = self.hands[seat]
        plan: list[tuple[int, Picker]] = []
        if phase == OPEN and self.family == F_MOSKA:
            singles = bit_list(hand)
            room = min(self._room(), len(singles))  # no opening holds more than the hand
            plan.append((len(singles), lambda i, rng: SINGLE_ATTACK[singles[i]]))
            if room >= 2:
                options = group_options(hand)
                ways = completion_table(options, room)
                plan.append(
                    (ways[0][room] - 1, lambda i, rng: unrank_groups(options, ways, room, i + 1))
                )
            if self.stock:
                plan.append((1, lambda i, rng: ATTACK_DECK_MOVE))
        elif phase in (THROW_IN, GIVE) and seat != self.defender:
            allowed = hand & cards_of_ranks(self._played_ranks())
            if self.family == F_KAAVI and self.defender == self.dealer:
                allowed |= hand & TWOS_MASK  # K3
            cards = bit_list(allowed)
            top = min(self._room(), len(cards))
            sizes = [comb(len(cards), k) for k in range(top + 1)]
            plan.append((sum(sizes[1:]), lambda i, rng: pick_subset(cards, sizes, i, rng)))
            plan.append((1, lambda i, rng: PASS_MOVE))
        else:
            return None
        if self._may_exchange(seat):
            plan.append((1, lambda i, rng: EXCHANGE_MOVE))
        return plan
