"""Bounded memory and measured time in the session.

Each test is an attack that worked on protocol v1: a roster member flooding messages ahead of
the next sequence number (held and relayed without limit), frames sent before every hello
arrived (kept without limit), and a peer that was itself suspended past the timeout (it blamed
whoever it had been waiting for).
"""

from __future__ import annotations

from protocol_harness import _msg, play_out, start, table

from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.session import LIMBO_FRAMES, STOPPED, WINDOW
from moska_p2p.protocol.simulate import Network


def test_messages_beyond_the_window_are_a_violation() -> None:
    net = table("moska", 3, seed=21)
    start(net)
    flooder, victim = net.sessions[1], net.sessions[0]
    base = flooder.peers[flooder.me].next_seq
    outputs = []
    for ahead in range(1, WINDOW + 2):  # WINDOW messages held, the next one refused
        frame = flooder.craft(m.LEAVE, {"reason": "x" * 150}, seq=base + ahead)
        outputs = victim.receive(frame, 0.0)
        if victim.stage == STOPPED:
            break
    assert victim.stage == STOPPED
    assert ahead == WINDOW
    verdict = victim.verdict
    assert verdict is not None and verdict.kind == v.PROTOCOL
    assert verdict.keys == (flooder.me,)
    assert "window" in verdict.reason
    assert _msg(verdict.evidence[0]).seq == base + WINDOW
    held = victim.peers[flooder.me]
    assert len(held.inbox) == WINDOW - 1
    assert any(isinstance(o, v.Stopped) for o in outputs)


def test_relays_are_bounded_by_the_window() -> None:
    """Each frame held is relayed once; the flood stops at the window, not at 20,000."""
    net = table("moska", 3, seed=22)
    start(net)
    flooder, victim = net.sessions[2], net.sessions[0]
    base = flooder.peers[flooder.me].next_seq
    relayed = 0
    for ahead in range(1, 3 * WINDOW):
        frame = flooder.craft(m.LEAVE, {"reason": "flood"}, seq=base + ahead)
        relayed += sum(isinstance(o, v.Send) for o in victim.receive(frame, 0.0))
        if victim.stage == STOPPED:
            break
    assert relayed <= WINDOW + 1  # the held frames, and the victim's own verdict


def test_frames_before_every_hello_are_bounded() -> None:
    net = table("durak", 3, seed=23)
    # Only two of three peers said hello: the game id is not known yet.
    early, victim, late = net.sessions
    victim.start(0.0)
    early_hello = early.start(0.0)
    for out in early_hello:
        if isinstance(out, v.Send):
            victim.receive(out.frame, 0.0)
    rejected = 0
    for seq in range(1, LIMBO_FRAMES + 20):
        frame = early.craft(m.LEAVE, {"reason": "early"}, seq=seq, game=bytes(32))
        rejected += sum(isinstance(o, v.Rejected) for o in victim.receive(frame, 0.0))
    assert len(victim._limbo) <= LIMBO_FRAMES
    assert rejected >= 19
    del late


def test_a_suspended_peer_does_not_blame_the_one_it_waited_for() -> None:
    """The peer was stopped (SIGSTOP) past the timeout: when it runs again, the gap between
    its own ticks shows it did not watch anyone's silence, so it starts counting again."""
    net = table("moska", 3, seed=24, timeout=10.0)
    start(net)
    play_out(net, max_moves=3)
    sleeper = next(s for s in net.sessions if s.waiting_on() and s.me not in s.waiting_on())
    sleeper.max_tick_gap = 2.0
    assert sleeper.waiting_on()  # it waits for a peer that will not answer in this test
    sleeper.tick(net.clock + 1.0)
    outputs = sleeper.tick(net.clock + 50.0)  # 49 s since its last tick: it was not running
    assert sleeper.stage != STOPPED and not any(isinstance(o, v.Stopped) for o in outputs)
    now = net.clock + 50.0
    while sleeper.stage != STOPPED and now < net.clock + 200.0:
        now += 1.0
        sleeper.tick(now)
    # Only once it has itself watched the silence (the grace, then its statement's wait for
    # a quorum that never comes) does it name anyone.
    assert sleeper.verdict is not None and sleeper.verdict.kind == v.TIMEOUT
    assert now - (net.clock + 50.0) > 10.0


def test_a_peer_named_for_its_silence_accepts_the_verdict() -> None:
    """The others timed out on a frozen peer; when it runs again (its own clock shows the
    jump) and reads their verdict, it stops with that verdict naming itself instead of blaming
    the messenger. A peer that was running all along never takes such hearsay against itself
    (test_adversary's bogus timeout)."""
    net = table("moska", 3, seed=25, timeout=5.0)
    start(net)
    play_out(net, max_moves=4)
    frozen = next(i for i, s in enumerate(net.sessions) if s.waiting_on() == [s.me])
    others = [i for i in range(3) if i != frozen]
    held: list[bytes] = []  # what reaches the frozen peer only once it runs again

    def hold(source: int, target: int, frame: bytes) -> list[bytes]:
        if target == frozen:
            held.append(frame)
            return []
        return [frame]

    net.tamper = hold
    for i in others:  # past the grace, each signs its statement: the quorum convicts it
        net.handle(i, net.sessions[i].tick(100.0))
    net.deliver_all()
    assert all(net.sessions[i].stage == STOPPED for i in others)
    sleeper = net.sessions[frozen]
    sleeper.max_tick_gap = 2.0
    sleeper.tick(net.clock + 1.0)
    sleeper.tick(101.0)  # its clock jumped: it knows it was not running
    for frame in held:
        sleeper.receive(frame, 101.0)
    verdict = net.sessions[frozen].verdict
    assert verdict is not None and verdict.kind == v.ABANDONED
    assert verdict.keys == (net.sessions[frozen].me,)


def test_a_message_that_waits_is_not_progress() -> None:
    """A peer lacks seat 0's shuffle pass (a relay dropped it on that one
    link) and holds seat 1's, which waits for it. Seat 1's frames keep coming (its ``wait``
    messages, queued behind the pass): each made the session try the pass again, and the try
    counted as progress, so the stuck peer never said it was stuck (its own ``wait``) and
    never timed out, while seat 1 timed out on it. A message that waits is not applied: it
    moves neither the peer's clock nor its sender's."""
    box: list[Network] = []

    def drop_pass_to_seat_2(source: int, target: int, frame: bytes) -> list[bytes]:
        sessions = box[0].sessions
        seats = sessions[source].my_seat, sessions[target].my_seat
        return [] if seats == (0, 2) and _msg(frame).type == m.SHUFFLE1 else [frame]

    net = table("moska", 3, seed=26, timeout=8.0, tamper=drop_pass_to_seat_2)
    box.append(net)
    start(net)
    stuck = next(s for s in net.sessions if s.my_seat == 2)
    seat1 = next(s for s in net.sessions if s.my_seat == 1)
    assert stuck.waiting_on() == [stuck.seats[0]]
    since, heard = stuck.last_progress, stuck.peers[seat1.me].heard_at
    sent_wait = False
    for now in (3.0, 5.0, 7.0):
        for out in seat1.tick(now):  # seat 1 waits for seat 2's pass: it says so
            if isinstance(out, v.Send):
                stuck.receive(out.frame, now)
        for out in stuck.tick(now):
            sent_wait |= isinstance(out, v.Send) and _msg(out.frame).type == m.WAIT
    assert stuck.last_progress == since and stuck.peers[seat1.me].heard_at == heard
    assert sent_wait  # it said it was stuck, so a peer holding the pass can send it
    stuck.tick(since + 70.0)  # past the grace: its statement about seat 0
    stuck.tick(since + 90.0)  # no quorum followed: an uncorroborated timeout
    assert stuck.verdict is not None and stuck.verdict.keys == (stuck.seats[0],)
