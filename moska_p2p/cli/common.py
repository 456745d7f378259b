"""What several command modules share: reporting an error, the ``--option NAME=VALUE``
preset options, the ``--bots`` list, and the checks made before any work starts (an
``exec:`` bot's program, a file or folder to write).

Exit codes (:data:`EXIT_OK` and the rest): 0 a game played to its end (or a command that
did its work), 1 an attempt that failed (a game stopped by a verdict, a port in use, a
refused connection), 2 a mistake in what was typed (found before work starts), 130 a game
interrupted or abandoned (Ctrl-C, or a person who quits before the end); ``verify`` also
exits 3 for an incomplete transcript and 4 for a file that is not one.

There are two option parsers because the commands have always differed in how they treat a
malformed ``--option``; they are kept apart, each named for what it does.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import typer

EXIT_OK = 0
EXIT_FAILED = 1
"""A failure, a game stopped by a verdict among them."""
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3
"""``verify``: a transcript whose writer stopped before the game's end (a crash or a cut),
every frame in it checking."""
EXIT_NOT_A_TRANSCRIPT = 4
"""``verify``: a file that is no moska transcript at all."""
EXIT_INTERRUPTED = 130
"""Ctrl-C, or a game the person left before its end."""


_VALIDATION_WORDS = (
    (r"Input should be less than or equal to (\S+)", r"at most \1"),
    (r"Input should be greater than or equal to (\S+)", r"at least \1"),
    (r"Input should be less than (\S+)", r"less than \1"),
    (r"Input should be greater than (\S+)", r"more than \1"),
    (r"Input should be a valid integer.*", "not a whole number"),
    (r"Input should be a valid number.*", "not a number"),
    (r"Input should be a valid boolean.*", "not true or false"),
    (r"Input should be a valid string.*", "not text"),
)
"""The validator's phrases (typer checks values with pydantic) and the project's words."""


def plain_words(message: str) -> str:
    """A value's error in the project's words (``at most 6``), not the validator's
    (``Input should be less than or equal to 6``)."""
    for pattern, words in _VALIDATION_WORDS:
        message = re.sub(pattern, words, message)
    return message


def usage_error_line(error: Any, program: str = "moska") -> str:
    """A mistake on the command line (click's usage error: an unknown option, a value out of
    range, a missing or an extra argument) as the project writes every error: one ``error:``
    line, the option and what it takes, and where the help is."""
    context = getattr(error, "ctx", None)
    command = context.command_path if context is not None else program
    param = getattr(error, "param", None)
    message = plain_words(error.format_message()).rstrip(".")
    if param is not None:
        if getattr(param, "param_type_name", "") == "option" and param.opts:
            name = param.opts[0]
        else:
            name = str(param.metavar or param.name or "").upper()
        low, high = getattr(param, "min", None), getattr(param, "max", None)
        message = re.sub(r"^Invalid value for [^:]+: ", "", message)
        if low is not None and high is not None and re.match("at (most|least) ", message):
            message = f"takes {low:g} to {high:g}"
        missing = type(error).__name__ == "MissingParameter"
        message = f"{name} is missing" if missing else f"{name}: {message}"
    extra = re.match(r"^Got unexpected extra argument(?:\(s\)|s)? \((.*)\)$", message)
    if extra:
        message = f"unexpected extra argument: {extra.group(1)}"
    if message[1:2].islower():
        message = message[:1].lower() + message[1:]
    return f"error: {message} ({command} -h for help)"


def fail(message: str, code: int = EXIT_USAGE) -> typer.Exit:
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


def check_bots(specs: Iterable[str]) -> None:
    """Refuse (exit 2) an ``exec:COMMAND`` bot whose program cannot be run, before any game
    starts: a missing file, one that is not executable, a name not on the PATH."""
    for spec in specs:
        spec = spec.strip()
        if not spec.startswith("exec:"):
            continue
        try:
            argv = shlex.split(spec[len("exec:") :])
        except ValueError as error:
            raise fail(f"bot {spec!r}: {error}") from None
        if not argv:
            raise fail("exec: needs a command, e.g. exec:python3 my_bot.py")
        program = argv[0]
        if os.sep in program or (os.altsep and os.altsep in program):
            path = Path(program)
            if not path.exists():
                raise fail(f"bot {spec!r}: no program {program}")
            if path.is_dir() or not os.access(path, os.X_OK):
                raise fail(f"bot {spec!r}: {program} is not an executable file")
        elif shutil.which(program) is None:
            raise fail(f"bot {spec!r}: no program {program!r} on the PATH")


def _nearest_existing(path: Path) -> Path:
    for parent in (path, *path.parents):
        if parent.exists():
            return parent
    return Path(".")


def _check_writable_base(path: Path, option: str, start: Path) -> None:
    """Refuse ``path`` unless the nearest existing folder at or above ``start`` is a folder
    this user may write in (the command makes what is missing below it)."""
    base = _nearest_existing(start)
    if not base.is_dir():
        raise fail(f"{option} {path}: {base} is a file, not a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        raise fail(f"{option} {path}: cannot write in {base} (permission denied)")


def check_folder(path: Path, option: str) -> None:
    """Refuse (exit 2) a folder to write into that is a file, or that cannot be made or
    written, before any work starts (nothing is created here)."""
    if path.exists() and not path.is_dir():
        raise fail(f"{option} {path}: that is a file; name a folder (it is made if missing)")
    _check_writable_base(path, option, path)


def check_file(path: Path, option: str, *, make_parents: bool = False) -> None:
    """Refuse (exit 2) a file to write that is a folder, or whose folder is missing (unless
    ``make_parents``: the command makes it) or cannot be written, before any work starts."""
    if path.is_dir():
        raise fail(f"{option} {path}: that is a folder; name a file")
    if path.exists() and not os.access(path, os.W_OK):
        raise fail(f"{option} {path}: cannot write it (permission denied)")
    parent = path.parent
    if not make_parents and not parent.is_dir():
        what = "is a file" if parent.exists() else "does not exist"
        raise fail(f"{option} {path}: the folder {parent} {what}")
    _check_writable_base(path, option, parent)


def file_kind(path: Path) -> str:
    """What a file looks like from its first bytes: ``"transcript"`` (a peer's ``.moska``),
    ``"json"`` (an arena record, ``moska arena --save``) or ``""`` (neither, or unreadable)."""
    try:
        with path.open("rb") as file:
            head = file.read(512)
    except OSError:
        return ""
    if b"moska-transcript" in head[:128]:
        return "transcript"
    if head.lstrip()[:1] in (b"{", b"["):
        return "json"
    return ""


JSON_STDOUT = "-"
"""``--json -``: the JSON goes to stdout (and the report in words is not printed)."""


def json_to_stdout(path: Path | None) -> bool:
    """Whether ``--json`` names stdout (``-``) rather than a file."""
    return path is not None and str(path) == JSON_STDOUT


def check_json(path: Path | None, option: str = "--json") -> None:
    """Refuse (exit 2) a ``--json FILE`` that cannot be written, before any work starts
    (``-`` is stdout: nothing to check)."""
    if path is not None and not json_to_stdout(path):
        check_file(path, option)


def write_json(path: Path, data: Any, option: str = "--json") -> None:
    """The results as JSON: one document on stdout for ``-``, else indented into the file
    (exit 1 with one line if it cannot be written after all, e.g. the disk filled)."""
    import json

    if json_to_stdout(path):
        typer.echo(json.dumps(data))
        return
    try:
        path.write_text(json.dumps(data, indent=2) + "\n")
    except OSError as error:
        raise fail(f"{option} {path}: {error.strerror or error}", EXIT_FAILED) from None


def is_interrupt(error: BaseException) -> bool:
    """A Ctrl-C, bare or wrapped by trio: a nursery re-raises a KeyboardInterrupt that hit a
    task inside a ``BaseExceptionGroup``, which ``except KeyboardInterrupt`` does not catch."""
    if isinstance(error, KeyboardInterrupt):
        return True
    if isinstance(error, BaseExceptionGroup):
        return error.split(KeyboardInterrupt)[1] is None
    return False
