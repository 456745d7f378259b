"""``moska play --watch``: a game between bots, in the full-screen table at the pace asked
(every hand open, the whole log, q to stop), or printed line by line when the output is not
a terminal (or ``--plain``), as fast as the bots play.

The bots are asked by the table's :class:`~moska_p2p.table.seat.Referee`, so a bot that
fails forfeits here as it would in ``moska play`` or the arena.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, TextIO

from ..bots.api import Event
from ..engine import Game
from ..table.seat import Forfeit, Referee
from .app import FullScreen
from .render import Style, black_maija_text, move_text, render_table, strip_ansi, turn_text
from .spectate import show_watched


def watch_game(
    game: Game,
    bots: Sequence[Any],
    names: Sequence[str],
    *,
    pace: float,
    interactive: bool,
    out: TextIO,
    color: bool,
    symbols: bool,
    budget: float | None,
    max_moves: int,
) -> str | None:
    """Play ``game`` out between ``bots``; returns the last line (the result), or None when
    the person stopped watching (q, Ctrl-C) before the end."""
    screen = FullScreen(color=color, symbols=symbols) if interactive else None
    stop = threading.Event()
    referee = Referee(bots, budget)
    style = Style(color=False, symbols=symbols)

    def say(text: str) -> None:
        out.write((text if color else strip_ansi(text)) + "\n")
        out.flush()

    def draw(status: str) -> None:
        if screen is None:
            return
        show_watched(
            screen,
            game.view(0),
            names,
            color=color,
            symbols=symbols,
            hands={s: game.hand(s) for s in range(game.n)},
            losers=list(game.loser_seats) if game.is_over else None,
            status=status,
        )

    def keys() -> None:
        """Waits for q (or Ctrl-C, or the end) while the game plays in the caller."""
        assert screen is not None
        screen.single_keys = {"q": "q"}
        try:
            while screen.ask("q: stop watching · PgUp/PgDn: the log ") != "q":
                pass
        except (KeyboardInterrupt, EOFError):
            pass
        stop.set()

    watcher = None
    if screen is not None:
        screen.start()
        draw("the deal")
        watcher = threading.Thread(target=keys, name="moska-watch-keys", daemon=True)
        watcher.start()
    else:
        say(f"{game.rules.preset}, {game.n} players; dealer seat {game.dealer};"
            f" trump {game.trump_card or 'not turned yet'}")
        for seat in range(game.n):
            say(f"  seat {seat} ({names[seat]}): {' '.join(game.hand(seat))}")
    result: str | None = None
    try:
        referee.start_game(game.view)
        moves = 0
        while not game.is_over and moves < max_moves and not stop.is_set():
            seat = game.to_act_seat
            decision = game.decision
            move = referee.ask(seat, game.view(seat), game.legal_moves())
            game.play(move)
            moves += 1
            referee.observe(Event(seat, move, decision))
            line = f"{names[seat]}: {move_text(str(move), style)}"
            if screen is None:
                say(f"{moves:4d}. seat {seat} ({decision}): {move}")
            else:  # the log has the move: the status says whom the table waits for now
                waiting = turn_text(game.view(0), names, watching=True)
                draw(f"move {moves}: {waiting or line}")
                stop.wait(pace)
        if stop.is_set():
            result = None
        elif not game.is_over:
            result = f"stopped after {max_moves} moves: the game did not finish"
        else:
            losers = list(game.loser_seats)
            result = f"game over after {moves} moves; " + (
                "a draw: nobody holds cards"
                if not losers
                else "lost: " + ", ".join(names[s] for s in losers)
            )
            maija = black_maija_text(
                game.rules.preset, [names[s] for s in losers], symbols=symbols
            )
            result = " ".join(part for part in (result, maija) if part)
    except Forfeit as failure:
        result = f"{names[failure.seat]} forfeits: {failure.reason}"
    except KeyboardInterrupt:
        result = None
    finally:
        referee.close()
    if screen is not None and watcher is not None:
        if result is not None and not stop.is_set():
            draw(result + "  ·  q: close")
            watcher.join()
        screen.stop()
        watcher.join(5)
        say(render_table(game.view(0), names, color=color, symbols=symbols, you=-1,
                         hands={s: game.hand(s) for s in range(game.n)},
                         losers=list(game.loser_seats) if game.is_over else None))
    if result is not None:
        say(result)
    return result
