"""Verdicts and the events a peer session reports.

A :class:`Verdict` stops the game: it names the offending seat (or the seats that did not
answer) and carries the signed frames that prove it, so anyone holding them can check the
accusation without trusting the accuser.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..crypto.identity import fingerprint_of
from . import messages as m
from .frames import FrameError, open_frame

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
ABANDONED = "abandoned"


@dataclass(frozen=True)
class Verdict:
    kind: str
    seats: tuple[int, ...]  # offending seats (-1 while seats are not yet drawn)
    keys: tuple[bytes, ...]  # their public keys
    reason: str
    evidence: tuple[bytes, ...] = field(default=(), repr=False)  # signed frames
    relayed: tuple[bytes, ...] = ()
    """The peers whose link to the verdict's signer went through a relay when it stopped
    (§7.11): what the signer cannot tell apart from their silence (§23). Informative: it
    changes no conviction (a relay can only make a peer look silent, and silence convicts
    nobody, §15.4)."""

    @property
    def conviction(self) -> bool:
        """Whether this verdict convicts its culprits (they lose the game), or only records
        that its signer lost contact with them (PROTOCOL.md §15.4).

        One peer's silence proves nothing about who is at fault: a peer cut off from the
        others sees them all silent, and they see it silent; each can only say "I lost
        contact with X". So a ``timeout`` (silence the table did not corroborate) never
        convicts. Everything else is proven by signed frames anyone can check: a cheat, a
        signed ``leave`` (a resignation), a stop its signer could not prove (a verdict of
        silence this peer did not see, a verdict naming this running peer), ``abandoned``
        (every other seat signed that the culprit went silent at one point of the game)."""
        return self.kind != TIMEOUT

    def describe(self, names: dict[bytes, str] | None = None) -> str:
        who = []
        for seat, key in zip(self.seats, self.keys, strict=True):
            name = (names or {}).get(key)
            label = f"seat {seat}" if seat >= 0 else "a peer"
            who.append(f"{label} ({name + ', ' if name else ''}{fingerprint_of(key)})")
        note = "" if self.conviction else " (lost contact, uncorroborated: not a conviction)"
        if self.kind == ABANDONED:
            signers = [fingerprint_of(k) for k in statement_signers(self.evidence)]
            note = f" (corroborated by {', '.join(signers)})" if signers else ""
        return f"{self.kind}: {', '.join(who)}: {self.reason}{note}"


def relayed_note(verdict: Verdict, keys: tuple[bytes, ...] | None = None) -> str:
    """What a verdict of silence cannot tell apart (§23), in words: the culprits among
    ``keys`` (the verdict's signed ``relayed`` by default) were reached through a relay, and
    a relay that holds frames back looks the same as a silent peer. Empty for a conviction
    (signed frames prove it, whatever carried them) and for direct paths."""
    if verdict.conviction:
        return ""
    relayed = verdict.relayed if keys is None else keys
    through = [fingerprint_of(k) for k in verdict.keys if k in relayed]
    if not through:
        return ""
    return (
        f" (the link to {', '.join(through)} went through a relay: a relay that holds"
        " frames back looks the same)"
    )


def statement_signers(evidence: tuple[bytes, ...]) -> list[bytes]:
    """The signers of the ``silent`` statements among a verdict's evidence (§15.5): who
    corroborated an abandonment. Frames that do not open are skipped (a verdict's evidence
    is checked where it is applied, not here)."""
    out = []
    for frame in evidence:
        try:
            _, payload, _ = open_frame(frame[4:])
            msg = m.parse_payload(payload)
        except FrameError:
            continue
        if msg.type == m.SILENT:
            out.append(msg.sender)
    return out


@dataclass(frozen=True)
class Send:
    """A frame to send to every other peer."""

    frame: bytes


@dataclass(frozen=True)
class Rejected:
    """A frame refused before it could count: unsigned, malformed, from another game, a
    replay. Nobody can be blamed for it (anyone can send such bytes); the game goes on."""

    reason: str
    corrupt: bool = False
    """The bytes are no frame as its signer sent it (malformed, or a signature that does not
    verify): an honest peer never sends such bytes, so the path that carried them is broken
    (a relay that dropped, reordered or duplicated part of a byte stream) or tampered with.
    A driver closes that link and dials again; the frames come back through ``sync``."""


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
