"""Heads on their own (protocol/heads.py, PROTOCOL.md §8.3).

Every message says, per roster member, how many of its messages the sender applied and the
first bytes of the last one's hash. A head naming another message than the one held here
under that number means someone signed two: this peer shows its copy to everyone, once; a
message built on another copy waits; a peer that says it is stuck gets what it lacks.
"""

from __future__ import annotations

from phase_host import identities, signed

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol import messages as m
from moska_p2p.protocol.heads import RESEND, Heads
from moska_p2p.protocol.phase import Peer

GAME = bytes([9]) * 32


class Table:
    """Three roster members' logs, and the heads of the peer that holds them."""

    def __init__(self, relaying: bool = True) -> None:
        self.ids = sorted(identities(3), key=lambda i: i.public_bytes)
        self.roster = [i.public_bytes for i in self.ids]
        self.peers = {k: Peer(key=k, index=n) for n, k in enumerate(self.roster)}
        self.sent: list[bytes] = []
        self.heads = Heads(self.roster, self.peers, self.sent.append, relaying)

    def applied(self, index: int, count: int, label: str = "") -> list[bytes]:
        """``count`` messages of member ``index`` applied here; their frames."""
        identity, peer = self.ids[index], self.peers[self.roster[index]]
        frames = []
        for _ in range(count):
            msg, frame = self.message(identity, m.LeaveBody(reason=label), peer.next_seq)
            peer.accept(msg, frame)
            frames.append(frame)
        return frames

    def message(
        self,
        identity: Identity,
        body: m.Body,
        seq: int,
        heads: list[tuple[int, bytes]] | None = None,
    ) -> tuple[m.Message, bytes]:
        peer = self.peers[identity.public_bytes]
        prev = peer.last_hash if seq == peer.next_seq else m.NO_PREVIOUS
        return signed(
            identity, body, game=GAME, seq=seq, prev=prev, heads=heads or self.heads.mine()
        )


def test_mine_reports_what_was_applied_of_each_member() -> None:
    table = Table()
    assert table.heads.mine() == [(0, b"")] * 3
    frames = table.applied(1, 2)
    held = table.peers[table.roster[1]].accepted[1][0]
    assert table.heads.mine() == [(0, b""), (2, held[: m.HEAD_HASH]), (0, b"")]
    assert frames


def test_a_head_naming_another_copy_gets_ours_shown_to_everyone_once() -> None:
    table = Table()
    (ours,) = table.applied(1, 1, "ours")
    other, _ = signed(table.ids[1], m.LeaveBody(reason="theirs"), game=GAME, seq=0)
    heads = [(0, b""), (1, other.hash[: m.HEAD_HASH]), (0, b"")]
    msg, _ = table.message(table.ids[2], m.WaitBody(), 0, heads)
    assert table.heads.contradicts(msg)
    table.heads.compare(msg)
    table.heads.compare(msg)
    assert table.sent == [ours]  # relayed once, however often it is named


def test_a_head_agreeing_with_ours_relays_nothing() -> None:
    table = Table()
    table.applied(1, 1)
    msg, _ = table.message(table.ids[2], m.WaitBody(), 0)
    assert not table.heads.contradicts(msg)
    table.heads.compare(msg)
    assert table.sent == []


def test_a_queued_message_built_on_another_copy_holds_its_sender_back() -> None:
    table = Table()
    table.applied(1, 1, "ours")
    other, _ = signed(table.ids[1], m.LeaveBody(reason="theirs"), game=GAME, seq=0)
    heads = [(0, b""), (1, other.hash[: m.HEAD_HASH]), (0, b"")]
    msg, frame = table.message(table.ids[2], m.WaitBody(), 0, heads)
    table.peers[table.roster[2]].queue(msg, frame)
    assert table.heads.held_back() == [table.roster[2]]


def test_a_stuck_peer_gets_the_frames_it_lacks_and_an_observer_sends_nothing() -> None:
    for relaying in (True, False):
        table = Table(relaying)
        frames = table.applied(0, RESEND + 5)
        # Member 2 says it has applied 3 of member 0's messages (the same ones held here).
        held = table.peers[table.roster[0]].accepted[2][0]
        heads = [(3, held[: m.HEAD_HASH]), (0, b""), (0, b"")]
        msg, _ = table.message(table.ids[2], m.WaitBody(), 0, heads)
        table.heads.compare(msg)
        assert table.sent == (frames[3 : 3 + RESEND] if relaying else [])
