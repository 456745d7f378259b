"""The rules engine: pure, deterministic, no I/O (DESIGN.md, "The engine").

>>> from moska_p2p.engine import new_game
>>> g = new_game("moska", players=4, seed=7)
>>> g.play(g.legal_moves()[0]) is not None
True
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from .errors import DealError, HiddenCardError, IllegalMove, RevealError
from .game import DECISIONS, Game, parse_deck
from .moves import Move, MoveSyntaxError, make_move, parse_move
from .options import PRESETS, OptionError, Rules, make_rules
from .scenario import stack_deck
from .session import Session
from .view import View

__all__ = [
    "DECISIONS",
    "PRESETS",
    "DealError",
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
