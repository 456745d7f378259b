"""What one seat may see (DESIGN.md: bots get views, never the full state).

A :class:`View` is a snapshot taken in a few attribute copies (cheap enough to build on every
decision in the arena); the text forms are computed only when a bot asks for them.
"""

from __future__ import annotations

import random
from typing import TYPE_CHECKING

from ..cards import CARD_TEXT, SUITS, cards_list
from .moves import Move

if TYPE_CHECKING:
    from .game import Game


class View:
    """The game as seen by ``seat``: its own hand, the public table, and public knowledge.

    Card fields come in two forms: text lists (``hand``, ``table``) for people and masks or
    codes (``hand_mask``, ``table_codes``) for fast bots.
    """

    __slots__ = (
        "_game",
        "_history",
        "_history_len",
        "attacker",
        "bout_count",
        "bout_limit",
        "dealer",
        "decision",
        "defender",
        "discard_mask",
        "hand_mask",
        "hand_sizes",
        "hidden_in_hand",
        "known_mask",
        "out",
        "players",
        "preset",
        "room",
        "seat",
        "stock_known",
        "stock_size",
        "table_codes",
        "to_act",
        "trump_card_code",
        "trump_suit",
    )

    def __init__(self, game: Game, seat: int) -> None:
        if not 0 <= seat < game.n:
            raise ValueError(f"no seat {seat} at a table of {game.n}")
        self.seat = seat
        self.preset = game.rules.preset
        self.players = game.n
        self.dealer = game.dealer
        self.decision = game.decision
        self.to_act = game.to_act
        self.attacker = game.attacker
        self.defender = game.defender
        self.hand_mask = game.hands[seat]
        self.hidden_in_hand = len(game.hidden[seat])
        self.hand_sizes = game.hand_sizes()
        # Cards of other hands that everyone knows (picked up, exchanged, shown: D3, M22).
        self.known_mask = [game.shown[s] if s != seat else game.hands[s] for s in range(game.n)]
        self.table_codes = list(zip(game.tab_a, game.tab_k, strict=True))
        self.trump_suit = game.trump
        self.trump_card_code = game.indicator
        self.stock_size = len(game.stock)
        self.stock_known = [
            (i, game.face[pos])
            for i, pos in enumerate(game.stock)
            if game.public[pos] and game.face[pos] >= 0
        ]
        self.discard_mask = game.discard
        self.out = list(game.out)
        self.bout_limit = game.bout_limit
        self.bout_count = game.bout_count
        self.room = game.room() if game.phase <= 3 else 0  # OPEN, DEFEND, THROW_IN, GIVE
        self._history = game.history
        self._history_len = len(game.history)
        self._game = game

    def determinize(self, rng: random.Random) -> Game:
        """A full-information game consistent with this view: this seat's hand and all
        public knowledge kept, every other card dealt at random where it could be. The
        search step of ISMCTS; valid only while the game has not moved on."""
        game = self._game
        if len(game.history) != self._history_len:
            raise ValueError("the game has moved on since this view was taken")
        return game.determinize(self.seat, rng)

    @property
    def hand(self) -> list[str]:
        return [CARD_TEXT[c] for c in cards_list(self.hand_mask)]

    @property
    def table(self) -> list[tuple[str, str | None]]:
        return [(CARD_TEXT[a], CARD_TEXT[k] if k >= 0 else None) for a, k in self.table_codes]

    @property
    def live_cards(self) -> list[str]:
        return [CARD_TEXT[a] for a, k in self.table_codes if k < 0]

    @property
    def trump(self) -> str | None:
        """The trump suit letter (C D H S), or None before it is turned (MM2, K1)."""
        return SUITS[self.trump_suit] if self.trump_suit >= 0 else None

    @property
    def trump_card(self) -> str | None:
        return CARD_TEXT[self.trump_card_code] if self.trump_card_code >= 0 else None

    @property
    def discarded(self) -> list[str]:
        """Every card out of play: all were seen face up on the table."""
        return [CARD_TEXT[c] for c in cards_list(self.discard_mask)]

    def known_cards(self, seat: int) -> list[str]:
        """Cards of ``seat``'s hand that this seat knows (its own whole hand)."""
        return [CARD_TEXT[c] for c in cards_list(self.known_mask[seat])]

    @property
    def history(self) -> list[tuple[int, Move]]:
        """Every move so far, (seat, move), oldest first."""
        return self._history[: self._history_len]

    @property
    def is_over(self) -> bool:
        return self.decision == "over"

    def __repr__(self) -> str:
        return f"<View seat {self.seat}: {' '.join(self.hand)} | {self.decision}>"
