"""Playing a move: its checks, with the rule each refusal names, and its effect.

Functions over a :class:`~.state.GameState`: for each kind of move, a ``_play_*`` that
checks it against the rules (C3, C5, M4, M6, M7, M9-M12, M20, M22, D4, D5, D8, D11, MM3,
K1-K5) and raises :class:`~.errors.IllegalMove` with the reason, leaving the game unchanged,
and a ``_do_*`` with its effect, which :func:`play_unchecked` calls directly for moves taken
from :func:`~.movegen.legal_moves` (search). What follows a move -- the next seat, the end
of the bout -- is the bout's flow (:mod:`.flow`).
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
from .deal import draw, draw_up, pop_stock
from .errors import IllegalMove
from .flow import (
    add_cards,
    after_lay,
    ask_give,
    ask_throw_in,
    attack_room,
    cleared,
    ended,
    mm_turn,
    next_exchange,
    next_twos,
    played_ranks,
    self_room,
    start_throw_in,
    take,
    turn,
)
from .movegen import may_exchange, transfer_rank
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
from .state import GameState


def play(g: GameState, move: Move | str, seat: int | None = None) -> Move:
    """Play ``move`` (a :class:`Move` or its text) for the seat to act.

    ``seat``, when given, must be the seat to act (a remote peer's claim). Returns the
    move played, in canonical form. Raises :class:`IllegalMove`; the game is unchanged.
    """
    if isinstance(move, str):
        move = parse_move(move)
    actor = g.to_act_seat
    if actor < 0 or g.pending_public:
        if g.phase == OVER:
            raise IllegalMove("the game is over")
        raise IllegalMove("the game waits for a card to be revealed; no move is possible")
    if seat is not None and seat != actor:
        raise IllegalMove(f"seat {seat} may not move: it is seat {actor}'s {g.decision}")
    kind = move[0]
    if kind == KILL:
        _play_kill(g, actor, move[1])
    elif kind == ATTACK:
        cards = move[1]
        if len(cards) > 1 and list(cards) != sorted(cards):
            move = attack_move(tuple(sorted(cards)))
        _play_attack(g, actor, move[1])
    elif kind == PASS:
        _play_pass(g, actor)
    elif kind == TAKE:
        _play_take(g, actor)
    elif kind == EXCHANGE:
        _play_exchange(g, actor)
    elif kind == SELF:
        _play_self(g, actor, move[1])
    elif kind == ATTACK_DECK:
        _play_attack_deck(g, actor)
    elif kind == DECK_KILL:
        _play_deck_kill(g, actor)
    elif kind in (TRANSFER, TRANSFER_SHOW):
        _play_transfer(g, actor, move[1][0], kind == TRANSFER_SHOW)
    elif kind == BEG:
        _play_beg(g, actor, move[1])
    else:  # pragma: no cover - every kind is handled above
        raise IllegalMove(f"unknown move {move}")
    g.history.append((actor, move))
    return move


def play_unchecked(g: GameState, move: Move) -> None:
    """Play ``move``, taken from :meth:`legal_moves` or :meth:`random_move` of this very
    state, without validating it again (the fast path of search).

    Whatever :meth:`play` checks that those methods already guarantee (the seat, the
    phase, the cards held, C3 beating, the limits of M6/D5/MM3, M7's groups, D11, K4) is
    skipped; the resulting state is the one :meth:`play` would reach. A move that is not
    legal here corrupts the game silently: use :meth:`play` for anything else.
    """
    actor = g.to_act_seat
    kind, cards = move
    if kind == KILL:
        _do_kill(g, actor, cards[0], cards[1])
    elif kind == PASS:
        _play_pass(g, actor)  # its checks are the branches of no legal pass
    elif kind == ATTACK:
        mask = 0
        for c in cards:
            mask |= 1 << c
        _do_attack(g, actor, mask)
    elif kind == TAKE:
        take(g)
    elif kind == EXCHANGE:
        _do_exchange(g, actor)
    elif kind == SELF:
        _do_self(g, actor, cards[0], cards[1])
    elif kind == ATTACK_DECK:
        turn(g, pop_stock(g), W_ATTACK_DECK)
    elif kind == DECK_KILL:
        turn(g, pop_stock(g), W_DECK_KILL)
    elif kind == BEG:
        _do_beg(g, actor, g.tab_a.index(cards[0]), cards[1])
    else:  # TRANSFER, TRANSFER_SHOW
        _do_transfer(g, actor, cards[0], kind == TRANSFER_SHOW)
    g.history.append((actor, move))


def _need_known(g: GameState, seat: int, mask: int) -> None:
    """Refuse a move naming a card ``seat`` does not hold (or this engine cannot see)."""
    missing = mask & ~g.hands[seat]
    if missing:
        names = " ".join(CARD_TEXT[c] for c in bit_list(missing))
        raise IllegalMove(f"seat {seat} does not hold {names}")


def _wrong_phase(g: GameState, seat: int, what: str) -> IllegalMove:
    """The refusal of ``what`` in this phase, saying what the seat must do (C5)."""
    return IllegalMove(f"{what} is not possible now: seat {seat} must {_expected(g)}")


def _expected(g: GameState) -> str:
    """What the seat to act must do now, in words (C5)."""
    phase = g.phase
    if phase == OPEN:
        return "open the bout with an attack"
    if phase == DEFEND:
        return "defend: kill a live card or take"
    if phase == FORCED_KILL:
        return f"kill a live card with {CARD_TEXT[g.turned]}, turned from the stock (M22)"
    if phase == THROW_IN:
        if g.to_act_seat == g.defender:
            return "self-execute or pass (M20)"
        return "throw in cards of the bout's ranks or pass"
    if phase == GIVE:
        return "give cards of the bout's ranks to the defender or pass"
    if phase == EXCHANGE_ROUND:
        return "answer exchange or pass (M4)"
    if phase == TWOS:
        return "attack the dealer with twos or pass (K1)"
    return "wait"


def _play_kill(g: GameState, seat: int, cards: tuple[int, ...]) -> None:
    """Check a kill (C3, M9, M22) and play it."""
    a, k = cards
    phase = g.phase
    if phase == FORCED_KILL:
        if k != g.turned:
            raise IllegalMove(
                f"the card turned from the stock, {CARD_TEXT[g.turned]}, must kill (M22)"
            )
    elif phase != DEFEND:
        raise _wrong_phase(g, seat, "kill")
    else:
        _need_known(g, seat, 1 << k)
    if not g.live >> a & 1:
        raise IllegalMove(f"{CARD_TEXT[a]} is not a live attack card on the table")
    if not g.beaters[a] >> k & 1:
        raise IllegalMove(f"{CARD_TEXT[k]} does not beat {CARD_TEXT[a]} (C3)")
    _do_kill(g, seat, a, k)


def _do_kill(g: GameState, seat: int, a: int, k: int) -> None:
    """M9, M22, D4: ``k`` kills the live ``a`` (from the hand, or the card turned)."""
    if g.phase == FORCED_KILL:
        g.turned = -1
        g.phase = DEFEND
    else:
        g.hands[seat] &= ~(1 << k)
        g.shown[seat] &= ~(1 << k)
    g.tab_k[g.tab_a.index(a)] = k
    g.live ^= 1 << a
    g.ranks_all |= 1 << (k >> 2)
    if ended(g):
        return
    if not g.live:
        cleared(g)


def _play_take(g: GameState, seat: int) -> None:
    """Check a take (M9, D6) and play it."""
    if g.phase != DEFEND:
        raise _wrong_phase(g, seat, "take")
    take(g)


def _play_pass(g: GameState, seat: int) -> None:
    """A pass in a round (C7, M4, K1); refused where the seat must act (C5, M9)."""
    phase = g.phase
    if phase == THROW_IN:
        g.oidx += 1
        ask_throw_in(g)
    elif phase == GIVE:
        g.passes += 1
        g.oidx = (g.oidx + 1) % len(g.order)
        ask_give(g)
    elif phase == EXCHANGE_ROUND:
        next_exchange(g)
    elif phase == TWOS:
        next_twos(g)
    elif phase == OPEN:
        raise IllegalMove(f"seat {seat} opens the bout and may not pass (C5)")
    elif phase in (DEFEND, FORCED_KILL):
        raise IllegalMove(
            f"seat {seat} defends against live cards and may not pass: kill or take (M9)"
        )
    else:  # pragma: no cover
        raise _wrong_phase(g, seat, "pass")


def _play_exchange(g: GameState, seat: int) -> None:
    """Check a trump exchange (M4, D8) and play it."""
    if not may_exchange(g, seat):
        raise IllegalMove(_why_no_exchange(g, seat))
    _do_exchange(g, seat)


def _do_exchange(g: GameState, seat: int) -> None:
    """M4, D8: swap the low trump in ``seat``'s hand for the indicator."""
    low = make_card(g.low_trump_rank, g.trump)
    old = g.indicator
    low_pos = g.pos_of[low]
    g.hands[seat] = (g.hands[seat] & ~(1 << low)) | (1 << old)
    g.shown[seat] = (g.shown[seat] & ~(1 << low)) | (1 << old)
    g.stock[0] = low_pos
    g.public[low_pos] = True
    g.indicator = low
    g.exchange_pos = -1  # nobody holds the low trump any more
    if g.phase == EXCHANGE_ROUND:
        next_exchange(g)  # M4: here the exchange is the seat's answer


def _why_no_exchange(g: GameState, seat: int) -> str:
    """Why ``seat`` may not exchange the trump now (M4, D8, MM: none)."""
    fam = g.family
    if fam == F_MUSTAMAIJA:
        return "Mustamaija has no trump exchange"
    if fam == F_MOSKA and g.rules.trump_exchange == "never":
        return "this table plays without trump exchange (trump_exchange=never)"
    if (
        fam == F_MOSKA
        and g.rules.trump_exchange == "before-first-attack"
        and g.phase != EXCHANGE_ROUND
    ):
        return "the trump may be exchanged only before the first attack (M4)"
    if g.exchange_pos < 0 or g.trump < 0:
        return "the trump indicator is no longer in the stock to exchange (M4)"
    low = make_card(g.low_trump_rank, g.trump)
    if fam == F_DURAK and g.picked >> low & 1 and g.hands[seat] >> low & 1:
        return f"{CARD_TEXT[low]} was picked up, so it buys no exchange (D8)"
    return f"seat {seat} does not hold {CARD_TEXT[low]}, the low trump (M4, D8)"


def _play_attack(g: GameState, seat: int, cards: tuple[int, ...]) -> None:
    """Check an attack -- an opening, a throw-in, a gift or twos -- and play it."""
    phase = g.phase
    mask = 0
    for c in cards:
        mask |= 1 << c
    count = len(cards)
    if mask.bit_count() != count:
        raise IllegalMove("an attack names a card twice")
    if phase == OPEN:
        _check_opening(g, mask, count)
        _need_known(g, seat, mask)
    elif phase in (THROW_IN, GIVE):
        if seat == g.defender:
            raise IllegalMove(
                f"seat {seat} is the defender and may not attack itself"
                " (only self execution, M20)"
            )
        _need_known(g, seat, mask)
        _check_addition(g, mask, count)
    elif phase == TWOS:
        _need_known(g, seat, mask)
        if mask & ~TWOS_MASK:
            raise IllegalMove("only twos may be laid against the dealer now (K1)")
        if count > attack_room(g):
            raise IllegalMove(f"the bout's limit allows {attack_room(g)} more cards (M6)")
    else:
        raise _wrong_phase(g, seat, "attack")
    _do_attack(g, seat, mask)


def _do_attack(g: GameState, seat: int, mask: int) -> None:
    """Lay the attack cards of ``mask``: an opening (M7, D4, MM3), a throw-in (M10), a
    gift (M12, D6) or the dealer's twos (K1); then refill and pass the turn on."""
    phase = g.phase
    if phase == OPEN:
        add_cards(g, seat, mask)
        if g.family == F_MUSTAMAIJA and g.trump < 0:
            g.phase = WAITING
            g.to_act_seat = -1
            mm_turn(g)  # MM2: turn the trump before the attacker refills
            return
        if g.family == F_MUSTAMAIJA:
            draw_up(g, seat, g.refill_to)  # MM5
        after_lay(g, seat)
        g.phase = DEFEND
        g.to_act_seat = g.defender
        ended(g)
        return
    if phase in (THROW_IN, GIVE):
        add_cards(g, seat, mask)
        after_lay(g, seat)
        if phase == THROW_IN:
            g.phase = DEFEND
            g.to_act_seat = g.defender
            ended(g)
            return
        g.passes = 0
        g.oidx = (g.oidx + 1) % len(g.order)
        if ended(g):
            return
        ask_give(g)
        return
    add_cards(g, seat, mask)  # TWOS
    g.twos_layers.append(seat)
    next_twos(g)


def _check_opening(g: GameState, mask: int, count: int) -> None:
    """M6, M7, D4, MM3, K3: an opening's size and its groups of equal rank."""
    room = attack_room(g)
    fam = g.family
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
    if fam == F_KAAVI and g.defender == g.dealer:
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


def _check_addition(g: GameState, mask: int, count: int) -> None:
    """M10, M12, D4, K3: added cards of played ranks, within the limit (M6, D5)."""
    allowed = cards_of_ranks(played_ranks(g))
    if g.family == F_KAAVI and g.defender == g.dealer:
        allowed |= TWOS_MASK  # K3
    bad = mask & ~allowed
    if bad:
        which = "attack cards" if g.rules.throw_in_ranks == "attack-only" else "cards"
        raise IllegalMove(
            f"{CARD_TEXT[bit_list(bad)[0]]}: its rank was not among the {which} played in"
            " this bout (M10, M12, D4)"
        )
    room = attack_room(g)
    if count > room:
        raise IllegalMove(
            f"the bout's limit allows {max(room, 0)} more card{'s' if room != 1 else ''}"
            " (M6, D5)"
        )


def _play_self(g: GameState, seat: int, cards: tuple[int, ...]) -> None:
    """Check a self execution (M20, K5) and play it."""
    a, k = cards
    phase = g.phase
    if seat != g.defender or phase not in (DEFEND, THROW_IN):
        raise _wrong_phase(g, seat, "self execution")
    _need_known(g, seat, (1 << a) | (1 << k))
    if not g.beaters[a] >> k & 1:
        raise IllegalMove(f"{CARD_TEXT[k]} does not beat {CARD_TEXT[a]} (C3)")
    kaavi = g.family == F_KAAVI
    if kaavi:
        if g.defender != g.dealer or phase != DEFEND or a >> 2 != 0:
            raise IllegalMove(
                "in Kaavi only the dealer, defending against live cards, kills its own"
                " twos (K5)"
            )
        if len(g.stock) < 2:
            raise IllegalMove("the dealer's own twos need two cards in the stock (K5)")
    else:
        if g.rules.self_execution == "off":
            raise IllegalMove("this table plays without self execution (M20)")
        if not cards_of_ranks(played_ranks(g)) >> a & 1:
            which = (
                "among the attack cards"
                if g.rules.throw_in_ranks == "attack-only"
                else "played"
            )
            raise IllegalMove(f"{CARD_TEXT[a]}: its rank was not {which} in this bout (M20)")
        if not self_room(g):
            raise IllegalMove("the bout's limit leaves no room for a self execution (M20)")
    _do_self(g, seat, a, k)


def _do_self(g: GameState, seat: int, a: int, k: int) -> None:
    """M20, K5: the defender lays ``a`` from its own hand and kills it with ``k``."""
    phase = g.phase
    kaavi = g.family == F_KAAVI
    g.hands[seat] &= ~((1 << a) | (1 << k))
    g.shown[seat] &= ~((1 << a) | (1 << k))
    g.tab_a.append(a)
    g.tab_k.append(k)
    g.ranks_att |= 1 << (a >> 2)
    g.ranks_all |= (1 << (a >> 2)) | (1 << (k >> 2))
    if kaavi:
        g.begged.append(False)
        g.own_twos.append(True)
        draw(g, seat)
        draw(g, seat)  # K5: the dealer draws two cards
    else:
        g.bout_count += 2  # M20: two cards against the limit
        if g.rules.self_execution == "on-with-draw" and g.stock:
            draw(g, seat)  # M21
    if ended(g):
        return
    if phase == THROW_IN:
        start_throw_in(g)  # M20: like any added card, a new throw-in round
    elif not g.live:
        cleared(g)


def _play_attack_deck(g: GameState, seat: int) -> None:
    """Check attack deck (M7 b) and turn the top card of the stock."""
    if g.phase != OPEN or g.family not in (F_MOSKA, F_KAAVI):
        raise _wrong_phase(g, seat, "attack deck")
    if not g.stock:
        raise IllegalMove("the stock is empty: attack deck is not possible (M7)")
    turn(g, pop_stock(g), W_ATTACK_DECK)  # M7 (b)


def _play_deck_kill(g: GameState, seat: int) -> None:
    """Check deck-kill (M22) and turn the top card of the stock."""
    if g.phase != DEFEND or g.rules.deck_kill != "on":
        raise _wrong_phase(g, seat, "deck-kill")
    if not g.stock:
        raise IllegalMove("the stock is empty: deck-kill is not possible (M22)")
    turn(g, pop_stock(g), W_DECK_KILL)


def _play_transfer(g: GameState, seat: int, card: int, show: bool) -> None:
    """Check a transfer (D11) and play it."""
    if g.phase != DEFEND or not g.rules.transfer:
        raise _wrong_phase(g, seat, "transfer")
    rank = transfer_rank(g)
    if rank < 0:
        raise IllegalMove(
            "a transfer needs every attack card of one rank and none beaten yet (D11)"
        )
    if card >> 2 != rank:
        raise IllegalMove(f"{CARD_TEXT[card]} is not of the attack's rank (D11)")
    _need_known(g, seat, 1 << card)
    nd = g.defender_for(seat)
    cap = g.first_cap if g.bout_number == 1 else 6
    count = len(g.tab_a) + (0 if show else 1)
    if count > min(cap, g.hand_size(nd)):
        raise IllegalMove(
            f"seat {nd} could face at most {min(cap, g.hand_size(nd))} cards (D11)"
        )
    if show:
        if g.rules.transfer_show_trump != "on":
            raise IllegalMove("this table plays without transfer by showing a trump (D11)")
        if card & 3 != g.trump:
            raise IllegalMove(f"{CARD_TEXT[card]} is not a trump (D11)")
        if g.transfer_shown >> seat & 1:
            raise IllegalMove(f"seat {seat} already transferred by showing this bout (D11)")
    _do_transfer(g, seat, card, show)


def _do_transfer(g: GameState, seat: int, card: int, show: bool) -> None:
    """D11: pass the attack on to the next defender, by laying or by showing ``card``."""
    nd = g.defender_for(seat)
    cap = g.first_cap if g.bout_number == 1 else 6
    if show:
        g.transfer_shown |= 1 << seat
        g.shown[seat] |= 1 << card
    else:
        add_cards(g, seat, 1 << card)
    g.attacker = seat
    g.defender = nd
    g.bout_limit = min(cap, g.hand_size(nd))
    g.bout_count = len(g.tab_a)
    g.to_act_seat = nd


def _play_beg(g: GameState, seat: int, cards: tuple[int, ...]) -> None:
    """Check begging (K4) and play it."""
    a, k = cards
    if g.phase != DEFEND or g.family != F_KAAVI:
        raise _wrong_phase(g, seat, "beg")
    if a not in g.tab_a:
        raise IllegalMove(f"{CARD_TEXT[a]} is not on the table")
    i = g.tab_a.index(a)
    old = g.tab_k[i]
    if old < 0:
        raise IllegalMove(f"{CARD_TEXT[a]} is not killed yet: kill it instead (K4)")
    if g.own_twos[i]:
        raise IllegalMove(f"{CARD_TEXT[a]} is the dealer's own two, not an attack card (K4)")
    if g.begged[i]:
        raise IllegalMove(f"the killer of {CARD_TEXT[a]} was already exchanged once (K4)")
    _need_known(g, seat, 1 << k)
    if not g.beaters[a] >> k & 1:
        raise IllegalMove(f"{CARD_TEXT[k]} does not beat {CARD_TEXT[a]} (C3)")
    _do_beg(g, seat, i, k)


def _do_beg(g: GameState, seat: int, i: int, k: int) -> None:
    """K4: ``k`` replaces the killer of table pair ``i``, which goes to the hand."""
    old = g.tab_k[i]
    g.hands[seat] = (g.hands[seat] & ~(1 << k)) | (1 << old)
    g.shown[seat] = (g.shown[seat] & ~(1 << k)) | (1 << old)
    g.tab_k[i] = k
    g.begged[i] = True
    g.ranks_all |= 1 << (k >> 2)

