"""No class is spread over a chain of more than two of the package's own classes.

A part is an object its owner calls, not a base class it inherits: a class whose fields and
methods come from a chain of bases in other modules makes its reader walk the chain. Two
levels (a base and the class, as python-chess's ``BaseBoard`` and ``Board``) are the most.
Exceptions are a taxonomy, not state, and are left out. The source is read, not executed;
bases are matched by name among the package's classes.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "moska_p2p"

KNOWN: set[str] = set()
"""Classes still built deeper, each to be reworked (the list only shrinks)."""

EXCEPTION_ROOTS = {"Exception", "BaseException", "ValueError", "Error"}


def _classes() -> dict[str, list[str]]:
    bases: dict[str, list[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                names = [
                    b.id if isinstance(b, ast.Name) else b.attr
                    for b in node.bases
                    if isinstance(b, ast.Name | ast.Attribute)
                ]
                bases.setdefault(node.name, []).extend(names)
    return bases


def _depth(name: str, bases: dict[str, list[str]], seen: frozenset[str] = frozenset()) -> int:
    """How many of the package's classes the class ``name`` is built from, itself included."""
    if name not in bases or name in seen:
        return 0
    return 1 + max((_depth(b, bases, seen | {name}) for b in bases[name]), default=0)


def _is_exception(
    name: str, bases: dict[str, list[str]], seen: frozenset[str] = frozenset()
) -> bool:
    if name in EXCEPTION_ROOTS or name.endswith(("Error", "Exception")):
        return True
    if name in seen:
        return False
    return any(_is_exception(b, bases, seen | {name}) for b in bases.get(name, ()))


def test_no_class_inherits_through_more_than_two_of_the_package_classes() -> None:
    bases = _classes()
    deep = sorted(
        name
        for name in bases
        if _depth(name, bases) > 2 and not _is_exception(name, bases) and name not in KNOWN
    )
    assert not deep, f"classes built from more than two levels of the package's own: {deep}"


def test_the_check_counts_a_chain() -> None:
    bases = {"A": [], "B": ["A"], "C": ["B", "object"], "E": ["ValueError"], "F": ["E"]}
    assert [_depth(n, bases) for n in "ABC"] == [1, 2, 3]
    assert _is_exception("F", bases) and not _is_exception("C", bases)
