"""Sessions: games in a row at one table (RULES M24, M2, D3).

The loser of each game deals the next; the session counts losses per seat and the runs of
losses in a row: two in a row puts a player *korokkeella* (on the pedestal), three make them
a *poronmuna* (a reindeer's egg) (seed 000, "Three losses in a row"). A session may not end
while somebody stands on the pedestal: the seed says another game must be played.
"""

from __future__ import annotations

import random
from typing import Any

from .game import Game
from .options import Rules, make_rules


class Session:
    """A run of games of one preset between the same seats.

    >>> s = Session("moska", players=3, seed=1)
    >>> g = s.new_game()
    >>> while not g.is_over:
    ...     _ = g.play(g.legal_moves()[0])
    >>> s.record(g)
    >>> sum(s.losses)
    1
    """

    def __init__(
        self,
        preset: str,
        players: int,
        *,
        seed: int | None = None,
        dealer: int | None = None,
        **options: Any,
    ) -> None:
        self.rules: Rules = make_rules(preset, **options)
        self.players = players
        self._rng = random.Random(
            seed if seed is not None else random.SystemRandom().getrandbits(64)
        )
        # M2: the first dealer is drawn from the session's randomness unless given.
        self.dealer = dealer if dealer is not None else self._rng.randrange(players)
        self.losses = [0] * players
        self.streaks = [0] * players
        self.poronmuna_count = [0] * players
        self.results: list[tuple[int, ...]] = []
        self._current: Game | None = None

    @property
    def games_played(self) -> int:
        return len(self.results)

    def new_game(self) -> Game:
        """Deal the next game: a fresh shuffle; the last loser deals (M24, D3)."""
        if self._current is not None and not self._current.is_over:
            raise RuntimeError("the current game is not over yet")
        deck = list(range(self.rules.lowest_rank * 4, 52))
        self._rng.shuffle(deck)
        game = Game(self.rules, self.players, deck, self.dealer, first_game=not self.results)
        self._current = game
        return game

    def record(self, game: Game) -> None:
        """Count a finished game: losses, runs of losses, and who deals next."""
        if not game.is_over:
            raise ValueError("only a finished game can be recorded")
        if game is not self._current:
            raise ValueError("record the game this session dealt last")
        self._current = None
        losers = game.loser_seats
        self.results.append(losers)
        for seat in range(self.players):
            if seat in losers:
                self.losses[seat] += 1
                self.streaks[seat] += 1
                if self.streaks[seat] == 3:
                    self.poronmuna_count[seat] += 1
            else:
                self.streaks[seat] = 0
        if game.loser is not None:
            self.dealer = game.loser  # the loser deals the next game; a draw: same dealer

    @property
    def korokkeella(self) -> list[int]:
        """Seats that have lost exactly the last two games: on the pedestal."""
        return [s for s in range(self.players) if self.streaks[s] == 2]

    @property
    def poronmuna(self) -> list[int]:
        """Seats that have lost three (or more) games in a row: reindeer's eggs."""
        return [s for s in range(self.players) if self.streaks[s] >= 3]

    @property
    def may_end(self) -> bool:
        """False while somebody is on the pedestal: another game must be played."""
        return not self.korokkeella and (self._current is None or self._current.is_over)

    def score_line(self, names: list[str] | None = None) -> str:
        """One line of the session's standing, e.g. ``seat 0: 2 losses (korokkeella)``."""
        parts = []
        for seat in range(self.players):
            name = names[seat] if names else f"seat {seat}"
            text = f"{name}: {self.losses[seat]} loss{'es' if self.losses[seat] != 1 else ''}"
            if self.streaks[seat] >= 3:
                text += " (poronmuna)"
            elif self.streaks[seat] == 2:
                text += " (korokkeella)"
            parts.append(text)
        return "; ".join(parts)
