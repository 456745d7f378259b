"""What several command modules share: reporting an error, the ``--option NAME=VALUE``
preset options, the ``--bots`` list.

There are two option parsers because the commands have always differed in how they treat a
malformed ``--option``; they are kept apart, each named for what it does.
"""

from __future__ import annotations

from typing import Any

import typer


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``error: MESSAGE`` on stderr and return the exit to raise
    (``raise fail(...) from None``)."""
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def parse_options_lenient(pairs: list[str]) -> dict[str, Any]:
    """``--option`` for ``play``, ``play --watch``, ``arena`` and ``simulate``.

    NAME and VALUE are checked before their spaces are stripped, so a blank one (``" =on"``)
    gets through and the engine names the problem. A pair without ``=`` raises
    :class:`typer.BadParameter`: ``play`` and ``arena`` catch it and print ``error: ...``,
    ``play --watch`` and ``simulate`` let typer show it as a usage error.
    """
    options: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or not value:
            raise typer.BadParameter(f'"{pair}" is not NAME=VALUE (e.g. deck_kill=on)')
        options[name.strip()] = value.strip()
    return options


def parse_options_strict_or_exit(pairs: list[str]) -> dict[str, str]:
    """``--option`` for ``host``: a NAME or VALUE that is blank once stripped is refused too,
    and the error is printed here (``error: ...``, exit 2), not raised to the caller."""
    options: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip() or not value.strip():
            raise fail(f'"{pair}" is not NAME=VALUE (e.g. deck_kill=on)')
        options[name.strip()] = value.strip()
    return options


def split_bots(text: str) -> list[str]:
    """The bot list of ``--bots`` (``play``, ``arena``): comma-separated specifications, where
    a piece that is only ``NAME=VALUE`` continues the previous bot's parameters
    (``ismcts:time=0.05,iterations=300,greedy`` is two bots)."""
    bots: list[str] = []
    for piece in text.split(","):
        item = piece.strip()
        if bots and "=" in item and ":" not in item and " " not in item:
            bots[-1] += "," + item
        elif item:
            bots.append(item)
    return bots
