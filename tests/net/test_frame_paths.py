"""Where a peer's frames come from, for the screens (PROTOCOL.md §15.1, §8.3): a peer whose
own link to bob is down, or carries nothing, while cy relays bob's frames, says "bob's frames
come through cy"; nothing is said while bob's own link brings its frames, nor once nobody
brings them (then bob is not answering)."""

from __future__ import annotations

import math
import secrets
from pathlib import Path

import pytest
import trio
from cutting_proxy import DOWN, CuttingProxy
from net_harness import HeldBot, loopback_node, until

from moska_p2p.bots.loader import load_bot
from moska_p2p.crypto.identity import Identity
from moska_p2p.net.port import FramePaths, table_wait
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.session import PeerSession
from moska_p2p.protocol.simulate import Network, make_peers
from moska_p2p.protocol.transcript import verify_transcript
from moska_p2p.table.networked import BotAtTable
from moska_p2p.ui.render import wait_text

TIMEOUT = 6.0
LOOPBACK = "127.0.0.1"


def _dealt() -> list[PeerSession]:
    """Three seats past the deal, in memory, at virtual time 0."""
    identities = [Identity.from_seed(bytes([i + 1]) * 32) for i in range(3)]
    sessions = make_peers(TableConfig("moska", 3, bytes(32), {}, TIMEOUT), identities, seed=4)
    net = Network(sessions)
    for index, session in enumerate(sessions):
        net.handle(index, session.start(0.0))
    net.deliver_all()
    assert all(s.game is not None for s in sessions), "the deal did not finish"
    return sessions


def test_a_peer_heard_only_through_another_is_said_to_come_through_it() -> None:
    me, bob, cy = _dealt()
    paths = FramePaths()
    names = ["", "", ""]
    for seat, session in ((me.my_seat, me), (bob.my_seat, bob), (cy.my_seat, cy)):
        names[seat] = session.name
    now = 1.0
    for peer in me.peers.values():
        peer.contact_at = now  # everyone was heard a moment ago
    paths.saw(bob.me, bob.me, 0.0)  # bob's own link brought its frames...
    paths.saw(cy.me, cy.me, now)
    links = {bob.me: object(), cy.me: object()}
    assert paths.detours(me, links, now) == []
    paths.saw(bob.me, cy.me, now)  # ... now cy relays them
    assert paths.detours(me, links, now) == []  # bob's link may just be a little behind
    later = now + me.abandonment.lapse + 0.5  # nothing on bob's own link for that long
    for peer in me.peers.values():
        peer.contact_at = later
    paths.saw(bob.me, cy.me, later)
    assert paths.detours(me, links, later) == [(bob.me, cy.me)]
    del links[bob.me]  # its link is gone altogether
    assert paths.detours(me, links, later) == [(bob.me, cy.me)]
    wait = table_wait(me, links, me.me, later, paths)
    assert wait.through == ((bob.my_seat, cy.my_seat),)
    said = wait_text(wait, names, me.game.view(me.my_seat) if me.game else None)
    assert said.endswith(f"{bob.name}'s frames come through {cy.name}"), said
    gone = later + me.abandonment.lapse + 0.5  # nobody brings bob's frames any more
    me.peers[cy.me].contact_at = gone
    assert paths.detours(me, links, gone) == []
    assert table_wait(me, links, me.me, gone).through == ()  # no paths: nothing said


# -- a node whose link to the host carries nothing from it: in one trio run on 127.0.0.1 ------


@pytest.mark.trio
async def test_a_node_cut_off_from_the_host_says_the_hosts_frames_come_through_the_other(
    tmp_path: Path,
) -> None:
    """Joiner 1 reaches the host through a :class:`CuttingProxy` that stops passing the
    host's bytes once the cards are dealt. Its screen's status line then says that the host's
    frames come through joiner 2 (they do: its keep-alives come relayed by heads), and the
    game still finishes, every record verifying with the same losers."""
    config = TableConfig("durak", 3, secrets.token_bytes(32), {}, 6.0)
    held = HeldBot(load_bot("greedy", seed=0))
    players = [held, BotAtTable(load_bot("random", seed=1)),
               BotAtTable(load_bot("random", seed=2))]  # fmt: skip
    lines: list[list[str]] = [[], [], []]
    nodes = [loopback_node(tmp_path, i, p, lines[i]) for i, p in enumerate(players)]
    proxy: CuttingProxy | None = None
    said = ""
    try:
        with trio.fail_after(120):
            async with trio.open_nursery() as nursery:
                host_port = await nursery.start(nodes[0].host, config, 0)
                proxy = CuttingProxy(host_port)
                await nursery.start(nodes[1].join, LOOPBACK, proxy.start())
                nursery.start_soon(nodes[2].join, LOOPBACK, host_port)
                runner = nodes[1].runner
                await until(lambda: runner.session is not None and runner.session.game
                             is not None, "the deal")  # fmt: skip
                proxy.cut(DOWN)
                session = runner.session
                assert session is not None

                def detoured() -> bool:
                    wait = table_wait(session, runner.links, session.me,
                                      trio.current_time(), runner.paths)  # fmt: skip
                    return bool(wait.through)

                await until(detoured, "the host's frames through joiner 2")
                wait = table_wait(session, runner.links, session.me, trio.current_time(),
                                  runner.paths)  # fmt: skip
                names = [session.peers[key].name for key in session.seats]
                said = wait_text(wait, names)
                held.release.set()
    finally:
        if proxy is not None:
            proxy.stop()
    assert said.endswith("p0's frames come through p2"), said
    assert proxy.dropped[DOWN] > 0
    reports = [verify_transcript(tmp_path / f"p{i}.moska") for i in range(3)]
    for report in reports:
        assert report.valid and report.verdict is None, (report.fault, report.verdict)
        assert report.losers == reports[0].losers


def test_a_waited_for_peer_with_no_link_and_no_detour_is_said_to_have_no_connection() -> None:
    """A crashed peer's link closes at once, but its contact clock (three missed keep-alives,
    minutes at a person's table) says "not answering" only much later: meanwhile the status
    line says there is no connection to it, and for how long; a link back, or its frames
    coming through another peer, take that away; once out of contact it is "not answering"."""
    sessions = _dealt()
    me = next(s for s in sessions if any(k != s.me for k in s.waiting_on()))
    waited = next(k for k in me.waiting_on() if k != me.me)
    other = next(k for k in me.roster if k not in (me.me, waited))
    names = ["", "", ""]
    for session in sessions:
        names[session.my_seat] = session.name
    for peer in me.peers.values():
        peer.contact_at = 1.0
    paths = FramePaths()
    paths.saw(other, other, 1.0)
    links = {waited: object(), other: object()}
    silent = me.abandonment.lapse * 0.8  # within its contact clock (2.4 s at this table)
    assert table_wait(me, links, me.me, 1.0 + silent, paths).cut_off == ()  # its link is up
    del links[waited]  # the link closed: a crash, or a lost network
    wait = table_wait(me, links, me.me, 1.0 + silent, paths)
    assert wait.cut_off == ((me.seat_of[waited], silent),)
    said = wait_text(wait, names, me.game.view(me.my_seat) if me.game else None)
    shown = math.ceil(silent)
    assert f"no connection to {me.peers[waited].name}, last heard {shown} s ago" in said, said
    assert "not answering" not in said
    later = 1.0 + me.abandonment.lapse + 1.0
    paths.saw(waited, other, later)  # its frames come through the other peer now
    me.peers[waited].contact_at = later
    later += me.abandonment.lapse + 0.5
    me.peers[waited].contact_at = later
    assert table_wait(me, links, me.me, later, paths).cut_off == ()
    gone = later + me.abandonment.lapse + 1.0  # nobody brings its frames any more
    me.peers[other].contact_at = gone
    wait = table_wait(me, links, me.me, gone, paths)
    assert wait.cut_off == ()
    said = wait_text(wait, names, me.game.view(me.my_seat) if me.game else None)
    assert "not answering" in said, said
