"""No underscore name is a contract between two modules of the package.

A name that starts with one underscore is its module's own: another module that imports it
(``from .x import _y``) or reaches into an object for it (``other._y``) depends on what the
author meant to be free to change. The source is read, not executed:

* an import ``from ... import _y`` of a package module's name (a private *module* of a
  package, ``from . import _impl``, is fine: that is what marks it private);
* an attribute ``expr._y`` (``expr`` not ``self`` or ``cls``) where ``_y`` is defined
  nowhere in the module doing the access (no ``def _y``, no ``_y = ...``, no
  ``self._y = ...``) but is defined in another module of the package. Access to a module's
  own privates, on any of its objects, is its business; a private name of the standard
  library or of a dependency is not this test's.

The hits left in modules being reworked are listed in :data:`KNOWN`, each to be renamed
there; a listed hit that no longer occurs is fine (the list only shrinks), a new one fails.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "moska_p2p"

KNOWN: set[tuple[str, str]] = {
    # (module, name): none left; a hit a rework needs for a while is listed here with why.
}


def _is_private(name: str) -> bool:
    """``_x``: not ``__x__``, and not ``_`` (gettext's, a name every screen imports)."""
    return name.startswith("_") and not name.startswith("__") and name != "_"


def _on_self(node: ast.Attribute) -> bool:
    """``self._x``/``cls._x``: a class's own member, wherever in its bases it is defined (how
    deep those go is another rule's: ARCHITECTURE.md, two levels)."""
    return isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _trees() -> dict[str, ast.Module]:
    return {
        _module_name(path): ast.parse(path.read_text(), str(path))
        for path in sorted(PACKAGE.rglob("*.py"))
    }


def _is_protocol(node: ast.ClassDef) -> bool:
    return any(
        (isinstance(base, ast.Name) and base.id == "Protocol")
        or (isinstance(base, ast.Attribute) and base.attr == "Protocol")
        for base in node.bases
    )


def _walk(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node of ``tree`` but the bodies of ``Protocol`` classes: a private name a
    protocol declares is what another module's object must have, a contract, not a
    definition."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.ClassDef) and _is_protocol(child):
            continue
        yield child
        yield from _walk(child)


def _defined(tree: ast.Module) -> set[str]:
    """Every private name a module defines: functions, classes, assignments (of names and of
    its own attributes, ``self._x = ...``), imports under an alias, parameters."""
    names: set[str] = set()
    for node in _walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            if _on_self(node):  # ``other._x = ...`` defines nothing: it reaches in
                names.add(node.attr)
        elif isinstance(node, ast.alias) and node.asname:
            names.add(node.asname)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
    return {name for name in names if _is_private(name)}


def _is_module(module: str, level: int, package: str, name: str) -> bool:
    """Whether ``from <module> import <name>`` names a module of the package (a file or a
    folder), as ``from . import _impl`` does."""
    base = package.split(".")
    if level:
        base = base[: len(base) - level + 1]
        target = [*base, *(module.split(".") if module else [])]
    else:
        target = module.split(".")
    folder = PACKAGE.parent.joinpath(*target, name)
    return folder.with_suffix(".py").exists() or (folder / "__init__.py").exists()


def _hits(trees: dict[str, ast.Module]) -> Iterator[tuple[str, str, int]]:
    defined = {module: _defined(tree) for module, tree in trees.items()}
    everywhere: dict[str, set[str]] = {}
    for module, names in defined.items():
        for name in names:
            everywhere.setdefault(name, set()).add(module)
    for module, tree in trees.items():
        package = module if (PACKAGE.parent / module.replace(".", "/")).is_dir() else (
            module.rpartition(".")[0]
        )
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                source = node.module or ""
                inside = node.level > 0 or source.startswith("moska_p2p")
                for alias in node.names:
                    name = alias.name
                    if (
                        inside
                        and _is_private(name)
                        and not _is_module(source, node.level, package, name)
                    ):
                        yield module, name, node.lineno
            elif isinstance(node, ast.Attribute) and _is_private(node.attr) and not _on_self(node):
                name = node.attr
                if name in defined[module]:
                    continue  # the module's own (on whichever of its objects)
                if everywhere.get(name, set()) - {module}:
                    yield module, name, node.lineno


def test_no_private_name_is_used_across_modules() -> None:
    found = sorted(set(_hits(_trees())))
    new = [f"{m}:{line}: {name}" for m, name, line in found if (m, name) not in KNOWN]
    assert not new, "private names used across modules:\n" + "\n".join(new)


def test_the_check_sees_a_private_import_and_a_reach_into_another_module() -> None:
    trees = {
        "moska_p2p.net.a": ast.parse("def _helper(): pass\nclass A:\n    def _run(self): pass\n"),
        "moska_p2p.net.b": ast.parse(
            "from .a import _helper\n"
            "def go(a):\n    a._run()\n"
            "class B:\n    def _own(self): pass\n    def use(self, other):\n"
            "        other._own()\n"
        ),
        "moska_p2p.net.c": ast.parse(
            "from typing import Protocol\n"
            "class Owner(Protocol):\n    _turn: int\n    def _handle(self) -> None: ...\n"
            "def wait(owner: Owner):\n    owner._turn = 1\n    owner._handle()\n"
        ),
        "moska_p2p.net.d": ast.parse(
            "class Runner:\n    def __init__(self):\n        self._turn = 0\n"
            "    def _handle(self): pass\n"
        ),
    }
    hits = {(module, name) for module, name, _ in _hits(trees)}
    assert hits == {
        ("moska_p2p.net.b", "_helper"),
        ("moska_p2p.net.b", "_run"),
        ("moska_p2p.net.c", "_turn"),
        ("moska_p2p.net.c", "_handle"),
    }
