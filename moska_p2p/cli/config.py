"""The config file (``config.toml`` in the platform's config directory, or ``MOSKA_CONFIG``)
and ``moska config``, which shows it.

The file only changes defaults: :func:`default_map` turns it into click's ``default_map``,
which ``main()`` hands to the whole command tree, so no command reads the file itself and an
option typed on the command line always wins. A top-level key is the default of that option
in every command that has it (``name = "alice"``: ``play``, ``host``, ``join``); a
``[command]`` table sets one command's defaults and wins over the top level::

    name = "alice"
    pace = 0.2
    color = false            # as --no-color (and NO_COLOR=1) everywhere

    [play]
    bots = "ismcts:time=0.3"
    players = 3

A key is an option's long name without its dashes (``auto-pass`` or ``auto_pass``). Every
key and value is checked when the program starts, against the options the commands really
have, so a typo is one ``error:`` line naming the file and the line (exit 2) instead of a
default that silently does nothing. The file is read only if it exists: the cost of a
missing file is one ``stat``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer
from typer import _click
from typer._click.exceptions import BadParameter
from typer.core import TyperGroup, TyperOption

from ..errors import ConfigError as ConfigError  # a config file that cannot be used

CONFIG_ENV = "MOSKA_CONFIG"
"""The environment variable naming the config file to read instead of the default one."""

LANG_KEY = "lang"
"""The language (``en`` or ``fi``): the global ``--lang``'s default."""
COLOR_KEYS = ("color", "colour")
"""Keys for the colours: ``color = false`` is ``--no-color`` (NO_COLOR=1) everywhere."""


@dataclass
class Config:
    """What was read: the file, whether it exists, its top-level keys and its tables."""

    path: Path
    from_env: bool = False
    exists: bool = False
    top: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines: dict[tuple[str, str], int] = field(default_factory=dict)
    """The line of each key (``("", key)`` at the top, ``(table, key)`` in a table)."""

    @property
    def color(self) -> bool | None:
        """``False`` when the file turns the colours off, ``None`` when it does not say."""
        for key in COLOR_KEYS:
            if key in self.top:
                return bool(self.top[key])
        return None


def config_path() -> tuple[Path, bool]:
    """The config file in use and whether ``MOSKA_CONFIG`` chose it."""
    named = os.environ.get(CONFIG_ENV, "").strip()
    if named:
        return Path(named).expanduser(), True
    from platformdirs import user_config_path

    return user_config_path("moska-p2p", appauthor=False) / "config.toml", False


def load_config(path: Path | None = None) -> Config:
    """Read the config file (a missing one is an empty config; one named by
    ``MOSKA_CONFIG`` that is missing is an error, since the user asked for it)."""
    from_env = False
    if path is None:
        path, from_env = config_path()
    config = Config(path, from_env)
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        if from_env:
            raise ConfigError(f"{path}: no such file (named by {CONFIG_ENV})") from None
        return config
    except OSError as error:
        raise ConfigError(f"{path}: cannot read it: {error.strerror or error}") from None
    import tomllib

    try:
        text = raw.decode("utf-8")
        data = tomllib.loads(text)
    except UnicodeDecodeError as error:
        at = raw[: error.start].count(b"\n") + 1
        raise ConfigError(f"{path}: line {at}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        found = re.search(r"\(at line (\d+), column \d+\)", message)
        where = found.group(1) if found else str(text.count("\n") + 1)  # at end of document
        reason = re.sub(r"\s*\(at (line \d+, column \d+|end of document)\)", "", message)
        raise ConfigError(f"{path}: line {where}: not valid TOML: {reason}") from None
    config.exists = True
    table = ""
    for number, content in enumerate(text.splitlines(), 1):
        stripped = content.strip()
        header = re.match(r"\[\s*([^\]]+?)\s*\]", stripped)
        if header:
            table = header.group(1).strip("\"'")
            config.lines.setdefault((table, ""), number)
            continue
        assignment = re.match(r"[\"']?([A-Za-z0-9_-]+)[\"']?\s*=", stripped)
        if assignment:
            config.lines.setdefault((table, assignment.group(1)), number)
    for name, value in data.items():
        if isinstance(value, dict):
            config.tables[name] = dict(value)
        else:
            config.top[name] = value
    return config


def _line(config: Config, table: str, key: str) -> str:
    number = config.lines.get((table, key)) or config.lines.get((table, ""))
    return f"line {number}" if number else "?"


def _options(command: _click.Command) -> dict[str, TyperOption]:
    """A command's options a config may set, by name: visible ones only (a hidden option is
    for tests and tools, not a default people choose)."""
    found: dict[str, TyperOption] = {}
    for param in command.params:
        if not isinstance(param, TyperOption) or param.hidden or param.is_eager:
            continue
        if param.name:
            found[param.name] = param
    return found


def _key_name(key: str) -> str:
    return key.strip().replace("-", "_")


def _checked(
    config: Config, table: str, key: str, param: TyperOption, command: _click.Command
) -> Any:
    """The value as the option takes it, or :class:`ConfigError` naming the line."""
    value = (config.tables[table] if table else config.top)[key]
    if getattr(param, "multiple", False) and not isinstance(value, list):
        value = [value]
    if isinstance(value, dict | list) and not getattr(param, "multiple", False):
        raise ConfigError(f"{config.path}: {_line(config, table, key)}: {key} takes one value")
    if isinstance(value, list):
        value = [str(v) if isinstance(v, int | float | str) else v for v in value]
    context = _click.Context(command, info_name=command.name, resilient_parsing=True)
    try:
        param.process_value(context, value)
    except BadParameter as error:
        raise ConfigError(
            f"{config.path}: {_line(config, table, key)}: {key}: {error.message}"
        ) from None
    except (TypeError, ValueError) as error:
        raise ConfigError(f"{config.path}: {_line(config, table, key)}: {key}: {error}") from None
    return value


def default_map(config: Config, root: TyperGroup) -> dict[str, dict[str, Any]]:
    """click's ``default_map`` for ``root`` from ``config``: for each command, the defaults
    the file sets (a table's over the top level's). Every key must name an option of some
    command (of that command, in a table), or :class:`ConfigError` names its line."""
    commands = {name: cmd for name, cmd in root.commands.items() if not cmd.hidden}
    options = {name: _options(cmd) for name, cmd in commands.items()}
    result: dict[str, dict[str, Any]] = {name: {} for name in commands}
    for key in config.top:
        if key == LANG_KEY:  # the global --lang's default (cli/__init__.py reads it)
            _check_lang(config)
            continue
        if key in COLOR_KEYS:
            if not isinstance(config.top[key], bool):
                raise ConfigError(
                    f"{config.path}: {_line(config, '', key)}: {key} is true or false"
                )
            for name in commands:
                if "no_color" in options[name]:
                    result[name]["no_color"] = not config.top[key]
            continue
        name_ = _key_name(key)
        users = [name for name in commands if name_ in options[name]]
        if not users:
            raise ConfigError(
                f"{config.path}: {_line(config, '', key)}: no command has an option --"
                f"{name_.replace('_', '-')}"
            )
        for name in users:
            result[name][name_] = _checked(config, "", key, options[name][name_], commands[name])
    for table, values in config.tables.items():
        if table not in commands:
            raise ConfigError(
                f"{config.path}: {_line(config, table, '')}: [{table}]: no command {table!r}"
                f" (one of: {', '.join(commands)})"
            )
        for key in values:
            if key in COLOR_KEYS and "no_color" in options[table]:
                if not isinstance(values[key], bool):
                    raise ConfigError(
                        f"{config.path}: {_line(config, table, key)}: {key} is true or false"
                    )
                result[table]["no_color"] = not values[key]
                continue
            name_ = _key_name(key)
            if name_ not in options[table]:
                raise ConfigError(
                    f"{config.path}: {_line(config, table, key)}: moska {table} has no option"
                    f" --{name_.replace('_', '-')}"
                )
            param = options[table][name_]
            result[table][name_] = _checked(config, table, key, param, commands[table])
    return {name: values for name, values in result.items() if values}


def _check_lang(config: Config) -> None:
    from ..i18n import LANGUAGES, normalize

    value = config.top[LANG_KEY]
    try:
        if not isinstance(value, str):
            raise ValueError(f"lang is a text: {', '.join(LANGUAGES)}")
        normalize(value)
    except ValueError as error:
        raise ConfigError(f"{config.path}: {_line(config, '', LANG_KEY)}: {error}") from None


def _toml_value(value: Any) -> str:
    """A value as it would be written in the file (and is shown by ``moska config``)."""
    import json

    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def describe(config: Config, defaults: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The lines of ``moska config``: the file in use and the defaults it sets, by command."""
    origin = f" (from {CONFIG_ENV})" if config.from_env else ""
    lines = [f"config file: {config.path}{origin}"]
    if not config.exists:
        lines.append("  not there: every option has its built-in default")
        return lines
    shown = {name: values for name, values in defaults.items() if values}
    if not shown:
        lines.append("  it sets no defaults")
    for name, values in shown.items():
        pairs = ", ".join(f"{key} = {_toml_value(v)}" for key, v in values.items())
        lines.append(f"  {name}: {pairs}")
    return lines


def config(ctx: typer.Context) -> None:
    """Show the config file in use and the defaults it sets for each command."""
    root = ctx.find_root()
    loaded = root.obj if isinstance(root.obj, Config) else load_config()
    defaults = root.default_map
    if defaults is None:  # run without main() (a test's runner): read it here
        command = root.command
        defaults = default_map(loaded, command) if isinstance(command, TyperGroup) else {}
    for line in describe(loaded, defaults):
        typer.echo(line)
