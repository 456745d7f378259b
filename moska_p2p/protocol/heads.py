"""Equivocation found without relaying every frame: heads (PROTOCOL.md §8.3).

Every message carries its sender's *heads*: for each roster member, how many of its messages
the sender had applied and the first bytes of the last one's hash. A head that names another
message than the one held here under that number means someone signed two: this peer sends
its copy to everyone, and whoever holds the other has both signed frames, the proof. A
message whose heads contradict this peer's copy waits (judging it would blame its sender for
a difference it did not make) until the other half arrives or the timeout names someone.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from . import messages as m
from .phase import Peer

RESEND = 32  # frames sent again to a stuck peer, at most, per sender and per wait


class Heads:
    """The heads of one peer's roster: what it reports, and what it does about others'."""

    def __init__(
        self,
        roster: Sequence[bytes],
        peers: dict[bytes, Peer],
        send: Callable[[bytes], None],
        relaying: bool,
    ) -> None:
        self.roster = list(roster)
        self.peers = peers
        self.send = send  # a frame to every other peer
        self.relaying = relaying  # an observer sends nothing
        self.relayed: set[tuple[bytes, int]] = set()

    def mine(self) -> list[tuple[int, bytes]]:
        """What this peer has applied of each roster member: sent in every message."""
        return [self.peers[k].head() for k in self.roster]

    def relay(self, sender: bytes, seq: int, frame: bytes) -> None:
        """Send ``sender``'s message ``seq`` to everyone, once."""
        if self.relaying and (sender, seq) not in self.relayed:
            self.relayed.add((sender, seq))
            self.send(frame)

    def compare(self, msg: m.Message) -> None:
        """The sender says which message it holds under each peer's latest number. If this
        peer holds another one, someone signed two: send this peer's copy to everyone, and
        whoever holds the other has both signed frames, the proof of equivocation. A sender
        that says it is stuck (``wait``) and lacks messages this peer has applied gets them."""
        for key, (count, digest) in zip(self.roster, msg.heads, strict=True):
            if key == msg.sender:
                continue
            peer = self.peers[key]
            ours = peer.mismatch(count, digest)
            if ours is not None:
                self.relay(key, count - 1, ours)
            if msg.type == m.WAIT and self.relaying:
                for seq in range(count, min(peer.next_seq, count + RESEND)):
                    self.send(peer.accepted[seq][1])

    def contradicted(self, msg: m.Message) -> list[tuple[bytes, int, bytes]]:
        """Every message ``msg``'s heads name with another hash than this peer's copy has:
        (its sender, its number, this peer's frame)."""
        if len(msg.heads) != len(self.roster):
            return []
        out = []
        for key, (count, digest) in zip(self.roster, msg.heads, strict=True):
            if key == msg.sender or count == 0:
                continue
            held = self.peers[key].held(count - 1)
            if held is not None and held[0][: m.HEAD_HASH] != digest:
                out.append((key, count - 1, held[1]))
        return out

    def show_contradicted(self, msg: m.Message) -> None:
        """Relay this peer's copy of every message ``msg``'s heads name with another hash
        (``msg`` is not queued here: nothing is remembered for messages not held yet)."""
        for key, seq, frame in self.contradicted(msg):
            self.relay(key, seq, frame)

    def contradicts(self, msg: m.Message) -> bool:
        """Whether ``msg``'s heads say its sender built on another message than the one held
        here under some peer's number: one of the two signed both (an equivocation, proven
        once both frames are here) or the sender lies about its heads. Either way ``msg``
        cannot be judged against this peer's copy: judging it would blame the sender for a
        difference it did not make."""
        return bool(self.contradicted(msg))

    def held_back(self) -> list[bytes]:
        """Senders whose next message waits for the other half of an equivocation (its
        heads contradict this peer's copy): in roster order."""
        out = []
        for key in self.roster:
            peer = self.peers[key]
            waiting = peer.inbox.get(peer.next_seq)
            if waiting is not None and self.contradicts(waiting[0]):
                out.append(key)
        return out
