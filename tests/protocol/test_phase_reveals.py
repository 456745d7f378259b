"""Key releases on their own (protocol/reveals.py), through fake hosts.

When the engine deals, every seat but the one drawing owes its key for each drawn position;
a ``keys`` message releases them. A release for a position not owed yet waits (this peer has
not reached that draw); an empty one, one beyond the deck, one naming a position twice, or a
key that does not match its key point is a violation; an honest one is recorded and the
faces this peer may see are learnt.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from phase_host import FakeHost, FakeTable, message_of, signed

from moska_p2p.protocol import messages as m
from moska_p2p.protocol import stages
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.phase import Violation, Wait


def _dealt_keys_held(preset: str = "moska") -> tuple[FakeTable, FakeHost, FakeHost]:
    """Two peers in play, the deal's key releases made but not delivered."""
    table = FakeTable(2, preset)
    table.held = {m.KEYS}
    table.start()
    first, second = table.hosts
    assert first.stage == second.stage == stages.PLAY
    return table, first, second


def _keys_from(
    table: FakeTable, sender: FakeHost, pairs: Sequence[m.KeyPair]
) -> tuple[m.Message, bytes]:
    assert sender.game_id is not None
    body = m.KeysBody(keys=tuple(pairs))
    return signed(table.identity(sender.me), body, game=sender.game_id, seq=1000)


def _owed_by(host: FakeHost, seat: int) -> list[int]:
    return sorted(pos for s, pos in host.play_phase.reveals.owed if s == seat)


def test_the_deal_makes_every_other_seat_owe_its_keys() -> None:
    _, first, second = _dealt_keys_held()
    owed = _owed_by(first, second.my_seat)
    assert owed  # the second seat owes the first its keys for the first's cards
    assert first.deck is not None
    assert all((second.my_seat, pos) not in first.deck.keys for pos in owed)
    assert first.last(m.KeysBody).keys  # and the first released its own at once


def test_the_honest_release_is_recorded_and_the_faces_learnt() -> None:
    _, first, second = _dealt_keys_held()
    frame = next(f for f in second.frames if message_of(f).type == m.KEYS)
    g = first.game
    assert g is not None
    unknown = [pos for pos, face in enumerate(g.face) if face < 0]
    first.apply(first.peers[second.me], message_of(frame), frame)
    assert _owed_by(first, second.my_seat) == []
    assert first.deck is not None
    mine = sorted(first.play_phase.reveals.face_down(first.my_seat))
    assert mine and all(g.face[pos] >= 0 for pos in mine)  # its own hand, seen now
    assert all(pos in unknown for pos in mine)
    assert all(
        g.face[pos] < 0 for pos in sorted(second.play_phase.reveals.face_down(1 - first.my_seat))
    )


@pytest.mark.parametrize(
    ("pairs", "reason"),
    [
        ([], "an empty key release"),
        ([(40, bytes(32))], "a key for a position beyond the deck"),
    ],
)
def test_a_malformed_release_is_a_violation(pairs: list[m.KeyPair], reason: str) -> None:
    table, first, second = _dealt_keys_held("durak")
    assert first.size == 36  # durak: a 36-card deck
    msg, frame = _keys_from(table, second, pairs)
    with pytest.raises(Violation) as caught:
        first.apply(first.peers[second.me], msg, frame)
    assert (caught.value.kind, caught.value.reason) == (v.PROTOCOL, reason)


def test_a_release_naming_a_position_twice_is_a_violation() -> None:
    table, first, second = _dealt_keys_held()
    pos = _owed_by(first, second.my_seat)[0]
    assert second.deck is not None
    key = second.deck.my_key(pos)
    msg, frame = _keys_from(table, second, [(pos, key), (pos, key)])
    with pytest.raises(Violation, match="naming a position twice"):
        first.apply(first.peers[second.me], msg, frame)


def test_a_key_not_owed_yet_waits() -> None:
    table, first, second = _dealt_keys_held()
    owed = set(_owed_by(first, second.my_seat))
    pos = next(p for p in range(first.size) if p not in owed)
    assert second.deck is not None
    msg, frame = _keys_from(table, second, [(pos, second.deck.my_key(pos))])
    with pytest.raises(Wait):
        first.apply(first.peers[second.me], msg, frame)
    assert _owed_by(first, second.my_seat) == sorted(owed)


def test_a_key_that_does_not_match_its_key_point_is_a_bad_key() -> None:
    table, first, second = _dealt_keys_held()
    owed = _owed_by(first, second.my_seat)
    assert second.deck is not None
    pairs = [(pos, second.deck.my_key(pos)) for pos in owed]
    pairs[-1] = (owed[-1], second.deck.my_key(owed[0]))  # the key of another position
    msg, frame = _keys_from(table, second, pairs)
    with pytest.raises(Violation, match=f"deck position {owed[-1]} does not match") as caught:
        first.apply(first.peers[second.me], msg, frame)
    assert caught.value.kind == v.BAD_KEY
    assert _owed_by(first, second.my_seat) == owed  # nothing of it was recorded
