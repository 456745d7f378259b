"""``replay``: step through a saved game or a peer's transcript in the table view."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .common import fail


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
    from ..ui.replay import ReplayError, load_replay, run_replay

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
        raise fail(str(error)) from None
