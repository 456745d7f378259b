"""A peer that crashes and comes back (issue: peers on the network; DESIGN "The protocol").

Its per-game secret and its transcript rebuild it exactly; a sync exchange then gives each
side the frames the other missed, and the game ends as if nothing had happened.
"""

from __future__ import annotations

import hashlib

from protocol_harness import RandomBot, all_done, identities, play_out, start, step, table

from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.session import PeerSession, drbg


def test_a_restarted_peer_resumes_from_its_transcript() -> None:
    net = table("moska", 4, seed=21)
    start(net)
    bots = [RandomBot(i) for i in range(4)]
    for _ in range(40):
        step(net, bots)
    crashed = 2
    old = net.sessions[crashed]
    secret = hashlib.sha256(b"21/2").digest()
    saved = list(old.transcript)
    # The others play on while it is away; its frames stop arriving and nothing reaches it.
    alive = True

    def tamper(source: int, target: int, frame: bytes) -> list[bytes]:
        return [frame] if alive or crashed not in (source, target) else []

    net.tamper = tamper
    alive = False
    for _ in range(10):
        if not step(net, bots, skip={crashed}):
            break
    # It comes back: rebuilt from its secret and transcript, then synced with every peer.
    new, outputs = PeerSession.resume(
        identities(4)[crashed], old.config, old.roster, secret, saved, name=old.name
    )
    assert new.moves == old.moves[: len(new.moves)]
    assert [o for o in outputs if isinstance(o, v.Stopped)] == []
    net.sessions[crashed] = new
    alive = True
    for index, session in enumerate(net.sessions):
        if index != crashed:
            for frame in session.frames_after(new.sync_state()):
                net.handle(crashed, new.receive(frame, net.clock))
            for frame in new.frames_after(session.sync_state()):
                net.handle(index, session.receive(frame, net.clock))
    net.deliver_all()
    play_out(net, seed=21)
    assert all_done(net), [s.stage for s in net.sessions]
    assert len({s.final_hash for s in net.sessions}) == 1


def test_drbg_is_deterministic_and_secret_dependent() -> None:
    a, b = drbg(bytes(32)), drbg(bytes(32))
    assert a(10) + a(40) == b(50)
    assert drbg(b"\x01" * 32)(32) != drbg(bytes(32))(32)


def test_leave_stops_the_game_for_everyone() -> None:
    net = table("durak", 3, seed=22)
    start(net)
    net.handle(1, net.sessions[1].leave("had to go"))
    net.deliver_all()
    for index in (0, 2):
        verdict = net.verdicts[index]
        assert verdict is not None and verdict.kind == v.LEFT
        assert "had to go" in verdict.reason
