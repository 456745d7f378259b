"""The rules engine: one :class:`Game` state machine for every preset of RULES.md.

Design (DESIGN.md, "The engine"):

* Cards are tracked by **deck position** ``0..N-1`` (the order of the shuffled deck, top
  first). ``face[pos]`` is the card at a position, or ``-1`` while this engine does not know
  it. A full-information game (the arena) knows every face; an engine on a peer knows its own
  hand and the public cards, and learns other faces through :meth:`Game.reveal`.
* Hands are bitmasks of the *known* cards plus a list of positions whose faces are unknown,
  so the full-information game runs entirely on integer operations (the fast path).
* Every rule that must look at a hidden face (the trump indicator, ``attack deck``,
  ``deck-kill``, Mustamaija's trump turning, Kaavi's trump, Durak's lowest trump) stops the
  game in a *waiting* state until the face is revealed; with every face known it resumes at
  once. Which seat acts, which kind of decision it faces and every limit are computed from
  public information only (RULES C5).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations
from math import comb
from typing import Any

from ..cards import (
    CARD_TEXT,
    HIGHER_IN_SUIT,
    NUM_CARDS,
    RANK_MASKS,
    SPADES,
    SUIT_MASKS,
    card_text,
    cards_list,
    make_card,
    parse_card,
)
from .encoding import encode_public_state, public_state_hash
from .errors import DealError, HiddenCardError, IllegalMove, RevealError
from .moves import (
    ATTACK,
    ATTACK_DECK,
    ATTACK_DECK_MOVE,
    BEG,
    BEG_MOVES,
    DECK_KILL,
    DECK_KILL_MOVE,
    EXCHANGE,
    EXCHANGE_MOVE,
    KILL,
    KILL_MOVES,
    KIND_BY_NAME,
    PASS,
    PASS_MOVE,
    SELF,
    SELF_MOVES,
    SINGLE_ATTACK,
    TAKE,
    TAKE_MOVE,
    TRANSFER,
    TRANSFER_MOVES,
    TRANSFER_SHOW,
    TRANSFER_SHOW_MOVES,
    Move,
    attack_move,
    new_attack,
    parse_move,
)
from .options import DURAK, KAAVI, MOSKA, MUSTAMAIJA, Rules
from .view import View

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
_FAMILY = {MOSKA: F_MOSKA, DURAK: F_DURAK, MUSTAMAIJA: F_MUSTAMAIJA, KAAVI: F_KAAVI}

# What a waiting game waits for.
W_DEAL_TRUMP, W_ATTACK_DECK, W_DECK_KILL, W_MM_TRUMP, W_KAAVI_TRUMP, W_LOWEST_TRUMP = range(6)

L_SIX_OR_HAND, L_HAND, L_NONE, L_MUSTAMAIJA = range(4)
_LIMIT_MODE = {"six-or-hand": L_SIX_OR_HAND, "hand": L_HAND, "none": L_NONE}
UNLIMITED = 1 << 20

QUEEN_OF_SPADES = make_card(10, SPADES)
TWOS_MASK = RANK_MASKS[0]


def _beat_table(trump: int, mustamaija: bool) -> tuple[int, ...]:
    """``table[a]``: the mask of every card that beats card ``a`` (RULES C3, MM4)."""
    trumps = SUIT_MASKS[trump]
    rows = []
    for a in range(NUM_CARDS):
        beaters = HIGHER_IN_SUIT[a]
        if a & 3 != trump:
            beaters |= trumps
        if mustamaija:
            beaters = 0 if a == QUEEN_OF_SPADES else beaters & ~(1 << QUEEN_OF_SPADES)
        rows.append(beaters)
    return tuple(rows)


_BEAT = {(t, mm): _beat_table(t, mm) for t in range(4) for mm in (False, True)}


# CARDS_OF_RANKS[ranks]: every card whose rank is in the 13-bit rank set ``ranks``.
CARDS_OF_RANKS: tuple[int, ...] = tuple(
    sum(RANK_MASKS[r] for r in range(13) if ranks >> r & 1) for ranks in range(1 << 13)
)
_NIBBLE_LOW = sum(1 << (4 * r) for r in range(13))  # bit 0 of every rank's nibble
_PAIR_BITS = _NIBBLE_LOW * 0x5
_COUNT_BITS = _NIBBLE_LOW * 0x3


def _cards_of_ranks(ranks: int) -> int:
    return CARDS_OF_RANKS[ranks]


def _ranks_with_pairs(mask: int) -> int:
    """Nibble-low bits of the ranks of which ``mask`` holds two cards or more (branch-free
    popcount of every 4-bit rank group at once)."""
    pairs = (mask & _PAIR_BITS) + ((mask >> 1) & _PAIR_BITS)
    counts = (pairs & _COUNT_BITS) + ((pairs >> 2) & _COUNT_BITS)
    return ((counts >> 1) | (counts >> 2)) & _NIBBLE_LOW


# _SUBGROUPS[nibble]: the sub-groups of two cards or more of one rank's 4-bit group.
_SUBGROUPS: tuple[tuple[int, ...], ...] = tuple(
    tuple(sub for sub in range(1, 16) if sub & nibble == sub and sub.bit_count() >= 2)
    for nibble in range(16)
)


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


# _SUBGROUP_CARDS[rank][nibble]: (size, cards) of every sub-group of two or more cards of
# that rank whose 4-bit suit pattern is ``nibble``, cards in canonical order.
_SUBGROUP_CARDS: tuple[tuple[tuple[tuple[int, tuple[int, ...]], ...], ...], ...] = tuple(
    tuple(
        tuple(
            (sub.bit_count(), tuple(4 * r + b for b in range(4) if sub >> b & 1))
            for sub in _SUBGROUPS[nibble]
        )
        for nibble in range(16)
    )
    for r in range(13)
)


def _group_options(mask: int) -> list[tuple[tuple[int, tuple[int, ...]], ...]]:
    """Per rank in ``mask`` holding two cards or more: every sub-group of two or more (M7)."""
    flags = _ranks_with_pairs(mask)
    options = []
    while flags:
        low = flags & -flags
        shift = low.bit_length() - 1
        options.append(_SUBGROUP_CARDS[shift >> 2][(mask >> shift) & 0xF])
        flags ^= low
    return options


def _group_attacks(mask: int, room: int) -> list[tuple[int, ...]]:
    """Every union of rank groups of two or more cards (M7 c), at most ``room`` cards, each
    as its cards in canonical order (groups are visited rank by rank, so concatenation keeps
    the order)."""
    options = _group_options(mask)
    if not options:
        return []
    if len(options) == 1:
        return [cards for size, cards in options[0] if size <= room]
    result: list[tuple[int, ...]] = []
    last = len(options)

    def extend(i: int, acc: tuple[int, ...], size: int) -> None:
        for j in range(i, last):
            for sub_size, cards in options[j]:
                k = size + sub_size
                if k <= room:
                    combined = acc + cards
                    result.append(combined)
                    if k + 2 <= room:
                        extend(j + 1, combined, k)

    extend(0, (), 0)
    return result


_Picker = Callable[[int, random.Random], Move]


def _completion_table(
    options: list[tuple[tuple[int, tuple[int, ...]], ...]], room: int
) -> list[list[int]]:
    """``ways[j][c]``: choices of at most one sub-group from each of ``options[j:]`` (none
    included) with at most ``c`` cards in all: the counting behind uniform sampling."""
    last = len(options)
    ways = [[0] * (room + 1) for _ in range(last + 1)]
    ways[last] = [1] * (room + 1)
    for j in range(last - 1, -1, -1):
        below = ways[j + 1]
        row = ways[j]
        for c in range(room + 1):
            total = below[c]
            for size, _ in options[j]:
                if size <= c:
                    total += below[c - size]
            row[c] = total
    return ways


def _unrank_groups(
    options: list[tuple[tuple[int, tuple[int, ...]], ...]],
    ways: list[list[int]],
    room: int,
    index: int,
) -> Move:
    """The ``index``-th choice in the order of :func:`_completion_table` (0 is "none")."""
    cards: tuple[int, ...] = ()
    cap = room
    for j, choices in enumerate(options):
        below = ways[j + 1]
        if index < below[cap]:
            continue  # no group of this rank
        index -= below[cap]
        for size, group in choices:
            if size > cap:
                continue
            if index < below[cap - size]:
                cards += group
                cap -= size
                break
            index -= below[cap - size]
    return new_attack(cards)


def _pick_subset(cards: list[int], sizes: list[int], index: int, rng: random.Random) -> Move:
    """A uniformly random non-empty subset: its size by ``index`` (weighted by C(m, k))."""
    k = 1
    while index >= sizes[k]:
        index -= sizes[k]
        k += 1
    chosen = sorted(rng.sample(cards, k))
    return attack_move(tuple(chosen))


class Game:
    """One game of a preset, from the deal to its loser. Pure and deterministic: no I/O.

    Use :func:`moska_p2p.engine.new_game` to make one. ``play`` takes a :class:`Move` or its
    text; an illegal move raises :class:`IllegalMove` and leaves the game unchanged.
    """

    __slots__ = (
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

    def __init__(
        self,
        rules: Rules,
        players: int,
        faces: Sequence[int] | None,
        dealer: int = 0,
        first_game: bool = True,
        track_reveals: bool = False,
    ) -> None:
        """Deal a game. ``faces`` is the deck top first (RULES C4), or ``None`` for a game
        whose faces are all hidden (a peer's engine before any key is released)."""
        if not rules.min_players <= players <= rules.max_players:
            raise ValueError(
                f"{rules.preset} is for {rules.min_players} to {rules.max_players} players,"
                f" not {players}"
            )
        if rules.teams and players % 2:
            raise ValueError("durak-teams needs 4 or 6 players in two teams (RULES D12)")
        if not 0 <= dealer < players:
            raise ValueError(f"dealer must be a seat from 0 to {players - 1}, not {dealer}")
        size = rules.pack_size
        if faces is not None:
            _check_deck(faces, rules)
        self.rules = rules
        self.family = _FAMILY[rules.family]
        self.n = players
        self.dealer = dealer
        self.first_game = first_game
        self._hs = rules.hand_size
        self._limit_mode = L_MUSTAMAIJA if self.family == F_MUSTAMAIJA else _LIMIT_MODE[rules.limit]
        self._first_cap = 5 if rules.first_bout_limit == "5" else 6
        self._low_trump_rank = rules.lowest_rank
        self.face = list(faces) if faces is not None else [-1] * size
        self.pos_of = [-1] * NUM_CARDS
        for pos, card in enumerate(self.face):
            if card >= 0:
                self.pos_of[card] = pos
        self.public = [False] * size
        self.hands = [0] * players
        self.hidden: list[list[int]] = [[] for _ in range(players)]
        self.hidden_owner: dict[int, int] = {}
        self.shown = [0] * players
        self.out = [False] * players
        self.tab_a: list[int] = []
        self.tab_k: list[int] = []
        self._begged: list[bool] = []
        self._own_twos: list[bool] = []
        self._twos_layers: list[int] = []
        self._pending_public: list[int] = []  # face-up positions whose faces are unknown
        self.live = 0
        self.discard = 0
        self.picked = 0
        self.trump = -1
        self.indicator = -1
        self._exch_pos = -1
        self._beat: tuple[int, ...] = ()
        self.turned = -1
        self.transfer_shown = 0
        self.bout_count = 0
        self.bout_limit = UNLIMITED
        self.bout_number = 0
        self.ranks_all = 0
        self.ranks_att = 0
        self.order: list[int] = []
        self.oidx = 0
        self.passes = 0
        self.attacker = (dealer + 1) % players
        self.defender = (dealer + 2) % players
        self.phase = WAITING
        self.to_act_seat = -1
        self.history: list[tuple[int, Move]] = []
        self.loser_seats: tuple[int, ...] = ()
        self._awaiting: tuple[int, int] | None = None
        self.reveal_log: list[tuple[int, int]] | None = [] if track_reveals else None
        self._deal()

    # ------------------------------------------------------------------ public properties

    @property
    def to_act(self) -> int | None:
        """The seat to act, or ``None`` when the game is over (or waits for a reveal)."""
        if self._pending_public:
            return None  # a card turned face up (M23) must be known to all before anyone acts
        return self.to_act_seat if self.to_act_seat >= 0 else None

    @property
    def decision(self) -> str:
        """The kind of decision the seat to act faces (RULES C5)."""
        return DECISIONS[self.phase]

    @property
    def is_over(self) -> bool:
        return self.phase == OVER

    @property
    def losers(self) -> list[int]:
        """Every losing seat (a whole team in ``durak-teams``); empty on a draw."""
        return list(self.loser_seats)

    @property
    def loser(self) -> int | None:
        """The seat that lost, ``None`` on a draw (D10) or while the game goes on."""
        if self.phase != OVER or not self.loser_seats:
            return None
        if len(self.loser_seats) == 1:
            return self.loser_seats[0]
        holders = [s for s in self.loser_seats if self.hand_size(s)]
        return holders[0] if holders else self.loser_seats[0]

    @property
    def stock_size(self) -> int:
        return len(self.stock)

    @property
    def trump_suit(self) -> int | None:
        return self.trump if self.trump >= 0 else None

    @property
    def trump_card(self) -> str | None:
        """The trump indicator's text, or ``None`` before it is known (MM2, K1)."""
        return CARD_TEXT[self.indicator] if self.indicator >= 0 else None

    @property
    def discard_size(self) -> int:
        return self.discard.bit_count()

    @property
    def table(self) -> list[tuple[str, str | None]]:
        """The bout's cards in the order laid: (attack card, killing card or ``None``)."""
        return [
            (CARD_TEXT[a], CARD_TEXT[k] if k >= 0 else None)
            for a, k in zip(self.tab_a, self.tab_k, strict=True)
        ]

    @property
    def awaiting(self) -> tuple[int, ...]:
        """Deck positions whose faces the game waits for before it can go on."""
        pending = tuple(self._pending_public)
        if self._awaiting is None:
            return pending
        tag, pos = self._awaiting
        return pending if tag == W_LOWEST_TRUMP else (pos, *pending)

    @property
    def awaiting_lowest_trump(self) -> bool:
        """True while a hidden-information Durak game waits for the D3 claim."""
        return self._awaiting is not None and self._awaiting[0] == W_LOWEST_TRUMP

    @property
    def exchange_open(self) -> bool:
        """True while the original trump indicator is in the stock to be exchanged (M4, D8)."""
        return self._exch_pos >= 0

    @property
    def begged_flags(self) -> list[bool]:
        """Kaavi K4: per table pair, whether its killer was already exchanged."""
        return list(self._begged)

    @property
    def own_twos_flags(self) -> list[bool]:
        """Kaavi K5: per table pair, whether it is the dealer's own two."""
        return list(self._own_twos)

    def room(self) -> int:
        """How many more attack cards the bout's limit allows now (M6, D5, MM3);
        ``UNLIMITED`` (a large number) where no count limit applies."""
        return self._room()

    def view(self, seat: int) -> View:
        """What ``seat`` may see: its own hand and public information only."""
        return View(self, seat)

    def encode_public(self) -> bytes:
        """The canonical encoding of the public state (see :mod:`.encoding`)."""
        return encode_public_state(self)

    def state_hash(self) -> str:
        """SHA-256 (hex) of the public state: equal on every peer that is in step."""
        return public_state_hash(self)

    def hand(self, seat: int) -> list[str]:
        """The card texts of a seat's hand, canonical order; ``??`` for each unknown face."""
        return [CARD_TEXT[c] for c in cards_list(self.hands[seat])] + ["??"] * len(
            self.hidden[seat]
        )

    def hand_mask(self, seat: int) -> int:
        return self.hands[seat]

    def hand_size(self, seat: int) -> int:
        return self.hands[seat].bit_count() + len(self.hidden[seat])

    def hand_sizes(self) -> list[int]:
        return [self.hands[s].bit_count() + len(self.hidden[s]) for s in range(self.n)]

    def is_out(self, seat: int) -> bool:
        return self.out[seat]

    def team_of(self, seat: int) -> int:
        return seat % 2 if self.rules.teams else seat

    @property
    def live_cards(self) -> list[str]:
        return [CARD_TEXT[c] for c in self.tab_a if self.live >> c & 1]

    def copy(self) -> Game:
        """An independent copy (for search): lists are copied, immutable values shared."""
        new = Game.__new__(Game)
        for name in Game.__slots__:
            value = getattr(self, name)
            if type(value) is list:
                value = list(value)
            setattr(new, name, value)
        new.hidden = [list(h) for h in self.hidden]
        new.hidden_owner = dict(self.hidden_owner)
        if self.reveal_log is not None:
            new.reveal_log = list(self.reveal_log)
        return new

    # --------------------------------------------------------------------- the deal (C4)

    def _deal(self) -> None:
        n, hs = self.n, self._hs
        size = self.rules.pack_size
        dealt = n * hs
        start = self.dealer + 1
        for i in range(dealt):
            self._to_hand((start + i) % n, i)
        fam = self.family
        if fam in (F_MUSTAMAIJA, F_KAAVI):
            # MM2, K1: no indicator at the deal; deck[dealt] is the top of the stock.
            self.stock = list(range(size - 1, dealt - 1, -1))
            self._start()
            return
        if dealt == size:
            # D2: no stock; the dealer's last card is the indicator, shown, kept in hand.
            self.stock = []
            self._turn(dealt - 1, W_DEAL_TRUMP)
            return
        self.stock = [dealt, *range(size - 1, dealt, -1)]
        self._turn(dealt, W_DEAL_TRUMP)

    def _to_hand(self, seat: int, pos: int) -> None:
        card = self.face[pos]
        if card >= 0:
            self.hands[seat] |= 1 << card
            if self.public[pos]:
                self.shown[seat] |= 1 << card
        else:
            self.hidden[seat].append(pos)
            self.hidden_owner[pos] = seat
        log = self.reveal_log
        if log is not None and not self.public[pos]:
            log.append((pos, seat))

    def _turn(self, pos: int, tag: int) -> None:
        """Turn the card at ``pos`` face up for everyone; go on once its face is known."""
        self.public[pos] = True
        card = self.face[pos]
        if card < 0:
            if self.reveal_log is not None:
                self.reveal_log.append((pos, -1))
            self._awaiting = (tag, pos)
            self.phase = WAITING
            self.to_act_seat = -1
            return
        self._resume(tag, pos, card)

    def _resume(self, tag: int, pos: int, card: int) -> None:
        self._awaiting = None
        if tag == W_DEAL_TRUMP:
            self._set_trump(card)
            if not self.stock:
                # D2: the indicator is the dealer's card, now known to all.
                self.shown[self.dealer] |= 1 << card
            else:
                self._exch_pos = pos
            self._start()
        elif tag == W_ATTACK_DECK:
            self._after_attack_deck(card)
        elif tag == W_DECK_KILL:
            self._after_deck_kill(card)
        elif tag == W_MM_TRUMP:
            self._after_mm_turn(pos, card)
        elif tag == W_KAAVI_TRUMP:
            self._after_kaavi_trump(pos, card)

    def _set_trump(self, card: int) -> None:
        self.indicator = card
        self.trump = card & 3
        self._beat = _BEAT[self.trump, self.family == F_MUSTAMAIJA]

    def _start(self) -> None:
        fam = self.family
        first = (self.dealer + 1) % self.n
        if fam == F_MOSKA:
            if self.rules.trump_exchange == "before-first-attack":
                # M4: an exchange round opens the game, from the first attacker.
                self.attacker = first
                self.defender = self._defender_for(first)
                self.order = [(first + i) % self.n for i in range(self.n)]
                self.oidx = 0
                self.phase = EXCHANGE_ROUND
                self.to_act_seat = first
                return
            self._open_bout(first)
        elif fam == F_DURAK:
            if self.first_game:
                self._find_lowest_trump()
                return
            self._open_bout(first)  # D3: later games, the dealer's left attacks
        elif fam == F_MUSTAMAIJA:
            self._open_bout(first)  # MM2
        else:
            self._start_twos_round()  # K1

    def _find_lowest_trump(self) -> None:
        """D3: the holder of the lowest trump in any hand attacks first and shows it."""
        if any(self.hidden):
            self._awaiting = (W_LOWEST_TRUMP, -1)
            self.phase = WAITING
            self.to_act_seat = -1
            return
        trumps = SUIT_MASKS[self.trump]
        best, holder = NUM_CARDS, -1
        for seat in range(self.n):
            mine = self.hands[seat] & trumps
            if mine:
                low = (mine & -mine).bit_length() - 1
                if low < best:
                    best, holder = low, seat
        self._resolve_lowest_trump(holder, best)

    def _resolve_lowest_trump(self, holder: int, card: int) -> None:
        self._awaiting = None
        if holder < 0:
            self._open_bout((self.dealer + 1) % self.n)
            return
        self.shown[holder] |= 1 << card
        self._open_bout(holder)

    def declare_lowest_trump(self, position: int | None) -> None:
        """Resolve D3 on a hidden-information engine: the position of the lowest trump shown
        (its face revealed beforehand), or ``None`` when nobody holds a trump."""
        if not self.awaiting_lowest_trump:
            raise RevealError("the game is not waiting for the lowest trump (RULES D3)")
        if position is None:
            self._resolve_lowest_trump(-1, -1)
            return
        card = self.face[position]
        if card < 0:
            raise RevealError(f"position {position} must be revealed before it is shown (D3)")
        if card & 3 != self.trump:
            raise RevealError(f"{CARD_TEXT[card]} is not a trump (D3)")
        holder = next((s for s in range(self.n) if self.hands[s] >> card & 1), -1)
        if holder < 0:
            raise RevealError(f"{CARD_TEXT[card]} is in no hand (D3)")
        self._resolve_lowest_trump(holder, card)

    # ------------------------------------------------------------------ reveals (hidden info)

    def reveal(self, position: int, card: int | str) -> None:
        """Tell this engine the face at ``position`` (a key was released for it)."""
        code = parse_card(card) if isinstance(card, str) else card
        if not 0 <= position < len(self.face):
            raise RevealError(f"no deck position {position}")
        known = self.face[position]
        if known >= 0:
            if known != code:
                raise RevealError(
                    f"position {position} holds {CARD_TEXT[known]}, not {CARD_TEXT[code]}"
                )
            return
        if self.pos_of[code] >= 0:
            raise RevealError(f"{CARD_TEXT[code]} was already seen at position {self.pos_of[code]}")
        pack_low = self.rules.lowest_rank * 4
        if code < pack_low:
            raise RevealError(f"{CARD_TEXT[code]} is not in this pack")
        self.face[position] = code
        self.pos_of[code] = position
        if position in self._pending_public:
            self._pending_public.remove(position)
        owner = self.hidden_owner.pop(position, None)
        if owner is not None:
            self.hidden[owner].remove(position)
            self.hands[owner] |= 1 << code
            if self.public[position]:
                self.shown[owner] |= 1 << code
        if self._awaiting is not None and self._awaiting[1] == position:
            tag = self._awaiting[0]
            self._resume(tag, position, code)

    def take_reveal_requests(self) -> list[tuple[int, int]]:
        """The (position, seat) pairs whose faces became due since the last call; seat -1
        means everyone (a public reveal). Only recorded with ``track_reveals=True``."""
        log = self.reveal_log
        if log is None:
            return []
        self.reveal_log = []
        return log

    # ------------------------------------------------------------------------ seats

    def _next_in(self, seat: int) -> int:
        n = self.n
        out = self.out
        s = (seat + 1) % n
        while out[s] and s != seat:
            s = (s + 1) % n
        return s

    def _defender_for(self, attacker: int) -> int:
        d = self._next_in(attacker)
        if self.rules.teams:
            # D12: never against a partner; the attack goes to the next opponent.
            while d % 2 == attacker % 2 and d != attacker:
                d = self._next_in(d)
        return d

    def _size(self, seat: int) -> int:
        return self.hands[seat].bit_count() + len(self.hidden[seat])

    # ------------------------------------------------------------------------ bouts

    def _open_bout(self, attacker: int) -> None:
        self.bout_number += 1
        self.attacker = attacker
        defender = self._defender_for(attacker)
        self.defender = defender
        self.tab_a = []
        self.tab_k = []
        self._begged = []
        self._own_twos = []
        self.live = 0
        self.bout_count = 0
        self.ranks_all = 0
        self.ranks_att = 0
        self.transfer_shown = 0
        self.turned = -1
        cap = 6
        if self.family == F_DURAK and self.bout_number == 1:
            cap = self._first_cap  # D5 option first_bout_limit
        self.bout_limit = min(cap, self._size(defender))
        self.phase = OPEN
        self.to_act_seat = attacker

    def _room(self) -> int:
        """How many more attack cards the bout's limit allows now (M6, D5, MM3)."""
        mode = self._limit_mode
        if mode == L_SIX_OR_HAND:
            return self.bout_limit - self.bout_count
        if mode == L_HAND:
            return self._size(self.defender) - self.live.bit_count()
        if mode == L_NONE:
            return UNLIMITED
        return self._size(self.defender) if not self.stock else UNLIMITED

    def _self_room(self) -> bool:
        """M20: a self execution needs room for two cards and two cards in hand."""
        d = self.defender
        if self._size(d) < 2:
            return False
        mode = self._limit_mode
        if mode == L_SIX_OR_HAND:
            return self.bout_limit - self.bout_count >= 2
        if mode == L_HAND:
            return self._size(d) - self.live.bit_count() >= 2
        return True

    def _played_ranks(self) -> int:
        return self.ranks_att if self.rules.throw_in_ranks == "attack-only" else self.ranks_all

    def _add_cards(self, seat: int, mask: int) -> None:
        """Lay attack cards from a hand onto the table (no checks)."""
        self.hands[seat] &= ~mask
        self.shown[seat] &= ~mask
        count = 0
        ranks = 0
        tab_a = self.tab_a
        tab_k = self.tab_k
        while mask:
            low = mask & -mask
            c = low.bit_length() - 1
            tab_a.append(c)
            tab_k.append(-1)
            ranks |= 1 << (c >> 2)
            mask ^= low
            count += 1
            self.live |= low
        if self.family == F_KAAVI:
            self._begged.extend([False] * count)
            self._own_twos.extend([False] * count)
        self.bout_count += count
        self.ranks_att |= ranks
        self.ranks_all |= ranks

    def _draw_up(self, seat: int, target: int) -> None:
        stock = self.stock
        while stock and self._size(seat) < target:
            self._draw(seat)

    def _draw(self, seat: int) -> None:
        self._to_hand(seat, self._pop_stock())

    def _pop_stock(self) -> int:
        pos = self.stock.pop()
        if pos == self._exch_pos:
            self._exch_pos = -1
        if len(self.stock) == 2 and self.rules.expose_second_last == "on":
            top = self.stock[-1]
            if not self.public[top]:
                # M23: the upper of the last two stock cards is turned face up.
                self.public[top] = True
                if self.face[top] < 0:
                    self._pending_public.append(top)
                    if self.reveal_log is not None:
                        self.reveal_log.append((top, -1))
        return pos

    def _ended(self) -> bool:
        """M13, MM7: with the stock empty, empty hands are out; at most one left ends it."""
        if self.stock or self.family == F_DURAK:
            return False
        n = self.n
        out = self.out
        holders = 0
        last = -1
        for s in range(n):
            if out[s]:
                continue
            if not self.hands[s] and not self.hidden[s] and not (s == self.defender and self.live):
                out[s] = True
                continue
            holders += 1
            last = s
        if holders > 1:
            return False
        self._finish((last,) if holders else ())
        return True

    def _finish(self, losers: tuple[int, ...]) -> None:
        self.loser_seats = losers
        self.phase = OVER
        self.to_act_seat = -1

    def _after_lay(self, seat: int) -> None:
        """After attack cards were laid (opening, throw-in, giving) by ``seat``."""
        fam = self.family
        if (fam in (F_MOSKA, F_KAAVI)) and seat != self.defender:
            self._draw_up(seat, self._hs)  # M8

    def _cleared(self) -> None:
        """No live card is left on the table."""
        if self.family == F_MUSTAMAIJA:
            self._beaten_off()  # MM5: the bout ends by itself
            return
        self._start_throw_in()

    def _round_order(self) -> list[int]:
        """C7: the principal attacker, then clockwise from the defender's left."""
        n = self.n
        d = self.defender
        a = self.attacker
        order = [a]
        teams = self.rules.teams
        for i in range(1, n):
            s = (d + i) % n
            if s in (a, d) or (teams and s % 2 == d % 2):
                continue
            order.append(s)
        return order

    def _askable(self, seat: int) -> bool:
        return not self.out[seat] and (self.hands[seat] != 0 or bool(self.hidden[seat]))

    def _start_throw_in(self) -> None:
        if self.out[self.defender] or self._room() <= 0:
            self._beaten_off()  # M11: the limit allows no further card
            return
        order = self._round_order()
        if self.rules.self_execution != "off":
            order.append(self.defender)  # M20: the defender is asked last
        self.order = order
        self.oidx = 0
        self.phase = THROW_IN
        self._ask_throw_in()

    def _ask_throw_in(self) -> None:
        order = self.order
        d = self.defender
        while self.oidx < len(order):
            s = order[self.oidx]
            if s == d:
                if self._self_room():
                    self.to_act_seat = s
                    return
            elif self._askable(s):
                self.to_act_seat = s
                return
            self.oidx += 1
        self._beaten_off()  # every seat passed: M11

    def _start_give(self) -> None:
        if self.family == F_MUSTAMAIJA:
            self._pick_up()
            return
        self.order = self._round_order()
        self.oidx = 0
        self.passes = 0
        self.phase = GIVE
        self._ask_give()

    def _ask_give(self) -> None:
        if self._room() <= 0:
            self._pick_up()
            return
        order = self.order
        m = len(order)
        eligible = 0
        for s in order:
            if self._askable(s):
                eligible += 1
        if eligible == 0 or self.passes >= eligible:
            self._pick_up()  # every seat passed in a row (C7, M12, D6)
            return
        i = self.oidx
        while not self._askable(order[i % m]):
            i += 1
        self.oidx = i % m
        self.to_act_seat = order[self.oidx]

    def _discard_table(self) -> None:
        mask = 0
        for a, k in zip(self.tab_a, self.tab_k, strict=True):
            mask |= 1 << a
            if k >= 0:
                mask |= 1 << k
        self.discard |= mask
        self.tab_a = []
        self.tab_k = []
        self.live = 0

    def _beaten_off(self) -> None:
        """M11, D9, MM6: every attack card killed; the table is discarded."""
        self._discard_table()
        self._end_bout(held=True)

    def _pick_up(self) -> None:
        """M12, D6, MM5: the defender picks up (every table card in Durak)."""
        d = self.defender
        if self.family == F_DURAK:
            mask = 0
            for a, k in zip(self.tab_a, self.tab_k, strict=True):
                mask |= 1 << a
                if k >= 0:
                    mask |= 1 << k
        else:
            mask = self.live
        self.hands[d] |= mask
        self.shown[d] |= mask
        self.picked |= mask
        self.tab_a = []
        self.tab_k = []
        self.live = 0
        self._end_bout(held=False)

    def _end_bout(self, held: bool) -> None:
        d = self.defender
        fam = self.family
        self.phase = WAITING
        self.to_act_seat = -1
        if fam == F_DURAK:
            self._durak_refill()
            if not self.stock:
                # D10: when a bout ends with the stock empty, empty hands are out.
                for s in range(self.n):
                    if not self.out[s] and not self.hands[s] and not self.hidden[s]:
                        self.out[s] = True
                if self._durak_over():
                    return
        else:
            self._draw_up(d, self._hs)  # M11, M12, MM5
            if self._ended():
                return
        if held and not self.out[d]:
            self._open_bout(d)  # M11, D9, MM6: a defender who held attacks next
        else:
            self._open_bout(self._next_in(d))

    def _durak_refill(self) -> None:
        """D7: principal attacker first, then clockwise from it, the defender last."""
        if not self.stock:
            return
        n, a, d = self.n, self.attacker, self.defender
        for i in range(n):
            s = (a + i) % n
            if s != d and not self.out[s]:
                self._draw_up(s, self._hs)
        self._draw_up(d, self._hs)

    def _durak_over(self) -> bool:
        holders = [s for s in range(self.n) if not self.out[s]]
        if self.rules.teams:
            teams = {s % 2 for s in holders}
            if len(teams) > 1:
                return False
            if not teams:
                self._finish(())
                return True
            team = teams.pop()
            self._finish(tuple(s for s in range(self.n) if s % 2 == team))
            return True
        if len(holders) > 1:
            return False
        self._finish(tuple(holders))
        return True

    # -------------------------------------------------------------- Mustamaija (MM2)

    def _mm_turn(self) -> None:
        pos = self.stock.pop()
        self._turn(pos, W_MM_TRUMP)

    def _after_mm_turn(self, pos: int, card: int) -> None:
        self.stock.insert(0, pos)
        if card & 3 == SPADES:
            self._mm_turn()  # MM2: a spade goes to the bottom; turn the next
            return
        self._set_trump(card)
        self._draw_up(self.attacker, self._hs)  # MM5: then the attacker refills
        self.phase = DEFEND
        self.to_act_seat = self.defender

    # ------------------------------------------------------------------- Kaavi (K1, K2)

    def _start_twos_round(self) -> None:
        n, dealer = self.n, self.dealer
        right = (dealer - 1) % n
        self.bout_number = 1
        self.attacker = right
        self.defender = dealer
        self.tab_a, self.tab_k, self._begged, self._own_twos = [], [], [], []
        self.live = self.bout_count = self.ranks_all = self.ranks_att = 0
        self.bout_limit = min(6, self._size(dealer))
        self._twos_layers = []
        self.order = [right] + [(dealer + i) % n for i in range(1, n) if (dealer + i) % n != right]
        self.oidx = 0
        self.phase = TWOS
        self.to_act_seat = right

    def _next_twos(self) -> None:
        self.oidx += 1
        if self.oidx < len(self.order):
            self.to_act_seat = self.order[self.oidx]
            return
        self.phase = WAITING
        self.to_act_seat = -1
        self._turn(self.stock.pop(), W_KAAVI_TRUMP)  # K2

    def _after_kaavi_trump(self, pos: int, card: int) -> None:
        self.stock.insert(0, pos)
        self._set_trump(card)
        self._exch_pos = pos
        for seat in self._twos_layers:
            self._draw_up(seat, self._hs)  # K2: in the order they laid
        if self.tab_a:
            self.phase = DEFEND
            self.to_act_seat = self.defender
        else:
            self._open_bout(self.dealer)  # K2: nobody laid a two

    # ------------------------------------------------------------------- legal moves

    def legal_moves(self, kind: str | None = None) -> list[Move]:
        """Every legal move of the seat to act (RULES C6 text via ``str``).

        ``kind`` (``"attack"``, ``"kill"``, ...) lists that kind only, which is much cheaper
        than the whole list where openings are many (a large hand under ``limit=hand``).
        """
        seat = self.to_act_seat
        if seat < 0 or self._pending_public:
            return []
        if self.hidden[seat]:
            raise HiddenCardError(f"seat {seat}'s hand holds cards this engine cannot see")
        want = KIND_BY_NAME[kind] if kind is not None else -1
        phase = self.phase
        hand = self.hands[seat]
        moves: list[Move] = []
        if phase == DEFEND:
            if want < 0 or want == KILL:
                beat = self._beat
                for a in self.tab_a:
                    if self.live >> a & 1:
                        beaters = hand & beat[a]
                        if beaters:
                            row = KILL_MOVES[a]
                            while beaters:
                                low = beaters & -beaters
                                moves.append(row[low.bit_length() - 1])
                                beaters ^= low
            if want < 0 or want == TAKE:
                moves.append(TAKE_MOVE)
            if want < 0 or want == SELF:
                self._self_moves(hand, moves)
            if self.rules.deck_kill == "on" and self.stock and (want < 0 or want == DECK_KILL):
                moves.append(DECK_KILL_MOVE)
            if self.rules.transfer and (want < 0 or want in (TRANSFER, TRANSFER_SHOW)):
                self._transfer_moves(seat, hand, want, moves)
            if self.family == F_KAAVI and (want < 0 or want == BEG):
                self._beg_moves(hand, moves)
        elif phase == OPEN:
            if want < 0 or want == ATTACK:
                self._opening_moves(hand, moves)
            if (
                (want < 0 or want == ATTACK_DECK)
                and self.stock
                and self.family in (F_MOSKA, F_KAAVI)
            ):
                moves.append(ATTACK_DECK_MOVE)
        elif phase in (THROW_IN, GIVE):
            if seat == self.defender:
                if want < 0 or want == SELF:
                    self._self_moves(hand, moves)
            elif want < 0 or want == ATTACK:
                self._add_moves(hand, moves)
            if want < 0 or want == PASS:
                moves.append(PASS_MOVE)
        elif phase == FORCED_KILL:
            if want < 0 or want == KILL:
                c = self.turned
                for a in self.tab_a:
                    if self.live >> a & 1 and self._beat[a] >> c & 1:
                        moves.append(KILL_MOVES[a][c])
        elif phase == EXCHANGE_ROUND:
            if want < 0 or want == PASS:
                moves.append(PASS_MOVE)
        elif phase == TWOS:
            if want < 0 or want == ATTACK:
                self._subsets(hand & TWOS_MASK, self._room(), moves)
            if want < 0 or want == PASS:
                moves.append(PASS_MOVE)
        if (want < 0 or want == EXCHANGE) and self._may_exchange(seat):
            moves.append(EXCHANGE_MOVE)
        return moves

    def _opening_moves(self, hand: int, moves: list[Move]) -> None:
        room = self._room()
        fam = self.family
        if fam == F_DURAK:
            for c in _bits(hand):
                moves.append(SINGLE_ATTACK[c])  # D4
            return
        if fam == F_MUSTAMAIJA:
            for s in range(4):
                self._subsets(hand & SUIT_MASKS[s], room, moves)  # MM3
            return
        if fam == F_KAAVI and self.defender == self.dealer:
            twos = hand & TWOS_MASK
            if twos:
                rest = hand & ~TWOS_MASK
                bases = [(), *((c,) for c in _bits(rest)), *_group_attacks(rest, room)]
                bits = _bits(twos)
                two_sets = [combo for k in range(len(bits) + 1) for combo in combinations(bits, k)]
                for base in bases:
                    for t in two_sets:
                        if (base or t) and len(base) + len(t) <= room:
                            moves.append(attack_move(t + base))  # twos rank lowest
                return
        for c in _bits(hand):
            moves.append(SINGLE_ATTACK[c])  # M7 (a)
        if room >= 2:
            for cards in _group_attacks(hand, room):
                moves.append(new_attack(cards))  # M7 (c)

    def _add_moves(self, hand: int, moves: list[Move]) -> None:
        """Throw-in (M10, D4) and giving (M12, D6) attacks: played ranks, within the limit."""
        allowed = hand & _cards_of_ranks(self._played_ranks())
        if self.family == F_KAAVI and self.defender == self.dealer:
            allowed |= hand & TWOS_MASK  # K3
        if allowed:
            self._subsets(allowed, self._room(), moves)

    @staticmethod
    def _subsets(mask: int, room: int, moves: list[Move]) -> None:
        bits = _bits(mask)
        top = min(room, len(bits))
        for c in bits:
            moves.append(SINGLE_ATTACK[c])
        for k in range(2, top + 1):
            for combo in combinations(bits, k):
                moves.append(attack_move(combo))

    def _self_moves(self, hand: int, moves: list[Move]) -> None:
        fam = self.family
        if fam == F_KAAVI:
            # K5: the dealer's own twos, while live cards are on the table.
            if self.defender == self.dealer and self.phase == DEFEND and len(self.stock) >= 2:
                for a in _bits(hand & TWOS_MASK):
                    for k in _bits(hand & self._beat[a]):
                        moves.append(SELF_MOVES[a][k])
            return
        if self.rules.self_execution == "off" or not self._self_room():
            return
        beat = self._beat
        for a in _bits(hand & _cards_of_ranks(self._played_ranks())):
            for k in _bits(hand & beat[a]):
                moves.append(SELF_MOVES[a][k])

    def _transfer_moves(self, seat: int, hand: int, want: int, moves: list[Move]) -> None:
        rank = self._transfer_rank()
        if rank < 0:
            return
        nd = self._defender_for(seat)
        cap = self._first_cap if self.bout_number == 1 else 6
        count = len(self.tab_a)
        same = hand & RANK_MASKS[rank]
        if (want < 0 or want == TRANSFER) and count + 1 <= min(cap, self._size(nd)):
            for c in _bits(same):
                moves.append(TRANSFER_MOVES[c])
        if (
            (want < 0 or want == TRANSFER_SHOW)
            and self.rules.transfer_show_trump == "on"
            and not self.transfer_shown >> seat & 1
            and count <= min(cap, self._size(nd))
        ):
            trump_card = same & SUIT_MASKS[self.trump]
            if trump_card:
                moves.append(TRANSFER_SHOW_MOVES[trump_card.bit_length() - 1])

    def _transfer_rank(self) -> int:
        """D11: the one rank of the attack, while no card has been beaten; else -1."""
        if any(k >= 0 for k in self.tab_k):
            return -1
        ranks = self.ranks_att
        if ranks & (ranks - 1):
            return -1
        return ranks.bit_length() - 1

    def _beg_moves(self, hand: int, moves: list[Move]) -> None:
        beat = self._beat
        for i, a in enumerate(self.tab_a):
            if self.tab_k[i] >= 0 and not self._begged[i] and not self._own_twos[i]:
                for k in _bits(hand & beat[a]):
                    moves.append(BEG_MOVES[a][k])

    def _may_exchange(self, seat: int) -> bool:
        """M4, D8: the low trump may be swapped for the indicator while it is in the stock."""
        if self._exch_pos < 0 or self.trump < 0:
            return False
        fam = self.family
        if fam == F_MOSKA:
            mode = self.rules.trump_exchange
            if mode == "never" or (mode == "before-first-attack" and self.phase != EXCHANGE_ROUND):
                return False
        low = make_card(self._low_trump_rank, self.trump)
        if not self.hands[seat] >> low & 1:
            return False
        return not (fam == F_DURAK and self.picked >> low & 1)  # D8: not picked up

    # ----------------------------------------------------------------------- playing

    def play(self, move: Move | str, seat: int | None = None) -> Move:
        """Play ``move`` (a :class:`Move` or its text) for the seat to act.

        ``seat``, when given, must be the seat to act (a remote peer's claim). Returns the
        move played, in canonical form. Raises :class:`IllegalMove`; the game is unchanged.
        """
        if isinstance(move, str):
            move = parse_move(move)
        actor = self.to_act_seat
        if actor < 0 or self._pending_public:
            if self.phase == OVER:
                raise IllegalMove("the game is over")
            raise IllegalMove("the game waits for a card to be revealed; no move is possible")
        if seat is not None and seat != actor:
            raise IllegalMove(f"seat {seat} may not move: it is seat {actor}'s {self.decision}")
        kind = move[0]
        if kind == KILL:
            self._play_kill(actor, move[1])
        elif kind == ATTACK:
            cards = move[1]
            if len(cards) > 1 and list(cards) != sorted(cards):
                move = attack_move(tuple(sorted(cards)))
            self._play_attack(actor, move[1])
        elif kind == PASS:
            self._play_pass(actor)
        elif kind == TAKE:
            self._play_take(actor)
        elif kind == EXCHANGE:
            self._play_exchange(actor)
        elif kind == SELF:
            self._play_self(actor, move[1])
        elif kind == ATTACK_DECK:
            self._play_attack_deck(actor)
        elif kind == DECK_KILL:
            self._play_deck_kill(actor)
        elif kind in (TRANSFER, TRANSFER_SHOW):
            self._play_transfer(actor, move[1][0], kind == TRANSFER_SHOW)
        elif kind == BEG:
            self._play_beg(actor, move[1])
        else:  # pragma: no cover - every kind is handled above
            raise IllegalMove(f"unknown move {move}")
        self.history.append((actor, move))
        return move

    def _need_known(self, seat: int, mask: int) -> None:
        missing = mask & ~self.hands[seat]
        if missing:
            names = " ".join(CARD_TEXT[c] for c in _bits(missing))
            raise IllegalMove(f"seat {seat} does not hold {names}")

    def _wrong_phase(self, seat: int, what: str) -> IllegalMove:
        return IllegalMove(f"{what} is not possible now: seat {seat} must {self._expected()}")

    def _expected(self) -> str:
        phase = self.phase
        if phase == OPEN:
            return "open the bout with an attack"
        if phase == DEFEND:
            return "defend: kill a live card or take"
        if phase == FORCED_KILL:
            return f"kill a live card with {CARD_TEXT[self.turned]}, turned from the stock (M22)"
        if phase == THROW_IN:
            if self.to_act_seat == self.defender:
                return "self-execute or pass (M20)"
            return "throw in cards of the bout's ranks or pass"
        if phase == GIVE:
            return "give cards of the bout's ranks to the defender or pass"
        if phase == EXCHANGE_ROUND:
            return "answer exchange or pass (M4)"
        if phase == TWOS:
            return "attack the dealer with twos or pass (K1)"
        return "wait"

    def _play_kill(self, seat: int, cards: tuple[int, ...]) -> None:
        a, k = cards
        phase = self.phase
        if phase == FORCED_KILL:
            if k != self.turned:
                raise IllegalMove(
                    f"the card turned from the stock, {CARD_TEXT[self.turned]}, must kill (M22)"
                )
        elif phase != DEFEND:
            raise self._wrong_phase(seat, "kill")
        else:
            self._need_known(seat, 1 << k)
        if not self.live >> a & 1:
            raise IllegalMove(f"{CARD_TEXT[a]} is not a live attack card on the table")
        if not self._beat[a] >> k & 1:
            raise IllegalMove(f"{CARD_TEXT[k]} does not beat {CARD_TEXT[a]} (C3)")
        if phase == FORCED_KILL:
            self.turned = -1
            self.phase = DEFEND
        else:
            self.hands[seat] &= ~(1 << k)
            self.shown[seat] &= ~(1 << k)
        self.tab_k[self.tab_a.index(a)] = k
        self.live ^= 1 << a
        self.ranks_all |= 1 << (k >> 2)
        if self._ended():
            return
        if not self.live:
            self._cleared()

    def _play_take(self, seat: int) -> None:
        if self.phase != DEFEND:
            raise self._wrong_phase(seat, "take")
        self._take()

    def _take(self) -> None:
        if self.family != F_DURAK:
            # M12, MM5: the killed pairs are discarded at once.
            mask = 0
            keep_a: list[int] = []
            for a, k in zip(self.tab_a, self.tab_k, strict=True):
                if k >= 0:
                    mask |= (1 << a) | (1 << k)
                else:
                    keep_a.append(a)
            self.discard |= mask
            self.tab_a = keep_a
            self.tab_k = [-1] * len(keep_a)
            if self.family == F_KAAVI:
                self._begged = [False] * len(keep_a)
                self._own_twos = [False] * len(keep_a)
        self._start_give()

    def _play_pass(self, seat: int) -> None:
        phase = self.phase
        if phase == THROW_IN:
            self.oidx += 1
            self._ask_throw_in()
        elif phase == GIVE:
            self.passes += 1
            self.oidx = (self.oidx + 1) % len(self.order)
            self._ask_give()
        elif phase == EXCHANGE_ROUND:
            self._next_exchange()
        elif phase == TWOS:
            self._next_twos()
        elif phase == OPEN:
            raise IllegalMove(f"seat {seat} opens the bout and may not pass (C5)")
        elif phase in (DEFEND, FORCED_KILL):
            raise IllegalMove(
                f"seat {seat} defends against live cards and may not pass: kill or take (M9)"
            )
        else:  # pragma: no cover
            raise self._wrong_phase(seat, "pass")

    def _next_exchange(self) -> None:
        self.oidx += 1
        if self.oidx < len(self.order):
            self.to_act_seat = self.order[self.oidx]
        else:
            self._open_bout(self.order[0])

    def _play_exchange(self, seat: int) -> None:
        if not self._may_exchange(seat):
            raise IllegalMove(self._why_no_exchange(seat))
        low = make_card(self._low_trump_rank, self.trump)
        old = self.indicator
        low_pos = self.pos_of[low]
        self.hands[seat] = (self.hands[seat] & ~(1 << low)) | (1 << old)
        self.shown[seat] = (self.shown[seat] & ~(1 << low)) | (1 << old)
        self.stock[0] = low_pos
        self.public[low_pos] = True
        self.indicator = low
        self._exch_pos = -1  # nobody holds the low trump any more
        if self.phase == EXCHANGE_ROUND:
            self._next_exchange()  # M4: here the exchange is the seat's answer

    def _why_no_exchange(self, seat: int) -> str:
        fam = self.family
        if fam == F_MUSTAMAIJA:
            return "Mustamaija has no trump exchange"
        if fam == F_MOSKA and self.rules.trump_exchange == "never":
            return "this table plays without trump exchange (trump_exchange=never)"
        if (
            fam == F_MOSKA
            and self.rules.trump_exchange == "before-first-attack"
            and self.phase != EXCHANGE_ROUND
        ):
            return "the trump may be exchanged only before the first attack (M4)"
        if self._exch_pos < 0 or self.trump < 0:
            return "the trump indicator is no longer in the stock to exchange (M4)"
        low = make_card(self._low_trump_rank, self.trump)
        if fam == F_DURAK and self.picked >> low & 1 and self.hands[seat] >> low & 1:
            return f"{CARD_TEXT[low]} was picked up, so it buys no exchange (D8)"
        return f"seat {seat} does not hold {CARD_TEXT[low]}, the low trump (M4, D8)"

    def _play_attack(self, seat: int, cards: tuple[int, ...]) -> None:
        phase = self.phase
        mask = 0
        for c in cards:
            mask |= 1 << c
        count = len(cards)
        if mask.bit_count() != count:
            raise IllegalMove("an attack names a card twice")
        if phase == OPEN:
            self._check_opening(mask, count)
            self._need_known(seat, mask)
            self._add_cards(seat, mask)
            if self.family == F_MUSTAMAIJA and self.trump < 0:
                self.phase = WAITING
                self.to_act_seat = -1
                self._mm_turn()  # MM2: turn the trump before the attacker refills
                return
            if self.family == F_MUSTAMAIJA:
                self._draw_up(seat, self._hs)  # MM5
            self._after_lay(seat)
            self.phase = DEFEND
            self.to_act_seat = self.defender
            self._ended()
            return
        if phase in (THROW_IN, GIVE):
            if seat == self.defender:
                raise IllegalMove(
                    f"seat {seat} is the defender and may not attack itself"
                    " (only self execution, M20)"
                )
            self._need_known(seat, mask)
            self._check_addition(mask, count)
            self._add_cards(seat, mask)
            self._after_lay(seat)
            if phase == THROW_IN:
                self.phase = DEFEND
                self.to_act_seat = self.defender
                self._ended()
                return
            self.passes = 0
            self.oidx = (self.oidx + 1) % len(self.order)
            if self._ended():
                return
            self._ask_give()
            return
        if phase == TWOS:
            self._need_known(seat, mask)
            if mask & ~TWOS_MASK:
                raise IllegalMove("only twos may be laid against the dealer now (K1)")
            if count > self._room():
                raise IllegalMove(f"the bout's limit allows {self._room()} more cards (M6)")
            self._add_cards(seat, mask)
            self._twos_layers.append(seat)
            self._next_twos()
            return
        raise self._wrong_phase(seat, "attack")

    def _check_opening(self, mask: int, count: int) -> None:
        room = self._room()
        fam = self.family
        if fam == F_DURAK:
            if count != 1:
                raise IllegalMove("a Durak bout opens with exactly one card (D4)")
            return
        if count > room:
            raise IllegalMove(
                f"this opening has {count} cards but the limit allows {room} (M6, MM3)"
            )
        if fam == F_MUSTAMAIJA:
            if not any(mask & ~SUIT_MASKS[s] == 0 for s in range(4)):
                raise IllegalMove("an attack is one or more cards of a single suit (MM3)")
            return
        if fam == F_KAAVI and self.defender == self.dealer:
            mask &= ~TWOS_MASK  # K3: any number of twos may join a legal opening
            count = mask.bit_count()
            if count == 0:
                return
        if count == 1:
            return
        for r in range(13):
            if (mask & RANK_MASKS[r]).bit_count() == 1:
                raise IllegalMove(
                    "an opening of several cards must be groups of two or more cards of"
                    f" equal rank (M7); {CARD_TEXT[_bits(mask & RANK_MASKS[r])[0]]} is alone"
                )

    def _check_addition(self, mask: int, count: int) -> None:
        allowed = _cards_of_ranks(self._played_ranks())
        if self.family == F_KAAVI and self.defender == self.dealer:
            allowed |= TWOS_MASK  # K3
        bad = mask & ~allowed
        if bad:
            which = "attack cards" if self.rules.throw_in_ranks == "attack-only" else "cards"
            raise IllegalMove(
                f"{CARD_TEXT[_bits(bad)[0]]}: its rank was not among the {which} played in"
                " this bout (M10, M12, D4)"
            )
        room = self._room()
        if count > room:
            raise IllegalMove(
                f"the bout's limit allows {max(room, 0)} more card{'s' if room != 1 else ''}"
                " (M6, D5)"
            )

    def _play_self(self, seat: int, cards: tuple[int, ...]) -> None:
        a, k = cards
        phase = self.phase
        if seat != self.defender or phase not in (DEFEND, THROW_IN):
            raise self._wrong_phase(seat, "self execution")
        self._need_known(seat, (1 << a) | (1 << k))
        if not self._beat[a] >> k & 1:
            raise IllegalMove(f"{CARD_TEXT[k]} does not beat {CARD_TEXT[a]} (C3)")
        kaavi = self.family == F_KAAVI
        if kaavi:
            if self.defender != self.dealer or phase != DEFEND or a >> 2 != 0:
                raise IllegalMove(
                    "in Kaavi only the dealer, defending against live cards, kills its own"
                    " twos (K5)"
                )
            if len(self.stock) < 2:
                raise IllegalMove("the dealer's own twos need two cards in the stock (K5)")
        else:
            if self.rules.self_execution == "off":
                raise IllegalMove("this table plays without self execution (M20)")
            if not _cards_of_ranks(self._played_ranks()) >> a & 1:
                which = (
                    "among the attack cards"
                    if self.rules.throw_in_ranks == "attack-only"
                    else "played"
                )
                raise IllegalMove(f"{CARD_TEXT[a]}: its rank was not {which} in this bout (M20)")
            if not self._self_room():
                raise IllegalMove("the bout's limit leaves no room for a self execution (M20)")
        self.hands[seat] &= ~((1 << a) | (1 << k))
        self.shown[seat] &= ~((1 << a) | (1 << k))
        self.tab_a.append(a)
        self.tab_k.append(k)
        self.ranks_att |= 1 << (a >> 2)
        self.ranks_all |= (1 << (a >> 2)) | (1 << (k >> 2))
        if kaavi:
            self._begged.append(False)
            self._own_twos.append(True)
            self._draw(seat)
            self._draw(seat)  # K5: the dealer draws two cards
        else:
            self.bout_count += 2  # M20: two cards against the limit
            if self.rules.self_execution == "on-with-draw" and self.stock:
                self._draw(seat)  # M21
        if self._ended():
            return
        if phase == THROW_IN:
            self._start_throw_in()  # M20: like any added card, a new throw-in round
        elif not self.live:
            self._cleared()

    def _play_attack_deck(self, seat: int) -> None:
        if self.phase != OPEN or self.family not in (F_MOSKA, F_KAAVI):
            raise self._wrong_phase(seat, "attack deck")
        if not self.stock:
            raise IllegalMove("the stock is empty: attack deck is not possible (M7)")
        self._turn(self._pop_stock(), W_ATTACK_DECK)

    def _after_attack_deck(self, card: int) -> None:
        self.tab_a.append(card)
        self.tab_k.append(-1)
        if self.family == F_KAAVI:
            self._begged.append(False)
            self._own_twos.append(False)
        self.live |= 1 << card
        self.bout_count += 1
        self.ranks_att |= 1 << (card >> 2)
        self.ranks_all |= 1 << (card >> 2)
        self._after_lay(self.attacker)  # M8
        self.phase = DEFEND
        self.to_act_seat = self.defender
        self._ended()

    def _play_deck_kill(self, seat: int) -> None:
        if self.phase != DEFEND or self.rules.deck_kill != "on":
            raise self._wrong_phase(seat, "deck-kill")
        if not self.stock:
            raise IllegalMove("the stock is empty: deck-kill is not possible (M22)")
        self._turn(self._pop_stock(), W_DECK_KILL)

    def _after_deck_kill(self, card: int) -> None:
        beat = self._beat
        if any(self.live >> a & 1 and beat[a] >> card & 1 for a in self.tab_a):
            self.turned = card  # M22: it must kill one live card it beats
            self.phase = FORCED_KILL
            self.to_act_seat = self.defender
            return
        d = self.defender
        self.hands[d] |= 1 << card  # M22: it beats none; the defender has taken
        self.shown[d] |= 1 << card
        self._take()

    def _play_transfer(self, seat: int, card: int, show: bool) -> None:
        if self.phase != DEFEND or not self.rules.transfer:
            raise self._wrong_phase(seat, "transfer")
        rank = self._transfer_rank()
        if rank < 0:
            raise IllegalMove(
                "a transfer needs every attack card of one rank and none beaten yet (D11)"
            )
        if card >> 2 != rank:
            raise IllegalMove(f"{CARD_TEXT[card]} is not of the attack's rank (D11)")
        self._need_known(seat, 1 << card)
        nd = self._defender_for(seat)
        cap = self._first_cap if self.bout_number == 1 else 6
        count = len(self.tab_a) + (0 if show else 1)
        if count > min(cap, self._size(nd)):
            raise IllegalMove(
                f"seat {nd} could face at most {min(cap, self._size(nd))} cards (D11)"
            )
        if show:
            if self.rules.transfer_show_trump != "on":
                raise IllegalMove("this table plays without transfer by showing a trump (D11)")
            if card & 3 != self.trump:
                raise IllegalMove(f"{CARD_TEXT[card]} is not a trump (D11)")
            if self.transfer_shown >> seat & 1:
                raise IllegalMove(f"seat {seat} already transferred by showing this bout (D11)")
            self.transfer_shown |= 1 << seat
            self.shown[seat] |= 1 << card
        else:
            self._add_cards(seat, 1 << card)
        self.attacker = seat
        self.defender = nd
        self.bout_limit = min(cap, self._size(nd))
        self.bout_count = len(self.tab_a)
        self.to_act_seat = nd

    def _play_beg(self, seat: int, cards: tuple[int, ...]) -> None:
        a, k = cards
        if self.phase != DEFEND or self.family != F_KAAVI:
            raise self._wrong_phase(seat, "beg")
        if a not in self.tab_a:
            raise IllegalMove(f"{CARD_TEXT[a]} is not on the table")
        i = self.tab_a.index(a)
        old = self.tab_k[i]
        if old < 0:
            raise IllegalMove(f"{CARD_TEXT[a]} is not killed yet: kill it instead (K4)")
        if self._own_twos[i]:
            raise IllegalMove(f"{CARD_TEXT[a]} is the dealer's own two, not an attack card (K4)")
        if self._begged[i]:
            raise IllegalMove(f"the killer of {CARD_TEXT[a]} was already exchanged once (K4)")
        self._need_known(seat, 1 << k)
        if not self._beat[a] >> k & 1:
            raise IllegalMove(f"{CARD_TEXT[k]} does not beat {CARD_TEXT[a]} (C3)")
        self.hands[seat] = (self.hands[seat] & ~(1 << k)) | (1 << old)
        self.shown[seat] = (self.shown[seat] & ~(1 << k)) | (1 << old)
        self.tab_k[i] = k
        self._begged[i] = True
        self.ranks_all |= 1 << (k >> 2)

    # ------------------------------------------------------------------ determinization

    def unknown_to(self, seat: int) -> int:
        """The mask of every card whose place ``seat`` does not know: in other hands (not
        shown) or face down in the stock."""
        known = self.hands[seat] | self.discard
        for a, k in zip(self.tab_a, self.tab_k, strict=True):
            known |= 1 << a
            if k >= 0:
                known |= 1 << k
        for s in range(self.n):
            known |= self.shown[s]
        for pos in self.stock:
            if self.public[pos] and self.face[pos] >= 0:
                known |= 1 << self.face[pos]
        pack = ((1 << NUM_CARDS) - 1) & ~((1 << (self.rules.lowest_rank * 4)) - 1)
        return pack & ~known

    def determinize(self, seat: int, rng: random.Random) -> Game:
        """A full-information copy in which every card ``seat`` cannot place is dealt at
        random among the places it could be (other hands' unknown cards, the face-down
        stock), consistent with all public knowledge: the sampling step of ISMCTS.

        Only a full-information game (the arena's) can be determinized this way, since the
        seat's own hand must be known.
        """
        if self.hidden[seat]:
            raise HiddenCardError(f"seat {seat}'s own hand is not known to this engine")
        pool = cards_list(self.unknown_to(seat))
        rng.shuffle(pool)
        g = self.copy()
        g.reveal_log = None
        next_card = iter(pool)
        for s in range(self.n):
            if s == seat:
                continue
            mask = self.shown[s]
            for _ in range(self.hand_size(s) - self.shown[s].bit_count()):
                mask |= 1 << next(next_card)
            g.hands[s] = mask
            g.hidden[s] = []
        g.hidden_owner = {}
        face = [-1] * len(self.face)
        for pos in self.stock:
            if self.public[pos] and self.face[pos] >= 0:
                face[pos] = self.face[pos]
            else:
                face[pos] = next(next_card)
        placed = {face[pos] for pos in self.stock}
        free = iter(pos for pos in range(len(face)) if face[pos] < 0)
        low = self.rules.lowest_rank * 4
        for card in range(low, NUM_CARDS):
            if card not in placed:
                face[next(free)] = card
        g.face = face
        pos_of = [-1] * NUM_CARDS
        for pos, card in enumerate(face):
            pos_of[card] = pos
        g.pos_of = pos_of
        return g

    # ------------------------------------------------------------------ conveniences

    def random_move(self, rng: random.Random) -> Move:
        """A legal move chosen uniformly at random, without listing every move where the
        list would be large (an opening from a big hand, a throw-in of many cards)."""
        plan = self._combinatorial_plan()
        if plan is None:
            return rng.choice(self.legal_moves())
        total = sum(count for count, _ in plan)
        index = rng.randrange(total)
        for count, pick in plan:
            if index < count:
                return pick(index, rng)
            index -= count
        raise AssertionError("unreachable: index within total")  # pragma: no cover

    def count_legal_moves(self) -> int:
        """``len(self.legal_moves())``, computed without building the list where it is big."""
        plan = self._combinatorial_plan()
        if plan is None:
            return len(self.legal_moves())
        return sum(count for count, _ in plan)

    def _combinatorial_plan(self) -> list[tuple[int, _Picker]] | None:
        """For decisions whose moves are subsets of a hand: blocks of (count, picker) that
        together list every legal move once; ``None`` where listing is cheap anyway."""
        seat = self.to_act_seat
        if seat < 0 or self.hidden[seat] or self._pending_public:
            return None
        phase = self.phase
        hand = self.hands[seat]
        plan: list[tuple[int, _Picker]] = []
        if phase == OPEN and self.family == F_MOSKA:
            singles = _bits(hand)
            room = min(self._room(), len(singles))  # no opening holds more than the hand
            plan.append((len(singles), lambda i, rng: SINGLE_ATTACK[singles[i]]))
            if room >= 2:
                options = _group_options(hand)
                ways = _completion_table(options, room)
                plan.append(
                    (ways[0][room] - 1, lambda i, rng: _unrank_groups(options, ways, room, i + 1))
                )
            if self.stock:
                plan.append((1, lambda i, rng: ATTACK_DECK_MOVE))
        elif phase in (THROW_IN, GIVE) and seat != self.defender:
            allowed = hand & _cards_of_ranks(self._played_ranks())
            if self.family == F_KAAVI and self.defender == self.dealer:
                allowed |= hand & TWOS_MASK  # K3
            cards = _bits(allowed)
            top = min(self._room(), len(cards))
            sizes = [comb(len(cards), k) for k in range(top + 1)]
            plan.append((sum(sizes[1:]), lambda i, rng: _pick_subset(cards, sizes, i, rng)))
            plan.append((1, lambda i, rng: PASS_MOVE))
        else:
            return None
        if self._may_exchange(seat):
            plan.append((1, lambda i, rng: EXCHANGE_MOVE))
        return plan

    def __repr__(self) -> str:
        state = "over" if self.is_over else f"seat {self.to_act} to {self.decision}"
        return f"<Game {self.rules.preset} {self.n} players, {state}>"


def _check_deck(faces: Sequence[int], rules: Rules) -> None:
    low = rules.lowest_rank * 4
    expected = set(range(low, NUM_CARDS))
    seen: set[int] = set()
    for card in faces:
        if card in seen:
            raise DealError(f"the deck holds {card_text(card)} twice (C4)")
        if card not in expected:
            raise DealError(f"{card_text(card)} is not a card of the {rules.preset} pack (C4)")
        seen.add(card)
    missing = expected - seen
    if missing:
        names = " ".join(card_text(c) for c in sorted(missing))
        raise DealError(f"the deck lacks {names} (C4): a stacked deal holds the whole pack")


def parse_deck(deck: Iterable[Any]) -> list[int]:
    """Card codes from card texts or codes (a stacked deck, top first)."""
    out = []
    for item in deck:
        out.append(parse_card(item) if isinstance(item, str) else int(item))
    return out
