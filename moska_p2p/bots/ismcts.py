"""Information-set Monte Carlo tree search (ISMCTS), the strong bot.

Single-observer ISMCTS (Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree
Search", IEEE TCIAIG 2012): one tree over the moves seen from this seat's information set.
Each iteration

1. samples a *determinization*: the hidden cards (other hands' unknown cards, the face-down
   stock) dealt at random where they could be, consistently with all this seat has seen
   (``view.determinize(rng)``, a full-information :class:`~moska_p2p.engine.Game`); with
   ``infer="on"`` the hidden hands are dealt weighted by what the other seats' moves
   revealed (:mod:`moska_p2p.bots.inference`: a take with a killer in hand, a pass with a
   rank that could have been thrown in, a dear kill when a cheap one existed);
2. descends the tree from the root, choosing among the children whose moves are legal in this
   determinization by UCB1 with *availability counts* (a child's exploration term counts the
   iterations in which it was available, not the parent's visits) plus a progressive bias
   from the heuristic that fades as the child is visited;
3. expands one new child (the untried move the heuristic likes best);
4. plays the determinization out with a fast heuristic policy: by default ``depth`` (8)
   moves of it, after which the learned value network (:mod:`moska_p2p.bots.network`) says
   how likely each seat is to lose from there; with ``value="playout"`` to the end;
5. backs the result up: at each node the reward is that of the seat that made the move
   leading to it, 1 when that seat does not lose (its team, in ``durak-teams``), else 0,
   or the network's chance that it does not lose.

Why the network by default: a leaf scored after 8 moves costs a fraction of a whole playout
(about 4 times the iterations in the same time) and is a smoothed estimate rather than one
sample. At 0.1 s a move, one such bot against three that play their playouts out loses
14.0% [10.9, 17.7] of 400 four-player Durak games (par 25%); docs/LEARNING.md, "The learned
evaluation", has every figure and its command.

Moves are pruned to the ``width`` best by the heuristic at every node (an opening from a big
Moska hand has hundreds of legal moves; a search of a few hundred iterations cannot tell
them apart, and most are plainly bad), ``take`` and ``pass`` always kept as the safe
fallbacks. Where a decision has thousands of legal moves (subsets of a big hand with no
count limit, as in ``turamoska-pyhaselka``) the list is not even built: a short list of
sensible moves stands for it (:func:`search_moves`). The move played is the root child most
visited.

Why heuristic playouts: with 0.1 s a move the engine allows some 100 to 400 iterations, and
uniformly random playouts say little about a position (measured: against three ``greedy``
bots in 4-player Moska, random playouts lose 14% of games, heuristic ones about 5%).

Time: the budget is checked before every iteration (the next one must fit twice over in
85% of the budget, judged by the slowest so far) and every 32 playout moves (a playout
still running at 95% of the budget is dropped); the cyclic garbage collector is paused
during the search, so that a full collection (its cost grows with the process's heap, as
in a long arena run) never lands inside the budget. A machine too busy to give the process
the CPU can still make a move late: the budget is wall-clock time.

Engine access: only the Search API that ``moska_p2p.engine``'s docstring documents, and
imports from ``moska_p2p.engine``, ``moska_p2p.cards`` and ``moska_p2p.bots.api`` only, so
that this file is a model for search bots written outside the package and the engine can
change its internals under it (``tests/bots/test_ismcts.py`` checks both). Moves that come
from ``legal_moves()`` or ``random_move()`` of the very state they are played in (tree
descent, playouts) go through ``play_unchecked``: re-validating them is wasted work on the
hot path. A built move (:func:`_bounded_moves`) is checked with ``play`` on a copy first.
"""

from __future__ import annotations

import gc
import math
import random
from collections.abc import Sequence
from pathlib import Path
from time import perf_counter

from moska_p2p.bots.api import BaseBot
from moska_p2p.bots.beliefs import DEFAULT_STRENGTH, Beliefs
from moska_p2p.bots.inference import WeightedDealer
from moska_p2p.bots.network import ValueNet, default_network, load_network, position_features
from moska_p2p.bots.policy import PolicyNet, default_policy, load_policy, move_rows
from moska_p2p.cards import RANK_MASKS, SPADES, SUIT_MASKS, make_card
from moska_p2p.engine import (
    ATTACK,
    ATTACK_DECK,
    BEG,
    DECK_KILL,
    EXCHANGE,
    F_DURAK,
    F_MUSTAMAIJA,
    GIVE,
    KILL,
    OPEN,
    PASS,
    SELF,
    TAKE,
    THROW_IN,
    TRANSFER,
    TRANSFER_SHOW,
    Game,
    IllegalMove,
    Move,
    View,
    attack_from_mask,
)

QUEEN_OF_SPADES = make_card(10, SPADES)
# Above this many legal moves a decision's list is not built (see ``search_moves``).
MAX_LISTED_MOVES = 2000
# Hands up to this size never have more than MAX_LISTED_MOVES moves (2**10 subsets).
_SMALL_HAND = 10


# UCB1's exploration constant for each kind of leaf value. 0.7 was tuned for playouts (a
# reward of 0 or 1); with the network's probabilities, 0.4 lost 13.0% of 200 4-player durak
# games (seed 11) against three playout bots, where 0.7 lost 16.0% of the same deals.
PLAYOUT_EXPLORATION = 0.7
NET_EXPLORATION = 0.4


def _value(card: int, trump: int) -> int:
    """How much a card is worth keeping: its rank, plus 13 for a trump."""
    return (card >> 2) + (13 if card & 3 == trump else 0)


def score_move(game: Game, move: Move) -> float:
    """The heuristic's score of ``move`` for the seat to act (higher is better).

    The same judgement as the built-in ``greedy`` bot, read off the game directly (no view is
    built, so it is cheap enough for playouts): kill with the lowest card that beats, open
    and throw in low cards in groups, take rather than spend a high trump early.
    """
    return score_moves(game, (move,))[0]


def score_moves(game: Game, moves: Sequence[Move]) -> list[float]:
    """:func:`score_move` of each of ``moves``, reading the state once for all of them:
    scoring is most of a playout's time, and the state is the same for every move."""
    trump = game.trump
    early = game.stock_size > 6
    mustamaija = game.family == F_MUSTAMAIJA
    adding = game.phase in (THROW_IN, GIVE)
    scores: list[float] = []
    append = scores.append
    for kind, cards in moves:
        if kind in (KILL, BEG):
            killer = cards[1]
            cost = (killer >> 2) + (13 if killer & 3 == trump else 0)
            if early and killer & 3 == trump and killer >> 2 >= 9:
                append(-50.0 - cost)
            else:
                append(100.0 - cost)
        elif kind == ATTACK:
            if mustamaija and QUEEN_OF_SPADES in cards:
                append(500.0)  # MM4: nothing beats it
                continue
            total = 0
            trumps = 0
            for c in cards:
                if c & 3 == trump:
                    trumps += 1
                    total += (c >> 2) + 13
                else:
                    total += c >> 2
            if trumps and early and adding:
                append(-30.0)  # keep trumps rather than feed them to the defender
            else:
                append(40.0 + 8.0 * len(cards) - total / len(cards) - 12.0 * trumps)
        elif kind == SELF:
            append(120.0 - _value(cards[0], trump) - _value(cards[1], trump))
        elif kind == TRANSFER:
            append(110.0 - _value(cards[0], trump))
        else:
            append(_FIXED_SCORE.get(kind, 0.0))
    return scores


# The moves whose score does not depend on their cards (PASS, and anything else, is 0).
_FIXED_SCORE = {
    EXCHANGE: 1000.0,
    TRANSFER_SHOW: 115.0,
    DECK_KILL: -10.0,
    TAKE: -20.0,
    ATTACK_DECK: -5.0,
}


def search_moves(game: Game, rng: random.Random) -> list[Move]:
    """The moves the search and the playouts consider: every legal move, except where the
    list would be huge (a throw-in of many cards with no count limit, an opening from a big
    hand, where the moves are subsets of a hand and number up to 2**n). There, a short list
    of the sensible moves is built instead (see :func:`_bounded_moves`)."""
    seat = game.to_act_seat
    phase = game.phase
    if (
        (phase == OPEN or (phase in (THROW_IN, GIVE) and seat != game.defender))
        and game.hand_size(seat) > _SMALL_HAND
        and game.count_legal_moves() > MAX_LISTED_MOVES
    ):
        return _bounded_moves(game, rng)
    return game.legal_moves()


def _lowest(mask: int, trump: int, count: int) -> int:
    """The ``count`` cards of ``mask`` worth least (non-trumps first, low ranks first)."""
    cards = sorted(
        (c for c in range(52) if mask >> c & 1), key=lambda c: ((c & 3) == trump, c >> 2)
    )
    out = 0
    for c in cards[:count]:
        out |= 1 << c
    return out


def _bounded_moves(game: Game, rng: random.Random) -> list[Move]:
    """A few dozen legal moves standing for a decision with a huge move set: the cheap kinds
    (pass, exchange, attack deck) listed, plus attacks built from the heuristic's point of
    view (single cards, whole rank groups, the lowest cards in growing numbers) and a few
    uniformly sampled ones. Every built move is checked on a copy; moves the engine would
    refuse are dropped."""
    seat = game.to_act_seat
    hand = game.hand_mask(seat)
    trump = game.trump
    room = game.room()
    moves: list[Move] = []
    for kind in ("pass", "exchange", "attack deck"):
        moves.extend(game.legal_moves(kind))
    sampled: set[Move] = set()
    addable = 0
    for _ in range(24):
        move = game.random_move(rng)
        if move[0] == ATTACK:
            sampled.add(move)
            for c in move[1]:
                addable |= 1 << c
    masks: set[int] = set()
    if game.phase == OPEN:
        masks.update(1 << c for c in range(52) if hand >> c & 1)
        if game.family == F_MUSTAMAIJA:
            for suit in range(4):
                cards = hand & SUIT_MASKS[suit]
                for k in range(2, min(room, cards.bit_count()) + 1):
                    masks.add(_lowest(cards, trump, k))
        elif game.family != F_DURAK:
            groups = [hand & RANK_MASKS[r] for r in range(13)]
            groups = [g for g in groups if g.bit_count() >= 2]
            union = 0
            trumps = SUIT_MASKS[trump] if trump >= 0 else 0
            for g in sorted(groups, key=lambda g: (bool(g & trumps), g)):
                if g.bit_count() <= room:
                    masks.add(g)
                if (union | g).bit_count() <= room:
                    union |= g
                    masks.add(union)
    else:  # a throw-in or giving round: subsets of the cards that may be added
        for k in range(1, min(room, addable.bit_count()) + 1):
            masks.add(_lowest(addable, trump, k))
        masks.update(1 << c for c in range(52) if addable >> c & 1)
    for mask in sorted(masks):
        move = attack_from_mask(mask)
        try:
            game.copy().play(move)
        except IllegalMove:
            continue
        moves.append(move)
    moves.extend(sorted(sampled)[:8])
    return list(dict.fromkeys(moves))


def policy_move(game: Game, moves: Sequence[Move]) -> Move:
    """The heuristic's choice among ``moves`` (the first best)."""
    if len(moves) == 1:
        return moves[0]
    scores = score_moves(game, moves)
    return moves[scores.index(max(scores))]


class _Node:
    """A tree node: the move that led here, who made it, and its statistics."""

    __slots__ = ("avail", "bias", "children", "priors", "seat", "visits", "wins")

    def __init__(self, seat: int, bias: float) -> None:
        self.seat = seat  # the seat that made the move leading to this node
        self.bias = bias  # heuristic prior in [0, 1]
        self.visits = 0
        self.wins = 0.0
        self.avail = 0
        self.children: dict[Move, _Node] = {}
        self.priors: dict[Move, float] | None = None  # the policy's, once asked here


class IsmctsBot(BaseBot):
    """Single-observer ISMCTS with heuristic playouts (see the module docstring).

    Parameters:
        seed: seeds the bot's random generator (determinizations, tie-breaks).
        time: the time budget of one move in seconds (default 0.1), measured with
            ``time.perf_counter``; the search stops early enough to answer within it.
        iterations: when given, search exactly this many iterations and ignore ``time``:
            with a seed the bot's moves are then reproducible (use it for tests).
        exploration: the UCB1 exploration constant (rewards are in [0, 1]). By default
            0.4 with ``value="net"`` and 0.7 with ``value="playout"``: a network's leaf value
            is a probability, far less spread than a playout's 0 or 1, so the same constant
            would spend too many iterations on moves the averages already rank low.
        width: how many moves, the heuristic's best, are searched at a node.
        bias: weight of the heuristic's progressive bias, ``bias * prior / (visits + 1)``.
        max_playout: playouts longer than this many moves are scored from hand sizes.
        playout: ``"heuristic"`` (the default: every seat plays the heuristic's move) or
            ``"random"`` (uniformly random moves: plain ISMCTS, much weaker here, kept for
            comparison).
        infer: ``"on"`` deals the determinizations weighted by what the other seats' moves
            revealed (:mod:`moska_p2p.bots.inference`); ``"off"`` (the default) deals them
            uniformly (``View.determinize``).
        value: ``"net"`` (the default) plays ``depth`` moves of the playout and then asks
            the learned value network (:mod:`moska_p2p.bots.network`) how likely each seat is
            to lose, which costs less than the rest of the playout and is less noisy than one
            sample of it; ``"playout"`` scores a leaf by playing it out to the end (the bot
            before the network, kept for comparison).
        depth: with ``value="net"``, the playout moves played before the network is asked.
        weights: with ``value="net"``, a weight file other than the shipped one.
        beliefs: 1 deals the determinizations from :mod:`moska_p2p.bots.beliefs` (the
            inference's evidence, the laying moves' too, sharpened); 0 (the default) does not.
        belief_strength: with ``beliefs=1``, the power the beliefs' weights are raised to
            (1: the evidence's own factors; more: trusted more).
        prior: 1 takes the root's move priors (the order in which its moves are first tried
            and the progressive bias) from the policy network (:mod:`moska_p2p.bots.policy`)
            instead of the heuristic's ranking, asked once a decision; 2 takes every node's
            from it (asked again wherever a node meets moves it has not met, about half the
            iterations per second); 0 (the default) never asks it.
        prior_weights: with ``prior=1``, a policy weight file other than the shipped one.
        puct: with ``prior=1`` and ``puct`` above 0, the prior's term is PUCT's
            ``puct * prior * sqrt(available) / (visits + 1)`` instead of the progressive bias.
    """

    name = "ismcts"

    def __init__(
        self,
        seed: int | None = None,
        time: float = 0.1,
        iterations: int | None = None,
        exploration: float | None = None,
        width: int = 6,
        bias: float = 1.0,
        max_playout: int = 1000,
        playout: str = "heuristic",
        infer: str | bool = "off",
        value: str = "net",
        depth: int = 8,
        weights: str | None = None,
        beliefs: int | str | bool = 0,
        belief_strength: float = DEFAULT_STRENGTH,
        prior: int | str = 0,
        prior_weights: str | None = None,
        puct: float = 0.0,
    ) -> None:
        if time <= 0:
            raise ValueError(f"time must be positive, not {time}")
        if iterations is not None and iterations < 1:
            raise ValueError(f"iterations must be at least 1, not {iterations}")
        if width < 1:
            raise ValueError(f"width must be at least 1, not {width}")
        if playout not in ("heuristic", "random"):
            raise ValueError(f'playout must be "heuristic" or "random", not "{playout}"')
        if infer not in ("on", "off", True, False):
            raise ValueError(f'infer must be "on" or "off", not "{infer}"')
        if value not in ("playout", "net"):
            raise ValueError(f'value must be "playout" or "net", not "{value}"')
        if depth < 0:
            raise ValueError(f"depth must be at least 0, not {depth}")
        self.beliefs = _switch("beliefs", beliefs)
        if belief_strength <= 0:
            raise ValueError(f"belief_strength must be positive, not {belief_strength}")
        self.belief_strength = float(belief_strength)
        self.policy: PolicyNet | None = None
        if prior not in (0, 1, 2, "0", "1", "2", False, True):
            raise ValueError(f'prior must be 0, 1 (the root) or 2 (every node), not "{prior}"')
        self.prior_everywhere = prior in (2, "2")
        if prior not in (0, "0", False):
            self.policy = (
                default_policy() if prior_weights is None else load_policy(Path(prior_weights))
            )
        if puct < 0:
            raise ValueError(f"puct must be at least 0, not {puct}")
        self.puct = float(puct)
        self.last_visits: dict[Move, int] = {}  # the root's moves after the last search
        self.net: ValueNet | None = None
        if value == "net":
            self.net = default_network() if weights is None else load_network(Path(weights))
        self.depth = int(depth)
        self.infer = infer in ("on", True)
        self.rng = random.Random(seed)
        self.random_playout = playout == "random"
        self.time = float(time)
        self.iterations = iterations
        if exploration is None:
            exploration = NET_EXPLORATION if self.net is not None else PLAYOUT_EXPLORATION
        if exploration < 0:
            raise ValueError(f"exploration must be at least 0, not {exploration}")
        self.exploration = float(exploration)
        self.width = int(width)
        self.bias = float(bias)
        self.max_playout = int(max_playout)
        self.last_iterations = 0  # iterations of the last search (for tuning and tests)
        self.max_elapsed = 0.0  # longest time a choose() took (for tuning and tests)

    # ------------------------------------------------------------------ the bot API

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        start = perf_counter()
        if len(legal_moves) == 1:
            return legal_moves[0]
        # The tree holds no reference cycles, so reference counting frees it; pausing the
        # cyclic collector keeps its pauses out of the timed search.
        collecting = gc.isenabled()
        gc.disable()
        try:
            move = self._search(view, legal_moves, start)
        finally:
            if collecting:
                gc.enable()
        elapsed = perf_counter() - start
        if elapsed > self.max_elapsed:
            self.max_elapsed = elapsed
        return move

    # ------------------------------------------------------------------ the search

    def candidates(self, game: Game) -> list[tuple[Move, float, float]]:
        """The moves searched at this state, best first, each with its heuristic prior in
        [0, 1] (from its rank) and its heuristic score."""
        moves = search_moves(game, self.rng)
        scored = sorted((-s, i) for i, s in enumerate(score_moves(game, moves)))
        width = self.width
        chosen = scored[:width]
        if len(scored) > width:
            # take and pass are always kept: the safe answers a search must be able to weigh.
            for s, i in scored[width:]:
                if moves[i][0] in (TAKE, PASS):
                    chosen.append((s, i))
        k = len(chosen)
        return [(moves[i], 1.0 - r / k, -s) for r, (s, i) in enumerate(chosen)]

    def _policy_priors(
        self, policy: PolicyNet, game: Game, cands: list[tuple[Move, float, float]]
    ) -> list[float]:
        """The policy network's priors of ``cands``, scaled so that the likeliest is 1 (on
        the heuristic ranking's scale, so that ``bias`` means the same with either)."""
        rows = move_rows(game, [m for m, _, _ in cands], [sc for _, _, sc in cands])
        priors = policy.priors(rows)
        top = float(priors.max())
        return [float(p) / top for p in priors]

    def _search(self, view: View, legal_moves: Sequence[Move], start: float) -> Move:
        me = view.seat
        rng = self.rng
        root = _Node(me, 0.0)
        budget = self.iterations
        # Stop with a margin: the next iteration must fit twice over in what is left of 85%
        # of the budget (an iteration's cost varies with the playout's length).
        deadline = start + self.time * 0.85
        hard_deadline = start + self.time * 0.95
        slowest = 0.0
        done = 0
        c = self.exploration
        bias = self.bias
        # The history is read once per decision; each iteration then deals from the weights.
        if self.beliefs:
            deal = Beliefs(view, self.belief_strength).determinize
        elif self.infer:
            deal = WeightedDealer(view).determinize
        else:
            deal = view.determinize
        net = self.net
        policy = self.policy
        puct = self.puct
        while True:
            if budget is not None:
                if done >= budget:
                    break
                t0 = 0.0
            else:
                t0 = perf_counter()
                if t0 + 2.0 * slowest > deadline:
                    break
            game = deal(rng)
            node = root
            path = [root]
            # Selection and expansion.
            while game.to_act_seat >= 0:
                seat = game.to_act_seat
                cands = self.candidates(game)
                children = node.children
                best: _Node | None = None
                best_move: Move | None = None
                untried: tuple[Move, float] | None = None
                best_value = -1.0
                for move, prior, _ in cands:
                    child = children.get(move)
                    if child is None:
                        if untried is None:
                            untried = (move, prior)
                        continue
                    child.avail += 1
                    if untried is None:
                        if puct:
                            term = puct * child.bias * math.sqrt(child.avail) / (child.visits + 1)
                        else:
                            term = bias * child.bias / (child.visits + 1)
                        value = (
                            child.wins / child.visits
                            + c * math.sqrt(math.log(child.avail) / child.visits)
                            + term
                        )
                        if value > best_value:
                            best, best_move, best_value = child, move, value
                if (
                    untried is not None
                    and policy is not None
                    and (node is root or self.prior_everywhere)
                ):
                    # The network's likeliest untried move is tried first, with its prior.
                    # A node's priors are asked once (its moves barely change from one
                    # determinization to the next), again only for a move not seen there.
                    known = node.priors
                    if known is None or any(m not in known for m, _, _ in cands):
                        known = dict(zip(
                            [m for m, _, _ in cands], self._policy_priors(policy, game, cands),
                            strict=True,
                        ))  # fmt: skip
                        node.priors = known
                    untried = max(
                        ((m, known[m]) for m, _, _ in cands if m not in children),
                        key=lambda item: item[1],
                    )
                if untried is not None:
                    move, prior = untried
                    child = _Node(seat, prior)
                    child.avail = 1
                    children[move] = child
                    game.play_unchecked(move)
                    path.append(child)
                    break
                assert best is not None and best_move is not None
                game.play_unchecked(best_move)
                node = best
                path.append(best)
            # Playout (with a value network: its first ``depth`` moves, then the net).
            steps = 0
            limit = self.max_playout if net is None else self.depth
            timed_out = False
            random_playout = self.random_playout
            while game.to_act_seat >= 0 and steps < limit:
                if random_playout:
                    game.play_unchecked(game.random_move(rng))
                else:
                    game.play_unchecked(policy_move(game, search_moves(game, rng)))
                steps += 1
                if budget is None and not steps & 31 and perf_counter() > hard_deadline:
                    timed_out = True  # a rare, very long playout: drop it and answer now
                    break
            if timed_out:
                break
            if game.to_act_seat < 0 or net is None:
                losers = list(game.loser_seats) if game.to_act_seat < 0 else _likely_losers(game)
                for n in path[1:]:
                    n.visits += 1
                    if n.seat not in losers:
                        n.wins += 1.0
            else:
                seat = game.to_act_seat
                seats = game.n
                chances = net.evaluate(position_features(game, seat))
                for n in path[1:]:
                    n.visits += 1
                    n.wins += 1.0 - float(chances[(n.seat - seat) % seats])
            done += 1
            if budget is None:
                spent = perf_counter() - t0
                if spent > slowest:
                    slowest = spent
        self.last_iterations = done
        self.last_visits = {move: child.visits for move, child in root.children.items()}
        legal = set(legal_moves)
        best_move_root: Move | None = None
        most = -1
        for move, child in root.children.items():
            if move in legal and child.visits > most:
                best_move_root, most = move, child.visits
        if best_move_root is None:  # no iteration fitted in the budget: the heuristic answers
            return policy_move(view.determinize(rng), legal_moves)
        return best_move_root


def _switch(name: str, value: int | str | bool) -> bool:
    """An on/off option as a bot specification writes it (``beliefs=1``, ``prior=on``)."""
    if value in (1, True, "1", "on"):
        return True
    if value in (0, False, "0", "off"):
        return False
    raise ValueError(f'{name} must be 1 or 0 ("on" or "off"), not "{value}"')


def _likely_losers(game: Game) -> tuple[int, ...]:
    """For a playout cut short: the seat holding the most cards (its team in team play)."""
    sizes = game.hand_sizes()
    worst = max(range(game.n), key=lambda s: sizes[s])
    if game.rules.teams:
        return tuple(s for s in range(game.n) if s % 2 == worst % 2)
    return (worst,)
