"""What one seat knows, and games rebuilt from that knowledge alone (DESIGN.md: bots get
views, never the full state; RULES C5).

A :class:`~.game.View` keeps a *public snapshot* (:func:`public_snapshot`): every field of
the game that all seats know, copied, plus the seat's own hand. From the view's data alone
this module rebuilds

* :func:`masked_game` -- the game as an engine of that seat would hold it: its own hand and
  the public cards known, every other card a hidden position (``face[pos] == -1``, listed
  in ``hidden[seat]`` for a hand), like a network peer's engine; and
* :func:`determinize` -- a full-information game consistent with that knowledge, every card
  the seat cannot place dealt at random among the places it could be: the sampling step of
  ISMCTS.

Nothing here reads the game a view was taken from, so nothing hidden can reach a bot
through a view, its pickle or its JSON form.

**Positions.** A deck position is how the engine names a card's slot (DESIGN.md). The stock's
positions, and which of them are face up (the indicator, M23's exposed card), are public and
kept. Every other position -- a hand's slot, a card on the table or discarded -- is assigned
afresh in a canonical order (hidden slots seat by seat, then the known cards by card code):
the real position of a card in another hand, or which slot of a hand a played card came
from, is not something a player at a real table sees, and keeping it would make views of
two deals that differ only in hidden cards differ. The engine never looks at those positions
again except for the low trump's (M4, D8), which any free slot serves.

**Limits.** A determinization conditions on every card shown, picked up, exchanged, laid,
discarded or face up in the stock, on hand sizes and on the trump indicator. It does not
condition on inferences from play: Durak's first attack (D3) also tells that no hand was
dealt a trump lower than the one shown, and such lower trumps may be dealt into a hand here.
Weighing deals by such inferences is the search's business: it deals the hands itself
(``hands``, below; ``moska_p2p.bots.inference`` does it for ISMCTS).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from ..cards import NUM_CARDS, cards_list
from .cardsets import BEAT
from .constants import F_MUSTAMAIJA, W_DEAL_TRUMP
from .errors import HiddenCardError
from .state import GameState

if TYPE_CHECKING:
    from .moves import Move

Snapshot = tuple[Any, ...]
"""The public fields of a game a view keeps, in the order :func:`public_snapshot` lists."""


class Seen(Protocol):
    """What this module reads of a :class:`~.game.View`: declared here, so that rebuilding a
    game from a view needs neither the view's module nor the game's (no import circle)."""

    seat: int
    players: int
    dealer: int
    attacker: int
    defender: int
    hand_sizes: list[int]
    known_mask: list[int]
    table_codes: list[tuple[int, int]]
    trump_suit: int
    trump_card_code: int
    stock_known: list[tuple[int, int]]
    discard_mask: int
    out: list[bool]
    bout_limit: int
    bout_count: int

    @property
    def history(self) -> list[tuple[int, Move]]: ...

    @property
    def snapshot(self) -> Snapshot: ...


class DeterminizeError(HiddenCardError):
    """A view that cannot be determinized: the seat's own hand holds cards it has not seen
    yet, or the game waits for a face to be revealed (no seat is to act)."""


def public_snapshot(game: GameState, seat: int) -> Snapshot:
    """The public fields of ``game`` that a view for ``seat`` needs beyond its own
    attributes to rebuild the game as that seat knows it. Every list is copied (the live
    game goes on changing its own); no face, no position of a hand's card, no reveal log.
    Other hands' shown cards are the view's ``known_mask``; only this seat's are here."""
    return (
        game.rules,
        game.first_game,
        game.phase,
        game.to_act_seat,
        game.bout_number,
        game.turned,
        game.transfer_shown,
        game.ranks_all,
        game.ranks_att,
        game.live,
        game.picked,
        game.oidx,
        game.passes,
        game.exchange_pos,
        game.waiting_for,
        game.loser_seats,
        game.order[:],
        game.begged[:],
        game.own_twos[:],
        game.twos_layers[:],
        game.pending_public[:],
        game.stock[:],
        game.public[:],
        game.shown[seat],
    )


def masked_game(view: Seen) -> tuple[GameState, int]:
    """The game as ``view.seat``'s own engine would hold it, rebuilt from the view alone,
    and the mask of the cards that seat cannot place (see the module docstring)."""
    (
        rules,
        first_game,
        phase,
        to_act_seat,
        bout_number,
        turned,
        transfer_shown,
        ranks_all,
        ranks_att,
        live,
        picked,
        oidx,
        passes,
        exch_pos,
        awaiting,
        loser_seats,
        order,
        begged,
        own_twos,
        twos_layers,
        pending_public,
        stock,
        public_flags,
        own_shown,
    ) = view.snapshot
    seat, n = view.seat, view.players
    g = GameState()
    g.set_table(rules, n, view.dealer, first_game)
    size = rules.pack_size
    # The known places: this hand, what others showed (M4, M12, M22, D3), the table, the
    # discard, M22's turned card, and the face-up cards of the stock.
    shown = list(view.known_mask)
    shown[seat] = own_shown
    hands = list(view.known_mask)  # this hand whole, the others' shown cards
    known = view.discard_mask
    for mask in hands:
        known |= mask
    tab_a = [a for a, _ in view.table_codes]
    tab_k = [k for _, k in view.table_codes]
    for a, k in view.table_codes:
        known |= 1 << a
        if k >= 0:
            known |= 1 << k
    if turned >= 0:
        known |= 1 << turned
    face = [-1] * size
    public = [False] * size
    for pos in stock:
        public[pos] = public_flags[pos]
    for place, card in view.stock_known:
        face[stock[place]] = card
        known |= 1 << card
    off_stock = known & ~_stock_cards(view)  # known cards outside the stock, by code
    # A face the game waits for outside the stock keeps its (public) position: a card
    # turned by attack deck, deck-kill, MM2 or K2, or D2's indicator in the dealer's hand.
    # (D3's wait for the lowest trump names no position: nothing is reserved.)
    reserved = -1
    if awaiting is not None and awaiting[1] >= 0 and awaiting[1] not in stock:
        reserved = awaiting[1]
        public[reserved] = True
    in_stock = set(stock)
    free = iter([p for p in range(size) if p not in in_stock and p != reserved])
    hidden: list[list[int]] = []
    hidden_owner: dict[int, int] = {}
    for s in range(n):
        count = view.hand_sizes[s] - hands[s].bit_count()
        slots: list[int] = []
        if reserved >= 0 and awaiting[0] == W_DEAL_TRUMP and s == view.dealer:
            slots.append(reserved)  # D2: the indicator is the dealer's last card
            count -= 1
        slots.extend(next(free) for _ in range(count))
        for pos in slots:
            hidden_owner[pos] = s
        hidden.append(slots)
    pos_of = [-1] * NUM_CARDS
    for card in cards_list(off_stock):
        pos = next(free)
        face[pos] = card
    for pos, card in enumerate(face):
        if card >= 0:
            pos_of[card] = pos
    if next(free, None) is not None:  # pragma: no cover - every card has one place
        raise AssertionError("a view's cards do not fill the pack")
    g.face = face
    g.pos_of = pos_of
    g.public = public
    g.hands = hands
    g.hidden = hidden
    g.hidden_owner = hidden_owner
    g.shown = shown
    g.out = list(view.out)
    g.tab_a = tab_a
    g.tab_k = tab_k
    g.begged = list(begged)
    g.own_twos = list(own_twos)
    g.twos_layers = list(twos_layers)
    g.pending_public = list(pending_public)
    g.live = live
    g.discard = view.discard_mask
    g.picked = picked
    g.trump = view.trump_suit
    g.indicator = view.trump_card_code
    g.exchange_pos = exch_pos
    g.beaters = BEAT[g.trump, g.family == F_MUSTAMAIJA] if g.trump >= 0 else ()
    g.turned = turned
    g.transfer_shown = transfer_shown
    g.bout_count = view.bout_count
    g.bout_limit = view.bout_limit
    g.bout_number = bout_number
    g.ranks_all = ranks_all
    g.ranks_att = ranks_att
    g.order = list(order)
    g.oidx = oidx
    g.passes = passes
    g.attacker = view.attacker
    g.defender = view.defender
    g.phase = phase
    g.to_act_seat = to_act_seat
    g.history = view.history
    g.loser_seats = loser_seats
    g.waiting_for = awaiting
    g.reveal_log = None
    g.stock = list(stock)
    pack = ((1 << NUM_CARDS) - 1) & ~((1 << (rules.lowest_rank * 4)) - 1)
    return g, pack & ~known


def _stock_cards(view: Seen) -> int:
    mask = 0
    for _, card in view.stock_known:
        mask |= 1 << card
    return mask


def determinize(
    masked: GameState,
    unknown: int,
    seat: int,
    rng: random.Random,
    hands: Sequence[int] | None = None,
) -> GameState:
    """A full-information copy of ``masked`` (from :func:`masked_game`): the cards of
    ``unknown`` shuffled with ``rng`` and dealt to the hidden slots of the other hands, seat
    by seat, then to the face-down stock, bottom first.

    With ``hands`` (one mask per seat, a subset of ``unknown`` exactly as large as that
    hand's hidden slots, the masks disjoint) the hands get those cards and only the rest is
    shuffled into the stock: a search that weighs deals by what the other seats' play
    revealed (``moska_p2p.bots.inference``) chooses the hands itself. A deal that breaks the
    view's knowledge raises :class:`DeterminizeError`.

    Raises :class:`DeterminizeError` where no sample keeps the seat's knowledge: its own
    hand holds unseen cards, or the game waits for a face (no seat is to act then).
    """
    if masked.hidden[seat]:
        raise DeterminizeError(
            f"seat {seat}'s own hand holds {len(masked.hidden[seat])} card(s) it has not seen"
            " yet: a view is determinized only once its seat knows its own hand"
        )
    if masked.waiting_for is not None or masked.pending_public:
        raise DeterminizeError(
            "the game waits for a card to be revealed and no seat is to act: determinize a"
            " view taken when a seat is to act"
        )
    if hands is not None:
        return _determinize_dealt(masked, unknown, rng, hands)
    pool = cards_list(unknown)
    rng.shuffle(pool)
    g = masked.copy()
    face = g.face
    pos_of = g.pos_of
    hands = g.hands
    i = 0
    for s, slots in enumerate(masked.hidden):
        if slots:
            mask = hands[s]
            for pos in slots:
                card = pool[i]
                i += 1
                face[pos] = card
                pos_of[card] = pos
                mask |= 1 << card
            hands[s] = mask
    g.hidden = [[] for _ in range(g.n)]
    g.hidden_owner = {}
    for pos in g.stock:
        if face[pos] < 0:
            card = pool[i]
            i += 1
            face[pos] = card
            pos_of[card] = pos
    if i != len(pool):  # pragma: no cover - the slots and the unknown cards are as many
        raise AssertionError("a view's unknown cards do not fill its hidden places")
    return g


def _determinize_dealt(
    masked: GameState, unknown: int, rng: random.Random, hands: Sequence[int]
) -> GameState:
    """:func:`determinize` with the hands' hidden cards given (checked against the view)."""
    if len(hands) != masked.n:
        raise DeterminizeError(f"a deal names {masked.n} hands, not {len(hands)}")
    dealt = 0
    for s, mask in enumerate(hands):
        if mask & ~unknown or mask & dealt or mask.bit_count() != len(masked.hidden[s]):
            raise DeterminizeError(
                f"the deal gives seat {s} cards it cannot hold: {len(masked.hidden[s])} of"
                " the unseen cards, none given to another hand, are its place"
            )
        dealt |= mask
    g = masked.copy()
    face = g.face
    pos_of = g.pos_of
    for s, slots in enumerate(masked.hidden):
        if slots:
            for pos, card in zip(slots, cards_list(hands[s]), strict=True):
                face[pos] = card
                pos_of[card] = pos
            g.hands[s] |= hands[s]
    g.hidden = [[] for _ in range(g.n)]
    g.hidden_owner = {}
    pool = cards_list(unknown & ~dealt)
    rng.shuffle(pool)
    i = 0
    for pos in g.stock:
        if face[pos] < 0:
            card = pool[i]
            i += 1
            face[pos] = card
            pos_of[card] = pos
    if i != len(pool):  # pragma: no cover - the slots and the unknown cards are as many
        raise AssertionError("a view's unknown cards do not fill its hidden places")
    return g
