"""One test per attack (issue: the trust layer): each expects its verdict, and no card leaks.

A cheating peer is made by signing crafted messages with its identity
(:meth:`PeerSession.craft`) or by rewriting its frames in transit (the network's tamper hook).
Honest peers must stop with a verdict that names the cheater and carries the signed
evidence; frames nobody can be blamed for are only rejected, and the game goes on.
"""

from __future__ import annotations

import secrets
import struct

from protocol_harness import (
    RandomBot,
    _msg,
    _rewrite,
    all_done,
    identities,
    index_of_seat,
    play_out,
    start,
    step,
    table,
)

from moska_p2p.crypto.identity import verify
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.frames import encode_frame, open_frame, pack
from moska_p2p.protocol.session import PLAY
from moska_p2p.protocol.simulate import Network


def assert_no_leak(net: Network, honest: list[int]) -> None:
    """An honest peer knows no card in another hand but those the game showed: in play, or
    in a D3 claim (a claim shows the claimer's lowest trump, recorded as shown only when its
    round ends, so a game stopped mid-round has it in ``claims`` alone)."""
    for i in honest:
        session = net.sessions[i]
        g = session.game
        if g is None:
            continue
        for seat in range(g.n):
            if seat != session.my_seat:
                claim = session.claims.get(seat)
                claimed = 1 << claim[1] if claim is not None else 0
                assert g.hands[seat] & ~claimed == g.shown[seat] & ~claimed


def assert_verdict(net: Network, cheater: int, kind: str) -> list[int]:
    honest = [i for i in range(len(net.sessions)) if i != cheater]
    seat = net.sessions[cheater].my_seat
    for i in honest:
        verdict = net.verdicts[i]
        assert verdict is not None, f"peer {i} gave no verdict"
        assert verdict.kind == kind, verdict
        assert verdict.keys == (net.sessions[cheater].me,)
        if seat >= 0:
            assert verdict.seats == (seat,)
        for frame in verdict.evidence:
            frame_kind, payload, signature = open_frame(frame[4:])
            assert verify(net.sessions[cheater].me, frame_kind, payload, signature)
    assert_no_leak(net, honest)
    return honest


def _until_turn_of(net: Network, bots: list[RandomBot], cheater: int, wanted: bool) -> None:
    for _ in range(500):
        s = net.sessions[cheater]
        g = s.game
        turn = g is not None and g.to_act_seat >= 0 and g.to_act_seat == s.my_seat
        ready = s.stage == PLAY and g is not None and g.to_act_seat >= 0 and turn == wanted
        if ready and (not wanted or s.my_turn):
            return
        assert step(net, bots)
    raise AssertionError("never reached")


def _broadcast(net: Network, source: int, frame: bytes) -> None:
    for target in range(len(net.sessions)):
        if target != source:
            net.handle(target, net.sessions[target].receive(frame, net.clock))
    net.deliver_all()


def _bots(n: int) -> list[RandomBot]:
    return [RandomBot(i) for i in range(n)]


def test_illegal_move() -> None:
    net = table("moska", 4, seed=2)
    start(net)
    bots = _bots(4)
    cheater = 1
    for _ in range(3):  # a few moves in
        step(net, bots)
    _until_turn_of(net, bots, cheater, True)
    s = net.sessions[cheater]
    assert s.game is not None
    body = {"move": "attack 2C 3C 4C", "state": bytes.fromhex(s.game.state_hash()), "cards": []}
    if s.game.decision != "open":
        body["move"] = "pass" if s.game.decision == "defend" else "take"
    _broadcast(net, cheater, s.craft(m.MOVE, body))
    honest = assert_verdict(net, cheater, v.ILLEGAL_MOVE)
    for i in honest:
        assert net.sessions[i].moves == net.sessions[honest[0]].moves  # never applied


def test_move_out_of_turn() -> None:
    net = table("durak", 4, seed=3)
    start(net)
    bots = _bots(4)
    cheater = 2
    _until_turn_of(net, bots, cheater, False)
    s = net.sessions[cheater]
    assert s.game is not None
    body = {"move": "take", "state": bytes.fromhex(s.game.state_hash()), "cards": []}
    _broadcast(net, cheater, s.craft(m.MOVE, body))
    assert_verdict(net, cheater, v.OUT_OF_TURN)


def test_forged_signature_is_rejected_and_the_game_goes_on() -> None:
    forged = 0

    def tamper(source: int, target: int, frame: bytes) -> list[bytes]:
        nonlocal forged
        if source == 1 and target == 2 and forged < 3:
            forged += 1
            bad = bytearray(frame)
            bad[-1] ^= 0x55  # the last byte of the signature
            return [bytes(bad), frame]
        return [frame]

    net = table("moska", 3, seed=4, tamper=tamper)
    start(net)
    play_out(net, seed=4)
    assert all_done(net)
    assert any("forged signature" in r for r in net.rejected[2])
    assert net.verdicts == [None, None, None]


def test_replayed_frame_changes_nothing() -> None:
    net = table("mustamaija", 3, seed=5)
    start(net)
    bots = _bots(3)
    for _ in range(10):
        step(net, bots)
    old = net.sessions[0].transcript[5]
    before = [s.game.state_hash() for s in net.sessions if s.game is not None]
    _broadcast(net, 0, old)
    assert [s.game.state_hash() for s in net.sessions if s.game is not None] == before
    play_out(net, seed=5)
    assert all_done(net)


def test_frame_from_another_game_is_rejected() -> None:
    net = table("moska", 3, seed=6)
    start(net)
    bots = _bots(3)
    for _ in range(4):
        step(net, bots)
    s = net.sessions[1]
    frame = s.craft(m.KEYS, {"keys": [[0, bytes(32)]]}, game=secrets.token_bytes(32))
    _broadcast(net, 1, frame)
    assert any("another game" in r for r in net.rejected[0])
    play_out(net, seed=6)
    assert all_done(net)


def test_equivocation_two_moves_to_two_peers() -> None:
    net = table("moska", 4, seed=8)
    start(net)
    bots = _bots(4)
    cheater = 0
    _until_turn_of(net, bots, cheater, True)
    s = net.sessions[cheater]
    assert s.game is not None
    moves = [mv for mv in s.legal_moves() if mv.kind_name in ("attack",)][:2]
    frames = []
    for mv in moves:
        # Sign each move honestly on a copy, then keep both frames with one sequence number.
        cards = [[s.game.pos_of[c], s.deck.my_key(s.game.pos_of[c])] for c in mv.cards]
        body = {"move": str(mv), "state": bytes.fromhex(s.game.state_hash()), "cards": cards}
        frames.append(s.craft(m.MOVE, body))
    assert _msg(frames[0]).seq == _msg(frames[1]).seq
    net.handle(1, net.sessions[1].receive(frames[0], net.clock))
    net.handle(2, net.sessions[2].receive(frames[1], net.clock))
    net.handle(3, net.sessions[3].receive(frames[0], net.clock))
    net.deliver_all()
    honest = assert_verdict(net, cheater, v.EQUIVOCATION)
    for i in honest:
        verdict = net.verdicts[i]
        assert verdict is not None and len(verdict.evidence) == 2
        a, b = (_msg(f) for f in verdict.evidence)
        assert a.seq == b.seq and a.payload != b.payload


def _tampered_table(
    preset: str, players: int, seed: int, cheater: int, kind: str, change: object
) -> Network:
    box: list[Network] = []
    net = table(preset, players, seed=seed, tamper=_rewrite(box, cheater, kind, change))  # type: ignore[arg-type]
    box.append(net)
    return net


def test_key_that_does_not_match_its_commitment() -> None:
    def change(body: dict[str, object]) -> None:
        keys = list(body["keys"])  # type: ignore[call-overload]
        keys[0] = [keys[0][0], secrets.token_bytes(31) + b"\x00"]
        body["keys"] = keys

    net = _tampered_table("moska", 3, 9, 2, m.KEYS, change)
    start(net)
    play_out(net, seed=9)
    assert_verdict(net, 2, v.BAD_KEY)


def test_shuffle_that_duplicates_a_card() -> None:
    def change(body: dict[str, object]) -> None:
        points = list(body["points"])  # type: ignore[call-overload]
        points[3] = points[4]
        body["points"] = points

    net = _tampered_table("durak", 4, 10, 1, m.SHUFFLE1, change)
    start(net)
    play_out(net, seed=10)
    assert_verdict(net, 1, v.BAD_SHUFFLE)


def test_shuffle_that_replaces_a_card() -> None:
    from moska_p2p.crypto import deck as mp

    def change(body: dict[str, object]) -> None:
        points = list(body["points"])  # type: ignore[call-overload]
        points[0] = mp.card_point(secrets.token_bytes(32), 0)  # a valid point, no card
        body["points"] = points

    net = _tampered_table("moska", 3, 11, 0, m.SHUFFLE2, change)
    start(net)
    play_out(net, seed=11)
    assert_verdict(net, 0, v.BAD_SHUFFLE)


def test_false_lowest_trump_claim_showing_another_card() -> None:
    """D3: a claim must show the trump of the round's rank."""

    def change(body: dict[str, object]) -> None:
        session = box[0].sessions[1]
        assert session.game is not None
        g = session.game
        mine = [
            p for p in range(36) if g.face[p] >= 0 and g.hands[session.my_seat] >> g.face[p] & 1
        ]
        wanted = body["rank"] * 4 + g.trump  # type: ignore[operator]
        liar = next(p for p in mine if g.face[p] != wanted)
        assert session.deck is not None
        body["card"] = [liar, session.deck.my_key(liar)]

    box: list[Network] = []
    net = table("durak", 3, seed=12, tamper=_rewrite(box, 1, m.CLAIM, change))  # type: ignore[arg-type]
    box.append(net)
    start(net)
    play_out(net, seed=12)
    assert_verdict(net, 1, v.FALSE_CLAIM)


def test_false_lowest_trump_claim_hiding_it_is_caught_when_shown() -> None:
    """D3: the holder of the lowest trump says it holds none; it is named when that card is
    shown from a position it held then (a move, or the disclosure at the end)."""
    for seed in range(20, 60):
        net = table("durak", 4, seed=seed)
        start(net)
        holder = next(
            (i for i, s in enumerate(net.sessions) if s.claims.get(s.my_seat) is not None), None
        )
        if holder is not None and net.sessions[holder].claim_rank < 0:
            break
    else:  # pragma: no cover
        raise AssertionError("no seed with a shown lowest trump")

    net = table("durak", 4, seed=seed)
    liar = net.sessions[holder]

    def lying_claim() -> None:  # a client that never shows its trump
        liar.send(m.ClaimBody(rank=liar.claim_rank, card=None))

    liar.send_claim = lying_claim  # type: ignore[method-assign]
    start(net)
    play_out(net, seed=seed)
    assert_verdict(net, holder, v.FALSE_CLAIM)


def test_malformed_frames_are_rejected_and_the_game_goes_on() -> None:
    net = table("moska", 3, seed=14)
    start(net)
    bots = _bots(3)
    for _ in range(5):
        step(net, bots)
    target = net.sessions[0]
    garbage = b"\xc1\xc1\xc1"
    cases = [
        struct.pack(">I", len(garbage)) + garbage,  # not msgpack
        encode_frame("keys", b"\x93\x01\x02", bytes(64)),  # a payload that is not a message map
        b"\x7f\xff\xff\xff" + b"x" * 10,  # a length over the cap
    ]
    s = net.sessions[1]
    me = s.peers[s.me]
    wrong_types = pack(
        {"v": 2, "g": s.game_id, "f": s.me, "s": "seven", "p": me.last_hash, "t": "keys", "b": {}}
    )
    cases.append(encode_frame("keys", wrong_types, s.identity.sign("keys", wrong_types)))  # type: ignore[union-attr]
    for frame in cases:
        outputs = target.receive(frame, net.clock)
        assert any(isinstance(o, v.Rejected) for o in outputs), frame[:12]
    play_out(net, seed=14)
    assert all_done(net)
    assert net.verdicts == [None, None, None]


def test_peer_that_stops_answering_times_out() -> None:
    silent = 3

    def tamper(source: int, target: int, frame: bytes) -> list[bytes]:
        return [] if source == silent and net.sessions[silent].moves else [frame]

    net = table("moska", 4, seed=15, tamper=tamper, timeout=5.0)
    start(net)
    bots = _bots(4)
    for _ in range(2000):
        if not step(net, bots, skip={silent}):
            break
    assert all(net.verdicts[i] is None for i in range(4))
    for _ in range(100):  # past the grace, the statements of every other seat (§15.5)
        if all(net.verdicts[i] is not None for i in range(4) if i != silent):
            break
        net.clock += 2.0
        for i, s in enumerate(net.sessions):
            net.handle(i, s.tick(net.clock))
        net.deliver_all()
    seat = net.sessions[silent].my_seat
    for i in range(4):
        if i == silent:
            continue
        verdict = net.verdicts[i]
        assert verdict is not None and verdict.kind == v.ABANDONED
        assert verdict.seats == (seat,) and verdict.conviction
    assert index_of_seat(net, seat) == silent
    assert identities(4)[silent].public_bytes == net.sessions[silent].me
