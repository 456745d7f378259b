"""The ``moska`` command line (typer). The outermost layer: it only calls inward."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from .cli_net import register as register_net
from .cli_p2p import register as register_p2p
from .engine import PRESETS, IllegalMove, OptionError, new_game

if TYPE_CHECKING:
    from .arena.arena import ArenaResult

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
    no_color: bool = typer.Option(False, "--no-color", help="No colours (as NO_COLOR=1)."),
    watch: bool = typer.Option(False, help="Only watch a game between bots, move by move."),
    max_moves: int = typer.Option(5000, help="With --watch: stop a game past this many moves."),
) -> None:
    """Play at the terminal against bots (you sit at seat 0); --watch shows a bot game."""
    if watch:
        _watch(preset, players, seed, option, max_moves)
        return
    from .bots.loader import BotLoadError
    from .ui.local import LocalTable, bot_specs, play_session, seat_names
    from .ui.terminal import TerminalPlayer

    try:
        specs = bot_specs(split_bots(bots), players - 1)
        table = LocalTable(preset, players, specs, seed, _parse_options(option), name)
        _check_table(preset, players, table.options)
    except (OptionError, ValueError, typer.BadParameter) as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
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
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None


def _check_table(preset: str, players: int, options: dict[str, Any]) -> None:
    """Fail early, with the engine's reason, on a preset, option or table size that cannot
    make a game (before the terminal is taken over)."""
    from .engine import make_rules

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


def split_bots(text: str) -> list[str]:
    """The bot list of ``--bots``: comma-separated specifications, where a piece that is
    only ``NAME=VALUE`` continues the previous bot's parameters
    (``ismcts:time=0.05,iterations=300,greedy`` is two bots)."""
    bots: list[str] = []
    for piece in text.split(","):
        item = piece.strip()
        if bots and "=" in item and ":" not in item and " " not in item:
            bots[-1] += "," + item
        elif item:
            bots.append(item)
    return bots


@app.command()
def arena(
    preset: str = typer.Option("moska", help=f"One of: {', '.join(PRESETS)}."),
    bots: str = typer.Option(
        ...,
        help="One bot per seat, comma-separated: random, greedy, shedder, ismcts[:time=0.1],"
        " path/file.py:Class[:k=v], exec:COMMAND.",
    ),
    games: int = typer.Option(1000, min=0, help="Number of games."),
    seed: int = typer.Option(1, help="Seed of the whole run: same seed, same results."),
    jobs: int = typer.Option(1, min=1, help="Worker processes (results do not depend on it)."),
    option: list[str] = typer.Option(
        [], "--option", "-o", help="Change a preset option, NAME=VALUE (repeatable)."
    ),
    budget: float = typer.Option(
        1.0, help="Seconds a bot may think per decision (built-in bots are not timed)."
    ),
    max_moves: int = typer.Option(5000, min=1, help="A game past this many moves is unfinished."),
    json_file: Path | None = typer.Option(
        None, "--json", help="Also write the results to this file as JSON."
    ),
    save: Path | None = typer.Option(
        None, help="Save every game to this folder (game-NNNNNN.json), for replay-check."
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
) -> None:
    """Pit bots against each other on the engine alone, with loss rates and ratings.

    Seats rotate over duplicate deals; the table shows loss rates with 95% Wilson intervals,
    forfeits and, with three kinds of bot or more, OpenSkill ratings.
    """
    import time

    from .arena.arena import ArenaError, run_arena

    try:
        options = _parse_options(option)
    except typer.BadParameter as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    bot_list = split_bots(bots)
    settings: dict[str, Any] = {
        "seed": seed,
        "jobs": jobs,
        "options": options,
        "budget": budget,
        "max_moves": max_moves,
        "save_dir": save,
    }
    started = time.perf_counter()
    show = not quiet and sys.stderr.isatty()
    try:
        if show:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            # No auto-refresh: its thread would be running when the workers are forked.
            with Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=Console(stderr=True),
                auto_refresh=False,
                transient=True,
            ) as bar:
                task = bar.add_task(f"{preset}", total=games)

                def advance(done: int, total: int) -> None:
                    bar.update(task, completed=done, total=total, refresh=True)

                result = run_arena(preset, bot_list, games, progress=advance, **settings)
        else:
            result = run_arena(preset, bot_list, games, **settings)
    except ArenaError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None
    seconds = time.perf_counter() - started
    typer.echo(format_table(result, seconds))
    if json_file is not None:
        json_file.write_text(json.dumps(result.to_json(), indent=2) + "\n")


def format_table(result: ArenaResult, seconds: float | None = None) -> str:
    """The arena's report: one line per bot, then forfeit reasons and ratings."""
    players = len(result.bots)
    lines = [
        f"{result.preset}, {players} players, {result.games} games (seed {result.seed})"
        + (f" in {seconds:.1f} s ({result.games / seconds:.0f} games/s)" if seconds else "")
        + f"; unfinished: {result.unfinished}; chance of losing: {1 / players:.1%}",
    ]
    width = max(4, *(len(s.name) for s in result.stats))
    lines.append(
        f"{'bot':{width}s} {'seats':>5s} {'games':>7s} {'losses':>7s} {'loss rate':>9s}"
        f"  {'95% CI':^15s} {'moves/game':>10s} {'forfeits':>8s}"
    )
    for s in result.stats:
        low, high = s.ci95
        lines.append(
            f"{s.name:{width}s} {s.seats:5d} {s.games:7d} {s.losses:7d} {s.loss_rate:9.1%}"
            f"  {low:6.1%} - {high:6.1%} {s.mean_moves:10.1f} {s.forfeits:8d}"
        )
    for s in result.stats:
        for reason, count in s.forfeit_reasons.most_common(3):
            lines.append(f"  {s.name} forfeited {count}x: {reason}")
        if len(s.forfeit_reasons) > 3:
            lines.append(f"  {s.name}: {len(s.forfeit_reasons) - 3} more reasons (see --json)")
    if result.unfinished:
        first = ", ".join(str(i) for i in result.unfinished_games[:10])
        lines.append(f"unfinished (past {result.max_moves} moves): games {first}")
    if result.ratings:
        lines.append("OpenSkill (Plackett-Luce) ratings, by mu - 3 sigma:")
        for r in result.ratings:
            lines.append(
                f"  {r.name:{width}s} mu {r.mu:6.2f}  sigma {r.sigma:5.2f}"
                f"  ordinal {r.ordinal:6.2f}"
            )
    return "\n".join(lines)


@app.command("replay-check")
def replay_check(
    path: Path = typer.Argument(..., help="A saved game (JSON) or a folder of them (--save)."),
) -> None:
    """Replay saved arena games through the engine; check that moves and results reproduce."""
    from .arena.arena import check_replay, replay_files

    if not path.exists():
        typer.echo(f"error: {path} does not exist", err=True)
        raise typer.Exit(2)
    checked = failed = 0
    for file in replay_files(path):
        try:
            data = json.loads(file.read_text())
        except (OSError, ValueError) as error:
            problem: str | None = f"cannot read it: {error}"
        else:
            problem = check_replay(data) if isinstance(data, dict) else "not a saved game"
        checked += 1
        if problem:
            failed += 1
            typer.echo(f"{file}: {problem}")
    if not checked:
        typer.echo(f"error: no saved games (game-*.json) in {path}", err=True)
        raise typer.Exit(2)
    typer.echo(f"{checked} games checked: {checked - failed} reproduce, {failed} do not")
    if failed:
        raise typer.Exit(1)


@app.command()
def replay(
    file: Path = typer.Argument(
        ..., help="A saved game (moska arena --save) or a peer transcript (.moska)."
    ),
    seat: int | None = typer.Option(
        None, help="Whose view to show (default: seat 0, or the transcript's writer)."
    ),
    open_hands: bool = typer.Option(
        False, "--open", help="Show every hand open (every face is known after the game)."
    ),
    no_color: bool = typer.Option(False, "--no-color", help="No colours (as NO_COLOR=1)."),
) -> None:
    """Step through a saved game or transcript in the table view (Enter, b, q).

    Not on a terminal, every step is printed one after the other.
    """
    from .ui.replay import ReplayError, load_replay, run_replay

    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    try:
        game = load_replay(file)
        run_replay(
            game,
            seat=seat,
            open_hands=open_hands,
            interactive=interactive,
            out=sys.stdout,
            color=False if no_color else None,
        )
    except ReplayError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None


@app.command()
def rules(
    preset: str = typer.Argument("moska", help="The preset whose rules to show."),
) -> None:
    """The rules of a preset in brief, with its options and the move notation."""
    from .rules_text import rules_text

    try:
        typer.echo(rules_text(preset))
    except OptionError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(2) from None


register_p2p(app)
register_net(app)


def main() -> None:
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
