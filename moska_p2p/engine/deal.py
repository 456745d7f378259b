"""Where cards come from: the deal, the stock, draws and faces learnt (RULES C4, M3, M4, M8,
M23, D2, D7, MM2, MM5).

Functions over a :class:`~.state.GameState` that move cards and nothing else: they deal the
hands (C4) and lay out the stock, draw from it (M8, D7, MM5), turn its second-last card
(M23), set the trump from an indicator (C3, MM4), and, on a peer's engine whose faces are
unknown until keys are released, record which faces became due and learn a face revealed.
What the game does next -- who acts, a bout resumed once a turned card is known -- is the
bout's flow (:mod:`.flow`), which calls these.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..cards import CARD_TEXT, NUM_CARDS, card_text, parse_card
from .cardsets import BEAT
from .constants import F_KAAVI, F_MUSTAMAIJA, W_LOWEST_TRUMP
from .errors import DealError, RevealError
from .options import Rules
from .state import GameState


def deal_hands(g: GameState) -> int:
    """C4: deal the hands from the top, one card at a time from the dealer's left, and lay
    the stock out below them. Returns the position of the card to turn for the trump
    indicator (M3, D2), or -1 in Mustamaija and Kaavi, which start with no trump (MM2, K1)."""
    n, hs = g.n, g.refill_to
    size = g.rules.pack_size
    dealt = n * hs
    start = g.dealer + 1
    for i in range(dealt):
        _to_hand(g, (start + i) % n, i)
    fam = g.family
    if fam in (F_MUSTAMAIJA, F_KAAVI):
        # MM2, K1: no indicator at the deal; deck[dealt] is the top of the stock.
        g.stock = list(range(size - 1, dealt - 1, -1))
        return -1
    if dealt == size:
        # D2: no stock; the dealer's last card is the indicator, shown, kept in hand.
        g.stock = []
        return dealt - 1
    g.stock = [dealt, *range(size - 1, dealt, -1)]
    return dealt


def _to_hand(g: GameState, seat: int, pos: int) -> None:
    """Give ``seat`` the card at ``pos``: known, or a hidden position whose face is due
    to that seat only (recorded for :meth:`take_reveal_requests`)."""
    card = g.face[pos]
    if card >= 0:
        g.hands[seat] |= 1 << card
        if g.public[pos]:
            g.shown[seat] |= 1 << card
    else:
        g.hidden[seat].append(pos)
        g.hidden_owner[pos] = seat
    log = g.reveal_log
    if log is not None and not g.public[pos]:
        log.append((pos, seat))


def set_trump(g: GameState, card: int) -> None:
    """The indicator ``card`` sets the trump suit and the beating table (C3, MM4)."""
    g.indicator = card
    g.trump = card & 3
    g.beaters = BEAT[g.trump, g.family == F_MUSTAMAIJA]


def awaiting(g: GameState) -> tuple[int, ...]:
    """Deck positions whose faces the game waits for before it can go on."""
    pending = tuple(g.pending_public)
    if g.waiting_for is None:
        return pending
    tag, pos = g.waiting_for
    return pending if tag == W_LOWEST_TRUMP else (pos, *pending)


def awaiting_lowest_trump(g: GameState) -> bool:
    """True while a hidden-information Durak game waits for the D3 claim."""
    return g.waiting_for is not None and g.waiting_for[0] == W_LOWEST_TRUMP


def draw_up(g: GameState, seat: int, target: int) -> None:
    """Draw from the stock until ``seat`` holds ``target`` cards or the stock is empty."""
    stock = g.stock
    while stock and g.hand_size(seat) < target:
        draw(g, seat)


def draw(g: GameState, seat: int) -> None:
    """``seat`` draws the top card of the stock."""
    _to_hand(g, seat, pop_stock(g))


def pop_stock(g: GameState) -> int:
    """Take the top card's position off the stock; the indicator's exchange ends when
    it is drawn (M4), and M23 turns the upper of the last two cards face up."""
    pos = g.stock.pop()
    if pos == g.exchange_pos:
        g.exchange_pos = -1
    if len(g.stock) == 2 and g.rules.expose_second_last == "on":
        top = g.stock[-1]
        if not g.public[top]:
            # M23: the upper of the last two stock cards is turned face up.
            g.public[top] = True
            if g.face[top] < 0:
                g.pending_public.append(top)
                if g.reveal_log is not None:
                    g.reveal_log.append((top, -1))
    return pos


def record_face(g: GameState, position: int, card: int | str) -> int:
    """Learn the face at ``position`` (a key was released for it): the card's code, or -1
    when this engine knew it already (nothing changes then). The hand holding it knows it
    from now on; going on from a card the game waits for is the flow's (:mod:`.flow`)."""
    code = parse_card(card) if isinstance(card, str) else card
    if not 0 <= position < len(g.face):
        raise RevealError(f"no deck position {position}")
    known = g.face[position]
    if known >= 0:
        if known != code:
            raise RevealError(
                f"position {position} holds {CARD_TEXT[known]}, not {CARD_TEXT[code]}"
            )
        return -1
    if g.pos_of[code] >= 0:
        raise RevealError(f"{CARD_TEXT[code]} was already seen at position {g.pos_of[code]}")
    pack_low = g.rules.lowest_rank * 4
    if code < pack_low:
        raise RevealError(f"{CARD_TEXT[code]} is not in this pack")
    g.face[position] = code
    g.pos_of[code] = position
    if position in g.pending_public:
        g.pending_public.remove(position)
    owner = g.hidden_owner.pop(position, None)
    if owner is not None:
        g.hidden[owner].remove(position)
        g.hands[owner] |= 1 << code
        if g.public[position]:
            g.shown[owner] |= 1 << code
    return code


def take_reveal_requests(g: GameState) -> list[tuple[int, int]]:
    """The (position, seat) pairs whose faces became due since the last call; seat -1
    means everyone (a public reveal). Only recorded with ``track_reveals=True``."""
    log = g.reveal_log
    if log is None:
        return []
    g.reveal_log = []
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
