"""A canonical, compact encoding of a game's *public* state, and its hash.

Peers compare these hashes to agree on the game so far (DESIGN.md, "The engine"), so the
encoding holds only what every seat knows: no face of a hidden card ever enters it, and a
full-information engine and a peer's engine that knows only its own hand encode the same
bytes. Every field is an unsigned LEB128 varint in a fixed order; lists carry their length.
Changing the layout changes :data:`ENCODING_VERSION`.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .state import GameState

ENCODING_VERSION = 1
_MAGIC = b"moska-p2p/state"


def _varint(out: bytearray, value: int) -> None:
    if value < 0:
        raise ValueError("the encoding holds unsigned integers only")
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return


def _text(out: bytearray, text: str) -> None:
    data = text.encode("utf-8")
    _varint(out, len(data))
    out += data


def encode_public_state(game: GameState) -> bytes:
    """The canonical bytes of everything public about ``game`` (see the module docstring)."""
    out = bytearray(_MAGIC)
    v = _varint
    v(out, ENCODING_VERSION)
    rules = game.rules
    _text(out, rules.preset)
    options = rules.options()
    v(out, len(options))
    for name in sorted(options):
        _text(out, name)
        _text(out, options[name])
    v(out, game.n)
    v(out, game.dealer)
    v(out, int(game.first_game))
    v(out, len(game.history))
    v(out, game.phase)
    v(out, game.to_act_seat + 1)
    v(out, game.attacker)
    v(out, game.defender)
    v(out, game.bout_number)
    v(out, game.trump + 1)
    v(out, game.indicator + 1)
    v(out, int(game.exchange_pos >= 0))  # Game.exchange_open
    # The stock: its size, then every face-up card in it by its place from the bottom.
    stock = game.stock
    v(out, len(stock))
    public = [(i, game.face[pos]) for i, pos in enumerate(stock) if game.public[pos]]
    v(out, len(public))
    for i, card in public:
        v(out, i)
        v(out, card + 1)
    for seat in range(game.n):
        v(out, game.hand_size(seat))  # Game.hand_size
        v(out, game.shown[seat])
        v(out, int(game.out[seat]))
    v(out, len(game.tab_a))
    for a, k in zip(game.tab_a, game.tab_k, strict=True):
        v(out, a)
        v(out, k + 1)
    for flags in (game.begged, game.own_twos):  # Game.begged_flags, own_twos_flags
        v(out, sum(1 << i for i, flag in enumerate(flags) if flag))
    v(out, game.bout_count)
    v(out, min(game.bout_limit, 1 << 20))
    v(out, game.ranks_all)
    v(out, game.ranks_att)
    v(out, len(game.order))
    for seat in game.order:
        v(out, seat)
    v(out, game.oidx)
    v(out, game.passes)
    v(out, game.turned + 1)
    v(out, game.transfer_shown)
    v(out, game.discard)
    v(out, game.picked)
    v(out, len(game.loser_seats))
    for seat in game.loser_seats:
        v(out, seat)
    return bytes(out)


def public_state_hash(game: GameState) -> str:
    """SHA-256 of :func:`encode_public_state`, in hex."""
    return hashlib.sha256(encode_public_state(game)).hexdigest()
