"""Results that stand (PROTOCOL.md §15): a seat that leaves a game it is losing loses it, a
seat that stays never does.

In memory (sans-IO), on the quit matrix (``quit_matrix.py``): the reference game's loser
quits at a trigger, and every honest record must count its loss, verify, and name no honest
seat; and single peers fed a forged accusation.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from protocol_harness import play_out, start, step, table
from quit_matrix import run_cell, sign_bogus

from moska_p2p.bots.builtin import RandomBot
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.session import STOPPED
from moska_p2p.protocol.simulate import Network
from moska_p2p.protocol.tally import decided
from moska_p2p.protocol.transcript import Report, verify_transcript, write_transcript

# moska at 3 seats, durak (D3 claims) at 4: the tables the losing players tried.
TABLES = [3, 4]


def _assert_quitter_loses(players: int, trigger: str, fault: str) -> None:
    cell = run_cell(players, trigger, fault)
    assert cell.applicable and cell.error is None, cell.error
    details = [
        (o.index, o.ended, o.kind, o.culprits, o.losers, o.verify_fault) for o in cell.outcomes
    ]
    assert cell.quitter_lost == len(cell.outcomes), details
    assert cell.honest_named == 0, details
    assert cell.rejected == 0, details
    assert cell.agree, details


@pytest.mark.parametrize("players", TABLES)
@pytest.mark.parametrize("fault", ["kill", "cut-own", "bogus@1"])
def test_a_decided_game_stays_decided(players: int, fault: str) -> None:
    """The signed moves ended the game; its loser dies, cuts its links or signs a bogus
    verdict before the result: every honest record still names it the loser, and verifies
    with that loss."""
    _assert_quitter_loses(players, "decided", fault)


@pytest.mark.parametrize("players", TABLES)
def test_a_bogus_verdict_is_its_signers_forfeit(players: int) -> None:
    """Mid-game, the losing seat signs a ``timeout`` naming an honest seat the others still
    hear: it proves nothing, and its signer has left the game (a conviction)."""
    _assert_quitter_loses(players, "losing", "bogus@1")


def test_a_running_peer_never_adopts_a_verdict_of_its_own_silence() -> None:
    """The seat to act thinks for most of the timeout; another seat accuses it of silence.
    It was running all along: the accuser is convicted, in its record and in the others'."""
    net = table("moska", 3, seed=31, timeout=10.0)
    start(net)
    play_out(net, max_moves=3)
    thinker = next(s for s in net.sessions if s.waiting_on() == [s.me])
    accuser, other = (s for s in net.sessions if s is not thinker)
    frame = sign_bogus(accuser, thinker.me)
    later = net.clock + 8.0  # it has thought for 8 of its 10 s
    thinker.receive(frame, later)
    assert thinker.stage == STOPPED and thinker.verdict is not None
    assert thinker.verdict.kind == v.LEFT and thinker.verdict.keys == (accuser.me,)
    assert thinker.verdict.conviction and thinker.losers == (accuser.my_seat,)
    del other


def test_a_suspension_excuses_only_the_accusation_it_explains() -> None:
    """A peer whose clock jumped (SIGSTOP) concedes the accusation that reaches it as it
    wakes, but not one that comes long after, while nobody waited on it."""
    net = table("moska", 3, seed=32, timeout=10.0)
    start(net)
    play_out(net, max_moves=3)
    sleeper = next(s for s in net.sessions if s.waiting_on() != [s.me])
    accuser = next(s for s in net.sessions if s is not sleeper and s.waiting_on() != [s.me])
    sleeper.max_tick_gap = 2.0
    sleeper.tick(net.clock + 1.0)
    sleeper.tick(net.clock + 5.5)  # a gap of 4.5 s: it was not running
    woke = net.clock + 5.5
    later = woke + 6.0  # more than half the timeout after it woke, ticking all along
    for now in range(int(woke) + 1, int(later)):
        sleeper.tick(float(now))
    assert sleeper.stage != STOPPED
    sleeper.receive(sign_bogus(accuser, sleeper.me), later)
    assert sleeper.verdict is not None and sleeper.verdict.kind == v.LEFT
    assert sleeper.verdict.keys == (accuser.me,) and sleeper.verdict.conviction


def _report(**changes: object) -> Report:
    base = Report(True, "ab" * 32, None, [], None, 10, 3, "owner", "timeout: seat 2")
    for key, value in changes.items():
        setattr(base, key, value)
    return base


def test_a_stopped_record_with_losers_decides_its_game() -> None:
    """A game stopped over silence after the moves had decided it has a result (its losers):
    the session check counts it and holds other records to it."""
    assert decided(_report(losers=[1], verdict_kind=v.TIMEOUT))
    assert not decided(_report(losers=[], verdict_kind=v.TIMEOUT))


# -- the two clocks, abandonment and its quorum (§15.1, §15.5)


@pytest.mark.parametrize("players", [3, 4, 6])
@pytest.mark.parametrize("fault", ["kill", "cut-own", "restart-after"])
def test_a_seat_that_quits_a_game_it_is_losing_loses_it(players: int, fault: str) -> None:
    """Half way, the seat that would lose dies (or cuts its links, or comes back after the
    grace): every other seat signs that it went silent at the same point, and the quorum
    convicts it (``abandoned``) in every honest record."""
    cell = run_cell(players, "losing", fault)
    assert {o.kind for o in cell.outcomes} == {v.ABANDONED}, cell.summary()
    _assert_quitter_loses(players, "losing", fault)


@pytest.mark.parametrize("players", [3, 4])
@pytest.mark.parametrize("fault", ["cut-one", "sigstop", "restart-within"])
def test_a_broken_link_or_a_short_absence_stops_no_game(players: int, fault: str) -> None:
    """One link down (the others relay), a process stopped for less than the grace, or one
    restarted within it: the game goes on to its result."""
    cell = run_cell(players, "losing", fault)
    assert cell.error is None and cell.finished == len(cell.outcomes), cell.summary()
    assert cell.quitter_lost == len(cell.outcomes) and cell.rejected == 0, cell.summary()


def test_at_two_seats_silence_is_an_uncorroborated_loss_of_contact() -> None:
    """No third seat can witness it: the game ends without a result, and says so."""
    cell = run_cell(2, "losing", "kill")
    (outcome,) = cell.outcomes
    assert outcome.kind == v.TIMEOUT and not outcome.conviction and outcome.losers == ()
    assert outcome.verified, outcome.verify_fault
    bogus = run_cell(2, "losing", "bogus@1")  # a stop naming the one who stays: its forfeit
    assert bogus.quitter_lost == 1 and bogus.outcomes[0].kind == v.LEFT


def test_a_clean_split_convicts_nobody() -> None:
    """Two seats against two: each side signs the other's silence, no statement reaches the
    other side, so no quorum forms: every record is an uncorroborated loss of contact."""
    sides: list[set[int]] = []

    def split(source: int, target: int, frame: bytes) -> list[bytes]:
        if sides and (source in sides[0]) != (target in sides[0]):
            return []
        return [frame]

    net = table("durak", 4, seed=33, timeout=10.0, tamper=split)
    start(net)
    play_out(net, max_moves=6)
    sides.append({0, 1})
    bots = [RandomBot(i) for i in range(4)]
    for _ in range(400):
        if all(s.stage == STOPPED for s in net.sessions):
            break
        if step(net, bots):  # each side plays on as far as it can
            continue
        net.clock += 2.0
        for i, s in enumerate(net.sessions):
            net.handle(i, s.tick(net.clock))
        net.deliver_all()
    for s in net.sessions:
        assert s.verdict is not None and s.verdict.kind == v.TIMEOUT, s.verdict
        assert not s.verdict.conviction and s.losers == ()
        assert "uncorroborated" in s.verdict.describe()


def test_the_table_says_what_it_waits_for_and_how_long() -> None:
    """``waiting_status``: the seat to act, on its move clock while it is heard; once it is
    not heard, on the grace from its last frame."""
    net = table("moska", 3, seed=34, timeout=10.0)
    start(net)
    play_out(net, max_moves=3)
    thinker = next(s for s in net.sessions if s.waiting_on() == [s.me])
    watcher = next(s for s in net.sessions if s is not thinker)
    (status,) = watcher.waiting_status(net.clock + 2.0)
    assert status.key == thinker.me and status.clock == "move"
    assert status.left == pytest.approx(8.0)
    (status,) = watcher.waiting_status(net.clock + 9.0)  # nothing heard for 9 s: gone quiet
    assert status.clock == "contact"
    assert status.left == pytest.approx(watcher.config.grace - 9.0, abs=1.0)
    assert thinker.waiting_status(net.clock + 2.0) == []  # nobody but itself


# -- an equivocation is proven to every honest peer (§14.3)


def test_a_chain_that_does_not_follow_convicts_the_equivocator_everywhere() -> None:
    """The cheater signs two versions of one message (A to one peer, B to the other), then
    its next message chained on A to both. The peer holding B stops ("does not follow") with
    its copy B as well as the offending frame, so the peer holding A has both halves and
    convicts the cheater too: no honest seat is named, whatever order the frames take."""
    net = table("moska", 3, seed=35, timeout=10.0)
    start(net)
    play_out(net, max_moves=2)
    cheater, first, second = net.sessions
    quiet = [(0, b"")] * 3
    a = cheater.craft(m.WAIT, {})
    b = cheater.craft(m.WAIT, {}, heads=quiet)
    seq = cheater.peers[cheater.me].next_seq
    after = cheater.craft(m.WAIT, {}, seq=seq + 1, prev=_hash(a))
    first.receive(a, net.clock)
    second.receive(b, net.clock)
    out = [o for o in second.receive(after, net.clock) if isinstance(o, v.Send)]
    first.receive(after, net.clock)
    assert second.verdict is not None and second.verdict.keys == (cheater.me,)
    assert b in second.verdict.evidence  # its copy of the previous message goes with it
    for sent in out:
        first.receive(sent.frame, net.clock)
    assert first.verdict is not None and first.verdict.kind == v.EQUIVOCATION
    assert first.verdict.keys == (cheater.me,)


def test_a_stopped_peer_answers_a_conflicting_copy_with_its_own() -> None:
    """A peer that stopped still hands its copy of a message to whoever shows it another
    one under the same number: the other half of the proof."""
    net = table("moska", 3, seed=36, timeout=10.0)
    start(net)
    play_out(net, max_moves=2)
    cheater, holder, _ = net.sessions
    a = cheater.craft(m.WAIT, {})
    b = cheater.craft(m.WAIT, {}, heads=[(0, b"")] * 3)
    holder.receive(a, net.clock)
    holder.leave("bedtime", net.clock)  # stopped (its own leave)
    answer = [o.frame for o in holder.receive(b, net.clock) if isinstance(o, v.Send)]
    assert a in answer


def _hash(frame: bytes) -> bytes:
    from protocol_harness import _msg

    return _msg(frame).hash


def _a_seat_dies(seed: int) -> tuple[Network, int]:
    """A 3-seat game in which the seat to act dies (nothing more from it or to it)."""
    dead: list[int] = []

    def drop(source: int, target: int, frame: bytes) -> list[bytes]:
        return [] if source in dead or target in dead else [frame]

    net = table("moska", 3, seed=seed, timeout=10.0, tamper=drop)
    start(net)
    play_out(net, max_moves=3)
    quitter = next(i for i, s in enumerate(net.sessions) if s.waiting_on() == [s.me])
    dead.append(quitter)
    return net, quitter


def test_verify_shows_who_corroborated_an_abandonment(tmp_path: Path) -> None:
    """The seat to act dies: the record of each other seat verifies, names it the loser, and
    says which seats signed the statements (both honest seats)."""
    net, quitter = _a_seat_dies(seed=37)
    honest = [s for i, s in enumerate(net.sessions) if i != quitter]
    for _ in range(100):
        if all(s.stage == STOPPED for s in honest):
            break
        net.clock += 2.0
        for i, s in enumerate(net.sessions):
            if i != quitter:
                net.handle(i, s.tick(net.clock))
        net.deliver_all()
    for s in honest:
        assert s.verdict is not None and s.verdict.kind == v.ABANDONED
        assert s.losers == (net.sessions[quitter].my_seat,)
        path = tmp_path / f"{s.name}.moska"
        write_transcript(path, s.me, s.config, s.roster, s.transcript)
        report = verify_transcript(path)
        assert report.valid and report.losers == list(s.losers), report.fault
        assert report.verdict is not None
        for other in honest:
            assert other.identity is not None
            assert other.identity.fingerprint in report.verdict.split("corroborated by")[1]


def test_a_peer_that_does_not_hear_the_seat_either_corroborates_at_once() -> None:
    """The others' contact clocks differ by what each was last relayed: a peer that gets a
    statement about a seat it does not hear either signs its own at once, so the quorum does
    not wait for its own deadline (and the first signer's does not give up alone)."""
    net, quitter = _a_seat_dies(seed=38)
    early, late = (i for i in range(3) if i != quitter)
    grace = net.sessions[early].config.grace
    net.clock += grace / 2
    net.handle(late, net.sessions[late].tick(net.clock))  # it hears nothing, not for long
    net.deliver_all()
    net.clock += grace / 2 + 1.0
    net.handle(early, net.sessions[early].tick(net.clock))  # past the grace: its statement
    net.deliver_all()
    for i in (early, late):
        verdict = net.sessions[i].verdict
        assert verdict is not None and verdict.kind == v.ABANDONED, verdict
        assert verdict.keys == (net.sessions[quitter].me,)
