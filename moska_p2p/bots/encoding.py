"""Numbers for learning bots: a stable integer id for every move, and a fixed-size vector for
every view.

Move ids are part of the public interface and never change: a policy trained today must
still index the same moves after any release. The formula (card codes are ``rank * 4 +
suit``, ``2C`` = 0, ``2D`` = 1 ... ``AS`` = 51, RULES C1)::

    0                      attack deck
    1                      take
    2                      pass
    3                      exchange
    4                      deck-kill
    5 + c                  attack C               (a single card)
    57 + a * 52 + k        kill A K
    2761 + a * 52 + k      self A K
    5465 + a * 52 + k      beg A K
    8169 + c               transfer C
    8221 + c               transfer show C
    8273 + mask            attack of two or more cards, mask = sum of 1 << c over its cards

Every id below :data:`DENSE_MOVE_IDS` (8273) names at most one move, so a fixed-size policy
head of 8273 outputs covers every move except multi-card attacks; those are sparse (one per
subset of the pack) and their ids are below 2**53, exact in a JSON number or a JavaScript
double. :func:`move_from_id` refuses ids that name no move (a pair with the same card twice, a
"multi-card" mask of one card).

The view encoding (:func:`encode_view`) is a list of :data:`VIEW_SIZE` floats in ``[0, 1]``,
laid out as :data:`VIEW_LAYOUT` says; seats are counted relative to the viewing seat (0 is
the seat itself, 1 its left neighbour...), so one network serves every seat. It holds only
what the seat may see. Unlike move ids, the layout may grow in a later release; it then
changes :data:`VIEW_ENCODING_VERSION`.
"""

from __future__ import annotations

from ..cards import NUM_CARDS
from ..engine import Move, View, make_move, parse_move
from ..engine.moves import (
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
    attack_from_mask,
)

__all__ = [
    "DENSE_MOVE_IDS",
    "MULTI_ATTACK_BASE",
    "VIEW_DECISIONS",
    "VIEW_ENCODING_VERSION",
    "VIEW_LAYOUT",
    "VIEW_SIZE",
    "encode_view",
    "move_from_id",
    "move_id",
]

# --------------------------------------------------------------------------------- move ids

_PLAIN_KINDS = (ATTACK_DECK, TAKE, PASS, EXCHANGE, DECK_KILL)
_PLAIN_ID = {kind: i for i, kind in enumerate(_PLAIN_KINDS)}
_PAIR = NUM_CARDS * NUM_CARDS

SINGLE_ATTACK_BASE = len(_PLAIN_KINDS)  # 5
KILL_BASE = SINGLE_ATTACK_BASE + NUM_CARDS  # 57
SELF_BASE = KILL_BASE + _PAIR  # 2761
BEG_BASE = SELF_BASE + _PAIR  # 5465
TRANSFER_BASE = BEG_BASE + _PAIR  # 8169
TRANSFER_SHOW_BASE = TRANSFER_BASE + NUM_CARDS  # 8221
MULTI_ATTACK_BASE = TRANSFER_SHOW_BASE + NUM_CARDS  # 8273
DENSE_MOVE_IDS = MULTI_ATTACK_BASE
MAX_MOVE_ID = MULTI_ATTACK_BASE + (1 << NUM_CARDS) - 1

_PAIR_BASE = {KILL: KILL_BASE, SELF: SELF_BASE, BEG: BEG_BASE}
_SINGLE_BASE = {TRANSFER: TRANSFER_BASE, TRANSFER_SHOW: TRANSFER_SHOW_BASE}


def move_id(move: Move | str) -> int:
    """The stable integer id of a move (or of its text), by the formula of the module
    docstring."""
    if isinstance(move, str):
        move = parse_move(move)
    kind, cards = move
    if kind in _PLAIN_ID and not cards:
        return _PLAIN_ID[kind]
    if kind == ATTACK and cards:
        if len(cards) == 1:
            return SINGLE_ATTACK_BASE + _card(cards[0])
        mask = 0
        for card in cards:
            mask |= 1 << _card(card)
        if mask.bit_count() != len(cards):
            raise ValueError(f"{move!r} names a card twice")
        return MULTI_ATTACK_BASE + mask
    if kind in _PAIR_BASE and len(cards) == 2 and cards[0] != cards[1]:
        return _PAIR_BASE[kind] + _card(cards[0]) * NUM_CARDS + _card(cards[1])
    if kind in _SINGLE_BASE and len(cards) == 1:
        return _SINGLE_BASE[kind] + _card(cards[0])
    raise ValueError(f"{move!r} is not a well-formed move")


def _card(card: int) -> int:
    if not 0 <= card < NUM_CARDS:
        raise ValueError(f"{card} is not a card code (0..51)")
    return card


def move_from_id(ident: int) -> Move:
    """The move of an id (the inverse of :func:`move_id`); ``ValueError`` for an id that
    names no move."""
    if isinstance(ident, bool) or not isinstance(ident, int):
        raise ValueError(f"a move id is an int, not {ident!r}")
    if ident < 0 or ident > MAX_MOVE_ID:
        raise ValueError(f"move id {ident} is out of range (0..{MAX_MOVE_ID})")
    if ident < SINGLE_ATTACK_BASE:
        return make_move(_PLAIN_KINDS[ident])
    if ident < KILL_BASE:
        return make_move(ATTACK, (ident - SINGLE_ATTACK_BASE,))
    if ident < TRANSFER_BASE:
        for kind, base in ((BEG, BEG_BASE), (SELF, SELF_BASE), (KILL, KILL_BASE)):
            if ident >= base:
                a, k = divmod(ident - base, NUM_CARDS)
                if a == k:
                    raise ValueError(f"move id {ident} names the same card twice")
                return make_move(kind, (a, k))
    if ident < TRANSFER_SHOW_BASE:
        return make_move(TRANSFER, (ident - TRANSFER_BASE,))
    if ident < MULTI_ATTACK_BASE:
        return make_move(TRANSFER_SHOW, (ident - TRANSFER_SHOW_BASE,))
    mask = ident - MULTI_ATTACK_BASE
    if mask.bit_count() < 2:
        raise ValueError(f"move id {ident} is a multi-card attack of fewer than two cards")
    return attack_from_mask(mask)


# ---------------------------------------------------------------------------- view encoding

VIEW_ENCODING_VERSION = 1
MAX_SEATS = 6

# Every decision name a view can carry (moska_p2p.engine.DECISIONS without repeats).
VIEW_DECISIONS: tuple[str, ...] = (
    "open",
    "defend",
    "throw-in",
    "give",
    "exchange-or-pass",
    "twos",
    "waiting",
    "over",
)

# (name, size) in order. Card blocks are indexed by card code; seat blocks by seat relative
# to the viewing seat.
VIEW_LAYOUT: tuple[tuple[str, int], ...] = (
    ("hand", NUM_CARDS),  # this seat's own cards
    ("live", NUM_CARDS),  # attack cards on the table not yet killed
    ("killed", NUM_CARDS),  # attack cards on the table already killed
    ("killers", NUM_CARDS),  # the cards that killed them
    ("discarded", NUM_CARDS),  # out of play (every one was seen face up)
    # Cards publicly known to be in the hand of the seat 1, 2 .. 5 places to the left.
    ("known_left_1", NUM_CARDS),
    ("known_left_2", NUM_CARDS),
    ("known_left_3", NUM_CARDS),
    ("known_left_4", NUM_CARDS),
    ("known_left_5", NUM_CARDS),
    ("trump_card", NUM_CARDS),  # the trump indicator, while it is known
    ("trump_suit", 4),  # one-hot C D H S; all zero before the trump is known
    ("stock_size", 1),  # cards in the stock / 52
    ("hand_sizes", MAX_SEATS),  # per relative seat, cards / 52; 0 for seats not at the table
    ("present", MAX_SEATS),  # per relative seat: 1 when that seat is at the table
    ("out", MAX_SEATS),  # per relative seat: 1 when it has left the game
    ("decision", len(VIEW_DECISIONS)),  # one-hot, in VIEW_DECISIONS order
    ("to_act", MAX_SEATS),  # one-hot relative seat to act (index 0: this seat)
    ("attacker", MAX_SEATS),  # one-hot relative principal attacker (index 0: this seat)
    ("defender", MAX_SEATS),  # one-hot relative defender (index 0: this seat)
    ("room", 1),  # attack cards the bout's limit still allows, / 6, capped at 1
)

VIEW_OFFSETS: dict[str, int] = {}
_offset = 0
for _name, _size in VIEW_LAYOUT:
    VIEW_OFFSETS[_name] = _offset
    _offset += _size
VIEW_SIZE = _offset  # 622
del _offset, _name, _size

_O = VIEW_OFFSETS
_DECISION_INDEX = {name: i for i, name in enumerate(VIEW_DECISIONS)}


def _set_cards(out: list[float], offset: int, mask: int) -> None:
    while mask:
        low = mask & -mask
        out[offset + low.bit_length() - 1] = 1.0
        mask ^= low


def encode_view(view: View) -> list[float]:
    """A fixed-size vector of the view, laid out as :data:`VIEW_LAYOUT` (values in [0, 1])."""
    out = [0.0] * VIEW_SIZE
    seat = view.seat
    n = view.players
    _set_cards(out, _O["hand"], view.hand_mask)
    live, killed, killers = _O["live"], _O["killed"], _O["killers"]
    for attack, killer in view.table_codes:
        if killer < 0:
            out[live + attack] = 1.0
        else:
            out[killed + attack] = 1.0
            out[killers + killer] = 1.0
    _set_cards(out, _O["discarded"], view.discard_mask)
    known = _O["known_left_1"]
    for step in range(1, n):
        _set_cards(out, known + (step - 1) * NUM_CARDS, view.known_mask[(seat + step) % n])
    if view.trump_card_code >= 0:
        out[_O["trump_card"] + view.trump_card_code] = 1.0
    if view.trump_suit >= 0:
        out[_O["trump_suit"] + view.trump_suit] = 1.0
    out[_O["stock_size"]] = min(view.stock_size, NUM_CARDS) / NUM_CARDS
    sizes, present, gone = _O["hand_sizes"], _O["present"], _O["out"]
    for step in range(n):
        other = (seat + step) % n
        out[sizes + step] = min(view.hand_sizes[other], NUM_CARDS) / NUM_CARDS
        out[present + step] = 1.0
        if view.out[other]:
            out[gone + step] = 1.0
    decision = _DECISION_INDEX.get(view.decision)
    if decision is not None:
        out[_O["decision"] + decision] = 1.0
    for name, who in (
        ("to_act", view.to_act),
        ("attacker", view.attacker),
        ("defender", view.defender),
    ):
        if who is not None and 0 <= who < n:
            out[_O[name] + (who - seat) % n] = 1.0
    out[_O["room"]] = min(max(view.room, 0), MAX_SEATS) / MAX_SEATS
    return out
