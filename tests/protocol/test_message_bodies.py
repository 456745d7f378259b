"""Typed message bodies (protocol/messages.py): each kind's body is its frozen dataclass, built
by the validator, and gives back the very bytes it came from.

What the code reads is typed (tuples, not lists; a D3 "none" is None); what goes on the wire
is unchanged: a body put back as a map (``to_wire``) encodes to the payload it was parsed from,
byte for byte, for every kind a game sends.
"""

from __future__ import annotations

import dataclasses

import pytest
from protocol_harness import _msg, play_out, start, table

from moska_p2p.protocol import messages as m
from moska_p2p.protocol.frames import FrameError


def _frames_of_every_kind() -> list[bytes]:
    """Frames as the sessions make them: a whole game (a D3 round, keep-alives), a departure
    and the verdicts it brings, and a statement of silence and a disclosure, signed as a
    session signs them."""
    net = table("durak", 3, seed=2)
    start(net)
    later = net.clock + net.sessions[0].abandonment.interval
    for index, session in enumerate(net.sessions):
        net.handle(index, session.tick(later))  # a keep-alive (wait)
    net.deliver_all()
    play_out(net, seed=2)
    frames = list(net.sessions[0].transcript)
    net = table("moska", 3, seed=3)
    start(net)
    net.handle(1, net.sessions[1].leave("bye", net.clock))
    net.deliver_all()
    frames += net.sessions[0].transcript
    session = net.sessions[2]
    other = session.roster[0]
    frames.append(session.craft(m.SILENT, session.abandonment.body(other, 0.0)))
    frames.append(session.craft(m.DISCLOSE, {"keys": [[3, bytes(32)]]}))
    return frames


FRAMES = _frames_of_every_kind()


def test_the_frames_hold_every_kind() -> None:
    assert {_msg(f).type for f in FRAMES} == set(m.MESSAGE_TYPES)


@pytest.mark.parametrize("kind", m.MESSAGE_TYPES)
def test_a_body_is_its_kinds_class_and_puts_back_the_same_bytes(kind: str) -> None:
    for frame in FRAMES:
        msg = _msg(frame)
        if msg.type != kind:
            continue
        body = msg.body
        assert type(body).__name__.lower() == f"{kind}body"
        assert msg.body_as(type(body)) is body
        for field in dataclasses.fields(body):
            value = getattr(body, field.name)
            assert not isinstance(value, list), (kind, field.name)  # read-only: tuples
        with pytest.raises(dataclasses.FrozenInstanceError):
            body.changed = True  # type: ignore[union-attr]
        again = m.encode_payload(
            msg.game, msg.sender, msg.seq, msg.prev, msg.type, m.to_wire(body), msg.heads
        )
        assert again == msg.payload


def test_a_body_read_as_another_kind_is_refused() -> None:
    move = next(_msg(f) for f in FRAMES if _msg(f).type == m.MOVE)
    with pytest.raises(TypeError, match="a move message has no ResultBody"):
        move.body_as(m.ResultBody)


def test_the_typed_fields_are_what_the_wire_said() -> None:
    claims = [_msg(f).body_as(m.ClaimBody) for f in FRAMES if _msg(f).type == m.CLAIM]
    assert any(c.card is None for c in claims)  # "none of that rank" (RULES D3)
    shown = [c.card for c in claims if c.card is not None]
    assert shown and all(isinstance(pos, int) and len(key) == 32 for pos, key in shown)
    hello = next(_msg(f).body_as(m.HelloBody) for f in FRAMES if _msg(f).type == m.HELLO)
    assert isinstance(hello.roster, tuple) and isinstance(hello.config, dict)


def test_a_body_the_validator_refuses_builds_nothing() -> None:
    msg = next(_msg(f) for f in FRAMES if _msg(f).type == m.RESULT)
    wire = {**m.to_wire(msg.body), "losers": [9]}
    with pytest.raises(FrameError, match=r"a seat of result\.losers"):
        m.encode_payload(msg.game, msg.sender, msg.seq, msg.prev, m.RESULT, wire, msg.heads)
