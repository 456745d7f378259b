"""Inference about hidden hands: what each seat's moves reveal, as weights on the deals a
search samples.

ISMCTS deals the cards its seat cannot place uniformly (``View.determinize(rng)``). A real
player does better: a seat that took while it held a cheap killer played badly, so after a
take the cards that would have killed are less likely in that hand; a seat that passed in a
throw-in round probably holds none of the ranks it could have thrown; a seat that killed
with a trump probably held no cheaper card of the attack's suit that beats it. This module
reads such evidence off a :class:`~moska_p2p.engine.View` -- and only the view, so that a bot
using it knows nothing a player at the table would not -- as a *likelihood table*
``weights[seat][card]`` (1.0: no evidence; lower: that seat's play says it probably did not
hold the card), and deals weighted determinizations from it.

**What is already known needs no inference.** Cards picked up from the table (M12, D6,
MM5), exchanged or shown (M4, M22, D3) are in the view's ``known_mask`` and are kept in every
determinization, as are the table, the discard and the face-up stock cards (the trump
indicator, M23): ``View.unseen()`` lists only the cards the seat really cannot place, and
how many of them each hand hides. Evidence never *excludes* a card (passing and taking can
be strategic): every weight stays at least :data:`FLOOR`, so the sampler can still deal it.

**The evidence** (each applied once per seat, card and bout, to the cards that seat could
then have held; a refill after a bout brings new cards, so older evidence fades by
:data:`FADE` at every new bout):

* ``take`` facing live cards: each card that beats one of them gets :data:`TAKE_CHEAP`
  (a non-trump killer) or :data:`TAKE_TRUMP` (a trump), softened by the number of live cards
  (holding a killer for one of three is no reason not to take them all);
* ``pass`` by a seat other than the defender in a bout with cards on the table: each card of
  a rank on the table gets :data:`PASS_RANK` (:data:`PASS_TRUMP` for a trump, which a strong
  player keeps back on purpose);
* ``kill a k``: each card that also beats ``a`` and is worth less than ``k`` gets
  :data:`KILL_CHEAPER` (:data:`KILL_CHEAPER_TRUMP` when ``k`` is a trump and the cheaper card
  is not), or only :data:`KILL_SPARED` if that card beats another live card too (it may have
  been kept for that one).

The history gives moves, not states: the table of each bout is followed from the moves
themselves (attacks and transfers lay cards, kills cover them, a take clears the table; a
bout begins with an attack by the last bout's defender or after a take). A turned stock card
(attack deck, deck-kill) is not in the history and is simply not counted; a misread bout
costs only accuracy of the weights, never the validity of a deal.

**The sampler** (:class:`WeightedDealer`) deals each hand in turn, the hands in a random
order, by weighted sampling without replacement (Efraimidis and Spirakis's keys
``log(u) / w``): exactly as many cards as the hand hides, each unseen card to one place,
only unseen cards to hands (what :meth:`View.determinize` checks again); the stock takes the
rest. With every weight equal this is the uniform deal of ``View.determinize`` (each hand a
uniform subset of what is left; ``tests/bots/test_inference.py`` compares the two by
chi-square). With unequal weights it is the usual sequential approximation of the posterior
``prod(weights[s][c] for c in hand s)``, not the exact posterior (that would need importance
weights on every deal; for the mild weights here the difference is small).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from moska_p2p.cards import SPADES, cards_list, make_card
from moska_p2p.engine import (
    ATTACK,
    BEG,
    KILL,
    PASS,
    TAKE,
    TRANSFER,
    Game,
    View,
)

FLOOR = 0.05  # no card is ever excluded: passing and taking can be strategic
FADE = 0.85  # at each new bout, evidence keeps this much of its strength (refills)
TAKE_CHEAP = 0.25
TAKE_TRUMP = 0.6
PASS_RANK = 0.5
PASS_TRUMP = 0.8
KILL_CHEAPER = 0.5
KILL_CHEAPER_TRUMP = 0.35
KILL_SPARED = 0.85
# The evidence of the laying moves, read only by :mod:`moska_p2p.bots.beliefs` (``extended``):
OPEN_LOWER = 0.6  # an opener lays its lowest: a cheaper plain card is less likely
GROUP_REST = 0.5  # cards of a rank laid are laid together: the rest of that rank
GROUP_REST_TRUMP = 0.8  # ... but a trump of it is often kept back
# Keys of the laying evidence in ``_Evidence.weigh`` (move kinds are small positive ints).
_OPENED = -1
_LAID_RANK = -2

_QUEEN_OF_SPADES = make_card(10, SPADES)  # MM4: beats nothing, nothing beats it


def beats(card: int, attack: int, trump: int, mustamaija: bool) -> bool:
    """True if ``card`` kills ``attack``: a higher card of its suit or, against a non-trump,
    any trump (M8, D5, MM4; Mustamaija's queen of spades neither beats nor is beaten)."""
    if mustamaija and _QUEEN_OF_SPADES in (card, attack):
        return False
    if card & 3 == attack & 3:
        return card >> 2 > attack >> 2
    return trump >= 0 and card & 3 == trump


def _worth(card: int, trump: int) -> int:
    """How much a card is worth keeping: its rank, plus 13 for a trump."""
    return (card >> 2) + (13 if card & 3 == trump else 0)


class _Evidence:
    """The likelihood table being built from a history, bout by bout."""

    def __init__(self, players: int, trump: int, mustamaija: bool, extended: bool = False) -> None:
        self.trump = trump
        self.mustamaija = mustamaija
        self.extended = extended and not mustamaija  # MM3: attacks go by suit, not by rank
        # Every card code: those outside a short pack are never unseen, hence never dealt.
        self.pack = range(52)
        self.weights = [[1.0] * 52 for _ in range(players)]
        self.live: list[int] = []  # the bout's uncovered attack cards
        self.ranks = 0  # the ranks laid in this bout (a mask of 13 bits)
        self.cards = False  # whether the bout has laid any card yet
        self.defender = -1
        self.used: list[set[tuple[int, int]]] = [set() for _ in range(players)]

    def weigh(self, seat: int, card: int, factor: float, kind: int) -> None:
        """Scale ``seat``'s weight of ``card`` once per bout and kind of move (repeated
        passes in one throw-in round say the same thing again)."""
        key = (card, kind)
        used = self.used[seat]
        if key in used:
            return
        used.add(key)
        row = self.weights[seat]
        row[card] = max(FLOOR, row[card] * factor)

    def new_bout(self) -> None:
        self.live = []
        self.ranks = 0
        self.cards = False
        self.defender = -1
        self.used = [set() for _ in self.used]
        for row in self.weights:
            for c in self.pack:
                w = row[c]
                if w < 1.0:
                    row[c] = 1.0 - (1.0 - w) * FADE

    def attack(self, seat: int, cards: Sequence[int]) -> None:
        opening = not self.cards or seat == self.defender
        if opening:
            if self.cards:
                self.new_bout()
            self.cards = True
        if self.extended and cards:
            self.laid(seat, cards, opening)
        for c in cards:
            self.live.append(c)
            self.ranks |= 1 << (c >> 2)

    def laid(self, seat: int, cards: Sequence[int], opening: bool) -> None:
        """What laying ``cards`` says of the rest of the hand: the other cards of their ranks
        would have gone with them (M6: any number of one rank may be laid, D4 in durak's
        throw-ins), and an opener lays its cheapest plain cards (M5, D4)."""
        trump = self.trump
        laid = 0
        ranks = 0
        lowest = 13
        for c in cards:
            laid |= 1 << c
            ranks |= 1 << (c >> 2)
            if c & 3 != trump:
                lowest = min(lowest, c >> 2)
        for c in self.pack:
            if laid >> c & 1:
                continue
            if ranks >> (c >> 2) & 1:
                factor = GROUP_REST_TRUMP if c & 3 == trump else GROUP_REST
                self.weigh(seat, c, factor, _LAID_RANK)
            elif opening and c & 3 != trump and c >> 2 < lowest:
                self.weigh(seat, c, OPEN_LOWER, _OPENED)

    def kill(self, seat: int, attack: int, killer: int) -> None:
        self.defender = seat
        self.cards = True
        if attack in self.live:
            self.live.remove(attack)
        self.ranks |= 1 << (killer >> 2) | 1 << (attack >> 2)
        trump = self.trump
        cost = _worth(killer, trump)
        killer_trump = killer & 3 == trump
        for c in self.pack:
            if c == killer or _worth(c, trump) >= cost:
                continue
            if not beats(c, attack, trump, self.mustamaija):
                continue
            if any(beats(c, a, trump, self.mustamaija) for a in self.live):
                factor = KILL_SPARED
            elif killer_trump and c & 3 != trump:
                factor = KILL_CHEAPER_TRUMP
            else:
                factor = KILL_CHEAPER
            self.weigh(seat, c, factor, KILL)

    def take(self, seat: int) -> None:
        live = self.live
        if live:
            share = 1.0 / len(live)
            trump = self.trump
            for c in self.pack:
                if any(beats(c, a, trump, self.mustamaija) for a in live):
                    base = TAKE_TRUMP if c & 3 == trump else TAKE_CHEAP
                    self.weigh(seat, c, 1.0 - (1.0 - base) * share, TAKE)
        self.new_bout()

    def pass_(self, seat: int) -> None:
        if not self.cards or seat == self.defender or not self.ranks:
            return
        trump = self.trump
        for c in self.pack:
            if self.ranks >> (c >> 2) & 1:
                self.weigh(seat, c, PASS_TRUMP if c & 3 == trump else PASS_RANK, PASS)

    def transfer(self, seat: int, card: int) -> None:
        # D: the defender passes the attack on with a card of its rank; the next seat defends.
        self.cards = True
        self.live.append(card)
        self.ranks |= 1 << (card >> 2)
        self.defender = -1


def infer_weights(view: View, extended: bool = False) -> list[list[float]]:
    """The likelihood table ``weights[seat][card]`` of what each seat's moves in
    ``view.history`` reveal (see the module docstring); 1.0 where nothing is known.
    ``extended`` also reads the laying moves (:meth:`_Evidence.laid`, for
    :mod:`moska_p2p.bots.beliefs`).

    Reads the view only. Weights of cards the view already places (known in a hand, on the
    table, out of play) are meaningless and never used by the sampler."""
    ev = _Evidence(view.players, view.trump_suit, view.preset == "mustamaija", extended)
    for seat, (kind, cards) in view.history:
        if kind == ATTACK:
            ev.attack(seat, cards)
        elif kind in (KILL, BEG):
            ev.kill(seat, cards[0], cards[1])
        elif kind == TAKE:
            ev.take(seat)
        elif kind == PASS:
            ev.pass_(seat)
        elif kind == TRANSFER:
            ev.transfer(seat, cards[0])
    return ev.weights


class WeightedDealer:
    """Weighted determinizations of one view (see the module docstring).

    Built once per decision (the history is read once); :meth:`deal` and
    :meth:`determinize` are then cheap enough to call on every ISMCTS iteration.
    ``weights`` defaults to :func:`infer_weights` of the view; pass all ones for the
    uniform deal.
    """

    def __init__(self, view: View, weights: Sequence[Sequence[float]] | None = None) -> None:
        self.view = view
        self.unseen, self.counts = view.unseen()
        if weights is None:
            weights = infer_weights(view)
        self.weights = weights
        pool = cards_list(self.unseen)
        self.pool = pool
        # Per seat, 1/w of each pool card (the key's exponent), computed once.
        self.inverse = [[1.0 / max(FLOOR, row[c]) for c in pool] for row in weights]
        self.seats = [s for s, k in enumerate(self.counts) if k]

    def deal(self, rng: random.Random) -> list[int]:
        """One deal of the unseen cards to the hands: a mask per seat, each exactly as
        large as that hand's hidden part, disjoint, only unseen cards."""
        hands = [0] * len(self.counts)
        seats = self.seats[:]
        rng.shuffle(seats)
        left = list(range(len(self.pool)))
        pool = self.pool
        rand = rng.random
        log = math.log
        for s in seats:
            k = self.counts[s]
            inv = self.inverse[s]
            # log(u) / w: the k largest keys are a weighted sample without replacement.
            keyed = sorted(left, key=lambda i: log(1.0 - rand()) * inv[i], reverse=True)
            mask = 0
            for i in keyed[:k]:
                mask |= 1 << pool[i]
            hands[s] = mask
            left = keyed[k:]
        return hands

    def determinize(self, rng: random.Random) -> Game:
        """A full-information game dealt by :meth:`deal` (the stock gets the rest)."""
        return self.view.determinize(rng, self.deal(rng))
