"""The seating phase on its own (protocol/seating.py), through a fake host: hello, then seat.

A hello is checked against the table this peer expects; once every hello is in the game id
is known and this peer reveals its seat secret; a secret must open the hello's commitment;
once every secret is in the seats and the dealer (RULES M2) are drawn from all of them.
"""

from __future__ import annotations

import dataclasses

import pytest
from phase_host import FakeHost, FakeTable, config_for, identities, secret, signed

from moska_p2p.protocol import messages as m
from moska_p2p.protocol import stages
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import game_id
from moska_p2p.protocol.phase import Violation
from moska_p2p.protocol.seating import seat_commitment

PLAYERS = 3


def _host() -> tuple[FakeHost, list[bytes]]:
    ids = identities(PLAYERS)
    roster = [i.public_bytes for i in ids]
    return FakeHost(ids[0], config_for(PLAYERS), roster, "ann"), roster


def _hello(host: FakeHost, index: int, **change: object) -> tuple[m.Message, bytes]:
    """Peer ``index``'s honest hello to ``host``'s table, with ``change`` applied."""
    identity = identities(PLAYERS)[index]
    key = identity.public_bytes
    body = m.HelloBody(
        name=f"p{index}",
        nonce=secret("nonce", key),
        seat_commit=seat_commitment(host.table_id, key, secret("seat", key)),
        config=host.config.to_wire(),
        roster=tuple(host.roster),
    )
    return signed(identity, dataclasses.replace(body, **change), game=host.table_id, seq=0)


def _take_hellos(host: FakeHost) -> None:
    host.seating.begin()
    for index in range(1, PLAYERS):
        msg, frame = _hello(host, index)
        host.apply(host.peers[msg.sender], msg, frame)


def test_begin_sends_a_hello_that_commits_to_the_seat_secret() -> None:
    host, roster = _host()
    host.seating.begin()
    assert host.kinds_sent() == [m.HELLO]
    body = host.last(m.HelloBody)
    assert body.name == "ann"
    assert body.nonce == secret("nonce", host.me)
    assert body.seat_commit == seat_commitment(host.table_id, host.me, secret("seat", host.me))
    assert list(body.roster) == sorted(roster)
    assert host.peers[host.me].nonce == body.nonce  # applied here at once


def test_a_hello_is_taken_and_the_stage_waits_for_the_others() -> None:
    host, _ = _host()
    host.seating.begin()
    msg, frame = _hello(host, 1)
    host.apply(host.peers[msg.sender], msg, frame)
    peer = host.peers[msg.sender]
    assert (peer.name, peer.nonce) == ("p1", secret("nonce", msg.sender))
    missing = identities(PLAYERS)[2].public_bytes
    assert host.seating.waiting_on() == [missing]
    assert not host.act()
    assert host.stage == stages.HELLO


def test_every_hello_in_the_game_id_is_known_and_the_secret_revealed() -> None:
    host, _ = _host()
    _take_hellos(host)
    assert host.act()
    assert host.stage == stages.SEAT
    expected = game_id(host.table_id, [host.peers[k].nonce for k in host.roster])
    assert host.begun == [expected]
    assert host.last(m.SeatBody) == m.SeatBody(secret=secret("seat", host.me))


def test_a_second_hello_is_a_violation() -> None:
    host, _ = _host()
    _take_hellos(host)
    msg, frame = _hello(host, 1)
    with pytest.raises(Violation) as caught:
        host.apply(host.peers[msg.sender], msg, frame)
    assert (caught.value.kind, caught.value.reason) == (v.PROTOCOL, "a second hello")
    assert caught.value.sender == msg.sender
    assert caught.value.evidence == (frame,)


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        ({"roster": ()}, "does not agree on the table settings"),
        ({"config": {**config_for(PLAYERS, "durak").to_wire()}}, "does not agree on the table"),
        ({"config": {"preset": 5}}, "bad table settings"),
    ],
)
def test_a_hello_for_another_table_is_a_disagreement(
    change: dict[str, object], reason: str
) -> None:
    host, _ = _host()
    msg, frame = _hello(host, 2, **change)
    with pytest.raises(Violation, match=reason) as caught:
        host.apply(host.peers[msg.sender], msg, frame)
    assert caught.value.kind == v.DISAGREEMENT
    assert not host.peers[msg.sender].nonce  # nothing of it was kept


def _in_seat_stage() -> tuple[FakeHost, bytes]:
    host, _ = _host()
    _take_hellos(host)
    host.act()
    assert host.game_id is not None
    return host, host.game_id


def test_a_seat_secret_that_opens_no_commitment_is_a_violation() -> None:
    host, game = _in_seat_stage()
    other = identities(PLAYERS)[1]
    msg, frame = signed(other, m.SeatBody(secret=bytes(32)), game=game, seq=1)
    with pytest.raises(Violation, match="does not match its commitment"):
        host.apply(host.peers[msg.sender], msg, frame)
    assert not host.peers[msg.sender].seat_secret


def test_every_secret_in_the_seats_and_dealer_are_drawn_from_all_of_them() -> None:
    host, game = _in_seat_stage()
    for index in range(1, PLAYERS):
        identity = identities(PLAYERS)[index]
        body = m.SeatBody(secret=secret("seat", identity.public_bytes))
        msg, frame = signed(identity, body, game=game, seq=1)
        assert host.seating.waiting_on()  # someone's secret is still missing
        host.apply(host.peers[msg.sender], msg, frame)
    assert host.seating.waiting_on() == []
    assert host.act()
    assert host.stage == stages.SHUFFLE1
    assert sorted(host.seats) == host.roster
    assert 0 <= host.dealer < PLAYERS
    assert host.seat_of == {k: s for s, k in enumerate(host.seats)}
    seated = [e for e in host.events if isinstance(e, v.Seated)]
    assert seated == [v.Seated(tuple(host.seats), host.dealer, game)]
    # A second secret now is refused (the table would not route it here; the phase knows too).
    identity = identities(PLAYERS)[1]
    body = m.SeatBody(secret=secret("seat", identity.public_bytes))
    msg, frame = signed(identity, body, game=game, seq=2)
    with pytest.raises(Violation, match="a second seat secret"):
        host.apply(host.peers[msg.sender], msg, frame)


def test_every_peer_draws_the_same_seats_and_a_later_game_keeps_its_own() -> None:
    table = FakeTable(PLAYERS)
    table.start()
    drawn = {(tuple(h.seats), h.dealer) for h in table.hosts}
    assert len(drawn) == 1
    ((seats, dealer),) = drawn
    # M24: a session's later game sits as the table says, the loser dealing.
    later = dataclasses.replace(
        table.config, games=2, game=2, seating=tuple(reversed(seats)), dealer=(dealer + 1) % 3,
        previous=bytes(32),
    )  # fmt: skip
    ids = identities(PLAYERS)
    hosts = [FakeHost(i, later, [j.public_bytes for j in ids]) for i in ids]
    table.hosts = hosts
    table.delivered = [[0] * PLAYERS for _ in range(PLAYERS)]
    table.start()
    assert all(tuple(h.seats) == tuple(reversed(seats)) for h in hosts)
    assert all(h.dealer == (dealer + 1) % 3 for h in hosts)
