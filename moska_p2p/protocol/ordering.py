"""Per-sender order: each peer's messages apply one by one, in sequence order, inside bounds.

A :class:`SenderLog` holds what one sender's messages have done so far here (how many applied,
the hash of the last, every frame applied) and the ones that arrived early, waiting for their
turn. It decides, for a new message, whether it is an equivocation (another signed message
under a number already held), beyond the window of numbers or bytes that may wait (a flood:
a protocol violation, so memory stays bounded whatever a roster member sends), or fine to
queue (PROTOCOL.md, "Per-sender order").

It also keeps the *heads* other peers report about this sender (how many of its messages they
applied and the hash of the last): a head that does not match what is held here means the
sender signed two messages under one number, found without relaying every frame to everyone.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import messages as m

# A sender's messages may run ahead of what can apply by this many sequence numbers and
# this many bytes; anything further is a protocol violation (bounded memory per peer).
WINDOW = 256
BUDGET = 4 << 20
HEARD = 4 * WINDOW  # heads about messages not here yet, kept at most


@dataclass
class SenderLog:
    next_seq: int = 0
    last_hash: bytes = m.NO_PREVIOUS
    inbox: dict[int, tuple[m.Message, bytes]] = field(default_factory=dict)
    inbox_bytes: int = 0
    accepted: dict[int, tuple[bytes, bytes]] = field(default_factory=dict)  # seq -> hash, frame
    heard: dict[int, bytes] = field(default_factory=dict)  # seq -> hash8 another peer holds

    def held(self, seq: int) -> tuple[bytes, bytes] | None:
        """(hash, frame) of the message held under ``seq``, applied or waiting."""
        if seq in self.accepted:
            return self.accepted[seq]
        if seq in self.inbox:
            msg, frame = self.inbox[seq]
            return msg.hash, frame
        return None

    def refusal(self, msg: m.Message, frame: bytes) -> str | None:
        """Why ``msg`` may not wait here (``None``: it may)."""
        if msg.seq >= self.next_seq + WINDOW or self.inbox_bytes + len(frame) > BUDGET:
            return (
                f"sent message {msg.seq} while {self.next_seq} could not apply yet: "
                f"beyond the window of {WINDOW} messages or {BUDGET >> 20} MiB"
            )
        return None

    def queue(self, msg: m.Message, frame: bytes) -> bool:
        """Keep ``msg`` until its turn; whether a head heard earlier names another message
        under its number (an equivocation whose other half someone else holds)."""
        self.inbox[msg.seq] = (msg, frame)
        self.inbox_bytes += len(frame)
        heard = self.heard.pop(msg.seq, None)
        return heard is not None and heard != msg.hash[: m.HEAD_HASH]

    def next_waiting(self) -> tuple[m.Message, bytes] | None:
        return self.inbox.get(self.next_seq)

    def accept(self, msg: m.Message, frame: bytes) -> None:
        self.accepted[msg.seq] = (msg.hash, frame)
        self.next_seq += 1
        self.last_hash = msg.hash

    def unaccept(self, seq: int, before: tuple[int, bytes]) -> None:
        """Undo :meth:`accept` for a message that turned out unable to apply yet."""
        self.next_seq, self.last_hash = before
        del self.accepted[seq]

    def done(self, seq: int) -> None:
        """The message under ``seq`` applied: it no longer waits."""
        _, frame = self.inbox.pop(seq)
        self.inbox_bytes -= len(frame)

    def head(self) -> tuple[int, bytes]:
        return self.next_seq, self.last_hash[: m.HEAD_HASH] if self.next_seq else b""

    def mismatch(self, count: int, digest: bytes) -> bytes | None:
        """Another peer says it holds ``digest`` as this sender's message ``count - 1``: the
        frame held here under that number if it differs (to send to everyone), else ``None``;
        a head about a message not here yet is kept for when it comes."""
        if count == 0:
            return None
        seq = count - 1
        held = self.held(seq)
        if held is not None:
            return held[1] if held[0][: m.HEAD_HASH] != digest else None
        if self.next_seq <= seq < self.next_seq + WINDOW and len(self.heard) < HEARD:
            self.heard.setdefault(seq, digest)
        return None

    def run_length(self) -> int:
        """How many queued messages follow the last applied one without a gap."""
        count = 0
        while self.next_seq + count in self.inbox:
            count += 1
        return count
