"""The policy prior: a small network that says which of a node's moves the search should
look at first, trained on the search's own choices.

The search (:mod:`moska_p2p.bots.ismcts`) spends its few hundred iterations among the
``width`` moves the heuristic ranks best, and by default its progressive bias trusts the
heuristic's *ranking* (the best move gets 1, the next less...). The policy network replaces
that ranking with a probability learned from what the search itself ended up preferring:
trained on the visit counts of the root's moves in self-play (``scripts/train_policy.py``),
it predicts where a longer search would go, so a short one starts there.

Input, one row per candidate move (:func:`move_rows`), :data:`FEATURES` numbers, all of
them what the seat to act sees (so a determinization gives the same row as the real game):

* the state (:data:`STATE_FEATURES`): the family (one-hot) and team play, the table size,
  the decision (open, defend, throw in, give, other), the stock, the seat's own hand, the
  smallest and largest other hand, whether the seat defends and the defender's hand, the
  room left in the bout, the seat's share of trumps, whether the game is early;
* the move: its kind (one-hot), how many cards it lays and how many are trumps, what they
  are worth (mean and highest; for a kill the card killed too), its share of the hand, and
  the heuristic's view of it (its score below the best one's, its rank, whether it is the
  heuristic's choice).

Layers: dense, ReLU, dense, ReLU, dense to one logit; the node's priors are the softmax of
its moves' logits. Inference is numpy without BLAS (``einsum``'s own loops, as the value
network's), so a seeded search is reproducible in any process.

**The weight file format** is the value network's archive (``network.write_archive``) with
``format`` ``"moska-policy-net"``, ``version`` 1, ``encoding_version`` the features'
(:data:`FEATURES_VERSION`) and one output.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from moska_p2p.bots.network import Perceptron, checked_layers, read_archive, write_archive
from moska_p2p.engine import (
    ATTACK,
    ATTACK_DECK,
    BEG,
    DECK_KILL,
    DEFEND,
    EXCHANGE,
    F_DURAK,
    F_KAAVI,
    F_MOSKA,
    F_MUSTAMAIJA,
    GIVE,
    KILL,
    OPEN,
    PASS,
    SELF,
    TAKE,
    THROW_IN,
    TRANSFER,
    TRANSFER_SHOW,
    Game,
    Move,
)

FORMAT = "moska-policy-net"
FORMAT_VERSION = 1
FEATURES_VERSION = 1
DEFAULT_POLICY = Path(__file__).with_name("weights") / "policy-v1.npz"

_FAMILIES = (F_MOSKA, F_DURAK, F_MUSTAMAIJA, F_KAAVI)
_PHASES = (OPEN, DEFEND, THROW_IN, GIVE)  # and one more slot: any other decision
_KINDS = (
    ATTACK, ATTACK_DECK, KILL, TAKE, PASS, EXCHANGE, SELF, DECK_KILL, TRANSFER, TRANSFER_SHOW, BEG
)  # fmt: skip
STATE_FEATURES = len(_FAMILIES) + 2 + len(_PHASES) + 1 + 9
MOVE_FEATURES = len(_KINDS) + 9
FEATURES = STATE_FEATURES + MOVE_FEATURES

Array = npt.NDArray[np.float32]


def _worth(card: int, trump: int) -> float:
    """A card's value on a 0..1 scale: its rank, a trump above every plain card."""
    return ((card >> 2) + (13 if card & 3 == trump else 0)) / 25.0


def state_row(game: Game) -> list[float]:
    """The state's part of every row (see the module docstring)."""
    seat = game.to_act_seat
    n = game.n
    sizes = game.hand_sizes()
    others = [sizes[s] for s in range(n) if s != seat] or [0]
    own = sizes[seat]
    hand = game.hand_mask(seat)
    trump = game.trump
    trumps = 0
    if trump >= 0:
        mask = hand
        while mask:
            low = mask & -mask
            if (low.bit_length() - 1) & 3 == trump:
                trumps += 1
            mask ^= low
    phase = game.phase
    defender = game.defender
    row = [1.0 if game.family == f else 0.0 for f in _FAMILIES]
    row.append(1.0 if game.rules.teams else 0.0)
    row.append(n / 6.0)
    row.extend(1.0 if phase == p else 0.0 for p in _PHASES)
    row.append(0.0 if phase in _PHASES else 1.0)
    stock = game.stock_size
    row.extend(
        (
            min(stock, 52) / 52.0,
            min(own, 20) / 20.0,
            min(min(others), 20) / 20.0,
            min(max(others), 20) / 20.0,
            1.0 if seat == defender else 0.0,
            min(sizes[defender], 20) / 20.0 if 0 <= defender < n else 0.0,
            min(game.room(), 6) / 6.0,
            trumps / own if own else 0.0,
            1.0 if stock > 6 else 0.0,
        )
    )
    return row


def move_rows(game: Game, moves: Sequence[Move], scores: Sequence[float]) -> list[list[float]]:
    """One row of :data:`FEATURES` numbers per move of the seat to act; ``scores`` are the
    heuristic's (``ismcts.score_moves``) of the same moves."""
    state = state_row(game)
    trump = game.trump
    own = max(1, game.hand_size(game.to_act_seat))
    best = max(scores) if scores else 0.0
    order = sorted(range(len(moves)), key=lambda i: -scores[i])
    rank = [0] * len(moves)
    for r, i in enumerate(order):
        rank[i] = r
    k = max(1, len(moves) - 1)
    rows = []
    for i, (kind, cards) in enumerate(moves):
        laid: Sequence[int] = cards
        killed = -1.0
        if kind in (KILL, BEG, SELF) and len(cards) == 2:
            killed = _worth(cards[0], trump)
            laid = cards[1:]
        values = [_worth(c, trump) for c in laid]
        row = list(state)
        row.extend(1.0 if kind == x else 0.0 for x in _KINDS)
        row.extend(
            (
                min(len(laid), 6) / 6.0,
                min(sum(1 for c in laid if c & 3 == trump), 3) / 3.0,
                sum(values) / len(values) if values else 0.0,
                max(values) if values else 0.0,
                killed,
                min(len(laid) / own, 1.0),
                max(scores[i] - best, -200.0) / 200.0,
                rank[i] / k,
                1.0 if rank[i] == 0 else 0.0,
            )
        )
        rows.append(row)
    return rows


class PolicyNet(Perceptron):
    """From a move's row to its logit; the softmax over a node's moves is their prior."""

    def logits(self, rows: npt.ArrayLike) -> Array:
        """Each row's logit, with numpy's own loops in a fixed order (no BLAS)."""
        h = np.asarray(rows, dtype=np.float32)
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            h = np.einsum("ij,jk->ik", h, w) + b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return np.asarray(h[:, 0], dtype=np.float32)

    def priors(self, rows: npt.ArrayLike) -> Array:
        """The softmax of the rows' logits: the moves' prior probabilities."""
        z = self.logits(rows)
        z = np.exp(z - z.max())
        return np.asarray(z / z.sum(), dtype=np.float32)


def save_policy(path: Path, net: PolicyNet) -> None:
    """Write ``net`` in the documented format (``training`` in its meta is kept)."""
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "encoding_version": FEATURES_VERSION,
        "layers": net.sizes,
        "training": net.meta.get("training", {}),
    }
    write_archive(path, meta, net.layers)


def load_policy(path: Path) -> PolicyNet:
    """Read a policy weight file, checking all the format fixes (``NetworkFormatError``)."""
    meta, layers = checked_layers(
        read_archive(path), str(path), FORMAT, FORMAT_VERSION, FEATURES, 1, FEATURES_VERSION
    )
    return PolicyNet(layers, meta)


@cache
def default_policy() -> PolicyNet:
    """The shipped policy network, read once per process."""
    return load_policy(DEFAULT_POLICY)
