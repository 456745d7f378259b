"""One game on one full-information engine, every seat in this process: the loop behind the
arena and ``moska play``.

Every seat is asked through the :class:`~.seat.Referee`, so a bot that raises, answers a move
that is not legal or runs past its budget forfeits here exactly as it does at a network
table: it is recorded as the loser with the reason, and the caller goes on. The loop is the
arena's hot path: a built-in bot is called inline and gets a view built only if it reads it
(:class:`_LazyView`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ..bots.api import Event, GameResult
from ..engine import DECISIONS, Game, Rules, View
from .seat import DEFAULT_BUDGET, Forfeit, LeaveTable, Referee, is_person, is_trusted, raised


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


class _LazyView(View):
    """A :class:`View` that is built on first use, for trusted (built-in) bots only.

    Building a view copies a dozen fields of the game: a third of an arena move with
    ``random`` bots, which never read it. The first look-up of any name (``__getattribute__``)
    fills every slot from the game as it still is (the bot is inside ``choose``), so the bot
    sees exactly the snapshot it would have had. The loop keeps one per seat: a view that
    was read stays the bot's snapshot and the seat gets a fresh one; an unread one is
    expired after ``choose`` (reading it then raises rather than show a later state) and
    used again at the seat's next decision. So a trusted bot must not keep a view it did not
    read; the built-ins keep none.
    """

    __slots__ = ("_lazy_game", "_lazy_seat")

    def __init__(self, game: Game, seat: int) -> None:
        self._lazy_game: Game | None = game
        self._lazy_seat = seat

    def __getattribute__(self, name: str) -> Any:
        # Filled on the first look-up of any name, a method's too: where the engine is
        # compiled (mypyc), View's methods read its slots directly, past __getattr__.
        if not name.startswith("_lazy"):
            game = self._lazy_game
            if game is not None:
                self._lazy_game = None
                View.__init__(self, game, self._lazy_seat)
        return super().__getattribute__(name)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(f"view attribute {name!r} read after the bot's decision")

    # Pickling (View.__reduce_ex__) reads every slot of View: an unread view is filled first
    # through __getattr__, so it pickles as the plain view it stands for, never the game.


def play_game(
    game: Game,
    seats: Sequence[Any],
    *,
    seed: int = 0,
    budget: float | None = DEFAULT_BUDGET,
    max_moves: int = 10_000,
    record_moves: bool = True,
    names: Sequence[str] | None = None,
    on_interrupt: Callable[[], bool] | None = None,
) -> GameRecord:
    """Play ``game`` to its end with ``seats[seat]`` choosing for each seat.

    A failing seat forfeits (``record.forfeit``, ``record.reason``). :class:`LeaveTable`
    from a person propagates: the game is abandoned. Ctrl-C while a bot thinks asks
    ``on_interrupt`` (a person's "leave the game?"): yes (or no ``on_interrupt``) leaves with
    :class:`LeaveTable`, no asks the same seat again (nothing was played yet).
    """
    n = game.n
    if len(seats) != n:
        raise ValueError(f"{n} seats need {n} bots, not {len(seats)}")
    record = GameRecord(
        preset=game.rules.preset,
        players=n,
        seed=seed,
        dealer=game.dealer,
        deck=list(game.face),
        options=dict(_options_of(game.rules)),
        bots=list(names) if names else [getattr(b, "name", type(b).__name__) for b in seats],
    )
    referee = Referee(seats, budget)
    moves = record.moves

    def forfeit(failure: Forfeit, count: int = 0) -> GameRecord:
        record.forfeit = failure.seat
        record.reason = failure.reason
        record.losers = (failure.seat,)
        record.move_count = count
        _end(referee, record)
        return record

    try:
        referee.start_game(game.view)
    except Forfeit as failure:
        return forfeit(failure)
    legal_moves = game.legal_moves  # bound once: the loop below is the arena's hot path
    play = game.play
    trusted = [is_trusted(s) for s in seats]
    persons = [is_person(s) for s in seats]
    views = [_LazyView(game, s) if trusted[s] and not persons[s] else None for s in range(n)]
    askers = [referee.asker(s) for s in range(n)]
    observers = bool(referee.observers)
    after_move = record_moves or observers
    count = 0  # moves played
    for count in range(max_moves + 1):
        seat = game.to_act_seat
        if seat < 0:
            break
        if count == max_moves:
            record.unfinished = True
            record.reason = f"stopped after {max_moves} moves"
            record.move_count = count
            _end(referee, record)
            return record
        legal = legal_moves()
        lazy = views[seat]
        try:
            if lazy is not None:
                lazy._lazy_game = game
                move = askers[seat](lazy, legal)
                if lazy._lazy_game is None:  # read: it is the bot's snapshot now
                    views[seat] = _LazyView(game, seat)
                else:
                    lazy._lazy_game = None
            else:
                move = askers[seat](game.view(seat), legal)
        except Forfeit as failure:
            return forfeit(failure, count)
        except LeaveTable:
            raise
        except KeyboardInterrupt:
            if lazy is not None:
                lazy._lazy_game = None
            if on_interrupt is None or on_interrupt():
                raise LeaveTable("interrupted") from None
            continue
        except Exception as error:
            if persons[seat]:
                raise  # a person's prompt failing is this program's bug, not a forfeit
            return forfeit(Forfeit(seat, raised(error)), count)
        # The engine checks every move it plays (IllegalMove leaves the game unchanged), so
        # a trusted bot's answer is not also searched for in ``legal`` (1-2% of a random
        # game); the referee checked an untrusted bot's against ``legal``.
        decision = game.phase if after_move else 0
        try:
            play(move)
        except Exception:
            if not trusted[seat] or persons[seat]:
                raise  # a move found in ``legal`` failed: an engine bug, not the seat's fault
            return forfeit(referee.illegal(seat, move), count)
        if not after_move:
            continue
        if record_moves:
            moves.append((seat, str(move)))
        if observers:
            try:
                referee.observe(_event(seat, move, decision))
            except Forfeit as failure:
                return forfeit(failure, count + 1)
    record.losers = game.loser_seats
    record.move_count = count
    if not record_moves:
        record.moves = []
    _end(referee, record)
    return record


def _event(seat: int, move: Any, phase: int) -> Event:
    return Event(seat, move, DECISIONS[phase])


def _end(referee: Referee, record: GameRecord) -> None:
    referee.end_game(
        lambda seat: GameResult(
            seat, record.losers, record.forfeit, record.reason, record.move_count
        )
    )
