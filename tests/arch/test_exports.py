"""Each package's public surface is its ``__all__``, and it is the whole contract between
packages (as trio's ``test_exports`` keeps trio's).

* every package of ``moska_p2p`` declares ``__all__``; every name in it exists and imports
  (a lazy package's names are imported from their module on first use: asking for each one
  imports it), and none starts with an underscore;
* every name one package imports from another, through the package or one of its modules,
  is in that package's ``__all__`` and is the same object there. The source is read, not
  executed: imports inside functions and under ``if TYPE_CHECKING:`` count, and so do the
  attributes read on another package's module imported whole (``from ..protocol import
  verdict as v`` ... ``v.Stopped``);
* the lazy packages stay lazy: importing one of their light modules does not load the heavy
  ones the laziness is for.

The names some packages import that are not in the surface, each with its reason, are in
:data:`EXCEPTIONS`; one that no longer occurs is fine (the list only shrinks).
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from moska_p2p.exports import LazyExports

PACKAGE = Path(__file__).resolve().parents[2] / "moska_p2p"
PACKAGES = sorted(path.parent.name for path in PACKAGE.glob("*/__init__.py"))

EXCEPTIONS: dict[tuple[str, str], str] = {
    # (package, name): why other packages import it from one of its modules instead.
    ("protocol", "drbg"): "a module's name too (protocol.drbg): once that module is imported"
    " the package's attribute is the module, so the function comes from its module",
    ("ui", "record_text"): "a module's name too (ui.record_text), as drbg",
    ("ui", "RecordError"): "two classes have the name (player_record's unreadable file,"
    " record_text's export that cannot be written): one should be renamed",
    ("arena", "check"): "plot.check: a verb that means something only with its module",
    ("arena", "draw"): "plot.draw, as check",
    ("arena", "load"): "ratings.load, as check",
    ("arena", "save"): "ratings.save, as check",
}

Use = tuple[str, str, str, str]
"""(importing module, package imported from, the module named in the import, name)."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _part(module: str) -> str:
    """The package a module belongs to (``engine`` for ``moska_p2p.engine.game``), or the
    top-level module's own name (``cards``)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _is_module(dotted: str) -> bool:
    path = PACKAGE.parent.joinpath(*dotted.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def _uses(module: str, tree: ast.Module, is_package: bool) -> Iterator[Use]:
    """Every name ``module`` takes from another package of :data:`PACKAGES`."""
    here = module if is_package else module.rpartition(".")[0]
    whole: dict[str, str] = {}  # local name -> another package's module imported whole
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = here.split(".")[: len(here.split(".")) - node.level + 1]
                source = ".".join([*base, node.module] if node.module else base)
            else:
                source = node.module or ""
            package = _part(source)
            if not source.startswith("moska_p2p.") or package not in PACKAGES:
                continue
            if package == _part(module):
                continue
            for alias in node.names:
                if _is_module(f"{source}.{alias.name}"):
                    whole[alias.asname or alias.name] = f"{source}.{alias.name}"
                else:
                    yield module, package, source, alias.name
        elif isinstance(node, ast.Import):
            for alias in node.names:
                package = _part(alias.name)
                outside = package in PACKAGES and package != _part(module)
                if alias.name.startswith("moska_p2p.") and outside and alias.asname:
                    whole[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in whole
        ):
            source = whole[node.value.id]
            yield module, _part(source), source, node.attr


def _all_uses() -> list[Use]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found += _uses(_module_name(path), tree, path.name == "__init__.py")
    return sorted(set(found))


def _package(name: str) -> ModuleType:
    if name == "rl":
        pytest.importorskip("pettingzoo", reason="the rl extra is not installed")
    return importlib.import_module(f"moska_p2p.{name}")


@pytest.mark.parametrize("name", PACKAGES)
def test_a_package_declares_its_surface_and_every_name_of_it_imports(name: str) -> None:
    package = _package(name)
    surface = getattr(package, "__all__", None)
    assert surface is not None, f"moska_p2p/{name}/__init__.py declares no __all__"
    assert len(surface) == len(set(surface)), f"a name twice in moska_p2p.{name}.__all__"
    private = [n for n in surface if n.startswith("_") and not n.startswith("__")]
    assert not private, f"moska_p2p.{name}.__all__ lists underscore names: {private}"
    missing = [n for n in surface if not hasattr(package, n)]
    assert not missing, f"moska_p2p.{name}.__all__ names what it does not have: {missing}"
    lazy = vars(package).get("__getattr__")
    if isinstance(lazy, LazyExports):
        hidden = set(lazy.module_of) - set(surface)
        assert not hidden, f"moska_p2p.{name} imports on first use what __all__ lacks: {hidden}"


def test_every_name_a_package_takes_from_another_is_in_its_surface() -> None:
    wrong = []
    for importer, name, source, attribute in _all_uses():
        if (name, attribute) in EXCEPTIONS:
            continue
        package = _package(name)
        where = f"{importer} takes {attribute} from {source}"
        if attribute not in package.__all__:
            wrong.append(f"{where}: add it to moska_p2p.{name}.__all__")
        elif getattr(package, attribute) is not getattr(importlib.import_module(source), attribute):
            wrong.append(f"{where}: moska_p2p.{name}.{attribute} is another object")
    assert not wrong, "names used across packages outside their surface:\n" + "\n".join(wrong)


def test_the_reader_finds_imports_of_every_form() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "from ..engine import Game\n"  # through the package
        "from ..protocol.session import PeerSession\n"  # through a module
        "from ..protocol import verdict as v\n"  # a module whole, then its attributes
        "from . import lobby\n"  # the same package: not a contract
        "import moska_p2p.crypto.identity as ident\n"
        "if TYPE_CHECKING:\n    from ..table.seat import Referee\n"
        "def late():\n    from moska_p2p.bots.loader import load_bot\n"
        "    return v.Stopped, ident.verify, lobby.Lobby, load_bot\n"
    )
    found = {
        (package, attribute)
        for _, package, _, attribute in _uses("moska_p2p.net.x", ast.parse(source), False)
    }
    assert found == {
        ("engine", "Game"),
        ("protocol", "PeerSession"),
        ("protocol", "Stopped"),
        ("crypto", "verify"),
        ("table", "Referee"),
        ("bots", "load_bot"),
    }


def test_importing_a_light_module_leaves_the_heavy_ones_unloaded() -> None:
    """What the lazy packages are lazy for: signatures without the deck's libsodium, frames
    without the session, the arena's game loop without trio, a replay without the terminal."""
    code = (
        "import sys\n"
        "import moska_p2p.crypto.identity, moska_p2p.protocol.frames, moska_p2p.table.local\n"
        "import moska_p2p.ui.replay, moska_p2p.arena.stats\n"
        "heavy = ['moska_p2p.crypto.deck', 'moska_p2p.protocol.session', 'trio',\n"
        "         'prompt_toolkit', 'moska_p2p.arena.arena']\n"
        "print(' '.join(m for m in heavy if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == [], f"loaded with a light module: {done.stdout}"
