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

A game is one record, :class:`~.state.GameState`, and the rules are modules of functions
over it, so a rule is found where it acts and every field in one place:

* :mod:`.state` -- the fields of a game and the seat arithmetic;
* :mod:`.deal` -- where cards come from: the deal, draws, the trump, faces learnt (C4, M23);
* :mod:`.flow` -- who acts next: the start (M4, D3, K1), limits, rounds, the end of a bout
  and of the game, cards turned from the stock and the game going on once they are known;
* :mod:`.movegen` -- legal moves, counted and sampled (C5, C6);
* :mod:`.play` -- each move's checks and effect (``play``, ``play_unchecked``);
* this module -- :class:`Game`, the public object: it keeps its state private and calls the
  rules; outside code reads the state through read-only properties (tuples, snapshots) and
  changes it through verbs only (``play``, ``reveal``, ``declare_lowest_trump``, ``show``).
  And :class:`View`, what one seat may see of a game; rebuilding a game from a view is
  :mod:`.knowledge`'s (the masked game, determinization).

Functions over a record rather than a chain of mixin classes: a reader finds a field in
:mod:`.state` and a rule by its module, never by walking a class's bases, and mypyc compiles a
call between modules as a direct C call. A game makes views and a view rebuilds games, so
both classes live here: in two modules each would import the other. :mod:`.knowledge` and
:mod:`.encoding` work on :class:`~.state.GameState`, below this module.

**Views.** A :class:`View` is a snapshot taken in a few attribute copies (cheap enough to
build on every decision in the arena); the text forms are computed only when a bot asks for
them. A view holds **only what its seat may know**: its own hand and public information,
every list copied, and no reference to the game it was taken from. Its ``snapshot`` is the
public snapshot of :mod:`.knowledge`; :meth:`View.masked_game` and
:meth:`View.determinize` rebuild a game from the view's own data, so a view pickled, encoded
for an external bot or kept after the game moved on shows nothing hidden and nothing that
happened later. Two deals that differ only in cards hidden from a seat give that seat views
that pickle to the same bytes (DESIGN.md: bots get views, never the full state; RULES C5).

The constants (phases, families, ...) live in :mod:`.constants` and the card-mask helpers in
:mod:`.cardsets`; both are re-exported here, where the rest of the package imports them.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, SupportsIndex

from mypy_extensions import mypyc_attr

# The rules modules by name, so a method reads as the rule it calls (``movegen.legal_moves``);
# absolute, because ``from . import`` would import this package's ``__init__`` back.
import moska_p2p.engine.deal as deal
import moska_p2p.engine.flow as flow
import moska_p2p.engine.movegen as movegen
import moska_p2p.engine.play as play

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
from .errors import RevealError
from .knowledge import Snapshot, determinize, masked_game, public_snapshot
from .moves import Move
from .options import Rules
from .state import GameState, new_state

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


class Game:
    """One game of a preset, from the deal to its loser. Pure and deterministic: no I/O.

    Use :func:`moska_p2p.engine.new_game` to make one. ``play`` takes a :class:`Move` or its
    text; an illegal move raises :class:`IllegalMove` and leaves the game unchanged. Its
    state is its own: outside code reads it through the properties below (a sequence comes
    as a tuple, a snapshot no write can reach the game through) and changes it only by
    playing, revealing and showing.
    """

    __slots__ = ("_state",)

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

        No ``rules``: a blank game, no state yet, for :func:`_wrap` to fill. It makes one
        with ``Game.__new__(Game)``, which a class compiled by mypyc answers by calling this
        with no arguments."""
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
        if faces is not None:
            check_deck(faces, rules)
        self._state = new_state(rules, players, faces, dealer, first_game, track_reveals)
        flow.begin(self._state)

    # ------------------------------------------------------------------------- playing

    def play(self, move: Move | str, seat: int | None = None) -> Move:
        """Play ``move`` (a :class:`Move` or its text) for the seat to act.

        ``seat``, when given, must be the seat to act (a remote peer's claim). Returns the
        move played, in canonical form. Raises :class:`IllegalMove`; the game is unchanged.
        """
        return play.play(self._state, move, seat)

    def play_unchecked(self, move: Move) -> None:
        """Play ``move``, taken from :meth:`legal_moves` or :meth:`random_move` of this very
        state, without validating it again (the fast path of search); the resulting state
        is the one :meth:`play` would reach. A move that is not legal here corrupts the game
        silently: use :meth:`play` for anything else."""
        play.play_unchecked(self._state, move)

    def legal_moves(self, kind: str | None = None) -> list[Move]:
        """Every legal move of the seat to act (RULES C6 text via ``str``).

        ``kind`` (``"attack"``, ``"kill"``, ...) lists that kind only, which is much cheaper
        than the whole list where openings are many (a large hand under ``limit=hand``).
        """
        return movegen.legal_moves(self._state, kind)

    def random_move(self, rng: random.Random) -> Move:
        """A legal move chosen uniformly at random, without listing every move where the
        list would be large (an opening from a big hand, a throw-in of many cards)."""
        return movegen.random_move(self._state, rng)

    def count_legal_moves(self) -> int:
        """``len(self.legal_moves())``, computed without building the list where it is big."""
        return movegen.count_legal_moves(self._state)

    def copy(self) -> Game:
        """An independent copy (for search): lists are copied, immutable values shared."""
        return _wrap(self._state.copy())

    # ----------------------------------------------------- reveals (hidden information)

    def reveal(self, position: int, card: int | str) -> None:
        """Tell this engine the face at ``position`` (a key was released for it)."""
        flow.reveal(self._state, position, card)

    def take_reveal_requests(self) -> list[tuple[int, int]]:
        """The (position, seat) pairs whose faces became due since the last call; seat -1
        means everyone (a public reveal). Only recorded with ``track_reveals=True``."""
        return deal.take_reveal_requests(self._state)

    @property
    def awaiting(self) -> tuple[int, ...]:
        """Deck positions whose faces the game waits for before it can go on."""
        return deal.awaiting(self._state)

    @property
    def awaiting_lowest_trump(self) -> bool:
        """True while a hidden-information Durak game waits for the D3 claim."""
        return deal.awaiting_lowest_trump(self._state)

    def declare_lowest_trump(self, position: int | None) -> None:
        """Resolve D3 on a hidden-information engine: the position of the lowest trump shown
        (its face revealed beforehand), or ``None`` when nobody holds a trump."""
        flow.declare_lowest_trump(self._state, position)

    def show(self, seat: int, card: int) -> None:
        """``seat`` showed ``card`` from its hand and keeps it (a disclosure, a refuted
        denial): everyone knows it from now on, like a card picked up from the table."""
        state = self._state
        if not state.hands[seat] >> card & 1:
            raise RevealError(f"seat {seat} does not hold {CARD_TEXT[card]} to show it")
        state.shown[seat] |= 1 << card

    def card_at(self, position: int) -> int:
        """The card at deck ``position``, or -1 while this engine does not know it."""
        return self._state.face[position]

    def position_of(self, card: int) -> int:
        """The deck position of ``card``, or -1 while this engine has not seen it."""
        return self._state.pos_of[card]

    def private_positions(self, seat: int) -> set[int]:
        """The positions in ``seat``'s hand whose faces are not public: its unknown cards
        and its known ones nobody was shown (the same set on every peer in step)."""
        state = self._state
        out = {pos for pos, owner in state.hidden_owner.items() if owner == seat}
        private = state.hands[seat] & ~state.shown[seat]
        while private:
            low = private & -private
            out.add(state.pos_of[low.bit_length() - 1])
            private ^= low
        return out

    # ------------------------------------------------------------------------ the state

    @property
    def rules(self) -> Rules:
        """The table's rules (preset, options)."""
        return self._state.rules

    @property
    def family(self) -> int:
        """The preset's family: F_MOSKA, F_DURAK, F_MUSTAMAIJA or F_KAAVI."""
        return self._state.family

    @property
    def n(self) -> int:
        """The number of seats."""
        return self._state.n

    @property
    def dealer(self) -> int:
        return self._state.dealer

    @property
    def first_game(self) -> bool:
        """Durak D3: only the first game of a session opens on the lowest trump."""
        return self._state.first_game

    @property
    def phase(self) -> int:
        """The decision the seat to act faces: OPEN, DEFEND, ... (RULES C5)."""
        return self._state.phase

    @property
    def decision(self) -> str:
        """The kind of decision the seat to act faces, by name (RULES C5)."""
        return self._state.decision

    @property
    def to_act_seat(self) -> int:
        """The seat to act, -1 when the game is over or waits for a reveal (a card turned
        face up by M23 included: its face must be known to all before anyone acts)."""
        state = self._state
        return -1 if state.pending_public else state.to_act_seat

    @property
    def attacker(self) -> int:
        """The bout's principal attacker."""
        return self._state.attacker

    @property
    def defender(self) -> int:
        """The bout's defender."""
        return self._state.defender

    @property
    def trump(self) -> int:
        """The trump suit, -1 before it is turned (MM2, K1)."""
        return self._state.trump

    @property
    def indicator(self) -> int:
        """The trump indicator card, -1 before it is known."""
        return self._state.indicator

    @property
    def turned(self) -> int:
        """M22: the card turned by deck-kill that must kill, else -1."""
        return self._state.turned

    @property
    def bout_count(self) -> int:
        """Attack cards counted against the bout's limit."""
        return self._state.bout_count

    @property
    def bout_limit(self) -> int:
        """The bout's limit (M6, D5), UNLIMITED where none applies."""
        return self._state.bout_limit

    @property
    def live(self) -> int:
        """The live attack cards on the table (mask)."""
        return self._state.live

    @property
    def discard(self) -> int:
        """The cards out of play (mask)."""
        return self._state.discard

    @property
    def loser_seats(self) -> tuple[int, ...]:
        return self._state.loser_seats

    @property
    def history(self) -> tuple[tuple[int, Move], ...]:
        """Every move so far, (seat, move), oldest first."""
        return tuple(self._state.history)

    @property
    def stock(self) -> tuple[int, ...]:
        """The stock's deck positions, bottom first."""
        return tuple(self._state.stock)

    @property
    def face(self) -> tuple[int, ...]:
        """The card at each deck position, -1 while unknown."""
        return tuple(self._state.face)

    @property
    def pos_of(self) -> tuple[int, ...]:
        """The deck position of each card, -1 while unknown."""
        return tuple(self._state.pos_of)

    @property
    def public(self) -> tuple[bool, ...]:
        """Per deck position, whether it was turned face up for everyone."""
        return tuple(self._state.public)

    @property
    def hands(self) -> tuple[int, ...]:
        """The known cards of each hand, as masks."""
        return tuple(self._state.hands)

    @property
    def shown(self) -> tuple[int, ...]:
        """The cards of each hand everyone knows, as masks."""
        return tuple(self._state.shown)

    @property
    def hidden(self) -> tuple[tuple[int, ...], ...]:
        """The positions of each hand's unknown cards."""
        return tuple(tuple(slots) for slots in self._state.hidden)

    @property
    def hidden_owner(self) -> Mapping[int, int]:
        """Each unknown position in a hand, and the seat holding it."""
        return MappingProxyType(dict(self._state.hidden_owner))

    @property
    def out(self) -> tuple[bool, ...]:
        """Per seat, whether it is out of the game (M13, D10, MM7)."""
        return tuple(self._state.out)

    @property
    def tab_a(self) -> tuple[int, ...]:
        """The bout's attack cards, in the order laid."""
        return tuple(self._state.tab_a)

    @property
    def tab_k(self) -> tuple[int, ...]:
        """Their killing cards, -1 while live."""
        return tuple(self._state.tab_k)

    # ------------------------------------------------------------------ public properties

    @property
    def is_over(self) -> bool:
        """True once the game has ended (a loser, or a draw)."""
        return self._state.phase == OVER

    @property
    def loser(self) -> int | None:
        """The seat that lost, ``None`` on a draw (D10) or while the game goes on."""
        state = self._state
        if state.phase != OVER or not state.loser_seats:
            return None
        if len(state.loser_seats) == 1:
            return state.loser_seats[0]
        holders = [s for s in state.loser_seats if state.hand_size(s)]
        return holders[0] if holders else state.loser_seats[0]

    @property
    def stock_size(self) -> int:
        """How many cards are left in the stock."""
        return len(self._state.stock)

    @property
    def trump_card(self) -> str | None:
        """The trump indicator's text, or ``None`` before it is known (MM2, K1)."""
        indicator = self._state.indicator
        return CARD_TEXT[indicator] if indicator >= 0 else None

    @property
    def discard_size(self) -> int:
        """How many cards are out of play."""
        return self._state.discard.bit_count()

    @property
    def table(self) -> list[tuple[str, str | None]]:
        """The bout's cards in the order laid: (attack card, killing card or ``None``)."""
        state = self._state
        return [
            (CARD_TEXT[a], CARD_TEXT[k] if k >= 0 else None)
            for a, k in zip(state.tab_a, state.tab_k, strict=True)
        ]

    @property
    def exchange_open(self) -> bool:
        """True while the original trump indicator is in the stock to be exchanged (M4, D8)."""
        return self._state.exchange_pos >= 0

    @property
    def begged_flags(self) -> list[bool]:
        """Kaavi K4: per table pair, whether its killer was already exchanged."""
        return list(self._state.begged)

    @property
    def own_twos_flags(self) -> list[bool]:
        """Kaavi K5: per table pair, whether it is the dealer's own two."""
        return list(self._state.own_twos)

    def room(self) -> int:
        """How many more attack cards the bout's limit allows now (M6, D5, MM3);
        ``UNLIMITED`` (a large number) where no count limit applies."""
        return flow.attack_room(self._state)

    def view(self, seat: int) -> View:
        """What ``seat`` may see: its own hand and public information only."""
        return View(self, seat)

    def encode_public(self) -> bytes:
        """The canonical encoding of the public state (see :mod:`.encoding`)."""
        return encode_public_state(self._state)

    def state_hash(self) -> str:
        """SHA-256 (hex) of the public state: equal on every peer that is in step."""
        return public_state_hash(self._state)

    def hand(self, seat: int) -> list[str]:
        """The card texts of a seat's hand, canonical order; ``??`` for each unknown face."""
        state = self._state
        return [CARD_TEXT[c] for c in cards_list(state.hands[seat])] + ["??"] * len(
            state.hidden[seat]
        )

    def hand_mask(self, seat: int) -> int:
        """The known cards of ``seat``'s hand, as a card mask."""
        return self._state.hands[seat]

    def hand_size(self, seat: int) -> int:
        """How many cards ``seat`` holds, known or not."""
        return self._state.hand_size(seat)

    def hand_sizes(self) -> list[int]:
        """Every seat's hand size."""
        state = self._state
        return [state.hands[s].bit_count() + len(state.hidden[s]) for s in range(state.n)]

    def is_out(self, seat: int) -> bool:
        """Whether ``seat`` has left the game with an empty hand (M13, D10)."""
        return self._state.out[seat]

    def team_of(self, seat: int) -> int:
        """``seat``'s team in durak-teams (D12); elsewhere every seat is its own."""
        return seat % 2 if self._state.rules.teams else seat

    @property
    def live_cards(self) -> list[str]:
        """The texts of the live (unkilled) attack cards on the table."""
        state = self._state
        return [CARD_TEXT[c] for c in state.tab_a if state.live >> c & 1]

    # -------------------------------------------------------------------- determinization

    def unknown_to(self, seat: int) -> int:
        """The mask of every card whose place ``seat`` does not know: in other hands (not
        shown) or face down in the stock."""
        state = self._state
        known = state.hands[seat] | state.discard
        for a, k in zip(state.tab_a, state.tab_k, strict=True):
            known |= 1 << a
            if k >= 0:
                known |= 1 << k
        if state.turned >= 0:
            known |= 1 << state.turned  # M22: turned face up, about to kill
        for s in range(state.n):
            known |= state.shown[s]
        for pos in state.stock:
            if state.public[pos] and state.face[pos] >= 0:
                known |= 1 << state.face[pos]
        pack = ((1 << NUM_CARDS) - 1) & ~((1 << (state.rules.lowest_rank * 4)) - 1)
        return pack & ~known

    def determinize(self, seat: int, rng: random.Random) -> Game:
        """``self.view(seat).determinize(rng)``: a full-information game in which every card
        ``seat`` cannot place is dealt at random where it could be, from what ``seat`` knows
        only (see :mod:`.knowledge`); works on a peer's engine as on the arena's."""
        return View(self, seat).determinize(rng)

    def __repr__(self) -> str:
        state = "over" if self.is_over else f"seat {self.to_act_seat} to {self.decision}"
        return f"<Game {self.rules.preset} {self.n} players, {state}>"


def _wrap(state: GameState) -> Game:
    """A game around ``state`` (a copy's, a view's rebuilt one), dealt no further."""
    game = Game.__new__(Game)
    game._state = state
    return game


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
        state = game._state
        if not 0 <= seat < state.n:
            raise ValueError(f"no seat {seat} at a table of {state.n}")
        self.seat = seat
        self.preset = state.rules.preset
        self.players = state.n
        self.dealer = state.dealer
        self.decision = state.decision
        to_act = game.to_act_seat
        self.to_act = to_act if to_act >= 0 else None
        self.attacker = state.attacker
        self.defender = state.defender
        hands = state.hands
        shown = state.shown
        self.hand_mask = hands[seat]
        self.hidden_in_hand = len(state.hidden[seat])
        self.hand_sizes = game.hand_sizes()
        # Cards of other hands that everyone knows (picked up, exchanged, shown: D3, M22).
        known = list(shown)
        known[seat] = hands[seat]
        self.known_mask = known
        self.table_codes = list(zip(state.tab_a, state.tab_k, strict=True))
        self.trump_suit = state.trump
        self.trump_card_code = state.indicator
        stock = state.stock
        public = state.public
        face = state.face
        self.stock_size = len(stock)
        self.stock_known = [
            (i, face[pos]) for i, pos in enumerate(stock) if public[pos] and face[pos] >= 0
        ]
        self.discard_mask = state.discard
        self.out = list(state.out)
        self.bout_limit = state.bout_limit
        self.bout_count = state.bout_count
        # OPEN, DEFEND, THROW_IN, GIVE
        self.room = flow.attack_room(state) if state.phase <= 3 else 0
        self._history = tuple(state.history)  # a copy: the live list grows with the game
        self._state = public_snapshot(state, seat)
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
            state, unknown = masked_game(self)
            masked = self._masked = (_wrap(state), unknown)
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
        return unknown, [len(slots) for slots in masked._state.hidden]

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
            return _wrap(determinize(masked._state, unknown, self.seat, rng))
        return _wrap(determinize(masked._state, unknown, self.seat, rng, hands))

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
    def snapshot(self) -> Snapshot:
        """The public fields of the game this view keeps beyond its own attributes, for
        :mod:`.knowledge` to rebuild the game as this seat knows it."""
        return self._state

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
