"""This peer's seat at a network table: a bot or a person plays through the node's port.

The node (:mod:`moska_p2p.net.node`) only moves bytes and keeps the session; it hands a
:class:`~moska_p2p.net.port.GamePort` to a *player* from here and tells it the seats, every
move and the end. Both players ask their seat through the :class:`~.seat.Referee`, so a bot
that raises, answers an illegal move or runs past its budget forfeits with the same reason as
in the arena, and here that reason is the signed ``leave`` the other peers' verdicts quote.

* :class:`BotAtTable` — a bot: a built-in one thinks inline; any other in a worker thread,
  within its budget (at most the table's timeout); with ``echo``, one line per move.
* :class:`PersonAtTable` — a person at the terminal: the screen (the full-screen table of
  ``ui.app``, opened as the game starts, in the main thread so it follows resizes) is
  updated by one task after each move; the question for a move runs in a worker thread
  within the table's timeout (a lock keeps the question, the updates and "leave the game?"
  apart); Ctrl-C asks before leaving; a game that ends meanwhile closes the question, and
  the screen is closed (the final table left on the terminal) before the node reports.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol

import trio

from ..bots.api import Event, GameResult
from ..engine import IllegalMove, Move, View
from ..engine.moves import parse_move
from ..net.port import TableWait, table_wait
from ..protocol import verdict as v
from ..protocol.session import LocalError
from .seat import Forfeit, LeaveTable, Referee

WAIT_EVERY = 1.0
"""Seconds between two refreshes of what a person's table waits for (its countdown)."""

if TYPE_CHECKING:
    from ..net.port import GamePort
    from ..protocol.session import PeerSession


def watched_wait(session: PeerSession) -> TableWait:
    """What a table someone watches waits for (``moska watch``: an observer's session, which
    has no links of its own and no clock: the seconds left are the whole timeout, for the
    spectator to count down from the frame it last got)."""
    return table_wait(session, dict.fromkeys(session.roster), b"", session.last_progress)


class BotAtTable:
    """A bot plays this peer's seat (see the module docstring). ``budget``: seconds a bot that
    is not built in may think (None: the table's timeout, less a margin for the network)."""

    def __init__(
        self,
        bot: Any,
        *,
        budget: float | None = None,
        pace: float = 0.0,
        echo: Callable[[str], None] | None = None,
    ) -> None:
        self.bot = bot
        self.budget = budget
        self.pace = pace
        self.echo = echo
        self.names: list[str] = []

    async def play(self, port: GamePort) -> None:
        budget = self.budget if self.budget is not None else max(0.1, port.timeout * 0.8)
        referee = Referee([self.bot], budget)  # the caller owns the bot and closes it
        while await port.turn():
            if self.pace:
                await trio.sleep(self.pace)
                if not port.my_turn:
                    continue
            state = port.state()
            try:
                move = await referee.ask_async(0, port.view(), port.legal_moves())
            except Forfeit as failure:
                port.leave(failure.leave_reason)
                return
            try:
                port.play(move, state)
            except (IllegalMove, LocalError):
                port.leave(referee.illegal(0, move).leave_reason)
                return
            await trio.sleep(0)

    def seated(self, names: Sequence[str], seat: int) -> None:
        self.names = list(names)

    def moved(self, seat: int, move: str) -> None:
        if self.echo is not None:
            name = self.names[seat] if seat < len(self.names) else "?"
            self.echo(f"seat {seat} ({name}): {move}")

    def ended(self, end: v.Finished | v.Stopped, moves: int) -> None:
        return None  # the node reports the end; a bot has nothing open to close

    def interrupt(self) -> bool:
        return True  # a bot's seat leaves at once on Ctrl-C

    async def closed(self) -> None:
        return None

    def next_game(self, summary: str) -> bool:
        return True  # a bot's seat plays every game of a session (M24)


class Screen(Protocol):
    """What :class:`PersonAtTable` needs of the terminal (``ui.terminal.TerminalPlayer``)."""

    names: list[str]
    seat: int
    view_source: Callable[[], View] | None

    def open(self) -> None: ...
    def close(self) -> None: ...
    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move: ...
    def observe(self, event: Event) -> None: ...
    def end_game(self, result: GameResult) -> None: ...
    def confirm_leave(self) -> bool: ...
    def abort(self) -> None: ...
    def interrupt(self) -> None: ...
    def show_wait(self, view: View | None, wait: TableWait) -> None: ...
    def show_clock(self, left: float | None) -> None: ...
    def expect(self, wait: TableWait | None) -> None: ...


class PersonAtTable:
    """A person plays this peer's seat at the terminal (see the module docstring)."""

    def __init__(self, person: Screen) -> None:
        self.person = person
        self._shown_send, self._shown = trio.open_memory_channel[Event | GameResult](math.inf)
        self._screen = trio.Lock()
        self._screen_done = trio.Event()
        self._screen_closed = False
        self._asking: trio.CancelScope | None = None
        self._choosing = False  # the person's choose() runs (it asks itself on Ctrl-C)
        self._deadline: float | None = None  # when the move asked now times out (trio clock)
        self._port: GamePort | None = None
        self._nursery: trio.Nursery | None = None

    async def play(self, port: GamePort) -> None:
        self._port = port
        self.person.view_source = port.view
        self.person.open()
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._show)
            nursery.start_soon(self._tell_waits, port)
            while await port.turn():
                state = port.state()
                move = await self._ask(port, port.view(), port.legal_moves())
                if move is None:
                    break
                try:
                    port.play(move, state)
                except (IllegalMove, LocalError) as error:  # the prompt offers legal moves only
                    port.leave(f"an illegal move from the terminal: {error}")
                    break
                await trio.sleep(0)
            await self._screen_done.wait()

    async def _ask(self, port: GamePort, view: View, legal: Sequence[Move]) -> Move | None:
        """The person's move, typed within the table's timeout (None: no move; the person
        left or the game ended). The prompt has the screen while it runs."""
        async with self._screen:
            if port.over:
                return None
            self._choosing = True
            self._deadline = trio.current_time() + port.timeout
            try:
                with trio.fail_after(port.timeout):
                    move: Move = await trio.to_thread.run_sync(
                        self.person.choose, view, legal, abandon_on_cancel=True
                    )
                    return move
            except LeaveTable as left:
                if str(left) != "closed":  # closed: the game ended meanwhile
                    why = "Ctrl-C" if str(left) == "interrupted" else str(left)
                    port.leave(f"interrupted ({why})", interrupted=True)
            except trio.TooSlowError:
                self.person.abort()
                port.leave(f"no move within the table's timeout ({port.timeout:g} s)")
            finally:
                self._choosing = False
                self._deadline = None
                self.person.show_clock(None)
        return None

    async def _show(self) -> None:
        """Show the game as it goes: the table after each move (between prompts, never over
        the prompt or a question), then the end."""
        async with self._shown:
            async for item in self._shown:
                async with self._screen:
                    if isinstance(item, Event):
                        self.person.expect(self._wait_now())
                        self.person.observe(item)
                    else:
                        self.person.end_game(item)
        self.person.close()  # the node prints its report on the terminal after this
        self._screen_done.set()

    async def _tell_waits(self, port: GamePort) -> None:
        """Once a second, while nothing is asked: the table (from the deal on) and what it
        waits for, so a screen is never blank or silent while others think, deal, or are
        gone (a reconnecting peer's table is drawn at once too)."""
        while not port.over and not self._screen_closed:
            if self._deadline is not None:  # this seat's move is asked: its own time left
                self.person.show_clock(self._deadline - trio.current_time())
            elif not self._screen.locked():
                async with self._screen:
                    self._show_wait(port)
            await trio.sleep(WAIT_EVERY)

    def _show_wait(self, port: GamePort) -> None:
        if port.over or self._screen_closed or port.my_turn:
            return
        self.person.show_wait(port.view() if port.dealt else None, port.waiting())

    def _wait_now(self) -> TableWait | None:
        port = self._port
        if port is None or port.over or port.my_turn:
            return None
        return port.waiting()

    async def _ask_leave(self, scope: trio.CancelScope) -> None:
        """Ctrl-C between prompts: ask "leave the game?"; only a yes leaves."""
        yes = False
        with scope:
            try:
                async with self._screen:
                    if self._port is None or self._port.over:
                        return
                    yes = await trio.to_thread.run_sync(
                        self.person.confirm_leave, abandon_on_cancel=True
                    )
            finally:
                self._asking = None
            if yes and self._port is not None:
                self._port.leave("interrupted (Ctrl-C)", interrupted=True)

    def seated(self, names: Sequence[str], seat: int) -> None:
        self.person.names = list(names)  # the table shows every seat's name
        self.person.seat = seat

    def moved(self, seat: int, move: str) -> None:
        if not self._screen_closed:
            self._shown_send.send_nowait(Event(seat, parse_move(move), ""))

    def ended(self, end: v.Finished | v.Stopped, moves: int) -> None:
        """Close a prompt or question still open; show the end."""
        if self._screen_closed:
            return
        self._screen_closed = True
        self.person.abort()
        if self._asking is not None:
            self._asking.cancel()
        if isinstance(end, v.Finished):
            self._shown_send.send_nowait(GameResult(self.person.seat, end.losers, None, "", moves))
        self._shown_send.close()

    def interrupt(self) -> bool:
        if self._choosing:
            self.person.interrupt()  # its prompt asks
            return False
        if self._asking is None and self._nursery is not None:
            self._asking = trio.CancelScope()
            self._nursery.start_soon(self._ask_leave, self._asking)
            return False
        return True  # a second Ctrl-C while asking counts as yes

    async def closed(self) -> None:
        await self._screen_done.wait()

    def next_game(self, summary: str) -> bool:
        """Between two games of a session (the node calls it in a worker thread, once this
        game's screen is closed): the score line, then "next game? [y/N]", no by default
        (M24); with the screen closed it is a line question on the terminal."""
        ask = getattr(self.person, "ask_yes", None)
        return callable(ask) and bool(ask(f"{summary}\nnext game?", default=False))
