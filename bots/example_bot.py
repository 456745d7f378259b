"""An example bot: sheds its lowest cards and keeps its trumps."""

from moska_p2p.bots.api import BaseBot


class LowestCardBot(BaseBot):
    name = "lowest"

    def choose(self, view, legal_moves):
        trump = view.trump_suit  # 0..3 for C D H S, -1 before the trump is turned

        def cost(move):
            if move.kind_name == "exchange":
                return -1  # a free upgrade
            if move.kind_name in ("take", "attack deck", "deck-kill"):
                return 100  # last resorts
            if move.kind_name == "pass":
                return 50 if view.decision in ("throw-in", "give") else 100
            # Card codes are rank * 4 + suit (2C = 0 ... AS = 51): prefer low ranks, and make
            # a trump cost as much as an ace and a half.
            cards = move.cards
            return sum((c >> 2) + (20 if c & 3 == trump else 0) for c in cards) / len(cards)

        return min(legal_moves, key=cost)
