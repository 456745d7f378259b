"""Durak's lowest-trump claims (RULES D3), checked by selective disclosure.

In the claim rounds every seat either shows the trump of the round's rank or says it has none.
A card shown is checked on the spot (its key opens it). A "none" cannot be checked then without
showing the whole hand, so it is written down as a :class:`Denial`, with the positions the seat
held at that moment, and checked later from what the rules make public anyway:

- whenever a card is shown from one of those positions (a move, a disclosure) and it is the
  denied card, the seat lied: a verdict names it, with its claim and the showing frame;
- at the end of the game, a denial that nothing has settled (the card was never seen) is
  settled by the seat disclosing the keys of the positions it still holds from that list, and
  of those only (PROTOCOL.md, "Selective disclosure"). Cards never shown otherwise stay private.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Denial:
    rank: int
    seat: int
    card: int
    positions: frozenset[int]
    frame: bytes  # the signed claim that said "none"


class ClaimBook:
    """Every denial of a game and every card seen in public since."""

    def __init__(self) -> None:
        self.denials: list[Denial] = []
        self.seen: set[int] = set()

    def deny(self, denial: Denial) -> None:
        self.denials.append(denial)

    def shown(self, pos: int, card: int) -> Denial | None:
        """A card became public at ``pos``: the denial it refutes, if any."""
        self.seen.add(card)
        for denial in self.denials:
            if denial.card == card and pos in denial.positions:
                return denial
        return None

    def due(self, still_held: dict[int, set[int]]) -> dict[int, set[int]]:
        """Seat -> positions it must disclose at the end: for every denial whose card was
        never seen, the denied positions the seat still holds face down (``still_held``)."""
        out: dict[int, set[int]] = {}
        for denial in self.denials:
            if denial.card in self.seen:
                continue
            owed = denial.positions & still_held.get(denial.seat, set())
            if owed:
                out.setdefault(denial.seat, set()).update(owed)
        return out
