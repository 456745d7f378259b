"""``moska watch``'s screen: the public table, live, for a spectator.

The same full-screen table the players see, drawn from the spectator's observer session,
which knows only what every player knows: every hand face down (its size, and the cards
the game has shown), the bout, the stock, the whole log; at the end the cards known then
(shown during the game or disclosed) and the result. Not on a terminal (or ``--plain``) each
move is a line, as ``moska host``/``join`` print them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

import trio

from ..engine import View
from ..protocol.session import PeerSession
from ..table.networked import WAIT_EVERY, watched_wait
from .app import FullScreen
from .render import black_maija_text, log_lines, render_table, strip_ansi, wait_text


def show_watched(
    screen: FullScreen,
    view: View,
    names: Sequence[str],
    *,
    color: bool,
    symbols: bool,
    hands: Mapping[int, Sequence[str]] | None,
    losers: Sequence[int] | None,
    status: str,
    spectating: bool = False,
) -> None:
    """The table as someone who plays no seat watches it (``moska watch`` and ``moska play
    --watch``): nobody is "you", the title says so, the whole log, and the status with them
    in one change. ``hands``: the hands shown open; ``spectating``: a spectator's, whose
    hands are face down."""
    screen.show(
        lambda width, _: render_table(
            view,
            names,
            color=color,
            symbols=symbols,
            width=width,
            height=0,
            hands=hands,
            losers=losers,
            you=-1,
            title=f"{view.preset} (watching)",
            spectating=spectating,
        ),
        0,
        log_lines(view.history, names, color=color, symbols=symbols, trump=view.trump, width=200),
        status=status,
    )


class SpectatorScreen:
    """What a :class:`~moska_p2p.net.watch.Watcher` shows: the full screen (``interactive``)
    or lines to ``out``. ``quit`` is called (in the screen's thread) when the person presses
    q to stop watching."""

    def __init__(
        self,
        *,
        interactive: bool,
        out: TextIO,
        color: bool,
        symbols: bool,
        quit: Callable[[], None] | None = None,
    ) -> None:
        self.out = out
        self.color, self.symbols = color, symbols
        self.quit = quit
        self.screen = FullScreen(color=color, symbols=symbols) if interactive else None
        self._keys: threading.Thread | None = None
        self._closed = threading.Event()
        self._last: tuple[PeerSession, list[str], str, bool] | None = None
        self._heard = time.monotonic()  # when the table last moved (the countdown's start)
        self._trio: trio.lowlevel.TrioToken | None = None

    # ------------------------------------------------------------------ the Spectator protocol

    def seated(self, session: PeerSession, names: Sequence[str]) -> None:
        if self.screen is not None:
            self._trio = trio.lowlevel.current_trio_token()
            self._start()
            self._heard = time.monotonic()
            self._last = (session, list(names), "", False)
            self._draw(session, names, "")

    def moved(self, session: PeerSession, names: Sequence[str], seat: int, move: str) -> None:
        name = names[seat] if seat < len(names) else "?"
        if self.screen is None:
            self._say(f"seat {seat} ({name}): {move}")
        else:
            self._heard = time.monotonic()
            self._draw(session, names, "")

    def ended(self, session: PeerSession, names: Sequence[str], text: str) -> None:
        finished = session.game is not None and session.game.is_over  # not a verdict's culprits
        losers = [names[s] for s in session.losers if s < len(names)] if finished else []
        maija = black_maija_text(session.config.preset, losers, symbols=self.symbols)
        if self.screen is not None:
            self._draw(session, names, " ".join(part for part in (text, maija) if part), True)
        elif maija:
            self._say(maija)

    # ------------------------------------------------------------------ the screen

    def _start(self) -> None:
        screen = self.screen
        if screen is None or screen.running:
            return
        screen.start()
        screen.single_keys = {"q": "q"}
        self._keys = threading.Thread(target=self._read_keys, name="moska-spectate", daemon=True)
        self._keys.start()
        ticks = threading.Thread(target=self._tick_every_second, name="moska-tick", daemon=True)
        ticks.start()

    def _tick_every_second(self) -> None:
        """Once a second, in the watch's own (trio) thread where the session lives: the
        table again, with what it waits for and the countdown; the deal is drawn this way
        too, as no event comes before the first move. Ends with the watch."""
        token = self._trio
        while token is not None and not self._closed.wait(WAIT_EVERY):
            try:
                trio.from_thread.run_sync(self._redraw_waiting, trio_token=token)
            except (trio.RunFinishedError, trio.Cancelled):
                return

    def _redraw_waiting(self) -> None:
        if self._last is not None and not self._last[3]:
            session, names, _status, _end = self._last
            self._draw(session, names, "")

    def _read_keys(self) -> None:
        """q (or Ctrl-C) stops watching; after the end, closes the screen."""
        screen = self.screen
        assert screen is not None
        try:
            while screen.ask("q: stop watching · PgUp/PgDn: the log ") != "q":
                pass
        except (KeyboardInterrupt, EOFError):
            pass
        self._closed.set()
        if self.quit is not None:
            self.quit()

    def _draw(
        self, session: PeerSession, names: Sequence[str], status: str, end: bool = False
    ) -> None:
        screen = self.screen
        if screen is None:
            return
        self._last = (session, list(names), status, end)
        game = session.game
        if not status and not end:
            wait = watched_wait(session)
            status = wait_text(wait, names, game.view(0) if game is not None else None,
                               left=wait.left - (time.monotonic() - self._heard))
        if game is None:
            screen.status(status)
            return
        view = game.view(0)  # the observer's game: public knowledge only, for every seat
        hands = {s: game.hand(s) for s in range(game.n)} if end else None
        losers = list(session.losers) if end else None
        show_watched(
            screen,
            view,
            names,
            color=self.color,
            symbols=self.symbols,
            hands=hands,
            losers=losers,
            status=status,
            spectating=True,
        )

    def close(self) -> None:
        """The watch is over: on the screen, wait for q, then give the terminal back and print
        the last table; in lines, nothing more."""
        screen = self.screen
        if screen is None or not screen.running:
            return
        self.quit = None
        if self._last is not None and not self._closed.is_set():
            session, names, status, end = self._last
            self._draw(session, names, "  ·  ".join(filter(None, [status, "q: close"])), end)
            self._closed.wait()
        screen.stop()
        if self._keys is not None:
            self._keys.join(5)
        for line in screen.caught:  # what the watch said meanwhile (seats, result, file)
            self._say(line)
        if self._last is not None:
            session, names, _status, end = self._last
            game = session.game
            if game is not None:
                self._say(
                    render_table(
                        game.view(0),
                        names,
                        color=self.color,
                        symbols=self.symbols,
                        you=-1,
                        hands={s: game.hand(s) for s in range(game.n)} if end else None,
                        losers=list(session.losers) if end else None,
                        spectating=True,
                    )
                )

    def _say(self, text: str) -> None:
        self.out.write((text if self.color else strip_ansi(text)) + "\n")
        self.out.flush()
