"""Bots in any language: a bot is a process speaking one JSON object a line on stdin/stdout.

The protocol (docs/BOTS.md, "Bots in any language") is modelled on the ACPC poker protocol:
every request that wants an answer carries a ``state_id`` that the reply must echo, so a late
reply to an earlier decision (a bot that ran out of time and answered anyway) is recognised
and dropped instead of being taken for the next decision. One process serves game after game;
``start`` and ``end`` messages frame each game.

Failure is contained. Replies are read with a deadline (``selectors`` on the pipe, so a silent
bot cannot hang the arena), writes are non-blocking with the same deadline (a bot that stops
reading its stdin cannot block us either), and a process that exits, closes its stdout,
prints something that is not a JSON object or answers a move that is not legal makes
``choose`` raise :class:`ExternalBotError` with the reason; the arena turns that into a
forfeit. Such a process is stopped at once (terminate, then kill, always reaped) and a fresh
one is started for the next game. A bot that merely ran out of time keeps running: its late
answer will carry a stale state id. The bot's stderr goes to a log file, so that bots cannot
clutter the arena's display, and the last line of that log is quoted when a bot crashes.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shlex
import subprocess
import tempfile
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any

from .. import __version__
from ..cards import CARD_TEXT
from ..engine import Move, MoveSyntaxError, View, parse_move
from .api import BaseBot, Event, GameResult
from .encoding import move_id

PROTOCOL_VERSION = 1
MAX_LINE = 1 << 20  # a reply longer than this (1 MiB) without a newline is garbage
CLOSE_GRACE = 0.5  # seconds a bot has to exit by itself once its stdin is closed

__all__ = [
    "PROTOCOL_VERSION",
    "ExternalBot",
    "ExternalBotError",
    "ExternalBotTimeout",
    "view_json",
]


class ExternalBotError(Exception):
    """An external bot broke the protocol or died; the message says how."""


class ExternalBotTimeout(ExternalBotError):
    """An external bot did not answer (or did not read its input) within its timeout."""


def view_json(view: View) -> dict[str, Any]:
    """The JSON form of a view sent in ``choose`` requests (card and move texts, RULES C1,
    C6; seats are absolute seat numbers): every public field of the :class:`View` an
    in-process bot reads, no more (its ``determinize`` is a computation, not information)."""
    room: int | None = view.room if view.room < 1 << 16 else None
    limit: int | None = view.bout_limit if view.bout_limit < 1 << 16 else None
    return {
        "seat": view.seat,
        "players": view.players,
        "preset": view.preset,
        "dealer": view.dealer,
        "hand": view.hand,
        "table": [[attack, killer] for attack, killer in view.table],
        "trump": view.trump,
        "trump_card": view.trump_card,
        "stock_size": view.stock_size,
        "stock_known": [[place, CARD_TEXT[card]] for place, card in view.stock_known],
        "hand_sizes": list(view.hand_sizes),
        "known": [view.known_cards(s) for s in range(view.players)],
        "discarded": view.discarded,
        "out": list(view.out),
        "decision": view.decision,
        "to_act": view.to_act,
        "attacker": view.attacker,
        "defender": view.defender,
        "room": room,
        "bout_limit": limit,
        "bout_count": view.bout_count,
        "hidden_in_hand": view.hidden_in_hand,
        "history": [[seat, str(move)] for seat, move in view.history],
    }


class _Process:
    """One running bot process and its pipes' buffers (replaced when the bot restarts)."""

    def __init__(self, popen: subprocess.Popen[bytes]) -> None:
        assert popen.stdin is not None and popen.stdout is not None
        self.popen = popen
        self.stdin_fd = popen.stdin.fileno()
        self.stdout_fd = popen.stdout.fileno()
        os.set_blocking(self.stdin_fd, False)
        self.inbuf = bytearray()
        self.outbuf = bytearray()
        self.reader = selectors.DefaultSelector()
        self.reader.register(self.stdout_fd, selectors.EVENT_READ)
        self.writer = selectors.DefaultSelector()
        self.writer.register(self.stdin_fd, selectors.EVENT_WRITE)
        self.closed = False


def _stop(proc: _Process, grace: float) -> int | None:
    """Stop a bot process and reap it: close its stdin, give it ``grace`` seconds to exit,
    then SIGTERM, then SIGKILL. Idempotent; returns the exit code."""
    if proc.closed:
        return proc.popen.returncode
    proc.closed = True
    popen = proc.popen
    with contextlib.suppress(OSError):
        assert popen.stdin is not None
        popen.stdin.close()
    try:
        popen.wait(grace)
    except subprocess.TimeoutExpired:
        popen.terminate()
        try:
            popen.wait(1.0)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()
    with contextlib.suppress(OSError):
        assert popen.stdout is not None
        popen.stdout.close()
    proc.reader.close()
    proc.writer.close()
    return popen.returncode


class ExternalBot(BaseBot):
    """A bot run as a separate process: ``ExternalBot("node bots/examples/random_bot.js")``.

    ``command`` is split like a shell would (``shlex.split``) but run without a shell.
    ``timeout`` bounds each decision, from sending the request to reading the reply.
    ``stderr`` is where the bot's stderr goes: ``None`` for a new temporary log file (its
    path is ``stderr_path``; it is removed at ``close()`` when empty), a file path to append
    to, or ``"-"`` to inherit this process's stderr. With ``events=True`` the bot also gets
    an ``event`` message after every move of any seat. ``seed`` is passed on in ``start``.
    Call ``close()`` (or use ``with``) when done; the process is stopped at exit otherwise.
    """

    trusted_fast = False  # the runner's own time budget applies on top of ``timeout``

    def __init__(
        self,
        command: str | Sequence[str],
        timeout: float = 5.0,
        *,
        name: str | None = None,
        seed: int | None = None,
        stderr: str | Path | None = None,
        events: bool = False,
        cwd: str | Path | None = None,
    ) -> None:
        argv = shlex.split(command) if isinstance(command, str) else list(command)
        if not argv:
            raise ValueError("an external bot needs a command, e.g. python3 my_bot.py")
        if timeout <= 0:
            raise ValueError(f"timeout must be positive, not {timeout}")
        self.argv = argv
        self.command = command if isinstance(command, str) else shlex.join(argv)
        self.name = name or f"exec:{self.command}"
        self.timeout = float(timeout)
        self.seed = seed
        self.events = events
        self.cwd = cwd
        self.stderr = stderr
        self.stderr_path: Path | None = None
        self._temp_log = False
        self._log: IO[bytes] | None = None
        self._proc: _Process | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._game_no = 0
        self._in_game = False
        self.stale_replies = 0  # replies dropped because their state id was not the current

    # ------------------------------------------------------------------- process handling

    @property
    def pid(self) -> int | None:
        """The running process's id, or None when no process runs."""
        return self._proc.popen.pid if self._proc and not self._proc.closed else None

    def _open_log(self) -> IO[bytes] | None:
        if self.stderr == "-":
            return None
        if self._log is None:
            if self.stderr is None:
                fd, path = tempfile.mkstemp(prefix="moska-bot-", suffix=".log")
                self._log = os.fdopen(fd, "ab")
                self.stderr_path = Path(path)
                self._temp_log = True
            else:
                self.stderr_path = Path(self.stderr)
                self._log = self.stderr_path.open("ab")
        return self._log

    def _spawn(self) -> _Process:
        if self._proc is not None and not self._proc.closed:
            if self._proc.popen.poll() is None:
                return self._proc
            self._shutdown(0.0)  # exited between games: reap it and start afresh
        env = dict(os.environ, PYTHONUNBUFFERED="1")  # Python bots that forget to flush
        try:
            popen = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=self._open_log(),
                cwd=self.cwd,
                env=env,
                bufsize=0,
            )
        except OSError as error:
            raise ExternalBotError(f"cannot start {self.command!r}: {error}") from None
        proc = _Process(popen)
        self._proc = proc
        self._finalizer = weakref.finalize(self, _stop, proc, 0.0)
        return proc

    def _shutdown(self, grace: float) -> int | None:
        proc, self._proc = self._proc, None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        if proc is None:
            return None
        return _stop(proc, grace)

    def _fail(self, reason: str) -> ExternalBotError:
        """Stop the process and make the error to raise, quoting its stderr's last line."""
        self._shutdown(0.0)
        self._in_game = False
        tail = self._stderr_tail()
        if tail:
            reason += f' (its stderr ends: "{tail}")'
        return ExternalBotError(reason)

    def _stderr_tail(self) -> str:
        if self._log is None or self.stderr_path is None:
            return ""
        try:
            self._log.flush()
            with self.stderr_path.open("rb") as log:
                log.seek(0, os.SEEK_END)
                log.seek(max(0, log.tell() - 4096))
                lines = log.read().decode("utf-8", "replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1].strip()[:300] if lines else ""

    def close(self) -> None:
        """Stop the process (stdin closed, a grace period, then terminate and kill) and close
        the log; a temporary log that stayed empty is removed. Safe to call twice."""
        self._shutdown(CLOSE_GRACE)
        self._in_game = False
        if self._log is not None:
            self._log.close()
            self._log = None
            path = self.stderr_path
            if self._temp_log and path is not None:
                with contextlib.suppress(OSError):
                    if path.stat().st_size == 0:
                        path.unlink()

    def __enter__(self) -> ExternalBot:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def __getstate__(self) -> dict[str, Any]:
        """Pickle the configuration only: a copy starts its own process when first used."""
        state = self.__dict__.copy()
        state.update(
            _proc=None,
            _finalizer=None,
            _log=None,
            _in_game=False,
            stderr_path=None,
            _temp_log=False,
        )
        return state

    # ------------------------------------------------------------------------------ I/O

    def _exit_reason(self, proc: _Process) -> str:
        try:
            code = proc.popen.wait(0.5)
        except subprocess.TimeoutExpired:
            return "the bot closed its stdout"
        if code < 0:
            return f"the bot process was killed by signal {-code}"
        return f"the bot process exited with code {code}"

    def _send(self, message: dict[str, Any], deadline: float) -> None:
        proc = self._proc
        if proc is None or proc.closed:
            raise self._fail("the bot process is not running")
        line = json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n"
        proc.outbuf += line.encode("utf-8")
        while proc.outbuf:
            try:
                written = os.write(proc.stdin_fd, proc.outbuf)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ConnectionResetError):
                raise self._fail(self._exit_reason(proc)) from None
            del proc.outbuf[:written]
            if proc.outbuf:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ExternalBotTimeout(
                        f"the bot did not read its input within {self.timeout} s"
                    )
                proc.writer.select(remaining)

    def _receive(self, state_id: str, deadline: float) -> dict[str, Any]:
        """The next reply that echoes ``state_id``; replies to other states are dropped."""
        proc = self._proc
        assert proc is not None
        while True:
            newline = proc.inbuf.find(b"\n")
            if newline >= 0:
                raw = bytes(proc.inbuf[:newline])
                del proc.inbuf[: newline + 1]
                reply = self._parse_reply(raw)
                if reply is None:
                    continue
                if reply["state_id"] == state_id:
                    return reply
                self.stale_replies += 1
                continue
            if len(proc.inbuf) > MAX_LINE:
                raise self._fail(f"the bot printed more than {MAX_LINE} bytes without a newline")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ExternalBotTimeout(f"the bot did not answer within {self.timeout} s")
            if not proc.reader.select(remaining):
                continue
            data = os.read(proc.stdout_fd, 65536)
            if not data:
                raise self._fail(self._exit_reason(proc))
            proc.inbuf += data

    def _parse_reply(self, raw: bytes) -> dict[str, Any] | None:
        text = raw.decode("utf-8", "replace").strip()
        if not text:
            return None  # blank lines are allowed
        try:
            reply = json.loads(text)
        except ValueError:
            raise self._fail(f"the bot printed a line that is not JSON: {text[:200]!r}") from None
        if not isinstance(reply, dict):
            raise self._fail(f"the bot printed JSON that is not an object: {text[:200]!r}")
        if "state_id" not in reply:
            raise self._fail(f"the bot's reply has no state_id: {text[:200]!r}")
        return reply

    # ----------------------------------------------------------------------- the bot API

    def start_game(self, view: View) -> None:
        """Start the process if it is not running, and send ``start``."""
        self._spawn()
        self._game_no += 1
        self._in_game = True
        self._send(
            {
                "type": "start",
                "protocol": PROTOCOL_VERSION,
                "version": __version__,
                "game": self._game_no,
                "preset": view.preset,
                "players": view.players,
                "seat": view.seat,
                "dealer": view.dealer,
                "seed": self.seed,
                "timeout": self.timeout,
            },
            time.monotonic() + self.timeout,
        )

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        """Send ``choose`` and wait for the reply that echoes its state id."""
        if not self._in_game or self._proc is None:
            self.start_game(view)
        deadline = time.monotonic() + self.timeout
        state_id = f"{self._game_no}:{len(view.history)}"
        by_id = {move_id(move): move for move in legal_moves}
        self._send(
            {
                "type": "choose",
                "state_id": state_id,
                "view": view_json(view),
                "legal_moves": [str(move) for move in legal_moves],
                "legal_move_ids": list(by_id),
            },
            deadline,
        )
        reply = self._receive(state_id, deadline)
        return self._reply_move(reply, by_id)

    def _reply_move(self, reply: dict[str, Any], by_id: dict[int, Move]) -> Move:
        text = reply.get("move")
        ident = reply.get("move_id")
        if text is None and ident is None:
            raise self._fail(f"the bot's reply names no move or move_id: {reply!r}"[:300])
        if text is not None:
            if not isinstance(text, str):
                raise self._fail(f"the bot's move is not a string: {text!r}"[:300])
            try:
                move = parse_move(text)
            except MoveSyntaxError as error:
                reason = f"the bot answered {text!r}, which is not a move: {error}"
                raise self._fail(reason) from None
            key = move_id(move)
            if ident is not None and ident != key:
                raise self._fail(f"the bot's move {text!r} and move_id {ident!r} differ")
        else:
            if isinstance(ident, bool) or not isinstance(ident, int):
                raise self._fail(f"the bot's move_id is not an integer: {ident!r}"[:300])
            key = ident
        legal = by_id.get(key)
        if legal is None:
            shown = repr(text) if text is not None else f"move_id {ident}"
            raise self._fail(f"the bot answered {shown}, which is not a legal move")
        return legal

    def observe(self, event: Event) -> None:
        """Send ``event`` (only when made with ``events=True``)."""
        if not self.events or not self._in_game:
            return
        self._send(
            {
                "type": "event",
                "game": self._game_no,
                "seat": event.seat,
                "move": str(event.move),
                "move_id": move_id(event.move),
                "decision": event.decision,
            },
            time.monotonic() + self.timeout,
        )

    def end_game(self, result: GameResult) -> None:
        """Send ``end``; the process keeps running for the next game."""
        if not self._in_game:
            return
        self._in_game = False
        proc = self._proc
        if proc is None or proc.closed or proc.popen.poll() is not None:
            return
        message = {
            "type": "end",
            "game": self._game_no,
            "seat": result.seat,
            "losers": list(result.losers),
            "lost": result.lost,
            "forfeit": result.forfeit,
            "reason": result.reason,
            "moves": result.moves,
        }
        with contextlib.suppress(ExternalBotError):
            self._send(message, time.monotonic() + self.timeout)
