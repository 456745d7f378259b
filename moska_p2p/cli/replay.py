"""``replay``: step through a saved game or a peer's transcript in the table view;
``export``: write a game as a text record (``docs/RECORD.md``)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from .common import EXIT_FAILED, fail


def replay(
    file: Path = typer.Argument(
        ...,
        help="A saved game (moska arena --save), a peer transcript (.moska) or a text record"
        " (moska export).",
    ),
    seat: int | None = typer.Option(
        None, help="Whose view to show (default: seat 0, or the transcript's writer)."
    ),
    open_hands: bool = typer.Option(
        False, "--open", help="Show every hand open (every face is known after the game)."
    ),
    unverified: bool = typer.Option(
        False,
        "--unverified",
        help="Show a transcript moska verify rejects, up to its fault, marked on every screen.",
    ),
    no_color: bool = typer.Option(False, "--no-color", help="No colours (as NO_COLOR=1)."),
    plain: bool = typer.Option(
        False,
        "--plain",
        help="Line mode even on a terminal: one step per Enter (b back, q quit), no full screen.",
    ),
) -> None:
    """Step through a saved game or transcript in the table view (Enter, b, q).

    A transcript is shown only if it verifies (as moska verify); not on a terminal, every
    step is printed one after the other.
    """
    from ..ui.replay import NotVerified, ReplayError, load_replay, run_replay

    # On a terminal: the full-screen table, or with --plain the same steps as lines, one per
    # Enter (run_replay given read=input); elsewhere every step, one after the other.
    interactive = sys.stdin.isatty() and sys.stdout.isatty()
    read = input if plain and interactive else None
    try:
        game = load_replay(file, unverified=unverified, secrets=own_secrets(file), incomplete=True)
        run_replay(
            game,
            seat=seat,
            open_hands=open_hands,
            interactive=interactive,
            read=read,
            out=sys.stdout,
            color=False if no_color else None,
        )
    except NotVerified as error:
        raise fail(str(error), EXIT_FAILED) from None
    except ReplayError as error:
        raise fail(str(error)) from None


def own_secrets(transcript: Path) -> list[bytes]:
    """The per-game secrets its writer's node keeps beside a transcript (``.secret`` once
    the game is over, ``.resume`` while it could be resumed): with the right one the replay
    opens the writer's own cards. Nothing for anyone else's copy, or an unreadable file."""
    from ..net.persist import SaveError, load_secret, resume_path, secret_path

    found = []
    for path in (secret_path(transcript), resume_path(transcript)):
        try:
            found.append(load_secret(path))
        except SaveError:
            continue
    return found


def export(
    file: Path = typer.Argument(
        ...,
        help="An arena record (moska arena --save), a peer transcript (.moska; only if it"
        " verifies) or a text record.",
    ),
    output: Path | None = typer.Option(
        None, "-o", "--output", help="The file to write (default: print the record)."
    ),
) -> None:
    """Write a game as a readable text record, like PGN for chess (docs/RECORD.md).

    moska replay reads it back. A transcript's record is an unverified copy: it has none of
    the signatures, so only the transcript itself can be verified.
    """
    from .common import check_file

    if output is not None:
        check_file(output, "-o")
        if output.exists() and output.resolve() == file.resolve():
            raise fail(f"-o {output}: that is the game being exported; name another file")
    from ..ui.record_text import RecordError, record_text
    from ..ui.replay import NotVerified, ReplayError, load_replay

    try:
        text = record_text(load_replay(file))
    except NotVerified as error:  # export has no --unverified: a record is of a verified game
        raise fail(
            f"{error.path}: {error.fault}; moska verify rejects this transcript, so it is not"
            f" exported (moska replay --unverified {error.path} shows it, marked)",
            EXIT_FAILED,
        ) from None
    except RecordError as error:
        raise fail(f"{file}: {error}", EXIT_FAILED) from None
    except ReplayError as error:
        raise fail(str(error)) from None
    if output is None:
        typer.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        raise fail(f"-o {output}: {error.strerror or error}", EXIT_FAILED) from None
    typer.echo(f"wrote {output} ({len(text.splitlines())} lines)", err=True)
