"""Whoever plays a seat, and the one place that asks it for a move.

A *seat* is anything with the bot API's ``choose(view, legal_moves)`` (and, optionally,
``start_game``, ``observe``, ``end_game``, ``close``): a built-in bot, a bot from a file, an
external process (:class:`~moska_p2p.bots.external.ExternalBot`), a person at the terminal.
Every driver of a game — the arena and ``moska play`` (:mod:`.local`), ``moska simulate``
(:mod:`.simulate`) and a network table (:mod:`.networked`) — asks its seats through a
:class:`Referee`, so a seat that fails fails the same way everywhere:

* it raises: ``raised ValueError: ...`` (an external bot's crash or garbage is its
  ``ExternalBotError``, so ``raised ExternalBotError: the bot printed a line that is not
  JSON: ...``);
* it answers a move that is not legal: ``answered ..., which is not a legal move``;
* it answers late: ``ran past its time budget of 0.5 s``.

The referee raises :class:`Forfeit` with that text; the driver ends the game with the seat
as its loser (the arena, ``moska play``) or leaves the table with it as the signed reason
(a peer). A person is not a bot: :func:`is_person` seats have no budget, and an exception
from them is a bug of this program, not a forfeit; :class:`LeaveTable` (``quit``, yes to
"leave?") passes through every driver unchanged.

How a budget is kept depends on where the call runs. In the main thread of a synchronous
driver an alarm signal interrupts a bot that sleeps or loops (``SIGALRM``); in a trio driver
the bot runs in a worker thread, abandoned at its deadline; elsewhere the answer is taken
and its lateness judged after it returns. Built-in bots (``trusted_fast``) are trusted to be
quick: they are called inline with no timer (the arena's hot path) and, as their answers
come from the very list of legal moves, the engine's own check of the move is the only one.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, Protocol, TypeVar, runtime_checkable

from ..bots.api import BaseBot, Event, GameResult
from ..engine import Move, View

T = TypeVar("T")

DEFAULT_BUDGET = 1.0
"""Seconds a bot that is not built in may think about one decision (``--budget``)."""


@runtime_checkable
class Seat(Protocol):
    """What every driver needs of whoever plays a seat: one method (see the module docstring
    for the optional hooks, and :mod:`moska_p2p.bots.api` for the bot's side)."""

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        """Return one of ``legal_moves`` (the very object or an equal move)."""
        ...


class LeaveTable(Exception):
    """The person at a seat chose to leave: the game is abandoned, nobody forfeits here
    (on a network table the driver sends a signed leave)."""


class Forfeit(Exception):
    """``seat`` failed and loses the game: ``reason`` says how, in the same words for every
    driver."""

    def __init__(self, seat: int, reason: str) -> None:
        super().__init__(f"seat {seat}: {reason}")
        self.seat = seat
        self.reason = reason

    @property
    def leave_reason(self) -> str:
        """What a peer whose seat forfeits signs in its ``leave`` (the others' verdicts
        quote it): the same reason as in the arena."""
        return f"its seat forfeits: {self.reason}"


class BudgetExceeded(Exception):
    """Raised inside a bot by the alarm when its time budget runs out."""


def is_person(seat: object) -> bool:
    """A person at the terminal (``is_person = True``): no budget, no forfeit for raising."""
    return bool(getattr(seat, "is_person", False))


def is_trusted(seat: object) -> bool:
    """A built-in bot (``trusted_fast = True``): called inline, with no timer."""
    return bool(getattr(seat, "trusted_fast", False))


def has_hook(seat: object, name: str) -> bool:
    """Whether ``seat`` defines the optional hook ``name`` (other than :class:`BaseBot`'s
    no-op), so the drivers call only the hooks that do something."""
    method = getattr(type(seat), name, None)
    return method is not None and method is not getattr(BaseBot, name, None)


# ---------------------------------------------------------------------- reason texts


def raised(error: BaseException, where: str = "") -> str:
    """The reason for a seat whose call raised ``error`` (``where``: a hook's name)."""
    prefix = f"{where} raised" if where else "raised"
    return f"{prefix} {type(error).__name__}: {error}"


def illegal(move: object) -> str:
    """The reason for a seat that answered ``move``, which is not among the legal moves."""
    return f"answered {move!r}, which is not a legal move"


def late(budget: float, where: str = "") -> str:
    """The reason for a seat that answered after its budget of ``budget`` seconds."""
    prefix = f"{where} ran" if where else "ran"
    return f"{prefix} past its time budget of {budget:g} s"


# ---------------------------------------------------------------------- calling with a budget


def _on_alarm(signum: int, frame: object) -> None:
    raise BudgetExceeded


def call_with_budget(fn: Callable[[], T], budget: float | None) -> T:
    """Call ``fn``; raise :class:`BudgetExceeded` if it runs past ``budget`` seconds (in the
    main thread an alarm interrupts it; elsewhere lateness is judged when it returns)."""
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
        raise BudgetExceeded
    return result


class Referee:
    """Asks the seats of one game for their moves and turns every failure into a
    :class:`Forfeit` (see the module docstring). ``budget`` applies to every seat that is
    neither built in nor a person."""

    def __init__(self, seats: Sequence[Any], budget: float | None = DEFAULT_BUDGET) -> None:
        self.seats = list(seats)
        self.budget = budget
        self.budgets: list[float | None] = [
            None if is_trusted(s) or is_person(s) else budget for s in self.seats
        ]
        self.observers = [s for s in self.seats if has_hook(s, "observe")]

    def asker(self, seat: int) -> Callable[[View, Sequence[Move]], Move]:
        """The call that asks ``seat`` for a move: for a built-in bot its own ``choose``
        (no timer, no list search: the engine checks what it plays, see :meth:`illegal`);
        for any other bot ``choose`` under the budget, its answer checked against the list."""
        player = self.seats[seat]
        if is_trusted(player) or is_person(player):
            return player.choose  # type: ignore[no-any-return]
        budget = self.budgets[seat]

        def ask(view: View, legal: Sequence[Move]) -> Move:
            try:
                move: Move = call_with_budget(partial(player.choose, view, legal), budget)
            except BudgetExceeded:
                raise Forfeit(seat, late(budget or 0.0)) from None
            except LeaveTable:
                raise
            except Exception as error:
                raise Forfeit(seat, raised(error)) from None
            if move not in legal:
                raise Forfeit(seat, illegal(move))
            return move

        return ask

    def ask(self, seat: int, view: View, legal: Sequence[Move]) -> Move:
        """``seat``'s move from ``legal`` (raises :class:`Forfeit`, or :class:`LeaveTable`
        from a person). A built-in bot's answer is checked here too: this is the general path;
        the arena's hot loop uses :meth:`asker` and the engine's check."""
        player = self.seats[seat]
        try:
            move = self.asker(seat)(view, legal)
        except (Forfeit, LeaveTable):
            raise
        except Exception as error:
            if is_person(player):
                raise
            raise Forfeit(seat, raised(error)) from None
        if is_trusted(player) and move not in legal:  # the asker checked any other bot's
            raise Forfeit(seat, illegal(move))
        return move

    async def ask_async(self, seat: int, view: View, legal: Sequence[Move]) -> Move:
        """:meth:`ask` for a trio driver: a bot that is not built in thinks in a worker
        thread, abandoned at its budget (so a sleeping bot cannot stall the table)."""
        import trio

        player = self.seats[seat]
        budget = self.budgets[seat]
        if budget is None:
            return self.ask(seat, view, legal)
        start = time.perf_counter()
        try:
            with trio.fail_after(budget):
                move: Move = await trio.to_thread.run_sync(
                    player.choose, view, legal, abandon_on_cancel=True
                )
        except trio.TooSlowError:
            raise Forfeit(seat, late(budget)) from None
        except Exception as error:
            raise Forfeit(seat, raised(error)) from None
        if time.perf_counter() - start > budget:
            raise Forfeit(seat, late(budget))
        if move not in legal:
            raise Forfeit(seat, illegal(move))
        return move

    def illegal(self, seat: int, move: object) -> Forfeit:
        """The forfeit of a seat whose answer the engine refused."""
        return Forfeit(seat, illegal(move))

    def start_game(self, views: Callable[[int], View]) -> None:
        """Every seat's ``start_game`` hook, each under its budget (raises :class:`Forfeit`)."""
        for seat, player in enumerate(self.seats):
            if not has_hook(player, "start_game"):
                continue
            try:
                call_with_budget(partial(player.start_game, views(seat)), self.budgets[seat])
            except BudgetExceeded:
                raise Forfeit(seat, late(self.budgets[seat] or 0.0, "start_game")) from None
            except LeaveTable:
                raise
            except Exception as error:
                if is_person(player):
                    raise
                raise Forfeit(seat, raised(error, "start_game")) from None

    def observe(self, event: Event) -> None:
        """Every observing seat's ``observe`` hook (raises :class:`Forfeit`)."""
        for player in self.observers:
            try:
                player.observe(event)
            except LeaveTable:
                raise
            except Exception as error:
                if is_person(player):
                    raise
                raise Forfeit(self.seats.index(player), raised(error, "observe")) from None

    def end_game(self, results: Callable[[int], GameResult]) -> None:
        """Every seat's ``end_game`` hook; a failing one changes no result."""
        for seat, player in enumerate(self.seats):
            if has_hook(player, "end_game"):
                with contextlib.suppress(Exception):  # the game is over: nothing at stake
                    player.end_game(results(seat))

    def close(self) -> None:
        """Release what the seats hold (an external bot's process)."""
        for player in self.seats:
            close = getattr(player, "close", None)
            if callable(close):
                with contextlib.suppress(Exception):  # closing is best effort
                    close()
