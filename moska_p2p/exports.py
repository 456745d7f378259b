"""A package's public surface imported on first use (PEP 562), for the packages whose names
live in modules some callers must not pay for (the deck's libsodium, trio, the terminal).

A package lists its surface in ``__all__`` as every package does, says which module holds
each name, and makes its ``__getattr__`` a :class:`LazyExports`; a name is imported the
first time someone asks the package for it. This module imports nothing of the package, so
every layer may use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import import_module
from typing import Any


class LazyExports:
    """The ``__getattr__`` of a package: ``names_of`` maps each of its modules (relative,
    ``".deck"``) to the names of the surface it holds::

        __getattr__ = LazyExports(__name__, {".deck": ("DeckError", ...), ...})
    """

    def __init__(self, package: str, names_of: Mapping[str, tuple[str, ...]]) -> None:
        self.package = package
        self.module_of = {name: module for module, names in names_of.items() for name in names}

    def __call__(self, name: str) -> Any:
        if name in self.module_of:
            return getattr(import_module(self.module_of[name], self.package), name)
        raise AttributeError(f"module {self.package!r} has no attribute {name!r}")
