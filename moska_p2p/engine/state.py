"""The fields of one game's state, and the seat arithmetic every part of the engine uses.

:class:`GameState` is the base of :class:`~.game.Game`: it declares every slot with its type
(the layers above -- :mod:`.deal`, :mod:`.flow`, :mod:`.movegen`, :mod:`.play` -- add only
methods). Cards are tracked by deck position (DESIGN.md, "The engine"): ``face[pos]`` is
the card at a position or ``-1`` while this engine does not know it; a hand is a bitmask of
its known cards plus ``hidden[seat]``, the positions of its unknown ones.
"""

from __future__ import annotations

from typing import Self

from .constants import DECISIONS, F_MUSTAMAIJA, FAMILY_CODES, L_MUSTAMAIJA, LIMIT_MODES
from .moves import Move
from .options import Rules

# Every field's name, for copy(); a module constant because a class compiled by mypyc has
# no __slots__ to read back.
STATE_FIELDS: tuple[str, ...] = (
    "_awaiting",
    "_beat",
    "_begged",
    "_exch_pos",
    "_first_cap",
    "_hs",
    "_limit_mode",
    "_low_trump_rank",
    "_own_twos",
    "_pending_public",
    "_twos_layers",
    "attacker",
    "bout_count",
    "bout_limit",
    "bout_number",
    "dealer",
    "defender",
    "discard",
    "face",
    "family",
    "first_game",
    "hands",
    "hidden",
    "hidden_owner",
    "history",
    "indicator",
    "live",
    "loser_seats",
    "n",
    "oidx",
    "order",
    "out",
    "passes",
    "phase",
    "picked",
    "pos_of",
    "public",
    "ranks_all",
    "ranks_att",
    "reveal_log",
    "rules",
    "shown",
    "stock",
    "tab_a",
    "tab_k",
    "to_act_seat",
    "transfer_shown",
    "trump",
    "turned",
)


class GameState:
    """Every field of a game (see :class:`~.game.Game` for their meaning in play)."""

    __slots__ = STATE_FIELDS

    rules: Rules
    family: int  # F_MOSKA, F_DURAK, F_MUSTAMAIJA or F_KAAVI
    n: int
    dealer: int
    first_game: bool  # Durak D3: only the first game of a session opens on the lowest trump
    _hs: int  # the hand size refilled to (M8, D7, MM5)
    _limit_mode: int  # L_SIX_OR_HAND, L_HAND, L_NONE or L_MUSTAMAIJA (M6, D5, MM3)
    _first_cap: int  # D5 option first_bout_limit: 5 or 6 cards in the first bout
    _low_trump_rank: int  # the rank of the low trump exchanged for the indicator (M4, D8)
    face: list[int]  # the card at each deck position, -1 while unknown
    pos_of: list[int]  # the position of each card, -1 while unknown
    public: list[bool]  # positions turned face up for everyone
    hands: list[int]  # known cards of each hand (mask)
    hidden: list[list[int]]  # positions of each hand's unknown cards
    hidden_owner: dict[int, int]  # hidden position -> seat
    shown: list[int]  # cards of each hand everyone knows (picked up, exchanged, shown)
    out: list[bool]  # seats out of the game (M13, D10, MM7)
    stock: list[int]  # stock positions, bottom first (pop() draws the top)
    tab_a: list[int]  # the bout's attack cards, in the order laid
    tab_k: list[int]  # their killing cards, -1 while live
    _begged: list[bool]  # K4: per table pair, its killer already exchanged
    _own_twos: list[bool]  # K5: per table pair, the dealer's own two
    _twos_layers: list[int]  # K2: seats that laid twos, in order (they refill in it)
    _pending_public: list[int]  # face-up positions whose faces are unknown (M23)
    live: int  # live attack cards on the table (mask)
    discard: int  # cards out of play (mask)
    picked: int  # cards ever picked up (mask; D8)
    trump: int  # the trump suit, -1 before it is turned (MM2, K1)
    indicator: int  # the trump indicator card, -1 before it is known
    _exch_pos: int  # the indicator's position while it may be exchanged (M4, D8), else -1
    _beat: tuple[int, ...]  # _beat[a]: the cards that beat a (C3, MM4)
    turned: int  # M22: the card turned by deck-kill that must kill, else -1
    transfer_shown: int  # D11: seats that transferred by showing this bout (mask)
    bout_count: int  # attack cards counted against the bout's limit
    bout_limit: int  # the bout's limit (M6, D5), UNLIMITED where none applies
    bout_number: int
    ranks_all: int  # ranks of every card played this bout (13-bit set)
    ranks_att: int  # ranks of the attack cards only (throw_in_ranks=attack-only)
    order: list[int]  # the seats asked in the current round (C7, M4, K1)
    oidx: int  # the index in ``order`` of the seat asked now
    passes: int  # passes in a row in a giving round (C7, M12, D6)
    attacker: int
    defender: int
    phase: int  # OPEN, DEFEND, ... (RULES C5)
    to_act_seat: int  # -1 when nobody may act
    history: list[tuple[int, Move]]
    loser_seats: tuple[int, ...]
    _awaiting: tuple[int, int] | None  # (W_..., position) while waiting for a face
    reveal_log: list[tuple[int, int]] | None  # (position, seat or -1) due, if tracked

    @property
    def decision(self) -> str:
        """The kind of decision the seat to act faces (RULES C5)."""
        return DECISIONS[self.phase]

    def _set_table(self, rules: Rules, players: int, dealer: int, first_game: bool) -> None:
        """The fields fixed for the whole game, and the rules' values the hot path reads."""
        self.rules = rules
        self.family = FAMILY_CODES[rules.family]
        self.n = players
        self.dealer = dealer
        self.first_game = first_game
        self._hs = rules.hand_size
        self._limit_mode = L_MUSTAMAIJA if self.family == F_MUSTAMAIJA else LIMIT_MODES[rules.limit]
        self._first_cap = 5 if rules.first_bout_limit == "5" else 6
        self._low_trump_rank = rules.lowest_rank

    def _next_in(self, seat: int) -> int:
        """The next seat clockwise after ``seat`` still in the game (M13, D10)."""
        n = self.n
        out = self.out
        s = (seat + 1) % n
        while out[s] and s != seat:
            s = (s + 1) % n
        return s

    def _defender_for(self, attacker: int) -> int:
        """Who defends against ``attacker``: the next seat in, never a partner (D12)."""
        d = self._next_in(attacker)
        if self.rules.teams:
            # D12: never against a partner; the attack goes to the next opponent.
            while d % 2 == attacker % 2 and d != attacker:
                d = self._next_in(d)
        return d

    def _size(self, seat: int) -> int:
        """How many cards ``seat`` holds, known or not."""
        return self.hands[seat].bit_count() + len(self.hidden[seat])

    def copy(self) -> Self:
        """An independent copy (for search): lists are copied, immutable values shared. Here,
        below every layer, so that :mod:`.knowledge` copies a game without importing it."""
        cls = type(self)
        new = cls.__new__(cls)
        for name in STATE_FIELDS:
            value = getattr(self, name)
            if type(value) is list:
                value = list(value)
            setattr(new, name, value)
        new.hidden = [list(h) for h in self.hidden]
        new.hidden_owner = dict(self.hidden_owner)
        if self.reveal_log is not None:
            new.reveal_log = list(self.reveal_log)
        return new
