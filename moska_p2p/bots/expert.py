"""``expert``: a heuristic that plays like a strong human, with an exact endgame.

Where ``greedy`` scores each move alone, ``expert`` judges a move by what it costs the hand
in the long run and what it makes the others do, from what its seat has seen:

- **Card values.** A card is worth keeping by its rank, a trump far more (it kills
  anything, C3); the weight of a trump falls as the stock empties, when shedding becomes the
  goal. Mustamaija's ``QS`` is a liability (MM4: it kills nothing), played as soon as it can
  be.
- **Cheap kills.** Every defence first matches all live cards to their cheapest killers
  (the lowest card of the suit that beats, a trump only when no other does): a kill outside
  that plan is scored down, and a trump is never spent while a plain card kills.
- **Take when it is cheaper.** The plan's cost is set against a take's (the cards picked
  up, more given in the giving round, the lost turn). Durak (D6) picks up the killers too,
  so a defence that cannot kill everything takes at once; in Moska (M12) and Mustamaija
  (MM5) killed pairs are discarded even on a take, so cheap kills are made before taking.
- **Card counting.** The cards nobody has seen are the ones not in this hand, out of play,
  on the table, known in another hand (picked up: D3, M22) or face up in the stock. From
  them the chance that the defender holds a card beating a given one is computed
  (hypergeometric over the defender's unknown cards); attacks, throw-ins and gifts prefer
  cards the defender cannot or likely cannot kill, most of all late in the game.
- **Shedding.** Openings prefer many low cards (rank groups, M7; one suit in Mustamaija,
  MM3); gifts to a defender who took (M12, D6) dump low cards; trumps and high cards are
  held back while the stock lasts. Self executions (M20, K5) and begging (K4) are taken when
  they trade expensive cards for cheap ones.
- **Exact endgame.** With the stock empty and few cards unknown to this seat, a search
  plays the game out: every seat picks the first move (in the heuristic's order) with which
  it does not lose, so a seat that can escape does. Each root move is tried on a few
  determinizations of the view (``View.determinize``; with nothing unknown, one is exact)
  and the move that avoids losing in the most of them is played. The search has a node
  budget and gives the decision back to the heuristic when it runs out, or when every move
  loses (a perfect opponent may not be perfect).

Only the seat's :class:`~moska_p2p.engine.View` is read, and the search uses only the
engine's documented Search API on determinized games; with a seed the bot is deterministic.
Loops: cards nobody at the table can kill may go round it for ever if every defender takes
them whole and passes them on; an attack laid three times lately is scored down, and a
defender facing an attack seen before kills what it can before taking.

Speed (``scripts/eval_bots.py``): a heuristic decision takes some 0.03 ms; an endgame search
at most its node budget (2000 nodes, 0.1-0.2 s on a loaded 2-core machine); over whole
4-player games the mean is 7-36 ms a decision, Durak's long endgames the dearest.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from moska_p2p.bots.api import BaseBot
from moska_p2p.bots.ismcts import score_moves
from moska_p2p.cards import NUM_CARDS, SPADES, make_card
from moska_p2p.engine import (
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
    Game,
    Move,
    View,
    make_rules,
)

# Rules.family values (the preset tables of RULES.md).
DURAK, MUSTAMAIJA = "durak", "mustamaija"
QUEEN_OF_SPADES = make_card(10, SPADES)

# The endgame search: cards unknown to this seat at most, determinizations tried, and the
# node budget of one decision (a node is one copied-and-played move, some 0.1 ms).
ENDGAME_HIDDEN = 6
ENDGAME_SAMPLES = 4
ENDGAME_NODES = 2000
# Moves tried at a node of the endgame search, the heuristic's best (take and pass always).
ENDGAME_WIDTH = 8
# The longest line the endgame search follows.
ENDGAME_DEPTH = 120


# A defence plan: live card -> its cheapest killer, the live cards nothing in hand kills,
# the plan's cost in kept value, and a take's cost.
_Plan = tuple[dict[int, int], list[int], float, float]


class _OutOfNodes(Exception):
    """The endgame search ran past its node budget."""


def _cards(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


class _Position:
    """What the heuristic needs of a view, computed once per decision."""

    __slots__ = (
        "defender",
        "family",
        "hand",
        "lateness",
        "low",
        "mustamaija",
        "pool",
        "pool_size",
        "repeats",
        "span",
        "stock",
        "trump",
        "view",
    )

    def __init__(self, view: View) -> None:
        rules = make_rules(view.preset)
        self.view = view
        self.family = rules.family
        self.mustamaija = rules.family == MUSTAMAIJA
        self.hand = view.hand_mask
        self.trump = view.trump_suit
        self.low = rules.lowest_rank
        self.span = max(1, 12 - rules.lowest_rank)
        self.stock = view.stock_size
        pack = rules.pack_size - rules.hand_size * view.players
        # 0 at the deal, 1 once the stock is empty.
        self.lateness = 1.0 - min(1.0, self.stock / max(1, pack))
        self.defender = view.defender
        seen = view.hand_mask | view.discard_mask
        for a, k in view.table_codes:
            seen |= 1 << a
            if k >= 0:
                seen |= 1 << k
        for mask in view.known_mask:
            seen |= mask
        for _, card in view.stock_known:
            seen |= 1 << card
        if view.trump_card_code >= 0 and view.stock_size > 0:
            seen |= 1 << view.trump_card_code
        pack_mask = ((1 << NUM_CARDS) - 1) ^ ((1 << (4 * rules.lowest_rank)) - 1)
        self.pool = pack_mask & ~seen
        self.pool_size = self.pool.bit_count()
        # How often each set of cards was laid as an attack lately: cards nobody can kill
        # can go round a table for ever if every seat passes them on whole.
        repeats: dict[int, int] = {}
        for _, move in view.history[-12 * view.players :]:
            if move[0] == ATTACK:
                key = 0
                for card in move[1]:
                    key |= 1 << card
                repeats[key] = repeats.get(key, 0) + 1
        self.repeats = repeats

    # -------------------------------------------------------------- card judgements

    def beats(self, b: int, a: int) -> bool:
        """C3 (and MM4): does ``b`` beat ``a``?"""
        if self.mustamaija and QUEEN_OF_SPADES in (a, b):
            return False
        if b & 3 == a & 3:
            return b > a
        return b & 3 == self.trump and self.trump >= 0

    def beaters(self, a: int) -> int:
        """The mask of every card that beats ``a``."""
        if self.mustamaija and a == QUEEN_OF_SPADES:
            return 0
        suit = a & 3
        mask = 0
        for r in range((a >> 2) + 1, 13):
            mask |= 1 << (r * 4 + suit)
        if self.trump >= 0 and suit != self.trump:
            for r in range(13):
                mask |= 1 << (r * 4 + self.trump)
        if self.mustamaija:
            mask &= ~(1 << QUEEN_OF_SPADES)
        return mask

    def keep(self, card: int) -> float:
        """How much the card is worth keeping: 0 (a low plain card) to 10 (the top trump)."""
        if self.mustamaija and card == QUEEN_OF_SPADES:
            return -6.0
        strength = ((card >> 2) - self.low) / self.span
        if card & 3 == self.trump and self.trump >= 0:
            # A trump's weight falls as the stock empties: then every card must go.
            return 4.0 + 6.0 * strength - 2.0 * self.lateness
        return 4.0 * strength * strength

    def p_beat(self, card: int, seat: int) -> float:
        """The chance that ``seat`` holds a card beating ``card``, from what is known."""
        view = self.view
        beaters = self.beaters(card)
        if view.known_mask[seat] & beaters:
            return 1.0
        hidden = view.hand_sizes[seat] - view.known_mask[seat].bit_count()
        total = self.pool_size
        good = (self.pool & beaters).bit_count()
        if hidden <= 0 or good == 0 or total <= 0:
            return 0.0
        miss = 1.0
        for i in range(min(hidden, total)):
            if total - i <= 0:
                break
            miss *= max(0.0, (total - good - i) / (total - i))
        return 1.0 - miss


class ExpertBot(BaseBot):
    """A strong human's heuristic with an exact endgame (see the module docstring).

    Parameters:
        seed: seeds the determinizations of the endgame search (the heuristic itself is
            deterministic).
        endgame: ``0`` turns the endgame search off (the plain heuristic, for comparison).
        nodes: the endgame search's node budget for one decision.
    """

    name = "expert"
    trusted_fast = True  # bounded work a move: the arena skips the timer for built-in bots

    def __init__(self, seed: int | None = None, endgame: int = 1, nodes: int = ENDGAME_NODES):
        if nodes < 1:
            raise ValueError(f"nodes must be at least 1, not {nodes}")
        self.rng = random.Random(seed)
        self.endgame = bool(endgame)
        self.nodes = int(nodes)
        self.searches = 0  # endgame searches that decided a move (for tests and tuning)
        self._left = 0  # nodes left to the running endgame search

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        if len(legal_moves) == 1:
            return legal_moves[0]
        pos = _Position(view)
        scores = self.scores(pos, legal_moves)
        order = sorted(range(len(legal_moves)), key=lambda i: -scores[i])
        ranked = [legal_moves[i] for i in order]
        if self.endgame and self._endgame_applies(view):
            move = self._solve(view, ranked)
            if move is not None:
                self.searches += 1
                return move
        best = ranked[0]
        if best[0] == TAKE:
            for move in legal_moves:
                if move[0] == DECK_KILL:
                    return move  # M22: a chance of a kill, and a take if it fails
        return best

    # ------------------------------------------------------------------ the heuristic

    def scores(self, pos: _Position, moves: Sequence[Move]) -> list[float]:
        """Every move's score for this position (higher is better)."""
        view = pos.view
        plan = self._kill_plan(pos) if view.decision == "defend" else None
        out = []
        for move in moves:
            out.append(self._score(pos, move, plan))
        return out

    def _kill_plan(self, pos: _Position) -> _Plan:
        """The cheapest killers of the live cards: (live card -> killer, live cards with no
        killer, the plan's cost, a take's cost). The hardest cards to kill are matched
        first."""
        live = [a for a, k in pos.view.table_codes if k < 0]
        hand = pos.hand
        plan: dict[int, int] = {}
        unkilled: list[int] = []
        cost = 0.0
        for a in sorted(live, key=lambda c: (c & 3 == pos.trump, c >> 2), reverse=True):
            options = [b for b in _cards(hand) if pos.beats(b, a)]
            if not options:
                unkilled.append(a)
                continue
            b = min(options, key=pos.keep)
            plan[a] = b
            hand &= ~(1 << b)
            cost += pos.keep(b)
        return plan, unkilled, cost, self._take_cost(pos)

    def _take_cost(self, pos: _Position) -> float:
        """What taking the live cards costs: each card picked up is a burden, heavier late
        (the stock no longer refills the others' hands to match), plus what the others
        are likely to give in the giving round (M12, D6) and the lost turn to attack."""
        view = pos.view
        live = [a for a, k in view.table_codes if k < 0]
        burden = 1.0 + 6.0 * pos.lateness
        cost = 0.0
        for a in live:
            cost += burden - 0.6 * pos.keep(a)
        if not pos.mustamaija:
            gives = min(view.room, 2) if view.room < 1 << 19 else 2
            cost += burden * 0.6 * gives
            if pos.family == DURAK:
                # D6: the killed cards and their killers come back to the hand too.
                for a, k in view.table_codes:
                    if k >= 0:
                        cost += burden - 0.6 * pos.keep(a) - 0.6 * pos.keep(k)
        return cost + 1.5

    def _score(
        self,
        pos: _Position,
        move: Move,
        plan: _Plan | None,
    ) -> float:
        kind, cards = move
        if kind == EXCHANGE:
            return 1000.0
        if kind == TRANSFER_SHOW:
            return 900.0
        if kind == TRANSFER:
            return 200.0 - 3.0 * pos.keep(cards[0])
        if plan is not None and kind in (KILL, TAKE, SELF, BEG, DECK_KILL):
            return self._defence_score(pos, move, plan)
        if kind == SELF:  # offered last in a throw-in round (M20) or by K5
            cost = pos.keep(cards[0]) + pos.keep(cards[1])
            return 6.0 + 4.0 * pos.lateness - cost
        if kind == PASS:
            return 0.0
        if kind == ATTACK_DECK:
            return -3.0 + 2.0 * pos.lateness
        if kind == ATTACK:
            return self._attack_score(pos, cards)
        if kind == DECK_KILL:
            return -1.0
        return 0.0

    def _defence_score(
        self, pos: _Position, move: Move, plan: _Plan
    ) -> float:
        kind, cards = move
        killers, unkilled, plan_cost, take_cost = plan
        durak = pos.family == DURAK
        if kind == TAKE:
            if unkilled and (durak or not killers):
                return 100.0  # nothing to gain by killing first
            if not unkilled and plan_cost > take_cost:
                return 100.0
            return 100.0 - take_cost if not unkilled else 0.0
        if kind == DECK_KILL:
            return -1.0
        if kind == KILL:
            a, b = cards
            cost = pos.keep(b)
            if unkilled:
                # The rest will be taken: kill only where it sheds a cheap card (M12, MM5),
                # any card once the stock is empty (cards a table cannot kill go round it
                # for ever if every defender takes them whole).
                if durak:
                    return -100.0
                shed = 2.5 + (6.0 if pos.stock == 0 and not pos.mustamaija else 0.0)
                attack = 0
                for x, _ in pos.view.table_codes:
                    attack |= 1 << x
                shed += 4.0 * max(0, pos.repeats.get(attack, 0) - 1)  # a loop to break
                return (1.0 if killers.get(a) == b else -1.0) + shed - cost
            if plan_cost > take_cost:
                return -100.0
            # Follow the plan; kill the costliest planned card last (its killer may yet be
            # spared by a take when more cards arrive).
            if killers.get(a) == b:
                return 100.0 + 20.0 - cost
            return 100.0 - 2.0 * cost
        if kind == SELF:
            cost = pos.keep(cards[0]) + pos.keep(cards[1])
            return 100.0 + 4.0 + 4.0 * pos.lateness - 2.0 * cost
        if kind == BEG:
            a, b = cards
            old = next((k for x, k in pos.view.table_codes if x == a), -1)
            gain = pos.keep(old) - pos.keep(b) if old >= 0 else -1.0
            return 100.0 + 30.0 + 5.0 * gain if gain > 0.5 else -50.0
        return 0.0

    def _attack_score(self, pos: _Position, cards: tuple[int, ...]) -> float:
        view = pos.view
        key = 0
        for c in cards:
            key |= 1 << c
        repeated = pos.repeats.get(key, 0)
        if pos.mustamaija and QUEEN_OF_SPADES in cards:
            return 500.0  # MM4: nothing beats it, and at the end it loses
        if view.decision == "twos":
            return 50.0 + 10.0 * len(cards)  # K1: the twos are the worst cards to hold
        defender = pos.defender
        opening = view.decision == "open"
        giving = view.decision == "give"
        late = pos.lateness
        hand_after = pos.hand.bit_count() - len(cards)
        score = 0.0
        for c in cards:
            keep = pos.keep(c)
            if giving:
                # The defender picks up everything: the card is simply gone from this hand.
                score += 2.5 + 2.0 * late - keep
                continue
            p = pos.p_beat(c, defender) if defender is not None and defender >= 0 else 0.5
            # A card the defender cannot kill is one more for it to take.
            score += 3.0 + 1.5 * late - keep + (1.0 + 3.0 * late) * (1.0 - p)
        if opening:
            score += 3.0  # an opening must be made: it is judged against the other openings
            if hand_after == 0 and pos.stock == 0:
                score += 300.0  # laying every last card: out at once (M13)
        elif hand_after == 0 and pos.stock == 0:
            score += 50.0
        excess = repeated - 2  # a set laid three times lately: a loop to break
        return score - 4.0 * excess * excess if excess > 0 else score

    # ------------------------------------------------------------------ the endgame

    def _endgame_applies(self, view: View) -> bool:
        if view.stock_size != 0 or view.decision in ("waiting", "over"):
            return False
        hidden = 0
        for seat in range(view.players):
            if seat != view.seat:
                hidden += view.hand_sizes[seat] - view.known_mask[seat].bit_count()
        return hidden <= ENDGAME_HIDDEN

    def _solve(self, view: View, ranked: list[Move]) -> Move | None:
        """The root move that avoids losing in most determinizations, or None (budget
        spent, or every move loses: then the heuristic decides)."""
        me = view.seat
        hidden = sum(
            view.hand_sizes[s] - view.known_mask[s].bit_count()
            for s in range(view.players)
            if s != me
        )
        samples = 1 if hidden == 0 else ENDGAME_SAMPLES
        try:
            games = [view.determinize(self.rng) for _ in range(samples)]
        except ValueError:
            return None
        self._left = self.nodes
        candidates = ranked[:ENDGAME_WIDTH] + [
            m for m in ranked[ENDGAME_WIDTH:] if m[0] in (TAKE, PASS)
        ]
        wins = [0] * len(candidates)
        try:
            for i, move in enumerate(candidates):
                for game in games:
                    child = game.copy()
                    child.play(move)
                    if me not in self._losers(child, 0):
                        wins[i] += 1
                if samples == 1 and wins[i]:
                    return move
        except _OutOfNodes:
            return None
        best = max(wins)
        if best == 0:
            return None
        return candidates[wins.index(best)]

    def _losers(self, game: Game, depth: int) -> tuple[int, ...]:
        """The losers if every seat plays the first move (in the heuristic's order) that
        does not lose for it, by exhaustive search. A line longer than ``ENDGAME_DEPTH``
        (cards can go round a table for ever) gives up the whole search."""
        self._left -= 1
        if self._left < 0 or depth > ENDGAME_DEPTH:
            raise _OutOfNodes
        seat = game.to_act_seat
        if seat < 0:
            return game.loser_seats
        moves = game.legal_moves()
        if len(moves) > 1:
            scores = score_moves(game, moves)
            order = sorted(range(len(moves)), key=lambda i: -scores[i])
            chosen = order[:ENDGAME_WIDTH] + [
                i for i in order[ENDGAME_WIDTH:] if moves[i][0] in (TAKE, PASS)
            ]
            moves = [moves[i] for i in chosen]
        first: tuple[int, ...] | None = None
        for move in moves:
            child = game.copy()
            child.play_unchecked(move)
            losers = self._losers(child, depth + 1)
            if seat not in losers:
                return losers
            if first is None:
                first = losers
        assert first is not None
        return first
