"""The deck's costly steps off the event loop.

Checking a pass's proof or making this seat's pass takes tens of milliseconds; run in the
trio thread, it would stop the links, the ticks and a person's screen for that long, six
times over in a 6-peer deal. The session is sans-IO and stays so: with ``offload`` set it
hands those steps out as pure jobs (:class:`~moska_p2p.protocol.deck_phase.DeckJob`) and
leaves the message they belong to waiting in its queue. This worker runs each job in a worker
thread (libsodium's calls release the GIL) and gives the outcome back to the session in the
trio thread, so the session itself is only ever touched there.

Two threads at most per session: the check of the previous seat's pass and this seat's own
pass made from that pass's output at the same time (the pipeline), one per core of a small
machine. The order of the protocol is the session's: it makes at most one check at a time,
the one whose turn it is, and signs its own pass only after that check passed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import trio

from ..protocol import verdict as v
from ..protocol.deck_phase import DeckJob
from ..protocol.session import PeerSession

THREADS = 2
"""Jobs of one session running at once: a check and the pass pipelined with it."""


class WorkOwner(Protocol):
    """What the worker uses of its node (the game runner, :mod:`.runner`)."""

    session: PeerSession | None

    def handle(
        self, outputs: Sequence[v.Output], echo_of: tuple[bytes, bytes] | None = None
    ) -> None: ...


class DeckWorker:
    """Runs one session's deck jobs in worker threads (see the module docstring)."""

    def __init__(self, owner: WorkOwner, session: PeerSession, nursery: trio.Nursery) -> None:
        self._owner = owner
        self._session = session
        self._nursery = nursery
        self._limiter = trio.CapacityLimiter(THREADS)
        session.offload = True

    def kick(self) -> None:
        """Start the jobs the session made since the last call (after every session call)."""
        for job in self._session.take_jobs():
            self._nursery.start_soon(self._run, job)

    async def _run(self, job: DeckJob) -> None:
        outcome = await trio.to_thread.run_sync(job.run, limiter=self._limiter)
        session = self._session
        if self._owner.session is not session:
            return  # the node moved on to the next game: this one's work is of no use
        self._owner.handle(session.finish_job(job, outcome, trio.current_time()))
