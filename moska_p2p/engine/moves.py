"""Moves and their one text form (RULES C6).

A :class:`Move` is a tuple ``(kind, cards)``: cheap to build, hash and compare on the
engine's hot path, and printable as the canonical notation. Moves the engine generates are
interned, so listing legal moves allocates almost nothing.
"""

from __future__ import annotations

from mypy_extensions import mypyc_attr

from ..cards import CARD_TEXT, CardError, parse_card

ATTACK, ATTACK_DECK, KILL, TAKE, PASS, EXCHANGE, SELF, DECK_KILL = range(8)
TRANSFER, TRANSFER_SHOW, BEG = 8, 9, 10

KIND_NAMES: tuple[str, ...] = (
    "attack",
    "attack deck",
    "kill",
    "take",
    "pass",
    "exchange",
    "self",
    "deck-kill",
    "transfer",
    "transfer show",
    "beg",
)
KIND_BY_NAME = {name: kind for kind, name in enumerate(KIND_NAMES)}


class MoveSyntaxError(ValueError):
    """A text that is not a move in the notation of RULES C6."""


# A plain Python class even where mypyc compiles the engine: a native class cannot extend
# tuple, and a move must stay a tuple.
@mypyc_attr(native_class=False)
class Move(tuple[int, tuple[int, ...]]):
    """One move: ``kind`` (an int constant of this module) and its ``cards`` (card codes).

    ``str(move)`` is the canonical notation: ``attack 3H 3S``, ``kill 3H 7H``, ``take``.
    """

    __slots__ = ()

    @property
    def kind(self) -> int:
        return self[0]

    @property
    def cards(self) -> tuple[int, ...]:
        return self[1]

    @property
    def kind_name(self) -> str:
        return KIND_NAMES[self[0]]

    def __str__(self) -> str:
        kind, cards = self
        if not cards:
            return KIND_NAMES[kind]
        return KIND_NAMES[kind] + " " + " ".join([CARD_TEXT[c] for c in cards])

    def __repr__(self) -> str:
        return f"Move({str(self)!r})"


def _new(kind: int, cards: tuple[int, ...]) -> Move:
    return tuple.__new__(Move, (kind, cards))


# Interned moves: every move with zero, one or two cards exists once.
_PLAIN = tuple(_new(kind, ()) for kind in range(len(KIND_NAMES)))
_SINGLE = {
    kind: tuple(_new(kind, (c,)) for c in range(52)) for kind in (ATTACK, TRANSFER, TRANSFER_SHOW)
}
_PAIRS = {
    kind: tuple(tuple(_new(kind, (a, b)) for b in range(52)) for a in range(52))
    for kind in (KILL, SELF, BEG)
}
_ATTACKS: dict[tuple[int, ...], Move] = {}
_ATTACK_CACHE_LIMIT = 200_000

TAKE_MOVE = _PLAIN[TAKE]
PASS_MOVE = _PLAIN[PASS]
EXCHANGE_MOVE = _PLAIN[EXCHANGE]
ATTACK_DECK_MOVE = _PLAIN[ATTACK_DECK]
DECK_KILL_MOVE = _PLAIN[DECK_KILL]
SINGLE_ATTACK = _SINGLE[ATTACK]
KILL_MOVES = _PAIRS[KILL]
SELF_MOVES = _PAIRS[SELF]
BEG_MOVES = _PAIRS[BEG]
TRANSFER_MOVES = _SINGLE[TRANSFER]
TRANSFER_SHOW_MOVES = _SINGLE[TRANSFER_SHOW]


def attack_move(cards: tuple[int, ...]) -> Move:
    """The ``attack`` move of ``cards``, which must already be sorted (canonical order)."""
    if len(cards) == 1:
        return SINGLE_ATTACK[cards[0]]
    move = _ATTACKS.get(cards)
    if move is None:
        if len(_ATTACKS) >= _ATTACK_CACHE_LIMIT:
            _ATTACKS.clear()
        move = _ATTACKS[cards] = _new(ATTACK, cards)
    return move


_BY_MASK: dict[int, Move] = {}


def new_attack(cards: tuple[int, ...]) -> Move:
    """An ``attack`` move of ``cards`` (already in canonical order), not interned: cheaper
    than a cache look-up for the many multi-card openings of a large hand."""
    return tuple.__new__(Move, (ATTACK, cards))


def attack_from_mask(mask: int) -> Move:
    """The ``attack`` move laying the cards of a bitmask."""
    move = _BY_MASK.get(mask)
    if move is None:
        cards = []
        rest = mask
        while rest:
            low = rest & -rest
            cards.append(low.bit_length() - 1)
            rest ^= low
        if len(_BY_MASK) >= _ATTACK_CACHE_LIMIT:
            _BY_MASK.clear()
        move = _BY_MASK[mask] = attack_move(tuple(cards))
    return move


def make_move(kind: int, cards: tuple[int, ...] = ()) -> Move:
    """The move of ``kind`` with ``cards``; attack cards are put in canonical order."""
    if kind == ATTACK:
        return attack_move(tuple(sorted(cards)))
    if not cards:
        return _PLAIN[kind]
    if kind in _SINGLE and len(cards) == 1:
        return _SINGLE[kind][cards[0]]
    if kind in _PAIRS and len(cards) == 2:
        return _PAIRS[kind][cards[0]][cards[1]]
    return _new(kind, cards)


_CARD_COUNT = {
    ATTACK: None,
    ATTACK_DECK: 0,
    KILL: 2,
    TAKE: 0,
    PASS: 0,
    EXCHANGE: 0,
    SELF: 2,
    DECK_KILL: 0,
    TRANSFER: 1,
    TRANSFER_SHOW: 1,
    BEG: 2,
}
_USAGE = {
    ATTACK: "attack CARD [CARD ...]",
    KILL: "kill ATTACK_CARD KILLING_CARD",
    SELF: "self CARD KILLING_CARD",
    BEG: "beg ATTACK_CARD NEW_KILLING_CARD",
    TRANSFER: "transfer CARD",
    TRANSFER_SHOW: "transfer show CARD",
}


def parse_move(text: str) -> Move:
    """Parse a move in RULES C6 notation, case-insensitively; attack cards in any order."""
    words = text.replace(",", " ").split()
    if not words:
        raise MoveSyntaxError("empty move: type a move such as 'kill 3H 7H', 'take' or 'pass'")
    head = words[0].lower()
    rest = words[1:]
    if head == "attack" and rest and rest[0].lower() == "deck":
        kind, rest = ATTACK_DECK, rest[1:]
    elif head == "transfer" and rest and rest[0].lower() == "show":
        kind, rest = TRANSFER_SHOW, rest[1:]
    elif head in ("deck-kill", "deckkill"):
        kind = DECK_KILL
    elif head in KIND_BY_NAME and head not in ("attack deck", "transfer show"):
        kind = KIND_BY_NAME[head]
    else:
        names = ", ".join(KIND_NAMES)
        raise MoveSyntaxError(
            f'"{text.strip()}" is not a move: unknown word "{words[0]}" ({names})'
        )
    try:
        cards = tuple(parse_card(word) for word in rest)
    except CardError as error:
        raise MoveSyntaxError(f'"{text.strip()}" is not a move: {error}') from None
    want = _CARD_COUNT[kind]
    if want is None:
        if not cards:
            raise MoveSyntaxError(f'"{text.strip()}" names no card: write {_USAGE[kind]}')
        if len(set(cards)) != len(cards):
            raise MoveSyntaxError(f'"{text.strip()}" names a card twice')
    elif len(cards) != want:
        usage = _USAGE.get(kind, KIND_NAMES[kind])
        raise MoveSyntaxError(
            f'"{text.strip()}" is not a move: {KIND_NAMES[kind]} takes {want} card'
            f"{'s' if want != 1 else ''} ({usage})"
        )
    elif want == 2 and cards[0] == cards[1]:
        raise MoveSyntaxError(f'"{text.strip()}" names the same card twice')
    return make_move(kind, cards)
