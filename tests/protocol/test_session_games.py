"""Whole games through the sans-IO protocol, in memory: every preset, 2 to 6 peers.

Every peer ends with the same final state hash and losers, the transcripts verify, and at
every step each peer can decrypt exactly its own hand and the public cards.
"""

from __future__ import annotations

import pytest
from protocol_harness import all_done, play_out, start, table

from moska_p2p.crypto import deck as mp
from moska_p2p.engine import PRESETS
from moska_p2p.protocol.session import PeerSession
from moska_p2p.protocol.simulate import Network


def _players(preset: str) -> list[int]:
    return [4, 6] if preset == "durak-teams" else [2, 3, 4, 5, 6]


CASES = [(preset, n) for preset in PRESETS for n in _players(preset)]


@pytest.mark.parametrize(("preset", "players"), CASES)
def test_every_preset_plays_to_the_end(preset: str, players: int) -> None:
    net = table(preset, players, seed=players)
    start(net)
    play_out(net, seed=players)
    assert all_done(net), [s.stage for s in net.sessions]
    assert net.verdicts == [None] * players
    finals = {s.final_hash for s in net.sessions}
    losers = {s.losers for s in net.sessions}
    assert len(finals) == 1 and len(losers) == 1
    assert all(s.game is not None and s.game.is_over for s in net.sessions)
    assert net.rejected == [[] for _ in range(players)]


def decryptable(session: PeerSession) -> set[int]:
    """Positions whose every key this peer holds (its own key it always has)."""
    n = len(session.seats)
    me = session.my_seat
    out = set()
    for pos in range(session.size):
        if all(s == me or (s, pos) in session.keys for s in range(n)):
            out.add(pos)
    return out


def known_faces(session: PeerSession) -> set[int]:
    g = session.game
    assert g is not None
    return {pos for pos, card in enumerate(g.face) if card >= 0}


def _check_no_leak(net: Network) -> None:
    for session in net.sessions:
        g = session.game
        if g is None:
            continue
        me = session.my_seat
        # Crypto: what this peer could decrypt is exactly what its engine knows.
        assert decryptable(session) == known_faces(session) | _pending_public(session)
        for other in range(len(session.seats)):
            if other != me:
                assert g.hands[other] == g.shown[other], "a hidden card of another hand leaked"
        # And every position it can decrypt really holds the card its engine says.
        for pos in known_faces(session):
            deck = session.deck
            assert deck is not None
            keys = [
                deck.my_key(pos) if s == me else session.keys[(s, pos)]
                for s in range(len(session.seats))
            ]
            assert deck.table[mp.unmask(deck.final[pos], keys)] == g.face[pos]


def _pending_public(session: PeerSession) -> set[int]:
    return {pos for pos, target in session.want_face.items() if target == -1}


@pytest.mark.parametrize(("preset", "players"), [("moska", 4), ("durak", 3), ("mustamaija", 5)])
def test_each_peer_decrypts_exactly_its_hand_and_the_public_cards(
    preset: str, players: int
) -> None:
    net = table(preset, players, seed=7)
    start(net)
    checks = 0

    def check(n: Network) -> bool:
        nonlocal checks
        _check_no_leak(n)
        checks += 1
        return False

    play_out(net, seed=7, until=check)
    assert all_done(net)
    assert checks > 20


def test_reordered_delivery_still_agrees() -> None:
    """Frames may arrive in any order: each sender's messages are applied in sequence."""
    net = table("moska", 4, seed=3, reorder=True)
    start(net)
    play_out(net, seed=3)
    assert all_done(net)
    assert len({s.final_hash for s in net.sessions}) == 1
