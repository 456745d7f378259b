"""Which engine plays: the modules compiled by mypyc where the install built them
(hatch_build.py), else the pure ones; the package imports this module before any other.

The choice must come first because Python's import always prefers a compiled module beside
its source. The compiled engine is refused, and the ``.py`` sources imported instead, when
``MOSKA_PURE_ENGINE`` is set (CI runs the engine's tests on both), when a source changed
since the compile (an editable install edited: a stale build never plays old rules), or when
the compiled library does not load. Never compiled itself: it must run before the choice.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

PURE_ENGINE_VARIABLE = "MOSKA_PURE_ENGINE"
HERE = Path(__file__).resolve().parent
PACKAGE = __name__.rpartition(".")[0]


class PureEngineFinder(importlib.abc.MetaPathFinder):
    """Imports the engine's modules from their ``.py`` sources, passing over compiled ones."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        package, _, name = fullname.rpartition(".")
        if package != PACKAGE:
            return None
        source = HERE / f"{name}.py"
        if not source.is_file():
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def compiled_engine_refusal() -> str | None:
    """Why the compiled engine cannot play here (None: it can)."""
    if os.environ.get(PURE_ENGINE_VARIABLE, "").strip() not in ("", "0"):
        return f"{PURE_ENGINE_VARIABLE} is set"
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    try:
        manifest = json.loads((HERE / "compiled.json").read_text())
        sources: dict[str, str] = manifest["sources"]
    except FileNotFoundError:
        return "not compiled on this install"
    except (OSError, ValueError, KeyError, TypeError) as error:
        return f"the compiled build's record is unreadable ({error})"
    for name, digest in sorted(sources.items()):
        module = name.removesuffix(".py")
        if not (HERE / f"{module}{suffix}").is_file():
            return f"{module} is not compiled for this Python"
        source = HERE / name
        # a wheel holds the sources it was compiled from; an editable install's may be edited
        if source.is_file() and hashlib.sha256(source.read_bytes()).hexdigest() != digest:
            return f"{name} changed since the compile (reinstall to compile it again)"
    try:
        importlib.import_module(f"{PACKAGE}__mypyc")
    except ImportError as error:
        return f"the compiled engine does not load ({error})"
    return None


REFUSAL = compiled_engine_refusal()
COMPILED = REFUSAL is None
IMPLEMENTATION = "compiled with mypyc" if REFUSAL is None else f"pure Python ({REFUSAL})"
if REFUSAL is not None and any(HERE.glob("*" + importlib.machinery.EXTENSION_SUFFIXES[0])):
    sys.meta_path.insert(0, PureEngineFinder())

