"""The canonical public-state encoding and its hash: fixed vectors, and no private data.

The vectors pin the byte layout (moska_p2p/engine/encoding.py, version 1): a change to them
is a protocol change and must bump ENCODING_VERSION.
"""

from __future__ import annotations

from moska_p2p.engine import new_game, stack_deck
from moska_p2p.engine.encoding import ENCODING_VERSION

HANDS = {0: "2C 5D 9H JS QS AC", 1: "3H 3S 7D 8D KC KH", 2: "4C 4D 6H 10S JD AD"}

START_BYTES = (
    "6d6f736b612d7032702f737461746501056d6f736b6106096465636b5f6b696c6c036f6666126578706f"
    "73655f7365636f6e645f6c617374036f6666056c696d69740b7369782d6f722d68616e640e73656c665f"
    "657865637574696f6e036f66660e7468726f775f696e5f72616e6b7303616c6c0e7472756d705f657863"
    "68616e676508616e792d74696d6503020100000100010103170122010017060000060000060000000000"
    "000600000000000000000000"
)
VECTORS = [
    (None, "f16e6a0ac6a1cc7bced736027837bbfdea6e5f4113e2fa3706c00443490ee295"),
    ("attack 2C", "74ff7dcba450d3b8cb32625cce5b7b41ea79080131afb425af2b31c9cbf00da6"),
    ("kill 2C KC", "c646665316508126bf95db00ea099404851c0c9ae15f3b2d852f2e0615ce9453"),
    ("pass", "0a5d08dff8394dd45a8db24b50a3937d67cc818e53e4759efe37063b91171766"),
    ("pass", "c813b50b3f5ea2ddaf65379676833d65ec37a34347cff055247b27517feffbf7"),
]


def _game(hands: dict[int, str] = HANDS):  # type: ignore[no-untyped-def]
    deck = stack_deck("moska", 3, hands, dealer=2, indicator="7H", stock=["2S", "9C"])
    return new_game("moska", 3, deck=deck, dealer=2)


def test_encoding_version_is_one() -> None:
    assert ENCODING_VERSION == 1


def test_fixed_vectors() -> None:
    g = _game()
    assert g.encode_public().hex() == START_BYTES
    for move, expected in VECTORS:
        if move is not None:
            g.play(move)
        assert g.state_hash() == expected, move


def test_hidden_cards_do_not_enter_the_hash() -> None:
    """Two deals that differ only in hidden cards of seats 1 and 2 encode alike."""
    swapped = dict(HANDS)
    swapped[1] = "3H 3S 7D 8D KC 6H"
    swapped[2] = "4C 4D KH 10S JD AD"
    a, b = _game(), _game(swapped)
    assert a.state_hash() == b.state_hash()
    a.play("attack 2C")
    b.play("attack 2C")
    assert a.state_hash() == b.state_hash()
    a.play("kill 2C KC")
    b.play("kill 2C KC")
    assert a.state_hash() == b.state_hash()


def test_public_differences_change_the_hash() -> None:
    a, b = _game(), _game()
    a.play("attack 2C")
    b.play("attack 5D")
    assert a.state_hash() != b.state_hash()
    assert new_game("moska", 3, seed=1).state_hash() != new_game("durak", 3, seed=1).state_hash()
