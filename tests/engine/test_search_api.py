"""The documented search API (``moska_p2p.engine`` docstring, "Search API") is real."""

from __future__ import annotations

import builtins
import random
import re

import moska_p2p.engine as engine
from moska_p2p.engine import Game, new_game

# Every Game member the "Search API" section names, with how it is used.
METHODS = (
    "copy",
    "play",
    "play_unchecked",
    "legal_moves",
    "count_legal_moves",
    "random_move",
    "hand_mask",
    "hand_size",
    "hand_sizes",
    "room",
    "state_hash",
)
ATTRIBUTES = (
    "to_act_seat",
    "is_over",
    "loser_seats",
    "loser",
    "n",
    "rules",
    "family",
    "phase",
    "trump",
    "stock",
    "stock_size",
    "attacker",
    "defender",
)
CONSTANTS = (
    "OPEN",
    "DEFEND",
    "THROW_IN",
    "GIVE",
    "FORCED_KILL",
    "EXCHANGE_ROUND",
    "TWOS",
    "WAITING",
    "OVER",
    "F_MOSKA",
    "F_DURAK",
    "F_MUSTAMAIJA",
    "F_KAAVI",
    "UNLIMITED",
    "ATTACK",
    "ATTACK_DECK",
    "KILL",
    "TAKE",
    "PASS",
    "EXCHANGE",
    "SELF",
    "DECK_KILL",
    "TRANSFER",
    "TRANSFER_SHOW",
    "BEG",
    "attack_from_mask",
)


def _section() -> str:
    doc = engine.__doc__ or ""
    assert "Search API" in doc
    return doc[doc.index("Search API") :]


def test_every_documented_member_exists_and_is_public() -> None:
    game = new_game("moska", players=4, seed=1)
    section = _section()
    for name in METHODS:
        assert not name.startswith("_")
        assert callable(getattr(game, name)), name
        assert f"``{name}(" in section, name
    for name in ATTRIBUTES:
        assert not name.startswith("_")
        getattr(game, name)
        assert f"``{name}``" in section, name
    for name in CONSTANTS:
        assert name in engine.__all__, name
        assert f"``{name}" in section, name


def test_the_section_names_nothing_private_or_missing() -> None:
    """Every ``name`` the section quotes is a Game member or an export of the package."""
    game = new_game("durak", players=3, seed=2)
    quoted = set(re.findall(r"``([A-Za-z_]\w*)", _section())) - {"move"}
    for name in quoted:
        if hasattr(builtins, name):  # len, None
            continue
        assert not name.startswith("_"), name
        assert hasattr(game, name) or name in engine.__all__, name


def test_phase_and_family_constants_match_the_game() -> None:
    assert engine.DECISIONS[engine.OPEN] == "open"
    assert engine.DECISIONS[engine.OVER] == "over"
    assert new_game("mustamaija", players=3, seed=3).family == engine.F_MUSTAMAIJA
    assert new_game("kaavi", players=3, seed=3).family == engine.F_KAAVI
    assert new_game("durak", players=3, seed=3).family == engine.F_DURAK
    g: Game = new_game("moska", players=3, seed=3)
    assert g.family == engine.F_MOSKA
    rng = random.Random(0)
    while not g.is_over:
        assert g.phase not in (engine.WAITING, engine.OVER)
        copy = g.copy()
        g.play_unchecked(g.random_move(rng))
        assert copy.state_hash() != g.state_hash()
    assert g.phase == engine.OVER
    assert (g.loser in g.loser_seats) if g.loser_seats else g.loser is None


def test_copy_is_independent_in_every_field() -> None:
    """A game's state is one record of slots (the rules are functions over it): a copy must
    copy every one of them, and neither the game nor its record may have a ``__dict__``."""
    from moska_p2p.engine import COMPILED
    from moska_p2p.engine.state import STATE_FIELDS

    g = new_game("kaavi", players=4, seed=9)
    rng = random.Random(9)
    for _ in range(15):
        g.play(g.random_move(rng))
    assert not hasattr(g, "__dict__") and not hasattr(g._state, "__dict__")
    if not COMPILED:  # a class compiled by mypyc has fixed fields, and no __slots__ to read
        assert type(g).__dict__.get("__slots__") is not None
        assert type(g._state).__dict__.get("__slots__") is not None
    c = g.copy()
    original, copied = g._state, c._state
    assert copied is not original
    for name in STATE_FIELDS:
        value = getattr(original, name)
        assert getattr(copied, name) == value, name
        if isinstance(value, (list, dict)):
            assert getattr(copied, name) is not value, name
    assert all(a is not b for a, b in zip(copied.hidden, original.hidden, strict=True))
    before = g.state_hash()
    c.play(c.random_move(rng))
    assert g.state_hash() == before
