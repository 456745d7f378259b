"""The command line's layout: one package, one module per group of commands, no import cycle,
and the network layer never imports it."""

from __future__ import annotations

import ast
import os
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLI = ROOT / "moska_p2p" / "cli"
NET = ROOT / "moska_p2p" / "net"

COMMANDS = [
    "play", "host", "join", "watch", "tables", "tournament",
    "replay", "verify", "export", "replay-check", "stats",
    "rules", "presets", "arena", "ratings", "simulate",
    "keygen", "trust", "relay", "config",
]  # fmt: skip
"""``moska --help``'s commands, in its order: games, records, bots and rules, setup."""


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1")
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip


def _submodules(folder: Path) -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules([str(folder)]) if m.name != "__main__")


def test_python_m_moska_p2p_lists_every_command() -> None:
    done = _python("-m", "moska_p2p", "--help")
    assert done.returncode == 0, done.stderr
    commands = done.stdout[done.stdout.index("\nPlay:\n") :]
    assert re.findall(r"^  ([a-z][a-z-]*) ", commands, flags=re.M) == COMMANDS, done.stdout
    sections = re.findall(r"^([A-Z][a-z ]+):$", commands, flags=re.M)
    assert sections == ["Play", "Records", "Bots and rules", "Setup"], done.stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_has_its_help(command: str) -> None:
    done = _python("-m", "moska_p2p", command, "--help")
    assert done.returncode == 0, done.stderr
    assert f"Usage: python -m moska_p2p {command} " in done.stdout


def test_the_command_modules_are_the_groups() -> None:
    assert _submodules(CLI) == [
        "arena", "common", "config", "known", "local", "net", "p2p", "relay", "replay",
        "results", "tournament", "watch",
    ]  # fmt: skip


@pytest.mark.parametrize("module", ["", *_submodules(CLI)])
def test_each_command_module_imports_on_its_own(module: str) -> None:
    name = "moska_p2p.cli" + (f".{module}" if module else "")
    done = _python("-c", f"import {name}")
    assert done.returncode == 0, done.stderr


def _imports_inside_cli(path: Path) -> set[str]:
    """The modules of ``moska_p2p.cli`` that ``path`` imports, anywhere in it (a function's
    own imports included: a cycle through one is still a cycle)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level == 1:
                base = "moska_p2p.cli" + (f".{node.module}" if node.module else "")
            elif node.level == 0 and node.module:
                base = node.module
            else:
                continue
            if base == "moska_p2p.cli":  # from . import x: the sibling modules named
                found |= {f"moska_p2p.cli.{alias.name}" for alias in node.names}
                found.add("moska_p2p.cli")
            elif base.startswith("moska_p2p.cli."):
                found.add(base)
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.startswith("moska_p2p.cli")}
    return found


def test_no_command_module_imports_the_package_or_a_cycle() -> None:
    graph = {
        f"moska_p2p.cli.{name}": _imports_inside_cli(CLI / f"{name}.py")
        for name in _submodules(CLI)
    }
    for module, imported in graph.items():
        assert "moska_p2p.cli" not in imported, f"{module} imports the package (a cycle)"
        assert module not in imported

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, set()):
            if nxt == target or (nxt not in seen and reaches(nxt, target, seen | {nxt})):
                return True
        return False

    cycles = [m for m in graph if reaches(m, m, {m})]
    assert not cycles, graph


def test_the_network_layer_imports_no_command_line() -> None:
    modules = ["moska_p2p.net.node", *(f"moska_p2p.net.{m}" for m in _submodules(NET))]
    code = (
        "import sys\n"
        + "".join(f"import {m}\n" for m in modules)
        + "print('\\n'.join(m for m in sys.modules if m.startswith('moska_p2p.cli')))"
    )
    done = _python("-c", code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []
    assert not (NET / "__main__.py").exists()
