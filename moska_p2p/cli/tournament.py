"""``moska tournament``: a club event of several tables and rounds, with no referee.

``moska tournament direct`` opens the event (its settings, who may enter) and carries the
statements; ``moska tournament enter HOST:PORT`` enters it, as the person at the terminal or
as a bot, and plays each round's table on its own (docs/TOURNAMENT.md).
"""

from __future__ import annotations

import logging
import secrets
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..engine import PRESETS
from .common import EXIT_FAILED, EXIT_INTERRUPTED, check_bots, fail, is_interrupt

if TYPE_CHECKING:
    from ..crypto.identity import Identity
    from ..tournament import Row


def _show_standings(rows: list[Row], round_number: int, final: bool) -> None:
    """The standings after a round, as plain text rows (the standings board screen will
    take this call's place)."""
    from ..event.carrier import standings_lines

    title = "after the final table" if final else f"after round {round_number}"
    typer.echo(f"standings {title} (points are losses, fewer is better):")
    for line in standings_lines(rows):
        typer.echo(line)


def _identity(path: Path | None, bot: str | None, name: str | None) -> Identity:
    from ..crypto.identity import IdentityError, default_identity_path, load_or_create
    from .net import bot_identity, bot_seat_name

    try:
        if path is None and bot is not None:
            return bot_identity(bot_seat_name(name, bot))
        return load_or_create(path or default_identity_path())
    except (IdentityError, OSError) as error:
        raise fail(f"identity: {error}") from None


def _default_folder(kind: str, name: str) -> Path:
    import time

    from ..dirs import data_dir

    stamp = time.strftime("%Y%m%d-%H%M%S")
    return data_dir() / "events" / f"{stamp}-{kind}-{name}"


def _run(main: Any) -> int:
    import trio

    try:
        return int(trio.run(main))
    except BaseException as error:
        if not is_interrupt(error):
            raise
        typer.echo("interrupted")
        return EXIT_INTERRUPTED


def tournament(
    action: str = typer.Argument(
        ..., help="direct: open an event and run it; enter: play in one (HOST:PORT)."
    ),
    address: str | None = typer.Argument(
        None, help="enter: the director's HOST:PORT, as it printed it."
    ),
    name: str | None = typer.Option(
        None, help="The event's name (direct), or your name in it (enter)."
    ),
    preset: str = typer.Option("moska", help=f"direct: one of {', '.join(PRESETS)}."),
    seats: int = typer.Option(4, min=2, max=6, help="direct: seats per table."),
    rounds: int = typer.Option(3, min=1, max=50, help="direct: rounds of tables."),
    games: int = typer.Option(1, min=1, max=50, help="direct: games each table plays a round."),
    final: int = typer.Option(
        0, min=0, max=6, help="direct: the best N play a final table (0: none)."
    ),
    final_games: int = typer.Option(
        0, min=0, max=50, help="direct: games of the final table (default: --games)."
    ),
    entrants: int = typer.Option(
        0, min=0, max=120, help="direct: the entry closes when this many have entered."
    ),
    bots_allowed: bool = typer.Option(
        True, "--bots-allowed/--no-bots", help="direct: whether bots may enter."
    ),
    bot: str | None = typer.Option(
        None, help="enter: a bot plays for you: a name, FILE.py:Class (default: you play)."
    ),
    program: str | None = typer.Option(
        None, help="enter: an external program plays for you (the bot API over stdio)."
    ),
    identity: Path | None = typer.Option(
        None, help="Your key file (default: yours; a --bot entrant has one per --name)."
    ),
    folder: Path | None = typer.Option(
        None,
        help="The event folder: every statement, your tables' transcripts, the standings"
        " (default: a new one in your data directory; name the old one to come back).",
    ),
    bind: str = typer.Option("0.0.0.0", help="Address to listen on (127.0.0.1: this machine)."),
    port: int = typer.Option(0, min=0, max=65535, help="direct: port to listen on (0: any)."),
    wait: float = typer.Option(
        600.0, min=1.0, help="Seconds to wait for the director (enter) or a stage (direct)."
    ),
    plain: bool = typer.Option(
        False, "--plain", help="enter: lines instead of the full-screen table (no --bot)."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No line per move."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log connections."),
) -> None:
    """Run a club event of several tables and rounds with no referee: `direct` opens it,
    `enter HOST:PORT` plays in it; the draw is drawn from every entrant's secret, the tables
    play on the entrants' own machines, and `moska verify FOLDER` proves the standings."""
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    if action == "direct":
        raise typer.Exit(
            _direct(
                name,
                preset,
                seats,
                rounds,
                games,
                final,
                final_games,
                entrants,
                bots_allowed,
                identity,
                folder,
                bind,
                port,
                wait,
            )
        )
    if action == "enter":
        if address is None:
            raise fail("enter: name the director's HOST:PORT (it printed it)")
        raise typer.Exit(
            _enter(address, name, bot, program, identity, folder, bind, wait, quiet, plain)
        )
    raise fail(f"unknown action {action!r}: direct or enter")


def _direct(
    name: str | None,
    preset: str,
    seats: int,
    rounds: int,
    games: int,
    final: int,
    final_games: int,
    entrants: int,
    bots_allowed: bool,
    identity: Path | None,
    folder: Path | None,
    bind: str,
    port: int,
    wait: float,
) -> int:
    from ..event.carrier import DirectorNode, DirectorOptions
    from ..event.folder import is_event_folder, load
    from ..tournament import EventSpec, TournamentError

    if entrants < 2:
        raise fail("direct: say how many entrants the entry closes with (--entrants N)")
    try:
        spec = EventSpec(
            name or "club evening",
            preset,
            seats,
            rounds,
            games,
            final,
            (final_games or games) if final else 0,
            bots_allowed,
        )
    except TournamentError as error:
        raise fail(str(error)) from None
    me = _identity(identity, None, None)
    where = folder or _default_folder("direct", "event")
    nonce = secrets.token_bytes(32)
    if is_event_folder(where):  # the director comes back: the event of its folder
        from ..tournament.record import follow

        _, record = load(where)
        entry = follow(record).entry
        if entry is None:
            raise fail(f"{where} holds an event whose entry never closed: start a new one")
        spec, nonce = entry.spec, entry.nonce
        typer.echo(f"resuming the event of {where}")
    where.mkdir(parents=True, exist_ok=True)
    options = DirectorOptions(
        me, spec, nonce, entrants, where, bind, port, show=_show_standings, stage_timeout=wait
    )
    code = _run(DirectorNode(options).run)
    typer.echo(f"the event folder: {where} (moska verify {where})")
    return code


def _enter(
    address: str,
    name: str | None,
    bot: str | None,
    program: str | None,
    identity: Path | None,
    folder: Path | None,
    bind: str,
    wait: float,
    quiet: bool,
    plain: bool = False,
) -> int:
    from ..bots.loader import BotLoadError, load_bot
    from ..event.carrier import EntrantNode, EntrantOptions
    from ..event.tables import Seat
    from ..net.node import Player
    from ..table.networked import BotAtTable, PersonAtTable
    from ..tournament import BOT, PERSON

    host, sep, port_text = address.strip().rpartition(":")
    host = host.strip("[]")
    if not sep or not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise fail(f'"{address}" is not the director\'s HOST:PORT (e.g. 192.168.1.20:7000)')
    port = int(port_text)
    if bot is not None and program is not None:
        raise fail("--bot or --program, not both")
    spec = f"exec:{program}" if program is not None else bot
    if spec is not None:
        check_bots([spec])
        try:
            load_bot(spec)  # refused here, before anything is opened
        except (BotLoadError, ValueError) as error:
            raise fail(str(error)) from None
    me = _identity(identity, spec, name)
    seat_name = name or (Path(bot.split(":")[0]).stem if bot else "program" if program else "")
    if not seat_name:  # a person: the login name, as at a table
        import getpass

        try:
            seat_name = getpass.getuser() or "player"
        except Exception:  # no login name (a container without a user entry)
            seat_name = "player"

    def player() -> Player:
        if spec is None:
            from ..ui.terminal import TerminalPlayer

            return PersonAtTable(TerminalPlayer([], auto_pass=0.8, pace=0.0, plain=plain))
        return BotAtTable(load_bot(spec), echo=None if quiet else print)

    where = folder or _default_folder("enter", seat_name)
    where.mkdir(parents=True, exist_ok=True)
    seat = Seat(me, seat_name, player, bind, echo=(lambda _: None) if quiet else print)
    options = EntrantOptions(
        seat,
        PERSON if spec is None else BOT,
        where,
        host,
        port,
        show=_show_standings,
        connect_wait=wait,
    )
    code = _run(EntrantNode(options).run)
    typer.echo(f"the event folder: {where} (moska verify {where})")
    return code if code in (0, EXIT_INTERRUPTED) else EXIT_FAILED


def verify_events(folders: list[Path], as_json: bool) -> int:
    """``moska verify EVENT_FOLDER``: each event recomputed (:func:`~..event.folder.verify_event`);
    the exit code of the worst: 1 INVALID, 3 incomplete, 4 not an event's folder, else 0."""
    import json

    from ..event.folder import NOT_AN_EVENT, VALID, verify_event
    from ..protocol.transcript import INCOMPLETE, INVALID
    from ..tournament import digest
    from .common import EXIT_INCOMPLETE, EXIT_NOT_A_TRANSCRIPT

    codes = {VALID: 0, INVALID: EXIT_FAILED, INCOMPLETE: EXIT_INCOMPLETE}
    worst = 0
    for folder in folders:
        report = verify_event(folder)
        rows = report.rows or []
        if as_json:
            typer.echo(
                json.dumps(
                    {
                        "event_folder": str(folder),
                        "status": report.status,
                        "fault": report.fault,
                        "standings_digest": digest(rows).hex() if rows else None,
                        "standings": [[r.name, r.points, r.final_points] for r in rows],
                    }
                )
            )
        elif report.status == VALID:
            typer.echo(f"valid: event {folder}: every round's draw, tables and standings recompute")
            for line in report.lines:
                typer.echo(f"  {line}")
            last = report.state.rounds[-1] if report.state and report.state.rounds else None
            _show_standings(rows, last.number if last else 0, bool(last and last.final))
        elif report.status == INCOMPLETE:
            typer.echo(f"incomplete: event {folder}: {report.fault}", err=True)
        elif report.status == NOT_AN_EVENT:
            typer.echo(f"{folder}: {report.fault}", err=True)
        else:
            typer.echo(f"INVALID: event {folder}: {report.fault}", err=True)
        code = EXIT_NOT_A_TRANSCRIPT if report.status == NOT_AN_EVENT else codes[report.status]
        worst = max(worst, code, key=lambda c: (c == EXIT_FAILED, c))
    return worst
