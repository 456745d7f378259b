"""Edge cases of the session that a review of the specification found: a second hello, a copy
before the game id, a position beyond the deck, own moves as progress, M23's face-up card."""

from __future__ import annotations

from protocol_harness import RandomBot, all_done, identities, play_out, start, step, table

from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.simulate import make_peers


def _sends(outputs: list[v.Output]) -> list[bytes]:
    return [o.frame for o in outputs if isinstance(o, v.Send)]


def test_a_second_hello_cannot_change_the_seat_commitment() -> None:
    """Seat grinding: after seeing the others' seat secrets a peer must not re-commit."""
    net = table("moska", 3, seed=31)
    start(net)
    cheat = net.sessions[2]
    body = {
        "name": cheat.name,
        "nonce": bytes(32),
        "seat_commit": bytes(32),
        "config": cheat.config.to_wire(),
        "roster": cheat.roster,
    }
    frame = cheat.craft(m.HELLO, body, game=cheat.game_id)
    net.handle(0, net.sessions[0].receive(frame, net.clock))
    verdict = net.verdicts[0]
    assert verdict is not None and verdict.kind == v.PROTOCOL and "second hello" in verdict.reason
    assert verdict.keys == (cheat.me,)


def test_a_copy_received_before_the_game_id_is_no_equivocation() -> None:
    config = TableConfig("moska", 3, bytes([7]) * 32)
    a, b, c = make_peers(config, identities(3), seed=1)
    ha, hb, hc = (_sends(p.start())[0] for p in (a, b, c))
    b.receive(ha)
    seat_b = _sends(b.receive(hc))[-1]  # b has every hello and sends its seat secret
    a.receive(hb)  # a still lacks c's hello: b's seat frame waits, twice (direct and relayed)
    a.receive(seat_b)
    a.receive(seat_b)
    outputs = a.receive(hc)
    assert not [o for o in outputs if isinstance(o, v.Stopped)]
    assert a.verdict is None


def test_a_position_beyond_the_deck_is_a_violation_not_a_crash() -> None:
    net = table("durak", 2, seed=32)
    start(net)
    mover = next(i for i, s in enumerate(net.sessions) if s.my_turn)
    s = net.sessions[mover]
    assert s.game is not None
    body = {
        "move": "attack AS",
        "state": bytes.fromhex(s.game.state_hash()),
        "cards": [[40, bytes(32)]],  # a 36-card deck has no position 40
    }
    other = 1 - mover
    net.handle(other, net.sessions[other].receive(s.craft(m.MOVE, body), net.clock))
    verdict = net.verdicts[other]
    assert verdict is not None and verdict.kind == v.ILLEGAL_MOVE
    assert "beyond the deck" in verdict.reason


def test_own_moves_count_as_progress_for_the_timeout() -> None:
    net = table("moska", 2, seed=1, timeout=30.0)
    start(net)
    bots = [RandomBot(0), RandomBot(1)]
    for _ in range(200):
        mover = next((i for i, s in enumerate(net.sessions) if s.my_turn), None)
        assert mover is not None
        session = net.sessions[mover]
        if session.game is not None and session.game.decision == "defend":
            break
        step(net, bots)
    net.clock = 25.0  # it thinks for 25 s, then moves
    net.handle(mover, session.play(session.legal_moves()[0], 25.0))
    net.deliver_all()
    stopped = [o for o in session.tick(31.0) if isinstance(o, v.Stopped)]
    assert stopped == [], "the other peer was blamed 6 s after the move"


def test_m23_face_up_card_is_known_to_all_before_anyone_moves() -> None:
    """expose_second_last=on: games with eager movers used to stall (M23)."""
    for seed in range(4):
        net = table("moska", 2, seed=seed, expose_second_last="on")
        start(net)
        play_out(net, seed=seed)
        assert all_done(net), seed
