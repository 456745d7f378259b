"""Abandonment, proven by corroboration (PROTOCOL.md §15.1, §15.5): the two clocks a peer
keeps on every seat the game waits for, and the signed statements that turn one seat's
silence into its forfeit.

One peer's silence proves nothing: "X is silent" and "I am cut off" look the same from the
inside. But when *every other* seat signs that it lost X at the same point of the game, the
only seat nobody hears is X: it left. So:

- the **move clock**: the seats the game waits for have ``config.timeout`` to act, from the
  last progress (or from when they came back in contact);
- the **contact clock**: the time since this peer last admitted any signed frame of the seat,
  relayed ones included (a running peer sends a keep-alive ``wait`` every ``interval``, so
  it is heard through the others when one link is down). A seat out of contact gets
  ``config.grace`` from its last frame to come back, however its move clock stands;
- past its deadline this peer signs a ``silent`` statement ``{culprit, point}``: ``point`` is
  the sequence number of the culprit's last *act* applied here (any message but ``wait`` and
  ``silent``), so every seat that saw the same game names the same point. A statement is moot
  once the culprit's next act is applied;
- holding statements about one culprit at one point from every other seat (at least two),
  a peer stops with ``abandoned``, the statements as evidence: a conviction.

This module is a small part the session owns and calls (no clock of its own: the session
passes its ``now``); it raises :class:`~.phase.Violation` to stop the game.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from . import messages as m
from . import verdict as v
from .phase import Violation

if TYPE_CHECKING:
    from .phase import Host, Peer

MOVE, CONTACT = "move", "contact"


@dataclass(frozen=True)
class Waiting:
    """What the table waits for, for one seat: whose turn it is, which clock runs and how
    many seconds are left on it (0: its deadline passed)."""

    key: bytes
    seat: int
    name: str
    clock: str  # MOVE: it is heard and has its move clock; CONTACT: it is not heard
    left: float
    silent_since: float  # seconds since this peer last heard it


def is_act(kind: str) -> bool:
    """Whether a message kind moves its sender's point on (a keep-alive or a statement about
    someone else does not)."""
    return kind not in (m.WAIT, m.SILENT)


class Abandonment:
    """The statements of one game, and the clocks they are signed by."""

    def __init__(self, host: Host) -> None:
        self.host = host
        # (culprit, point) -> signer -> its statement frame
        self.statements: dict[tuple[bytes, int], dict[bytes, bytes]] = {}
        self.signed: dict[bytes, tuple[int, float]] = {}  # culprit -> (point, when) of ours
        self.back_at: dict[bytes, float] = {}  # when a seat came back in contact

    # ------------------------------------------------------------------ the clocks

    @property
    def interval(self) -> float:
        """How often a running peer says it is alive (a keep-alive ``wait``)."""
        config = self.host.config
        return min(config.timeout, config.grace) / 6

    @property
    def lapse(self) -> float:
        """Silence after which a seat is out of contact: three keep-alives missed."""
        return 3 * self.interval

    def heard(self, peer: Peer, now: float) -> None:
        """A new signed frame of ``peer`` was admitted (direct or relayed)."""
        if now - peer.contact_at > self.lapse:
            self.back_at[peer.key] = now  # back in contact: a fresh move clock
        peer.contact_at = max(peer.contact_at, now)

    def reset(self, now: float) -> None:
        """This peer was not running (suspended): the silence it did not watch counts for
        nobody, so every contact clock starts again."""
        for peer in self.host.peers.values():
            peer.contact_at = now

    def in_contact(self, key: bytes, now: float) -> bool:
        return now - self.host.peers[key].contact_at <= self.lapse

    def deadline(self, key: bytes, since: float, now: float) -> tuple[str, float]:
        """When the table may call ``key`` gone, waiting for it since ``since`` (the last
        progress): its move clock while it is heard, the grace from its last frame when not
        (never earlier than its move clock)."""
        config = self.host.config
        moves = max(since, self.back_at.get(key, since)) + config.timeout
        if self.in_contact(key, now):
            return MOVE, moves
        return CONTACT, max(moves, self.host.peers[key].contact_at + config.grace)

    def status(self, waiting: list[bytes], since: float, now: float) -> list[Waiting]:
        host = self.host
        out = []
        for key in waiting:
            if key == host.me:
                continue
            clock, at = self.deadline(key, since, now)
            peer = host.peers[key]
            out.append(
                Waiting(
                    key,
                    host.seat_of.get(key, -1),
                    peer.name,
                    clock,
                    max(0.0, at - now),
                    max(0.0, now - peer.contact_at),
                )
            )
        return out

    # ------------------------------------------------------------------ statements

    def point(self, key: bytes) -> int:
        return self.host.peers[key].last_act

    def corroborating(self) -> bool:
        """Whether this table can corroborate a silence: seats drawn, and a third seat to
        witness it (two seats: each can only say it lost the other, §15.4)."""
        host = self.host
        return len(host.roster) >= 3 and bool(host.seats)

    def due(self, waiting: list[bytes], since: float, now: float) -> list[bytes]:
        """The seats this peer should sign a statement about now: past their deadline, and
        not already stated at their current point."""
        out = []
        for key in waiting:
            if key == self.host.me:
                continue
            _, at = self.deadline(key, since, now)
            mine = self.signed.get(key)
            if now >= at and (mine is None or mine[0] != self.point(key)):
                out.append(key)
        return out

    def stated(self, key: bytes) -> float | None:
        """When this peer signed its statement about ``key`` at its current point."""
        mine = self.signed.get(key)
        return mine[1] if mine is not None and mine[0] == self.point(key) else None

    def body(self, key: bytes, now: float) -> m.SilentBody:
        """This peer's statement that ``key`` is silent at its current point (kept as signed
        at ``now``, so it is not signed twice)."""
        point = self.point(key)
        self.signed[key] = (point, now)
        return m.SilentBody(culprit=key, point=point)

    def on_silent(self, peer: Peer, msg: m.Message, frame: bytes) -> None:
        """A statement (this peer's own included): kept, and the quorum checked."""
        host = self.host
        body = msg.body_as(m.SilentBody)
        culprit, point = body.culprit, body.point
        if culprit not in host.peers or culprit == peer.key:
            raise Violation(
                v.PROTOCOL, peer.key, "a statement of silence about itself or nobody", (frame,)
            )
        if not self.corroborating():
            return  # nothing to corroborate: kept in the transcript only
        self.statements.setdefault((culprit, point), {})[peer.key] = frame
        self.check(culprit)

    def quorum(self, culprit: bytes, point: int) -> tuple[bytes, ...] | None:
        """The statements of every other seat about ``culprit`` at ``point``, or None."""
        held = self.statements.get((culprit, point), {})
        others = [k for k in self.host.roster if k != culprit]
        if len(others) < 2 or any(k not in held for k in others):
            return None
        return tuple(held[k] for k in others)

    def check(self, culprit: bytes) -> None:
        """Stop with ``abandoned`` once every other seat has signed that ``culprit`` went
        silent at its current point (a statement about an earlier point is moot)."""
        point = self.point(culprit)
        frames = self.quorum(culprit, point)
        if frames is not None:
            raise Violation(
                v.ABANDONED,
                culprit,
                f"went silent after its message {point}: every other seat signed it",
                frames,
            )

    def proves(self, culprit: bytes, evidence: list[bytes]) -> tuple[bytes, ...] | None:
        """Another peer's ``abandoned`` verdict: whether its evidence (applied here already)
        is a quorum of statements about ``culprit`` at one point."""
        points = {point for (key, point) in self.statements if key == culprit}
        for point in points:
            frames = self.quorum(culprit, point)
            if frames is not None and set(frames) <= set(evidence):
                return frames
        return None
