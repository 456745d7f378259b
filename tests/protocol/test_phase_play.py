"""The play phase on its own (protocol/play_phase.py), through fake hosts: moves, D3 claims,
disclosure and the result.

A move applies when it is for the state this peer is in and its seat is to act; one for a
state not reached yet waits, one for a state already past or out of turn is a violation, and
so is a card shown from outside the mover's hand. A claim waits for its round (RULES D3); a
claim that shows another card than the one claimed is false. Every peer's result must agree
with this peer's; then the game is done.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from phase_host import FakeHost, FakeTable, message_of, signed

from moska_p2p.engine import parse_move
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import stages
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.phase import Violation, Wait
from moska_p2p.protocol.play_phase import hand_cards


def _playing(players: int = 2, preset: str = "moska") -> FakeTable:
    table = FakeTable(players, preset)
    table.start()
    assert all(h.stage == stages.PLAY for h in table.hosts)
    return table


def _mover_and_other(table: FakeTable) -> tuple[FakeHost, FakeHost]:
    g = table.hosts[0].game
    assert g is not None
    mover = table.at_seat(g.to_act_seat)
    return mover, next(h for h in table.hosts if h is not mover)


def _signed_by(table: FakeTable, host: FakeHost, body: m.Body) -> tuple[m.Message, bytes]:
    game = host.game_id
    assert game is not None
    return signed(table.identity(host.me), body, game=game, seq=1000)


def _apply(host: FakeHost, msg: m.Message, frame: bytes) -> None:
    host.apply(host.peers[msg.sender], msg, frame)


def _first_move_body(mover: FakeHost) -> m.MoveBody:
    g = mover.game
    assert g is not None
    showing = [mv for mv in g.legal_moves() if hand_cards(g, mv)]
    return mover.play_phase.move_body(showing[0])


def test_a_move_in_turn_applies_at_every_peer() -> None:
    table = _playing()
    mover, other = _mover_and_other(table)
    body = _first_move_body(mover)
    mover.send(body)
    table.run()
    seat = mover.my_seat
    assert other.play_phase.moves == mover.play_phase.moves == [(seat, body.move)]
    assert v.Moved(seat, body.move) in other.events
    assert other.game is not None and mover.game is not None
    assert other.game.state_hash() == mover.game.state_hash()


def test_a_move_for_a_state_not_reached_waits_and_leaves_no_trace() -> None:
    table = _playing()
    mover, other = _mover_and_other(table)
    body = replace(_first_move_body(mover), state=bytes(32))
    msg, frame = _signed_by(table, mover, body)
    before = list(other.transcript)
    with pytest.raises(Wait):
        _apply(other, msg, frame)
    assert other.transcript == before
    assert other.play_phase.moves == []


def test_a_move_for_a_state_already_past_is_out_of_turn() -> None:
    table = _playing()
    mover, other = _mover_and_other(table)
    body = _first_move_body(mover)
    mover.send(body)
    table.run()
    msg, frame = _signed_by(table, mover, body)  # the same move, signed again
    with pytest.raises(Violation) as caught:
        _apply(other, msg, frame)
    assert (caught.value.kind, caught.value.reason) == (
        v.OUT_OF_TURN,
        "a move for a state already past",
    )


def test_a_move_by_a_seat_not_to_act_is_out_of_turn() -> None:
    table = _playing()
    mover, other = _mover_and_other(table)
    body = _first_move_body(mover)
    msg, frame = _signed_by(table, other, body)  # the other signs the mover's move
    with pytest.raises(Violation, match=r"moved out of turn \(seat \d is to act\)") as caught:
        _apply(mover, msg, frame)
    assert caught.value.kind == v.OUT_OF_TURN
    assert caught.value.sender == other.me


def test_a_move_that_is_no_move_is_illegal() -> None:
    table = _playing()
    mover, other = _mover_and_other(table)
    body = replace(_first_move_body(mover), move="no such move", cards=())
    msg, frame = _signed_by(table, mover, body)
    with pytest.raises(Violation) as caught:
        _apply(other, msg, frame)
    assert caught.value.kind == v.ILLEGAL_MOVE
    assert other.play_phase.moves == []


def test_a_card_shown_from_outside_the_movers_hand_is_illegal() -> None:
    table = _playing()
    mover, other = _mover_and_other(table)
    body = _first_move_body(mover)
    outside = sorted(other.play_phase.reveals.face_down(other.my_seat))[0]  # the other's card
    assert mover.deck is not None
    body = replace(body, cards=((outside, mover.deck.my_key(outside)), *body.cards[1:]))
    msg, frame = _signed_by(table, mover, body)
    with pytest.raises(Violation, match=f"deck position {outside} is not in its hand") as caught:
        _apply(other, msg, frame)
    assert caught.value.kind == v.ILLEGAL_MOVE


def test_a_move_that_names_another_card_than_it_shows_is_illegal() -> None:
    table = _playing()
    mover, other = _mover_and_other(table)
    g = mover.game
    assert g is not None and mover.deck is not None
    body = _first_move_body(mover)
    named = set(hand_cards(g, parse_move(body.move)))
    seat = mover.my_seat
    hand = [c for c in range(52) if g.hands[seat] >> c & 1 and c not in named]
    pos = g.pos_of[hand[0]]
    body = replace(body, cards=((pos, mover.deck.my_key(pos)),))
    msg, frame = _signed_by(table, mover, body)
    with pytest.raises(Violation, match="which the move does not name") as caught:
        _apply(other, msg, frame)
    assert caught.value.kind == v.ILLEGAL_MOVE


def test_a_claim_before_its_round_waits() -> None:
    table = _playing()  # moska: no D3 round at all
    mover, other = _mover_and_other(table)
    msg, frame = _signed_by(table, mover, m.ClaimBody(rank=0, card=None))
    with pytest.raises(Wait):
        _apply(other, msg, frame)


def test_the_d3_claims_name_the_first_attacker_at_every_peer() -> None:
    table = _playing(3, "durak")
    assert all(h.claims_sent >= 1 for h in table.hosts)
    attackers = set()
    for host in table.hosts:
        g = host.game
        assert g is not None and not g.awaiting_lowest_trump
        assert host.play_phase.claim_rank == -1  # the round is settled
        shown = [(s, c) for s, c in sorted(host.play_phase.claims.items()) if c is not None]
        assert shown, "nobody showed a trump in the last round"
        attackers.add((shown[0][0], g.to_act_seat))
    assert len(attackers) == 1
    ((holder, to_act),) = attackers
    assert holder == to_act  # D3: the holder of the lowest trump attacks first


def test_a_claim_that_shows_another_card_is_false() -> None:
    table = FakeTable(3, "durak")
    table.held = {m.CLAIM}  # the first round's claims are made, none is delivered
    table.start()
    claimer, other = table.hosts[0], table.hosts[1]
    rank = other.play_phase.claim_rank
    g, deck = claimer.game, claimer.deck
    assert rank >= 0 and g is not None and deck is not None
    wanted = rank * 4 + g.trump
    seat = claimer.my_seat
    wrong = next(c for c in range(52) if g.hands[seat] >> c & 1 and c != wanted)
    pos = g.pos_of[wrong]
    body = m.ClaimBody(rank=rank, card=(pos, deck.my_key(pos)))
    msg, frame = _signed_by(table, claimer, body)
    with pytest.raises(Violation, match=r"claimed .* but showed .* \(D3\)") as caught:
        _apply(other, msg, frame)
    assert caught.value.kind == v.FALSE_CLAIM
    later, frame = _signed_by(table, claimer, m.ClaimBody(rank=rank + 1, card=None))
    with pytest.raises(Wait):  # a claim for a round not begun here yet
        _apply(other, later, frame)


def test_a_disclosure_nobody_asked_for_is_a_violation() -> None:
    table = _playing()
    mover, other = _mover_and_other(table)
    assert mover.deck is not None
    pos = sorted(mover.play_phase.reveals.face_down(mover.my_seat))[0]
    msg, frame = _signed_by(table, mover, m.DiscloseBody(keys=((pos, mover.deck.my_key(pos)),)))
    with pytest.raises(Violation, match=r"not the ones due: \[\]") as caught:
        _apply(other, msg, frame)
    assert caught.value.kind == v.PROTOCOL


def test_the_results_must_agree_and_then_the_game_is_done() -> None:
    table = _playing()
    table.held = {m.RESULT}
    table.play_out()
    assert all(h.stage == stages.RESULT for h in table.hosts)
    first, second = table.hosts
    honest = second.last(m.ResultBody)
    msg, frame = _signed_by(table, second, replace(honest, state=bytes(32)))
    with pytest.raises(Violation, match="its result differs") as caught:
        _apply(first, msg, frame)
    assert caught.value.kind == v.DISAGREEMENT
    assert not first.act()  # still waiting on the second peer's result
    assert first.play_phase.waiting_on() == [second.me]
    table.held = set()
    table.run()
    assert all(h.stage == stages.DONE for h in table.hosts)
    finished = [e for h in table.hosts for e in h.events if isinstance(e, v.Finished)]
    assert len(finished) == 2 and finished[0] == finished[1]
    frame = next(f for f in second.frames if message_of(f).type == m.RESULT)
    with pytest.raises(Violation, match="a second result"):
        _apply(first, message_of(frame), frame)


@pytest.mark.parametrize(("players", "preset"), [(2, "moska"), (3, "durak"), (4, "moska")])
def test_a_whole_game_through_the_phases_alone(players: int, preset: str) -> None:
    table = _playing(players, preset)
    table.play_out()
    assert all(h.stage == stages.DONE for h in table.hosts)
    losers = {h.play_phase.losers for h in table.hosts}
    hashes = {h.play_phase.final_hash for h in table.hosts}
    assert len(losers) == 1 and len(hashes) == 1
    moves = {tuple(h.play_phase.moves) for h in table.hosts}
    assert len(moves) == 1 and next(iter(moves))
