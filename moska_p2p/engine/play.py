"""Playing a move: its checks, with the rule each refusal names, and its effect.

:class:`PlayMixin` has, for each kind of move, a ``_play_*`` method that checks it against
the rules (C3, C5, M4, M6, M7, M9-M12, M20, M22, D4, D5, D8, D11, MM3, K1-K5) and raises
:class:`~.errors.IllegalMove` with the reason, leaving the game unchanged, and a ``_do_*``
method with its effect, which :meth:`~PlayMixin.play_unchecked` calls directly for moves
taken from :meth:`~.movegen.MovesMixin.legal_moves` (search). What follows a move -- the
next seat, the end of the bout -- is the bout's flow (:mod:`.flow`).
"""

from __future__ import annotations

from ..cards import CARD_TEXT, RANK_MASKS, SUIT_MASKS, make_card
from .cardsets import bit_list, cards_of_ranks
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
    OVER,
    THROW_IN,
    TWOS,
    TWOS_MASK,
    W_ATTACK_DECK,
    W_DECK_KILL,
    WAITING,
)
from .errors import IllegalMove
from .movegen import MovesMixin
from .moves import (
    ATTACK,
    ATTACK_DECK,
    BEG,
    DECK_KILL,
    EXCHANGE,
    KILL,
    PASS,
    SELF,
    TAKE,
    TRANSFER,
    TRANSFER_SHOW,
    Move,
    attack_move,
    parse_move,
)


class PlayMixin(MovesMixin):
    """Checked and unchecked moves (a layer of :class:`~.game.Game`)."""

    __slots__ = ()

    def play(self, move: Move | str, seat: int | None = None) -> Move:
        """Play ``move`` (a :class:`Move` or its text) for the seat to act.

        ``seat``, when given, must be the seat to act (a remote peer's claim). Returns the
        move played, in canonical form. Raises :class:`IllegalMove`; the game is unchanged.
        """
        if isinstance(move, str):
            move = parse_move(move)
        actor = self.to_act_seat
        if actor < 0 or self._pending_public:
            if self.phase == OVER:
                raise IllegalMove("the game is over")
            raise IllegalMove("the game waits for a card to be revealed; no move is possible")
        if seat is not None and seat != actor:
            raise IllegalMove(f"seat {seat} may not move: it is seat {actor}'s {self.decision}")
        kind = move[0]
        if kind == KILL:
            self._play_kill(actor, move[1])
        elif kind == ATTACK:
            cards = move[1]
            if len(cards) > 1 and list(cards) != sorted(cards):
                move = attack_move(tuple(sorted(cards)))
            self._play_attack(actor, move[1])
        elif kind == PASS:
            self._play_pass(actor)
        elif kind == TAKE:
            self._play_take(actor)
        elif kind == EXCHANGE:
            self._play_exchange(actor)
        elif kind == SELF:
            self._play_self(actor, move[1])
        elif kind == ATTACK_DECK:
            self._play_attack_deck(actor)
        elif kind == DECK_KILL:
            self._play_deck_kill(actor)
        elif kind in (TRANSFER, TRANSFER_SHOW):
            self._play_transfer(actor, move[1][0], kind == TRANSFER_SHOW)
        elif kind == BEG:
            self._play_beg(actor, move[1])
        else:  # pragma: no cover - every kind is handled above
            raise IllegalMove(f"unknown move {move}")
        self.history.append((actor, move))
        return move

    def play_unchecked(self, move: Move) -> None:
        """Play ``move``, taken from :meth:`legal_moves` or :meth:`random_move` of this very
        state, without validating it again (the fast path of search).

        Whatever :meth:`play` checks that those methods already guarantee (the seat, the
        phase, the cards held, C3 beating, the limits of M6/D5/MM3, M7's groups, D11, K4) is
        skipped; the resulting state is the one :meth:`play` would reach. A move that is not
        legal here corrupts the game silently: use :meth:`play` for anything else.
        """
        actor = self.to_act_seat
        kind, cards = move
        if kind == KILL:
            self._do_kill(actor, cards[0], cards[1])
        elif kind == PASS:
            self._play_pass(actor)  # its checks are the branches of no legal pass
        elif kind == ATTACK:
            mask = 0
            for c in cards:
                mask |= 1 << c
            self._do_attack(actor, mask)
        elif kind == TAKE:
            self._take()
        elif kind == EXCHANGE:
            self._do_exchange(actor)
        elif kind == SELF:
            self._do_self(actor, cards[0], cards[1])
        elif kind == ATTACK_DECK:
            self._turn(self._pop_stock(), W_ATTACK_DECK)
        elif kind == DECK_KILL:
            self._turn(self._pop_stock(), W_DECK_KILL)
        elif kind == BEG:
            self._do_beg(actor, self.tab_a.index(cards[0]), cards[1])
        else:  # TRANSFER, TRANSFER_SHOW
            self._do_transfer(actor, cards[0], kind == TRANSFER_SHOW)
        self.history.append((actor, move))

    # --------------------------------------------------------------------------- refusals

    def _need_known(self, seat: int, mask: int) -> None:
        """Refuse a move naming a card ``seat`` does not hold (or this engine cannot see)."""
        missing = mask & ~self.hands[seat]
        if missing:
            names = " ".join(CARD_TEXT[c] for c in bit_list(missing))
            raise IllegalMove(f"seat {seat} does not hold {names}")

    def _wrong_phase(self, seat: int, what: str) -> IllegalMove:
        """The refusal of ``what`` in this phase, saying what the seat must do (C5)."""
        return IllegalMove(f"{what} is not possible now: seat {seat} must {self._expected()}")

    def _expected(self) -> str:
        """What the seat to act must do now, in words (C5)."""
        phase = self.phase
        if phase == OPEN:
            return "open the bout with an attack"
        if phase == DEFEND:
            return "defend: kill a live card or take"
        if phase == FORCED_KILL:
            return f"kill a live card with {CARD_TEXT[self.turned]}, turned from the stock (M22)"
        if phase == THROW_IN:
            if self.to_act_seat == self.defender:
                return "self-execute or pass (M20)"
            return "throw in cards of the bout's ranks or pass"
        if phase == GIVE:
            return "give cards of the bout's ranks to the defender or pass"
        if phase == EXCHANGE_ROUND:
            return "answer exchange or pass (M4)"
        if phase == TWOS:
            return "attack the dealer with twos or pass (K1)"
        return "wait"

    # --------------------------------------------------------- one kind of move at a time

    def _play_kill(self, seat: int, cards: tuple[int, ...]) -> None:
        """Check a kill (C3, M9, M22) and play it."""
        a, k = cards
        phase = self.phase
        if phase == FORCED_KILL:
            if k != self.turned:
                raise IllegalMove(
                    f"the card turned from the stock, {CARD_TEXT[self.turned]}, must kill (M22)"
                )
        elif phase != DEFEND:
            raise self._wrong_phase(seat, "kill")
        else:
            self._need_known(seat, 1 << k)
        if not self.live >> a & 1:
            raise IllegalMove(f"{CARD_TEXT[a]} is not a live attack card on the table")
        if not self._beat[a] >> k & 1:
            raise IllegalMove(f"{CARD_TEXT[k]} does not beat {CARD_TEXT[a]} (C3)")
        self._do_kill(seat, a, k)

    def _do_kill(self, seat: int, a: int, k: int) -> None:
        """M9, M22, D4: ``k`` kills the live ``a`` (from the hand, or the card turned)."""
        if self.phase == FORCED_KILL:
            self.turned = -1
            self.phase = DEFEND
        else:
            self.hands[seat] &= ~(1 << k)
            self.shown[seat] &= ~(1 << k)
        self.tab_k[self.tab_a.index(a)] = k
        self.live ^= 1 << a
        self.ranks_all |= 1 << (k >> 2)
        if self._ended():
            return
        if not self.live:
            self._cleared()

    def _play_take(self, seat: int) -> None:
        """Check a take (M9, D6) and play it."""
        if self.phase != DEFEND:
            raise self._wrong_phase(seat, "take")
        self._take()

    def _play_pass(self, seat: int) -> None:
        """A pass in a round (C7, M4, K1); refused where the seat must act (C5, M9)."""
        phase = self.phase
        if phase == THROW_IN:
            self.oidx += 1
            self._ask_throw_in()
        elif phase == GIVE:
            self.passes += 1
            self.oidx = (self.oidx + 1) % len(self.order)
            self._ask_give()
        elif phase == EXCHANGE_ROUND:
            self._next_exchange()
        elif phase == TWOS:
            self._next_twos()
        elif phase == OPEN:
            raise IllegalMove(f"seat {seat} opens the bout and may not pass (C5)")
        elif phase in (DEFEND, FORCED_KILL):
            raise IllegalMove(
                f"seat {seat} defends against live cards and may not pass: kill or take (M9)"
            )
        else:  # pragma: no cover
            raise self._wrong_phase(seat, "pass")

    def _play_exchange(self, seat: int) -> None:
        """Check a trump exchange (M4, D8) and play it."""
        if not self._may_exchange(seat):
            raise IllegalMove(self._why_no_exchange(seat))
        self._do_exchange(seat)

    def _do_exchange(self, seat: int) -> None:
        """M4, D8: swap the low trump in ``seat``'s hand for the indicator."""
        low = make_card(self._low_trump_rank, self.trump)
        old = self.indicator
        low_pos = self.pos_of[low]
        self.hands[seat] = (self.hands[seat] & ~(1 << low)) | (1 << old)
        self.shown[seat] = (self.shown[seat] & ~(1 << low)) | (1 << old)
        self.stock[0] = low_pos
        self.public[low_pos] = True
        self.indicator = low
        self._exch_pos = -1  # nobody holds the low trump any more
        if self.phase == EXCHANGE_ROUND:
            self._next_exchange()  # M4: here the exchange is the seat's answer

    def _why_no_exchange(self, seat: int) -> str:
        """Why ``seat`` may not exchange the trump now (M4, D8, MM: none)."""
        fam = self.family
        if fam == F_MUSTAMAIJA:
            return "Mustamaija has no trump exchange"
        if fam == F_MOSKA and self.rules.trump_exchange == "never":
            return "this table plays without trump exchange (trump_exchange=never)"
        if (
            fam == F_MOSKA
            and self.rules.trump_exchange == "before-first-attack"
            and self.phase != EXCHANGE_ROUND
        ):
            return "the trump may be exchanged only before the first attack (M4)"
        if self._exch_pos < 0 or self.trump < 0:
            return "the trump indicator is no longer in the stock to exchange (M4)"
        low = make_card(self._low_trump_rank, self.trump)
        if fam == F_DURAK and self.picked >> low & 1 and self.hands[seat] >> low & 1:
            return f"{CARD_TEXT[low]} was picked up, so it buys no exchange (D8)"
        return f"seat {seat} does not hold {CARD_TEXT[low]}, the low trump (M4, D8)"

    def _play_attack(self, seat: int, cards: tuple[int, ...]) -> None:
        """Check an attack -- an opening, a throw-in, a gift or twos -- and play it."""
        phase = self.phase
        mask = 0
        for c in cards:
            mask |= 1 << c
        count = len(cards)
        if mask.bit_count() != count:
            raise IllegalMove("an attack names a card twice")
        if phase == OPEN:
            self._check_opening(mask, count)
            self._need_known(seat, mask)
        elif phase in (THROW_IN, GIVE):
            if seat == self.defender:
                raise IllegalMove(
                    f"seat {seat} is the defender and may not attack itself"
                    " (only self execution, M20)"
                )
            self._need_known(seat, mask)
            self._check_addition(mask, count)
        elif phase == TWOS:
            self._need_known(seat, mask)
            if mask & ~TWOS_MASK:
                raise IllegalMove("only twos may be laid against the dealer now (K1)")
            if count > self._room():
                raise IllegalMove(f"the bout's limit allows {self._room()} more cards (M6)")
        else:
            raise self._wrong_phase(seat, "attack")
        self._do_attack(seat, mask)

    def _do_attack(self, seat: int, mask: int) -> None:
        """Lay the attack cards of ``mask``: an opening (M7, D4, MM3), a throw-in (M10), a
        gift (M12, D6) or the dealer's twos (K1); then refill and pass the turn on."""
        phase = self.phase
        if phase == OPEN:
            self._add_cards(seat, mask)
            if self.family == F_MUSTAMAIJA and self.trump < 0:
                self.phase = WAITING
                self.to_act_seat = -1
                self._mm_turn()  # MM2: turn the trump before the attacker refills
                return
            if self.family == F_MUSTAMAIJA:
                self._draw_up(seat, self._hs)  # MM5
            self._after_lay(seat)
            self.phase = DEFEND
            self.to_act_seat = self.defender
            self._ended()
            return
        if phase in (THROW_IN, GIVE):
            self._add_cards(seat, mask)
            self._after_lay(seat)
            if phase == THROW_IN:
                self.phase = DEFEND
                self.to_act_seat = self.defender
                self._ended()
                return
            self.passes = 0
            self.oidx = (self.oidx + 1) % len(self.order)
            if self._ended():
                return
            self._ask_give()
            return
        self._add_cards(seat, mask)  # TWOS
        self._twos_layers.append(seat)
        self._next_twos()

    def _check_opening(self, mask: int, count: int) -> None:
        """M6, M7, D4, MM3, K3: an opening's size and its groups of equal rank."""
        room = self._room()
        fam = self.family
        if fam == F_DURAK:
            if count != 1:
                raise IllegalMove("a Durak bout opens with exactly one card (D4)")
            return
        if count > room:
            raise IllegalMove(
                f"this opening has {count} cards but the limit allows {room} (M6, MM3)"
            )
        if fam == F_MUSTAMAIJA:
            if not any(mask & ~SUIT_MASKS[s] == 0 for s in range(4)):
                raise IllegalMove("an attack is one or more cards of a single suit (MM3)")
            return
        if fam == F_KAAVI and self.defender == self.dealer:
            mask &= ~TWOS_MASK  # K3: any number of twos may join a legal opening
            count = mask.bit_count()
            if count == 0:
                return
        if count == 1:
            return
        for r in range(13):
            if (mask & RANK_MASKS[r]).bit_count() == 1:
                raise IllegalMove(
                    "an opening of several cards must be groups of two or more cards of"
                    f" equal rank (M7); {CARD_TEXT[bit_list(mask & RANK_MASKS[r])[0]]} is alone"
                )

    def _check_addition(self, mask: int, count: int) -> None:
        """M10, M12, D4, K3: added cards of played ranks, within the limit (M6, D5)."""
        allowed = cards_of_ranks(self._played_ranks())
        if self.family == F_KAAVI and self.defender == self.dealer:
            allowed |= TWOS_MASK  # K3
        bad = mask & ~allowed
        if bad:
            which = "attack cards" if self.rules.throw_in_ranks == "attack-only" else "cards"
            raise IllegalMove(
                f"{CARD_TEXT[bit_list(bad)[0]]}: its rank was not among the {which} played in"
                " this bout (M10, M12, D4)"
            )
        room = self._room()
        if count > room:
            raise IllegalMove(
                f"the bout's limit allows {max(room, 0)} more card{'s' if room != 1 else ''}"
                " (M6, D5)"
            )

    def _play_self(self, seat: int, cards: tuple[int, ...]) -> None:
        """Check a self execution (M20, K5) and play it."""
        a, k = cards
        phase = self.phase
        if seat != self.defender or phase not in (DEFEND, THROW_IN):
            raise self._wrong_phase(seat, "self execution")
        self._need_known(seat, (1 << a) | (1 << k))
        if not self._beat[a] >> k & 1:
            raise IllegalMove(f"{CARD_TEXT[k]} does not beat {CARD_TEXT[a]} (C3)")
        kaavi = self.family == F_KAAVI
        if kaavi:
            if self.defender != self.dealer or phase != DEFEND or a >> 2 != 0:
                raise IllegalMove(
                    "in Kaavi only the dealer, defending against live cards, kills its own"
                    " twos (K5)"
                )
            if len(self.stock) < 2:
                raise IllegalMove("the dealer's own twos need two cards in the stock (K5)")
        else:
            if self.rules.self_execution == "off":
                raise IllegalMove("this table plays without self execution (M20)")
            if not cards_of_ranks(self._played_ranks()) >> a & 1:
                which = (
                    "among the attack cards"
                    if self.rules.throw_in_ranks == "attack-only"
                    else "played"
                )
                raise IllegalMove(f"{CARD_TEXT[a]}: its rank was not {which} in this bout (M20)")
            if not self._self_room():
                raise IllegalMove("the bout's limit leaves no room for a self execution (M20)")
        self._do_self(seat, a, k)

    def _do_self(self, seat: int, a: int, k: int) -> None:
        """M20, K5: the defender lays ``a`` from its own hand and kills it with ``k``."""
        phase = self.phase
        kaavi = self.family == F_KAAVI
        self.hands[seat] &= ~((1 << a) | (1 << k))
        self.shown[seat] &= ~((1 << a) | (1 << k))
        self.tab_a.append(a)
        self.tab_k.append(k)
        self.ranks_att |= 1 << (a >> 2)
        self.ranks_all |= (1 << (a >> 2)) | (1 << (k >> 2))
        if kaavi:
            self._begged.append(False)
            self._own_twos.append(True)
            self._draw(seat)
            self._draw(seat)  # K5: the dealer draws two cards
        else:
            self.bout_count += 2  # M20: two cards against the limit
            if self.rules.self_execution == "on-with-draw" and self.stock:
                self._draw(seat)  # M21
        if self._ended():
            return
        if phase == THROW_IN:
            self._start_throw_in()  # M20: like any added card, a new throw-in round
        elif not self.live:
            self._cleared()

    def _play_attack_deck(self, seat: int) -> None:
        """Check attack deck (M7 b) and turn the top card of the stock."""
        if self.phase != OPEN or self.family not in (F_MOSKA, F_KAAVI):
            raise self._wrong_phase(seat, "attack deck")
        if not self.stock:
            raise IllegalMove("the stock is empty: attack deck is not possible (M7)")
        self._turn(self._pop_stock(), W_ATTACK_DECK)  # M7 (b)

    def _play_deck_kill(self, seat: int) -> None:
        """Check deck-kill (M22) and turn the top card of the stock."""
        if self.phase != DEFEND or self.rules.deck_kill != "on":
            raise self._wrong_phase(seat, "deck-kill")
        if not self.stock:
            raise IllegalMove("the stock is empty: deck-kill is not possible (M22)")
        self._turn(self._pop_stock(), W_DECK_KILL)

    def _play_transfer(self, seat: int, card: int, show: bool) -> None:
        """Check a transfer (D11) and play it."""
        if self.phase != DEFEND or not self.rules.transfer:
            raise self._wrong_phase(seat, "transfer")
        rank = self._transfer_rank()
        if rank < 0:
            raise IllegalMove(
                "a transfer needs every attack card of one rank and none beaten yet (D11)"
            )
        if card >> 2 != rank:
            raise IllegalMove(f"{CARD_TEXT[card]} is not of the attack's rank (D11)")
        self._need_known(seat, 1 << card)
        nd = self._defender_for(seat)
        cap = self._first_cap if self.bout_number == 1 else 6
        count = len(self.tab_a) + (0 if show else 1)
        if count > min(cap, self._size(nd)):
            raise IllegalMove(
                f"seat {nd} could face at most {min(cap, self._size(nd))} cards (D11)"
            )
        if show:
            if self.rules.transfer_show_trump != "on":
                raise IllegalMove("this table plays without transfer by showing a trump (D11)")
            if card & 3 != self.trump:
                raise IllegalMove(f"{CARD_TEXT[card]} is not a trump (D11)")
            if self.transfer_shown >> seat & 1:
                raise IllegalMove(f"seat {seat} already transferred by showing this bout (D11)")
        self._do_transfer(seat, card, show)

    def _do_transfer(self, seat: int, card: int, show: bool) -> None:
        """D11: pass the attack on to the next defender, by laying or by showing ``card``."""
        nd = self._defender_for(seat)
        cap = self._first_cap if self.bout_number == 1 else 6
        if show:
            self.transfer_shown |= 1 << seat
            self.shown[seat] |= 1 << card
        else:
            self._add_cards(seat, 1 << card)
        self.attacker = seat
        self.defender = nd
        self.bout_limit = min(cap, self._size(nd))
        self.bout_count = len(self.tab_a)
        self.to_act_seat = nd

    def _play_beg(self, seat: int, cards: tuple[int, ...]) -> None:
        """Check begging (K4) and play it."""
        a, k = cards
        if self.phase != DEFEND or self.family != F_KAAVI:
            raise self._wrong_phase(seat, "beg")
        if a not in self.tab_a:
            raise IllegalMove(f"{CARD_TEXT[a]} is not on the table")
        i = self.tab_a.index(a)
        old = self.tab_k[i]
        if old < 0:
            raise IllegalMove(f"{CARD_TEXT[a]} is not killed yet: kill it instead (K4)")
        if self._own_twos[i]:
            raise IllegalMove(f"{CARD_TEXT[a]} is the dealer's own two, not an attack card (K4)")
        if self._begged[i]:
            raise IllegalMove(f"the killer of {CARD_TEXT[a]} was already exchanged once (K4)")
        self._need_known(seat, 1 << k)
        if not self._beat[a] >> k & 1:
            raise IllegalMove(f"{CARD_TEXT[k]} does not beat {CARD_TEXT[a]} (C3)")
        self._do_beg(seat, i, k)

    def _do_beg(self, seat: int, i: int, k: int) -> None:
        """K4: ``k`` replaces the killer of table pair ``i``, which goes to the hand."""
        old = self.tab_k[i]
        self.hands[seat] = (self.hands[seat] & ~(1 << k)) | (1 << old)
        self.shown[seat] = (self.shown[seat] & ~(1 << k)) | (1 << old)
        self.tab_k[i] = k
        self._begged[i] = True
        self.ranks_all |= 1 << (k >> 2)
