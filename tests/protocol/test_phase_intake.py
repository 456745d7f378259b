"""A frame's way in on its own (protocol/intake.py), through a fake gate.

Bytes nobody can be blamed for (malformed, a copy, a stranger's, forged, another game's, a
first message that is no hello, too many before the game id) are rejected; a signed frame that
contradicts its sender's earlier one, has the wrong heads or floods the sender's window is a
violation naming its signer; a frame that passes waits in its sender's queue.
"""

from __future__ import annotations

import pytest
from phase_host import config_for, identities, signed

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import stages
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import table_id
from moska_p2p.protocol.frames import encode_frame, open_frame
from moska_p2p.protocol.heads import Heads
from moska_p2p.protocol.intake import LIMBO_FRAMES, Intake
from moska_p2p.protocol.ordering import WINDOW
from moska_p2p.protocol.phase import Peer, Violation

PLAYERS = 3
GAME = bytes([7]) * 32


class FakeGate:
    """``intake.Gate``: what the intake reads of a session, and what it did to it."""

    def __init__(self) -> None:
        self.ids = identities(PLAYERS)
        self.roster = sorted(i.public_bytes for i in self.ids)
        self.peers = {k: Peer(key=k, index=n) for n, k in enumerate(self.roster)}
        self.table_id = table_id(config_for(PLAYERS), self.roster)
        self.game_id: bytes | None = GAME
        self.stage = stages.PLAY
        self.events: list[v.Output] = []
        self.violations: list[Violation] = []
        self.heard: list[bytes] = []
        self.relayed: list[bytes] = []
        self.heads = Heads(self.roster, self.peers, self.relayed.append, True)

    def emit(self, output: v.Output) -> None:
        self.events.append(output)

    def stop_for(self, violation: Violation) -> None:
        self.violations.append(violation)
        self.stage = stages.STOPPED

    def heard_from(self, peer: Peer) -> None:
        self.heard.append(peer.key)


def _frame(
    identity: Identity,
    seq: int,
    body: m.Body | None = None,
    game: bytes = GAME,
    heads: int = PLAYERS,
) -> bytes:
    """A frame of ``identity``'s (a ``wait`` unless ``body`` says otherwise)."""
    body = body or m.WaitBody()
    _, frame = signed(identity, body, game=game, seq=seq, heads=[(0, b"")] * heads)
    return frame


def _rejections(gate: FakeGate) -> list[str]:
    return [e.reason for e in gate.events if isinstance(e, v.Rejected)]


def test_a_frame_that_passes_waits_in_its_senders_queue() -> None:
    gate = FakeGate()
    intake = Intake(gate)
    sender = gate.ids[1]
    assert intake.ingest(_frame(sender, 1))
    peer = gate.peers[sender.public_bytes]
    assert list(peer.inbox) == [1]
    assert gate.heard == [sender.public_bytes]  # its contact clock runs again
    assert not intake.ingest(_frame(sender, 1))  # a copy is dropped, silently
    assert gate.events == [] and gate.violations == []


def test_bytes_that_are_no_frame_are_rejected_as_corrupt() -> None:
    gate = FakeGate()
    intake = Intake(gate)
    assert not intake.ingest(b"\x00\x00\x00\x05abc")
    (event,) = gate.events
    assert isinstance(event, v.Rejected) and event.corrupt
    assert "malformed frame" in event.reason


def test_a_stranger_and_a_forged_signature_are_rejected() -> None:
    gate = FakeGate()
    intake = Intake(gate)
    stranger = Identity.from_seed(bytes([99]) * 32)
    assert not intake.ingest(_frame(stranger, 1))
    frame = _frame(gate.ids[1], 1)
    kind, payload, _ = open_frame(frame[4:])
    forged = encode_frame(kind, payload, gate.ids[2].sign(kind, payload))
    assert not intake.ingest(forged)
    assert _rejections(gate) == [
        "a frame from a key that is not at this table",
        "a forged signature (claims seq 1)",
    ]
    assert all(not p.inbox for p in gate.peers.values())


def test_a_first_message_that_is_no_hello_and_another_games_frame_are_rejected() -> None:
    gate = FakeGate()
    intake = Intake(gate)
    intake.ingest(_frame(gate.ids[1], 0, game=gate.table_id))  # signed, so taken in...
    intake.ingest(_frame(gate.ids[1], 1, game=bytes(32)))
    assert not gate.peers[gate.ids[1].public_bytes].inbox  # ...but queued nowhere
    assert _rejections(gate) == [
        "a first message that is not a hello",
        "a frame from another game or table",
    ]


def test_frames_before_the_game_id_are_held_then_admitted() -> None:
    gate = FakeGate()
    gate.game_id = None
    intake = Intake(gate)
    sender = gate.ids[0]
    assert intake.ingest(_frame(sender, 1))
    peer = gate.peers[sender.public_bytes]
    assert not peer.inbox and len(intake.limbo) == 1
    gate.game_id = GAME
    intake.release()
    assert list(peer.inbox) == [1] and intake.limbo == []


def test_the_frames_held_before_the_game_id_are_bounded() -> None:
    gate = FakeGate()
    gate.game_id = None
    intake = Intake(gate)
    for seq in range(1, LIMBO_FRAMES + 2):
        intake.ingest(_frame(gate.ids[seq % PLAYERS], seq))
    assert len(intake.limbo) == LIMBO_FRAMES
    assert _rejections(gate) == ["too many frames before every hello arrived"]


def test_two_messages_under_one_number_are_an_equivocation() -> None:
    gate = FakeGate()
    intake = Intake(gate)
    cheat = gate.ids[2]
    first = _frame(cheat, 1, m.LeaveBody(reason="a"))
    second = _frame(cheat, 1, m.LeaveBody(reason="b"))
    assert intake.ingest(first)
    intake.ingest(second)
    (violation,) = gate.violations
    assert violation.kind == v.EQUIVOCATION
    assert violation.sender == cheat.public_bytes
    assert violation.evidence == (first, second)  # both signed frames: the proof


@pytest.mark.parametrize(
    ("seq", "heads", "reason"),
    [
        (1, PLAYERS - 1, "has 2 heads, not one per player"),
        (WINDOW + 1, PLAYERS, "beyond the window"),
    ],
)
def test_wrong_heads_and_a_flood_are_violations(seq: int, heads: int, reason: str) -> None:
    gate = FakeGate()
    intake = Intake(gate)
    sender = gate.ids[1]
    intake.ingest(_frame(sender, seq, heads=heads))
    (violation,) = gate.violations
    assert violation.kind == v.PROTOCOL and reason in violation.reason
    assert violation.sender == sender.public_bytes
    assert not gate.peers[sender.public_bytes].inbox


def test_a_verdicts_evidence_is_taken_as_if_it_had_arrived_on_its_own() -> None:
    gate = FakeGate()
    intake = Intake(gate)
    evidence = _frame(gate.ids[1], 1)
    body = m.VerdictBody(
        kind=v.PROTOCOL,
        culprits=(gate.ids[1].public_bytes,),
        reason="test",
        evidence=(evidence,),
        relayed=(),
    )
    assert intake.ingest(_frame(gate.ids[2], 1, body))
    assert list(gate.peers[gate.ids[1].public_bytes].inbox) == [1]  # the evidence, queued
    assert list(gate.peers[gate.ids[2].public_bytes].inbox) == [1]  # and the verdict
