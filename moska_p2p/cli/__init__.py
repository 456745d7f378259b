"""The ``moska`` command line (typer). The outermost layer: it only calls inward.

One module per group of commands, each command a plain function; this module puts them on
one typer :data:`app`, in the sections and order ``moska --help`` lists them
(:data:`COMMANDS`):

- :mod:`.local`: ``play`` (and ``play --watch``), ``presets``, ``rules``, ``stats``
- :mod:`.arena`: ``arena``, ``replay-check``, ``ratings``
- :mod:`.replay`: ``replay``, ``export``
- :mod:`.p2p`: ``keygen``, ``simulate``, ``verify``
- :mod:`.net`: ``host``, ``join``, ``tables``; :mod:`.relay`: ``relay``
- :mod:`.config`: ``config``, and the config file :func:`main` turns into click's
  ``default_map``
- :mod:`.common`: what several of them share (errors, exit codes, ``--option`` parsing,
  ``--bots``, ``--json``)

:func:`main` also makes the conventions every command follows, once, on the built click tree
(:func:`build_command`): ``-h``, readable metavars, completion of preset and bot names, and
the global ``-v``/``-q``/``--version``.

A command module imports at its top only what its options need (typer, the engine's preset
names); everything else is imported when the command runs, so ``moska --help`` stays quick.
To add a command: write it in its group's module and name it, with its section of the help,
in :data:`COMMANDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from . import arena, config, known, local, net, p2p, relay, replay, tournament, watch
from .common import EXIT_INTERRUPTED, EXIT_USAGE, is_interrupt

if TYPE_CHECKING:
    from typer.core import TyperGroup

__all__ = ["COMMANDS", "app", "build_command", "main"]

PLAY, RECORDS, BOTS, SETUP = "Play", "Records", "Bots and rules", "Setup"
"""The sections of ``moska --help``, in this order (as git and gh group theirs)."""

COMMANDS: tuple[tuple[str, Callable[..., Any], str, str], ...] = (
    ("play", local.play, PLAY, "Play at the terminal against bots (--watch: bots alone)."),
    ("host", net.host, PLAY, "Open a table on the network and print its invite."),
    ("join", net.join, PLAY, "Sit down at a table: its invite, HOST:PORT, or one on the LAN."),
    ("watch", watch.watch, PLAY, "Watch a table live as a spectator."),
    ("tables", net.tables, PLAY, "List the open tables on the LAN."),
    ("tournament", tournament.tournament, PLAY, "Direct or enter a club event of many tables."),
    ("replay", replay.replay, RECORDS, "Step through a game or a transcript in the table."),
    ("verify", p2p.verify, RECORDS, "Check transcripts: signatures, proofs, moves, sessions."),
    ("export", replay.export, RECORDS, "Write a game as a text record (docs/RECORD.md)."),
    ("replay-check", arena.replay_check, RECORDS, "Check that saved arena games reproduce."),
    ("stats", local.stats, RECORDS, "Your record against the bots: games, losses, runs."),
    ("rules", local.rules, BOTS, "The rules of a preset in brief."),
    ("presets", local.presets, BOTS, "List the presets and their options."),
    ("arena", arena.arena, BOTS, "Pit bots against each other: loss rates and ratings."),
    ("ratings", arena.ratings, BOTS, "Print the leaderboard of a ratings file."),
    ("simulate", p2p.simulate, BOTS, "Play a game between in-process peers (no sockets)."),
    ("keygen", p2p.keygen, SETUP, "Create your identity key, or show the one you have."),
    ("trust", known.trust, SETUP, "Accept a player's new key, or forget an old one."),
    ("relay", relay.relay, SETUP, "Run a relay for peers that cannot reach each other."),
    ("config", config.config, SETUP, "Show the config file in use and its defaults."),
)
"""Every command of ``moska``: its name, the function that runs it, its section of the
help and its line there."""

HELP_NAMES = ["-h", "--help"]


class _Sections(typer.core.TyperGroup):
    """The command list of ``moska --help`` in sections (:data:`COMMANDS`' order), with
    click's plain help: no boxes that squeeze an option's help into a narrow column, and no
    markup that eats a ``[plot]`` in the text."""

    def list_commands(self, ctx: Any) -> list[str]:
        return [name for name, *_ in COMMANDS if name in self.commands]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        shown = [(name, self.commands[name]) for name in self.list_commands(ctx)]
        shown = [(name, command) for name, command in shown if not command.hidden]
        if not shown:
            return
        width = max(len(name) for name, _ in shown)
        for section in dict.fromkeys(getattr(c, "rich_help_panel", None) for _, c in shown):
            rows = [  # one line each, the names in one column across the sections
                (name.ljust(width), command.get_short_help_str(formatter.width))
                for name, command in shown
                if getattr(command, "rich_help_panel", None) == section
            ]
            with formatter.section(section or "Commands"):
                formatter.write_dl(rows)


app = typer.Typer(
    help="Moska and its family of Finnish and Russian shedding card games, peer to peer.",
    no_args_is_help=True,
    context_settings={"help_option_names": HELP_NAMES},
    cls=_Sections,
    rich_markup_mode=None,
)
for _name, _command, _section, _line in COMMANDS:
    app.command(_name, rich_help_panel=_section, short_help=_line)(_command)


def _show_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        from ..crypto.msm import describe
        from ..engine import IMPLEMENTATION

        typer.echo(f"moska-p2p {version('moska-p2p')}")
        typer.echo(f"proof arithmetic: {describe()[0]}")
        typer.echo(f"rules engine: {IMPLEMENTATION}")
        raise typer.Exit()


def _warn_of_a_missing_accelerator() -> None:
    """One ``warning:`` line on stderr when ``MOSKA_P2P_ACCEL`` asks for what this process
    cannot give: the game is the same without it (same bytes, same verdicts), only slower,
    so it is no error; but a person who set it should not have to guess why a deal is slow.
    Costs nothing when the variable is not set."""
    import os
    import sys

    if not os.environ.get("MOSKA_P2P_ACCEL", "").strip():
        return
    from ..crypto.msm import describe

    text, as_asked = describe()
    if not as_asked:
        print(f"warning: proof arithmetic: {text}", file=sys.stderr)


@app.callback()
def _global_options(
    ctx: typer.Context,
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="Details: connections, and the traceback of an error."
    ),
    quiet: bool = typer.Option(
        False, "--quiet", "-q", help="No progress or info lines: results and errors only."
    ),
    version: bool = typer.Option(
        False,
        "--version",
        "-V",
        is_eager=True,
        expose_value=False,
        callback=_show_version,
        help="Print the version and exit.",
    ),
    lang: str | None = typer.Option(
        None,
        "--lang",
        help="The language of the table, help and rules: en or fi (suomi). Default: the"
        " config file's lang, else the locale (LANGUAGE, LC_ALL, LC_MESSAGES, LANG).",
    ),
) -> None:
    """``moska -v COMMAND`` and ``moska -q COMMAND``: the command's own ``-v``/``-q``, for
    every command that has one, set through the ``default_map`` its context is made from
    (so no command reads a global; the command's own flag, typed after it, still works).
    ``--lang`` installs the language for what a person reads (:mod:`moska_p2p.i18n`)."""
    from ..i18n import use_language

    from_file = getattr(ctx.obj, "top", {}).get("lang")
    try:
        use_language(lang or (str(from_file) if from_file else None))
    except ValueError as error:
        raise typer.BadParameter(str(error), param_hint="--lang") from None
    flags = {"verbose": verbose, "quiet": quiet}
    if not any(flags.values()) or not isinstance(ctx.command, typer.core.TyperGroup):
        return
    if ctx.default_map is None:
        ctx.default_map = {}
    for name, command in ctx.command.commands.items():
        own = {param.name for param in command.params}
        for flag, given in flags.items():
            if given and flag in own:
                ctx.default_map.setdefault(name, {})[flag] = True


_FOLDERS = {"save", "transcripts", "folder", "out_dir"}
"""``Path`` options that name a folder (shown as FOLDER, the others as FILE)."""
_WORDS = {
    "option": "NAME=VALUE",
    "bots": "BOT,...",
    "bot": "BOT",
    "hint": "BOT",
    "address": "HOST:PORT",
    "bind": "ADDRESS",
    "expect": "FINGERPRINT",
}
"""Metavars that say more than the option's name in capitals (the default for text)."""


def _metavar(param: Any) -> str:
    """A readable metavar from the parameter's type (``N``, ``SECONDS``, ``FILE``...)."""
    from pathlib import Path

    annotation = param.type_descriptor.annotation
    name = param.name or ""
    if name in _WORDS:
        return _WORDS[name]
    if annotation is int:
        return "N"
    if annotation is float:  # most are times; one that is not says so in its help
        return "SECONDS" if "second" in (getattr(param, "help", None) or "").lower() else "X"
    if annotation is Path:
        return "FOLDER" if name in _FOLDERS else ("PATH" if name == "path" else "FILE")
    if str(annotation) == "list[pathlib.Path]":
        return "PATH..."
    if str(annotation).startswith("list["):
        return "TEXT..." if param.nargs != 1 else "TEXT"
    return name.upper().replace("_", "-") or "TEXT"


def _range_text(low: float | None, high: float | None) -> str | None:
    if low is None and high is None:
        return None
    if low is None:
        return f"at most {high:g}"
    if high is None:
        return f"at least {low:g}"
    return f"{low:g} to {high:g}"


def _readable_help(root: TyperGroup) -> None:
    """Give every parameter without a metavar a readable one, once, after the tree is built.

    typer shows a parameter's Python type (``<int range> [2<=x<=6]``, ``<list[str]>``,
    ``<bool>`` on a flag); the commands are written by several people and should not each
    spell a metavar out, so it is done here for all: a flag shows none, a number range reads
    ``[2 to 6]``, an argument shows only its name, and one-line summaries of commands lose
    their docstring's line breaks."""
    from typer import _click
    from typer.core import TyperArgument, TyperOption

    for command in (root, *root.commands.values()):
        if command is not root and command.short_help is None and command.help:
            first = command.help.strip().split("\n\n")[0]
            command.short_help = " ".join(first.split())
        # The help option is made (and cached) on first use; make it now, with the names
        # every context inherits from the root, so that it gets a metavar too.
        context = _click.Context(command, info_name=command.name, help_option_names=HELP_NAMES)
        shown = command.get_help_option(context)
        for param in (*command.params, *([shown] if shown is not None else [])):
            if not hasattr(param, "type_descriptor"):
                continue
            if isinstance(param, TyperOption) and param.is_flag:
                if param.metavar is None:
                    param.metavar = ""
                continue
            if param.metavar is None:
                param.metavar = _metavar(param)
                if isinstance(param, TyperArgument):  # its name column shows the metavar
                    param.metavar = param.metavar.removesuffix("...")
                    vars(param)["display_type_rich"] = lambda ctx: None  # on this one only
                    usage = param.metavar if param.required else f"[{param.metavar}]"
                    usage += "..." if param.nargs != 1 else ""
                    vars(param)["_usage_display_name"] = lambda usage=usage: usage  # not {PATH}
            low, high = getattr(param, "min", None), getattr(param, "max", None)
            if low is not None or high is not None:
                text = _range_text(low, high)
                vars(param)["_get_number_range_help_str"] = lambda text=text: text


def _complete_presets(ctx: Any, param: Any, incomplete: str) -> list[str]:
    from ..engine import PRESETS

    return [name for name in PRESETS if name.startswith(incomplete.lower())]


def _complete_bots(ctx: Any, param: Any, incomplete: str) -> list[str]:
    """Built-in bot names; in a comma list (``--bots greedy,is``) the last piece."""
    from ..bots.loader import BUILTIN_BOTS

    head, comma, last = incomplete.rpartition(",")
    prefix = head + comma
    return [prefix + name for name in BUILTIN_BOTS if name.startswith(last)]


_COMPLETERS: dict[str, Callable[[Any, Any, str], list[str]]] = {
    "preset": _complete_presets,
    "bots": _complete_bots,
    "bot": _complete_bots,
    "hint": _complete_bots,
}
"""Shell completion of values, by parameter name, for every command that has one."""


def _add_completions(root: TyperGroup) -> None:
    for command in root.commands.values():
        for param in command.params:
            complete = _COMPLETERS.get(param.name or "")
            if complete is not None and param._custom_shell_complete is None:
                param._custom_shell_complete = complete


def _preset_in_any_case(ctx: Any, param: Any, value: Any) -> Any:
    """A preset's name as typed in any case (``--preset Durak``), as moves are."""
    return value.strip().lower() if isinstance(value, str) else value


def _presets_in_any_case(root: TyperGroup) -> None:
    for command in root.commands.values():
        for param in command.params:
            if param.name == "preset" and param.callback is None:
                param.callback = _preset_in_any_case


def build_command() -> TyperGroup:
    """The click command tree of :data:`app`, with readable help and value completion."""
    from typer.core import TyperGroup

    command = typer.main.get_command(app)
    assert isinstance(command, TyperGroup)
    _readable_help(command)
    _add_completions(command)
    _presets_in_any_case(command)
    return command


def _run_command(command: TyperGroup, args: list[str], defaults: Any, loaded: Any) -> int:
    """Run the command line; its exit code. A mistake in what was typed (an unknown
    option, a value out of range, an extra argument) is one ``error:`` line and exit 2, as
    every error the commands find themselves, not click's boxed usage."""
    import sys

    from typer import _click

    from .common import usage_error_line

    try:
        code = command.main(args=args, default_map=defaults, obj=loaded, standalone_mode=False)
    except _click.exceptions.NoArgsIsHelpError as error:  # moska alone: the help
        error.show()
        return error.exit_code
    except _click.exceptions.UsageError as error:
        print(usage_error_line(error), file=sys.stderr)
        return error.exit_code
    except _click.exceptions.ClickException as error:
        print(f"error: {error.format_message()}", file=sys.stderr)
        return error.exit_code
    except typer.Abort:  # end of input at a question
        print("error: aborted (end of input)", file=sys.stderr)
        return 1
    return code if isinstance(code, int) else 0


def main() -> None:
    """The ``moska`` console script (and ``python -m moska_p2p``).

    The config file is read here and given to the whole tree as click's ``default_map``
    (:mod:`.config`), so an option typed always wins and no command reads the file. No
    traceback reaches a user: an error no command foresaw is one ``error:`` line and exit
    1; ``-v``/``--verbose`` (or ``MOSKA_DEBUG=1``) shows the traceback instead."""
    import os
    import sys

    from .config import ConfigError, default_map, load_config

    try:
        command = build_command()
        try:
            loaded = load_config()
            defaults = default_map(loaded, command)
        except ConfigError as error:
            print(f"error: {error}", file=sys.stderr)
            raise SystemExit(EXIT_USAGE) from None
        if loaded.color is False:
            os.environ.setdefault("NO_COLOR", "1")
        _warn_of_a_missing_accelerator()
        code = _run_command(command, sys.argv[1:], defaults, loaded)
        raise SystemExit(code)
    except BaseException as error:
        if is_interrupt(error):  # a Ctrl-C, also one trio wrapped in an exception group
            raise SystemExit(EXIT_INTERRUPTED) from None
        if not isinstance(error, Exception):  # SystemExit: as it is
            raise
        if os.environ.get("MOSKA_DEBUG") or {"-v", "--verbose"} & set(sys.argv[1:]):
            raise
        text = str(error).splitlines()[0] if str(error) else ""
        print(
            f"error: {type(error).__name__}{': ' + text if text else ''}"
            " (run it again with -v, or MOSKA_DEBUG=1, for the details)",
            file=sys.stderr,
        )
        raise SystemExit(1) from None
