"""The built-in bots: ``random`` and two heuristics of different styles.

``greedy`` plays the cheapest sound move now: it kills with the lowest card that beats,
opens and throws in with its lowest cards, takes when a kill would cost a high trump early.
``shedder`` plays for the long run: it sheds as many low cards as it can at once, never
spends a trump while another way exists, and keeps its trumps for the endgame.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from ..engine import Move, View
from ..engine.game import QUEEN_OF_SPADES
from ..engine.moves import (
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
)
from .api import BaseBot


class RandomBot(BaseBot):
    """A uniformly random legal move: the baseline every other bot must beat."""

    name = "random"
    trusted_fast = True  # the arena skips the timer for built-in bots

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        return self.rng.choice(legal_moves)


def card_value(card: int, trump: int) -> int:
    """How much a card is worth keeping: its rank, plus 13 for a trump."""
    return (card >> 2) + (13 if card & 3 == trump else 0)


class GreedyBot(BaseBot):
    """The cheapest sound move now (see the module docstring)."""

    name = "greedy"
    trusted_fast = True  # the arena skips the timer for built-in bots

    def __init__(self, seed: int | None = None) -> None:
        del seed  # deterministic; accepts a seed like every built-in bot

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        if len(legal_moves) == 1:
            return legal_moves[0]
        trump = view.trump_suit
        best = legal_moves[0]
        best_score = -1e9
        for move in legal_moves:
            score = self.score(view, move, trump)
            if score > best_score:
                best, best_score = move, score
        return best

    def score(self, view: View, move: Move, trump: int) -> float:
        kind, cards = move
        early = view.stock_size > 6
        if kind == EXCHANGE:
            return 1000.0
        if kind in (KILL, BEG):
            cost = card_value(cards[1], trump)
            # Spending a high trump while the stock is big is worse than taking a card.
            if early and cards[1] & 3 == trump and cards[1] >> 2 >= 9:
                return -50.0 - cost
            return 100.0 - cost
        if kind == SELF:
            return 120.0 - card_value(cards[0], trump) - card_value(cards[1], trump)
        if kind == TRANSFER:
            return 110.0 - card_value(cards[0], trump)
        if kind == TRANSFER_SHOW:
            return 115.0
        if kind == DECK_KILL:
            return -10.0
        if kind == TAKE:
            return -20.0
        if kind == PASS:
            return 0.0
        if kind == ATTACK_DECK:
            return -5.0
        if kind == ATTACK:
            if QUEEN_OF_SPADES in cards and view.preset == "mustamaija":
                return 500.0  # MM4: nothing beats it
            values = [card_value(c, trump) for c in cards]
            trumps = sum(1 for c in cards if c & 3 == trump)
            giving = view.decision in ("give", "throw-in")
            if giving and trumps and early:
                return -30.0  # keep trumps rather than feed them to the defender
            return 40.0 + 8.0 * len(cards) - sum(values) / len(values) - 12.0 * trumps
        return 0.0


class ShedderBot(BaseBot):
    """Shed low cards in bulk, save trumps for the endgame (see the module docstring)."""

    name = "shedder"
    trusted_fast = True  # the arena skips the timer for built-in bots

    def __init__(self, seed: int | None = None) -> None:
        del seed  # deterministic; accepts a seed like every built-in bot

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        if len(legal_moves) == 1:
            return legal_moves[0]
        trump = view.trump_suit
        endgame = view.stock_size == 0
        best = legal_moves[0]
        best_score = -1e9
        for move in legal_moves:
            kind, cards = move
            if kind == EXCHANGE:
                score = 1000.0
            elif kind in (KILL, BEG):
                is_trump = cards[1] & 3 == trump
                score = 60.0 - (cards[1] >> 2) - (40.0 if is_trump and not endgame else 0.0)
            elif kind == SELF:
                score = 70.0 - (cards[0] >> 2)
            elif kind in (TRANSFER, TRANSFER_SHOW):
                score = 65.0
            elif kind == TAKE:
                score = 0.0
            elif kind == DECK_KILL:
                score = 10.0
            elif kind == ATTACK:
                trumps = sum(1 for c in cards if c & 3 == trump)
                if trumps and not endgame:
                    score = -5.0 - trumps
                else:
                    low = sum(12 - (c >> 2) for c in cards)
                    score = 20.0 + 3.0 * low
                if QUEEN_OF_SPADES in cards and view.preset == "mustamaija":
                    score = 500.0
            elif kind == ATTACK_DECK:
                score = 1.0
            else:  # PASS
                score = 2.0 if view.decision in ("throw-in", "give") else 0.0
            if score > best_score:
                best, best_score = move, score
        return best
