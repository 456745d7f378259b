"""The command line as a new user meets it, through the real program: a mistake in what
was typed is one ``error:`` line in the project's words (not click's box with the
validator's wording), a preset's name in any case, help that is readable at 80 columns
(no option squeezed into a narrow column, no value cut with an ellipsis, no ``[plot]`` eaten
as markup)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _moska(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="80", NO_COLOR="1", HOME=str(home),
               XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"))  # fmt: skip
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", *args], cwd=ROOT, env=env, capture_output=True,
        text=True, timeout=120, check=False, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["host", "--players", "9"], "error: --players: takes 2 to 6 (moska host -h for help)"),
        (["host", "--players", "x"], "error: --players: not a whole number (moska host -h"),
        (["play", "--frobnicate"], "error: no such option: --frobnicate (moska play -h"),
        (["join", "a", "b", "c"], "error: unexpected extra argument: b c (moska join -h"),
        (["replay"], "error: FILE is missing (moska replay -h for help)"),
        (["nosuch"], "error: no such command 'nosuch' (moska -h for help)"),
    ],
    ids=["range", "type", "option", "extra", "missing", "command"],
)
def test_a_usage_mistake_is_one_error_line(tmp_path: Path, args: list[str], says: str) -> None:
    done = _moska(*args, home=tmp_path)
    assert done.returncode == 2, done
    shown = done.stderr.replace("python -m moska_p2p", "moska")
    assert shown.splitlines() == [shown.strip()] and shown.startswith(says), shown
    assert "╭" not in done.stderr and "Usage:" not in done.stderr and done.stdout == ""
    assert "Input should be" not in done.stderr


def test_a_preset_is_named_in_any_case(tmp_path: Path) -> None:
    done = _moska("simulate", "--preset", "Durak", "--players", "2", "-q", home=tmp_path)
    assert done.returncode == 0, done.stderr
    rules = _moska("rules", "DURAK", home=tmp_path)
    assert rules.returncode == 0 and "Durak" in rules.stdout


def test_a_commands_help_is_readable_at_80_columns(tmp_path: Path) -> None:
    done = _moska("host", "-h", home=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    assert "…" not in done.stdout and "turamoska-pyhaselka" in done.stdout
    preset = next(line for line in lines if line.lstrip().startswith("--preset"))
    assert preset.index("One of:") < 40, preset  # the help beside the option, not a strip


def test_the_extras_are_named_in_arenas_help(tmp_path: Path) -> None:
    done = _moska("arena", "--help", home=tmp_path)
    words = " ".join(done.stdout.split())
    assert "pip install 'moska-p2p[cluster]'" in words and "pip install 'moska-p2p[plot]'" in words


def test_an_invite_on_a_narrow_terminal_is_one_command_in_pasteable_lines() -> None:
    from moska_p2p.cli.net import invite_lines
    from moska_p2p.net.invite import Invite, parse_invite
    from moska_p2p.net.relay_proto import ROOM_SIZE

    invite = str(Invite(bytes(range(32)), b"r" * ROOM_SIZE, (("192.168.1.20", 7777),),
                        ("relay.example.org", 7117)))  # fmt: skip
    assert len(invite) > 80
    shown = invite_lines(invite, 80).splitlines()
    assert all(len(line) <= 80 for line in shown), shown
    command = " ".join(line.removesuffix("\\").strip() for line in shown[1:])  # as a shell does
    words = command.split()
    assert words[:2] == ["moska", "join"] and len(words) > 3
    assert str(parse_invite(" ".join(words[2:]))) == invite


def test_join_takes_an_invite_in_pieces_and_names_a_cut_one(tmp_path: Path) -> None:
    import socket

    from moska_p2p.net.invite import Invite
    from moska_p2p.net.relay_proto import ROOM_SIZE

    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    invite = str(Invite(bytes(range(32)), b"r" * ROOM_SIZE, (("127.0.0.1", port),)))
    pieces = [invite[:50], invite[50:90], invite[90:]]
    done = _moska("join", *pieces, "--bot", "random", "--timeout", "1", "--bind", "127.0.0.1",
                  home=tmp_path)  # fmt: skip
    assert done.returncode == 1, done  # read as one invite, then no table at that port
    assert "invite" not in done.stderr and "extra argument" not in done.stderr, done.stderr
    cut = _moska("join", pieces[0], home=tmp_path)
    assert cut.returncode == 2, cut
    assert "shorter than any invite" in cut.stderr and "line break" in cut.stderr, cut.stderr


def test_the_only_table_found_on_the_lan_is_joined_only_when_said() -> None:
    """A shared LAN's one table may be a stranger's: joined when --expect pins its host, or
    when the person answers yes on a terminal; a script (no terminal) names the table."""
    from moska_p2p.cli.net import join_the_only_table

    def answers(*said: str) -> Callable[[str], str]:
        queue = list(said)

        def ask(prompt: str) -> str:
            assert prompt == "join it? [y/N] "
            if not queue:
                raise EOFError
            return queue.pop(0)

        return ask

    assert join_the_only_table(True, False, answers())
    assert not join_the_only_table(False, False, answers("y"))
    assert join_the_only_table(False, True, answers("y"))
    assert join_the_only_table(False, True, answers(" Yes "))
    assert not join_the_only_table(False, True, answers(""))  # a habitual Enter: no
    assert not join_the_only_table(False, True, answers("n"))
    assert not join_the_only_table(False, True, answers())  # end of input


def test_the_first_key_is_made_with_a_word_saying_where(tmp_path: Path) -> None:
    import socket

    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    args = ("join", f"127.0.0.1:{port}", "--timeout", "1", "--bind", "127.0.0.1", "--plain")
    first = _moska(*args, home=tmp_path)
    key = tmp_path / "config" / "moska-p2p" / "identity.pem"
    assert key.exists() and f"made your key: {key} (" in first.stdout, first
    again = _moska(*args, home=tmp_path)
    assert "made your key" not in again.stdout, again
