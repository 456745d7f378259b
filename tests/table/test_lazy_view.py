"""The arena's lazy view (``table.local._LazyView``) is the view it stands for, no more."""

from __future__ import annotations

import pickle
from collections.abc import Sequence

from moska_p2p.engine import Move, View, new_game
from moska_p2p.table.local import play_game


class _Pickler:
    """A built-in-like bot (trusted: it gets the lazy view) that pickles what it is given."""

    trusted_fast = True
    name = "pickler"

    def __init__(self) -> None:
        self.pickles: list[tuple[bytes, bytes]] = []
        self.live: object = None

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        game = self.live
        assert game is not None
        plain = game.view(view.seat)  # type: ignore[attr-defined]
        self.pickles.append((pickle.dumps(view), pickle.dumps(plain)))
        return legal_moves[0]


def test_a_lazy_view_pickles_to_the_plain_view_and_never_to_the_game() -> None:
    game = new_game("moska", 2, seed=3)
    bot = _Pickler()
    bot.live = game
    other = _Pickler()
    other.live = game
    record = play_game(game, [bot, other], max_moves=30)
    assert record.move_count == 30
    assert bot.pickles and other.pickles
    for lazy, plain in bot.pickles + other.pickles:
        assert lazy == plain
        assert type(pickle.loads(lazy)) is View
