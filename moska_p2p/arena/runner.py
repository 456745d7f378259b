"""Play one game between bots on the engine, enforcing the bot API's contract.

A bot that raises, answers a move that is not legal, or runs past its time budget forfeits
the game: it is recorded as the loser with the reason, and the caller goes on. Built-in bots
are trusted to be quick and skip the timer (the arena's hot path); any other bot runs under a
real-time alarm, so even a bot that sleeps or loops forever is stopped at its budget.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from functools import lru_cache, partial
from typing import Any, TypeVar

from ..bots.api import BaseBot, Bot, Event, GameResult
from ..engine import Game, Rules, View

T = TypeVar("T")


@dataclass
class GameRecord:
    """Everything needed to report and to replay a game."""

    preset: str
    players: int
    seed: int
    dealer: int
    deck: list[int]
    options: dict[str, str]
    bots: list[str]
    moves: list[tuple[int, str]] = field(default_factory=list)
    losers: tuple[int, ...] = ()
    forfeit: int | None = None
    reason: str = ""
    unfinished: bool = False
    move_count: int = 0  # moves played, also when ``moves`` is not recorded

    def to_json(self) -> dict[str, Any]:
        return {
            "preset": self.preset,
            "players": self.players,
            "seed": self.seed,
            "dealer": self.dealer,
            "deck": self.deck,
            "options": self.options,
            "bots": self.bots,
            "moves": [[seat, text] for seat, text in self.moves],
            "losers": list(self.losers),
            "forfeit": self.forfeit,
            "reason": self.reason,
            "unfinished": self.unfinished,
            "move_count": self.move_count,
        }


@lru_cache(maxsize=64)
def _options_of(rules: Rules) -> dict[str, str]:
    """``rules.options()`` once per variant: it goes through ``asdict``, which costs more
    than a percent of a random game."""
    return rules.options()


class BotTimeout(Exception):
    """Raised inside a bot by the alarm when its time budget runs out."""


def _on_alarm(signum: int, frame: object) -> None:
    raise BotTimeout


def call_with_budget(fn: Callable[[], T], budget: float | None) -> T:
    """Call ``fn``; raise :class:`BotTimeout` if it runs past ``budget`` seconds."""
    if budget is None:
        return fn()
    use_alarm = threading.current_thread() is threading.main_thread() and hasattr(
        signal, "setitimer"
    )
    start = time.perf_counter()
    if use_alarm:
        previous = signal.signal(signal.SIGALRM, _on_alarm)
        signal.setitimer(signal.ITIMER_REAL, budget)
        try:
            result = fn()
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    else:
        result = fn()
    if time.perf_counter() - start > budget:
        raise BotTimeout
    return result


class _LazyView(View):
    """A :class:`View` that is built on first use, for trusted (built-in) bots only.

    Building a view copies a dozen fields of the game: a third of an arena move with
    ``random`` bots, which never read it. Unset slots fall through to ``__getattr__``, which
    fills them all from the game as it still is (the bot is inside ``choose``), so the bot
    sees exactly the snapshot it would have had. The runner keeps one per seat: a view that
    was read stays the bot's snapshot and the seat gets a fresh one; an unread one is
    expired after ``choose`` (reading it then raises rather than show a later state) and
    used again at the seat's next decision. So a trusted bot must not keep a view it did not
    read; the built-ins keep none.
    """

    __slots__ = ("_lazy_game", "_lazy_seat")

    def __init__(self, game: Game, seat: int) -> None:
        self._lazy_game: Game | None = game
        self._lazy_seat = seat

    def __getattr__(self, name: str) -> Any:
        game = self._lazy_game
        if game is None or name.startswith("_lazy"):
            raise AttributeError(f"view attribute {name!r} read after the bot's decision")
        self._lazy_game = None
        View.__init__(self, game, self._lazy_seat)
        return getattr(self, name)


def _has_hook(bot: Bot, name: str) -> bool:
    method = getattr(type(bot), name, None)
    return method is not None and method is not getattr(BaseBot, name)


def play_game(
    game: Game,
    bots: Sequence[Bot],
    *,
    seed: int = 0,
    budget: float | None = 1.0,
    max_moves: int = 10_000,
    record_moves: bool = True,
    names: Sequence[str] | None = None,
) -> GameRecord:
    """Play ``game`` to its end with ``bots[seat]`` choosing for each seat."""
    n = game.n
    if len(bots) != n:
        raise ValueError(f"{n} seats need {n} bots, not {len(bots)}")
    record = GameRecord(
        preset=game.rules.preset,
        players=n,
        seed=seed,
        dealer=game.dealer,
        deck=list(game.face),
        options=dict(_options_of(game.rules)),
        bots=list(names) if names else [getattr(b, "name", type(b).__name__) for b in bots],
    )
    trusted = [getattr(b, "trusted_fast", False) for b in bots]
    budgets = [None if trusted[s] else budget for s in range(n)]
    observers = [b for b in bots if _has_hook(b, "observe")]
    moves = record.moves

    def forfeit(seat: int, reason: str, count: int = 0) -> GameRecord:
        record.forfeit = seat
        record.reason = reason
        record.losers = (seat,)
        record.move_count = count
        _end(bots, record)
        return record

    for seat, bot in enumerate(bots):
        if _has_hook(bot, "start_game"):
            try:
                hook = partial(bot.start_game, game.view(seat))  # type: ignore[attr-defined]
                call_with_budget(hook, budgets[seat])
            except BotTimeout:
                return forfeit(seat, f"start_game ran past its time budget of {budget} s")
            except Exception as error:
                return forfeit(seat, f"start_game raised {type(error).__name__}: {error}")
    legal_moves = game.legal_moves  # bound once: the loop below is the arena's hot path
    play = game.play
    views = [_LazyView(game, s) if budgets[s] is None else None for s in range(n)]
    chooses = [b.choose for b in bots]
    after_move = record_moves or bool(observers)
    count = 0  # moves played
    for count in range(max_moves + 1):
        seat = game.to_act_seat
        if seat < 0:
            break
        if count == max_moves:
            record.unfinished = True
            record.reason = f"stopped after {max_moves} moves"
            record.move_count = count
            _end(bots, record)
            return record
        legal = legal_moves()
        try:
            lazy = views[seat]
            if lazy is not None:
                lazy._lazy_game = game
                move = chooses[seat](lazy, legal)
                if lazy._lazy_game is None:  # read: it is the bot's snapshot now
                    views[seat] = _LazyView(game, seat)
                else:
                    lazy._lazy_game = None
            else:
                view = game.view(seat)
                move = call_with_budget(partial(chooses[seat], view, legal), budgets[seat])
        except BotTimeout:
            return forfeit(seat, f"ran past its time budget of {budget} s", count)
        except Exception as error:
            return forfeit(seat, f"raised {type(error).__name__}: {error}", count)
        # The engine checks every move it plays (IllegalMove leaves the game unchanged), so
        # a trusted bot's answer is not also searched for in ``legal`` (1-2% of a random
        # game); an untrusted bot's must be one of ``legal``, not merely something playable.
        if lazy is None and move not in legal:
            return forfeit(seat, f"answered {move!r}, which is not a legal move", count)
        decision = game.phase if after_move else 0
        try:
            play(move)
        except Exception:
            if lazy is None:
                raise  # a move found in ``legal`` failed: an engine bug, not the bot's fault
            return forfeit(seat, f"answered {move!r}, which is not a legal move", count)
        if not after_move:
            continue
        if record_moves:
            moves.append((seat, str(move)))
        if observers:
            event = Event(seat, move, _decision_name(decision))
            for other in observers:
                try:
                    other.observe(event)  # type: ignore[attr-defined]
                except Exception as error:
                    return forfeit(bots.index(other), f"observe raised {error!r}", count + 1)
    record.losers = tuple(game.losers)
    record.move_count = count
    if not record_moves:
        record.moves = []
    _end(bots, record)
    return record


def _decision_name(phase: int) -> str:
    from ..engine import DECISIONS

    return DECISIONS[phase]


def _end(bots: Sequence[Bot], record: GameRecord) -> None:
    for seat, bot in enumerate(bots):
        if _has_hook(bot, "end_game"):
            result = GameResult(
                seat,
                record.losers,
                record.forfeit,
                record.reason,
                record.move_count,
            )
            with suppress(Exception):  # a failing end hook changes no result
                bot.end_game(result)  # type: ignore[attr-defined]
