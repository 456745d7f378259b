"""The record of one game's state, and the seat arithmetic every rule uses.

:class:`GameState` holds every field of a game, with its type and meaning, and nothing
else: the rules are modules of functions over it -- :mod:`.deal` (where cards come from),
:mod:`.flow` (who acts next, how a bout ends), :mod:`.movegen` (legal moves), :mod:`.play`
(a move's checks and effect) -- so a rule is found where it acts and a field in one place.
Its fields are public to those modules and to :mod:`.knowledge` and :mod:`.encoding`; outside
the engine a game is a :class:`~.game.Game`, which keeps its state private and answers
through read-only properties and verbs.

Cards are tracked by deck position (DESIGN.md, "The engine"): ``face[pos]`` is the card at
a position or ``-1`` while this engine does not know it; a hand is a bitmask of its known
cards plus ``hidden[seat]``, the positions of its unknown ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Self

from ..cards import NUM_CARDS
from .constants import (
    DECISIONS,
    F_MUSTAMAIJA,
    FAMILY_CODES,
    L_MUSTAMAIJA,
    LIMIT_MODES,
    UNLIMITED,
    WAITING,
)
from .moves import Move
from .options import Rules

# Every field's name, for copy(); a module constant because a class compiled by mypyc has
# no __slots__ to read back.
STATE_FIELDS: tuple[str, ...] = (
    "attacker",
    "beaters",
    "begged",
    "bout_count",
    "bout_limit",
    "bout_number",
    "dealer",
    "defender",
    "discard",
    "exchange_pos",
    "face",
    "family",
    "first_cap",
    "first_game",
    "hands",
    "hidden",
    "hidden_owner",
    "history",
    "indicator",
    "limit_mode",
    "live",
    "loser_seats",
    "low_trump_rank",
    "n",
    "oidx",
    "order",
    "out",
    "own_twos",
    "passes",
    "pending_public",
    "phase",
    "picked",
    "pos_of",
    "public",
    "ranks_all",
    "ranks_att",
    "refill_to",
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
    "twos_layers",
    "waiting_for",
)


class GameState:
    """Every field of a game, each with its meaning (the rules modules read and write them)."""

    __slots__ = STATE_FIELDS

    rules: Rules
    family: int  # F_MOSKA, F_DURAK, F_MUSTAMAIJA or F_KAAVI
    n: int
    dealer: int
    first_game: bool  # Durak D3: only the first game of a session opens on the lowest trump
    refill_to: int  # the hand size refilled to (M8, D7, MM5)
    limit_mode: int  # L_SIX_OR_HAND, L_HAND, L_NONE or L_MUSTAMAIJA (M6, D5, MM3)
    first_cap: int  # D5 option first_bout_limit: 5 or 6 cards in the first bout
    low_trump_rank: int  # the rank of the low trump exchanged for the indicator (M4, D8)
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
    begged: list[bool]  # K4: per table pair, its killer already exchanged
    own_twos: list[bool]  # K5: per table pair, the dealer's own two
    twos_layers: list[int]  # K2: seats that laid twos, in order (they refill in it)
    pending_public: list[int]  # face-up positions whose faces are unknown (M23)
    live: int  # live attack cards on the table (mask)
    discard: int  # cards out of play (mask)
    picked: int  # cards ever picked up (mask; D8)
    trump: int  # the trump suit, -1 before it is turned (MM2, K1)
    indicator: int  # the trump indicator card, -1 before it is known
    exchange_pos: int  # the indicator's position while it may be exchanged (M4, D8), else -1
    beaters: tuple[int, ...]  # beaters[a]: the cards that beat a (C3, MM4)
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
    waiting_for: tuple[int, int] | None  # (W_..., position) while waiting for a face
    reveal_log: list[tuple[int, int]] | None  # (position, seat or -1) due, if tracked

    @property
    def decision(self) -> str:
        """The kind of decision the seat to act faces (RULES C5)."""
        return DECISIONS[self.phase]

    def set_table(self, rules: Rules, players: int, dealer: int, first_game: bool) -> None:
        """The fields fixed for the whole game, and the rules' values the hot path reads."""
        self.rules = rules
        self.family = FAMILY_CODES[rules.family]
        self.n = players
        self.dealer = dealer
        self.first_game = first_game
        self.refill_to = rules.hand_size
        self.limit_mode = L_MUSTAMAIJA if self.family == F_MUSTAMAIJA else LIMIT_MODES[rules.limit]
        self.first_cap = 5 if rules.first_bout_limit == "5" else 6
        self.low_trump_rank = rules.lowest_rank

    def next_in(self, seat: int) -> int:
        """The next seat clockwise after ``seat`` still in the game (M13, D10)."""
        n = self.n
        out = self.out
        s = (seat + 1) % n
        while out[s] and s != seat:
            s = (s + 1) % n
        return s

    def defender_for(self, attacker: int) -> int:
        """Who defends against ``attacker``: the next seat in, never a partner (D12)."""
        d = self.next_in(attacker)
        if self.rules.teams:
            # D12: never against a partner; the attack goes to the next opponent.
            while d % 2 == attacker % 2 and d != attacker:
                d = self.next_in(d)
        return d

    def hand_size(self, seat: int) -> int:
        """How many cards ``seat`` holds, known or not."""
        return self.hands[seat].bit_count() + len(self.hidden[seat])

    def copy(self) -> Self:
        """An independent copy (for search): lists are copied, immutable values shared."""
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


def new_state(
    rules: Rules,
    players: int,
    faces: Sequence[int] | None,
    dealer: int,
    first_game: bool,
    track_reveals: bool,
) -> GameState:
    """The state of a game about to be dealt: ``faces`` the deck top first (RULES C4), or
    ``None`` for a game whose faces are all hidden; every hand empty, nobody to act."""
    g = GameState()
    g.set_table(rules, players, dealer, first_game)
    size = rules.pack_size
    g.face = list(faces) if faces is not None else [-1] * size
    g.pos_of = [-1] * NUM_CARDS
    for pos, card in enumerate(g.face):
        if card >= 0:
            g.pos_of[card] = pos
    g.public = [False] * size
    g.hands = [0] * players
    g.hidden = [[] for _ in range(players)]
    g.hidden_owner = {}
    g.shown = [0] * players
    g.out = [False] * players
    g.tab_a = []
    g.tab_k = []
    g.begged = []
    g.own_twos = []
    g.twos_layers = []
    g.pending_public = []
    g.live = 0
    g.discard = 0
    g.picked = 0
    g.trump = -1
    g.indicator = -1
    g.exchange_pos = -1
    g.beaters = ()
    g.turned = -1
    g.transfer_shown = 0
    g.bout_count = 0
    g.bout_limit = UNLIMITED
    g.bout_number = 0
    g.ranks_all = 0
    g.ranks_att = 0
    g.order = []
    g.oidx = 0
    g.passes = 0
    g.attacker = (dealer + 1) % players
    g.defender = (dealer + 2) % players
    g.phase = WAITING
    g.to_act_seat = -1
    g.history = []
    g.loser_seats = ()
    g.waiting_for = None
    g.reveal_log = [] if track_reveals else None
    return g
