"""Partitions of a table of four, real ``moska`` processes each in a network namespace of its
own, all on one switch (:class:`~net_harness.Bridged`); mid-game some are moved to a second
switch, for good (PROTOCOL.md §15.4, §15.5):

* 1|3: the three that still hear each other each sign that they lost the fourth, so it
  abandoned the game: every one of their records names it, and only it, corroborated by all
  three. Its own record can only say that it lost contact (uncorroborated: no loser, no
  conviction) and verifies;
* 2|2: a clean split. Each pair signs the other side's silence and no statement crosses, so no
  seat gathers a quorum: every record ends with lost contact, without a result, and convicts
  nobody.

Skipped where this machine cannot make namespaces. Every wait is bounded; the fixture kills
whatever still runs and removes the namespaces.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from net_harness import (
    Bridged,
    Peer,
    Table,
    assert_abandoned,
    mid_game,
    moska_verify,
    namespaces_or_skip,
)

from moska_p2p.crypto.identity import fingerprint_of
from moska_p2p.protocol.transcript import Report
from moska_p2p.protocol.verdict import TIMEOUT

PLAYERS = 4


@pytest.fixture
def switch() -> Iterator[Bridged]:
    with namespaces_or_skip(lambda: Bridged(PLAYERS)) as made:
        yield made


def _table(folder: Path, switch: Bridged) -> Table:
    """A durak table of four, peer ``i`` in namespace ``i``, listening on its own address."""
    table = Table(folder, "durak", PLAYERS, timeout=3, pace=0.02)
    host = ["host", "--preset", "durak", "--players", str(PLAYERS), "--port", "0",
            "--timeout", "3", "--no-announce", "--wait", "30"]  # fmt: skip

    def args(i: int) -> list[str]:
        return ["--bot", "random", "--seed", str(i), "--pace", "0.02", "-q",
                "--bind", switch.address(i), "--identity", str(table.identities[i]),
                "--transcript", str(table.transcripts[i])]  # fmt: skip

    table.peers.append(Peer("p0", [*host, *args(0)], folder, prefix=switch.prefix(0)))
    port = table.peers[0].wait_for(r"join with: moska join [\d.]+:(\d+)", 30).group(1)
    for i in range(1, PLAYERS):
        join = ["join", f"{switch.address(0)}:{port}", "--wait", "30", *args(i)]
        table.peers.append(Peer(f"p{i}", join, folder, prefix=switch.prefix(i)))
    return table


def _lost_contact_only(report: Report) -> None:
    """A record that says less: valid, an uncorroborated ``timeout``, no loser, nobody
    convicted, and never its own owner named."""
    assert report.valid, report.fault
    assert report.verdict_kind == TIMEOUT and not report.conviction, report.verdict
    assert report.losers == [], (report.losers, report.verdict)
    assert report.culprits and report.owner_key not in report.culprits, report.verdict


def test_a_seat_cut_off_from_three_abandoned_the_game_in_their_records(
    tmp_path: Path, switch: Bridged
) -> None:
    """1|3: the last joiner is moved to a switch of its own mid-game."""
    table = _table(tmp_path, switch)
    try:
        mid_game(table, 3, 30_000)
        switch.split(3)
        codes = table.finish(90)
    finally:
        table.kill_all()
    assert codes == [1] * PLAYERS, table.output()
    reports = table.reports()
    prints = [fingerprint_of(r.owner_key) for r in reports]
    for report in reports[:3]:
        assert_abandoned(report, prints[3], prints[:3])
    _lost_contact_only(reports[3])
    assert set(reports[3].culprits) <= set(reports[3].seats) - {reports[3].owner_key}
    for peer in table.peers[:3]:
        assert re.search(rf"game stopped: abandoned: seat \d \([^)]*{prints[3]}\)", peer.out)
    together = moska_verify(tmp_path)
    assert together.returncode == 0, together.stdout + together.stderr


def test_a_clean_split_of_two_against_two_ends_without_a_result_and_convicts_nobody(
    tmp_path: Path, switch: Bridged
) -> None:
    """2|2: the last two joiners are moved to the second switch together mid-game."""
    table = _table(tmp_path, switch)
    try:
        mid_game(table, 3, 30_000)
        switch.split(2, 3)
        codes = table.finish(90)
    finally:
        table.kill_all()
    assert codes == [1] * PLAYERS, table.output()
    reports = table.reports()
    sides = [{r.owner_key for r in reports[:2]}, {r.owner_key for r in reports[2:]}]
    for i, report in enumerate(reports):
        _lost_contact_only(report)
        assert not set(report.culprits) & sides[i // 2], "named a seat on its own side"
    for peer in table.peers:
        assert "lost contact, uncorroborated: not a conviction" in peer.out, peer.out
    together = moska_verify(tmp_path)
    assert together.returncode == 0, together.stdout + together.stderr
