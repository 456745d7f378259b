"""The engine's small-int constants: phases (RULES C5), families, waits and limit modes.

Ints rather than enums, because the hot path compares them on every move.
"""

from __future__ import annotations

from ..cards import RANK_MASKS, SPADES, make_card
from .options import DURAK, KAAVI, MOSKA, MUSTAMAIJA

# Phases: which kind of decision the seat to act faces (RULES C5).
OPEN, DEFEND, THROW_IN, GIVE, FORCED_KILL, EXCHANGE_ROUND, TWOS, WAITING, OVER = range(9)
DECISIONS = (
    "open",
    "defend",
    "throw-in",
    "give",
    "defend",
    "exchange-or-pass",
    "twos",
    "waiting",
    "over",
)

# Families, as small ints for the hot path.
F_MOSKA, F_DURAK, F_MUSTAMAIJA, F_KAAVI = 0, 1, 2, 3
FAMILY_CODES = {MOSKA: F_MOSKA, DURAK: F_DURAK, MUSTAMAIJA: F_MUSTAMAIJA, KAAVI: F_KAAVI}

# What a waiting game waits for.
W_DEAL_TRUMP, W_ATTACK_DECK, W_DECK_KILL, W_MM_TRUMP, W_KAAVI_TRUMP, W_LOWEST_TRUMP = range(6)

L_SIX_OR_HAND, L_HAND, L_NONE, L_MUSTAMAIJA = range(4)
LIMIT_MODES = {"six-or-hand": L_SIX_OR_HAND, "hand": L_HAND, "none": L_NONE}
UNLIMITED = 1 << 20

QUEEN_OF_SPADES = make_card(10, SPADES)
TWOS_MASK = RANK_MASKS[0]
