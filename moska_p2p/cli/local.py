"""The commands on this machine alone: ``play`` (and ``play --watch``), ``presets``,
``rules``."""

from __future__ import annotations

import random
from typing import Any

import typer

from ..engine import PRESETS, IllegalMove, OptionError, new_game
from .common import check_bots, fail, parse_options_lenient, split_bots


def play(
    preset: str = typer.Option("moska", help=f"One of: {', '.join(PRESETS)}."),
    players: int = typer.Option(4, min=2, max=6, help="Number of seats, 2 to 6 (you included)."),
    bots: str = typer.Option(
        "greedy",
        help="The bots at the other seats: one for all, or one per seat, comma-separated"
        " (random, greedy, shedder, ismcts[:time=0.3], path/file.py:Class, exec:COMMAND).",
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
    hint: str = typer.Option("ismcts:time=0.3", help="The bot asked by the hint command."),
    budget: float = typer.Option(
        1.0, min=0.001, help="Seconds a bot may think per decision (built-in bots are not timed)."
    ),
    no_color: bool = typer.Option(False, "--no-color", help="No colours (as NO_COLOR=1)."),
    watch: bool = typer.Option(False, help="Only watch a game between bots, move by move."),
    max_moves: int = typer.Option(5000, help="With --watch: stop a game past this many moves."),
) -> None:
    """Play at the terminal against bots (you sit at seat 0); --watch shows a bot game."""
    if watch:
        _watch(preset, players, seed, option, max_moves)
        return
    from ..bots.loader import BotLoadError
    from ..ui.local import LocalTable, bot_specs, play_session, seat_names
    from ..ui.terminal import TerminalPlayer

    check_bots(split_bots(bots))
    try:
        specs = bot_specs(split_bots(bots), players - 1)
        table = LocalTable(
            preset, players, specs, seed, parse_options_lenient(option), name, budget
        )
        _check_table(preset, players, table.options)
    except (OptionError, ValueError, typer.BadParameter) as error:
        raise fail(str(error)) from None
    person = TerminalPlayer(
        seat_names(name, specs),
        auto_pass=auto_pass,
        pace=pace,
        hint=hint,
        color=False if no_color else None,
    )
    try:
        play_session(table, person, games=games, ask_again=person.interactive)
    except BotLoadError as error:
        raise fail(str(error)) from None


def _check_table(preset: str, players: int, options: dict[str, Any]) -> None:
    """Fail early, with the engine's reason, on a preset, option or table size that cannot
    make a game (before the terminal is taken over)."""
    from ..engine import make_rules

    rules = make_rules(preset, **options)
    if not rules.min_players <= players <= rules.max_players:
        raise ValueError(f"{preset} is for {rules.min_players} to {rules.max_players} players")
    if rules.teams and players % 2:
        raise ValueError(f"{preset} needs an even number of players")


def _watch(preset: str, players: int, seed: int | None, option: list[str], max_moves: int) -> None:
    """A game between random bots, printed move by move (``moska play --watch``)."""
    if seed is None:
        seed = random.SystemRandom().randrange(1 << 31)
    try:
        game = new_game(preset, players=players, seed=seed, **parse_options_lenient(option))
    except (OptionError, ValueError) as error:
        raise fail(str(error)) from None
    rng = random.Random(seed)
    typer.echo(
        f"{preset}, {players} players, seed {seed}; dealer seat {game.dealer};"
        f" trump {game.trump_card or 'not turned yet'}"
    )
    for seat in range(players):
        typer.echo(f"  seat {seat}: {' '.join(game.hand(seat))}")
    moves = 0
    while not game.is_over and moves < max_moves:
        seat = game.to_act_seat
        move = game.random_move(rng)
        decision = game.decision
        try:
            game.play(move)
        except IllegalMove as error:  # pragma: no cover - a bot only plays legal moves
            typer.echo(f"internal error: {error}", err=True)
            raise typer.Exit(1) from None
        moves += 1
        typer.echo(f"{moves:4d}. seat {seat} ({decision}): {move}")
    if not game.is_over:
        typer.echo(f"stopped after {max_moves} moves: the game did not finish")
        raise typer.Exit(1)
    losers = game.losers
    result = (
        "a draw: nobody holds cards"
        if not losers
        else ("lost: seat " + ", ".join(str(s) for s in losers))
    )
    typer.echo(f"game over after {moves} moves; {result}")


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
    """The rules of a preset in brief, with its options and the move notation."""
    from ..rules_text import rules_text

    try:
        typer.echo(rules_text(preset))
    except OptionError as error:
        raise fail(str(error)) from None
