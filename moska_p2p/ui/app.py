"""The full-screen table: one prompt_toolkit ``Application`` for a whole game (or session,
or replay), in its own thread, that the game talks to through thread-safe calls.

Why prompt_toolkit and not textual: prompt_toolkit is already a dependency (the move
completer and the short forms are written for it), it starts in a few milliseconds, it runs
on its own asyncio loop in a thread of its own, so it serves both a synchronous game (the
:class:`~moska_p2p.table.seat.Referee` calls ``choose`` in the main thread for ``moska
play``) and a trio one (``host``/``join`` run trio in the main thread and ask the person from
a worker thread) without guest modes; textual would add a large dependency, want the main
thread's event loop, and need trio's guest mode to share it.

The layout is fixed, top to bottom: the table (header, seats, bout, hand: drawn by
:func:`~.render.render_table` at the terminal's width), the move log in whatever rows are left
(the whole game, PgUp/PgDn scroll it), a one-line status that is always current, the legal
moves, and the input line with completion. Help, rules and the list of moves open in a pane
over the table and the log, wrapped to the width (Esc or q closes it). Every change is a
redraw in place (the alternate screen: nothing floods the scrollback) and the screen follows
resizes (SIGWINCH when the app was started in the main thread, and a redraw every half
second in any case, which picks up a new size too).

Threading: the game's thread calls :meth:`FullScreen.show`, :meth:`status`, :meth:`pane`
and :meth:`ask`; state is kept under a lock and the app is told to redraw
(``Application.invalidate`` is thread-safe), and :meth:`ask` blocks the caller on a future
that the app's Enter, Ctrl-C or Ctrl-D resolves, or that :meth:`fail` (any thread) fails.
In raw mode Ctrl-C is a key, not a signal: while nothing is asked, the app sends SIGINT to
its own process, so the game's own Ctrl-C handling ("leave the game?") runs as it would
without the full screen. While the app runs, ``sys.stdout`` and ``sys.stderr`` are lines
for the log (a network node's reports would otherwise be written over the table);
:attr:`FullScreen.caught` keeps them to be printed once the terminal is given back.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import re
import signal
import sys
import textwrap
import threading
from collections.abc import Callable, Sequence
from typing import Any, TextIO

from prompt_toolkit.application import Application
from prompt_toolkit.buffer import Buffer
from prompt_toolkit.completion import Completer
from prompt_toolkit.filters import Condition, has_completions
from prompt_toolkit.formatted_text import ANSI, StyleAndTextTuples, to_formatted_text
from prompt_toolkit.input import create_input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.layout import (
    BufferControl,
    Float,
    FloatContainer,
    FormattedTextControl,
    HSplit,
    Layout,
    UIContent,
    UIControl,
    VSplit,
    Window,
)
from prompt_toolkit.layout.menus import CompletionsMenu
from prompt_toolkit.output import create_output
from prompt_toolkit.output.color_depth import ColorDepth
from prompt_toolkit.styles import Style as PtStyle

from ..i18n import _

TableDraw = Callable[[int, int | None], str]
"""Draws the table (ANSI text) at a width, with a hand card picked (its index) or none."""

MIN_WIDTH, MIN_HEIGHT = 60, 20  # the smallest terminal the table is laid out for


def wrap_text(text: str, width: int) -> list[str]:
    """``text`` wrapped to ``width`` columns: a line of columns (help's list of moves)
    continues under its last column, any other line under its own indentation."""
    out: list[str] = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        columns = list(re.finditer(r"  +(?=\S)", line.lstrip()))
        indent = len(line) - len(line.lstrip())
        hang = indent + columns[-1].end() if indent and columns else indent
        if hang > width // 2:
            hang = indent + 4
        out += textwrap.wrap(line, width, subsequent_indent=" " * hang) or [""]
    return out


def legal_line(legal: Sequence[str], width: int) -> str:
    """``legal: take | kill 5D 9C | ...`` cut at whole moves to fit one line; the moves
    are in the notation one types (letters), so they can be copied as they stand."""
    if not legal:
        return ""
    label = _("legal:") + " "
    full = label + " | ".join(legal)
    if len(full) <= width - 1:
        return full
    line = label
    for index, text in enumerate(legal):
        tail = " " + _("(+{count} more: Tab or moves)").format(count=len(legal) - index)
        piece = ("" if index == 0 else " | ") + text
        if len(line) + len(piece) + len(tail) > width - 1:
            return line + tail
        line += piece
    return line  # pragma: no cover - the whole list fitted after all


class _TableControl(UIControl):
    """The table and the log below it, or the open pane: laid out for the size it is given,
    so the header and the hand are always on screen and the log takes what is left."""

    def __init__(self, screen: FullScreen) -> None:
        self.screen = screen

    def is_focusable(self) -> bool:
        return False

    def create_content(self, width: int, height: int | None) -> UIContent:
        lines = self.screen.lines(width, height or MIN_HEIGHT)
        return UIContent(get_line=lambda i: lines[i], line_count=len(lines))


class FullScreen:
    """The full-screen application and its state (see the module docstring)."""

    def __init__(
        self, completer: Completer | None = None, *, color: bool = True, symbols: bool = True
    ) -> None:
        self.color = color
        self.symbols = symbols
        self._lock = threading.RLock()
        self._draw: TableDraw | None = None
        self._hand_size = 0
        self.selected: int | None = None
        self._log: list[str] = []
        self._log_back = 0  # lines scrolled back from the end of the log
        self._log_rows = 1
        self._status = ""
        self._legal: list[str] = []
        self._prompt = "> "
        self._pane: tuple[str, str] | None = None
        self._pane_top = 0
        self._pane_rows = 1
        self.help_text = ""
        self.hand_cards: list[str] = []  # the hand as numbered on the table (for the arrows)
        self.single_keys: dict[str, str] = {}  # keys that answer at once (a replay's n, b, q)
        self._pending: concurrent.futures.Future[str] | None = None
        self._thread: threading.Thread | None = None
        self._ready = threading.Event()
        self._winch_before: Any = None
        self.caught: list[str] = []  # what was printed meanwhile (see the module docstring)
        self._streams: tuple[TextIO, TextIO] | None = None
        self.buffer = Buffer(completer=completer, complete_while_typing=False, multiline=False)
        self.app: Application[None] = self._make_app()

    # ------------------------------------------------------------------ life

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        """Take over the terminal (the alternate screen) until :meth:`stop`."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._run, name="moska-screen", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        self._streams = (sys.stdout, sys.stderr)
        sys.stdout = sys.stderr = _Lines(self._caught)
        if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGWINCH"):
            with contextlib.suppress(ValueError, OSError):
                self._winch_before = signal.signal(signal.SIGWINCH, self._on_winch)

    def stop(self) -> None:
        """Give the terminal back (the screen as it was before :meth:`start`); a question
        still open fails with ``EOFError``."""
        thread = self._thread
        if thread is None:
            return
        self.fail(EOFError())
        self._call(self._exit)
        thread.join(10)
        if self._streams is not None:
            sys.stdout, sys.stderr = self._streams
            self._streams = None
        if self._winch_before is not None:
            with contextlib.suppress(ValueError, OSError):
                signal.signal(signal.SIGWINCH, self._winch_before)
            self._winch_before = None

    def _run(self) -> None:
        try:
            self.app.run(pre_run=self._ready.set, handle_sigint=False)
        finally:
            self._ready.set()
            self.fail(EOFError())  # nobody is left to answer a question still open

    def _exit(self) -> None:
        if self.app.is_running and self.app.future is not None and not self.app.future.done():
            self.app.exit()

    def _caught(self, line: str) -> None:
        self.caught.append(line)
        self.note(line)

    def _on_winch(self, signum: int, frame: object) -> None:
        self.app.invalidate()

    def _call(self, function: Callable[[], None]) -> None:
        """Run ``function`` in the app's loop (buffer and app state live there)."""
        loop = self.app.loop if self.app.is_running else None
        if loop is None:
            function()
            return
        with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
            loop.call_soon_threadsafe(function)

    def _redraw(self) -> None:
        if self.app.is_running:
            self.app.invalidate()

    # ------------------------------------------------------------------ what is shown

    def show(
        self,
        draw: TableDraw,
        hand_size: int,
        log: Sequence[str],
        *,
        legal: Sequence[str] | None = None,
        status: str | None = None,
    ) -> None:
        """A new table and log (the log follows its end unless it is scrolled back), and
        the legal moves and status with it: one change, so no frame mixes old and new."""
        with self._lock:
            if legal is not None:
                self._legal = list(legal)
            if status is not None:
                self._status = status
            self._draw = draw
            self._hand_size = hand_size
            if self.selected is not None and self.selected >= hand_size:
                self.selected = hand_size - 1 if hand_size else None
            if self._log_back:
                self._log_back += max(0, len(log) - len(self._log))
            self._log = list(log)
        self._redraw()

    def note(self, text: str) -> None:
        """A line at the end of the log (the result of a game, the score)."""
        with self._lock:
            self._log.append(text)
        self._redraw()

    def status(self, text: str) -> None:
        with self._lock:
            self._status = text
        self._redraw()

    def legal(self, moves: Sequence[str]) -> None:
        """The legal moves, shown on one line under the status (cut at the width)."""
        with self._lock:
            self._legal = list(moves)
        self._redraw()

    def pane(self, title: str, text: str) -> None:
        """Open a pane over the table (help, rules, the moves)."""
        with self._lock:
            self._pane = (title, text)
            self._pane_top = 0
        self._redraw()

    def close_pane(self) -> None:
        with self._lock:
            self._pane = None
        self._redraw()

    @property
    def pane_open(self) -> bool:
        return self._pane is not None

    def lines(self, width: int, height: int) -> list[StyleAndTextTuples]:
        """The rows above the status line, at this size."""
        with self._lock:
            if self._pane is not None:
                return self._pane_lines(width, height)
            table = self._draw(width, self.selected) if self._draw is not None else ""
            rows = [_fragments(line) for line in table.split("\n")] if table else []
            rows = rows[:height]
            room = height - len(rows) - 1
            self._log_rows = max(1, room)
            if room < 1:
                return rows
            end = max(0, len(self._log) - self._log_back)
            start = max(0, end - room)
            shown = self._log[start:end]
            rule = "─" if self.symbols else "-"
            if self._log_back:
                label = _(" log {first}-{last} of {count} (PgDn: later) ").format(
                    first=start + 1, last=end, count=len(self._log)
                )
            elif start > 0:
                label = _(" log (PgUp: earlier, {count} more) ").format(count=start)
            else:
                label = _(" log ")
            head = (rule * 2 + label).ljust(width - 1, rule)[: width - 1]
            rows.append([("class:rule", head)])
            rows += [_clip(_fragments(line), width - 1) for line in shown]
            return rows

    def _pane_lines(self, width: int, height: int) -> list[StyleAndTextTuples]:
        assert self._pane is not None
        title, text = self._pane
        body = wrap_text(text, max(20, width - 1))
        self._pane_rows = max(1, height - 1)
        top = max(0, min(self._pane_top, len(body) - self._pane_rows))
        self._pane_top = top
        more = " · " + _("PgUp/PgDn scroll") if len(body) > self._pane_rows else ""
        head = f"{title} · " + _("Esc or q closes") + more
        rows: list[StyleAndTextTuples] = [[("class:title", head[: width - 1])]]
        rows += [[("", line)] for line in body[top : top + self._pane_rows]]
        return rows

    def scroll(self, pages: int) -> None:
        """PgUp (``pages`` < 0) / PgDn: the pane, or the log, by a page."""
        with self._lock:
            if self._pane is not None:
                self._pane_top = max(0, self._pane_top + pages * self._pane_rows)
            else:
                page = max(1, self._log_rows)
                most = max(0, len(self._log) - page)
                self._log_back = max(0, min(most, self._log_back - pages * page))
        self._redraw()

    def pick(self, step: int) -> None:
        """Left/Right: pick the next or previous card of the hand."""
        with self._lock:
            size = min(self._hand_size, len(self.hand_cards))
            if not size:
                self.selected = None
            elif self.selected is None:
                self.selected = 0 if step > 0 else size - 1
            else:
                self.selected = (self.selected + step) % size
        self._redraw()

    # ------------------------------------------------------------------ questions

    def ask(self, prompt: str, before_wait: Callable[[], None] | None = None) -> str:
        """The line the person types at ``prompt`` (blocks the calling thread, never the
        app's). Ctrl-C raises ``KeyboardInterrupt``, Ctrl-D on an empty line ``EOFError``,
        and :meth:`fail` whatever it is given. ``before_wait`` runs once the question is
        registered (a flag set just before it can still fail it)."""
        future: concurrent.futures.Future[str] = concurrent.futures.Future()
        with self._lock:
            self._pending = future
            self._prompt = prompt

        def setup() -> None:
            self.buffer.reset()
            self._redraw()

        self._call(setup)
        if not self.running:
            self.fail(EOFError())
        if before_wait is not None:
            before_wait()
        try:
            return future.result()
        finally:
            with self._lock:
                if self._pending is future:
                    self._pending = None
                    self._prompt = ""
            self._redraw()

    def fail(self, error: BaseException) -> bool:
        """Fail the open question with ``error`` (any thread); False if none is open."""
        with self._lock:
            future = self._pending
            self._pending = None
        if future is None or future.done():
            return False
        future.set_exception(error)
        return True

    @property
    def asking(self) -> bool:
        return self._pending is not None

    def _answer(self, text: str) -> None:
        with self._lock:
            future = self._pending
            self._pending = None
        if future is not None and not future.done():
            future.set_result(text)

    # ------------------------------------------------------------------ the app

    def _make_app(self) -> Application[None]:
        asking = Condition(lambda: self._pending is not None)
        empty = Condition(lambda: not self.buffer.text)
        pane = Condition(lambda: self._pane is not None)
        at_word = Condition(lambda: not self.buffer.text or self.buffer.text.endswith(" "))
        single = Condition(lambda: bool(self.single_keys))
        kb = KeyBindings()

        @kb.add("enter")
        def _enter(event: KeyPressEvent) -> None:
            if self._pending is None:
                return
            text = self.buffer.text
            if text.strip() and self._pane is not None:
                self.close_pane()
            self.buffer.reset()
            self._answer(text)

        @kb.add("c-c")
        def _interrupt(event: KeyPressEvent) -> None:
            self.buffer.reset()
            if not self.fail(KeyboardInterrupt()):
                os.kill(os.getpid(), signal.SIGINT)  # the game's own Ctrl-C handling asks

        @kb.add("c-d", filter=empty)
        def _end(event: KeyPressEvent) -> None:
            self.fail(EOFError())

        @kb.add("escape", eager=True)
        def _escape(event: KeyPressEvent) -> None:
            if self._pane is not None:
                self.close_pane()
            elif self.buffer.complete_state is not None:
                self.buffer.cancel_completion()
            else:
                self.buffer.reset()

        @kb.add("q", filter=pane & empty)
        def _close(event: KeyPressEvent) -> None:
            self.close_pane()

        @kb.add("?", filter=empty & asking & ~single)
        def _help(event: KeyPressEvent) -> None:
            if self.help_text:
                self.pane(_("help"), self.help_text)

        @kb.add("pageup")
        def _up(event: KeyPressEvent) -> None:
            self.scroll(-1)

        @kb.add("pagedown")
        def _down(event: KeyPressEvent) -> None:
            self.scroll(1)

        @kb.add("left", filter=at_word & ~has_completions & ~single)
        def _left(event: KeyPressEvent) -> None:
            self.pick(-1)

        @kb.add("right", filter=at_word & ~has_completions & ~single)
        def _right(event: KeyPressEvent) -> None:
            self.pick(1)

        @kb.add("up", filter=~has_completions & ~single)
        def _add(event: KeyPressEvent) -> None:
            card = self.picked_card()
            if card:
                text = self.buffer.text
                self.buffer.text = text + ("" if not text or text.endswith(" ") else " ") + card
                self.buffer.text += " "
                self.buffer.cursor_position = len(self.buffer.text)

        for key in ("n", "b", "q", "e", "right", "left"):
            self._single_key(kb, key, empty & single & ~pane)

        def prompt_text() -> StyleAndTextTuples:
            return [("class:prompt", self._prompt)] if self._pending is not None else []

        body = HSplit(
            [
                Window(_TableControl(self), wrap_lines=False),
                Window(
                    FormattedTextControl(lambda: [("class:status", self._status)]),
                    height=1,
                    style="class:status",
                ),
                Window(FormattedTextControl(self._legal_text), height=1),
                VSplit(
                    [
                        Window(FormattedTextControl(prompt_text), dont_extend_width=True),
                        Window(BufferControl(self.buffer)),
                    ],
                    height=1,
                ),
            ]
        )
        root = FloatContainer(
            body, floats=[Float(xcursor=True, ycursor=True, content=CompletionsMenu(8, 1))]
        )
        style = PtStyle.from_dict(
            {
                "status": "reverse",
                "rule": "" if not self.color else "#888888",
                "title": "bold",
                "prompt": "bold",
            }
        )
        return Application(
            layout=Layout(root, focused_element=self.buffer),
            input=create_input(sys.stdin),
            output=create_output(sys.stdout),
            key_bindings=kb,
            full_screen=True,
            style=style,
            refresh_interval=0.5,
            color_depth=None if self.color else ColorDepth.MONOCHROME,
            mouse_support=False,
        )

    def _legal_text(self) -> StyleAndTextTuples:
        width = self.app.output.get_size().columns
        with self._lock:
            return [("class:legal", legal_line(self._legal, width))]

    def _single_key(self, kb: KeyBindings, key: str, when: Any) -> None:
        """``key`` answers the question at once with its meaning in :attr:`single_keys`."""

        @kb.add(key, filter=when & Condition(lambda: key in self.single_keys), eager=True)
        def _key(event: KeyPressEvent) -> None:
            self._answer(self.single_keys[key])

    def picked_card(self) -> str:
        """The text of the card picked with the arrows ("" if none): set by the caller that
        knows the hand (:attr:`hand_cards`)."""
        with self._lock:
            if self.selected is None or not 0 <= self.selected < len(self.hand_cards):
                return ""
            return self.hand_cards[self.selected]

def _fragments(line: str) -> StyleAndTextTuples:
    return to_formatted_text(ANSI(line))


def _clip(fragments: StyleAndTextTuples, width: int) -> StyleAndTextTuples:
    """A log line cut to ``width`` columns, an ellipsis at the cut (one column a char:
    the table's texts are cards, names and words)."""
    if sum(len(piece[1]) for piece in fragments) <= width:
        return fragments
    out: StyleAndTextTuples = []
    room = width - 1
    for style, text, *_extra in fragments:
        if room <= 0:
            break
        out.append((style, text[:room]))
        room -= len(text[:room])
    out.append(("", "…"))
    return out


class _Lines:
    """A text stream that hands each whole line it is written to ``line`` (the log)."""

    encoding = "utf-8"

    def __init__(self, line: Callable[[str], None]) -> None:
        self._line = line
        self._part = ""

    def write(self, text: str) -> int:
        self._part += text
        *lines, self._part = self._part.split("\n")
        for line in lines:
            if line.strip():
                self._line(line)
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False
