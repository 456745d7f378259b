"""A person at the terminal, seated through the bot API.

:class:`TerminalPlayer` has the bot's ``choose(view, legal_moves)`` and hooks, so any driver
that seats bots (the local game of ``moska play``, a network peer) seats a person the same
way. On a terminal it plays in the full-screen table (:mod:`.app`: the table, the whole
game's log, a status line, the input line with tab completion of the legal moves); in plain
mode (not a terminal, or ``--plain``) it prints lines and reads them with ``input()``, so it
can be scripted. It understands short forms (:mod:`.shorthand`) and never returns anything
but a legal move: a mistyped or illegal move gets a one-line reason and the prompt again.
"""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from ..bots.api import BaseBot, Event, GameResult
from ..bots.levels import HINT_BOT
from ..engine import Move, View, make_rules
from ..i18n import N_, _, language
from ..table.seat import LeaveTable
from .app import FullScreen, legal_line, wrap_text
from .movewords import from_words, in_words
from .render import (
    Style,
    TableWait,
    black_maija_text,
    color_wanted,
    log_lines,
    move_text,
    render_table,
    seconds_text,
    sort_hand,
    strip_ansi,
    symbols_wanted,
    turn_text,
    wait_text,
)
from .shorthand import expand_verb, read_move

COMMANDS = ("help", "rules", "hint", "moves", "quit")
FINNISH_COMMANDS = {"ohje": "help", "säännöt": "rules", "vihje": "hint", "siirrot": "moves",
                    "lopeta": "quit"}  # fmt: skip
"""The commands' Finnish names, understood in Finnish (and offered by Tab there)."""
YES = ("y", "yes")
FINNISH_YES = ("k", "kyllä", "kylla")
"""Yes in Finnish (kyllä), understood besides y and yes when the language is Finnish."""
DEFAULT_HINT = HINT_BOT  # the strongest level's bot (bots/levels.py)

HELP_HEAD = N_("Moves (any case; cards as 3H, 10D, QS or with ♣ ♦ ♥ ♠):")
HELP_MOVES = (
    ("attack", N_("  attack 3H 3S   a    open a bout, or throw in, with one or more cards")),
    ("attack deck", N_("  attack deck    a    attack with the top card of the stock")),
    ("kill", N_("  kill 3H 7H     k    kill the attack card 3H with your 7H")),
    ("take", N_("  take           t    pick up the cards on the table")),
    ("pass", N_("  pass           p    nothing to add now (answered for you when it is the only"
                " move)")),
    ("exchange", N_("  exchange       x    swap the trump indicator for your low trump")),
    ("self", N_("  self 8S 9S     s    kill your own attack card from the stock")),
    ("deck-kill", N_("  deck-kill      dk   kill with the top card of the stock")),
    ("transfer", N_("  transfer 7C    tr   pass the attack on; transfer show 7D")),
    ("beg", N_("  beg 3H 9H      b    swap a killer for another")),
)  # fmt: skip
"""Each move kind's line of the help: only the kinds the game's rules have are listed."""
HELP_TAIL = N_("""\
A number stands for that card of your hand as numbered on the table: "k 3h 2" kills 3H \
with hand card 2, "a 1 2" attacks with cards 1 and 2; "k 9c" is enough when 9C fits only \
one card on the table. Tab completes a legal move.
Commands: help (this), rules (the game's rules in brief), hint (what the strongest bot \
would play), moves (every legal move), quit (leave the game). Ctrl-C asks whether to leave.
Keys on the full-screen table: ? help; Left/Right pick a card of your hand, Up adds it to \
the line; Esc clears the line (or closes this pane); PgUp/PgDn scroll the log (or this pane).\
""")


HELP = "\n".join([HELP_HEAD, *(line for _kind, line in HELP_MOVES), HELP_TAIL])
"""The whole help in English, every move kind listed (untranslated: :func:`help_text`)."""


def help_text(preset: str | None) -> str:
    """The help for a game of ``preset`` (every move kind when none is known yet), translated,
    one logical line per line: :func:`.app.wrap_text` wraps it to the width."""
    from ..rules_text import move_kinds

    kinds = move_kinds(make_rules(preset)) if preset else [kind for kind, _line in HELP_MOVES]
    lines = [_(HELP_HEAD), *(_(line) for kind, line in HELP_MOVES if kind in kinds)]
    return "\n".join([*lines, _(HELP_TAIL)])


class LeaveGame(LeaveTable):
    """The person chose to leave the game (``quit``, or yes to "leave the game?")."""


class TerminalPlayer(BaseBot):
    """One seat played by a person at the terminal (see the module docstring).

    ``names`` are the seats' names, for the table. ``view_source`` returns this seat's
    current view; with it the table is redrawn after every move of any seat (``observe``),
    without it only each move's line is shown. ``auto_pass`` is the pause in seconds
    before a lone ``pass`` is answered, ``pace`` the pause after another seat's move so a
    person can follow the play (0: none), ``hint`` the bot asked by the ``hint`` command.
    ``interactive`` defaults to "stdin and stdout are terminals, and not ``plain``": then
    the game is played in the full-screen table; otherwise lines are printed and read one
    by one.
    """

    name = "person"
    is_person = True  # the referee gives a person no budget and no forfeit (table.seat)

    def __init__(
        self,
        names: Sequence[str],
        *,
        view_source: Callable[[], View] | None = None,
        auto_pass: float = 0.8,
        pace: float = 0.0,
        hint: str = DEFAULT_HINT,
        color: bool | None = None,
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        interactive: bool | None = None,
        plain: bool = False,
    ) -> None:
        self.names = list(names)
        self.view_source = view_source
        self.auto_pass = auto_pass
        self.pace = pace
        self.hint_spec = hint
        self.stdin = stdin or sys.stdin
        self.out = stdout or sys.stdout
        if interactive is None:
            interactive = not plain and _isatty(self.stdin) and _isatty(self.out)
        self.interactive = interactive
        self.color = color_wanted(self.out) if color is None else color
        self.symbols = symbols_wanted(self.out)
        self.seat = 0
        self._screen: FullScreen | None = None
        self._completer = _MoveCompleter()
        self._hint_bot: Any = None
        self._closed = False
        self._interrupted = False
        self._last = ""  # the latest move, for the status line ("bob: attack J♦")
        self._final = ""  # the table to leave on the terminal when the screen closes
        self._said: list[str] = []  # what was said since, printed after the table
        self.waiting: TableWait | None = None  # what a network table waits for (status line)
        self._preset = ""  # the game's preset, as its views said

    # ------------------------------------------------------------------ bot API

    def start_game(self, view: View) -> None:
        self.seat = view.seat
        self._preset = view.preset
        self._last = ""
        self._said = []
        if self.interactive:
            self._draw(view, _("A new game: the deal."))
        elif self.view_source is None:
            self._print(self.table(view))

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        """Show the table and ask until the person names a legal move."""
        self.seat = view.seat
        self._preset = view.preset
        if len(legal_moves) == 1 and legal_moves[0].kind_name == "pass":
            self._draw(view, _("Nothing to do: passing for you."))
            if self.auto_pass > 0:
                self._sleep(self.auto_pass)
            return legal_moves[0]
        texts = [in_words(str(m)) for m in legal_moves]  # in the table's language
        keys = _("? help") if self.interactive else _("type a move, or help, hint, quit")
        status = _("Your move: {decision} ({keys})").format(
            decision=_decision(view.decision), keys=keys
        )
        self._draw(view, status, texts)
        finnish = language() == "fi"
        self._completer.words = [*texts, *COMMANDS, *(FINNISH_COMMANDS if finnish else ())]
        while True:
            line = self._ask().strip()
            word = line.lower()
            if finnish:
                word = FINNISH_COMMANDS.get(word, word)
            if not word:
                if not self.interactive:
                    self._draw(view, status, texts)
                continue
            if word in ("help", "?", "h"):
                self._show_text(_("help"), help_text(view.preset))
            elif word == "rules":
                self._show_text(_("rules"), _rules(view.preset))
            elif word == "hint":
                self._tell(view, self._hint(view, legal_moves))
            elif word == "moves":
                self._show_text(_("legal moves"), _("legal moves:") + " " + " | ".join(texts))
            elif word in ("quit", "exit", "q"):
                raise LeaveGame("quit")
            else:
                try:
                    return read_move(line, view, legal_moves)
                except ValueError as error:
                    self._tell(view, _("not played: {reason}").format(reason=error))

    def observe(self, event: Event) -> None:
        """Redraw the table after a move (or print its line), then pause a moment after
        another seat's move so the play can be followed."""
        who = (
            self.names[event.seat]
            if event.seat < len(self.names)
            else _("seat {seat}").format(seat=event.seat)
        )
        text = move_text(str(event.move), Style(color=False, symbols=self.symbols))
        self._last = f"{who}: {text}"
        if self.interactive and self.view_source is not None:
            view = self.view_source()
            wait = self.waiting
            if wait is not None:
                self._draw(view, wait_text(wait, self.names, view))
            else:  # a game at this terminal (a bot on move), or this seat's own move
                self._draw(view, turn_text(view, self.names))
            if event.seat != self.seat and view.to_act != self.seat and self.pace > 0:
                self._sleep(self.pace)
        elif self.interactive:
            self._status(self._last)
        else:
            self._print(self._last)

    def end_game(self, result: GameResult) -> None:
        """The final table, the losers marked, and who lost in words."""
        losers = list(result.losers)
        if result.forfeit is not None:
            what = _("{name} forfeited: {reason}").format(
                name=self._name(result.forfeit), reason=result.reason
            )
        elif not losers:
            what = _("A draw: nobody holds cards.")
        elif self.seat in losers:
            what = (
                _("You lost.")
                if len(losers) == 1
                else _("You lost, with {names}.").format(names=self._names(losers))
            )
        else:
            what = _("{names} lost; you did not.").format(names=self._names(losers))
        if result.forfeit is None:
            maija = black_maija_text(
                self._preset, [self._name(s) for s in losers], symbols=self.symbols
            )
            what = " ".join(part for part in (what, maija) if part)
        line = _("Game over after {count} moves. {what}").format(count=result.moves, what=what)
        if self.view_source is not None:
            view = self.view_source()
            if self.interactive:
                self._last = ""
                self._draw(view, "", losers=losers)
                self._final = self.table(view, losers=losers)
                self._said = []
                self.say(line)
                return
            self._print(self.table(view, losers=losers))
        self.say(line)

    def expect(self, wait: TableWait | None) -> None:
        """What the table waits for now, said with the next move's table (:meth:`observe`)."""
        self.waiting = wait

    def show_wait(self, view: View | None, wait: TableWait) -> None:
        """What a network table waits for, said while nothing is asked (once a second: the
        countdown moves): the table from the deal on, its status the wait in words. Only on
        the full screen: in lines it would print a line a second."""
        self.waiting = wait
        if not self.interactive:
            return
        text = wait_text(wait, self.names, view)
        if view is None:
            self._status(text)
        else:
            self._draw(view, text)

    def show_clock(self, left: float | None) -> None:
        """The seconds left for this seat's move at a network table (None: no question, no
        clock), after the status line's text, once a second."""
        if self.interactive and self._screen is not None:
            self._screen.clock(
                "" if left is None else _("{left} left").format(left=seconds_text(left))
            )

    def open(self) -> None:
        """Open the full-screen table now (a network seat, as its game starts, from the main
        thread: then resizes reach it as signals); plain mode has nothing to open. A new
        table starts afresh: an earlier game's :meth:`abort` no longer applies, and its last
        move is not this game's (the status line)."""
        self._closed = self._interrupted = False
        self._last = ""
        if self.interactive:
            self._open_screen()

    def close(self) -> None:
        """Leave the full-screen table (if it was shown) and print the last table and what
        was said since the game ended, so they stay on the terminal."""
        screen, self._screen = self._screen, None
        if screen is None:
            return
        screen.stop()
        lines = [self._final] if self._final else []
        self._print("\n".join([*lines, *self._said, *screen.caught]))
        self._final, self._said = "", []

    # ------------------------------------------------------------------ questions

    def confirm_leave(self) -> bool:
        """Ask "leave the game?" (No by default). A second Ctrl-C or the end of input
        counts as yes: the person clearly wants out."""
        try:
            answer = self._question(_("leave the game? [y/N] "))
        except (KeyboardInterrupt, EOFError):
            if not self.interactive:
                self._print("")
            return True
        return answer.strip().lower() in _yes()

    def ask_yes(self, question: str, default: bool = False) -> bool:
        """A yes/no question (``play again?``, no by default: a habitual Enter must not
        start another game); Ctrl-C or the end of input is no. With no table on the screen
        (between a network session's games: each game's table is closed so the node's
        report stays on the terminal) it is a line question under that report; a full
        screen opened for it would hide the report and keep the terminal if the session
        ends there."""
        hint = _("[Y/n]") if default else _("[y/N]")
        line = not self.interactive or self._screen is None
        try:
            if line:
                answer = self._read_plain(f"{question} {hint} ").strip().lower()
            else:
                answer = self._question(f"{question} {hint} ").strip().lower()
        except (KeyboardInterrupt, EOFError):
            if line:
                self._print("")
            return False
        return default if not answer else answer in _yes()

    def abort(self) -> None:
        """Close the question a ``choose`` in another thread waits at (a network game ended
        meanwhile, or its time ran out): that ``choose`` raises :class:`LeaveGame` ("closed").
        Safe from any thread; a plain ``input()`` cannot be interrupted (the driver abandons
        that thread)."""
        self._closed = True
        if self._screen is not None:
            self._screen.fail(LeaveGame("closed"))

    def interrupt(self) -> None:
        """Ctrl-C reached the driver (a signal) while a ``choose`` runs in another thread:
        the question, now or as it starts, asks "leave the game?" as if Ctrl-C was typed at
        it. Safe from any thread."""
        self._interrupted = True
        if self._screen is not None and self._screen.fail(KeyboardInterrupt()):
            self._interrupted = False

    # ------------------------------------------------------------------ drawing

    def table(self, view: View, losers: Sequence[int] | None = None) -> str:
        columns = shutil.get_terminal_size((80, 24)).columns if self.interactive else 80
        return render_table(
            view,
            self.names,
            color=self.color,
            symbols=self.symbols,
            losers=losers,
            width=max(40, min(80, columns)),
        )

    def say(self, text: str) -> None:
        """A line for the person (the driver's messages: scores, results)."""
        if self.interactive:
            self._said.append(text)
            self._open_screen().note(text)
            self._status(text)
        else:
            self._print(text)

    def _draw(
        self,
        view: View,
        status: str,
        legal: Sequence[str] = (),
        losers: Sequence[int] | None = None,
    ) -> None:
        if not self.interactive:
            lines = [self.table(view), status]
            if legal:
                lines.append(legal_line(legal, 80))
            self._print("\n".join(lines))
            return
        screen = self._open_screen()
        names, color, symbols = list(self.names), self.color, self.symbols
        self._preset = view.preset
        screen.hand_cards = sort_hand(view.hand, view.trump)
        screen.help_text = help_text(view.preset)
        screen.show(
            lambda width, picked: render_table(
                view,
                names,
                color=color,
                symbols=symbols,
                width=width,
                height=0,
                losers=losers,
                selected=picked,
            ),
            len(view.hand),
            log_lines(
                view.history, names, color=color, symbols=symbols, trump=view.trump, width=200
            ),
            legal=legal,
            status=status,
        )

    def _status(self, text: str) -> None:
        """The status line: what is asked, waited for or was said (the latest move is the
        log's last line, drawn from the same view: the status does not repeat it)."""
        self._open_screen().status(text)

    def _tell(self, view: View, text: str) -> None:
        """A one-line answer (a hint, why a move was not played)."""
        if self.interactive:
            self._status(text)
        else:
            self._print(text)

    def _show_text(self, title: str, text: str) -> None:
        """Help, rules, the moves: in a pane, or printed wrapped to 80 columns."""
        if self.interactive:
            self._open_screen().pane(title, text)
        else:
            self._print("\n".join(wrap_text(text, 79)))

    def _open_screen(self) -> FullScreen:
        if self._screen is None:
            self._screen = FullScreen(self._completer, color=self.color, symbols=self.symbols)
            self._screen.help_text = help_text(None)
            self._screen.start()
        return self._screen

    def _print(self, text: str) -> None:
        if not self.color:
            text = strip_ansi(text)
        self.out.write(text + "\n")
        self.out.flush()

    def _name(self, seat: int) -> str:
        return _("you") if seat == self.seat else self.names[seat]

    def _names(self, seats: Iterable[int]) -> str:
        return ", ".join(self._name(s) for s in seats)

    def _sleep(self, seconds: float) -> None:
        try:
            time.sleep(seconds)
        except KeyboardInterrupt:
            if self.confirm_leave():
                raise LeaveGame("interrupted") from None

    # ------------------------------------------------------------------ reading

    def _ask(self) -> str:
        """One line from the person, with completion of the legal moves; Ctrl-C asks
        whether to leave, the end of input leaves."""
        while True:
            if self._closed:
                raise LeaveGame("closed")
            try:
                if self._interrupted and not self.interactive:
                    self._interrupted = False
                    raise KeyboardInterrupt
                if self.interactive:
                    return self._open_screen().ask(
                        "> ", before_wait=self._before_wait, keep_typed=True
                    )
                return self._read_plain("> ")
            except KeyboardInterrupt:
                if self.confirm_leave():
                    raise LeaveGame("interrupted") from None
            except EOFError:
                if self._closed:
                    raise LeaveGame("closed") from None
                if not self.interactive or self.confirm_leave():
                    raise LeaveGame("end of input") from None

    def _before_wait(self) -> None:
        """:meth:`abort` or :meth:`interrupt` may have come just before the question."""
        if self._screen is None:
            return
        if self._closed:
            self._screen.fail(LeaveGame("closed"))
        elif self._interrupted:
            self._interrupted = False
            self._screen.fail(KeyboardInterrupt())

    def _question(self, prompt: str) -> str:
        if self.interactive:
            return self._open_screen().ask(prompt)
        return self._read_plain(prompt)

    def _read_plain(self, prompt: str) -> str:
        self.out.write(prompt)
        self.out.flush()
        if self.stdin is sys.stdin:
            return input()
        line = self.stdin.readline()
        if not line:
            raise EOFError
        return line.rstrip("\n")

    def _hint(self, view: View, legal: Sequence[Move]) -> str:
        """What the strongest bot would play here (a search: it takes a moment)."""
        from ..bots.loader import BotLoadError, load_bot

        try:
            if self._hint_bot is None:
                self._hint_bot = load_bot(self.hint_spec)
            move = self._hint_bot.choose(view, legal)
        except (BotLoadError, ImportError, ValueError) as error:
            return _("no hint: {reason}").format(reason=error)
        name = self.hint_spec.split(":")[0]
        return _("hint ({bot}): {move}").format(bot=name, move=move)


_DECISIONS = {
    "open": N_("open a bout"),
    "defend": N_("defend (kill or take)"),
    "throw-in": N_("throw in or pass"),
    "give": N_("give more or pass"),
    "exchange-or-pass": N_("exchange the trump or pass"),
    "twos": N_("play twos"),
}


def _decision(decision: str) -> str:
    words = _DECISIONS.get(decision)
    return _(words) if words else decision


def _yes() -> tuple[str, ...]:
    """The answers that mean yes: y and yes, and in Finnish also k and kyllä."""
    return YES + FINNISH_YES if language() == "fi" else YES


def _rules(preset: str) -> str:
    from ..rules_text import rules_text

    return rules_text(preset)


def _isatty(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty is not None and isatty())
    except ValueError:  # a closed stream
        return False


class _MoveCompleter(Completer):
    """Completes the whole line to a legal move or a command; a short verb counts as the
    long one (``k <Tab>`` offers the kills)."""

    def __init__(self) -> None:
        self.words: list[str] = []

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        typed = document.text_before_cursor
        wanted = " ".join(expand_verb(typed).lower().split())
        if typed.endswith(" ") and wanted:
            wanted += " "
        for word in self.words:
            if from_words(word).lower().startswith(wanted):  # tapa 4H 2C is kill 4h 2c
                yield Completion(word, start_position=-len(typed))
