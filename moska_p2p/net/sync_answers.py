"""How much a peer answers other peers' ``net/sync``: bounded per answer and rate-limited per
asker.

A ``sync`` is a hundred bytes that names what its sender holds; the answer is every frame of
the game the sender lacks, which after a long game is hundreds of KiB. Unbounded, one table
member (or a replay of its request, if it could get one through) could make a peer spend its
uplink, or its share at a relay, sending the same game again and again. So each asker has a
budget of bytes, earned at a steady rate with a burst that covers a whole game's catching up
(a restart), and one answer is at most :data:`MAX_FRAMES` frames; what is held back is not
lost: an asker that still lacks frames asks again (every couple of seconds while it is stuck),
and gets the rest as its budget comes back.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from .relay_proto import Bucket

MAX_FRAMES = 512
"""Frames in one answer at most (the asker asks again for the rest)."""

RATE = 32 * 1024.0
"""Bytes a second one asker earns."""

BURST = 1024 * 1024
"""Bytes one asker may get at once (a whole long game, several times: a restart)."""


class SyncAnswers:
    """Every asker's budget (see the module docstring)."""

    def __init__(self, rate: float = RATE, burst: float = BURST) -> None:
        self.rate, self.burst = rate, burst
        self._budgets: dict[bytes, Bucket] = {}

    def answer(self, asker: bytes, frames: Iterable[bytes], now: float) -> Iterator[bytes]:
        """The frames to send ``asker`` now: the first of ``frames`` (in their order, so the
        asker can apply them) as far as its budget and :data:`MAX_FRAMES` allow."""
        bucket = self._budgets.get(asker)
        if bucket is None:
            bucket = self._budgets[asker] = Bucket(self.rate, self.burst, now)
        for count, frame in enumerate(frames):
            if count >= MAX_FRAMES or not bucket.allows(len(frame), now):
                return
            yield frame
