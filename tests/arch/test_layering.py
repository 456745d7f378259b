"""The import layering of ARCHITECTURE.md, enforced.

Every ``import`` in the package is read from the source (not executed), including imports
inside functions: a lazy import is still a dependency. Imports under ``if TYPE_CHECKING:``
are left out (annotations only) of the first two rules:

* each part of the package imports only from the parts below it (:data:`ALLOWED`);
* no cycle, between parts or between modules;
* and no circle between the modules inside one package (``engine``, ``ui``, ``net``...),
  annotations included: a type-only import back up is still a circle a reader
  must go round, and it is where the shared piece should have moved down to a module of
  its own.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "moska_p2p"

# part -> the parts it may import (besides itself). Inside out: cards and rules, engine,
# crypto, protocol, bots, network, table, arena, screen, command line.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "dirs": set(),
    "exports": set(),
    "cards": set(),
    "i18n": set(),
    "rules_text": {"cards", "engine", "i18n"},
    "engine": {"cards"},
    "crypto": {"cards"},
    "protocol": {"cards", "engine", "crypto"},
    "bots": {"cards", "engine"},
    "rl": {"cards", "engine", "bots"},
    "net": {"cards", "engine", "crypto", "protocol"},
    "tournament": {"cards", "engine", "crypto", "protocol"},
    "event": {"cards", "engine", "crypto", "protocol", "bots", "net", "table", "tournament"},
    "table": {"cards", "engine", "crypto", "protocol", "bots", "net"},
    "arena": {"cards", "engine", "bots", "table"},
    "ui": {"cards", "rules_text", "engine", "crypto", "protocol", "bots", "table", "arena",
           "tournament", "i18n"},
    "cli": {"cards", "rules_text", "engine", "crypto", "protocol", "bots", "net", "table",
            "arena", "ui", "i18n", "tournament", "event"},
    "__main__": {"cli"},
}  # fmt: skip
BOTTOM = {"errors", "dirs", "exports"}
"""Modules that import nothing of the package, for every layer: the root exception, where
the files go by default, and a package's names imported on first use."""
for _part_below in ALLOWED.values():
    _part_below.update(BOTTOM)
for _bottom in BOTTOM:
    ALLOWED[_bottom] = set()


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path, *, annotations: bool = False) -> Iterator[str]:
    """The moska_p2p modules ``path`` imports (absolute names), TYPE_CHECKING blocks aside
    unless ``annotations``."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def walk(node: ast.AST) -> Iterator[str]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test) and not annotations:
                for other in child.orelse:
                    yield from walk(other)
                continue
            if isinstance(child, ast.Import):
                for alias in child.names:
                    if alias.name.split(".")[0] == "moska_p2p":
                        yield alias.name
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[: len(base) - child.level + 1]
                    target = ".".join([*base, child.module] if child.module else base)
                else:
                    target = child.module or ""
                if target.split(".")[0] == "moska_p2p":
                    yield target
                    for alias in child.names:  # ``from . import verdict`` names a module
                        if (PACKAGE.parent / target.replace(".", "/") / alias.name).exists() or (
                            PACKAGE.parent / (target.replace(".", "/") + f"/{alias.name}.py")
                        ).exists():
                            yield f"{target}.{alias.name}"
            yield from walk(child)

    yield from walk(tree)


def _graph(*, annotations: bool = False) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = _module_name(path)
        graph[name] = {t for t in _imports(path, annotations=annotations) if t != name}
    return graph


def _package_of(module: str) -> str:
    """The package a module is in (a package's ``__init__`` counts in the package above)."""
    return module.rpartition(".")[0]


def _inside_packages(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Only the imports from a module to another module of the same package (a package's
    own ``__init__`` left out: it re-exports its modules, and they never import it back)."""
    return {
        module: {t for t in targets if t in graph and _package_of(t) == _package_of(module)}
        for module, targets in graph.items()
    }


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` if there is any (depth-first search)."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                return [*stack[stack.index(target) :], target]
            if target not in state and (found := visit(target)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (found := visit(node)):
            return found
    return None


def test_every_part_of_the_package_is_in_the_layering() -> None:
    parts = {_part(m) for m in _graph()} - {""}
    missing = parts - set(ALLOWED)
    assert not missing, f"add these to ALLOWED and ARCHITECTURE.md: {missing}"


def test_each_part_imports_only_from_the_parts_below_it() -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in _graph().items()
        for target in targets
        if _part(module) and _part(target) and _part(target) != _part(module)
        and _part(target) not in ALLOWED.get(_part(module), set())
    )  # fmt: skip
    assert not wrong, "\n".join(wrong)


def test_the_network_layer_imports_no_screen_bots_table_or_command_line() -> None:
    bad = {"ui", "bots", "cli", "table", "arena"}
    for module, targets in _graph().items():
        if _part(module) == "net":
            assert not {_part(t) for t in targets} & bad, (module, targets)


def test_no_import_cycles_between_parts_or_modules() -> None:
    graph = _graph()
    parts: dict[str, set[str]] = {}
    for module, targets in graph.items():
        parts.setdefault(_part(module), set()).update(
            _part(t) for t in targets if _part(t) != _part(module)
        )
    assert _cycle(parts) is None, f"a cycle between parts: {_cycle(parts)}"
    assert _cycle(graph) is None, f"a cycle between modules: {_cycle(graph)}"


def test_no_import_circles_between_modules_inside_a_package() -> None:
    """``engine/game.py`` -> ``encoding.py`` -> (for an annotation) ``game.py`` is a circle
    too: each module of a package reads only the ones below it."""
    inside = _inside_packages(_graph(annotations=True))
    assert _cycle(inside) is None, f"a circle inside a package: {_cycle(inside)}"


def test_the_checker_sees_a_violation() -> None:
    """The walk itself: relative, absolute and lazy imports are found, TYPE_CHECKING ones not."""
    graph = _graph()
    assert "moska_p2p.engine" in graph["moska_p2p.table.local"]
    assert "moska_p2p.net.node" not in graph["moska_p2p.table.networked"]  # annotations only
    typed = _graph(annotations=True)
    assert "moska_p2p.net.port" in typed["moska_p2p.table.networked"]  # ...counted here
    assert _package_of("moska_p2p.engine.game") == "moska_p2p.engine"
    assert _package_of("moska_p2p.engine") == "moska_p2p"
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None
