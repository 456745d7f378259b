"""Strangers at our port: the caps on connections that have not proved their key yet, and
warnings a stranger can cause, rate-limited.

A connection counts against :class:`Admission` (in all, and per address) from its accept
until its handshake is done; a connection beyond the caps is closed at once, and out of file
descriptors the oldest is shed. This is the links' gatekeeper (:mod:`.links`), kept apart
because it is plain bookkeeping with no I/O: the tests drive it directly.
"""

from __future__ import annotations

import logging
import math
import time

import trio

log = logging.getLogger("moska_p2p.net")


class Ticket:
    """An unauthenticated connection's place under the caps (see :class:`Admission`)."""

    __slots__ = ("address", "admission", "scope")

    def __init__(self, admission: Admission, address: str) -> None:
        self.admission: Admission | None = admission
        self.address = address
        self.scope = trio.CancelScope()

    def release(self) -> None:
        """The connection proved its key, or ended: it no longer counts (idempotent)."""
        admission, self.admission = self.admission, None
        if admission is not None:
            admission.leave(self)


class Admission:
    """Counts the connections that have not proved their key yet: at most ``total``, and
    ``per_address`` from one address."""

    def __init__(self, total: int, per_address: int) -> None:
        self.total = self.configured = total
        self.per_address = per_address
        self.pending: dict[Ticket, None] = {}  # oldest first
        self.by_address: dict[str, int] = {}

    def admit(self, address: str) -> Ticket | None:
        if len(self.pending) >= self.total or self.by_address.get(address, 0) >= self.per_address:
            return None
        ticket = Ticket(self, address)
        self.pending[ticket] = None
        self.by_address[address] = self.by_address.get(address, 0) + 1
        return ticket

    def leave(self, ticket: Ticket) -> None:
        self.pending.pop(ticket, None)
        left = self.by_address.get(ticket.address, 1) - 1
        if left > 0:
            self.by_address[ticket.address] = left
        else:
            self.by_address.pop(ticket.address, None)

    def shed(self, count: int = 1) -> None:
        """End the oldest unauthenticated connections (to free their descriptors)."""
        for ticket in list(self.pending)[:count]:
            ticket.scope.cancel()
            ticket.release()

    def squeeze(self) -> None:
        """Out of descriptors: shed the oldest, and admit no more than are left pending."""
        self.shed()
        self.total = max(1, min(self.total, len(self.pending)))

    def relax(self) -> None:
        """The descriptors are back: the configured cap again."""
        self.total = self.configured


class Quiet:
    """Warnings that a stranger can cause, at most ``limit`` per ``window`` seconds, then one
    line saying how many were left out."""

    def __init__(self, limit: int = 5, window: float = 10.0) -> None:
        self.limit, self.window = limit, window
        self.since = -math.inf
        self.count = self.skipped = 0

    def warning(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self.since > self.window:
            if self.skipped:
                log.warning("(%d more such warnings in %.0f s)", self.skipped, now - self.since)
            self.since, self.count, self.skipped = now, 0, 0
        if self.count < self.limit:
            self.count += 1
            log.warning(message, *args)
        else:
            self.skipped += 1
