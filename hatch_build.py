"""The wheel's build hook: the rules engine compiled with mypyc, where this machine can.

The engine (``moska_p2p/engine``) is pure, fully typed Python; mypyc turns it into C
extension modules that play the same games about three times faster. Compiling needs mypy
(mypyc ships with it), setuptools and a C compiler. Any of them missing, or any failure of
the compile, leaves the wheel pure: a warning is printed and the build goes on, because a
slower engine is far better than no install. ``MOSKA_PURE_ENGINE=1`` skips the compile.

The compiled modules sit beside their ``.py`` sources (Python's import prefers an extension
module), with mypyc's shared library ``moska_p2p/engine__mypyc...so``. A regular wheel gets
them as extra files; an editable install (``pip install -e .``) gets them written into the
source tree, where its ``.pth`` makes Python find them. ``moska_p2p/engine/compiled.json``
records a digest of each compiled source, so the engine falls back to its ``.py`` files when
a source has been edited since (``moska_p2p/engine/__init__.py``): a stale build never plays
old rules.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import sysconfig
import tempfile
import traceback
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

ENGINE = Path("moska_p2p") / "engine"
# The package's __init__ stays pure: it chooses between the compiled and the pure modules.
NOT_COMPILED = {"__init__.py", "backend.py"}
MANIFEST = ENGINE / "compiled.json"
GROUP = "moska_p2p.engine"  # mypyc's shared library: moska_p2p/engine__mypyc.<suffix>


def engine_sources(root: Path) -> list[Path]:
    """The engine modules to compile, relative to ``root``."""
    return sorted(
        path.relative_to(root)
        for path in (root / ENGINE).glob("*.py")
        if path.name not in NOT_COMPILED
    )


def source_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def compile_engine(root: Path, work: Path) -> list[tuple[Path, str]]:
    """Compile the engine under ``work``: each built file with its place in the package.

    Raises whatever mypyc, setuptools or the compiler raise; the caller decides.
    """
    from mypyc.build import mypycify
    from setuptools import Distribution

    sources = [str(path) for path in engine_sources(root)]
    here = Path.cwd()
    os.chdir(root)  # mypy reads pyproject.toml's [tool.mypy] and resolves imports from here
    try:
        extensions = mypycify(
            sources,
            opt_level="3",
            debug_level="0",
            group_name=GROUP,
            target_dir=str(work / "c"),
        )
        dist = Distribution({"name": "moska-p2p-engine", "ext_modules": extensions})
        build_ext = dist.get_command_obj("build_ext")
        build_ext.build_lib = str(work / "lib")  # type: ignore[attr-defined]
        build_ext.build_temp = str(work / "temp")  # type: ignore[attr-defined]
        build_ext.ensure_finalized()
        build_ext.run()
    finally:
        os.chdir(here)
    lib = work / "lib"
    built = [(path, path.relative_to(lib).as_posix()) for path in lib.rglob("*") if path.is_file()]
    if not any(target.startswith(ENGINE.as_posix() + "/") for _, target in built):
        raise RuntimeError(f"mypyc built no engine module under {lib}")
    manifest = work / "compiled.json"
    manifest.write_text(
        json.dumps(
            {
                "python": sys.implementation.cache_tag,
                "ext_suffix": sysconfig.get_config_var("EXT_SUFFIX"),
                "sources": {Path(s).name: source_digest(root / s) for s in sources},
            },
            indent=1,
            sort_keys=True,
        )
        + "\n"
    )
    built.append((manifest, MANIFEST.as_posix()))
    return built


def remove_previous_build(root: Path) -> None:
    """An editable build's compiled files from an earlier install, so none outlives it."""
    suffixes = (".so", ".pyd")
    for path in [*(root / ENGINE).iterdir(), *(root / "moska_p2p").iterdir()]:
        if path.name.endswith(suffixes) and (
            path.parent == root / ENGINE or path.name.startswith("engine__mypyc")
        ):
            path.unlink()
    (root / MANIFEST).unlink(missing_ok=True)


class CompiledEngineHook(BuildHookInterface):  # type: ignore[type-arg]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        root = Path(self.root)
        editable = version == "editable"
        if editable:
            remove_previous_build(root)
        if os.environ.get("MOSKA_PURE_ENGINE", "").strip() not in ("", "0"):
            self.app.display_info("moska-p2p: MOSKA_PURE_ENGINE is set: the pure engine")
            return
        try:
            built = cached_build(root)
        except (Exception, SystemExit):  # any failure (mypyc exits on a type error): pure
            detail = traceback.format_exc(limit=3)
            self.app.display_warning(
                "moska-p2p: could not compile the engine with mypyc; installing the pure "
                f"engine (same games, about 3x slower):\n{detail}"
            )
            return
        if editable:
            for path, target in built:
                shutil.copyfile(path, root / target)
        else:
            for path, target in built:
                build_data["force_include"][str(path)] = target
            build_data["pure_python"] = False
            build_data["infer_tag"] = True
        self.app.display_info("moska-p2p: the engine is compiled with mypyc")


def cached_build(root: Path) -> list[tuple[Path, str]]:
    """The compiled engine for these sources and this Python, compiled once: pip builds a
    wheel twice (its metadata, then the wheel), and a compile takes half a minute."""
    import mypy.version

    key = hashlib.sha256(
        json.dumps(
            [
                [source.as_posix(), source_digest(root / source)]
                for source in engine_sources(root)
            ]
            + [sys.implementation.cache_tag, sysconfig.get_platform(), mypy.version.__version__]
        ).encode()
    ).hexdigest()[:16]
    cache = root / "build" / "moska-engine" / key
    listing = cache / "built.json"
    if listing.is_file():
        targets: list[str] = json.loads(listing.read_text())
        if all((cache / "files" / target).is_file() for target in targets):
            return [(cache / "files" / target, target) for target in targets]
    shutil.rmtree(cache.parent, ignore_errors=True)  # one build kept, the current one
    work = Path(tempfile.mkdtemp(prefix="moska-engine-build-"))
    try:
        built = compile_engine(root, work)
        for path, target in built:
            kept = cache / "files" / target
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, kept)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    listing.write_text(json.dumps([target for _, target in built]))
    return [(cache / "files" / target, target) for _, target in built]
