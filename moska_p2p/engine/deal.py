"""The deal, the stock and reveals: where cards come from (RULES C4, M3, M23, D2, D3, MM2, K2).

:class:`DealMixin` deals the hands (C4), turns the trump indicator (M3, D2), finds Durak's
first attacker (D3), draws from the stock (M8, D7, MM5) and turns its second-last card (M23); on
a peer's engine, whose faces are unknown until keys are released, it records which faces
became due and resumes a waiting game once :meth:`~DealMixin.reveal` gives one.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..cards import CARD_TEXT, NUM_CARDS, SUIT_MASKS, card_text, parse_card
from .cardsets import BEAT
from .constants import (
    EXCHANGE_ROUND,
    F_DURAK,
    F_KAAVI,
    F_MOSKA,
    F_MUSTAMAIJA,
    W_ATTACK_DECK,
    W_DEAL_TRUMP,
    W_DECK_KILL,
    W_KAAVI_TRUMP,
    W_LOWEST_TRUMP,
    W_MM_TRUMP,
    WAITING,
)
from .errors import DealError, RevealError
from .options import Rules
from .state import GameState


class DealMixin(GameState):
    """The deal, draws and reveals (a layer of :class:`~.game.Game`)."""

    __slots__ = ()

    # Defined by the bout's flow (:class:`~.flow.FlowMixin`), which a card turned face up
    # hands the game back to. Real methods, not declarations under TYPE_CHECKING: mypyc
    # compiles a class's methods from its body, and the flow overrides each of these.
    def _open_bout(self, attacker: int) -> None:
        raise NotImplementedError

    def _start_twos_round(self) -> None:
        raise NotImplementedError

    def _after_attack_deck(self, card: int) -> None:
        raise NotImplementedError

    def _after_deck_kill(self, card: int) -> None:
        raise NotImplementedError

    def _after_mm_turn(self, pos: int, card: int) -> None:
        raise NotImplementedError

    def _after_kaavi_trump(self, pos: int, card: int) -> None:
        raise NotImplementedError

    def _deal(self) -> None:
        """C4: deal the hands from the top, one card at a time from the dealer's left; then
        turn the indicator (M3, D2) or, in Mustamaija and Kaavi, start with no trump (MM2, K1)."""
        n, hs = self.n, self._hs
        size = self.rules.pack_size
        dealt = n * hs
        start = self.dealer + 1
        for i in range(dealt):
            self._to_hand((start + i) % n, i)
        fam = self.family
        if fam in (F_MUSTAMAIJA, F_KAAVI):
            # MM2, K1: no indicator at the deal; deck[dealt] is the top of the stock.
            self.stock = list(range(size - 1, dealt - 1, -1))
            self._start()
            return
        if dealt == size:
            # D2: no stock; the dealer's last card is the indicator, shown, kept in hand.
            self.stock = []
            self._turn(dealt - 1, W_DEAL_TRUMP)
            return
        self.stock = [dealt, *range(size - 1, dealt, -1)]
        self._turn(dealt, W_DEAL_TRUMP)

    def _to_hand(self, seat: int, pos: int) -> None:
        """Give ``seat`` the card at ``pos``: known, or a hidden position whose face is due
        to that seat only (recorded for :meth:`take_reveal_requests`)."""
        card = self.face[pos]
        if card >= 0:
            self.hands[seat] |= 1 << card
            if self.public[pos]:
                self.shown[seat] |= 1 << card
        else:
            self.hidden[seat].append(pos)
            self.hidden_owner[pos] = seat
        log = self.reveal_log
        if log is not None and not self.public[pos]:
            log.append((pos, seat))

    def _turn(self, pos: int, tag: int) -> None:
        """Turn the card at ``pos`` face up for everyone; go on once its face is known."""
        self.public[pos] = True
        card = self.face[pos]
        if card < 0:
            if self.reveal_log is not None:
                self.reveal_log.append((pos, -1))
            self._awaiting = (tag, pos)
            self.phase = WAITING
            self.to_act_seat = -1
            return
        self._resume(tag, pos, card)

    def _resume(self, tag: int, pos: int, card: int) -> None:
        """Go on from a card turned face up (``tag`` says why it was turned), its face known."""
        self._awaiting = None
        if tag == W_DEAL_TRUMP:
            self._set_trump(card)
            if not self.stock:
                # D2: the indicator is the dealer's card, now known to all.
                self.shown[self.dealer] |= 1 << card
            else:
                self._exch_pos = pos
            self._start()
        elif tag == W_ATTACK_DECK:
            self._after_attack_deck(card)
        elif tag == W_DECK_KILL:
            self._after_deck_kill(card)
        elif tag == W_MM_TRUMP:
            self._after_mm_turn(pos, card)
        elif tag == W_KAAVI_TRUMP:
            self._after_kaavi_trump(pos, card)

    def _set_trump(self, card: int) -> None:
        """The indicator ``card`` sets the trump suit and the beating table (C3, MM4)."""
        self.indicator = card
        self.trump = card & 3
        self._beat = BEAT[self.trump, self.family == F_MUSTAMAIJA]

    def _start(self) -> None:
        """The first decision of the game: M4's exchange round, D3's lowest trump, MM2's
        first attack, or K1's round of twos against the dealer."""
        fam = self.family
        first = (self.dealer + 1) % self.n
        if fam == F_MOSKA:
            if self.rules.trump_exchange == "before-first-attack":
                # M4: an exchange round opens the game, from the first attacker.
                self.attacker = first
                self.defender = self._defender_for(first)
                self.order = [(first + i) % self.n for i in range(self.n)]
                self.oidx = 0
                self.phase = EXCHANGE_ROUND
                self.to_act_seat = first
                return
            self._open_bout(first)
        elif fam == F_DURAK:
            if self.first_game:
                self._find_lowest_trump()
                return
            self._open_bout(first)  # D3: later games, the dealer's left attacks
        elif fam == F_MUSTAMAIJA:
            self._open_bout(first)  # MM2
        else:
            self._start_twos_round()  # K1

    def _find_lowest_trump(self) -> None:
        """D3: the holder of the lowest trump in any hand attacks first and shows it."""
        if any(self.hidden):
            self._awaiting = (W_LOWEST_TRUMP, -1)
            self.phase = WAITING
            self.to_act_seat = -1
            return
        trumps = SUIT_MASKS[self.trump]
        best, holder = NUM_CARDS, -1
        for seat in range(self.n):
            mine = self.hands[seat] & trumps
            if mine:
                low = (mine & -mine).bit_length() - 1
                if low < best:
                    best, holder = low, seat
        self._resolve_lowest_trump(holder, best)

    def _resolve_lowest_trump(self, holder: int, card: int) -> None:
        """D3: ``holder`` showed ``card`` and attacks first (no holder: the dealer's left)."""
        self._awaiting = None
        if holder < 0:
            self._open_bout((self.dealer + 1) % self.n)
            return
        self.shown[holder] |= 1 << card
        self._open_bout(holder)

    @property
    def awaiting(self) -> tuple[int, ...]:
        """Deck positions whose faces the game waits for before it can go on."""
        pending = tuple(self._pending_public)
        if self._awaiting is None:
            return pending
        tag, pos = self._awaiting
        return pending if tag == W_LOWEST_TRUMP else (pos, *pending)

    @property
    def awaiting_lowest_trump(self) -> bool:
        """True while a hidden-information Durak game waits for the D3 claim."""
        return self._awaiting is not None and self._awaiting[0] == W_LOWEST_TRUMP

    def declare_lowest_trump(self, position: int | None) -> None:
        """Resolve D3 on a hidden-information engine: the position of the lowest trump shown
        (its face revealed beforehand), or ``None`` when nobody holds a trump."""
        if not self.awaiting_lowest_trump:
            raise RevealError("the game is not waiting for the lowest trump (RULES D3)")
        if position is None:
            self._resolve_lowest_trump(-1, -1)
            return
        card = self.face[position]
        if card < 0:
            raise RevealError(f"position {position} must be revealed before it is shown (D3)")
        if card & 3 != self.trump:
            raise RevealError(f"{CARD_TEXT[card]} is not a trump (D3)")
        holder = next((s for s in range(self.n) if self.hands[s] >> card & 1), -1)
        if holder < 0:
            raise RevealError(f"{CARD_TEXT[card]} is in no hand (D3)")
        self._resolve_lowest_trump(holder, card)

    # ---------------------------------------------------- draws (M8, M11, M12, D7, MM5)

    def _draw_up(self, seat: int, target: int) -> None:
        """Draw from the stock until ``seat`` holds ``target`` cards or the stock is empty."""
        stock = self.stock
        while stock and self._size(seat) < target:
            self._draw(seat)

    def _draw(self, seat: int) -> None:
        """``seat`` draws the top card of the stock."""
        self._to_hand(seat, self._pop_stock())

    def _pop_stock(self) -> int:
        """Take the top card's position off the stock; the indicator's exchange ends when
        it is drawn (M4), and M23 turns the upper of the last two cards face up."""
        pos = self.stock.pop()
        if pos == self._exch_pos:
            self._exch_pos = -1
        if len(self.stock) == 2 and self.rules.expose_second_last == "on":
            top = self.stock[-1]
            if not self.public[top]:
                # M23: the upper of the last two stock cards is turned face up.
                self.public[top] = True
                if self.face[top] < 0:
                    self._pending_public.append(top)
                    if self.reveal_log is not None:
                        self.reveal_log.append((top, -1))
        return pos

    # ------------------------------------------------------- reveals (hidden information)

    def reveal(self, position: int, card: int | str) -> None:
        """Tell this engine the face at ``position`` (a key was released for it)."""
        code = parse_card(card) if isinstance(card, str) else card
        if not 0 <= position < len(self.face):
            raise RevealError(f"no deck position {position}")
        known = self.face[position]
        if known >= 0:
            if known != code:
                raise RevealError(
                    f"position {position} holds {CARD_TEXT[known]}, not {CARD_TEXT[code]}"
                )
            return
        if self.pos_of[code] >= 0:
            raise RevealError(f"{CARD_TEXT[code]} was already seen at position {self.pos_of[code]}")
        pack_low = self.rules.lowest_rank * 4
        if code < pack_low:
            raise RevealError(f"{CARD_TEXT[code]} is not in this pack")
        self.face[position] = code
        self.pos_of[code] = position
        if position in self._pending_public:
            self._pending_public.remove(position)
        owner = self.hidden_owner.pop(position, None)
        if owner is not None:
            self.hidden[owner].remove(position)
            self.hands[owner] |= 1 << code
            if self.public[position]:
                self.shown[owner] |= 1 << code
        if self._awaiting is not None and self._awaiting[1] == position:
            tag = self._awaiting[0]
            self._resume(tag, position, code)

    def take_reveal_requests(self) -> list[tuple[int, int]]:
        """The (position, seat) pairs whose faces became due since the last call; seat -1
        means everyone (a public reveal). Only recorded with ``track_reveals=True``."""
        log = self.reveal_log
        if log is None:
            return []
        self.reveal_log = []
        return log


def check_deck(faces: Sequence[int], rules: Rules) -> None:
    """Refuse a stacked deck that is not the preset's whole pack, each card once (C4)."""
    low = rules.lowest_rank * 4
    expected = set(range(low, NUM_CARDS))
    seen: set[int] = set()
    for card in faces:
        if type(card) is not int:  # a deck read from a file may hold anything
            raise DealError(f"the deck holds {card!r}, which is not a card code (C4)")
        if card in seen:
            raise DealError(f"the deck holds {card_text(card)} twice (C4)")
        if card not in expected:
            name = card_text(card) if 0 <= card < NUM_CARDS else f"card code {card}"
            raise DealError(f"{name} is not a card of the {rules.preset} pack (C4)")
        seen.add(card)
    missing = expected - seen
    if missing:
        names = " ".join(card_text(c) for c in sorted(missing))
        raise DealError(f"the deck lacks {names} (C4): a stacked deal holds the whole pack")


def parse_deck(deck: Iterable[Any]) -> list[int]:
    """Card codes from card texts or codes (a stacked deck, top first)."""
    out = []
    for item in deck:
        out.append(parse_card(item) if isinstance(item, str) else int(item))
    return out
