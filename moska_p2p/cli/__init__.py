"""The ``moska`` command line (typer). The outermost layer: it only calls inward.

One module per group of commands, each command a plain function; this module puts them on
one typer :data:`app`, in the order ``moska --help`` lists them (:data:`COMMANDS`):

- :mod:`.local`: ``play`` (and ``play --watch``), ``presets``, ``rules``
- :mod:`.arena`: ``arena``, ``replay-check``
- :mod:`.replay`: ``replay``
- :mod:`.p2p`: ``keygen``, ``simulate``, ``verify``
- :mod:`.net`: ``host``, ``join``, ``tables``
- :mod:`.common`: what several of them share (errors, ``--option`` parsing, ``--bots``)

A command module imports at its top only what its options need (typer, the engine's preset
names); everything else is imported when the command runs, so ``moska --help`` stays quick.
To add a command: write it in its group's module and name it in :data:`COMMANDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import typer

from . import arena, local, net, p2p, replay

COMMANDS: tuple[tuple[str, Callable[..., Any]], ...] = (
    ("play", local.play),
    ("presets", local.presets),
    ("arena", arena.arena),
    ("replay-check", arena.replay_check),
    ("replay", replay.replay),
    ("rules", local.rules),
    ("keygen", p2p.keygen),
    ("simulate", p2p.simulate),
    ("verify", p2p.verify),
    ("host", net.host),
    ("join", net.join),
    ("tables", net.tables),
)
"""Every command of ``moska``: its name and the function that runs it."""

app = typer.Typer(
    help="Moska and its family of Finnish and Russian shedding card games, peer to peer.",
    no_args_is_help=True,
    add_completion=False,
)
for _name, _command in COMMANDS:
    app.command(_name)(_command)


def main() -> None:
    """The ``moska`` console script (and ``python -m moska_p2p``).

    No traceback reaches a user: an error no command foresaw is one ``error:`` line and exit
    1; ``-v``/``--verbose`` (or ``MOSKA_DEBUG=1``) shows the traceback instead."""
    import os
    import sys

    try:
        app()
    except Exception as error:  # SystemExit, KeyboardInterrupt: as they are
        if os.environ.get("MOSKA_DEBUG") or {"-v", "--verbose"} & set(sys.argv[1:]):
            raise
        text = str(error).splitlines()[0] if str(error) else ""
        print(
            f"error: {type(error).__name__}{': ' + text if text else ''}"
            " (run it again with -v, or MOSKA_DEBUG=1, for the details)",
            file=sys.stderr,
        )
        raise SystemExit(1) from None
