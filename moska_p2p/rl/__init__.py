"""A PettingZoo AEC environment over the engine, for learning bots (the optional extra
``rl``: ``pip install 'moska-p2p[rl]'``, which brings pettingzoo, gymnasium and numpy).

>>> from moska_p2p.rl import env
>>> e = env("durak", players=3)
>>> e.reset(seed=7)

**Agents** are ``player_0`` .. ``player_{n-1}``, the seats; every preset at every player
count it allows (2-6, ``durak-teams`` 4 or 6). The agent to act is the engine's seat to act
(RULES C5), so one agent may act several times in a row.

**Observations** are dicts: ``"observation"``, a float32 vector of
``OBSERVATION_SIZE`` (674) values in [0, 1], the fixed-size view encoding
(:func:`moska_p2p.bots.encoding.encode_view`, its first ``VIEW_SIZE`` values: what that
seat may know, seats relative to it) followed by 52 flags, the cards of the multi-card
attack the agent is building; and ``"action_mask"``, int8 flags over the actions, all zero
except for the agent to act.

**Actions** are ints in ``Discrete(NUM_ACTIONS)`` (8326). Below ``DENSE_MOVE_IDS`` (8273) an
action is the stable move id of :mod:`moska_p2p.bots.encoding` (``move_id``: ``1`` take,
``2`` pass, ``5 + c`` attack with card ``c``, ``57 + a * 52 + k`` kill ...). A multi-card
attack's own id (``8273 + mask``, up to 2**52) is too sparse for a masked action space, so
it is played in steps: ``ADD_CARD_BASE + c`` adds card ``c`` to the attack being built (the
same agent acts again; only cards that some legal attack with the cards chosen so far holds
are offered, so a build always ends in a legal attack), and ``LAY_ACTION`` lays it once the
cards chosen are a legal attack. Single-card attacks stay one action (``5 + c``).

**Rewards** come at the end of the game, zero-sum: -1 for each loser, the others share the
losers' loss (+1/3 each at a table of four with one loser; +1 each for the winning team of
``durak-teams``), 0 for all on a draw (D10) or a game truncated at ``max_moves``. Zero-sum
rewards make self-play's values comparable across player counts: a seat's expected reward
is 0 at par.

**Illegal actions**: :func:`env` wraps the game as PettingZoo's classic environments are
wrapped (``TerminateIllegalWrapper``: an illegal action ends the game with -1 for the agent
that played it and 0 for the others; ``AssertOutOfBoundsWrapper``;
``OrderEnforcingWrapper``). :func:`raw_env` raises ``ValueError`` instead.

**Seeding**: ``reset(seed=s)`` deals from ``s``, and later unseeded resets continue from it,
so a seeded run repeats exactly.
"""

from __future__ import annotations

from .env import (
    ADD_CARD_BASE,
    LAY_ACTION,
    NUM_ACTIONS,
    OBSERVATION_SIZE,
    MoskaEnv,
    env,
    raw_env,
)

__all__ = [
    "ADD_CARD_BASE",
    "LAY_ACTION",
    "NUM_ACTIONS",
    "OBSERVATION_SIZE",
    "MoskaEnv",
    "env",
    "raw_env",
]
