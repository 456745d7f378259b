"""One broken link stops no game (PROTOCOL.md §15.1, §8.3): real ``moska`` processes on
127.0.0.1, one joiner (``p1``) joining the host through :class:`CuttingProxy`, so that their
link, and only theirs, runs through it. Mid-game the proxy stops forwarding the host's bytes to
the joiner (``down``), the joiner's to the host (``up``), or both, and the connections stay
open: neither end is told. The two still hear each other through the other seats (their
keep-alives and acts come relayed by heads), so nobody is out of contact: the game finishes
with a result, nobody is named, and every record verifies and agrees.

Every wait is bounded; the fixtures kill whatever still runs at the end.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from cutting_proxy import DOWN, UP, CuttingProxy
from net_harness import Table, mid_game, moska_verify


@pytest.fixture
def proxies() -> Iterator[list[CuttingProxy]]:
    made: list[CuttingProxy] = []
    try:
        yield made
    finally:
        for proxy in made:
            proxy.stop()


@pytest.mark.parametrize(
    ("preset", "players", "directions"),
    [("moska", 3, (DOWN,)), ("moska", 3, (UP,)), ("durak", 4, (UP, DOWN))],
    ids=["moska3-host-to-joiner", "moska3-joiner-to-host", "durak4-both-ways"],
)
def test_a_game_with_one_broken_link_finishes_with_a_result_every_record_agrees_on(
    make_table: Callable[..., Table],
    proxies: list[CuttingProxy],
    preset: str,
    players: int,
    directions: tuple[str, ...],
) -> None:
    """The link between the host and ``p1`` breaks mid-game in ``directions``. The game ends
    with a result (every peer exits 0 and prints it), every record verifies with no verdict
    and no culprit, and all of them name the same losers; the proxy really dropped bytes
    after the cut, so the frames that finished the game took the other paths."""

    def entrance(seat: int, port: int) -> int:
        if seat != 1:
            return port
        proxies.append(CuttingProxy(port))
        return proxies[-1].start()

    table = make_table(preset, players, timeout=3, pace=0.02, entrance=entrance)
    mid_game(table, 1, 30_000)
    (proxy,) = proxies
    proxy.cut(*directions)
    codes = table.finish(150)
    assert codes == [0] * players, table.output()
    assert all(proxy.dropped[d] > 0 for d in directions), (proxy.dropped, table.output())
    reports = table.reports()
    for report in reports:
        assert report.valid, (report.fault, table.output())
        assert report.verdict is None and not report.culprits, report.verdict
        assert report.losers == reports[0].losers, [r.losers for r in reports]
    for peer in table.peers:
        assert "result:" in peer.out, peer.out
    together = moska_verify(table.folder)
    assert together.returncode == 0, together.stdout + together.stderr
