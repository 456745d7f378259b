"""A person against bots on the embedded engine: the game behind ``moska play``.

No network and no protocol: one full-information engine, the person at seat 0 and a bot at
every other seat, each seeing only its view, all asked by the table's referee
(:mod:`moska_p2p.table.local`): a bot that fails forfeits as it would in the arena. Games
come in a session (RULES M24): the loser deals the next, and a score line with losses,
*korokkeella* and *poronmuna* follows each, then the person's record at this preset and
level over every session (:mod:`.player_record`).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..bots.loader import load_bot
from ..engine import Game, Session, View
from ..i18n import _, language, ngettext
from ..table.local import play_game
from ..table.seat import DEFAULT_BUDGET
from .player_record import RecordError, Table, Tally, add_game
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
    budget: float | None = DEFAULT_BUDGET  # seconds a bot not built in may think
    level: str | None = None  # the level the bots play at (bots.levels); None: chosen bots
    record: Path | None = None  # the person's record file, None: keep no record

    @property
    def record_table(self) -> Table:
        """What the person's results here count for: the level, or the bots chosen."""
        bots = self.level or "bots " + ",".join(bot_specs(self.bots, self.players - 1))
        return Table(self.preset, self.players, bots)


def bot_specs(specs: Sequence[str], others: int) -> list[str]:
    """One bot per other seat: a single bot fills every seat; otherwise one each."""
    specs = [s for s in specs if s] or ["greedy"]
    if len(specs) == 1:
        return list(specs) * others
    if len(specs) != others:
        raise ValueError(f"{others} other seats need 1 or {others} bots, not {len(specs)}")
    return list(specs)


def seat_names(person: str, specs: Sequence[str], level: str | None = None) -> list[str]:
    """``alice``, then ``greedy 1``, ``ismcts 2``...: a bot is named by its kind and seat,
    or by its level (``hard 1``), so that the table shows what the person plays against."""
    kinds = [level or Path(spec.split(":")[0]).stem or spec for spec in specs]
    return [person] + [f"{kind} {seat}" for seat, kind in enumerate(kinds, 1)]


class SessionEnd(int):
    """How a session ended: the number of games played to their end (an int, as callers
    count them), and ``left``: whether the person left a game before its end (``moska
    play`` then exits 130, as an interrupted command)."""

    left: bool

    def __new__(cls, finished: int, left: bool = False) -> SessionEnd:
        end = super().__new__(cls, finished)
        end.left = left
        return end

    def __repr__(self) -> str:
        return f"SessionEnd({int(self)}, left={self.left})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SessionEnd):
            return int(self) == int(other) and self.left == other.left
        return int(self) == other

    __hash__ = int.__hash__


def score_line(session: Session, names: list[str]) -> str:
    """The session's standing as :meth:`Session.score_line` says it (English, for logs),
    or in the language installed: losses, *korokkeella* (two in a row), *poronmuna* (three
    or more), M24."""
    if language() == "en":
        return session.score_line(names)
    parts = []
    for seat in range(session.players):
        losses = session.losses[seat]
        text = ngettext("{name}: {count} loss", "{name}: {count} losses", losses).format(
            name=names[seat], count=losses
        )
        if session.streaks[seat] >= 3:
            text += " (poronmuna)"
        elif session.streaks[seat] == 2:
            text += " (korokkeella)"
        parts.append(text)
    return "; ".join(parts)


def record_line(table: Table, tally: Tally) -> str:
    """The person's record at this table, e.g. ``Your record at moska, 4 players, medium:
    12 games, 5 losses (42%); 2 losses in a row: korokkeella``."""
    text = _("Your record at {preset}, {players} players, {level}:").format(
        preset=table.preset, players=table.players, level=table.level
    )
    text += " " + ngettext("{count} game", "{count} games", tally.games).format(
        count=tally.games
    )
    text += ", " + ngettext("{count} loss", "{count} losses", tally.losses).format(
        count=tally.losses
    )
    text += f" ({100 * tally.losses / tally.games:.0f}%)" if tally.games else ""
    if tally.run >= 2:
        text += "; " + _("{count} losses in a row: {standing}").format(
            count=tally.run, standing=tally.standing
        )
    return text


def _viewer(game: Game, seat: int) -> Callable[[], View]:
    return lambda: game.view(seat)


def play_session(
    table: LocalTable,
    person: TerminalPlayer,
    *,
    games: int | None = None,
    ask_again: bool = True,
) -> SessionEnd:
    """Play games until ``games`` are done (or, with ``games`` None, until the person
    declines "play again?", which is no by default; without ``ask_again`` one game). The
    person's full-screen table, if any, is closed at the end."""
    specs = bot_specs(table.bots, table.players - 1)
    session = Session(table.preset, table.players, seed=table.seed, **table.options)
    rng = random.Random(table.seed)
    bots = [load_bot(spec, seed=rng.randrange(1 << 31)) for spec in specs]
    names = person.names
    finished = 0
    left = False
    record_file = table.record  # None once it failed: said once, the games go on
    try:
        while True:
            game = session.new_game()
            person.view_source = _viewer(game, 0)
            record = play_game(
                game,
                [person, *bots],
                budget=table.budget,
                names=names,
                on_interrupt=person.confirm_leave,
            )
            if record.forfeit is not None:  # the session cannot go on without that bot
                person.say(
                    _("The session stops: {name} forfeits: {reason}.").format(
                        name=names[record.forfeit], reason=record.reason
                    )
                )
                break
            session.record(game)
            finished += 1
            # the person's record first: the session's score stays on the status line
            if record_file is not None:
                try:
                    tally = add_game(record_file, table.record_table, 0 in game.loser_seats)
                    person.say(record_line(table.record_table, tally))
                except (RecordError, OSError) as error:
                    person.say(_("No record is kept: {reason}").format(reason=error))
                    record_file = None
            person.say(
                ngettext("After {count} game: ", "After {count} games: ", finished).format(
                    count=finished
                )
                + score_line(session, names)
            )
            if games is not None:
                if finished >= games:
                    break
                continue
            if not ask_again:
                break
            if not session.may_end:
                on = ", ".join(names[s] for s in session.korokkeella)
                person.say(
                    _("{names} stands korokkeella: by custom another game is played.").format(
                        names=on
                    )
                )
            if not person.ask_yes(_("play again?"), default=False):
                break
    except (LeaveGame, KeyboardInterrupt):
        left = True
        person.say(_("You left the game."))
    finally:
        person.close()
        for bot in bots:
            close = getattr(bot, "close", None)
            if callable(close):
                close()
    return SessionEnd(finished, left)
