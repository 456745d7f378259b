"""The bout's flow: who acts next and how a bout ends (RULES C7, M6-M13, M20-M22, D4-D10,
MM3-MM7, K1-K5).

:class:`FlowMixin` opens a bout, keeps its limit (M6, D5, MM3), runs the throw-in and giving
rounds (C7, M10, M12, D6), discards a beaten-off table or has the defender pick up (M11,
M12, D6, MM5), refills hands and finds who is out and who lost (M13, D10, MM7). Cards turned
from the stock (attack deck M7 b, deck-kill M22, Mustamaija's trump MM2, Kaavi's trump K2)
continue here once their faces are known. The moves that drive it are in :mod:`.play`.
"""

from __future__ import annotations

from ..cards import SPADES
from .constants import (
    DEFEND,
    F_DURAK,
    F_KAAVI,
    F_MOSKA,
    F_MUSTAMAIJA,
    FORCED_KILL,
    GIVE,
    L_HAND,
    L_NONE,
    L_SIX_OR_HAND,
    OPEN,
    OVER,
    THROW_IN,
    TWOS,
    UNLIMITED,
    W_KAAVI_TRUMP,
    W_MM_TRUMP,
    WAITING,
)
from .deal import DealMixin


class FlowMixin(DealMixin):
    """Bouts, rounds and the end of the game (a layer of :class:`~.game.Game`)."""

    __slots__ = ()

    def _open_bout(self, attacker: int) -> None:
        """A new bout with ``attacker`` leading against the next seat in (M5, M6, D5, D12)."""
        self.bout_number += 1
        self.attacker = attacker
        defender = self._defender_for(attacker)
        self.defender = defender
        self.tab_a = []
        self.tab_k = []
        self._begged = []
        self._own_twos = []
        self.live = 0
        self.bout_count = 0
        self.ranks_all = 0
        self.ranks_att = 0
        self.transfer_shown = 0
        self.turned = -1
        cap = 6
        if self.family == F_DURAK and self.bout_number == 1:
            cap = self._first_cap  # D5 option first_bout_limit
        self.bout_limit = min(cap, self._size(defender))
        self.phase = OPEN
        self.to_act_seat = attacker

    # ---------------------------------------------------------- limits (M6, D5, MM3, M20)

    def _room(self) -> int:
        """How many more attack cards the bout's limit allows now (M6, D5, MM3)."""
        mode = self._limit_mode
        if mode == L_SIX_OR_HAND:
            return self.bout_limit - self.bout_count
        if mode == L_HAND:
            return self._size(self.defender) - self.live.bit_count()
        if mode == L_NONE:
            return UNLIMITED
        return self._size(self.defender) if not self.stock else UNLIMITED

    def _self_room(self) -> bool:
        """M20: a self execution needs room for two cards and two cards in hand."""
        d = self.defender
        if self._size(d) < 2:
            return False
        mode = self._limit_mode
        if mode == L_SIX_OR_HAND:
            return self.bout_limit - self.bout_count >= 2
        if mode == L_HAND:
            return self._size(d) - self.live.bit_count() >= 2
        return True

    def _played_ranks(self) -> int:
        """The ranks cards may be added in: all played, or the attack's only (M10 option)."""
        return self.ranks_att if self.rules.throw_in_ranks == "attack-only" else self.ranks_all

    def _add_cards(self, seat: int, mask: int) -> None:
        """Lay attack cards from a hand onto the table (no checks)."""
        self.hands[seat] &= ~mask
        self.shown[seat] &= ~mask
        count = 0
        ranks = 0
        tab_a = self.tab_a
        tab_k = self.tab_k
        while mask:
            low = mask & -mask
            c = low.bit_length() - 1
            tab_a.append(c)
            tab_k.append(-1)
            ranks |= 1 << (c >> 2)
            mask ^= low
            count += 1
            self.live |= low
        if self.family == F_KAAVI:
            self._begged.extend([False] * count)
            self._own_twos.extend([False] * count)
        self.bout_count += count
        self.ranks_att |= ranks
        self.ranks_all |= ranks

    # ------------------------------------------------------------ the end (M13, D10, MM7)

    def _ended(self) -> bool:
        """M13, MM7: with the stock empty, empty hands are out; at most one left ends it."""
        if self.stock or self.family == F_DURAK:
            return False
        n = self.n
        out = self.out
        holders = 0
        last = -1
        for s in range(n):
            if out[s]:
                continue
            if not self.hands[s] and not self.hidden[s] and not (s == self.defender and self.live):
                out[s] = True
                continue
            holders += 1
            last = s
        if holders > 1:
            return False
        self._finish((last,) if holders else ())
        return True

    def _finish(self, losers: tuple[int, ...]) -> None:
        """The game is over with ``losers`` (empty: a draw, D10)."""
        self.loser_seats = losers
        self.phase = OVER
        self.to_act_seat = -1

    def _after_lay(self, seat: int) -> None:
        """After attack cards were laid (opening, throw-in, giving) by ``seat``."""
        fam = self.family
        if (fam in (F_MOSKA, F_KAAVI)) and seat != self.defender:
            self._draw_up(seat, self._hs)  # M8

    def _cleared(self) -> None:
        """No live card is left on the table."""
        if self.family == F_MUSTAMAIJA:
            self._beaten_off()  # MM5: the bout ends by itself
            return
        self._start_throw_in()

    # ---------------------------------------------------------- rounds (C7, M10, M12, D6)

    def _round_order(self) -> list[int]:
        """C7: the principal attacker, then clockwise from the defender's left."""
        n = self.n
        d = self.defender
        a = self.attacker
        order = [a]
        teams = self.rules.teams
        for i in range(1, n):
            s = (d + i) % n
            if s in (a, d) or (teams and s % 2 == d % 2):
                continue
            order.append(s)
        return order

    def _askable(self, seat: int) -> bool:
        """Whether ``seat`` can be asked to add cards: in, with cards in hand."""
        return not self.out[seat] and (self.hands[seat] != 0 or bool(self.hidden[seat]))

    def _start_throw_in(self) -> None:
        """M10, D4: every live card killed; the others may throw in, the defender last
        (M20 self execution), or the bout is beaten off at once (M11)."""
        if self.out[self.defender] or self._room() <= 0:
            self._beaten_off()  # M11: the limit allows no further card
            return
        order = self._round_order()
        if self.rules.self_execution != "off":
            order.append(self.defender)  # M20: the defender is asked last
        self.order = order
        self.oidx = 0
        self.phase = THROW_IN
        self._ask_throw_in()

    def _ask_throw_in(self) -> None:
        """Ask the next seat of the throw-in round that can add; none left: beaten off."""
        order = self.order
        d = self.defender
        while self.oidx < len(order):
            s = order[self.oidx]
            if s == d:
                if self._self_room():
                    self.to_act_seat = s
                    return
            elif self._askable(s):
                self.to_act_seat = s
                return
            self.oidx += 1
        self._beaten_off()  # every seat passed: M11

    def _take(self) -> None:
        """M12, D6, MM5: the defender takes; in Moska the killed pairs are discarded first."""
        if self.family != F_DURAK:
            # M12, MM5: the killed pairs are discarded at once.
            mask = 0
            keep_a: list[int] = []
            for a, k in zip(self.tab_a, self.tab_k, strict=True):
                if k >= 0:
                    mask |= (1 << a) | (1 << k)
                else:
                    keep_a.append(a)
            self.discard |= mask
            self.tab_a = keep_a
            self.tab_k = [-1] * len(keep_a)
            if self.family == F_KAAVI:
                self._begged = [False] * len(keep_a)
                self._own_twos = [False] * len(keep_a)
        self._start_give()

    def _start_give(self) -> None:
        """M12, D6: before the defender picks up, the others may give it more cards."""
        if self.family == F_MUSTAMAIJA:
            self._pick_up()
            return
        self.order = self._round_order()
        self.oidx = 0
        self.passes = 0
        self.phase = GIVE
        self._ask_give()

    def _ask_give(self) -> None:
        """Ask the next seat of the giving round (C7); a full round of passes ends it."""
        if self._room() <= 0:
            self._pick_up()
            return
        order = self.order
        m = len(order)
        eligible = 0
        for s in order:
            if self._askable(s):
                eligible += 1
        if eligible == 0 or self.passes >= eligible:
            self._pick_up()  # every seat passed in a row (C7, M12, D6)
            return
        i = self.oidx
        while not self._askable(order[i % m]):
            i += 1
        self.oidx = i % m
        self.to_act_seat = order[self.oidx]

    # ------------------------------------------- the end of a bout (M11, M12, D6, D7, D9)

    def _discard_table(self) -> None:
        """Every card on the table goes out of play (M11, D9)."""
        mask = 0
        for a, k in zip(self.tab_a, self.tab_k, strict=True):
            mask |= 1 << a
            if k >= 0:
                mask |= 1 << k
        self.discard |= mask
        self.tab_a = []
        self.tab_k = []
        self.live = 0

    def _beaten_off(self) -> None:
        """M11, D9, MM6: every attack card killed; the table is discarded."""
        self._discard_table()
        self._end_bout(held=True)

    def _pick_up(self) -> None:
        """M12, D6, MM5: the defender picks up (every table card in Durak)."""
        d = self.defender
        if self.family == F_DURAK:
            mask = 0
            for a, k in zip(self.tab_a, self.tab_k, strict=True):
                mask |= 1 << a
                if k >= 0:
                    mask |= 1 << k
        else:
            mask = self.live
        self.hands[d] |= mask
        self.shown[d] |= mask
        self.picked |= mask
        self.tab_a = []
        self.tab_k = []
        self.live = 0
        self._end_bout(held=False)

    def _end_bout(self, held: bool) -> None:
        """Refill (M11, M12, D7, MM5), find who is out (M13, D10) and open the next bout:
        the defender leads if it held, else the seat after it (M11, D9, MM6)."""
        d = self.defender
        fam = self.family
        self.phase = WAITING
        self.to_act_seat = -1
        if fam == F_DURAK:
            self._durak_refill()
            if not self.stock:
                # D10: when a bout ends with the stock empty, empty hands are out.
                for s in range(self.n):
                    if not self.out[s] and not self.hands[s] and not self.hidden[s]:
                        self.out[s] = True
                if self._durak_over():
                    return
        else:
            self._draw_up(d, self._hs)  # M11, M12, MM5
            if self._ended():
                return
        if held and not self.out[d]:
            self._open_bout(d)  # M11, D9, MM6: a defender who held attacks next
        else:
            self._open_bout(self._next_in(d))

    def _durak_refill(self) -> None:
        """D7: principal attacker first, then clockwise from it, the defender last."""
        if not self.stock:
            return
        n, a, d = self.n, self.attacker, self.defender
        for i in range(n):
            s = (a + i) % n
            if s != d and not self.out[s]:
                self._draw_up(s, self._hs)
        self._draw_up(d, self._hs)

    def _durak_over(self) -> bool:
        """D10, D12: the game ends when at most one seat (or team) still holds cards."""
        holders = [s for s in range(self.n) if not self.out[s]]
        if self.rules.teams:
            teams = {s % 2 for s in holders}
            if len(teams) > 1:
                return False
            if not teams:
                self._finish(())
                return True
            team = teams.pop()
            self._finish(tuple(s for s in range(self.n) if s % 2 == team))
            return True
        if len(holders) > 1:
            return False
        self._finish(tuple(holders))
        return True

    # ------------------------------------------------------------ the exchange round (M4)

    def _next_exchange(self) -> None:
        """M4: the next seat of the exchange round; after the last, the first bout opens."""
        self.oidx += 1
        if self.oidx < len(self.order):
            self.to_act_seat = self.order[self.oidx]
        else:
            self._open_bout(self.order[0])

    # -------------------------------------------- cards turned from the stock (M7 b, M22)

    def _after_attack_deck(self, card: int) -> None:
        """M7 (b), M8: the card turned from the stock is the attack card."""
        self.tab_a.append(card)
        self.tab_k.append(-1)
        if self.family == F_KAAVI:
            self._begged.append(False)
            self._own_twos.append(False)
        self.live |= 1 << card
        self.bout_count += 1
        self.ranks_att |= 1 << (card >> 2)
        self.ranks_all |= 1 << (card >> 2)
        self._after_lay(self.attacker)  # M8
        self.phase = DEFEND
        self.to_act_seat = self.defender
        self._ended()

    def _after_deck_kill(self, card: int) -> None:
        """M22: the card turned by deck-kill kills a live card it beats, or the defender
        takes it with the table."""
        beat = self._beat
        if any(self.live >> a & 1 and beat[a] >> card & 1 for a in self.tab_a):
            self.turned = card  # M22: it must kill one live card it beats
            self.phase = FORCED_KILL
            self.to_act_seat = self.defender
            return
        d = self.defender
        self.hands[d] |= 1 << card  # M22: it beats none; the defender has taken
        self.shown[d] |= 1 << card
        self._take()

    # ------------------------------------------------------------------- Mustamaija (MM2)

    def _mm_turn(self) -> None:
        """MM2: turn the top card of the stock to find the trump."""
        pos = self.stock.pop()
        self._turn(pos, W_MM_TRUMP)

    def _after_mm_turn(self, pos: int, card: int) -> None:
        """MM2: a spade goes to the bottom and the next card is turned; any other suit is
        trump, and the attacker refills (MM5)."""
        self.stock.insert(0, pos)
        if card & 3 == SPADES:
            self._mm_turn()  # MM2: a spade goes to the bottom; turn the next
            return
        self._set_trump(card)
        self._draw_up(self.attacker, self._hs)  # MM5: then the attacker refills
        self.phase = DEFEND
        self.to_act_seat = self.defender

    # --------------------------------------------------------------------- Kaavi (K1, K2)

    def _start_twos_round(self) -> None:
        """K1: the round of twos against the dealer, from the dealer's right."""
        n, dealer = self.n, self.dealer
        right = (dealer - 1) % n
        self.bout_number = 1
        self.attacker = right
        self.defender = dealer
        self.tab_a, self.tab_k, self._begged, self._own_twos = [], [], [], []
        self.live = self.bout_count = self.ranks_all = self.ranks_att = 0
        self.bout_limit = min(6, self._size(dealer))
        self._twos_layers = []
        self.order = [right] + [(dealer + i) % n for i in range(1, n) if (dealer + i) % n != right]
        self.oidx = 0
        self.phase = TWOS
        self.to_act_seat = right

    def _next_twos(self) -> None:
        """K1: the next seat of the twos round; after the last, the trump is turned (K2)."""
        self.oidx += 1
        if self.oidx < len(self.order):
            self.to_act_seat = self.order[self.oidx]
            return
        self.phase = WAITING
        self.to_act_seat = -1
        self._turn(self.stock.pop(), W_KAAVI_TRUMP)  # K2

    def _after_kaavi_trump(self, pos: int, card: int) -> None:
        """K2: the trump is set, the seats that laid twos refill in order, and the dealer
        defends against them (or leads, when nobody laid a two)."""
        self.stock.insert(0, pos)
        self._set_trump(card)
        self._exch_pos = pos
        for seat in self._twos_layers:
            self._draw_up(seat, self._hs)  # K2: in the order they laid
        if self.tab_a:
            self.phase = DEFEND
            self.to_act_seat = self.defender
        else:
            self._open_bout(self.dealer)  # K2: nobody laid a two
