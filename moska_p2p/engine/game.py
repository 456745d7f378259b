"""The rules engine: one :class:`Game` state machine for every preset of RULES.md.

Design (DESIGN.md, "The engine"):

* Cards are tracked by **deck position** ``0..N-1`` (the order of the shuffled deck, top
  first). ``face[pos]`` is the card at a position, or ``-1`` while this engine does not know
  it. A full-information game (the arena) knows every face; an engine on a peer knows its own
  hand and the public cards, and learns other faces through :meth:`Game.reveal`.
* Hands are bitmasks of the *known* cards plus a list of positions whose faces are unknown,
  so the full-information game runs entirely on integer operations (the fast path).
* Every rule that must look at a hidden face (the trump indicator, ``attack deck``,
  ``deck-kill``, Mustamaija's trump turning, Kaavi's trump, Durak's lowest trump) stops the
  game in a *waiting* state until the face is revealed; with every face known it resumes at
  once. Which seat acts, which kind of decision it faces and every limit are computed from
  public information only (RULES C5).

The class is built in layers, one module each, so a rule is found where it acts:

* :mod:`.state` -- the fields of a game and the seat arithmetic;
* :mod:`.deal` -- the deal, the stock, the trump indicator and reveals (C4, M3, D2, D3, M23);
* :mod:`.flow` -- the bout's flow: limits, rounds, the end of a bout and of the game;
* :mod:`.movegen` -- legal moves, counted and sampled (C5, C6);
* :mod:`.play` -- each move's checks and effect (``play``, ``play_unchecked``);
* this module -- :class:`Game` itself (dealing a new game, the public properties) and
  :class:`View`, what one seat may see of it; rebuilding a game from a view is
  :mod:`.knowledge`'s (the masked game, determinization).

A game makes views and a view rebuilds games, so both classes live here: in two modules
each would import the other. :mod:`.knowledge` and :mod:`.encoding` read a game
through :class:`~.state.GameState` only, below this module.

**Views.** A :class:`View` is a snapshot taken in a few attribute copies (cheap enough to
build on every decision in the arena); the text forms are computed only when a bot asks for
them. A view holds **only what its seat may know**: its own hand and public information,
every list copied, and no reference to the game it was taken from. Its private ``_state`` is
the public snapshot of :mod:`.knowledge`; :meth:`View.masked_game` and
:meth:`View.determinize` rebuild a game from the view's own data, so a view pickled, encoded
for an external bot or kept after the game moved on shows nothing hidden and nothing that
happened later. Two deals that differ only in cards hidden from a seat give that seat views
that pickle to the same bytes (DESIGN.md: bots get views, never the full state; RULES C5).

The constants (phases, families, ...) live in :mod:`.constants` and the card-mask helpers in
:mod:`.cardsets`; both are re-exported here, where the rest of the package imports them.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any, SupportsIndex

from mypy_extensions import mypyc_attr

from ..cards import CARD_TEXT, NUM_CARDS, SUITS, cards_list
from .cardsets import BEAT, CARDS_OF_RANKS
from .constants import (
    DECISIONS,
    DEFEND,
    EXCHANGE_ROUND,
    F_DURAK,
    F_KAAVI,
    F_MOSKA,
    F_MUSTAMAIJA,
    FORCED_KILL,
    GIVE,
    L_HAND,
    L_MUSTAMAIJA,
    L_NONE,
    L_SIX_OR_HAND,
    OPEN,
    OVER,
    QUEEN_OF_SPADES,
    THROW_IN,
    TWOS,
    TWOS_MASK,
    UNLIMITED,
    W_ATTACK_DECK,
    W_DEAL_TRUMP,
    W_DECK_KILL,
    W_KAAVI_TRUMP,
    W_LOWEST_TRUMP,
    W_MM_TRUMP,
    WAITING,
)
from .deal import check_deck, parse_deck
from .encoding import encode_public_state, public_state_hash
from .knowledge import determinize, masked_game, public_snapshot
from .moves import Move
from .options import Rules
from .play import PlayMixin

__all__ = [
    "BEAT",
    "CARDS_OF_RANKS",
    "DECISIONS",
    "DEFEND",
    "EXCHANGE_ROUND",
    "FORCED_KILL",
    "F_DURAK",
    "F_KAAVI",
    "F_MOSKA",
    "F_MUSTAMAIJA",
    "GIVE",
    "L_HAND",
    "L_MUSTAMAIJA",
    "L_NONE",
    "L_SIX_OR_HAND",
    "OPEN",
    "OVER",
    "QUEEN_OF_SPADES",
    "THROW_IN",
    "TWOS",
    "TWOS_MASK",
    "UNLIMITED",
    "WAITING",
    "W_ATTACK_DECK",
    "W_DEAL_TRUMP",
    "W_DECK_KILL",
    "W_KAAVI_TRUMP",
    "W_LOWEST_TRUMP",
    "W_MM_TRUMP",
    "Game",
    "View",
    "parse_deck",
]


class Game(PlayMixin):
    """One game of a preset, from the deal to its loser. Pure and deterministic: no I/O.

    Use :func:`moska_p2p.engine.new_game` to make one. ``play`` takes a :class:`Move` or its
    text; an illegal move raises :class:`IllegalMove` and leaves the game unchanged.
    """

    __slots__ = ()

    def __init__(
        self,
        rules: Rules | None = None,
        players: int = 0,
        faces: Sequence[int] | None = None,
        dealer: int = 0,
        first_game: bool = True,
        track_reveals: bool = False,
    ) -> None:
        """Deal a game. ``faces`` is the deck top first (RULES C4), or ``None`` for a game
        whose faces are all hidden (a peer's engine before any key is released).

        No ``rules``: a blank game, no field set, for :meth:`copy` and a view's masked game
        to fill. They make it with ``cls.__new__(cls)``, which a class compiled by mypyc
        answers by calling this with no arguments."""
        if rules is None:
            return
        if not rules.min_players <= players <= rules.max_players:
            raise ValueError(
                f"{rules.preset} is for {rules.min_players} to {rules.max_players} players,"
                f" not {players}"
            )
        if rules.teams and players % 2:
            raise ValueError("durak-teams needs 4 or 6 players in two teams (RULES D12)")
        if not 0 <= dealer < players:
            raise ValueError(f"dealer must be a seat from 0 to {players - 1}, not {dealer}")
        size = rules.pack_size
        if faces is not None:
            check_deck(faces, rules)
        self._set_table(rules, players, dealer, first_game)
        self.face = list(faces) if faces is not None else [-1] * size
        self.pos_of = [-1] * NUM_CARDS
        for pos, card in enumerate(self.face):
            if card >= 0:
                self.pos_of[card] = pos
        self.public = [False] * size
        self.hands = [0] * players
        self.hidden: list[list[int]] = [[] for _ in range(players)]
        self.hidden_owner: dict[int, int] = {}
        self.shown = [0] * players
        self.out = [False] * players
        self.tab_a: list[int] = []
        self.tab_k: list[int] = []
        self._begged: list[bool] = []
        self._own_twos: list[bool] = []
        self._twos_layers: list[int] = []
        self._pending_public: list[int] = []  # face-up positions whose faces are unknown
        self.live = 0
        self.discard = 0
        self.picked = 0
        self.trump = -1
        self.indicator = -1
        self._exch_pos = -1
        self._beat: tuple[int, ...] = ()
        self.turned = -1
        self.transfer_shown = 0
        self.bout_count = 0
        self.bout_limit = UNLIMITED
        self.bout_number = 0
        self.ranks_all = 0
        self.ranks_att = 0
        self.order: list[int] = []
        self.oidx = 0
        self.passes = 0
        self.attacker = (dealer + 1) % players
        self.defender = (dealer + 2) % players
        self.phase = WAITING
        self.to_act_seat = -1
        self.history: list[tuple[int, Move]] = []
        self.loser_seats: tuple[int, ...] = ()
        self._awaiting: tuple[int, int] | None = None
        self.reveal_log: list[tuple[int, int]] | None = [] if track_reveals else None
        self._deal()

    # ------------------------------------------------------------------ public properties

    @property
    def to_act(self) -> int | None:
        """The seat to act, or ``None`` when the game is over (or waits for a reveal)."""
        if self._pending_public:
            return None  # a card turned face up (M23) must be known to all before anyone acts
        return self.to_act_seat if self.to_act_seat >= 0 else None

    @property
    def is_over(self) -> bool:
        """True once the game has ended (a loser, or a draw)."""
        return self.phase == OVER

    @property
    def losers(self) -> list[int]:
        """Every losing seat (a whole team in ``durak-teams``); empty on a draw."""
        return list(self.loser_seats)

    @property
    def loser(self) -> int | None:
        """The seat that lost, ``None`` on a draw (D10) or while the game goes on."""
        if self.phase != OVER or not self.loser_seats:
            return None
        if len(self.loser_seats) == 1:
            return self.loser_seats[0]
        holders = [s for s in self.loser_seats if self.hand_size(s)]
        return holders[0] if holders else self.loser_seats[0]

    @property
    def stock_size(self) -> int:
        """How many cards are left in the stock."""
        return len(self.stock)

    @property
    def trump_suit(self) -> int | None:
        """The trump suit, ``None`` before it is turned (MM2, K1)."""
        return self.trump if self.trump >= 0 else None

    @property
    def trump_card(self) -> str | None:
        """The trump indicator's text, or ``None`` before it is known (MM2, K1)."""
        return CARD_TEXT[self.indicator] if self.indicator >= 0 else None

    @property
    def discard_size(self) -> int:
        """How many cards are out of play."""
        return self.discard.bit_count()

    @property
    def table(self) -> list[tuple[str, str | None]]:
        """The bout's cards in the order laid: (attack card, killing card or ``None``)."""
        return [
            (CARD_TEXT[a], CARD_TEXT[k] if k >= 0 else None)
            for a, k in zip(self.tab_a, self.tab_k, strict=True)
        ]

    @property
    def exchange_open(self) -> bool:
        """True while the original trump indicator is in the stock to be exchanged (M4, D8)."""
        return self._exch_pos >= 0

    @property
    def begged_flags(self) -> list[bool]:
        """Kaavi K4: per table pair, whether its killer was already exchanged."""
        return list(self._begged)

    @property
    def own_twos_flags(self) -> list[bool]:
        """Kaavi K5: per table pair, whether it is the dealer's own two."""
        return list(self._own_twos)

    def room(self) -> int:
        """How many more attack cards the bout's limit allows now (M6, D5, MM3);
        ``UNLIMITED`` (a large number) where no count limit applies."""
        return self._room()

    def view(self, seat: int) -> View:
        """What ``seat`` may see: its own hand and public information only."""
        return View(self, seat)

    def encode_public(self) -> bytes:
        """The canonical encoding of the public state (see :mod:`.encoding`)."""
        return encode_public_state(self)

    def state_hash(self) -> str:
        """SHA-256 (hex) of the public state: equal on every peer that is in step."""
        return public_state_hash(self)

    def hand(self, seat: int) -> list[str]:
        """The card texts of a seat's hand, canonical order; ``??`` for each unknown face."""
        return [CARD_TEXT[c] for c in cards_list(self.hands[seat])] + ["??"] * len(
            self.hidden[seat]
        )

    def hand_mask(self, seat: int) -> int:
        """The known cards of ``seat``'s hand, as a card mask."""
        return self.hands[seat]

    def hand_size(self, seat: int) -> int:
        """How many cards ``seat`` holds, known or not."""
        return self.hands[seat].bit_count() + len(self.hidden[seat])

    def hand_sizes(self) -> list[int]:
        """Every seat's hand size."""
        return [self.hands[s].bit_count() + len(self.hidden[s]) for s in range(self.n)]

    def is_out(self, seat: int) -> bool:
        """Whether ``seat`` has left the game with an empty hand (M13, D10)."""
        return self.out[seat]

    def team_of(self, seat: int) -> int:
        """``seat``'s team in durak-teams (D12); elsewhere every seat is its own."""
        return seat % 2 if self.rules.teams else seat

    @property
    def live_cards(self) -> list[str]:
        """The texts of the live (unkilled) attack cards on the table."""
        return [CARD_TEXT[c] for c in self.tab_a if self.live >> c & 1]

    # -------------------------------------------------------------------- determinization

    def unknown_to(self, seat: int) -> int:
        """The mask of every card whose place ``seat`` does not know: in other hands (not
        shown) or face down in the stock."""
        known = self.hands[seat] | self.discard
        for a, k in zip(self.tab_a, self.tab_k, strict=True):
            known |= 1 << a
            if k >= 0:
                known |= 1 << k
        if self.turned >= 0:
            known |= 1 << self.turned  # M22: turned face up, about to kill
        for s in range(self.n):
            known |= self.shown[s]
        for pos in self.stock:
            if self.public[pos] and self.face[pos] >= 0:
                known |= 1 << self.face[pos]
        pack = ((1 << NUM_CARDS) - 1) & ~((1 << (self.rules.lowest_rank * 4)) - 1)
        return pack & ~known

    def determinize(self, seat: int, rng: random.Random) -> Game:
        """``self.view(seat).determinize(rng)``: a full-information game in which every card
        ``seat`` cannot place is dealt at random where it could be, from what ``seat`` knows
        only (see :mod:`.knowledge`); works on a peer's engine as on the arena's."""
        return View(self, seat).determinize(rng)

    def __repr__(self) -> str:
        state = "over" if self.is_over else f"seat {self.to_act} to {self.decision}"
        return f"<Game {self.rules.preset} {self.n} players, {state}>"


_CACHE = "_masked"  # the only slot not pickled: a cache rebuilt from the others


# Every slot of a view, for its pickle; a module constant because a class compiled by mypyc
# has no __slots__ to read back.
VIEW_FIELDS: tuple[str, ...] = (
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


# Extended by the arena's lazy view (a plain Python class), which mypyc must be told of.
@mypyc_attr(allow_interpreted_subclasses=True)
class View:
    """The game as seen by ``seat``: its own hand, the public table, and public knowledge.

    Card fields come in two forms: text lists (``hand``, ``table``) for people and masks or
    codes (``hand_mask``, ``table_codes``) for fast bots.
    """

    __slots__ = VIEW_FIELDS

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
            for name in VIEW_FIELDS
            if name != _CACHE and hasattr(self, name)
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            setattr(self, name, value)
        self._masked = None

    def _knowledge(self) -> tuple[Game, int]:
        masked = self._masked
        if masked is None:
            game, unknown = masked_game(self)
            assert isinstance(game, Game)  # the class of the game the view was taken from
            masked = self._masked = (game, unknown)
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
