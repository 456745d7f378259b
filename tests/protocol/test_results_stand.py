"""Results that stand (PROTOCOL.md §15): a seat that leaves a game it is losing loses it, a
seat that stays never does.

In memory (sans-IO), on the quit matrix (``quit_matrix.py``): the reference game's loser
quits at a trigger, and every honest record must count its loss, verify, and name no honest
seat; and single peers fed a forged accusation.
"""

from __future__ import annotations

import pytest
from protocol_harness import play_out, start, table
from quit_matrix import run_cell

from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.session import STOPPED, PeerSession
from moska_p2p.protocol.tally import decided
from moska_p2p.protocol.transcript import Report

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


def _accusation(accuser: PeerSession, accused: bytes) -> bytes:
    return accuser.craft(
        m.VERDICT,
        {
            "kind": v.TIMEOUT,
            "culprits": [accused],
            "reason": "silent",
            "evidence": [],
            "relayed": [],
        },
    )


def test_a_running_peer_never_adopts_a_verdict_of_its_own_silence() -> None:
    """The seat to act thinks for most of the timeout; another seat accuses it of silence.
    It was running all along: the accuser is convicted, in its record and in the others'."""
    net = table("moska", 3, seed=31, timeout=10.0)
    start(net)
    play_out(net, max_moves=3)
    thinker = next(s for s in net.sessions if s.waiting_on() == [s.me])
    accuser, other = (s for s in net.sessions if s is not thinker)
    frame = _accusation(accuser, thinker.me)
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
    sleeper.receive(_accusation(accuser, sleeper.me), later)
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
