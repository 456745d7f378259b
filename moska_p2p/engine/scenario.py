"""Build stacked decks (RULES C4) from the hands and stock a scenario needs.

Writing a 52-card deck by hand for every test or puzzle is error-prone; :func:`stack_deck`
places the named cards in the dealing order of C4 and fills every slot left open with the
remaining cards in canonical order, so a scenario names only what matters to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..cards import CARD_TEXT, parse_cards
from .options import KAAVI, MUSTAMAIJA, Rules, make_rules

Cards = str | Iterable[str]


def stack_deck(
    preset: str | Rules,
    players: int,
    hands: Mapping[int, Cards],
    *,
    dealer: int = 0,
    indicator: str | None = None,
    stock: Cards = (),
    stock_bottom: Cards = (),
) -> list[str]:
    """A whole deck, top first, that deals ``hands`` (seat -> cards) with ``dealer``.

    ``indicator`` is the trump indicator (not for Mustamaija and Kaavi, which turn their
    trump later: MM2, K1); ``stock`` lists the stock's top cards, top first, and
    ``stock_bottom`` the cards just above the indicator, in drawing order. Unnamed slots get
    the remaining cards, lowest first. A hand may name fewer cards than the hand size.
    """
    rules = make_rules(preset) if isinstance(preset, str) else preset
    hs = rules.hand_size
    pack = list(range(rules.lowest_rank * 4, 52))
    used: list[int] = []
    per_seat = {seat: parse_cards(cards) for seat, cards in hands.items()}
    for seat, cards in per_seat.items():
        if not 0 <= seat < players:
            raise ValueError(f"no seat {seat} at a table of {players}")
        if len(cards) > hs:
            raise ValueError(f"seat {seat} is given {len(cards)} cards; hands hold {hs}")
        used.extend(cards)
    top = parse_cards(stock)
    bottom = parse_cards(stock_bottom)
    ind = parse_cards([indicator]) if indicator else []
    if ind and rules.family in (MUSTAMAIJA, KAAVI):
        raise ValueError(f"{rules.preset} has no trump indicator at the deal")
    used += top + bottom + ind
    if len(set(used)) != len(used):
        raise ValueError("a card is named twice")
    unknown = [c for c in used if c not in pack]
    if unknown:
        raise ValueError(f"a named card is not in the {rules.preset} pack")
    spare = [c for c in pack if c not in set(used)]
    deck: list[int] = []
    taken = {seat: 0 for seat in range(players)}
    for i in range(players * hs):
        seat = (dealer + 1 + i) % players
        mine = per_seat.get(seat, [])
        if taken[seat] < len(mine):
            deck.append(mine[taken[seat]])
        else:
            deck.append(spare.pop(0))
        taken[seat] += 1
    has_indicator = rules.family not in (MUSTAMAIJA, KAAVI) and players * hs < len(pack)
    if has_indicator:
        deck.append(ind[0] if ind else spare.pop(0))
    elif ind:
        raise ValueError("with no stock the trump is the dealer's last card (D2)")
    middle = len(pack) - len(deck) - len(top) - len(bottom)
    if middle < 0:
        raise ValueError("the named stock cards do not fit in the stock")
    deck += top + spare[:middle] + bottom
    return [CARD_TEXT[c] for c in deck]
