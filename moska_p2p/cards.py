"""Cards as small integers, and their text form (RULES C1).

A card is an ``int`` code ``rank * 4 + suit`` with ranks ``0..12`` for ``2..A`` and suits
``0..3`` for ``C D H S``. The code order is therefore rank first, then suit in ``C D H S``
order: exactly the canonical order of cards in a move (RULES C6), so sorting codes sorts
cards for printing. Hands and card sets are bitmasks over these codes (bit ``c`` set when
card ``c`` is present): membership, union and "which of my cards beat this one" are single
integer operations on the engine's hot path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")
SUITS = ("C", "D", "H", "S")
SUIT_SYMBOLS = ("♣", "♦", "♥", "♠")

CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3
NUM_CARDS = 52
FULL_PACK = (1 << NUM_CARDS) - 1


class CardError(ValueError):
    """A text that is not a card (RULES C1)."""


def make_card(rank: int, suit: int) -> int:
    """The code of the card of ``rank`` (0 for a two .. 12 for an ace) and ``suit``."""
    return rank * 4 + suit


def rank_of(card: int) -> int:
    return card >> 2


def suit_of(card: int) -> int:
    return card & 3


CARD_TEXT: tuple[str, ...] = tuple(RANKS[c >> 2] + SUITS[c & 3] for c in range(NUM_CARDS))

_RANK_ALIASES = {r: i for i, r in enumerate(RANKS)} | {"T": 8}
_SUIT_ALIASES = {s: i for i, s in enumerate(SUITS)} | {sym: i for i, sym in enumerate(SUIT_SYMBOLS)}
# Also accept the text-presentation variants of the suit symbols (♤ ♡ ♢ ♧) people paste.
_SUIT_ALIASES |= {"♧": CLUBS, "♢": DIAMONDS, "♡": HEARTS, "♤": SPADES}


def parse_card(text: str) -> int:
    """Parse ``10H``, ``th``, ``Q♠`` ... into a card code (RULES C1).

    Raises :class:`CardError` saying what was wrong, e.g. ``"11X" is not a card: ...``.
    """
    raw = text.strip()
    upper = raw.upper()
    if len(upper) < 2:
        raise CardError(f'"{text}" is not a card: write a rank then a suit, like 10H or QS')
    rank_text, suit_text = upper[:-1], upper[-1]
    suit = _SUIT_ALIASES.get(suit_text)
    rank = _RANK_ALIASES.get(rank_text, -1)
    if suit is None and rank < 0:
        raise CardError(
            f'"{text}" is not a card: unknown rank "{raw[:-1]}" and suit "{raw[-1]}" '
            f"(ranks 2-10 J Q K A, suits C D H S)"
        )
    if suit is None:
        raise CardError(f'"{text}" is not a card: unknown suit "{raw[-1]}" (suits are C D H S)')
    if rank < 0:
        raise CardError(
            f'"{text}" is not a card: unknown rank "{raw[:-1]}" (ranks are 2-10, J, Q, K, A)'
        )
    return rank * 4 + suit


def card_text(card: int) -> str:
    """The canonical text of a card code: ``10H``, ``QS``, ``2C``."""
    return CARD_TEXT[card]


def parse_cards(text: str | Iterable[str]) -> list[int]:
    """Parse a space- or comma-separated list of cards (or an iterable of card texts)."""
    items = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return [parse_card(item) for item in items]


def mask_of(cards: Iterable[int]) -> int:
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def cards_in(mask: int) -> Iterator[int]:
    """The card codes of a bitmask, lowest (canonical order) first."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def cards_list(mask: int) -> list[int]:
    return list(cards_in(mask))


def pack_cards(lowest_rank: int = 0) -> list[int]:
    """Every card of a pack whose lowest rank is ``lowest_rank`` (0: 52 cards, 4: 36 cards)."""
    return list(range(lowest_rank * 4, NUM_CARDS))


def pack_mask(lowest_rank: int = 0) -> int:
    return mask_of(pack_cards(lowest_rank))


RANK_MASKS: tuple[int, ...] = tuple(0xF << (4 * r) for r in range(13))
SUIT_MASKS: tuple[int, ...] = tuple(sum(1 << (r * 4 + s) for r in range(13)) for s in range(4))
# Cards of the same suit and a higher rank than card c (RULES C3, first half).
HIGHER_IN_SUIT: tuple[int, ...] = tuple(
    SUIT_MASKS[c & 3] & ~((1 << (c + 1)) - 1) for c in range(NUM_CARDS)
)


def format_cards(cards: Iterable[int]) -> str:
    return " ".join(CARD_TEXT[c] for c in sorted(cards))
