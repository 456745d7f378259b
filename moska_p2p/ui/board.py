"""The standings board of a club event: who lost most so far, and who is still playing where.

After each round every entrant's client shows it (and while a round runs, its tables'
progress): rank, name, losses, games, *korokkeella* and *poronmuna* (RULES M24), forfeits,
the final table's losses once it is played, and a "now" column with each entrant's table
and game. :func:`render_board` draws it as plain lines at any width (80 columns and up
show every column; a narrower screen cuts the names first), for the full screen
(:class:`BoardScreen`, on the project's :class:`~.app.FullScreen`) and for plain output
alike. The data comes from :class:`~moska_p2p.tournament.report.BoardState`, which the
event's runner fills from the core's standings.
"""

from __future__ import annotations

import textwrap
import threading
from collections.abc import Callable, Sequence
from typing import TextIO

from prompt_toolkit.utils import get_cwidth

from ..i18n import _
from ..tournament.report import DONE, NO_RESULT, BoardState, TableStatus, ranks, tied_by_lot
from ..tournament.standings import Row
from .app import FullScreen

PLAIN_WIDTH = 80  # the board's width when it is printed, not drawn on a screen
MIN_NAME = 8  # a name column narrower than this would hide who is who
SCREEN_ROWS_BELOW = 4  # rows of the full screen under the board: the log's rule, status...


def fit(text: str, columns: int, *, ellipsis: str = "…") -> str:
    """``text`` cut or padded to exactly ``columns`` columns on screen (a wide character, a
    CJK name's, takes two)."""
    if columns <= 0:
        return ""
    width = sum(get_cwidth(c) for c in text)
    if width <= columns:
        return text + " " * (columns - width)
    out, used = "", 0
    room = columns - get_cwidth(ellipsis)
    for char in text:
        size = get_cwidth(char)
        if used + size > room:
            break
        out += char
        used += size
    return out + ellipsis + " " * (columns - used - get_cwidth(ellipsis))


def phase_text(state: BoardState) -> str:
    """``round 2 of 3``, ``final table``, ``final standings``, ``before round 1``."""
    if state.finished:
        return _("final standings")
    if state.at_final:
        return _("final table")
    if state.round == 0:
        return _("before round 1")
    return _("round {number} of {rounds}").format(number=state.round, rounds=state.spec.rounds)


def now_text(state: BoardState, key: bytes) -> str:
    """What ``key`` is doing now: its table and game, or that its table is done."""
    if state.finished or not state.tables:
        return ""
    table = state.table_of(key)
    if table is None:
        return "" if state.at_final else _("sits out")
    return table_text(table)


def table_text(table: TableStatus) -> str:
    if table.state == DONE:
        return _("table {number}: done").format(number=table.number)
    if table.state == NO_RESULT:
        return _("table {number}: no result").format(number=table.number)
    return _("table {number}, game {game}/{games}").format(
        number=table.number, game=min(table.games, table.played + 1), games=table.games
    )


def render_board(
    state: BoardState,
    width: int,
    *,
    height: int | None = None,
    you: bytes | None = None,
    symbols: bool = True,
) -> list[str]:
    """The board as lines of at most ``width - 1`` columns (the last column of a terminal
    is left alone: writing there wraps on some). ``height``: at most that many lines, the
    top of the standings kept (and ``you``'s row, marked, if it would be cut off)."""
    dot, ellipsis, pointer = ("·", "…", "▶") if symbols else (".", "~", ">")
    room = max(20, width - 1)
    rows: Sequence[Row] = state.rows
    final = any(row.final_points is not None for row in rows)
    shown_ranks = ranks(rows)
    numbers: list[tuple[str, list[str]]] = [
        (_("losses"), [str(r.points) for r in rows]),
        (_("games"), [str(r.games) for r in rows]),
        (_("kor."), [str(r.korokkeella) for r in rows]),
        (_("por."), [str(r.poronmuna) for r in rows]),
        (_("forf."), [str(r.forfeits) for r in rows]),
    ]
    if final:
        numbers.append(
            (_("final"), ["" if r.final_points is None else str(r.final_points) for r in rows])
        )
    now = [now_text(state, r.key) for r in rows]
    rank_w = max([1, *(len(rank) for rank in shown_ranks)])
    number_ws = [max(len(head), *(len(v) for v in values)) for head, values in numbers]
    fixed = 1 + rank_w + sum(2 + w for w in number_ws)  # the gutter, rank, numbers
    now_w = max([0, *(get_cwidth(n) for n in now)])
    if now_w:
        now_w = max(now_w, get_cwidth(_("now")))
    name_w = max(get_cwidth(_("name")), *(sum(get_cwidth(c) for c in r.name) for r in rows))
    spare = room - fixed - 2 - (2 + now_w if now_w else 0)
    if name_w > spare:
        name_w = max(MIN_NAME, spare)
        spare = room - fixed - 2 - name_w - 2
        if now_w and now_w > spare:
            now_w = max(0, spare)

    def line(gutter: str, rank: str, name: str, values: Sequence[str], doing: str) -> str:
        text = gutter + rank.rjust(rank_w) + "  " + fit(name, name_w, ellipsis=ellipsis)
        text += "".join("  " + v.rjust(w) for v, w in zip(values, number_ws, strict=True))
        if now_w:
            text += "  " + fit(doing, now_w, ellipsis=ellipsis)
        return fit(text.rstrip(), room, ellipsis=ellipsis).rstrip()

    title = f"{state.spec.name} {dot} {phase_text(state)}"
    out = [fit(title, room, ellipsis=ellipsis).rstrip()]
    out.append(line(" ", "#", _("name"), [h for h, _v in numbers], _("now") if now_w else ""))
    body = [
        line(
            pointer if row.key == you else " ",
            shown_ranks[i],
            row.name,
            [values[i] for _h, values in numbers],
            now[i],
        )
        for i, row in enumerate(rows)
    ]
    footer = _footer(state, rows, room, dot)
    if height is not None and len(out) + len(body) + len(footer) > height:
        keep = max(1, height - len(out) - len(footer) - 1)
        mine = next((i for i, row in enumerate(rows) if row.key == you), None)
        cut = len(body) - keep
        if mine is not None and mine >= keep:  # your own row in place of the last shown
            body[keep - 1] = body[mine]
        del body[keep:]
        body.append(" " + _("{count} more not shown").format(count=cut) + f" {ellipsis}")
    return [*out, *body, *footer][: height if height is not None else None]


def _footer(state: BoardState, rows: Sequence[Row], room: int, dot: str) -> list[str]:
    """The round's tables in one line (wrapped), then what the marks mean."""
    notes: list[str] = []
    if state.tables and not state.finished:
        playing = sum(table.state not in (DONE, NO_RESULT) for table in state.tables)
        summary = _("{playing} of {count} tables playing").format(
            playing=playing, count=len(state.tables)
        )
        notes.append(f" {dot} ".join([summary, *(table_text(t) for t in state.tables)]))
    if any(tied_by_lot(rows)):
        notes.append(_("= tied: the order between them is by lot"))
    missing = [row for row in rows if row.no_result]
    if missing:
        rounds = ", ".join(f"{row.name} ({', '.join(map(str, row.no_result))})" for row in missing)
        notes.append(_("a table that left no result (round): {rounds}").format(rounds=rounds))
    out: list[str] = []
    for note in notes:
        out += textwrap.wrap(note, room, subsequent_indent="  ") or [""]
    return out


class BoardScreen:
    """The board as its entrant sees it: full screen (``interactive``), redrawn at each
    :meth:`update`, until q or Ctrl-C (then ``quit`` is called, in the screen's thread); or,
    not on a terminal, the board printed to ``out`` each time it changes."""

    def __init__(
        self,
        *,
        interactive: bool,
        out: TextIO,
        you: bytes | None = None,
        symbols: bool = True,
        color: bool = True,
        quit: Callable[[], None] | None = None,
    ) -> None:
        self.out = out
        self.you = you
        self.symbols = symbols
        self.quit = quit
        self.screen = FullScreen(color=color, symbols=symbols) if interactive else None
        self.closed = threading.Event()  # the person left the board (q, Ctrl-C)
        self._keys: threading.Thread | None = None
        self._last: BoardState | None = None
        self._printed: list[str] = []
        self._lock = threading.Lock()

    def update(self, state: BoardState, status: str = "") -> None:
        """Show ``state`` (any thread)."""
        with self._lock:
            self._last = state
        screen = self.screen
        if screen is None:
            lines = render_board(state, PLAIN_WIDTH, you=self.you, symbols=self.symbols)
            if lines != self._printed:
                self._printed = lines
                self.out.write("\n".join(lines) + "\n\n")
                self.out.flush()
            return
        if not screen.running:
            self._start(screen)
        screen.show(lambda width, _selected: self._draw(state, width), 0, [], status=status)

    def note(self, text: str) -> None:
        """A line under the board (a round's result came in, an entrant left)."""
        if self.screen is None:
            self.out.write(text + "\n")
            self.out.flush()
        else:
            self.screen.note(text)

    def _draw(self, state: BoardState, width: int) -> str:
        assert self.screen is not None
        rows = self.screen.app.output.get_size().rows - SCREEN_ROWS_BELOW
        lines = render_board(state, width, height=max(4, rows), you=self.you, symbols=self.symbols)
        return "\n".join(lines)

    def _start(self, screen: FullScreen) -> None:
        screen.start()
        screen.single_keys = {"q": "q"}
        self._keys = threading.Thread(target=self._read_keys, name="moska-board", daemon=True)
        self._keys.start()

    def _read_keys(self) -> None:
        screen = self.screen
        assert screen is not None
        prompt = _("q: leave the board · PgUp/PgDn: the log ")
        if not self.symbols:
            prompt = prompt.replace("·", "|")
        try:
            while screen.ask(prompt) != "q":
                pass
        except (KeyboardInterrupt, EOFError):
            pass
        self.closed.set()
        if self.quit is not None:
            self.quit()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the person leaves the board (or ``timeout``); True if they did.
        Not on a terminal there is nothing to leave: True at once."""
        if self.screen is None:
            return True
        return self.closed.wait(timeout)

    def close(self) -> None:
        """Give the terminal back, and print the last board there (as the table's screens
        leave their last table behind)."""
        screen = self.screen
        if screen is None or not screen.running:
            return
        self.quit = None
        screen.stop()
        if self._keys is not None:
            self._keys.join(5)
        for line in screen.caught:
            self.out.write(line + "\n")
        with self._lock:
            last = self._last
        if last is not None:
            lines = render_board(last, PLAIN_WIDTH, you=self.you, symbols=self.symbols)
            self.out.write("\n".join(lines) + "\n")
        self.out.flush()


def show_board(
    state: BoardState,
    *,
    interactive: bool,
    out: TextIO,
    you: bytes | None = None,
    symbols: bool = True,
    color: bool = True,
) -> None:
    """Show one board until q or Ctrl-C (full screen), or print it (not on a terminal): the
    standings of an event's folder, looked at after the event."""
    board = BoardScreen(interactive=interactive, out=out, you=you, symbols=symbols, color=color)
    try:
        board.update(state)
        board.wait()
    finally:
        board.close()
