"""A person against bots on the embedded engine: the game behind ``moska play``.

No network and no protocol: one full-information engine, the person at seat 0 and a bot at
every other seat, each seeing only its view. Games come in a session (RULES M24): the loser
deals the next, and a score line with losses, *korokkeella* and *poronmuna* follows each.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..bots.api import Bot, Event, GameResult
from ..bots.loader import load_bot
from ..engine import Game, Session, View
from .terminal import LeaveGame, TerminalPlayer


@dataclass
class LocalTable:
    """Settings of a local session: the preset, the bots of seats 1.., the person's name."""

    preset: str = "moska"
    players: int = 4
    bots: Sequence[str] = ("greedy",)
    seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    name: str = "you"


def bot_specs(specs: Sequence[str], others: int) -> list[str]:
    """One bot per other seat: a single bot fills every seat; otherwise one each."""
    specs = [s for s in specs if s] or ["greedy"]
    if len(specs) == 1:
        return list(specs) * others
    if len(specs) != others:
        raise ValueError(f"{others} other seats need 1 or {others} bots, not {len(specs)}")
    return list(specs)


def seat_names(person: str, specs: Sequence[str]) -> list[str]:
    """``alice``, then ``greedy 1``, ``ismcts 2``...: a bot is named by its kind and seat."""
    kinds = [Path(spec.split(":")[0]).stem or spec for spec in specs]
    return [person] + [f"{kind} {seat}" for seat, kind in enumerate(kinds, 1)]


def play_game(game: Game, seats: Sequence[Bot], max_moves: int = 10_000) -> GameResult:
    """Play ``game`` to its end, each seat's player choosing from its own view; every
    player's hooks (``start_game``, ``observe``, ``end_game``) are called as the arena does.
    :class:`LeaveGame` from the person propagates (the game is abandoned); a bot that
    raises or answers an illegal move forfeits, as in the arena, and the game ends."""
    for seat, player in enumerate(seats):
        hook = getattr(player, "start_game", None)
        if hook is not None:
            hook(game.view(seat))
    person = next((p for p in seats if isinstance(p, TerminalPlayer)), None)
    moves = 0
    forfeit: int | None = None
    reason = ""
    while not game.is_over and moves < max_moves:
        seat = game.to_act_seat
        legal = game.legal_moves()
        decision = game.decision
        try:
            move = seats[seat].choose(game.view(seat), legal)
            game.play(move, seat=seat)
        except KeyboardInterrupt:
            # Ctrl-C while a bot thinks: nothing was played yet, so ask and go on.
            if person is None or person.confirm_leave():
                raise LeaveGame("interrupted") from None
            continue
        except LeaveGame:
            raise
        except Exception as error:
            if isinstance(seats[seat], TerminalPlayer):
                raise
            forfeit, reason = seat, f"{type(error).__name__}: {error}"
            break
        moves += 1
        event = Event(seat, move, decision)
        for player in seats:
            hook = getattr(player, "observe", None)
            if hook is not None:
                hook(event)
    losers = (forfeit,) if forfeit is not None else tuple(game.losers)
    for seat, player in enumerate(seats):
        hook = getattr(player, "end_game", None)
        if hook is not None:
            hook(GameResult(seat, losers, forfeit, reason, moves))
    return GameResult(0, losers, forfeit, reason, moves)


def _viewer(game: Game, seat: int) -> Callable[[], View]:
    return lambda: game.view(seat)


def play_session(
    table: LocalTable,
    person: TerminalPlayer,
    *,
    games: int | None = None,
    ask_again: bool = True,
) -> int:
    """Play games until ``games`` are done (or, with ``games`` None, until the person
    declines "play again?"; without ``ask_again`` one game). Returns the games finished."""
    specs = bot_specs(table.bots, table.players - 1)
    session = Session(table.preset, table.players, seed=table.seed, **table.options)
    rng = random.Random(table.seed)
    bots = [load_bot(spec, seed=rng.randrange(1 << 31)) for spec in specs]
    names = person.names
    finished = 0
    try:
        while True:
            game = session.new_game()
            person.view_source = _viewer(game, 0)
            result = play_game(game, [person, *bots])
            if not game.is_over:  # a bot forfeited: the session cannot go on without it
                person.say(f"The session stops: {names[result.losers[0]]} failed.")
                break
            session.record(game)
            finished += 1
            person.say(
                f"After {finished} game{'s' if finished != 1 else ''}: " + session.score_line(names)
            )
            if games is not None:
                if finished >= games:
                    break
                continue
            if not ask_again:
                break
            if not session.may_end:
                on = ", ".join(names[s] for s in session.korokkeella)
                person.say(f"{on} stands korokkeella: by custom another game is played.")
            if not person.ask_yes("play again?"):
                break
    except (LeaveGame, KeyboardInterrupt):
        person.say("You left the game.")
    finally:
        for bot in bots:
            close = getattr(bot, "close", None)
            if callable(close):
                close()
    return finished
