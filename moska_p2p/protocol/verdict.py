"""Verdicts and the events a peer session reports.

A :class:`Verdict` stops the game: it names the offending seat (or the seats that did not
answer) and carries the signed frames that prove it, so anyone holding them can check the
accusation without trusting the accuser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..crypto.identity import fingerprint_of

# Kinds of verdict (PROTOCOL.md, "Verdicts").
ILLEGAL_MOVE = "illegal-move"
OUT_OF_TURN = "out-of-turn"
EQUIVOCATION = "equivocation"
BAD_KEY = "bad-key"
BAD_SHUFFLE = "bad-shuffle"
BAD_CARD = "bad-card"
FALSE_CLAIM = "false-claim"
BAD_SEED = "bad-seed"
DISAGREEMENT = "disagreement"
PROTOCOL = "protocol-violation"
TIMEOUT = "timeout"
LEFT = "left"


@dataclass(frozen=True)
class Verdict:
    kind: str
    seats: tuple[int, ...]  # offending seats (-1 while seats are not yet drawn)
    keys: tuple[bytes, ...]  # their public keys
    reason: str
    evidence: tuple[bytes, ...] = field(default=(), repr=False)  # signed frames

    def describe(self, names: dict[bytes, str] | None = None) -> str:
        who = []
        for seat, key in zip(self.seats, self.keys, strict=True):
            name = (names or {}).get(key)
            label = f"seat {seat}" if seat >= 0 else "a peer"
            who.append(f"{label} ({name + ', ' if name else ''}{fingerprint_of(key)})")
        return f"{self.kind}: {', '.join(who)}: {self.reason}"


@dataclass(frozen=True)
class Send:
    """A frame to send to every other peer."""

    frame: bytes


@dataclass(frozen=True)
class Rejected:
    """A frame refused before it could count: unsigned, malformed, from another game, a
    replay. Nobody can be blamed for it (anyone can send such bytes); the game goes on."""

    reason: str


@dataclass(frozen=True)
class Seated:
    seats: tuple[bytes, ...]  # public key of each seat
    dealer: int
    game_id: bytes


@dataclass(frozen=True)
class Moved:
    seat: int
    move: str


@dataclass(frozen=True)
class Finished:
    losers: tuple[int, ...]
    final_state_hash: str


@dataclass(frozen=True)
class Stopped:
    verdict: Verdict


Output = Send | Rejected | Seated | Moved | Finished | Stopped
