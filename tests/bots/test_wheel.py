"""The wheel installs the package and its bots, and nothing else.

The repository's ``bots/`` folder holds examples loaded by path; an installed top-level
``bots`` package would collide with any other project's. So the wheel must hold
``moska_p2p`` only, the strong bot inside it, and a fresh environment with the wheel
installed (and no repository on its path) must play with ``ismcts`` and fail ``import bots``.

The wheel is built with hatchling's PEP 517 hook in this interpreter (no build isolation, so
no download: hatchling is in the dev extra) and installed with ``--no-deps --no-index``. The
fresh venv gets the dependencies (trio, typer, ...) from this environment's site-packages
through a ``.pth`` file. Not ``--system-site-packages``: that would expose the *base*
interpreter's packages, not this venv's, and where this environment is the base
interpreter it would also run its editable install's ``.pth``, putting the repository (and
its ``bots/`` folder) back on the path. Lines of a ``.pth`` only add directories: the
``.pth`` files inside those directories, the editable install's among them, are not run.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 120  # each step; a loaded 2-core CI machine is slow to start Python


def _run(
    args: list[str], cwd: Path, env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=TIMEOUT
    )


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("hatchling", reason="hatchling (dev extra) builds the wheel offline")
    out = tmp_path_factory.mktemp("dist")
    build = "import sys; from hatchling.build import build_wheel; print(build_wheel(sys.argv[1]))"
    done = subprocess.run(
        [sys.executable, "-c", build, str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert done.returncode == 0, done.stderr
    return out / done.stdout.strip().splitlines()[-1]


def test_the_wheel_holds_the_package_and_no_top_level_bots(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    tops = {name.split("/")[0] for name in names}
    assert tops == {"moska_p2p", "moska_p2p-0.1.0.dist-info"}, tops
    assert "moska_p2p/bots/ismcts.py" in names
    assert "moska_p2p/bots/weights/value-v1.npz" in names  # the learned evaluation's weights
    assert "moska_p2p/bots/weights/policy-v1.npz" in names  # the strongest level's prior
    assert not [n for n in names if n.startswith("bots/")]


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("venv")
    env_dir = home / "env"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(env_dir)],
        check=True,
        timeout=TIMEOUT,
    )
    python = env_dir / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=TIMEOUT,
    ).stdout.strip()
    ours = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (Path(purelib) / "_dev_dependencies.pth").write_text("".join(p + "\n" for p in ours))
    install = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "--python", str(python), "install"),
            *("--no-deps", "--no-index", "--disable-pip-version-check", str(wheel)),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
    )
    assert install.returncode == 0, install.stdout + install.stderr
    return env_dir


def _clean_env() -> dict[str, str]:
    """This process's environment without anything that adds the repository to a path."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    env.update(NO_COLOR="1", TERM="dumb")
    return env


def test_no_top_level_bots_package_is_installed(venv: Path, tmp_path: Path) -> None:
    done = _run([str(venv / "bin" / "python"), "-c", "import bots"], tmp_path, _clean_env())
    assert done.returncode != 0
    assert "ModuleNotFoundError: No module named 'bots'" in done.stderr, done.stderr


def test_the_installed_ismcts_bot_plays_a_move(venv: Path, tmp_path: Path) -> None:
    script = """
import sys
import moska_p2p
from moska_p2p.bots.loader import load_bot
from moska_p2p.engine import new_game

assert moska_p2p.__file__.startswith(sys.prefix), moska_p2p.__file__
bot = load_bot("ismcts:iterations=50", seed=1)
game = new_game("moska", players=4, seed=1)
while game.count_legal_moves() < 2:
    game.play(game.legal_moves()[0])
seat = game.to_act_seat
move = bot.choose(game.view(seat), game.legal_moves())
game.play(move)
print(type(bot).__module__, bot.last_iterations, move)
from moska_p2p.bots.network import DEFAULT_WEIGHTS
assert str(DEFAULT_WEIGHTS).startswith(sys.prefix), DEFAULT_WEIGHTS
netted = load_bot("ismcts:iterations=20,value=net", seed=1)
assert netted.choose(game.view(game.to_act_seat), game.legal_moves()) in game.legal_moves()
print("net", netted.last_iterations)
"""
    done = _run([str(venv / "bin" / "python"), "-c", script], tmp_path, _clean_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("moska_p2p.bots.ismcts 50 "), done.stdout
    assert "net 20" in done.stdout, done.stdout


def test_moska_play_with_ismcts_starts_from_the_installed_wheel(venv: Path, tmp_path: Path) -> None:
    """The table is drawn with ismcts at the other seats, the person is asked for a move,
    and ``quit`` leaves the game cleanly: exit 130, a game abandoned before its end."""
    done = _run(
        [str(venv / "bin" / "moska"), "play", "--bots", "ismcts", "--seed", "1", "--pace", "0"],
        tmp_path,
        _clean_env(),
        stdin="quit\n",
    )
    assert done.returncode == 130, done.stdout[-2000:] + done.stderr
    assert "You left the game." in done.stdout
    assert "ismcts 1" in done.stdout
    assert "legal: " in done.stdout
    assert "Traceback" not in done.stderr
