"""Everyday mistakes: each gets one ``error:`` line on stderr and a
non-zero exit (2: what was typed is refused before any work starts; 1: the attempt failed),
no traceback, and no file left behind. Then two seats from one account (item 4).

Every case runs the real program (``python -m moska_p2p``) with a timeout, with HOME (and
the XDG folders) in the test's own folder, on 127.0.0.1 only.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from moska_p2p.crypto.identity import Identity

LOOPBACK = "127.0.0.1"
JOIN_LINE = re.compile(r"join with: moska join 127\.0\.0\.1:(\d+)")
HOST = ["host", "--players", "2", "--bind", LOOPBACK, "--no-announce", "--wait", "5", "-q"]


def _env(home: Path) -> dict[str, str]:
    env = dict(os.environ, HOME=str(home), PYTHONUNBUFFERED="1", NO_COLOR="1")
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["XDG_DATA_HOME"] = str(home / ".local" / "share")
    env["COLUMNS"] = "200"
    return env


def _run(
    args: list[str], cwd: Path, home: Path, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", *args],
        cwd=cwd,
        env=_env(home),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*")}


@dataclass
class Place:
    """The test's folder: ``work`` (the command's working directory) and ``home``."""

    work: Path
    home: Path
    keep: list[socket.socket]


def _port_in_use(place: Place) -> str:
    sock = socket.socket()
    sock.bind((LOOPBACK, 0))
    sock.listen()
    place.keep.append(sock)
    return str(sock.getsockname()[1])


def _closed_port(place: Place) -> str:
    sock = socket.socket()  # bound, not listening: a dial there is refused at once
    sock.bind((LOOPBACK, 0))
    place.keep.append(sock)
    return str(sock.getsockname()[1])


def _transcript(place: Place) -> str:
    """A real peer transcript, made (before the snapshot) by ``simulate``."""
    out = place.work / "out"
    result = _run(["simulate", "--players", "2", "--seed", "1", "--transcripts", "out"],
                  place.work, place.home)  # fmt: skip
    assert result.returncode == 0, result.stderr
    return str(sorted(out.glob("*.moska"))[0].relative_to(place.work))


def _write(name: str, data: bytes) -> Callable[[Place], str]:
    def make(place: Place) -> str:
        (place.work / name).write_bytes(data)
        return name

    return make


def _folder(name: str) -> Callable[[Place], str]:
    def make(place: Place) -> str:
        (place.work / name).mkdir()
        return name

    return make


@dataclass
class Case:
    id: str
    args: list[str]  # "{x}" is replaced by what ``setup`` returns
    code: int
    says: str  # a piece of the error line
    setup: Callable[[Place], str] | None = None
    seconds: float = 30.0  # it must fail within this


EXEC = "exec:/nonexistent"
CASES = [
    Case("host-port-in-use", [*HOST, "--bot", "random", "--port", "{x}"], 1, "the port is in use",
         _port_in_use),
    Case("relay-port-in-use", ["relay", "--bind", LOOPBACK, "--port", "{x}"], 1,
         "the port is in use", _port_in_use),
    Case("host-bind-absent", [*HOST[:3], "--bind", "192.0.2.1", "--no-announce", "--bot",
                              "random"], 1, "this machine has no address 192.0.2.1"),
    Case("join-bind-absent", ["join", f"{LOOPBACK}:9", "--bind", "192.0.2.1", "--bot", "random"],
         1, "this machine has no address 192.0.2.1"),
    Case("join-closed-port", ["join", f"{LOOPBACK}:{{x}}", "--bind", LOOPBACK, "--bot", "random"],
         1, "connection refused", _closed_port, seconds=8),
    Case("play-exec", ["play", "--bots", EXEC], 2, "no program /nonexistent"),
    Case("arena-exec", ["arena", "--bots", f"{EXEC},random", "--games", "1", "-q"], 2,
         "no program /nonexistent"),
    Case("simulate-exec", ["simulate", "--players", "2", "--bots", f"random,{EXEC}"], 2,
         "no program /nonexistent"),
    Case("host-exec", [*HOST, "--bot", EXEC], 2, "no program /nonexistent"),
    Case("join-exec", ["join", f"{LOOPBACK}:9", "--bind", LOOPBACK, "--bot", EXEC], 2,
         "no program /nonexistent"),
    Case("arena-save-file", ["arena", "--bots", "random,random", "--games", "1", "-q", "--save",
                             "{x}"], 2, "that is a file", _write("afile", b"x")),
    Case("arena-json-no-folder", ["arena", "--bots", "random,random", "--games", "100000", "-q",
                                  "--json", "/nonexistent/dir/x.json"], 2, "does not exist",
         seconds=10),
    Case("arena-json-folder", ["arena", "--bots", "random,random", "--games", "100000", "-q",
                               "--json", "{x}"], 2, "that is a folder", _folder("d"),
         seconds=10),
    Case("simulate-transcripts-file", ["simulate", "--players", "2", "--transcripts",
                                       "/etc/passwd"], 2, "that is a file"),
    Case("simulate-transcripts-under-file", ["simulate", "--players", "2", "--transcripts",
                                             "{x}/sub"], 2, "is a file", _write("afile", b"x")),
    Case("host-transcript-folder", [*HOST, "--bot", "random", "--transcript", "{x}"], 2,
         "that is a folder", _folder("d"), seconds=10),
    Case("verify-empty-folder", ["verify", "{x}"], 2, "no transcripts", _folder("out")),
    Case("verify-arena-record", ["verify", "{x}"], 2, "a saved arena game, not a peer transcript",
         _write("game.json", b'{"preset": "moska"}\n')),
    Case("replay-check-transcript", ["replay-check", "{x}"], 2,
         "a peer transcript, not a saved arena game", _transcript),
    Case("replay-check-binary", ["replay-check", "{x}"], 2, "not a saved arena game",
         _write("x.moska", b"\x84\x00\x01")),
]  # fmt: skip


@pytest.fixture
def place(tmp_path: Path) -> Iterator[Place]:
    home = tmp_path / "home"
    Identity.generate().save(home / ".config" / "moska-p2p" / "identity.pem")
    work = tmp_path / "work"
    work.mkdir()
    made = Place(work, home, [])
    try:
        yield made
    finally:
        for sock in made.keep:
            sock.close()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_an_everyday_mistake_is_one_line_and_an_exit_code(place: Place, case: Case) -> None:
    x = case.setup(place) if case.setup else ""
    before = _files(place.work.parent)
    started = time.monotonic()
    result = _run([a.replace("{x}", x) for a in case.args], place.work, place.home,
                  timeout=case.seconds + 30)  # fmt: skip
    elapsed = time.monotonic() - started
    shown = f"rc {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    assert result.returncode == case.code, shown
    assert "Traceback" not in result.stdout + result.stderr, shown
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, shown
    assert case.says in errors[0], shown
    assert not [line for line in result.stdout.splitlines() if line.startswith("error:")], shown
    assert elapsed < case.seconds, f"{elapsed:.1f} s\n{shown}"
    assert _files(place.work.parent) == before, shown


def test_verify_of_a_folder_checks_every_transcript_in_it(place: Place) -> None:
    _transcript(place)
    result = _run(["verify", "out"], place.work, place.home)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 3 and all(line.startswith("valid: seat") for line in lines[:2]), lines
    assert lines[2].endswith(": 2 players' records agree"), lines  # one game, two records


# ------------------------------------------------------------------ one account, two seats


def _start(args: list[str], place: Place, name: str) -> subprocess.Popen[bytes]:
    with (
        open(place.work / f"{name}.out", "wb") as out,
        open(place.work / f"{name}.err", "wb") as err,
    ):
        return subprocess.Popen([sys.executable, "-m", "moska_p2p", *args], cwd=place.work,
                                env=_env(place.home), stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL)  # fmt: skip


def _text(place: Place, name: str) -> str:
    return (place.work / f"{name}.out").read_text() + (place.work / f"{name}.err").read_text()


def _host_port(host: subprocess.Popen[bytes], place: Place) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = JOIN_LINE.search(_text(place, "host"))
        if found:
            return int(found.group(1))
        assert host.poll() is None, _text(place, "host")
        time.sleep(0.05)
    raise AssertionError(f"no port from the host:\n{_text(place, 'host')}")


def _stop(*procs: subprocess.Popen[bytes]) -> None:
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


def test_two_bot_seats_of_one_account_play_a_game(place: Place) -> None:
    """``moska host --bot greedy`` and ``moska join --bot random`` in the same account, with
    no --identity: each bot seat has a key of its own, and the game is played out."""
    host = _start([*HOST, "--bot", "greedy", "--port", "0", "--wait", "30"], place, "host")
    joiner: subprocess.Popen[bytes] | None = None
    try:
        port = _host_port(host, place)
        joiner = _start(["join", f"{LOOPBACK}:{port}", "--bind", LOOPBACK, "--bot", "random",
                         "-q"], place, "joiner")  # fmt: skip
        codes = [joiner.wait(60), host.wait(60)]
    finally:
        _stop(host, *([joiner] if joiner else []))
    assert codes == [0, 0], _text(place, "host") + _text(place, "joiner")
    assert "result:" in _text(place, "joiner")


def test_one_key_seated_twice_is_refused_at_once_with_what_to_do(place: Place) -> None:
    key = place.home / "shared.pem"
    Identity.generate().save(key)
    host = _start([*HOST, "--bot", "greedy", "--port", "0", "--identity", str(key)], place, "host")
    try:
        port = _host_port(host, place)
        started = time.monotonic()
        joiner = _start(["join", f"{LOOPBACK}:{port}", "--bind", LOOPBACK, "--bot", "random",
                         "--identity", str(key)], place, "joiner")  # fmt: skip
        code = joiner.wait(30)
        elapsed = time.monotonic() - started
    finally:
        _stop(host)
    text = _text(place, "joiner")
    assert code == 1, text
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "the host's own key" in errors[0], text
    assert "--identity FILE" in errors[0], text
    assert "joined; waiting" not in text, text
    assert "Traceback" not in text, text
    assert elapsed < 10, elapsed


def test_an_error_no_command_foresaw_is_one_line_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import moska_p2p.engine
    from moska_p2p.cli import main

    def broken(*args: object, **kwargs: object) -> object:
        raise RuntimeError("boom\nmore")

    monkeypatch.setattr(moska_p2p.engine, "make_rules", broken)
    monkeypatch.setattr(sys, "argv", ["moska", "presets"])
    with pytest.raises(SystemExit) as exit_:
        main()
    assert exit_.value.code == 1
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "error: RuntimeError: boom (run it again with -v, or MOSKA_DEBUG=1, for the details)"
    ], err
    monkeypatch.setenv("MOSKA_DEBUG", "1")
    with pytest.raises(RuntimeError):
        main()


def test_the_same_join_run_twice_tells_the_first_why_it_lost_its_seat(place: Place) -> None:
    # The host's lobby must outlast three interpreter start-ups (5-6 s each on a loaded
    # 2-core machine): with HOST's --wait 5 it gave up first and the joiner read a bare close.
    key = place.home / "bob.pem"
    Identity.generate().save(key)
    host = _start([*HOST[:2], "3", *HOST[3:], "--bot", "greedy", "--port", "0", "--wait", "120"],
                  place, "host")  # fmt: skip
    procs = [host]
    try:
        port = _host_port(host, place)
        join = ["join", f"{LOOPBACK}:{port}", "--bind", LOOPBACK, "--bot", "random",
                "--identity", str(key), "-q"]  # fmt: skip
        first = _start([*join, "--transcript", "a.moska"], place, "first")
        procs.append(first)
        deadline = time.monotonic() + 60
        while "joined; waiting" not in _text(place, "first"):
            assert first.poll() is None and time.monotonic() < deadline, _text(place, "first")
            time.sleep(0.05)
        procs.append(_start([*join, "--transcript", "b.moska"], place, "second"))
        code = first.wait(60)
    finally:
        _stop(*procs)
    text = _text(place, "first")
    assert code == 1, text
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "replaced by a newer join with the same key" in errors[0], text
    assert "Traceback" not in text, text
