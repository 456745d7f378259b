"""The conventions people expect of a command line: ``--version``, ``-h``,
shell completion, the config file, global ``-v``/``-q``, exit codes, ``--json``, the
package's metadata and readable ``--help``.

End-to-end cases run the real program (``python -m moska_p2p``) with HOME and the XDG
folders in the test's own folder; the rest call ``main()`` in this process (the same code,
faster). Nothing here names another command's options: the help checks walk whatever
commands and options exist.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import signal
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from importlib.metadata import version
from pathlib import Path
from typing import NoReturn

import pytest

from moska_p2p.cli import HELP_NAMES, build_command, main
from moska_p2p.cli.common import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, EXIT_USAGE
from moska_p2p.engine import IMPLEMENTATION

ROOT = Path(__file__).resolve().parents[2]
LOOPBACK = "127.0.0.1"
HOST = ["host", "--players", "2", "--bind", LOOPBACK, "--no-announce", "-q"]
JOIN_LINE = re.compile(r"join with: moska join 127\.0\.0\.1:(\d+)")


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ, HOME=str(home), PYTHONUNBUFFERED="1", NO_COLOR="1", COLUMNS="80")
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_DATA_HOME"] = str(home / ".local" / "share")
    env.pop("MOSKA_CONFIG", None)
    env.pop("MOSKA_DEBUG", None)
    env.pop("MOSKA_P2P_ACCEL", None)
    env.update(extra)
    return env


def _moska(
    *args: str, home: Path, cwd: Path | None = None, timeout: float = 60, **extra: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", *args],
        cwd=cwd or home,
        env=_env(home, **extra),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


class Ran:
    """What ``main()`` did in this process: the exit code and both streams."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __repr__(self) -> str:
        return f"rc {self.code}\nstdout:\n{self.out}\nstderr:\n{self.err}"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh HOME for subprocesses and for ``main()`` here (no config file yet)."""
    folder = tmp_path / "home"
    (folder / ".config").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder / ".config"))
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("NO_COLOR", "1")  # main() may set it from a config: put back after
    for name in (
        "MOSKA_CONFIG",
        "MOSKA_DEBUG",
        "MOSKA_P2P_ACCEL",
        "_MOSKA_COMPLETE",
        "COMP_WORDS",
        "COMP_CWORD",
    ):
        monkeypatch.delenv(name, raising=False)
    yield folder


def _main(monkeypatch: pytest.MonkeyPatch, *args: str) -> Ran:
    monkeypatch.setattr(sys, "argv", ["moska", *args])
    # click names the program "python -m pytest.moska" under ``python -m pytest`` (from the
    # package of __main__): the program is "moska" however the tests are started.
    monkeypatch.setattr(sys.modules["__main__"], "__package__", None, raising=False)
    out, err = io.StringIO(), io.StringIO()
    code: int = EXIT_OK
    with redirect_stdout(out), redirect_stderr(err):
        try:
            main()
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else EXIT_FAILED
    return Ran(code, out.getvalue(), err.getvalue())


def _config(home: Path, text: str) -> Path:
    path = home / ".config" / "moska-p2p" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


class Game:
    """One ``simulate --json FILE --transcripts out`` run, shared by the tests that read it
    (a game's proofs cost a second or more: made once)."""

    def __init__(self, folder: Path, done: subprocess.CompletedProcess[str]) -> None:
        self.folder, self.done = folder, done
        self.data = json.loads((folder / "r.json").read_text())


SIMULATE = ["simulate", "--players", "2", "--seed", "4"]


@pytest.fixture(scope="module")
def game(tmp_path_factory: pytest.TempPathFactory) -> Game:
    folder = tmp_path_factory.mktemp("game")
    done = _moska(*SIMULATE, "--json", "r.json", "--transcripts", "out", home=folder)
    assert done.returncode == 0, done.stderr
    return Game(folder, done)


# ------------------------------------------------------------------ --version, -h, help


def test_version_prints_the_installed_package_version(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = _moska("--version", home=home)
    assert done.returncode == 0, done.stderr
    first, arithmetic, engine = done.stdout.splitlines()
    assert first == f"moska-p2p {version('moska-p2p')}"
    assert arithmetic.startswith("proof arithmetic: libsodium (the reference path;")
    assert engine == f"rules engine: {IMPLEMENTATION}"  # the one this process plays with
    assert done.stderr == ""
    short = _main(monkeypatch, "-V")
    assert (short.code, short.out) == (0, done.stdout)


def test_an_accelerator_that_cannot_be_had_is_said_once_and_the_command_still_runs(
    home: Path,
) -> None:
    """MOSKA_P2P_ACCEL naming something unknown: the command runs on libsodium (same bytes,
    same verdicts) and says so on stderr, rather than leaving a slow deal unexplained."""
    done = _moska("presets", home=home, MOSKA_P2P_ACCEL="fast")
    assert done.returncode == 0, done.stderr
    assert "moska" in done.stdout
    assert done.stderr.count("warning:") == 1
    assert "MOSKA_P2P_ACCEL=fast names no accelerator (the one there is: decaf)" in done.stderr
    quiet = _moska("presets", home=home)
    assert quiet.stderr == ""


LEAKS = re.compile(r"<(int|float|str|bool|path|list|text|tuple)\b|range>|<=x|x>=|x<=|\{\w+\}")
"""typer's type names: ``<int range>``, ``<list[str]>``, ``[2<=x<=6]``, ``{files}``."""


def test_every_help_is_readable_and_fits_80_columns(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    names = ["", *build_command().commands]
    assert len(names) > 10
    for name in names:
        done = _main(monkeypatch, *([name] if name else []), "--help")
        assert done.code == 0 and "Usage:" in done.out, (name, done)
        leaks = [line for line in done.out.splitlines() if LEAKS.search(line)]
        assert not leaks, f"moska {name} --help shows types:\n" + "\n".join(leaks)
        wide = [line for line in done.out.splitlines() if len(line.rstrip()) > 80]
        assert not wide, f"moska {name} --help is wider than 80 columns:\n" + "\n".join(wide)
        if name == "":
            for flag in ("--version", "--verbose", "--quiet", "--install-completion"):
                assert flag in done.out, done.out


def test_h_is_help_everywhere(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command's help option answers to -h (checked on the tree, for all), and -h
    prints what --help prints (run for the top level and one command)."""
    from typer import _click

    root = build_command()
    for command in (root, *root.commands.values()):
        context = _click.Context(command, info_name=command.name, help_option_names=HELP_NAMES)
        shown = command.get_help_option(context)
        assert shown is not None and set(shown.opts) == {"-h", "--help"}, command.name
    for args in ([], ["simulate"]):
        short, long = _main(monkeypatch, *args, "-h"), _main(monkeypatch, *args, "--help")
        assert short.code == long.code == 0 and short.out == long.out and "Usage:" in short.out


def test_metavars_name_what_an_option_takes(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Checked on the options typer builds, whatever their command: an int option shows N, a
    float one in seconds SECONDS, a flag nothing, a range in words."""
    from typer.core import TyperOption

    root = build_command()
    seen: set[str] = set()
    for command in root.commands.values():
        for param in command.params:
            if not isinstance(param, TyperOption) or param.hidden:
                continue
            annotation = param.type_descriptor.annotation
            if param.is_flag:
                assert param.metavar == "", (command.name, param.name)
            elif annotation is int:
                assert param.metavar == "N", (command.name, param.name)
            elif annotation is float and "second" in (param.help or "").lower():
                assert param.metavar == "SECONDS", (command.name, param.name)
            assert param.metavar is not None and "<" not in param.metavar
            seen.add(param.metavar)
    assert {"", "N", "SECONDS", "FILE", "FOLDER", "NAME=VALUE"} <= seen, seen
    play = _main(monkeypatch, "play", "--help").out
    assert re.search(r"--players N .*\s+4; 2 to 6\]", play), play  # the range in words


# ------------------------------------------------------------------ shell completion


def _complete(monkeypatch: pytest.MonkeyPatch, line: str) -> list[str]:
    """What bash completion offers for ``line`` (the last word being completed)."""
    words = line.split(" ")
    monkeypatch.setenv("_MOSKA_COMPLETE", "complete_bash")
    monkeypatch.setenv("COMP_WORDS", line)
    monkeypatch.setenv("COMP_CWORD", str(len(words) - 1))
    ran = _main(monkeypatch)
    monkeypatch.delenv("_MOSKA_COMPLETE")
    assert ran.code == 0, ran
    return ran.out.split()


def test_completion_offers_commands_options_presets_and_bots(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _complete(monkeypatch, "moska si") == ["simulate"]
    assert "--players" in _complete(monkeypatch, "moska simulate --pl")
    assert _complete(monkeypatch, "moska play --preset du") == [
        "durak", "durak-52", "durak-teams"
    ]  # fmt: skip
    assert _complete(monkeypatch, "moska rules mu") == ["mustamaija"]
    assert _complete(monkeypatch, "moska simulate --bots gr") == ["greedy"]
    assert _complete(monkeypatch, "moska simulate --bots greedy,is") == ["greedy,ismcts"]
    assert "random" in _complete(monkeypatch, "moska host --bot ")


def test_show_completion_prints_a_script(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = _main(monkeypatch, "--show-completion", "bash")
    assert done.code == 0, done
    assert "complete " in done.out and "_MOSKA_COMPLETE=complete_bash" in done.out, done


# ------------------------------------------------------------------ the config file


def test_config_sets_defaults_the_command_line_wins_and_moska_config_shows_them(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _config(
        home,
        'name = "alice"\npace = 0.1\ncolor = false\n\n[simulate]\nplayers = 3\nbots = "greedy"\n',
    )
    shown = _main(monkeypatch, "config")
    assert shown.code == 0, shown
    lines = shown.out.splitlines()
    assert lines[0] == f"config file: {path}", lines
    assert '  play: name = "alice", pace = 0.1, no_color = true' in lines, lines
    assert '  simulate: players = 3, bots = "greedy"' in lines, lines
    assert any(line.startswith("  host: ") and '"alice"' in line for line in lines), lines
    # The real program: --players typed wins over the file's 3, the file's bots apply.
    done = _moska("simulate", "--seed", "3", "--players", "2", home=home)
    assert done.returncode == 0, done.stderr
    assert "moska, 2 peers" in done.stdout and done.stdout.count(": greedy (") == 2, done.stdout


def test_moska_config_env_names_another_file(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    other = tmp_path / "elsewhere.toml"
    other.write_text('name = "bob"\n[simulate]\nplayers = 3\n')
    _config(home, "[simulate]\nplayers = 5\n")
    monkeypatch.setenv("MOSKA_CONFIG", str(other))
    shown = _main(monkeypatch, "config")
    assert shown.out.splitlines()[:2] == [
        f"config file: {other} (from MOSKA_CONFIG)",
        '  play: name = "bob"',
    ], shown
    assert "  simulate: players = 3" in shown.out.splitlines(), shown
    helped = _main(monkeypatch, "simulate", "--help")  # the help shows the defaults in effect
    assert re.search(r"--players N +\[default: 3; 2 to 6\]", helped.out), helped.out
    assert "[default: bob]" in _main(monkeypatch, "play", "--help").out


def test_no_config_file_means_built_in_defaults(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shown = _main(monkeypatch, "config")
    assert shown.code == 0, shown
    assert shown.out.splitlines() == [
        f"config file: {home / '.config' / 'moska-p2p' / 'config.toml'}",
        "  not there: every option has its built-in default",
    ]


BAD_CONFIGS = [
    ('name = "alice"\npace = \n', 2, "not valid TOML"),
    ('name = "alice\n', 1, "not valid TOML"),
    ('\n\nnmae = "alice"\n', 3, "no command has an option --nmae"),
    ("[play]\nplayers = 9\n", 2, "players"),
    ('[play]\n\npace = "fast"\n', 3, "pace"),
    ("[simulate]\nname = 'x'\n", 2, "moska simulate has no option --name"),
    ("[plya]\nplayers = 3\n", 1, "no command 'plya'"),
    ("color = 'no'\n", 1, "color is true or false"),
]


@pytest.mark.parametrize(("text", "line", "says"), BAD_CONFIGS, ids=[c[2] for c in BAD_CONFIGS])
def test_a_bad_config_is_one_line_naming_the_file_and_line(
    home: Path, monkeypatch: pytest.MonkeyPatch, text: str, line: int, says: str
) -> None:
    path = _config(home, text)
    ran = _main(monkeypatch, "presets")
    assert ran.code == EXIT_USAGE, ran
    assert ran.out == "" and len(ran.err.splitlines()) == 1, ran
    assert ran.err.startswith(f"error: {path}: line {line}: "), ran
    assert says in ran.err, ran


def test_a_missing_file_named_by_moska_config_is_an_error(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MOSKA_CONFIG", str(home / "nope.toml"))
    ran = _main(monkeypatch, "presets")
    assert ran.code == EXIT_USAGE and ran.err.startswith("error: "), ran
    assert "nope.toml" in ran.err and "MOSKA_CONFIG" in ran.err, ran


def test_a_bad_config_through_the_real_program(home: Path) -> None:
    path = _config(home, "players = 7\n")
    done = _moska("presets", home=home)
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"error: {path}: line 1: players: at most 6"
    ], done.stderr


# ------------------------------------------------------------------ global -v and -q


def test_global_quiet_and_verbose_reach_the_command(
    home: Path, game: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    quiet = _main(monkeypatch, "-q", *SIMULATE)
    assert quiet.code == 0, quiet
    loud = game.done.stdout.splitlines()
    assert len(loud) > 3 and quiet.out.splitlines() == loud[-1:], quiet
    monkeypatch.setenv("MOSKA_DISCOVERY", f"239.255.77.54:{random.randrange(40000, 60000)}")
    for args in (["-v", "tables"], ["tables", "-v"]):  # global, and the command's own
        verbose = _main(monkeypatch, *args, "--wait", "0.2")
        assert verbose.code == 0, verbose
        assert verbose.out.startswith("0 datagrams heard"), verbose
    assert "datagrams" not in _main(monkeypatch, "tables", "--wait", "0.2").out


def test_global_verbose_shows_the_traceback(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import moska_p2p.engine

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("boom")

    monkeypatch.setattr(moska_p2p.engine, "make_rules", broken)
    ran = _main(monkeypatch, "presets")
    assert ran.code == 1 and ran.err.startswith("error: RuntimeError: boom"), ran
    monkeypatch.setattr(sys, "argv", ["moska", "-v", "presets"])
    with pytest.raises(RuntimeError, match="boom"), redirect_stdout(io.StringIO()):
        main()


# ------------------------------------------------------------------ exit codes


def test_the_network_layer_uses_the_same_exit_codes() -> None:
    from moska_p2p.net import node

    assert (node.EXIT_OK, node.EXIT_FAILED, node.EXIT_INTERRUPTED) == (
        EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED
    )  # fmt: skip


@pytest.mark.parametrize(
    "args",
    [["simulate", "--players", "9"], ["nosuch"], ["simulate", "--nosuch"], []],
    ids=["out-of-range", "no-command", "no-option", "nothing"],
)
def test_usage_mistakes_exit_2(
    home: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    ran = _main(monkeypatch, *args)
    assert ran.code == EXIT_USAGE, ran
    assert "Traceback" not in ran.out + ran.err


def test_a_game_stopped_by_a_verdict_exits_1_and_its_json_says_why(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = _main(monkeypatch, "simulate", "--players", "2", "--bots", "random,exec:false",
                 "--json", "-")  # fmt: skip
    assert done.code == EXIT_FAILED, done
    data = json.loads(done.out)
    assert "left the table" in data["verdict"] and data["losers"] == [1], data
    assert done.err.startswith("stopped: "), done


def test_an_invalid_transcript_exits_1(
    home: Path, game: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = sorted((game.folder / "out").glob("*.moska"))[0]
    data = bytearray(good.read_bytes())
    data[len(data) // 2] ^= 0x01
    (home / "bad.moska").write_bytes(bytes(data))
    bad = _main(monkeypatch, "verify", str(home / "bad.moska"))
    assert bad.code == EXIT_FAILED and bad.err.startswith("INVALID: "), bad


def _start(home: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "moska_p2p", *args], cwd=home,
                            env=_env(home), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True)  # fmt: skip


def _port(proc: subprocess.Popen[str], seen: list[str]) -> int:
    assert proc.stdout is not None
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        seen.append(line)
        found = JOIN_LINE.search(line)
        if found:
            return int(found.group(1))
    raise AssertionError("no port from the host:\n" + "".join(seen))


def _finish(proc: subprocess.Popen[str], seen: list[str], timeout: float = 60) -> int:
    try:
        rest, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        rest, _ = proc.communicate(timeout=5)
    seen.append(rest or "")
    return proc.returncode


def test_host_and_join_exit_1_when_a_verdict_stops_the_game(home: Path) -> None:
    host = _start(home, *HOST, "--bot", "random", "--wait", "30")
    seen: list[str] = []
    try:
        port = _port(host, seen)
        joiner = _moska("join", f"{LOOPBACK}:{port}", "--bind", LOOPBACK, "--bot", "exec:false",
                        "-q", home=home)  # fmt: skip
        code = _finish(host, seen)
    finally:
        if host.poll() is None:
            host.kill()
            host.communicate(timeout=5)
    assert joiner.returncode == EXIT_FAILED, joiner
    assert "you left the table" in joiner.stdout, joiner
    assert code == EXIT_FAILED and "game stopped: left" in "".join(seen), "".join(seen)


def test_a_ctrl_c_trio_wrapped_in_a_group_is_still_an_interrupt() -> None:
    from moska_p2p.cli.common import is_interrupt

    assert is_interrupt(KeyboardInterrupt())
    inner = BaseExceptionGroup("nursery", [KeyboardInterrupt()])
    assert is_interrupt(BaseExceptionGroup("outer", [inner, KeyboardInterrupt()]))
    assert not is_interrupt(BaseExceptionGroup("mixed", [KeyboardInterrupt(), OSError()]))
    assert not is_interrupt(ExceptionGroup("errors", [OSError()])) and not is_interrupt(OSError())


def test_an_error_group_is_still_one_line(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import moska_p2p.engine

    def broken(*args: object, **kwargs: object) -> object:
        raise ExceptionGroup("tasks failed", [OSError("disk")])

    monkeypatch.setattr(moska_p2p.engine, "make_rules", broken)
    ran = _main(monkeypatch, "presets")
    assert ran.code == 1 and ran.err.startswith("error: ExceptionGroup: tasks failed"), ran


def test_ctrl_c_while_the_table_fills_exits_130(home: Path) -> None:
    """At once after the host prints its address: a Ctrl-C that may hit a trio task before
    the node listens for signals (trio then wraps it in an exception group)."""
    host = _start(home, *HOST, "--bot", "random", "--wait", "60")
    seen: list[str] = []
    try:
        _port(host, seen)
        host.send_signal(signal.SIGINT)
        code = _finish(host, seen, timeout=30)
    finally:
        if host.poll() is None:
            host.kill()
            host.communicate(timeout=5)
    assert code == EXIT_INTERRUPTED, "".join(seen)
    assert "Traceback" not in "".join(seen)


# ------------------------------------------------------------------ --json


def test_simulate_json_to_a_file_and_to_stdout(
    home: Path, game: Game, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "result: " in game.done.stdout  # the report in words as well as the file
    data = game.data
    alone = _main(monkeypatch, *SIMULATE, "--json", "-")
    assert alone.code == 0, alone
    assert json.loads(alone.out) == {**data, "transcripts": []}  # stdout holds only JSON
    assert data["players"] == 2 and data["verdict"] is None and data["seed"] == 4
    assert [s["seat"] for s in data["seats"]] == [0, 1]
    assert len(data["losers"]) <= 1 and data["moves"] > 0 and len(data["final_state_hash"]) == 64
    assert sorted(Path(p).name for p in data["transcripts"]) == sorted(
        p.name for p in (game.folder / "out").glob("*.moska")
    )


def test_arena_json_to_stdout_holds_the_json_alone_and_equals_the_file(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = ["arena", "--bots", "random,greedy", "--games", "6", "--seed", "3", "-q"]
    alone = _main(monkeypatch, *run, "--json", "-")
    assert alone.code == 0, alone
    data = json.loads(alone.out)  # no table around it
    assert data["games"] == 6 and data["seed"] == 3
    to_file = _main(monkeypatch, *run, "--json", str(home / "a.json"))
    assert to_file.code == 0 and "random" in to_file.out  # the table, and the file beside it
    assert json.loads((home / "a.json").read_text()) == data


def test_a_json_file_that_cannot_be_written_is_refused_before_the_work(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import moska_p2p.arena.arena
    import moska_p2p.net.discovery
    import moska_p2p.table.simulate

    def work(*args: object, **kwargs: object) -> NoReturn:
        raise AssertionError("the work began before the --json file was checked")

    # The work of each command, which a refusal must come before (an event, not a time).
    for module, name in (
        (moska_p2p.table.simulate, "run_game"),
        (moska_p2p.net.discovery, "find_tables"),
        (moska_p2p.arena.arena, "run_arena"),
    ):
        monkeypatch.setattr(module, name, work)
    for command in (
        ["simulate", "--players", "2"],
        ["tables", "--wait", "0.1"],
        ["arena", "--bots", "random,random", "--games", "1"],
    ):
        done = _main(monkeypatch, *command, "--json", "/nonexistent/dir/x.json")
        assert done.code == EXIT_USAGE, done
        assert done.out == "" and done.err.startswith("error: --json /nonexistent"), done


def test_tables_json_lists_a_hosted_table(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A host announcing on loopback on a discovery port of this test's own."""
    lan = f"239.255.77.54:{random.randrange(40000, 60000)}"
    monkeypatch.setenv("MOSKA_DISCOVERY", lan)
    monkeypatch.setenv("MOSKA_DISCOVERY_IF", LOOPBACK)
    empty = _main(monkeypatch, "tables", "--wait", "0.3", "--json", "-")
    assert empty.code == 0, empty
    assert json.loads(empty.out)["tables"] == []  # and nothing but the JSON on stdout
    args = ["host", "--players", "3", "--bind", LOOPBACK, "-q", "--bot", "random", "--wait", "30"]
    env = _env(home, MOSKA_DISCOVERY=lan, MOSKA_DISCOVERY_IF=LOOPBACK)
    host = subprocess.Popen([sys.executable, "-m", "moska_p2p", *args], cwd=home, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL, text=True)  # fmt: skip
    seen: list[str] = []
    try:
        port = _port(host, seen)
        listed = _main(monkeypatch, "tables", "--wait", "2", "--json", str(home / "t.json"))
    finally:
        host.kill()
        host.communicate(timeout=5)  # closes its stdout too
    assert listed.code == 0, listed
    assert "1 open table on the LAN:" in listed.out
    data = json.loads((home / "t.json").read_text())
    assert data["received"] >= 1 and data["wait"] == 2
    (table,) = data["tables"]
    assert (table["port"], table["preset"], table["players"], table["seats"]) == (
        port, "moska", 3, 1
    )  # fmt: skip
    assert table["joinable"] is True and len(table["key"]) == 64
    assert re.fullmatch(r"[0-9A-F]{4}(-[0-9A-F]{4}){7}", table["fingerprint"])


def test_the_readme_documents_every_json_field(game: Game) -> None:
    readme = (ROOT / "docs" / "PLAYING.md").read_text()  # the README's guide to playing
    section = readme[readme.index("### JSON output") :]
    section = section.split("\n## ")[0]
    data = game.data
    fields = {*data, *data["seats"][0]}
    assert not [f for f in fields if f'`{f}`' not in section and f'"{f}"' not in section]
    tables = ("wait", "received", "ignored", "address", "port", "fingerprint", "joinable")
    assert all(f'"{f}"' in section or f"`{f}`" in section for f in tables)
    for code in ("0", "1", "2", "130"):
        assert f"\n| {code} |" in readme[readme.index("### Exit codes") :]


# ------------------------------------------------------------------ the package's metadata


def test_pyproject_has_license_authors_urls_and_pinned_dependencies() -> None:
    from packaging.requirements import Requirement
    from packaging.version import Version

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT" and (ROOT / "LICENSE").read_text().startswith("MIT")
    assert project["authors"] == [{"name": "moska-p2p developers"}]
    assert set(project["urls"]) >= {"Homepage", "Repository", "Issues"}
    assert project["keywords"]
    for text in project["dependencies"]:
        requirement = Requirement(text)
        floors = [s for s in requirement.specifier if s.operator == ">="]
        ceilings = [s for s in requirement.specifier if s.operator == "<"]
        assert len(floors) == len(ceilings) == 1, text
        installed = Version(version(requirement.name))
        assert installed in requirement.specifier, (text, installed)
        floor, ceiling = Version(floors[0].version), Version(ceilings[0].version)
        step = (floor.major + 1, 0) if floor.major else (0, floor.minor + 1)
        assert (ceiling.major, ceiling.minor) == step, f"{text}: not the next major release"
