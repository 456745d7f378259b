"""The benchmark scripts still run (tiny sizes): a refactor that breaks one fails here, not
in the next session's measurements. Figures are never asserted (see scripts/README.md). The
two scripts split into ``scripts/lib`` run too: the fuzzer on a hundred inputs, and the
vector generator's ``--check`` (the vectors it makes are the files in ``protocol/vectors``)."""

from __future__ import annotations

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
