"""The arena's chunks on a Dask distributed cluster (``moska arena --cluster ADDRESS``).

Why Dask and not Ray. Both run picklable functions on other machines, and the arena's unit
of work is one already (a chunk of game indices, :func:`~.arena._play_chunk`). On a 2-core
machine and in CI, Dask distributed is the better fit: it is pure Python (about 2.5 MB of
wheels for ``dask`` and ``distributed``, against Ray's 80 MB binary wheel and its own
object store, dashboard and raylet processes); a local cluster of two worker processes
starts in a second or two inside a test (``LocalCluster``), where Ray's head takes several
seconds and a good part of a small machine's memory; and it handles the loss of a worker
the way the arena needs: the scheduler notices the dead worker and runs the chunks it held
again on the others (a nanny also restarts the process), so no game is lost or counted twice.
A chunk that brings down workers repeatedly (``distributed.scheduler.allowed-failures``,
3 by default) is given up with an error rather than retried forever.

Results are identical to ``--jobs``: the chunks are the same (they never depend on where
they run), each is played by the same function from the same seeds, and the outcomes are
merged in game order. ``--save`` writes on whichever machine plays the chunk (the same path
on each): on a local cluster, this machine.

Addresses: ``local`` (a cluster of this machine's cores, started and stopped here),
``local:N`` (N worker processes), or a running scheduler's ``tcp://HOST:PORT`` (started
with ``dask scheduler`` and ``dask worker tcp://HOST:8786`` on each machine, each with this
package and the bots installed). Dask is an optional extra: ``pip install
'moska-p2p[cluster]'``.
"""

from __future__ import annotations

import importlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

C = TypeVar("C")
R = TypeVar("R")

INSTALL_HINT = "install the extra: pip install 'moska-p2p[cluster]'"
CONNECT_TIMEOUT = 20.0
"""Seconds to reach a scheduler, or for a local cluster's workers to come up."""


class ClusterError(ValueError):
    """A cluster that cannot be used: a bad address, Dask missing."""


class ClusterFailed(ClusterError):
    """A run that failed on the cluster: no scheduler answered, or it gave a chunk up."""


def parse_address(address: str) -> tuple[str, int | None]:
    """``("local", workers or None)`` or ``("tcp", None)`` with the address checked; raises
    :class:`ClusterError` with a one-line message."""
    text = address.strip()
    if text == "local":
        return "local", None
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if not count.isdigit() or int(count) < 1:
            raise ClusterError(f"--cluster {address}: local:N needs N of 1 or more workers")
        return "local", int(count)
    if text.startswith(("ray://", "auto")):
        raise ClusterError(
            f"--cluster {address}: Ray is not supported; the arena runs on Dask distributed"
            " (tcp://HOST:8786, or local)"
        )
    if text.startswith("tcp://"):
        host, _, port = text.removeprefix("tcp://").rpartition(":")
        if not host or not port.isdigit():
            raise ClusterError(f"--cluster {address}: give the scheduler as tcp://HOST:PORT")
        return "tcp", None
    raise ClusterError(
        f"--cluster {address}: not a cluster address (tcp://HOST:PORT, local or local:N)"
    )


def _distributed() -> Any:
    """The ``distributed`` module, imported by name: the type checker need not have the
    optional extra installed, and the arena without ``--cluster`` never loads it."""
    try:
        return importlib.import_module("distributed")
    except ImportError:
        raise ClusterError(f"--cluster needs Dask distributed: {INSTALL_HINT}") from None


def local_cluster(workers: int | None = None, quiet: int = logging.ERROR) -> Any:
    """A Dask ``LocalCluster`` on 127.0.0.1 of ``workers`` single-threaded processes (one
    per core by default: the games are pure Python). No dashboard, and the scheduler's HTTP
    server on a free port: the default 8787 is often taken (another cluster, a test)."""
    distributed = _distributed()
    return distributed.LocalCluster(
        n_workers=(os.cpu_count() or 1) if workers is None else workers,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        silence_logs=quiet,
    )


@contextmanager
def connect(address: str, timeout: float | None = None) -> Iterator[Any]:
    """A Dask client for ``address`` (a local cluster is started, and stopped after)."""
    timeout = CONNECT_TIMEOUT if timeout is None else timeout
    kind, workers = parse_address(address)
    distributed = _distributed()
    if kind == "local":
        try:
            cluster = local_cluster(workers)
        except (OSError, RuntimeError) as error:  # a worker process that could not start
            raise ClusterFailed(f"--cluster {address}: it did not start: {error}") from None
        try:
            with distributed.Client(cluster, timeout=timeout) as client:
                yield client
        finally:
            cluster.close()
        return
    try:
        client = distributed.Client(address.strip(), timeout=timeout)
    except OSError as error:
        raise ClusterFailed(f"--cluster {address}: no scheduler answers: {error}") from None
    with client:
        try:  # a scheduler with no worker would leave the games waiting for ever
            client.wait_for_workers(1, timeout=timeout)
        except (OSError, TimeoutError) as error:
            raise ClusterFailed(
                f"--cluster {address}: no worker joined the scheduler in {timeout:g} s"
            ) from error
        yield client


def run_chunks(
    address: str,
    play: Callable[[C, int, int], R],
    config: C,
    chunks: Sequence[tuple[int, int]],
    done: Callable[[int, R], None],
) -> None:
    """``play(config, start, stop)`` for every chunk on the cluster; ``done(start, result)``
    as each finishes (in the order they finish, as with ``--jobs``). A chunk whose worker
    was lost is run again by the scheduler; an error inside a chunk is raised here."""
    with connect(address) as client:
        distributed = _distributed()
        # One key per chunk and run: a chunk of an earlier run on a shared scheduler is
        # never taken for this one's.
        token = os.urandom(8).hex()
        futures = {
            client.submit(play, config, start, stop, key=f"arena-{token}-{start}", pure=False): (
                start
            )
            for start, stop in chunks
        }
        try:
            for future in distributed.as_completed(futures):
                done(futures[future], future.result())
        except distributed.KilledWorker as error:
            raise ClusterFailed(
                f"--cluster {address}: a chunk of games brought down its workers"
                f" again and again ({error}); given up"
            ) from None
        finally:
            for future in futures:
                future.cancel()
