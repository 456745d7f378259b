"""The arena on a Dask cluster (``moska arena --cluster``): byte for byte the results of
``--jobs 1``, progress reported the same way, a worker killed mid-run costs no game.

The tests start a local cluster of two worker processes (on 127.0.0.1); they are skipped,
saying why, where the optional extra is not installed (``pip install 'moska-p2p[cluster]'``).
The address checks and the missing-extra message need no cluster and always run.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from moska_p2p.arena import cluster as arena_cluster
from moska_p2p.arena.arena import ArenaError, ArenaFailed, run_arena
from moska_p2p.cli import app

runner = CliRunner()
SKIP = "needs the cluster extra (Dask distributed): pip install 'moska-p2p[cluster]'"


@pytest.fixture(scope="module")
def scheduler() -> Iterator[tuple[str, Any]]:
    """A local cluster of two single-threaded worker processes, and a client of it."""
    distributed = pytest.importorskip("distributed", reason=SKIP)
    cluster = arena_cluster.local_cluster(2, quiet=logging.CRITICAL)
    client = distributed.Client(cluster)
    try:
        yield cluster.scheduler_address, client
    finally:
        client.close()
        cluster.close()


def _json(result: Any) -> str:
    return json.dumps(result.to_json(), indent=2)


def test_cluster_results_are_byte_identical_to_jobs_1(scheduler: tuple[str, Any]) -> None:
    address, _ = scheduler
    args = ("moska", ["greedy", "shedder", "random", "random"], 128)
    seen: list[tuple[int, int]] = []
    local = run_arena(*args, seed=11)
    remote = run_arena(*args, seed=11, cluster=address, progress=lambda d, t: seen.append((d, t)))
    assert _json(remote) == _json(local)
    # Progress as with --jobs: 0 first, then every chunk's games added, up to the total.
    done = [d for d, _ in seen]
    assert done[0] == 0 and done[-1] == 128 and done == sorted(done) and len(done) > 2
    assert {t for _, t in seen} == {128}


def test_forfeits_come_back_the_same(scheduler: tuple[str, Any]) -> None:
    address, _ = scheduler
    raiser = f"{Path(__file__).parent / 'fixtures' / 'bad_bots.py'}:Raiser"
    args = ("durak", ["greedy", raiser], 6)
    local = run_arena(*args, seed=3)
    assert sum(s.forfeits for s in local.stats) > 0
    assert _json(run_arena(*args, seed=3, cluster=address)) == _json(local)


def test_cli_cluster_json_is_byte_identical(scheduler: tuple[str, Any], tmp_path: Path) -> None:
    address, _ = scheduler
    args = ["arena", "--preset", "durak", "--bots", "greedy,random,shedder", "--games", "60"]
    outputs = []
    for extra in (["--jobs", "1"], ["--cluster", address]):
        out = tmp_path / f"{extra[0].strip('-')}.json"
        done = runner.invoke(app, [*args, *extra, "--quiet", "--json", str(out)])
        assert done.exit_code == 0, done.output
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]


def test_a_worker_killed_mid_run_has_its_chunks_run_again(scheduler: tuple[str, Any]) -> None:
    address, client = scheduler
    args = ("mustamaija", ["shedder", "random"], 4)  # 4 chunks: a game through the protocol
    local = run_arena(*args, seed=7, p2p=True)
    killed: list[int] = []
    rerun: list[int] = []

    def busy(dask_scheduler: Any) -> dict[str, int]:
        return {a: len(w.processing) for a, w in dask_scheduler.workers.items()}

    def suspicious(dask_scheduler: Any) -> int:
        return sum(t.suspicious for k, t in dask_scheduler.tasks.items() if "arena-" in str(k))

    def progress(done: int, total: int) -> None:
        if done and done < total and not killed:  # a chunk is in: kill a worker playing one
            working = [a for a, n in client.run_on_scheduler(busy).items() if n]
            if working:  # else try again when the next chunk is in
                pids = client.run(os.getpid, workers=working[:1])
                killed.extend(pids.values())
                os.kill(killed[0], signal.SIGKILL)
        if done == total:
            rerun.append(client.run_on_scheduler(suspicious))

    remote = run_arena(*args, seed=7, p2p=True, cluster=address, progress=progress)
    assert killed, "no worker was killed"
    assert rerun and rerun[0] >= 1, "no chunk was in the killed worker's hands"
    assert _json(remote) == _json(local)  # every game once, none lost, none twice
    assert remote.to_json()["p2p"] and remote.to_json()["verdicts"] == 0
    client.wait_for_workers(2, timeout=60)  # the nanny brought the worker back


def test_addresses_are_checked_before_any_game() -> None:
    with pytest.raises(ArenaError, match="Ray is not supported"):
        run_arena("moska", ["random", "random"], 1, cluster="ray://head:10001")
    with pytest.raises(ArenaError, match="not a cluster address"):
        run_arena("moska", ["random", "random"], 1, cluster="head:8786")
    with pytest.raises(ArenaError, match="drop --jobs"):
        run_arena("moska", ["random", "random"], 1, cluster="local", jobs=2)
    assert arena_cluster.parse_address("local:3") == ("local", 3)
    assert arena_cluster.parse_address("tcp://10.0.0.2:8786") == ("tcp", None)
    done = runner.invoke(app, ["arena", "--bots", "random,random", "--cluster", "local:0"])
    assert done.exit_code == 2 and "local:N needs N of 1 or more" in done.output


def test_without_the_extra_the_error_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed fails
    with pytest.raises(ArenaError, match=r"pip install 'moska-p2p\[cluster\]'"):
        run_arena("moska", ["random", "random"], 2, cluster="local")


def test_a_scheduler_that_does_not_answer_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("distributed", reason=SKIP)
    monkeypatch.setattr(arena_cluster, "CONNECT_TIMEOUT", 1.0)
    with socket.socket() as probe:  # a port with nobody listening on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(ArenaFailed, match="no scheduler answers"):
        run_arena("moska", ["random", "random"], 2, cluster=f"tcp://127.0.0.1:{port}")
    args = ["arena", "--bots", "random,random", "--games", "2", "--cluster"]
    done = runner.invoke(app, [*args, f"tcp://127.0.0.1:{port}"])
    assert done.exit_code == 1 and "no scheduler answers" in done.output
    assert "Traceback" not in done.output
    empty = arena_cluster.local_cluster(0, quiet=logging.CRITICAL)  # a scheduler, no worker
    try:
        with pytest.raises(ArenaFailed, match="no worker joined the scheduler"):
            run_arena("moska", ["random", "random"], 2, cluster=empty.scheduler_address)
    finally:
        empty.close()
