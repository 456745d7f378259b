"""A frame's way in: everything it must pass before it waits in its sender's queue.

The session hands every frame it receives (and every evidence frame a verdict carries) to
:class:`Intake`: a frame that is malformed, a copy, from a key not at the table, forged, of
another game, or sent before the game id is known beyond a bounded number is *rejected* (nobody
can be blamed for bytes anyone can send); a signed frame that contradicts the sender's own
earlier message (an equivocation), has the wrong heads or floods the sender's window is a
*violation* naming its signer. A frame that passes goes into its sender's order
(:class:`~.ordering.SenderLog`), where the session applies it when its turn comes (§8.2).
"""

from __future__ import annotations

import struct
from typing import Protocol

from ..crypto.identity import verify
from . import messages as m
from . import verdict as v
from .frames import FrameError, open_frame
from .heads import Heads
from .phase import Peer, Violation
from .stages import STOPPED

LIMBO_FRAMES = 64  # frames held before the game id is known (hellos still missing)
LIMBO_BYTES = 1 << 20


class Gate(Protocol):
    """What the intake reads of the session, and how it stops it (a violation)."""

    def emit(self, output: v.Output) -> None:
        """Add an event (a rejected frame) to what the session returns."""

    @property
    def stage(self) -> int: ...

    @property
    def table_id(self) -> bytes: ...

    @property
    def game_id(self) -> bytes | None: ...

    @property
    def roster(self) -> list[bytes]: ...

    @property
    def peers(self) -> dict[bytes, Peer]: ...

    @property
    def heads(self) -> Heads: ...

    def stop_for(self, violation: Violation) -> None:
        """Stop the session with a verdict naming the violation's sender."""

    def heard_from(self, peer: Peer) -> None: ...


class Intake:
    """The frames seen so far, and those held until the game id is known."""

    def __init__(self, host: Gate) -> None:
        self.host = host
        self.seen: set[bytes] = set()  # message hashes: a copy is dropped
        self.limbo: list[tuple[m.Message, bytes]] = []
        self.evidence_depth = 0

    def release(self) -> None:
        """The game id is known now: admit the frames that came before it."""
        limbo, self.limbo = self.limbo, []
        for msg, frame in limbo:
            self.admit(msg, frame)

    def ingest(self, frame: bytes) -> bool:
        """Check a frame's envelope and signature and queue it; whether it was new."""
        try:
            if not isinstance(frame, bytes) or len(frame) < 4:
                raise FrameError("a frame is a 4-byte length prefix and a body")
            body = frame[4:]
            if struct.unpack(">I", frame[:4])[0] != len(body):
                raise FrameError("the length prefix does not match the frame")
            kind, payload, signature = open_frame(body)
            msg = m.parse_payload(payload)
        except FrameError as error:
            # (A verdict's evidence is another matter: whoever signed the verdict chose it.)
            corrupt = self.evidence_depth == 0
            self.host.emit(v.Rejected(f"malformed frame: {error}", corrupt=corrupt))
            return False
        if msg.hash in self.seen:
            return False  # a copy (relays make copies normal; a replay changes nothing)
        peer = self.host.peers.get(msg.sender)
        if peer is None:
            self.host.emit(v.Rejected("a frame from a key that is not at this table"))
            return False
        if kind != msg.type or not verify(msg.sender, kind, payload, signature):
            self.host.emit(
                v.Rejected(
                    f"a forged signature (claims seq {msg.seq})",
                    corrupt=self.evidence_depth == 0,
                )
            )
            return False
        self.admit(msg, frame)
        return True

    def admit(self, msg: m.Message, frame: bytes) -> None:
        """A validly signed message from a roster member: dedupe, check game, queue."""
        expected = self.host.table_id if msg.seq == 0 else self.host.game_id
        if msg.seq == 0 and msg.type != m.HELLO:
            self.host.emit(v.Rejected("a first message that is not a hello"))
            return
        if msg.type == m.VERDICT:
            # Its evidence counts as if it had arrived on its own, at once and whatever the
            # verdict's own fate (another game's, or queued behind a message that cannot
            # apply): the other half of an equivocation often comes only this way.
            self.take_evidence(msg)
            if self.host.stage == STOPPED:
                return
            if msg.seq == 1 and msg.game == self.host.table_id:
                expected = self.host.table_id  # a verdict signed before its sender knew the game id
        if expected is None or msg.game != expected:
            # Heads that name another copy of a message held here: show ours to everyone (a
            # hello signed twice splits the table into two games that reject each other's
            # frames; this is how each half learns of the other).
            self.host.heads.show_contradicted(msg)
        if expected is None:
            held = sum(len(f) for _, f in self.limbo)
            if len(self.limbo) >= LIMBO_FRAMES or held + len(frame) > LIMBO_BYTES:
                self.host.emit(v.Rejected("too many frames before every hello arrived"))
                return
            self.seen.add(msg.hash)  # a later copy is dropped like any duplicate
            self.limbo.append((msg, frame))  # the game id is not known yet
            return
        if msg.game != expected:
            self.host.emit(v.Rejected("a frame from another game or table"))
            return
        peer = self.host.peers[msg.sender]
        if len(msg.heads) != len(self.host.roster):
            self.host.stop_for(
                Violation(
                    v.PROTOCOL,
                    msg.sender,
                    f"its message {msg.seq} has {len(msg.heads)} heads, not one per player",
                    (frame,),
                )
            )
            return
        earlier = peer.held(msg.seq)
        if earlier is not None:
            self.host.stop_for(
                Violation(
                    v.EQUIVOCATION,
                    msg.sender,
                    f"signed two different messages with sequence number {msg.seq}",
                    (earlier[1], frame),
                )
            )
            return
        if msg.seq < peer.next_seq:  # pragma: no cover - caught as equivocation above
            return
        refusal = peer.refusal(msg, frame)
        if refusal is not None:
            self.host.stop_for(Violation(v.PROTOCOL, msg.sender, refusal, (frame,)))
            return
        self.seen.add(msg.hash)
        self.host.heard_from(peer)  # its contact clock (§15.1), relayed frames included
        if peer.queue(msg, frame):
            self.host.heads.relay(msg.sender, msg.seq, frame)
        self.host.heads.compare(msg)

    def take_evidence(self, msg: m.Message) -> None:
        """Admit a verdict's evidence frames as if each had just arrived (bounded depth: an
        adopted verdict carries the verdict it adopted, and no deeper)."""
        if self.evidence_depth >= 2:
            return
        self.evidence_depth += 1
        try:
            for evidence in msg.body_as(m.VerdictBody).evidence:
                if self.host.stage == STOPPED:
                    return
                self.ingest(evidence)
        finally:
            self.evidence_depth -= 1
