"""Typed message bodies (protocol/messages.py): each kind's body is its frozen dataclass, built
by the validator, and gives back the very bytes it came from.

What the code reads is typed (tuples, not lists; a D3 "none" is None); what goes on the wire
is unchanged: a body put back as a map (``to_wire``) encodes to the payload it was parsed from,
byte for byte, for every kind a game sends. The other way round, what a sender builds (any
valid body of any kind) is what the validator gives the receiver, its map's keys in the
class's field order.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
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
    frames.append(session.craft(m.SILENT, m.to_wire(session.abandonment.body(other, 0.0))))
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


# -- typed -> wire -> validator: what a sender builds is what a receiver reads

_KEY = st.binary(min_size=m.HASH, max_size=m.HASH)
_TEXT = st.characters(exclude_categories=("Cs",))  # surrogates have no UTF-8


def _text(limit: int) -> st.SearchStrategy[str]:
    return st.text(_TEXT, max_size=limit)


def _tuples(item: st.SearchStrategy[Any], limit: int) -> st.SearchStrategy[tuple[Any, ...]]:
    return st.lists(item, max_size=limit).map(tuple)


_PAIR = st.tuples(st.integers(0, m.MAX_POSITIONS - 1), _KEY)
_PROOF = st.binary(max_size=256)
_CONFIG = st.dictionaries(
    _text(12), st.one_of(st.integers(-(1 << 40), 1 << 40), _text(12), st.booleans()), max_size=5
)

BODIES: dict[str, st.SearchStrategy[m.Body]] = {
    m.HELLO: st.builds(
        m.HelloBody,
        name=_text(m.MAX_NAME),
        nonce=_KEY,
        seat_commit=_KEY,
        config=_CONFIG,
        roster=_tuples(_KEY, 6),
    ),
    m.SEAT: st.builds(m.SeatBody, secret=_KEY),
    m.SHUFFLE1: st.builds(
        m.Shuffle1Body, scalar=_KEY, points=_tuples(_KEY, m.MAX_POSITIONS), proof=_PROOF
    ),
    m.SHUFFLE2: st.builds(
        m.Shuffle2Body,
        points=_tuples(_KEY, m.MAX_POSITIONS),
        keys=_tuples(_KEY, m.MAX_POSITIONS),
        proof=_PROOF,
    ),
    m.KEYS: st.builds(m.KeysBody, keys=_tuples(_PAIR, m.MAX_POSITIONS)),
    m.DISCLOSE: st.builds(m.DiscloseBody, keys=_tuples(_PAIR, m.MAX_POSITIONS)),
    m.MOVE: st.builds(
        m.MoveBody, move=_text(80), state=_KEY, cards=_tuples(_PAIR, m.MAX_POSITIONS)
    ),
    m.CLAIM: st.builds(m.ClaimBody, rank=st.integers(0, 12), card=st.none() | _PAIR),
    m.RESULT: st.builds(
        m.ResultBody, state=_KEY, losers=_tuples(st.integers(0, 5), 6), transcript=_KEY
    ),
    m.LEAVE: st.builds(m.LeaveBody, reason=_text(200)),
    m.WAIT: st.builds(m.WaitBody),
    m.SILENT: st.builds(m.SilentBody, culprit=_KEY, point=st.integers(-1, 1 << 20)),
    m.VERDICT: st.builds(
        m.VerdictBody,
        kind=_text(40),
        culprits=_tuples(_KEY, 6),
        reason=_text(400),
        evidence=_tuples(st.binary(max_size=300), m.MAX_EVIDENCE),
        relayed=st.none() | st.lists(_KEY, max_size=6, unique=True).map(tuple),
    ),
}


WIRE_ORDER = {
    m.HELLO: ["name", "nonce", "seat_commit", "config", "roster"],
    m.SEAT: ["secret"],
    m.SHUFFLE1: ["scalar", "points", "proof"],
    m.SHUFFLE2: ["points", "keys", "proof"],
    m.KEYS: ["keys"],
    m.DISCLOSE: ["keys"],
    m.MOVE: ["move", "state", "cards"],
    m.CLAIM: ["rank", "card"],
    m.RESULT: ["state", "losers", "transcript"],
    m.LEAVE: ["reason"],
    m.WAIT: [],
    m.SILENT: ["culprit", "point"],
    m.VERDICT: ["kind", "culprits", "reason", "evidence", "relayed"],
}
"""Each body's keys in the order every peer has signed them (msgpack keeps a map's order):
a class whose fields are reordered would sign other bytes for the same message."""


def test_every_kind_has_a_body_to_try() -> None:
    assert set(BODIES) == set(WIRE_ORDER) == set(m.MESSAGE_TYPES)


@pytest.mark.parametrize("kind", m.MESSAGE_TYPES)
@given(data=st.data())
def test_a_typed_body_sent_is_the_typed_body_received(kind: str, data: st.DataObject) -> None:
    body = data.draw(BODIES[kind])
    assert m.kind_of(body) == kind
    wire = m.to_wire(body)
    absent = ["relayed"] if isinstance(body, m.VerdictBody) and body.relayed is None else []
    assert list(wire) == [name for name in WIRE_ORDER[kind] if name not in absent]
    payload = m.encode_body(bytes(32), bytes(32), 7, bytes(32), body, [(0, b"")])
    assert payload == m.encode_payload(bytes(32), bytes(32), 7, bytes(32), kind, wire, [(0, b"")])
    msg = m.parse_payload(payload)
    assert (msg.type, msg.body) == (kind, body)


def test_a_typed_body_the_validator_would_refuse_is_not_sent() -> None:
    with pytest.raises(FrameError, match=r"claim\.rank = 13 is out of range"):
        m.encode_body(bytes(32), bytes(32), 1, bytes(32), m.ClaimBody(rank=13, card=None))
