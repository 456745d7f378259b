"""What one seat may see (DESIGN.md: bots get views, never the full state; RULES C5).

A :class:`View` is a snapshot taken in a few attribute copies (cheap enough to build on every
decision in the arena); the text forms are computed only when a bot asks for them.

A view holds **only what its seat may know**: its own hand and public information, every list
copied, and no reference to the game it was taken from. Its private ``_state`` is the public
snapshot of :mod:`.knowledge`; :meth:`View.masked_game` and :meth:`View.determinize` rebuild a
game from the view's own data, so a view pickled, encoded for an external bot or kept after
the game moved on shows nothing hidden and nothing that happened later. Two deals that differ
only in cards hidden from a seat give that seat views that pickle to the same bytes.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, SupportsIndex

from ..cards import CARD_TEXT, SUITS, cards_list
from .knowledge import determinize, masked_game, public_snapshot
from .moves import Move

if TYPE_CHECKING:
    from .game import Game

_CACHE = "_masked"  # the only slot not pickled: a cache rebuilt from the others


class View:
    """The game as seen by ``seat``: its own hand, the public table, and public knowledge.

    Card fields come in two forms: text lists (``hand``, ``table``) for people and masks or
    codes (``hand_mask``, ``table_codes``) for fast bots.
    """

    __slots__ = (
        "_history",
        "_masked",
        "_state",
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
        """Copy what ``seat`` may know of ``game`` now (every slot is set here)."""
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
        hands = game.hands
        shown = game.shown
        self.hand_mask = hands[seat]
        self.hidden_in_hand = len(game.hidden[seat])
        self.hand_sizes = game.hand_sizes()
        # Cards of other hands that everyone knows (picked up, exchanged, shown: D3, M22).
        known = list(shown)
        known[seat] = hands[seat]
        self.known_mask = known
        self.table_codes = list(zip(game.tab_a, game.tab_k, strict=True))
        self.trump_suit = game.trump
        self.trump_card_code = game.indicator
        stock = game.stock
        public = game.public
        face = game.face
        self.stock_size = len(stock)
        self.stock_known = [
            (i, face[pos]) for i, pos in enumerate(stock) if public[pos] and face[pos] >= 0
        ]
        self.discard_mask = game.discard
        self.out = list(game.out)
        self.bout_limit = game.bout_limit
        self.bout_count = game.bout_count
        self.room = game.room() if game.phase <= 3 else 0  # OPEN, DEFEND, THROW_IN, GIVE
        self._history = tuple(game.history)  # a copy: the live list grows with the game
        self._state = public_snapshot(game, seat)
        self._masked: tuple[Game, int] | None = None

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        """Pickle (and copy) as a plain view rebuilt from :meth:`__getstate__` by a module
        function: a subclass standing for a view (the arena's lazy one) pickles to the same
        bytes, and unpickles to a plain :class:`View`."""
        return (_restore, (self.__getstate__(),))

    def __getstate__(self) -> dict[str, Any]:
        """Pickle (and copy) every slot but the cache, which is rebuilt from the rest."""
        return {
            name: getattr(self, name)
            for name in View.__slots__
            if name != _CACHE and hasattr(self, name)
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self._masked = None

    def _knowledge(self) -> tuple[Game, int]:
        masked = self._masked
        if masked is None:
            masked = self._masked = masked_game(self)
        return masked

    def masked_game(self) -> Game:
        """The game as this seat's own engine would hold it when the view was taken: its
        hand and the public cards known, every other card a hidden position (like a network
        peer's engine). A fresh copy each call; :meth:`Game.legal_moves` works on it for
        this seat, and :meth:`Game.play` gives the engine's own reasons for its moves."""
        return self._knowledge()[0].copy()

    def unseen(self) -> tuple[int, list[int]]:
        """The cards this seat cannot place (a mask) and, by seat, how many of them each
        hand holds (this seat's own: 0); the rest lie face down in the stock. What a
        sampler that chooses the hands itself (``determinize(rng, hands)``) must fill."""
        masked, unknown = self._knowledge()
        return unknown, [len(slots) for slots in masked.hidden]

    def determinize(self, rng: random.Random, hands: Sequence[int] | None = None) -> Game:
        """A full-information game consistent with this view: this seat's hand and all
        public knowledge kept, every other card dealt at random where it could be (the
        sampling step of ISMCTS; see :mod:`.knowledge` for what it conditions on).

        ``hands``, when given, chooses the hidden cards of every hand (one mask per seat,
        of the cards :meth:`unseen` lists, as many as that hand hides; the masks disjoint);
        only the rest are shuffled into the stock. A deal that breaks this view's knowledge
        raises :class:`~.knowledge.DeterminizeError`.

        Built from the view's own data only, so it works on a view of a network peer's
        engine as on one of the arena's game, and a view of an earlier state determinizes
        that earlier state. Raises :class:`~.knowledge.DeterminizeError` (a ``ValueError``)
        if this seat's own hand holds cards it has not seen, or the game waits for a reveal.
        """
        masked, unknown = self._knowledge()
        if hands is None:
            return determinize(masked, unknown, self.seat, rng)
        return determinize(masked, unknown, self.seat, rng, hands)

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
        """Every move up to this view, (seat, move), oldest first."""
        return list(self._history)

    @property
    def is_over(self) -> bool:
        return self.decision == "over"

    def __repr__(self) -> str:
        return f"<View seat {self.seat}: {' '.join(self.hand)} | {self.decision}>"


def _restore(state: dict[str, Any]) -> View:
    """The view of a pickle (see :meth:`View.__reduce_ex__`)."""
    view = View.__new__(View)
    view.__setstate__(state)
    return view
