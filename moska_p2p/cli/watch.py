"""``watch``: a spectator of a table on the network (:mod:`moska_p2p.net.watch`).

trio, the crypto, the network layer and the terminal UI are imported when the command runs.
"""

from __future__ import annotations

import logging
import sys
import time
from pathlib import Path

import typer

from .common import EXIT_INTERRUPTED, check_file, fail, is_interrupt


def watch(
    address: str = typer.Argument(
        ..., help="The table's invite (moska:...) or HOST:PORT, as its host printed them."
    ),
    transcript: Path | None = typer.Option(
        None,
        help="Where to write the watched game's transcript, the host's record of it (default:"
        " your data directory); moska verify checks it.",
    ),
    plain: bool = typer.Option(
        False, "--plain", help="Lines instead of the full-screen table (as in a pipe)."
    ),
    name: str = typer.Option("spectator", help="Your name, as the host's log shows it."),
    timeout: float = typer.Option(
        10.0, min=0.1, help="Seconds to wait for the connection and its handshake."
    ),
    wait: float = typer.Option(600.0, min=0.1, help="Seconds to wait for the table to fill."),
    silence: float | None = typer.Option(
        None,
        min=0.1,
        help="Seconds without a frame from the host before giving up (default: twice the"
        " table's timeout, plus 10).",
    ),
    no_color: bool = typer.Option(False, "--no-color", help="No colours (as NO_COLOR=1)."),
    verbose: bool = typer.Option(False, "--verbose", "-v", help="Log the connection."),
) -> None:
    """Watch a table live as a spectator, with no seat: every hand face down, every move
    checked as it comes (as moska verify does); at the end the cards disclosed and the result.

    A spectator gets what every player sees and no more (the host may refuse spectators).
    The transcript it writes is the host's record of the game and verifies with moska verify.
    """
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    from ..net.invite import looks_like_invite
    from .net import parse_address
    from .relay import parse_invite_or_exit

    invite = parse_invite_or_exit(address) if looks_like_invite(address) else None
    target = parse_address(address) if invite is None else None
    if transcript is not None:
        check_file(transcript, "--transcript", make_parents=True)
    import trio

    from ..crypto.identity import Identity
    from ..net.node import EXIT_FAILED, Outcome
    from ..net.persist import data_dir
    from ..net.watch import Watcher, WatchOptions
    from ..ui.render import color_wanted, symbols_wanted
    from ..ui.spectate import SpectatorScreen

    identity = Identity.generate()  # a spectator is on no roster: any key will do
    path = transcript or data_dir() / f"{time.strftime('%Y%m%d-%H%M%S')}-watched.moska"
    interactive = not plain and sys.stdin.isatty() and sys.stdout.isatty()
    screen = SpectatorScreen(
        interactive=interactive,
        out=sys.stdout,
        color=not no_color and color_wanted(sys.stdout),
        symbols=symbols_wanted(sys.stdout),
    )
    options = WatchOptions(
        identity,
        path,
        name=name,
        connect_timeout=timeout,
        lobby_wait=wait,
        silence=silence,
    )
    watcher = Watcher(options, screen)

    async def main() -> Outcome:
        with trio.CancelScope() as scope:
            token = trio.lowlevel.current_trio_token()
            screen.quit = lambda: token.run_sync_soon(scope.cancel)
            if invite is not None:
                return await watcher.watch_invite(invite)
            assert target is not None
            return await watcher.watch(target)
        return Outcome(EXIT_INTERRUPTED, "stopped watching")

    try:
        outcome = trio.run(main)
    except BaseException as error:  # Ctrl-C, maybe grouped
        if not is_interrupt(error):
            raise
        screen.quit = None
        outcome = Outcome(EXIT_INTERRUPTED, "stopped watching")
    screen.close()
    if outcome.code == EXIT_FAILED:
        raise fail(outcome.message, EXIT_FAILED)
    typer.echo(outcome.message)
    if path.exists():
        typer.echo(f"the game's transcript: {path} (moska verify or moska replay it)")
    raise typer.Exit(outcome.code)
