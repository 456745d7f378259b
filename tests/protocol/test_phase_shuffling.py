"""The deck stages on their own (protocol/shuffling.py), through fake hosts.

Passes go in seat order, every seat's ``shuffle1`` then every seat's ``shuffle2``
(PROTOCOL.md §10): a later seat's pass waits for the earlier ones, a pass out of its turn or
with a proof that does not hold is a violation, and each seat sends its own when its turn
comes. The last pass in, the play begins.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from phase_host import FakeHost, FakeTable, message_of, signed

from moska_p2p.protocol import messages as m
from moska_p2p.protocol import stages
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.phase import Violation, Wait

PLAYERS = 3


def _held_at_the_first_pass() -> FakeTable:
    """Seated, every pass held back: seat 0 has sent its first pass, nobody has it yet."""
    table = FakeTable(PLAYERS)
    table.held = {m.SHUFFLE1, m.SHUFFLE2}
    table.start()
    assert all(h.stage == stages.SHUFFLE1 for h in table.hosts)
    return table


def _pass_of(table: FakeTable, seat: int, kind: str) -> tuple[m.Message, bytes]:
    frame = next(f for f in table.at_seat(seat).frames if message_of(f).type == kind)
    return message_of(frame), frame


def _apply(host: FakeHost, msg: m.Message, frame: bytes) -> None:
    host.apply(host.peers[msg.sender], msg, frame)


def test_only_the_first_seat_shuffles_at_once_and_everyone_waits_on_it() -> None:
    table = _held_at_the_first_pass()
    first = table.at_seat(0)
    for host in table.hosts:
        sent = [kind for kind in host.kinds_sent() if kind in (m.SHUFFLE1, m.SHUFFLE2)]
        assert sent == ([m.SHUFFLE1] if host is first else [])
    for host in table.hosts:
        if host is not first:
            assert host.shuffling.waiting_on() == [first.me]


def test_a_later_seats_pass_waits_for_the_earlier_ones() -> None:
    table = _held_at_the_first_pass()
    body = table.at_seat(0).last(m.Shuffle1Body)
    third = table.at_seat(2)
    early, frame = signed(
        table.identity(table.at_seat(1).me), body, game=third.game_id or b"", seq=2
    )
    with pytest.raises(Wait):
        _apply(third, early, frame)
    assert third.deck is not None and third.deck.pass1 == []  # nothing of it was kept


def test_a_pass_in_its_turn_applies_and_the_next_seat_sends_its_own() -> None:
    table = _held_at_the_first_pass()
    second = table.at_seat(1)
    msg, frame = _pass_of(table, 0, m.SHUFFLE1)
    _apply(second, msg, frame)
    assert second.deck is not None and len(second.deck.pass1) == 1
    assert second.act()  # its turn now: it makes and sends its pass
    assert second.kinds_sent()[-1] == m.SHUFFLE1
    assert len(second.deck.pass1) == 2  # its own, applied here at once
    assert second.shuffling.waiting_on() == [table.at_seat(2).me]
    # Seat 0's pass again, now that seat 2 is due: out of its turn.
    with pytest.raises(Violation) as caught:
        _apply(second, msg, frame)
    assert (caught.value.kind, caught.value.reason) == (
        v.PROTOCOL,
        "a shuffle pass out of its turn",
    )
    assert caught.value.sender == msg.sender


def test_a_pass_whose_proof_does_not_hold_is_a_bad_shuffle() -> None:
    table = _held_at_the_first_pass()
    msg, _ = _pass_of(table, 0, m.SHUFFLE1)
    body = table.at_seat(0).last(m.Shuffle1Body)
    body = replace(body, points=body.points[::-1])  # the proof no longer matches
    forged, frame = signed(table.identity(msg.sender), body, game=msg.game, seq=2)
    second = table.at_seat(1)
    with pytest.raises(Violation) as caught:
        _apply(second, forged, frame)
    assert caught.value.kind == v.BAD_SHUFFLE
    assert caught.value.reason.startswith("a bad shuffle")
    assert second.deck is not None and second.deck.pass1 == []


def test_both_passes_of_every_seat_in_the_play_begins_and_an_observer_checked_them() -> None:
    table = FakeTable(PLAYERS)
    observer = table.add_observer()
    table.held = {m.SHUFFLE2}
    table.start()
    assert all(h.stage == stages.SHUFFLE2 for h in table.hosts)
    assert all(h.deck is not None and len(h.deck.pass1) == PLAYERS for h in table.hosts)
    table.held = {m.KEYS}  # the deal's key releases wait: the play has just begun
    table.run()
    assert all(h.stage == stages.PLAY for h in table.hosts)
    assert all(h.deck is not None and h.deck.shuffled for h in table.hosts)
    assert observer.sent == []
    assert observer.game is not None  # it follows the play too
