"""A person at the terminal, seated through the bot API.

:class:`TerminalPlayer` has the bot's ``choose(view, legal_moves)`` and hooks, so any driver
that seats bots (the local game of ``moska play``, later a network peer) seats a person the
same way. It draws the table (:mod:`.render`), reads a move with tab completion of the legal
moves (prompt_toolkit on a terminal, plain ``input()`` otherwise, so it can be scripted),
understands short forms (:mod:`.shorthand`), and never returns anything but a legal move: a
mistyped or illegal move gets a one-line reason and the prompt again.
"""

from __future__ import annotations

import contextlib
import shutil
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TextIO

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

from ..bots.api import BaseBot, Event, GameResult
from ..engine import Move, View
from ..table.seat import LeaveTable
from .render import Style, color_wanted, move_text, render_table, strip_ansi, symbols_wanted
from .shorthand import expand_verb, read_move

CLEAR = "\x1b[H\x1b[2J"
COMMANDS = ("help", "rules", "hint", "moves", "quit")
DEFAULT_HINT = "ismcts:time=0.3"

HELP = """\
Moves (RULES C6 notation, any case; cards as 3H, 10D, QS or with ♣ ♦ ♥ ♠):
  attack 3H 3S     a (attack)       open a bout, or throw in, with one or more cards
  attack deck      a deck           attack with the top card of the stock
  kill 3H 7H       k (kill)         kill the attack card 3H with your 7H
  take             t                pick up the cards on the table
  pass             p                nothing to add now (answered for you when it is the
                                    only move)
  exchange         x                swap the trump indicator for your low trump
  self 8S 9S       s                kill your own attack card from the stock
  deck-kill        dk               kill with the top card of the stock
  transfer 7C      tr               pass the attack on (perevodnoy); transfer show 7D
  beg 3H 9H        b                (kaavi)
A number stands for that card of your hand as numbered on the table: "k 3h 2" kills 3H
with hand card 2, "a 1 2" attacks with cards 1 and 2; "k 9c" is enough when 9C fits only
one card on the table. Tab completes a legal move.
Commands: help (this), rules (the game's rules in brief), hint (what the strongest bot
would play), moves (every legal move), quit (leave the game); Enter redraws the table.
Ctrl-C asks whether to leave."""


class LeaveGame(LeaveTable):
    """The person chose to leave the game (``quit``, or yes to "leave the game?")."""


class TerminalPlayer(BaseBot):
    """One seat played by a person at the terminal (see the module docstring).

    ``names`` are the seats' names, for the table. ``view_source`` returns this seat's
    current view; with it the table redraws after every move of any seat (``observe``),
    without it only each move's line is printed. ``auto_pass`` is the pause in seconds
    before a lone ``pass`` is answered, ``pace`` the pause after another seat's move so a
    person can follow the play (0: none), ``hint`` the bot asked by the ``hint`` command.
    ``interactive`` defaults to "stdin and stdout are terminals": then the screen is
    redrawn in place and moves are read with completion; otherwise lines are printed and
    read one by one.
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
    ) -> None:
        self.names = list(names)
        self.view_source = view_source
        self.auto_pass = auto_pass
        self.pace = pace
        self.hint_spec = hint
        self.stdin = stdin or sys.stdin
        self.out = stdout or sys.stdout
        if interactive is None:
            interactive = _isatty(self.stdin) and _isatty(self.out)
        self.interactive = interactive
        self.color = color_wanted(self.out) if color is None else color
        self.symbols = symbols_wanted(self.out)
        self.seat = 0
        self._prompt: PromptSession[str] | None = None
        self._completer: _MoveCompleter | None = None
        self._hint_bot: Any = None
        self._closed = False
        self._interrupted = False

    # ------------------------------------------------------------------ bot API

    def start_game(self, view: View) -> None:
        self.seat = view.seat
        if self.view_source is None:
            self._print(self.table(view))

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        """Show the table and ask until the person names a legal move."""
        self.seat = view.seat
        if len(legal_moves) == 1 and legal_moves[0].kind_name == "pass":
            self._draw(view, "Nothing to do: passing for you.")
            if self.auto_pass > 0:
                self._sleep(self.auto_pass)
            return legal_moves[0]
        texts = [str(m) for m in legal_moves]
        status = f"Your move: {_decision(view.decision)}. Type a move, or help, hint, quit."
        self._draw(view, status, texts)
        while True:
            line = self._ask(texts).strip()
            word = line.lower()
            if not word:
                self._draw(view, status, texts)
                continue
            if word in ("help", "?", "h"):
                self._print(HELP)
            elif word == "rules":
                self._print(_rules(view.preset))
            elif word == "hint":
                self._print(self._hint(view, legal_moves))
            elif word == "moves":
                self._print("legal moves: " + " | ".join(texts))
            elif word in ("quit", "exit", "q"):
                raise LeaveGame("quit")
            else:
                try:
                    return read_move(line, view, legal_moves)
                except ValueError as error:
                    self._print(f"not played: {error}")

    def observe(self, event: Event) -> None:
        """Redraw the table after a move (or print its line), then pause a moment after
        another seat's move so the play can be followed."""
        who = self.names[event.seat] if event.seat < len(self.names) else f"seat {event.seat}"
        text = move_text(str(event.move), Style(color=False, symbols=self.symbols))
        if self.interactive and self.view_source is not None:
            view = self.view_source()
            # Our own move, or our turn next: choose() draws the table anyway.
            if event.seat != self.seat and view.to_act != self.seat:
                self._draw(view, f"{who}: {text}")
                if self.pace > 0:
                    self._sleep(self.pace)
        else:
            self._print(f"{who}: {text}")

    def end_game(self, result: GameResult) -> None:
        """The final table, the losers marked, and who lost in words."""
        losers = list(result.losers)
        if self.view_source is not None:
            view = self.view_source()
            self._print(self.table(view, losers=losers), clear=self.interactive)
        if result.forfeit is not None:
            what = f"{self._name(result.forfeit)} forfeited: {result.reason}"
        elif not losers:
            what = "A draw: nobody holds cards."
        elif self.seat in losers:
            what = "You lost." if len(losers) == 1 else f"You lost, with {self._names(losers)}."
        else:
            what = f"{self._names(losers)} lost; you did not."
        self._print(f"Game over after {result.moves} moves. {what}")

    # ------------------------------------------------------------------ questions

    def confirm_leave(self) -> bool:
        """Ask "leave the game?" (No by default). A second Ctrl-C or the end of input
        counts as yes: the person clearly wants out."""
        try:
            answer = self._read_plain("leave the game? [y/N] ")
        except (KeyboardInterrupt, EOFError):
            self._print("")
            return True
        return answer.strip().lower() in ("y", "yes")

    def ask_yes(self, question: str, default: bool = True) -> bool:
        """A yes/no question (``play again?``); Ctrl-C or the end of input is no."""
        hint = "[Y/n]" if default else "[y/N]"
        try:
            answer = self._read_plain(f"{question} {hint} ").strip().lower()
        except (KeyboardInterrupt, EOFError):
            self._print("")
            return False
        return default if not answer else answer in ("y", "yes")

    def abort(self) -> None:
        """Close the prompt a ``choose`` in another thread waits at (a network game ended
        meanwhile, or its time ran out): that ``choose`` raises :class:`LeaveGame` ("closed")
        and the terminal is restored. Safe from any thread; a plain ``input()`` cannot be
        interrupted (the driver abandons that thread)."""
        self._closed = True
        self._stop_prompt(lambda: LeaveGame("closed"))

    def interrupt(self) -> None:
        """Ctrl-C reached the driver (a signal) while a ``choose`` runs in another thread:
        the prompt, now or as it starts, asks "leave the game?" as if Ctrl-C was typed at it.
        Safe from any thread."""
        self._interrupted = True
        self._stop_prompt(KeyboardInterrupt)

    def _stop_prompt(self, error: Callable[[], BaseException]) -> None:
        session = self._prompt
        app = session.app if session is not None else None
        loop = app.loop if app is not None else None
        if app is None or loop is None or not app.is_running:
            return  # _before_prompt sees the flag as the next prompt starts

        def stop() -> None:
            if app.is_running and app.future is not None and not app.future.done():
                self._interrupted = False
                app.exit(exception=error())

        with contextlib.suppress(RuntimeError):  # the prompt's loop closed meanwhile
            loop.call_soon_threadsafe(stop)

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
        """Print a line for the person (the driver's messages: scores, results)."""
        self._print(text)

    def _draw(self, view: View, status: str, legal: Sequence[str] = ()) -> None:
        lines = [self.table(view), status]
        if legal:
            lines.append(_legal_line(legal, 80))
        self._print("\n".join(lines), clear=self.interactive)

    def _print(self, text: str, clear: bool = False) -> None:
        if not self.color:
            text = strip_ansi(text)
        self.out.write((CLEAR if clear else "") + text + "\n")
        self.out.flush()

    def _name(self, seat: int) -> str:
        return "you" if seat == self.seat else self.names[seat]

    def _names(self, seats: Iterable[int]) -> str:
        return ", ".join(self._name(s) for s in seats)

    def _sleep(self, seconds: float) -> None:
        try:
            time.sleep(seconds)
        except KeyboardInterrupt:
            if self.confirm_leave():
                raise LeaveGame("interrupted") from None

    # ------------------------------------------------------------------ reading

    def _ask(self, legal: Sequence[str]) -> str:
        """One line from the person, with completion of ``legal``; Ctrl-C asks whether to
        leave, the end of input leaves."""
        while True:
            if self._closed:
                raise LeaveGame("closed")
            try:
                if self._interrupted and not self.interactive:
                    self._interrupted = False
                    raise KeyboardInterrupt
                if self.interactive:
                    return self._prompt_session(legal).prompt("> ", pre_run=self._before_prompt)
                return self._read_plain("> ")
            except KeyboardInterrupt:
                if self.confirm_leave():
                    raise LeaveGame("interrupted") from None
            except EOFError:
                if not self.interactive or self.confirm_leave():
                    raise LeaveGame("end of input") from None

    def _before_prompt(self) -> None:
        """Runs as the prompt starts: :meth:`abort` or :meth:`interrupt` may have come just
        before it."""
        if self._prompt is None:
            return
        if self._closed:
            self._prompt.app.exit(exception=LeaveGame("closed"))
        elif self._interrupted:
            self._interrupted = False
            self._prompt.app.exit(exception=KeyboardInterrupt())

    def _prompt_session(self, legal: Sequence[str]) -> PromptSession[str]:
        if self._prompt is None:
            self._completer = _MoveCompleter()
            self._prompt = PromptSession(
                completer=self._completer, complete_while_typing=False, enable_history_search=False
            )
        assert self._completer is not None
        self._completer.words = [*legal, *COMMANDS]
        return self._prompt

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
            return f"no hint: {error}"
        name = self.hint_spec.split(":")[0]
        return f"hint ({name}): {move}"


def _legal_line(legal: Sequence[str], width: int) -> str:
    """``legal: take | kill 5D 9C | ...`` cut at whole moves to fit one line; the moves
    are in the notation one types (letters), so they can be copied as they stand."""
    full = "legal: " + " | ".join(legal)
    if len(full) <= width - 1:
        return full
    line = "legal: "
    for index, text in enumerate(legal):
        tail = f" (+{len(legal) - index} more: Tab or moves)"
        piece = ("" if index == 0 else " | ") + text
        if len(line) + len(piece) + len(tail) > width - 1:
            return line + tail
        line += piece
    return line  # pragma: no cover - the whole list fitted after all


def _decision(decision: str) -> str:
    return {
        "open": "open a bout",
        "defend": "defend (kill or take)",
        "throw-in": "throw in or pass",
        "give": "give more or pass",
        "exchange-or-pass": "exchange the trump or pass",
        "twos": "play twos",
    }.get(decision, decision)


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
            if word.lower().startswith(wanted):
                yield Completion(word, start_position=-len(typed))
