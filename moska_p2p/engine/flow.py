"""The game's flow: who acts next and how a bout ends (RULES C7, M4-M13, M20-M22, D3-D10,
MM2-MM7, K1-K5).

Functions over a :class:`~.state.GameState`. They start the game (M4's exchange round, D3's
lowest trump, K1's twos), open a bout, keep its limit (M6, D5, MM3), run the throw-in and
giving rounds (C7, M10, M12, D6), discard a beaten-off table or have the defender pick up
(M11, M12, D6, MM5), refill hands and find who is out and who lost (M13, D10, MM7). Cards
turned from the stock (the indicator M3, attack deck M7 b, deck-kill M22, Mustamaija's trump
MM2, Kaavi's trump K2) go on here once their faces are known: at once with every face
known, else when :func:`reveal` gives it. The moves that drive the flow are in :mod:`.play`;
the cards it moves, :mod:`.deal`'s.
"""

from __future__ import annotations

from ..cards import CARD_TEXT, NUM_CARDS, SPADES, SUIT_MASKS
from .constants import (
    DEFEND,
    EXCHANGE_ROUND,
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
    W_ATTACK_DECK,
    W_DEAL_TRUMP,
    W_DECK_KILL,
    W_KAAVI_TRUMP,
    W_LOWEST_TRUMP,
    W_MM_TRUMP,
    WAITING,
)
from .deal import awaiting_lowest_trump, deal_hands, draw_up, record_face, set_trump
from .errors import RevealError
from .state import GameState

# ------------------------------------------- the start, and cards turned face up (C4, M3, D3)


def begin(g: GameState) -> None:
    """C4: deal, then turn the indicator (M3, D2) or, in Mustamaija and Kaavi, start with no
    trump (MM2, K1)."""
    indicator = deal_hands(g)
    if indicator < 0:
        _start(g)
    else:
        turn(g, indicator, W_DEAL_TRUMP)


def turn(g: GameState, pos: int, tag: int) -> None:
    """Turn the card at ``pos`` face up for everyone; go on once its face is known."""
    g.public[pos] = True
    card = g.face[pos]
    if card < 0:
        if g.reveal_log is not None:
            g.reveal_log.append((pos, -1))
        g.waiting_for = (tag, pos)
        g.phase = WAITING
        g.to_act_seat = -1
        return
    _resume(g, tag, pos, card)


def _resume(g: GameState, tag: int, pos: int, card: int) -> None:
    """Go on from a card turned face up (``tag`` says why it was turned), its face known."""
    g.waiting_for = None
    if tag == W_DEAL_TRUMP:
        set_trump(g, card)
        if not g.stock:
            # D2: the indicator is the dealer's card, now known to all.
            g.shown[g.dealer] |= 1 << card
        else:
            g.exchange_pos = pos
        _start(g)
    elif tag == W_ATTACK_DECK:
        _after_attack_deck(g, card)
    elif tag == W_DECK_KILL:
        _after_deck_kill(g, card)
    elif tag == W_MM_TRUMP:
        _after_mm_turn(g, pos, card)
    elif tag == W_KAAVI_TRUMP:
        _after_kaavi_trump(g, pos, card)


def _start(g: GameState) -> None:
    """The first decision of the game: M4's exchange round, D3's lowest trump, MM2's
    first attack, or K1's round of twos against the dealer."""
    fam = g.family
    first = (g.dealer + 1) % g.n
    if fam == F_MOSKA:
        if g.rules.trump_exchange == "before-first-attack":
            # M4: an exchange round opens the game, from the first attacker.
            g.attacker = first
            g.defender = g.defender_for(first)
            g.order = [(first + i) % g.n for i in range(g.n)]
            g.oidx = 0
            g.phase = EXCHANGE_ROUND
            g.to_act_seat = first
            return
        open_bout(g, first)
    elif fam == F_DURAK:
        if g.first_game:
            _find_lowest_trump(g)
            return
        open_bout(g, first)  # D3: later games, the dealer's left attacks
    elif fam == F_MUSTAMAIJA:
        open_bout(g, first)  # MM2
    else:
        start_twos_round(g)  # K1


def _find_lowest_trump(g: GameState) -> None:
    """D3: the holder of the lowest trump in any hand attacks first and shows it."""
    if any(g.hidden):
        g.waiting_for = (W_LOWEST_TRUMP, -1)
        g.phase = WAITING
        g.to_act_seat = -1
        return
    trumps = SUIT_MASKS[g.trump]
    best, holder = NUM_CARDS, -1
    for seat in range(g.n):
        mine = g.hands[seat] & trumps
        if mine:
            low = (mine & -mine).bit_length() - 1
            if low < best:
                best, holder = low, seat
    _resolve_lowest_trump(g, holder, best)


def _resolve_lowest_trump(g: GameState, holder: int, card: int) -> None:
    """D3: ``holder`` showed ``card`` and attacks first (no holder: the dealer's left)."""
    g.waiting_for = None
    if holder < 0:
        open_bout(g, (g.dealer + 1) % g.n)
        return
    g.shown[holder] |= 1 << card
    open_bout(g, holder)


def declare_lowest_trump(g: GameState, position: int | None) -> None:
    """Resolve D3 on a hidden-information engine: the position of the lowest trump shown
    (its face revealed beforehand), or ``None`` when nobody holds a trump."""
    if not awaiting_lowest_trump(g):
        raise RevealError("the game is not waiting for the lowest trump (RULES D3)")
    if position is None:
        _resolve_lowest_trump(g, -1, -1)
        return
    card = g.face[position]
    if card < 0:
        raise RevealError(f"position {position} must be revealed before it is shown (D3)")
    if card & 3 != g.trump:
        raise RevealError(f"{CARD_TEXT[card]} is not a trump (D3)")
    holder = next((s for s in range(g.n) if g.hands[s] >> card & 1), -1)
    if holder < 0:
        raise RevealError(f"{CARD_TEXT[card]} is in no hand (D3)")
    _resolve_lowest_trump(g, holder, card)


def reveal(g: GameState, position: int, card: int | str) -> None:
    """Tell this engine the face at ``position`` (a key was released for it); a game that
    waited for that face goes on."""
    code = record_face(g, position, card)
    if code >= 0 and g.waiting_for is not None and g.waiting_for[1] == position:
        _resume(g, g.waiting_for[0], position, code)


# ------------------------------------------------------------------------ bouts


def open_bout(g: GameState, attacker: int) -> None:
    """A new bout with ``attacker`` leading against the next seat in (M5, M6, D5, D12)."""
    g.bout_number += 1
    g.attacker = attacker
    defender = g.defender_for(attacker)
    g.defender = defender
    g.tab_a = []
    g.tab_k = []
    g.begged = []
    g.own_twos = []
    g.live = 0
    g.bout_count = 0
    g.ranks_all = 0
    g.ranks_att = 0
    g.transfer_shown = 0
    g.turned = -1
    cap = 6
    if g.family == F_DURAK and g.bout_number == 1:
        cap = g.first_cap  # D5 option first_bout_limit
    g.bout_limit = min(cap, g.hand_size(defender))
    g.phase = OPEN
    g.to_act_seat = attacker


def attack_room(g: GameState) -> int:
    """How many more attack cards the bout's limit allows now (M6, D5, MM3)."""
    mode = g.limit_mode
    if mode == L_SIX_OR_HAND:
        return g.bout_limit - g.bout_count
    if mode == L_HAND:
        return g.hand_size(g.defender) - g.live.bit_count()
    if mode == L_NONE:
        return UNLIMITED
    return g.hand_size(g.defender) if not g.stock else UNLIMITED


def self_room(g: GameState) -> bool:
    """M20: a self execution needs room for two cards and two cards in hand."""
    d = g.defender
    if g.hand_size(d) < 2:
        return False
    mode = g.limit_mode
    if mode == L_SIX_OR_HAND:
        return g.bout_limit - g.bout_count >= 2
    if mode == L_HAND:
        return g.hand_size(d) - g.live.bit_count() >= 2
    return True


def played_ranks(g: GameState) -> int:
    """The ranks cards may be added in: all played, or the attack's only (M10 option)."""
    return g.ranks_att if g.rules.throw_in_ranks == "attack-only" else g.ranks_all


def add_cards(g: GameState, seat: int, mask: int) -> None:
    """Lay attack cards from a hand onto the table (no checks)."""
    g.hands[seat] &= ~mask
    g.shown[seat] &= ~mask
    count = 0
    ranks = 0
    tab_a = g.tab_a
    tab_k = g.tab_k
    while mask:
        low = mask & -mask
        c = low.bit_length() - 1
        tab_a.append(c)
        tab_k.append(-1)
        ranks |= 1 << (c >> 2)
        mask ^= low
        count += 1
        g.live |= low
    if g.family == F_KAAVI:
        g.begged.extend([False] * count)
        g.own_twos.extend([False] * count)
    g.bout_count += count
    g.ranks_att |= ranks
    g.ranks_all |= ranks


def ended(g: GameState) -> bool:
    """M13, MM7: with the stock empty, empty hands are out; at most one left ends it."""
    if g.stock or g.family == F_DURAK:
        return False
    n = g.n
    out = g.out
    holders = 0
    last = -1
    for s in range(n):
        if out[s]:
            continue
        if not g.hands[s] and not g.hidden[s] and not (s == g.defender and g.live):
            out[s] = True
            continue
        holders += 1
        last = s
    if holders > 1:
        return False
    _finish(g, (last,) if holders else ())
    return True


def _finish(g: GameState, losers: tuple[int, ...]) -> None:
    """The game is over with ``losers`` (empty: a draw, D10)."""
    g.loser_seats = losers
    g.phase = OVER
    g.to_act_seat = -1


def after_lay(g: GameState, seat: int) -> None:
    """After attack cards were laid (opening, throw-in, giving) by ``seat``."""
    fam = g.family
    if (fam in (F_MOSKA, F_KAAVI)) and seat != g.defender:
        draw_up(g, seat, g.refill_to)  # M8


def cleared(g: GameState) -> None:
    """No live card is left on the table."""
    if g.family == F_MUSTAMAIJA:
        _beaten_off(g)  # MM5: the bout ends by itself
        return
    start_throw_in(g)


def _round_order(g: GameState) -> list[int]:
    """C7: the principal attacker, then clockwise from the defender's left."""
    n = g.n
    d = g.defender
    a = g.attacker
    order = [a]
    teams = g.rules.teams
    for i in range(1, n):
        s = (d + i) % n
        if s in (a, d) or (teams and s % 2 == d % 2):
            continue
        order.append(s)
    return order


def _askable(g: GameState, seat: int) -> bool:
    """Whether ``seat`` can be asked to add cards: in, with cards in hand."""
    return not g.out[seat] and (g.hands[seat] != 0 or bool(g.hidden[seat]))


def start_throw_in(g: GameState) -> None:
    """M10, D4: every live card killed; the others may throw in, the defender last
    (M20 self execution), or the bout is beaten off at once (M11)."""
    if g.out[g.defender] or attack_room(g) <= 0:
        _beaten_off(g)  # M11: the limit allows no further card
        return
    order = _round_order(g)
    if g.rules.self_execution != "off":
        order.append(g.defender)  # M20: the defender is asked last
    g.order = order
    g.oidx = 0
    g.phase = THROW_IN
    ask_throw_in(g)


def ask_throw_in(g: GameState) -> None:
    """Ask the next seat of the throw-in round that can add; none left: beaten off."""
    order = g.order
    d = g.defender
    while g.oidx < len(order):
        s = order[g.oidx]
        if s == d:
            if self_room(g):
                g.to_act_seat = s
                return
        elif _askable(g, s):
            g.to_act_seat = s
            return
        g.oidx += 1
    _beaten_off(g)  # every seat passed: M11


def take(g: GameState) -> None:
    """M12, D6, MM5: the defender takes; in Moska the killed pairs are discarded first."""
    if g.family != F_DURAK:
        # M12, MM5: the killed pairs are discarded at once.
        mask = 0
        keep_a: list[int] = []
        for a, k in zip(g.tab_a, g.tab_k, strict=True):
            if k >= 0:
                mask |= (1 << a) | (1 << k)
            else:
                keep_a.append(a)
        g.discard |= mask
        g.tab_a = keep_a
        g.tab_k = [-1] * len(keep_a)
        if g.family == F_KAAVI:
            g.begged = [False] * len(keep_a)
            g.own_twos = [False] * len(keep_a)
    _start_give(g)


def _start_give(g: GameState) -> None:
    """M12, D6: before the defender picks up, the others may give it more cards."""
    if g.family == F_MUSTAMAIJA:
        _pick_up(g)
        return
    g.order = _round_order(g)
    g.oidx = 0
    g.passes = 0
    g.phase = GIVE
    ask_give(g)


def ask_give(g: GameState) -> None:
    """Ask the next seat of the giving round (C7); a full round of passes ends it."""
    if attack_room(g) <= 0:
        _pick_up(g)
        return
    order = g.order
    m = len(order)
    eligible = 0
    for s in order:
        if _askable(g, s):
            eligible += 1
    if eligible == 0 or g.passes >= eligible:
        _pick_up(g)  # every seat passed in a row (C7, M12, D6)
        return
    i = g.oidx
    while not _askable(g, order[i % m]):
        i += 1
    g.oidx = i % m
    g.to_act_seat = order[g.oidx]


def _discard_table(g: GameState) -> None:
    """Every card on the table goes out of play (M11, D9)."""
    mask = 0
    for a, k in zip(g.tab_a, g.tab_k, strict=True):
        mask |= 1 << a
        if k >= 0:
            mask |= 1 << k
    g.discard |= mask
    g.tab_a = []
    g.tab_k = []
    g.live = 0


def _beaten_off(g: GameState) -> None:
    """M11, D9, MM6: every attack card killed; the table is discarded."""
    _discard_table(g)
    _end_bout(g, held=True)


def _pick_up(g: GameState) -> None:
    """M12, D6, MM5: the defender picks up (every table card in Durak)."""
    d = g.defender
    if g.family == F_DURAK:
        mask = 0
        for a, k in zip(g.tab_a, g.tab_k, strict=True):
            mask |= 1 << a
            if k >= 0:
                mask |= 1 << k
    else:
        mask = g.live
    g.hands[d] |= mask
    g.shown[d] |= mask
    g.picked |= mask
    g.tab_a = []
    g.tab_k = []
    g.live = 0
    _end_bout(g, held=False)


def _end_bout(g: GameState, held: bool) -> None:
    """Refill (M11, M12, D7, MM5), find who is out (M13, D10) and open the next bout:
    the defender leads if it held, else the seat after it (M11, D9, MM6)."""
    d = g.defender
    fam = g.family
    g.phase = WAITING
    g.to_act_seat = -1
    if fam == F_DURAK:
        _durak_refill(g)
        if not g.stock:
            # D10: when a bout ends with the stock empty, empty hands are out.
            for s in range(g.n):
                if not g.out[s] and not g.hands[s] and not g.hidden[s]:
                    g.out[s] = True
            if _durak_over(g):
                return
    else:
        draw_up(g, d, g.refill_to)  # M11, M12, MM5
        if ended(g):
            return
    if held and not g.out[d]:
        open_bout(g, d)  # M11, D9, MM6: a defender who held attacks next
    else:
        open_bout(g, g.next_in(d))


def _durak_refill(g: GameState) -> None:
    """D7: principal attacker first, then clockwise from it, the defender last."""
    if not g.stock:
        return
    n, a, d = g.n, g.attacker, g.defender
    for i in range(n):
        s = (a + i) % n
        if s != d and not g.out[s]:
            draw_up(g, s, g.refill_to)
    draw_up(g, d, g.refill_to)


def _durak_over(g: GameState) -> bool:
    """D10, D12: the game ends when at most one seat (or team) still holds cards."""
    holders = [s for s in range(g.n) if not g.out[s]]
    if g.rules.teams:
        teams = {s % 2 for s in holders}
        if len(teams) > 1:
            return False
        if not teams:
            _finish(g, ())
            return True
        team = teams.pop()
        _finish(g, tuple(s for s in range(g.n) if s % 2 == team))
        return True
    if len(holders) > 1:
        return False
    _finish(g, tuple(holders))
    return True


def next_exchange(g: GameState) -> None:
    """M4: the next seat of the exchange round; after the last, the first bout opens."""
    g.oidx += 1
    if g.oidx < len(g.order):
        g.to_act_seat = g.order[g.oidx]
    else:
        open_bout(g, g.order[0])


def _after_attack_deck(g: GameState, card: int) -> None:
    """M7 (b), M8: the card turned from the stock is the attack card."""
    g.tab_a.append(card)
    g.tab_k.append(-1)
    if g.family == F_KAAVI:
        g.begged.append(False)
        g.own_twos.append(False)
    g.live |= 1 << card
    g.bout_count += 1
    g.ranks_att |= 1 << (card >> 2)
    g.ranks_all |= 1 << (card >> 2)
    after_lay(g, g.attacker)  # M8
    g.phase = DEFEND
    g.to_act_seat = g.defender
    ended(g)


def _after_deck_kill(g: GameState, card: int) -> None:
    """M22: the card turned by deck-kill kills a live card it beats, or the defender
    takes it with the table."""
    beat = g.beaters
    if any(g.live >> a & 1 and beat[a] >> card & 1 for a in g.tab_a):
        g.turned = card  # M22: it must kill one live card it beats
        g.phase = FORCED_KILL
        g.to_act_seat = g.defender
        return
    d = g.defender
    g.hands[d] |= 1 << card  # M22: it beats none; the defender has taken
    g.shown[d] |= 1 << card
    take(g)


def mm_turn(g: GameState) -> None:
    """MM2: turn the top card of the stock to find the trump."""
    pos = g.stock.pop()
    turn(g, pos, W_MM_TRUMP)


def _after_mm_turn(g: GameState, pos: int, card: int) -> None:
    """MM2: a spade goes to the bottom and the next card is turned; any other suit is
    trump, and the attacker refills (MM5)."""
    g.stock.insert(0, pos)
    if card & 3 == SPADES:
        mm_turn(g)  # MM2: a spade goes to the bottom; turn the next
        return
    set_trump(g, card)
    draw_up(g, g.attacker, g.refill_to)  # MM5: then the attacker refills
    g.phase = DEFEND
    g.to_act_seat = g.defender


def start_twos_round(g: GameState) -> None:
    """K1: the round of twos against the dealer, from the dealer's right."""
    n, dealer = g.n, g.dealer
    right = (dealer - 1) % n
    g.bout_number = 1
    g.attacker = right
    g.defender = dealer
    g.tab_a, g.tab_k, g.begged, g.own_twos = [], [], [], []
    g.live = g.bout_count = g.ranks_all = g.ranks_att = 0
    g.bout_limit = min(6, g.hand_size(dealer))
    g.twos_layers = []
    g.order = [right] + [(dealer + i) % n for i in range(1, n) if (dealer + i) % n != right]
    g.oidx = 0
    g.phase = TWOS
    g.to_act_seat = right


def next_twos(g: GameState) -> None:
    """K1: the next seat of the twos round; after the last, the trump is turned (K2)."""
    g.oidx += 1
    if g.oidx < len(g.order):
        g.to_act_seat = g.order[g.oidx]
        return
    g.phase = WAITING
    g.to_act_seat = -1
    turn(g, g.stock.pop(), W_KAAVI_TRUMP)  # K2


def _after_kaavi_trump(g: GameState, pos: int, card: int) -> None:
    """K2: the trump is set, the seats that laid twos refill in order, and the dealer
    defends against them (or leads, when nobody laid a two)."""
    g.stock.insert(0, pos)
    set_trump(g, card)
    g.exchange_pos = pos
    for seat in g.twos_layers:
        draw_up(g, seat, g.refill_to)  # K2: in the order they laid
    if g.tab_a:
        g.phase = DEFEND
        g.to_act_seat = g.defender
    else:
        open_bout(g, g.dealer)  # K2: nobody laid a two

