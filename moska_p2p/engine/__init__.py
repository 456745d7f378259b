"""The rules engine: pure, deterministic, no I/O (DESIGN.md, "The engine").

>>> from moska_p2p.engine import new_game
>>> g = new_game("moska", players=4, seed=7)
>>> g.play(g.legal_moves()[0]) is not None
True

How it is built
---------------

:class:`Game` is the one public object. It holds a :class:`~.state.GameState` record
privately; the rules are modules of functions over that record (:mod:`.deal`, :mod:`.flow`,
:mod:`.movegen`, :mod:`.play`), which :class:`Game`'s methods call. A field is declared in
one place and a rule found by its module, not by walking a chain of base classes; outside
the engine the state is read through read-only properties (a sequence as a tuple, a
snapshot) and changed only through verbs (``play``, ``reveal``, ``declare_lowest_trump``,
``show``).

Search API
----------

The public :class:`Game` members a search bot (ISMCTS, rollouts) may rely on; nothing with a
leading underscore is part of it, and every name below is stable. Seats are ints ``0..n-1``,
cards are ints ``0..51`` (4 * rank + suit, :mod:`moska_p2p.cards`), hands are bitmasks.

Playing:

- ``copy()`` -- an independent copy, cheap (lists copied, immutable values shared).
- ``play(move)`` -- play a :class:`Move` or its text, checked; raises :class:`IllegalMove`.
- ``play_unchecked(move)`` -- play a move taken from this state's ``legal_moves()`` or
  ``random_move()`` without checking it again; same resulting state as ``play``.
- ``legal_moves()`` -- every legal move of the seat to act (``legal_moves(kind)`` one kind).
- ``count_legal_moves()`` -- ``len(legal_moves())`` without building a large list.
- ``random_move(rng)`` -- a uniformly random legal move, without listing every move.

State:

- ``to_act_seat`` -- the seat to act, ``-1`` when the game is over or waits for a reveal.
- ``is_over`` -- True once the game has ended.
- ``loser_seats`` -- the losing seats (a whole team in durak-teams), empty on a draw.
- ``loser`` -- the one seat that lost and deals next (M24): in durak-teams the partner still
  holding cards; ``None`` on a draw or while the game goes on.
- ``n`` -- the number of seats.
- ``rules`` -- the :class:`Rules` of the table (preset, options).
- ``family`` -- the preset's family as an int: ``F_MOSKA``, ``F_DURAK``, ``F_MUSTAMAIJA``,
  ``F_KAAVI``.
- ``phase`` -- the decision the seat to act faces as an int: ``OPEN``, ``DEFEND``,
  ``THROW_IN``, ``GIVE``, ``FORCED_KILL``, ``EXCHANGE_ROUND``, ``TWOS``, ``WAITING``,
  ``OVER`` (``DECISIONS[phase]`` is its name, RULES C5).
- ``trump`` -- the trump suit as an int, ``-1`` before it is turned (MM2, K1).
- ``stock_size`` -- how many cards are left in the stock (``stock``, its deck positions,
  bottom first, where a search needs the positions).
- ``hand_mask(seat)`` -- the known cards of a hand as a bitmask.
- ``hand_size(seat)`` -- how many cards a hand holds (known or not).
- ``hand_sizes()`` -- every hand's size, by seat.
- ``attacker`` / ``defender`` -- the bout's principal attacker and its defender.
- ``room()`` -- how many more attack cards the bout's limit allows (M6, D5, MM3);
  ``UNLIMITED`` where no count limit applies.
- ``view(seat)`` -- what that seat may know, as a :class:`View` (an evaluation that reads a
  position as one seat sees it, as the learned value network does at a search's leaves).
- ``state_hash()`` -- SHA-256 of the public state (equal on peers in step; a transposition
  key for positions that differ only in hidden cards).

Move kinds (``move[0]``, also ``move.kind``) are the ints ``ATTACK``, ``ATTACK_DECK``,
``KILL``, ``TAKE``, ``PASS``, ``EXCHANGE``, ``SELF``, ``DECK_KILL``, ``TRANSFER``,
``TRANSFER_SHOW``, ``BEG``; ``move[1]`` (``move.cards``) its card codes;
``attack_from_mask(mask)`` is the interned ATTACK move laying a bitmask of cards.
A :class:`View` (what one seat may know) gives search its sample of the hidden cards with
``View.determinize(rng)``. A search that weighs the hidden hands itself (by what the other
seats' play revealed, as the ISMCTS bot's inference does) reads ``View.unseen()`` -- the mask of
the cards the seat cannot place and how many of them each hand hides -- and passes its own
deal, one mask per seat, as ``View.determinize(rng, hands)``; the rest of the unseen cards
are shuffled into the stock, and a deal that breaks the view's knowledge raises
``DeterminizeError`` (a ``ValueError``).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

# First of the package's imports (and first in sorted order): it chooses the compiled or the
# pure modules before any of them is imported.
from .backend import COMPILED, IMPLEMENTATION, PURE_ENGINE_VARIABLE
from .errors import DealError, HiddenCardError, IllegalMove, RevealError
from .game import (
    DECISIONS,
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
    QUEEN_OF_SPADES,
    THROW_IN,
    TWOS,
    UNLIMITED,
    WAITING,
    Game,
    View,
    parse_deck,
)
from .knowledge import DeterminizeError
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
    MoveSyntaxError,
    attack_from_mask,
    make_move,
    parse_move,
)
from .options import PRESETS, OptionError, Rules, make_rules
from .scenario import stack_deck
from .session import Session

__all__ = [
    "ATTACK",
    "ATTACK_DECK",
    "BEG",
    "COMPILED",
    "DECISIONS",
    "DECK_KILL",
    "DEFEND",
    "EXCHANGE",
    "EXCHANGE_ROUND",
    "FORCED_KILL",
    "F_DURAK",
    "F_KAAVI",
    "F_MOSKA",
    "F_MUSTAMAIJA",
    "GIVE",
    "IMPLEMENTATION",
    "KILL",
    "OPEN",
    "OVER",
    "PASS",
    "PRESETS",
    "PURE_ENGINE_VARIABLE",
    "QUEEN_OF_SPADES",
    "SELF",
    "TAKE",
    "THROW_IN",
    "TRANSFER",
    "TRANSFER_SHOW",
    "TWOS",
    "UNLIMITED",
    "WAITING",
    "DealError",
    "DeterminizeError",
    "Game",
    "HiddenCardError",
    "IllegalMove",
    "Move",
    "MoveSyntaxError",
    "OptionError",
    "RevealError",
    "Rules",
    "Session",
    "View",
    "attack_from_mask",
    "make_move",
    "make_rules",
    "new_game",
    "new_hidden_game",
    "parse_move",
    "shuffled_deck",
    "stack_deck",
]


def shuffled_deck(rules: Rules, rng: random.Random) -> list[int]:
    """The preset's pack in a random order drawn from ``rng`` (top first)."""
    deck = list(range(rules.lowest_rank * 4, 52))
    rng.shuffle(deck)
    return deck


def new_game(
    preset: str = "moska",
    players: int = 4,
    *,
    seed: int | None = None,
    deck: Iterable[int | str] | None = None,
    dealer: int | None = None,
    first_game: bool = True,
    **options: Any,
) -> Game:
    """A full-information game of ``preset``: every face is known (the arena's fast path).

    Either ``seed`` (a shuffled deal; with no ``dealer``, the dealer is drawn from the same
    randomness, RULES M2) or ``deck`` (a stacked deal, top first, RULES C4; dealer 0 unless
    given). ``options`` change the preset's options (``deck_kill="on"``). ``first_game=False``
    plays a later game of a session (Durak D3: the dealer's left attacks).
    """
    rules = make_rules(preset, **options)
    if deck is not None:
        if seed is not None:
            raise ValueError("give either a seed or a stacked deck, not both")
        faces = parse_deck(deck)
        return Game(rules, players, faces, dealer if dealer is not None else 0, first_game)
    rng = random.Random(seed if seed is not None else random.SystemRandom().getrandbits(64))
    faces = shuffled_deck(rules, rng)
    if dealer is None:
        if not 2 <= players <= 6:
            raise ValueError(f"{preset} is for 2 to 6 players, not {players}")
        dealer = rng.randrange(players)
    return Game(rules, players, faces, dealer, first_game)


def new_hidden_game(
    preset: str, players: int, *, dealer: int, first_game: bool = True, **options: Any
) -> Game:
    """A game whose faces are all unknown: a peer's engine before any key is released.

    Faces arrive through :meth:`Game.reveal`; :meth:`Game.take_reveal_requests` lists the
    positions whose faces became due (private draws and public turns).
    """
    rules = make_rules(preset, **options)
    return Game(rules, players, None, dealer, first_game, track_reveals=True)
