"""The benchmark scripts still run (tiny sizes): a refactor that breaks one fails here, not
in the next session's measurements. Figures are never asserted (see scripts/README.md). The
two scripts split into ``scripts/lib`` run too: the fuzzer on a hundred inputs, and the
vector generator's ``--check`` (the vectors it makes are the files in ``protocol/vectors``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parent.parent / "scripts"

RUNS = {
    "bench_engine.py": ["--games", "3", "--runs", "1", "--presets", "moska,durak"],
    # the pure engine against the compiled one (the pure one twice where none is built)
    "bench_engine.py --engines": ["--engines", "--games", "3", "--runs", "1", "--presets", "durak"],
    "measure_levels.py": ["--levels", "easy", "--presets", "durak", "--games", "2"],
    "screen_search.py": [
        *("--candidate", "ismcts:iterations=3,beliefs=1", "--base", "ismcts:iterations=3"),
        *("--games", "2", "--presets", "durak"),
    ],
    # One game through the protocol; the local cluster too where the extra is installed.
    "bench_arena.py": ["--games", "3", "--runs", "1", "--p2p-games", "1"],
    "soak_p2p.py": ["--games", "2", "--players", "2", "--presets", "durak,mustamaija"],
    "bench_ismcts.py": ["--runs", "1", "--iterations", "5", "--positions", "2"],
    "fuzz.py": ["--inputs", "100", "--checkpoints", "4"],
    "make_vectors.py": ["--check"],
    # A club event of four bots, one round of two tables, and the same tables alone.
    "tournament_demo.py": ["--entrants", "4", "--seats", "2", "--rounds", "1", "--preset", "durak",
                           "--final", "0"],
    # One table of real processes where the cheater signs a bogus verdict (no grace to wait).
    "quit_matrix_net.py": [
        *("--runs", "1", "--tries", "1", "--modes", "bogus", "--tables", "moska:3"),
        *("--timeout", "3", "--game-timeout", "90"),
    ],
}


@pytest.mark.parametrize("script", list(RUNS))
def test_a_benchmark_script_runs(script: str) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPTS / script.split()[0]), *RUNS[script]],
        capture_output=True,
        text=True,
        timeout=180,
        stdin=subprocess.DEVNULL,
    )
    if script == "bench_ismcts.py" and done.returncode and "no commit has" in done.stderr:
        pytest.skip("the checkout has no history with the old bot (a shallow clone)")
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip()


def test_a_screen_stopped_between_chunks_goes_on_from_its_record(tmp_path: Path) -> None:
    """``screen_search.py --chunk --json``: the record keeps each whole chunk; the same
    command run again plays only the chunks missing (a record cut back to its first chunk
    plays the second again, with the same deals: the same figures), and goes on to more
    games; a record of other settings is refused, not overwritten."""
    record = tmp_path / "screen.json"
    command = [
        sys.executable, str(SCRIPTS / "screen_search.py"),
        # counted iterations, never cut by the clock: the same deals give the same games
        *("--candidate", "ismcts:time=60,iterations=3,beliefs=1"),
        *("--base", "ismcts:time=60,iterations=3"),
        *("--presets", "durak", "--chunk", "4", "--json", str(record)),
    ]  # fmt: skip

    def run(*more: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*command, *more], capture_output=True, text=True, timeout=180,
                              stdin=subprocess.DEVNULL)  # fmt: skip

    first = run("--games", "8")
    assert first.returncode == 0, first.stderr[-2000:]
    whole = json.loads(record.read_text())
    assert [c["seed"] for c in whole["chunks"]] == [1, 1001]
    cut = dict(whole, chunks=whole["chunks"][:1])
    record.write_text(json.dumps(cut))
    again = run("--games", "8")
    assert again.returncode == 0 and "1 chunk(s) played already" in again.stdout, again.stdout
    (row,), (before,) = json.loads(record.read_text())["rows"], whole["rows"]
    assert (row["games"], row["losses"], row["ci95"]) == (8, before["losses"], before["ci95"])
    more = run("--games", "12")
    assert more.returncode == 0 and "2 chunk(s) played already" in more.stdout, more.stderr
    assert json.loads(record.read_text())["rows"][0]["games"] == 12
    other = run("--games", "8", "--seed", "2")
    assert other.returncode != 0 and "holds another screen" in other.stderr


COMPARE = SCRIPTS / "compare_with_base.py"
REPO = SCRIPTS.parent


def git(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)


@pytest.fixture
def head() -> str:
    found = git("rev-parse", "--verify", "HEAD^{commit}")
    if found.returncode:
        pytest.skip("not a git checkout: no base to compare with")
    return found.stdout.strip()


def compare(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(COMPARE), *args],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
    )


def test_compare_with_base_finds_the_same_games_identical(head: str) -> None:
    """The checkout against its own commit: the games replay byte for byte run to run."""
    if git("status", "--porcelain", "--", "moska_p2p").stdout.strip():
        pytest.skip("moska_p2p has uncommitted changes: the checkout is not its HEAD")
    done = compare("--base", head, "--games", "2")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "identical: 2 games" in done.stdout


def test_compare_with_base_names_the_first_frame_a_change_moves(head: str, tmp_path: Path) -> None:
    """A tree whose random bot always plays its last legal move differs from its base at the
    first move that bot makes, and the report shows the two decoded frames."""
    tree = tmp_path / "changed"
    added = git("worktree", "add", "--detach", "--quiet", str(tree), head)
    assert added.returncode == 0, added.stderr
    try:
        with (tree / "moska_p2p" / "bots" / "builtin.py").open("a") as source:
            source.write(
                "\nRandomBot.choose = lambda self, view, legal: legal[-1]  # type: ignore\n"
            )
        done = compare("--base", head, "--tree", str(tree), "--games", "1")
    finally:
        git("worktree", "remove", "--force", str(tree))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "DIFFERENT: game 0 (moska, 2 seats" in done.stdout
    assert "at .wire[" in done.stdout
    assert "base frame" in done.stdout and "current frame" in done.stdout
