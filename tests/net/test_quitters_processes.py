"""A seat that quits a game it is losing, through real ``moska`` processes on 127.0.0.1
(PROTOCOL.md §15.2 to §15.5): at a table of three, two honest ``greedy`` seats and one run by
``scripts/lib/cheater.py`` (a ``random`` bot, so it is often the one losing), which quits once
losing: it kills itself, signs a bogus ``timeout`` verdict, or dies the moment the
last move makes it the loser. Whatever it does, every honest record names it, and only it, as
the loser, the honest records agree, and they verify.

A seed where the cheater never got to lose is no game of the cell: the next seed is tried (a
few at most). Every wait is bounded; whatever still runs is killed at the end.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from net_harness import JOIN_LINE, Peer, assert_abandoned, moska_verify

from moska_p2p.crypto.identity import Identity, fingerprint_of
from moska_p2p.protocol.transcript import Report, verify_transcript
from moska_p2p.protocol.verdict import ABANDONED, LEFT

SEEDS = 5  # a random bot loses most games at a table of greedy ones: one or two seeds do
TIMEOUT = 3.0  # the table's move clock; its grace is the protocol's default, 6 s


def _table(folder: Path, mode: str, seed: int) -> tuple[list[Peer], list[str]] | None:
    """One game: host and joiner honest, the cheater last. Their outputs and fingerprints, or
    None if the cheater never got to quit."""
    folder.mkdir()
    keys = [Identity.generate() for _ in range(3)]
    for i, key in enumerate(keys):
        key.save(folder / f"p{i}.pem")

    def args(i: int, bot: str) -> list[str]:
        return ["--bot", bot, "--seed", str(seed * 10 + i), "--identity",
                str(folder / f"p{i}.pem"), "--transcript", str(folder / f"p{i}.moska"),
                "--bind", "127.0.0.1", "-q"]  # fmt: skip

    host = ["host", "--preset", "moska", "--players", "3", "--port", "0", "--no-announce",
            "--timeout", str(TIMEOUT), "--wait", "30"]  # fmt: skip
    peers = [Peer("p0", [*host, *args(0, "greedy")], folder)]
    try:
        address = f"127.0.0.1:{peers[0].wait_for(JOIN_LINE, 30).group(1)}"
        peers.append(Peer("p1", ["join", address, *args(1, "greedy")], folder))
        cheater = ["scripts.lib.cheater", mode, "--"]
        peers.append(Peer("p2", ["join", address, *args(2, "random")], folder, module=cheater))
        for peer in peers[:2]:
            peer.finish(120)
    finally:
        for peer in peers:
            peer.kill()
    if "cheater:" not in peers[2].err:
        return None
    return peers, [key.fingerprint for key in keys]


def _honest_records(peers: list[Peer], folder: Path) -> list[Report]:
    reports = [verify_transcript(folder / f"p{i}.moska") for i in (0, 1)]
    for report in reports:
        assert report.valid, (report.fault, "\n".join(p.out + p.err for p in peers))
    return reports


@pytest.mark.parametrize("mode", ["kill", "silent", "bogus", "die-decided"])
def test_a_seat_that_quits_a_game_it_is_losing_loses_it_in_every_honest_record(
    tmp_path: Path, mode: str
) -> None:
    """``kill``, ``silent`` (it stays connected and sends nothing, not even an answer to a
    ``sync``): the two honest seats both sign that they lost it, ``abandoned``,
    corroborated by both; ``bogus``: its false accusation proves nothing, so it has left the
    game (``left``, a conviction); ``die-decided``: the moves decided the game, and it stays
    decided. In every case the cheater is the only loser and no honest seat is named."""
    for seed in range(1, SEEDS + 1):
        played = _table(tmp_path / f"seed{seed}", mode, seed)
        if played is not None:
            break
    else:
        pytest.fail(f"the cheater never got to quit in {SEEDS} games")
    peers, fingerprints = played
    folder = tmp_path / f"seed{seed}"
    reports = _honest_records(peers, folder)
    cheater = fingerprints[2]
    seat = [fingerprint_of(key) for key in reports[0].seats].index(cheater)
    for report in reports:
        if mode in ("kill", "silent"):
            assert_abandoned(report, cheater, fingerprints[:2])
        elif mode == "bogus":
            assert report.verdict_kind == LEFT and report.conviction, report.verdict
            assert [fingerprint_of(k) for k in report.culprits] == [cheater], report.verdict
            assert report.losers == [seat], report.verdict
        else:
            assert report.losers == [seat], (report.losers, report.verdict)
            assert {fingerprint_of(k) for k in report.culprits} <= {cheater}, report.verdict
            assert report.verdict_kind in (None, ABANDONED), report.verdict
    assert reports[0].losers == reports[1].losers
    assert reports[0].verdict_kind == reports[1].verdict_kind
    together = moska_verify(folder / "p0.moska", folder / "p1.moska")
    assert together.returncode == 0, together.stdout + together.stderr


def test_a_seat_that_answers_only_some_requests_leaves_the_honest_records_agreeing(
    tmp_path: Path,
) -> None:
    """``half-silent``: once losing, the cheater's session sends nothing, but its node still
    answers a peer's ``sync`` with the moves its bot goes on signing, so each honest peer
    gets them only when it asks, at its own moments, and the cheater's last frames may reach
    one honest peer and not the other before that one is done. Whatever each got, the two
    honest records agree on the outcome (a peer done with the game hands the other what it
    lacks), both verify, and no honest seat is named."""
    for seed in range(1, SEEDS + 1):
        played = _table(tmp_path / f"seed{seed}", "half-silent", seed)
        if played is not None:
            break
    else:
        pytest.fail(f"the cheater never got to quit in {SEEDS} games")
    peers, fingerprints = played
    folder = tmp_path / f"seed{seed}"
    reports = _honest_records(peers, folder)
    assert reports[0].losers == reports[1].losers, (reports[0].verdict, reports[1].verdict)
    assert reports[0].verdict_kind == reports[1].verdict_kind
    honest = set(fingerprints[:2])
    for report in reports:
        assert not {fingerprint_of(k) for k in report.culprits} & honest, report.verdict
        if report.verdict is not None:
            seats = [fingerprint_of(k) for k in report.seats]
            assert not {seats[s] for s in report.losers} & honest, report.verdict
    together = moska_verify(folder / "p0.moska", folder / "p1.moska")
    assert together.returncode == 0, together.stdout + together.stderr
