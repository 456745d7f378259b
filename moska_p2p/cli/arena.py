"""The arena's commands: ``arena`` (bots against bots on the engine alone),
``replay-check`` (saved arena games replayed through the engine) and ``ratings`` (the
leaderboard that ``arena --ratings FILE`` keeps across runs)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from ..engine import PRESETS
from .common import (
    EXIT_INTERRUPTED,
    check_bots,
    check_file,
    check_folder,
    check_json,
    fail,
    file_kind,
    json_to_stdout,
    parse_options_lenient,
    split_bots,
    write_json,
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
        None, "--json", help="Also write the results to this file as JSON (- for stdout alone)."
    ),
    save: Path | None = typer.Option(
        None, help="Save every game to this folder (game-NNNNNN.json), for replay-check."
    ),
    p2p: bool = typer.Option(
        False,
        "--p2p",
        help="Play every game through the full protocol, a peer per seat (proofs made and"
        " checked); counts verdicts and disagreements; --save writes every peer's transcripts"
        " (a folder per game, for moska verify).",
    ),
    cluster: str | None = typer.Option(
        None,
        help="Run the games on a Dask cluster instead of --jobs: tcp://HOST:PORT, local or"
        " local:N (needs: pip install 'moska-p2p[cluster]'); same results as --jobs.",
    ),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress bar."),
    plot: Path | None = typer.Option(
        None,
        help="Draw loss rates (95% intervals, par line) and ratings over the games into this"
        " .svg or .png file (needs: pip install 'moska-p2p[plot]').",
    ),
    ratings_file: Path | None = typer.Option(
        None,
        "--ratings",
        help="Add this run's games to the OpenSkill leaderboard kept in this JSON file (made"
        " if missing; print it with: moska ratings FILE).",
    ),
) -> None:
    """Pit bots against each other on the engine alone, with loss rates and ratings.

    Seats rotate over duplicate deals; the table shows loss rates with 95% Wilson intervals,
    forfeits and, with three kinds of bot or more, OpenSkill ratings.
    """
    import time

    from ..arena.arena import ArenaError, ArenaFailed, run_arena
    from .common import EXIT_FAILED, EXIT_USAGE

    try:
        options = parse_options_lenient(option)
    except typer.BadParameter as error:
        raise fail(str(error)) from None
    bot_list = split_bots(bots)
    check_bots(bot_list)
    if save is not None:
        check_folder(save, "--save")
    check_json(json_file)
    if plot is not None:
        _check_plot(plot)
    if ratings_file is not None:
        _check_ratings(ratings_file, preset)
    settings: dict[str, Any] = {
        "seed": seed,
        "jobs": jobs,
        "options": options,
        "budget": budget,
        "max_moves": max_moves,
        "save_dir": save,
        "p2p": p2p,
        "cluster": cluster,
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
    except ArenaError as error:  # ArenaFailed: a cluster that failed, not a mistyped option
        code = EXIT_FAILED if isinstance(error, ArenaFailed) else EXIT_USAGE
        raise fail(str(error), code) from None
    seconds = time.perf_counter() - started
    if result.interrupted and not result.games:
        typer.echo("interrupted before a game was played", err=True)
        raise typer.Exit(EXIT_INTERRUPTED)
    if result.interrupted:
        typer.echo(
            f"interrupted after {result.games} of {games} games: the games played are"
            " reported (and saved, rated, drawn as asked)",
            err=True,
        )
    if not json_to_stdout(json_file):  # with --json -, stdout holds the JSON alone
        typer.echo(format_table(result, seconds))
    if json_file is not None:
        write_json(json_file, result.to_json())
    if ratings_file is not None:
        _update_ratings(ratings_file, result)
    if plot is not None:
        from ..arena.plot import PlotError, draw

        try:
            draw(result, plot)
        except PlotError as error:
            raise fail(str(error), 1) from None
        except OSError as error:
            raise fail(f"--plot {plot}: {error.strerror or error}", 1) from None
    if result.interrupted:
        raise typer.Exit(EXIT_INTERRUPTED)


def _check_plot(path: Path) -> None:
    """Refuse, before any game, a plot of no known format or without matplotlib (exit 2)."""
    from ..arena.plot import PlotError, check

    try:
        check(path)
    except PlotError as error:
        raise fail(str(error)) from None
    check_file(path, "--plot")


def _check_ratings(path: Path, preset: str) -> None:
    """Refuse, before any game, a ratings file that is damaged, foreign, newer or of another
    preset, or that cannot be written (exit 2)."""
    from ..arena.ratings import RatingsError, load

    check_file(path, "--ratings")
    try:
        load(path, preset, missing_ok=True)
    except RatingsError as error:
        raise fail(f"--ratings {error}") from None


def _update_ratings(path: Path, result: ArenaResult) -> None:
    """Rate the run's games onto the leaderboard, read again now (not when the run began)
    so a run that finished meanwhile on the same file is not overwritten, then replace the
    file atomically."""
    from ..arena.ratings import RatingsError, load, save

    try:
        board = load(path, result.preset, missing_ok=True)
        rated = board.update(result.bots, result.outcomes)
        save(path, board)
    except RatingsError as error:
        raise fail(f"--ratings {error}", 1) from None
    except OSError as error:
        raise fail(f"--ratings {path}: {error.strerror or error}", 1) from None
    typer.echo(
        f"ratings: {rated} games added to {path} (now {board.games} games over"
        f" {_runs(board.runs)}); see moska ratings {path}"
    )


def format_table(result: ArenaResult, seconds: float | None = None) -> str:
    """The arena's report: one line per bot, then forfeit reasons and ratings; through the
    protocol (``--p2p``) two more columns, verdicts (how often a verdict named the bot's
    seat) and disagreements (how often its honest peer ended the game differently), and
    the games a verdict stopped."""
    players = len(result.bots)
    rate = result.games / seconds if seconds else 0.0
    lines = [
        f"{result.preset}, {players} players, {result.games} games (seed {result.seed})"
        + (" through the protocol" if result.p2p else "")
        + (f" in {seconds:.1f} s ({rate:.{0 if rate >= 10 else 2}f} games/s)" if seconds else "")
        + f"; unfinished: {result.unfinished}; chance of losing: {1 / players:.1%}",
    ]
    if result.p2p:
        lines.append(
            f"verdicts: {len(result.verdict_games)} games stopped;"
            f" disagreements: {len(result.disagreement_games)} games"
        )
    width = max(4, *(len(s.name) for s in result.stats))
    lines.append(
        f"{'bot':{width}s} {'seats':>5s} {'games':>7s} {'losses':>7s} {'loss rate':>9s}"
        f"  {'95% CI':^15s} {'moves/game':>10s} {'forfeits':>8s}"
        + (f" {'verdicts':>8s} {'disagreements':>13s}" if result.p2p else "")
    )
    for s in result.stats:
        low, high = s.ci95
        lines.append(
            f"{s.name:{width}s} {s.seats:5d} {s.games:7d} {s.losses:7d} {s.loss_rate:9.1%}"
            f"  {low:6.1%} - {high:6.1%} {s.mean_moves:10.1f} {s.forfeits:8d}"
            + (f" {s.named:8d} {s.disagreements:13d}" if result.p2p else "")
        )
    for o in result.verdict_games[:5]:
        named = ", ".join(
            f"seat {seat} ({result.bots[o.entries[seat]]})" if seat >= 0 else "a peer"
            for seat in o.named
        )
        lines.append(f"  game {o.game} stopped: {named}: {o.reason}")
    if len(result.verdict_games) > 5:
        lines.append(f"  {len(result.verdict_games) - 5} more games stopped (see --json)")
    for o in result.disagreement_games[:5]:
        seats = ", ".join(f"seat {seat} ({result.bots[o.entries[seat]]})" for seat in o.disagreeing)
        lines.append(f"  game {o.game}: the peers disagree: {seats}")
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


def _runs(count: int) -> str:
    return f"{count} arena run" + ("" if count == 1 else "s")


def ratings(
    file: Path = typer.Argument(..., help="A ratings file, kept by moska arena --ratings FILE."),
    as_json: bool = typer.Option(False, "--json", help="Print the leaderboard as JSON."),
) -> None:
    """Print the leaderboard of a ratings file: best first by ordinal (mu - 3 sigma)."""
    from ..arena.ratings import RatingsError, load

    try:
        board = load(file)
    except RatingsError as error:
        raise fail(str(error)) from None
    standings = board.standings()
    if as_json:
        data = {
            "preset": board.preset,
            "runs": board.runs,
            "games": board.games,
            "updated": board.updated,
            "leaderboard": [s.to_json() for s in standings],
        }
        typer.echo(json.dumps(data, indent=2))
        return
    typer.echo(
        f"{board.preset}: {len(standings)} bots, {board.games} games over {_runs(board.runs)}"
        + (f", last updated {board.updated}" if board.updated else "")
    )
    if not standings:
        typer.echo("no games rated yet")
        return
    width = max(3, *(len(s.bot) for s in standings))
    typer.echo(
        f"{'rank':>4s}  {'bot':{width}s} {'ordinal':>8s} {'mu':>7s} {'sigma':>6s}"
        f" {'games':>7s}  last updated"
    )
    for s in standings:
        r = s.record
        typer.echo(
            f"{s.rank:4d}  {s.bot:{width}s} {r.ordinal:8.2f} {r.mu:7.2f} {r.sigma:6.2f}"
            f" {r.games:7d}  {r.updated}"
        )


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
