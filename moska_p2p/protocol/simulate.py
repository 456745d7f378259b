"""Peers in one process: an in-memory network that wires 2 to 6 :class:`PeerSession`s.

It is the network behind ``moska simulate`` (whose seats
:func:`moska_p2p.table.simulate.run_game` drives), a benchmark, a fixture generator, and the
test harness: a ``tamper`` hook sees every frame on its way from one peer to another and may drop,
delay, duplicate, corrupt or replace it. Time is virtual, so timeouts are tested instantly.
"""

from __future__ import annotations

import hashlib
import random
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..crypto.identity import Identity
from . import verdict as v
from .config import TableConfig
from .session import DONE, PeerSession, drbg
from .transcript import write_transcript

# tamper(source, destination, frame) -> the frames to deliver instead (empty list: drop)
Tamper = Callable[[int, int, bytes], list[bytes]]


@dataclass
class SimulationResult:
    sessions: list[PeerSession]
    verdicts: list[v.Verdict | None]
    rejected: list[list[str]]
    frames: int = 0
    bytes: int = 0
    clock: float = 0.0
    events: list[list[v.Output]] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return all(s.stage == DONE for s in self.sessions)


class Network:
    """Delivers every frame a session sends to every other session, in FIFO order (or in a
    seeded shuffled order with ``reorder=True``)."""

    def __init__(
        self,
        sessions: Sequence[PeerSession],
        *,
        tamper: Tamper | None = None,
        reorder: bool = False,
        seed: int = 0,
    ) -> None:
        self.sessions = list(sessions)
        self.queue: deque[tuple[int, int, bytes]] = deque()
        self.tamper = tamper
        self.reorder = reorder
        self.rng = random.Random(seed)
        self.clock = 0.0
        self.frames = 0
        self.bytes = 0
        self.verdicts: list[v.Verdict | None] = [None] * len(sessions)
        self.rejected: list[list[str]] = [[] for _ in sessions]
        self.events: list[list[v.Output]] = [[] for _ in sessions]

    def handle(self, index: int, outputs: list[v.Output]) -> None:
        for out in outputs:
            self.events[index].append(out)
            if isinstance(out, v.Send):
                for other in range(len(self.sessions)):
                    if other != index:
                        self.queue.append((index, other, out.frame))
            elif isinstance(out, v.Stopped):
                self.verdicts[index] = out.verdict
            elif isinstance(out, v.Rejected):
                self.rejected[index].append(out.reason)

    def deliver_all(self, limit: int = 1_000_000) -> None:
        for _ in range(limit):
            if not self.queue:
                return
            if self.reorder and len(self.queue) > 1:
                self.queue.rotate(-self.rng.randrange(len(self.queue)))
            source, target, frame = self.queue.popleft()
            frames = self.tamper(source, target, frame) if self.tamper else [frame]
            for item in frames:
                self.frames += 1
                self.bytes += len(item)
                self.handle(target, self.sessions[target].receive(item, self.clock))
        raise RuntimeError("the network did not settle")


def make_peers(
    config: TableConfig,
    identities: Sequence[Identity],
    *,
    seed: int | None = None,
    names: Sequence[str] | None = None,
) -> list[PeerSession]:
    roster = [i.public_bytes for i in identities]
    sessions = []
    for index, identity in enumerate(identities):
        rng = None
        if seed is not None:
            # Not for real games: a seeded stream makes a simulation repeatable.
            rng = drbg(hashlib.sha256(f"{seed}/{index}".encode()).digest())
        sessions.append(
            PeerSession(
                identity,
                config,
                roster,
                name=names[index] if names else f"peer{index}",
                rng=rng,
            )
        )
    return sessions


def save_transcripts(result: SimulationResult, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for session in result.sessions:
        seat = session.my_seat
        path = (
            directory
            / f"seat{seat}-{session.identity.fingerprint if session.identity else 'observer'}.moska"
        )
        write_transcript(path, session.me, session.config, session.roster, session.transcript)
        paths.append(path)
    return paths
