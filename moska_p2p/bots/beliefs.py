"""Beliefs about the hidden hands, read off the table: what each seat did, and when.

:mod:`moska_p2p.bots.inference` weighs a hidden card down in a seat's hand after that seat
took where the card would have killed, passed where the card could have been thrown in, or
killed dearer than the card would have. Beliefs add what the *laying* moves say, which a
person at the table reads as naturally:

* a seat that lays cards of a rank lays the other cards of that rank with them, if it has
  them (M6, D4): after it lays some, the rest of the rank is less likely in its hand (a
  trump of that rank only mildly: strong players keep trumps back);
* a seat that opens a bout opens with its cheapest plain cards (M5, D4): a plain card
  below the lowest it opened with is less likely in its hand.

Then :data:`DEFAULT_STRENGTH` sharpens the whole table (each weight raised to that power):
the inference's factors were set mild on purpose, and a search that samples from them can
afford to trust them more, since nothing is ever excluded (every weight stays at least
:data:`~moska_p2p.bots.inference.FLOOR`).

Hard knowledge is never a belief: cards shown, picked up or exchanged are placed by the
view (``View.unseen()`` leaves them out), and every deal is checked again by
``View.determinize`` (a deal that breaks the view's knowledge raises). Beliefs only move
the odds among the deals that are possible.

``ismcts:beliefs=1`` samples the search's determinizations from them.
"""

from __future__ import annotations

import random

from moska_p2p.bots.inference import FLOOR, WeightedDealer, infer_weights
from moska_p2p.engine import Game, View

# Chosen, not tuned: at this strength the screen found no gain (docs/LEVELS.md,
# "Screening the search"), so no level uses the beliefs yet.
DEFAULT_STRENGTH = 1.5


def belief_weights(view: View, strength: float = DEFAULT_STRENGTH) -> list[list[float]]:
    """``weights[seat][card]`` in ``[FLOOR, 1]``: how likely that seat's play leaves it holding
    the card, relative to a seat of which nothing was read (1.0)."""
    if strength <= 0:
        raise ValueError(f"strength must be positive, not {strength}")
    table = infer_weights(view, extended=True)
    return [[max(FLOOR, w**strength) for w in row] for row in table]


class Beliefs:
    """One decision's beliefs (the history is read once) and the deals drawn from them."""

    def __init__(self, view: View, strength: float = DEFAULT_STRENGTH) -> None:
        self.weights = belief_weights(view, strength)
        self.dealer = WeightedDealer(view, self.weights)

    def deal(self, rng: random.Random) -> list[int]:
        """The hidden part of every hand, a mask per seat (see ``WeightedDealer.deal``)."""
        return self.dealer.deal(rng)

    def determinize(self, rng: random.Random) -> Game:
        """A full-information game consistent with the view, its hidden hands dealt by the
        beliefs."""
        return self.dealer.determinize(rng)
