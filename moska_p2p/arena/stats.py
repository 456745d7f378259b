"""Statistics of an arena run: loss rates with Wilson intervals, forfeits, OpenSkill ratings.

A bot is identified by its specification as written in the bot list (``random``,
``bots/my_bot.py:MyBot``); two seats with the same specification are one bot with two seats,
and its games and losses count per seat (``random`` x3 over 100 games is 300 seat-games), so
its loss rate stays comparable with chance (1 / players).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

Z95 = 1.959963984540054  # the standard normal quantile of 0.975


def wilson_interval(losses: int, games: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% with the default ``z``).

    Chosen over the normal ("Wald") interval p +- z*sqrt(p(1-p)/n) because it stays inside
    [0, 1] and keeps its coverage for rates near 0 or 1 and for small samples, which is where
    arena results live (a strong bot loses rarely). With p = k/n:

        centre = (p + z^2 / 2n) / (1 + z^2 / n)
        half   = z / (1 + z^2 / n) * sqrt(p (1 - p) / n + z^2 / 4n^2)

    No games give the uninformative interval (0, 1).
    """
    if games <= 0:
        return (0.0, 1.0)
    if not 0 <= losses <= games:
        raise ValueError(f"{losses} losses in {games} games")
    p = losses / games
    z2 = z * z
    denominator = 1 + z2 / games
    centre = (p + z2 / (2 * games)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / games + z2 / (4 * games * games))
    return (max(0.0, centre - half), min(1.0, centre + half))


class GameOutcome(NamedTuple):
    """One arena game, reduced to what the statistics need (cheap to send between processes).

    ``entries[seat]`` is the index in the bot list of the bot at that seat.
    """

    game: int  # its index in the run
    entries: tuple[int, ...]
    losers: tuple[int, ...]
    forfeit: int | None
    reason: str
    unfinished: bool
    moves: int
    # Only through the protocol (``--p2p``): the kind of the verdict that stopped the game
    # ("" if none), the seats it named, and the seats of honest peers whose outcome (final
    # state hash and losers, or verdict) differs from the game's.
    verdict: str = ""
    named: tuple[int, ...] = ()
    disagreeing: tuple[int, ...] = ()


@dataclass
class BotStats:
    """The tally of one bot (one specification) over an arena run."""

    name: str
    seats: int  # seats it holds at each table
    games: int = 0  # finished seat-games (a forfeit finishes a game)
    losses: int = 0
    forfeits: int = 0
    forfeit_reasons: Counter[str] = field(default_factory=Counter)
    unfinished: int = 0  # games it sat in that hit the move cap
    total_moves: int = 0  # summed length of its finished games, each game once
    named: int = 0  # seats of its named by a verdict (--p2p)
    disagreements: int = 0  # seats of its whose peer disagreed with the others (--p2p)

    @property
    def loss_rate(self) -> float:
        return self.losses / self.games if self.games else 0.0

    @property
    def ci95(self) -> tuple[float, float]:
        return wilson_interval(self.losses, self.games)

    @property
    def mean_moves(self) -> float:
        """Mean length (moves by every seat) of the finished games this bot sat in."""
        tables = self.games // self.seats if self.seats else 0
        return self.total_moves / tables if tables else 0.0

    def to_json(self, p2p: bool = False) -> dict[str, Any]:
        """Its figures as data; ``p2p`` adds the protocol's two (an engine-only run has no
        peers to judge or to disagree)."""
        low, high = self.ci95
        extra = {"verdicts": self.named, "disagreements": self.disagreements} if p2p else {}
        data: dict[str, Any] = {
            "name": self.name,
            "seats": self.seats,
            "games": self.games,
            "losses": self.losses,
            "loss_rate": self.loss_rate,
            "ci95": [low, high],
            "mean_moves": self.mean_moves,
            "forfeits": self.forfeits,
            "forfeit_reasons": dict(sorted(self.forfeit_reasons.items())),
            "unfinished": self.unfinished,
        }
        return data | extra


def tally(bots: Sequence[str], outcomes: Sequence[GameOutcome]) -> list[BotStats]:
    """Per-bot statistics, in the order each bot is first named in ``bots``."""
    names = list(dict.fromkeys(bots))
    stats = {name: BotStats(name, seats=bots.count(name)) for name in names}
    for game in outcomes:
        in_game = {bots[e] for e in game.entries}
        for seat in game.named:
            if 0 <= seat < len(game.entries):
                stats[bots[game.entries[seat]]].named += 1
        for seat in game.disagreeing:
            stats[bots[game.entries[seat]]].disagreements += 1
        if game.unfinished:
            for name in in_game:
                stats[name].unfinished += 1
            continue
        for name in in_game:
            stats[name].total_moves += game.moves
        for seat, entry in enumerate(game.entries):
            s = stats[bots[entry]]
            s.games += 1
            if seat in game.losers:
                s.losses += 1
            if seat == game.forfeit:
                s.forfeits += 1
                s.forfeit_reasons[game.reason] += 1
    return [stats[name] for name in names]


@dataclass(frozen=True)
class Rating:
    """An OpenSkill (Plackett-Luce) rating; ``ordinal`` = mu - 3 sigma, the usual
    conservative score to rank by."""

    name: str
    mu: float
    sigma: float

    @property
    def ordinal(self) -> float:
        return self.mu - 3 * self.sigma

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "mu": self.mu, "sigma": self.sigma, "ordinal": self.ordinal}


def rate(bots: Sequence[str], outcomes: Sequence[GameOutcome]) -> list[Rating]:
    """OpenSkill Plackett-Luce ratings from each finished game's finishing order.

    The order is the one the arena knows without replaying: the loser (or losing team, or a
    forfeiting seat) last, every other seat tied ahead of it; a draw ties everyone. Games
    are rated in game order, so the ratings are as reproducible as the games. A bot with
    several seats at one table is rated once per seat from its rating before the game, and
    its new rating is the mean of those seats' updated mu and sigma (the seats are one bot;
    summing their updates would count one table several times). Unfinished games are not
    rated. Best first.
    """
    from openskill.models import PlackettLuce  # imported here: only runs with 3+ kinds

    model = PlackettLuce()
    names = list(dict.fromkeys(bots))
    current = {name: model.rating(name=name) for name in names}
    for game in outcomes:
        if game.unfinished:
            continue
        seat_names = [bots[e] for e in game.entries]
        teams = [[model.rating(mu=current[n].mu, sigma=current[n].sigma)] for n in seat_names]
        ranks: list[float] = [2.0 if s in game.losers else 1.0 for s in range(len(teams))]
        updated = model.rate(teams, ranks=ranks)
        sums: dict[str, list[float]] = {}
        for name, team in zip(seat_names, updated, strict=True):
            acc = sums.setdefault(name, [0.0, 0.0, 0.0])
            acc[0] += team[0].mu
            acc[1] += team[0].sigma
            acc[2] += 1
        for name, (mu, sigma, count) in sums.items():
            current[name] = model.rating(mu=mu / count, sigma=sigma / count, name=name)
    ratings = [Rating(n, current[n].mu, current[n].sigma) for n in names]
    return sorted(ratings, key=lambda r: -r.ordinal)
