"""The compiled engine (mypyc, built by hatch_build.py) plays the very games of the pure one.

Each side runs in its own process, the pure one with ``MOSKA_PURE_ENGINE=1``: seeded random
games of every preset, with copies, views, determinizations and pickles along the way, each
step's state hash folded into one digest. Without a compiled engine here the comparison
skips, unless ``MOSKA_REQUIRE_COMPILED_ENGINE=1`` (CI's compiled run) makes that a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import moska_p2p.engine as engine

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 300

PLAY = r"""
import hashlib, json, pickle, random, sys
import moska_p2p.engine as engine
from moska_p2p.engine import PRESETS, new_game

digest = hashlib.sha256()
for preset in PRESETS:
    for seed in range(int(sys.argv[1])):
        players = 4 if preset == "durak-teams" else 2 + seed % 5
        game = new_game(preset, players=players, seed=seed)
        rng = random.Random(seed)
        for step in range(3000):
            if game.is_over:
                break
            if step % 7 == 0:
                view = game.view(game.to_act_seat)
                # what the pickle holds (its bytes may share objects differently)
                digest.update(repr(pickle.loads(pickle.dumps(view)).__getstate__()).encode())
                digest.update(view.determinize(random.Random(step)).state_hash().encode())
                digest.update(repr(pickle.loads(pickle.dumps(game.rules))).encode())
            if step % 2:
                move = game.random_move(rng)
                game.copy().play_unchecked(move)
            else:
                move = rng.choice(game.legal_moves())
            game.play(move)
            digest.update(game.state_hash().encode())
        digest.update(repr(list(game.loser_seats)).encode())
print(json.dumps({
    "digest": digest.hexdigest(),
    "implementation": engine.IMPLEMENTATION,
    "game_module": engine.game.__file__,
}))
"""


def _python(
    code: str, *args: str, cwd: Path, env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", code, *args]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT
    )


def _run(code: str, *args: str, pure: bool, path: Path = ROOT) -> dict[str, str]:
    env = dict(os.environ, PYTHONPATH=str(path))
    env.pop("MOSKA_PURE_ENGINE", None)
    if pure:
        env["MOSKA_PURE_ENGINE"] = "1"
    done = _python(code, *args, cwd=path, env=env)
    assert done.returncode == 0, done.stderr
    result: dict[str, str] = json.loads(done.stdout.splitlines()[-1])
    return result


def _require_compiled() -> None:
    if engine.COMPILED:
        return
    if os.environ.get("MOSKA_REQUIRE_COMPILED_ENGINE", "").strip() not in ("", "0"):
        pytest.fail(f"a compiled engine is required, and the engine is {engine.IMPLEMENTATION}")
    pytest.skip(f"no compiled engine to compare: the engine is {engine.IMPLEMENTATION}")


def test_the_compiled_engine_plays_the_games_of_the_pure_one() -> None:
    _require_compiled()
    compiled = _run(PLAY, "6", pure=False)
    pure = _run(PLAY, "6", pure=True)
    assert compiled["implementation"] == "compiled with mypyc"
    assert not compiled["game_module"].endswith(".py")
    assert pure["game_module"].endswith("game.py"), pure
    assert "MOSKA_PURE_ENGINE" in pure["implementation"]
    assert compiled["digest"] == pure["digest"]


def test_an_edited_source_makes_the_engine_pure_until_it_is_compiled_again(
    tmp_path: Path,
) -> None:
    """An editable install's build outlived by an edit of its source: the engine must play
    the edited source, never the stale compiled module."""
    _require_compiled()
    copy = tmp_path / "moska_p2p"
    shutil.copytree(
        ROOT / "moska_p2p", copy, ignore=shutil.ignore_patterns("__pycache__", "locale")
    )
    report = "import json, moska_p2p.engine as e; print(json.dumps({'i': e.IMPLEMENTATION}))"
    assert _run(report, pure=False, path=tmp_path)["i"] == "compiled with mypyc"
    game = copy / "engine" / "game.py"
    game.write_text(game.read_text() + "\n# edited\n")
    played = _run(PLAY, "1", pure=False, path=tmp_path)
    assert played["game_module"] == str(game)
    assert "game.py changed since the compile" in played["implementation"]


@pytest.mark.parametrize("failure", ["no C compiler", "a type error"])
def test_a_wheel_whose_compile_fails_is_built_pure(tmp_path: Path, failure: str) -> None:
    """No working C compiler (``CC=false``), or a source mypyc refuses (it exits): the build
    warns and ships the pure engine."""
    pytest.importorskip("hatchling", reason="hatchling (dev extra) builds the wheel offline")
    pytest.importorskip("mypyc", reason="mypy (dev extra) holds mypyc")
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("pyproject.toml", "hatch_build.py", "README.md", "LICENSE"):
        shutil.copyfile(ROOT / name, tree / name)
    shutil.copytree(
        ROOT / "moska_p2p",
        tree / "moska_p2p",
        ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd", "compiled.json"),
    )
    env = dict(os.environ)
    if failure == "no C compiler":
        env |= {"CC": "false", "LDSHARED": "false"}
    else:
        constants = tree / "moska_p2p" / "engine" / "constants.py"
        constants.write_text(constants.read_text() + '\nREFUSED: int = "not an int"\n')
    out = tmp_path / "dist"
    build = "import sys; from hatchling.build import build_wheel; print(build_wheel(sys.argv[1]))"
    env.pop("MOSKA_PURE_ENGINE", None)
    done = _python(build, str(out), cwd=tree, env=env)
    assert done.returncode == 0, done.stderr
    assert "could not compile the engine" in done.stdout + done.stderr
    wheel = out / done.stdout.strip().splitlines()[-1]
    assert wheel.name.endswith("-py3-none-any.whl"), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "moska_p2p/engine/game.py" in names
    assert not [n for n in names if n.endswith((".so", ".pyd")) or "compiled.json" in n]
