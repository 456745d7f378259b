"""The ``moska`` command line (typer). The outermost layer: it only calls inward."""

from __future__ import annotations

import random
from typing import Any

import typer

from .engine import PRESETS, IllegalMove, OptionError, new_game

app = typer.Typer(
    help="Moska and its family of Finnish and Russian shedding card games, peer to peer.",
    no_args_is_help=True,
    add_completion=False,
)


def _parse_options(pairs: list[str]) -> dict[str, Any]:
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or not value:
            raise typer.BadParameter(f'"{pair}" is not NAME=VALUE (e.g. deck_kill=on)')
        options[name.strip()] = value.strip()
    return options


@app.command()
def play(
    preset: str = typer.Option("moska", help=f"One of: {', '.join(PRESETS)}."),
    players: int = typer.Option(4, min=2, max=6, help="Number of seats, 2 to 6."),
    seed: int | None = typer.Option(None, help="Seed of the shuffle, for a repeatable game."),
    option: list[str] = typer.Option(  # noqa: B008 - typer's idiom
        [], "--option", "-o", help="Change a preset option, NAME=VALUE (repeatable)."
    ),
    max_moves: int = typer.Option(5000, help="Stop a game that runs past this many moves."),
) -> None:
    """Show a game between built-in bots, move by move (terminal play for a person comes with
    the terminal table)."""
    if seed is None:
        seed = random.SystemRandom().randrange(1 << 31)
    try:
        game = new_game(preset, players=players, seed=seed, **_parse_options(option))
    except (OptionError, ValueError) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
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


@app.command()
def presets() -> None:
    """List the presets and their options."""
    from .engine import make_rules

    for name in PRESETS:
        options = make_rules(name).options()
        text = ", ".join(f"{k}={v}" for k, v in options.items()) or "no options"
        typer.echo(f"{name:22s} {text}")


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
