"""The arena's commands: ``arena`` (bots against bots on the engine alone) and
``replay-check`` (saved arena games replayed through the engine)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..engine import PRESETS
from .common import (
    check_bots,
    check_file,
    check_folder,
    fail,
    file_kind,
    parse_options_lenient,
    split_bots,
)

if TYPE_CHECKING:
    from ..arena.arena import ArenaResult


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

    from ..arena.arena import ArenaError, run_arena

    try:
        options = parse_options_lenient(option)
    except typer.BadParameter as error:
        raise fail(str(error)) from None
    bot_list = split_bots(bots)
    check_bots(bot_list)
    if save is not None:
        check_folder(save, "--save")
    if json_file is not None:
        check_file(json_file, "--json")
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
        raise fail(str(error)) from None
    seconds = time.perf_counter() - started
    typer.echo(format_table(result, seconds))
    if json_file is not None:
        try:
            json_file.write_text(json.dumps(result.to_json(), indent=2) + "\n")
        except OSError as error:
            raise fail(f"--json {json_file}: {error.strerror or error}", 1) from None


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


def replay_check(
    path: Path = typer.Argument(..., help="A saved game (JSON) or a folder of them (--save)."),
) -> None:
    """Replay saved arena games through the engine; check that moves and results reproduce."""
    from ..arena.arena import check_replay, replay_files

    if not path.exists():
        raise fail(f"{path} does not exist")
    if not path.is_dir():
        kind = file_kind(path)
        if kind == "transcript":
            raise fail(
                f"{path} is a peer transcript, not a saved arena game: check it with"
                f" moska verify {path}"
            )
        if kind != "json":
            raise fail(f"{path} is not a saved arena game (JSON, from moska arena --save)")
    checked = failed = 0
    for file in replay_files(path):
        try:
            data = json.loads(file.read_text())
        except (OSError, ValueError) as error:
            if not path.is_dir():
                raise fail(f"{file}: not a saved arena game: {error}") from None
            problem: str | None = f"cannot read it: {error}"
        else:
            problem = check_replay(data) if isinstance(data, dict) else "not a saved game"
        checked += 1
        if problem:
            failed += 1
            typer.echo(f"{file}: {problem}")
    if not checked:
        raise fail(f"no saved games (game-*.json) in {path}")
    typer.echo(f"{checked} games checked: {checked - failed} reproduce, {failed} do not")
    if failed:
        raise typer.Exit(1)
