"""The commands on this machine alone: ``play`` (and ``play --watch``), ``presets``,
``rules``, ``stats``."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import typer

from ..bots.levels import DEFAULT_LEVEL, HINT_BOT, LEVELS, LevelError, level_named
from ..engine import PRESETS, OptionError, new_game
from .common import EXIT_INTERRUPTED, check_bots, fail, parse_options_lenient, split_bots

LEVEL_HELP = (
    "How strong the bots at the other seats are: "
    + "; ".join(f"{level.name} ({level.about})" for level in LEVELS.values())
    + f". Default: {DEFAULT_LEVEL} (docs/LEVELS.md)."
)


def play(
    preset: str = typer.Option("moska", help=f"One of: {', '.join(PRESETS)}."),
    players: int = typer.Option(4, min=2, max=6, help="Number of seats, 2 to 6 (you included)."),
    level: str | None = typer.Option(
        None,
        help=LEVEL_HELP,
    ),
    bots: str | None = typer.Option(
        None,
        help="Instead of --level, the bots at the other seats: one for all, or one per seat,"
        " comma-separated (random, greedy, shedder, expert, ismcts[:time=0.3],"
        " path/file.py:Class, exec:COMMAND).",
    ),
    seed: int | None = typer.Option(None, help="Seed of the shuffles, for repeatable games."),
    option: list[str] = typer.Option(
        [], "--option", "-o", help="Change a preset option, NAME=VALUE (repeatable)."
    ),
    name: str = typer.Option("you", help="Your name at the table."),
    games: int | None = typer.Option(
        None, min=1, help='Games in the session (default: "play again?" after each).'
    ),
    auto_pass: float = typer.Option(
        0.8, min=0.0, help="Seconds before a lone pass is answered for you (0: at once)."
    ),
    pace: float = typer.Option(
        0.3, min=0.0, help="Seconds to pause after each other player's move (0: none)."
    ),
    hint: str = typer.Option(
        HINT_BOT, help="The bot asked by the hint command (default: the strongest level's)."
    ),
    budget: float = typer.Option(
        1.0, min=0.001, help="Seconds a bot may think per decision (built-in bots are not timed)."
    ),
    no_color: bool = typer.Option(False, "--no-color", help="No colours (as NO_COLOR=1)."),
    watch: bool = typer.Option(
        False, help="Only watch a game between --bots, move by move, at --pace (q stops)."
    ),
    max_moves: int = typer.Option(5000, help="With --watch: stop a game past this many moves."),
    plain: bool = typer.Option(
        False, "--plain", help="Lines instead of the full-screen table (as in a pipe)."
    ),
) -> None:
    """Play at the terminal against bots (you sit at seat 0); --watch shows a bot game.

    On a terminal the game is a full-screen table (? for help); in a pipe, or with --plain,
    it is printed and read line by line. Exit code 130 when you leave a game before its end.
    After each game, your record at this preset and level (see moska stats).
    """
    if bots is not None and level is not None:
        raise fail("give --level or --bots, not both")
    try:
        chosen = None if bots is not None else level_named(level or DEFAULT_LEVEL)
    except LevelError as error:
        raise fail(str(error)) from None
    bots = chosen.bot if chosen is not None else bots or ""
    if watch:
        _watch(preset, players, seed, option, max_moves, bots, pace, budget, no_color, plain)
        return
    from ..bots.loader import BotLoadError
    from ..ui.local import LocalTable, bot_specs, play_session, seat_names
    from ..ui.terminal import TerminalPlayer

    check_bots(split_bots(bots))
    try:
        specs = bot_specs(split_bots(bots), players - 1)
        table = LocalTable(
            preset,
            players,
            specs,
            seed,
            parse_options_lenient(option),
            name,
            budget,
            level=chosen.name if chosen is not None else None,
            record=record_file(),
        )
        _check_table(preset, players, table.options)
    except (OptionError, ValueError, typer.BadParameter) as error:
        raise fail(str(error)) from None
    from ..i18n import _

    person = TerminalPlayer(
        # "sinä" in Finnish; the bots named by their level
        seat_names(_(name) if name == "you" else name, specs, table.level),
        auto_pass=auto_pass,
        pace=pace,
        hint=hint,
        color=False if no_color else None,
        plain=plain,
    )
    try:
        end = play_session(table, person, games=games, ask_again=person.interactive)
    except BotLoadError as error:
        raise fail(str(error)) from None
    if end.left:
        raise typer.Exit(EXIT_INTERRUPTED)


def record_file() -> Path:
    """The person's record of ``moska play``, in the data folder beside the saved games."""
    from ..dirs import data_dir
    from ..ui.player_record import RECORD_NAME

    return data_dir() / RECORD_NAME


def stats() -> None:
    """Your record in moska play: games and losses per preset, table and level, and your
    losses in a row now (two: korokkeella, three or more: poronmuna, RULES M24)."""
    from ..ui.player_record import PlayerRecord, RecordError

    path = record_file()
    try:
        record = PlayerRecord.load(path)
    except RecordError as error:
        raise fail(str(error)) from None
    if not record.tallies:
        typer.echo(f"No games yet (the record is kept in {path}).")
        return
    from ..arena.stats import wilson_interval

    typer.echo(
        f"{'preset':12s} {'players':>7s}  {'level':10s} {'games':>5s} {'losses':>6s}"
        f" {'rate':>5s} {'95% CI':>11s} {'par':>4s}  in a row now"
    )
    for table, tally in record:
        rate = 100 * tally.losses / tally.games if tally.games else 0.0
        low, high = wilson_interval(tally.losses, tally.games)
        run = f"{tally.run}" + (f" ({tally.standing})" if tally.standing else "")
        typer.echo(
            f"{table.preset:12s} {table.players:7d}  {table.level:10s} {tally.games:5d}"
            f" {tally.losses:6d} {rate:4.0f}% {100 * low:4.0f}-{100 * high:3.0f}%"
            f" {100 / table.players:3.0f}%  {run}"
        )
    typer.echo(f"(kept in {path}; par: one loser a game)")


def _check_table(preset: str, players: int, options: dict[str, Any]) -> None:
    """Fail early, with the engine's reason, on a preset, option or table size that cannot
    make a game (before the terminal is taken over)."""
    from ..engine import make_rules

    rules = make_rules(preset, **options)
    if not rules.min_players <= players <= rules.max_players:
        raise ValueError(f"{preset} is for {rules.min_players} to {rules.max_players} players")
    if rules.teams and players % 2:
        raise ValueError(f"{preset} needs an even number of players")


def _watch(
    preset: str,
    players: int,
    seed: int | None,
    option: list[str],
    max_moves: int,
    bots: str,
    pace: float,
    budget: float,
    no_color: bool,
    plain: bool,
) -> None:
    """A game between ``--bots`` (``moska play --watch``): the full-screen table at
    ``--pace`` on a terminal, else printed move by move."""
    import sys

    from ..bots.loader import BotLoadError, load_bot
    from ..ui.render import color_wanted, symbols_wanted
    from ..ui.watch import watch_game

    if seed is None:
        seed = random.SystemRandom().randrange(1 << 31)
    check_bots(split_bots(bots))
    try:
        game = new_game(preset, players=players, seed=seed, **parse_options_lenient(option))
        specs = split_bots(bots) or ["greedy"]
        if len(specs) == 1:
            specs *= players
        elif len(specs) != players:
            raise ValueError(f"--watch: {players} seats need 1 or {players} bots, not {len(specs)}")
        rng = random.Random(seed)
        seats = [load_bot(spec, seed=rng.randrange(1 << 31)) for spec in specs]
    except (OptionError, ValueError, BotLoadError) as error:
        raise fail(str(error)) from None
    names = [f"{spec.split(':')[0].rsplit('/', 1)[-1]} {seat}" for seat, spec in enumerate(specs)]
    interactive = not plain and sys.stdin.isatty() and sys.stdout.isatty()
    color = False if no_color else color_wanted(sys.stdout)
    if not interactive:
        typer.echo(f"seed {seed}")
    result = watch_game(
        game,
        seats,
        names,
        pace=pace,
        interactive=interactive,
        out=sys.stdout,
        color=color,
        symbols=symbols_wanted(sys.stdout),
        budget=budget,
        max_moves=max_moves,
    )
    if result is None:
        raise typer.Exit(EXIT_INTERRUPTED)
    if not game.is_over:
        raise typer.Exit(1)


def presets() -> None:
    """List the presets and their options."""
    from ..engine import make_rules

    for name in PRESETS:
        options = make_rules(name).options()
        text = ", ".join(f"{k}={v}" for k, v in options.items()) or "no options"
        typer.echo(f"{name:22s} {text}")


def rules(
    preset: str = typer.Argument("moska", help="The preset whose rules to show."),
) -> None:
    """The rules of a preset in brief, citing the rule ids of docs/RULES.md.

    With its options and its moves; the preset's name in any case, as moves are."""
    from ..rules_text import rules_text

    try:
        typer.echo(rules_text(preset.strip().lower()))
    except OptionError as error:
        raise fail(str(error)) from None
