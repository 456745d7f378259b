"""A link that fell back to the relay becomes direct when the direct address answers.

Three peers and a relay in one trio run on 127.0.0.1, all listening and all registered at the
relay. The last joiner's direct connections to the first joiner's port go through
:meth:`~moska_p2p.net.links.Mesh.connect_direct`, which the test wraps: it refuses,
never answers, or reaches another peer's port, until the test opens it. So that link starts
through the relay; once the direct path opens, the dialer's background tries reach it and the
direct link replaces the relayed one (both sides stop counting the peer as relayed); while it
stays shut, the tries change nothing. The host's bot holds its first move until the test has
seen what it checks, so the game cannot end first (bounded, well within the table's
timeout). Every wait is bounded.
"""

from __future__ import annotations

import errno
import functools
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
import trio
from net_harness import HeldBot, loopback_node, until

from moska_p2p.bots.loader import load_bot
from moska_p2p.net import links
from moska_p2p.net.invite import parse_invite
from moska_p2p.net.link import Link
from moska_p2p.net.node import Node
from moska_p2p.net.relay import RelayServer
from moska_p2p.net.relay_client import VirtualStream
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.transcript import verify_transcript
from moska_p2p.table.networked import BotAtTable

LOOPBACK = "127.0.0.1"


class DirectGate:
    """The last joiner's direct connections to one port: refused (``refuse``), left
    unanswered (``silent``) or answered by another peer (``another-key``: the connection goes
    to port :attr:`elsewhere`) until :attr:`opened` is set; counted."""

    def __init__(self, node: Node, port: int, mode: str, elsewhere: int) -> None:
        self.real = node.mesh.connect_direct
        self.port = port
        self.mode = mode
        self.elsewhere = elsewhere
        self.opened = trio.Event()
        self.shut_tries = 0  # tries while shut

    async def __call__(self, host: str, port: int) -> trio.abc.HalfCloseableStream:
        if port == self.port and not self.opened.is_set():
            self.shut_tries += 1
            if self.mode == "refuse":
                raise ConnectionRefusedError(errno.ECONNREFUSED, "refused by the test")
            if self.mode == "another-key":
                return await self.real(host, self.elsewhere)
            await trio.sleep_forever()
        return await self.real(host, port)


async def _invited_room(lines: list[str]) -> bytes:
    """The room pass of the host's invite (its secret included), from the host's lines: what
    a joiner holding the invite registers at the relay with."""
    await until(lambda: any(line.startswith("invite") for line in lines), "the host's invite")
    (line,) = (line for line in lines if line.startswith("invite"))
    return parse_invite(line.rsplit(" ", 1)[1]).room


def _path(node: Node, key: bytes) -> str:
    """How ``node``'s current link to ``key`` goes: "relay", "direct" or "none"."""
    link = node.links.get(key)
    if link is None:
        return "none"
    return "relay" if isinstance(link.stream.stream, VirtualStream) else "direct"


Watch = Callable[[list[Node], DirectGate, "HeldBot"], Awaitable[None]]


async def _table(tmp_path: Path, mode: str, watch: Watch) -> tuple[list[Node], DirectGate]:
    """Play a 3-seat table through a relay; the last joiner's direct path to the first
    joiner is gated (``mode``); ``watch(nodes, gate, host_bot)`` runs alongside."""
    config = TableConfig("durak", 3, secrets.token_bytes(32), {}, 60.0)
    host_lines: list[str] = []
    held = HeldBot(load_bot("greedy", seed=0))
    with trio.fail_after(120):
        async with trio.open_nursery() as outer:
            relay = RelayServer()
            await outer.start(relay.serve, LOOPBACK, 0)
            where = (LOOPBACK, relay.port)
            players = [held, BotAtTable(load_bot("random", seed=1)),
                       BotAtTable(load_bot("random", seed=2))]  # fmt: skip
            nodes = [
                loopback_node(tmp_path, i, p, host_lines if i == 0 else None, where)
                for i, p in enumerate(players)
            ]
            async with trio.open_nursery() as nursery:  # the table: done when all are done
                host_port = await nursery.start(nodes[0].host, config, 0)
                room = await _invited_room(host_lines)
                join = functools.partial(nodes[1].join, room=room)
                first_port = await nursery.start(join, LOOPBACK, host_port)
                gate = DirectGate(nodes[2], first_port, mode, host_port)
                nodes[2].mesh.connect_direct = gate  # type: ignore[method-assign]
                last = functools.partial(nodes[2].join, LOOPBACK, host_port, room=room)
                nursery.start_soon(last)
                await watch(nodes, gate, held)
            outer.cancel_scope.cancel()  # the relay
    return nodes, gate


def _check_records(tmp_path: Path, nodes: list[Node]) -> None:
    """Every peer finished the game with no verdict, and every transcript verifies to the
    same final state."""
    outcomes = [node.outcome for node in nodes]
    assert all(o is not None and o.code == 0 and o.verdict is None for o in outcomes), outcomes
    reports = [verify_transcript(tmp_path / f"p{i}.moska") for i in range(len(nodes))]
    hashes = {report.final_state_hash for report in reports}
    assert len(hashes) == 1 and None not in hashes


@pytest.mark.trio
async def test_a_relayed_link_becomes_direct_once_the_direct_address_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(links, "UPGRADE_FIRST", 0.2)
    monkeypatch.setattr(links, "UPGRADE_MAX", 0.4)
    seen: dict[str, frozenset[bytes]] = {}

    async def watch(nodes: list[Node], gate: DirectGate, held: HeldBot) -> None:
        _, first, last = nodes
        await until(
            lambda: _path(last, first.me) == "relay" and _path(first, last.me) == "relay",
            "the link starts relayed, on both sides",
        )
        relayed = last.links[first.me]
        assert first.me in last.mesh.relayed and last.me in first.mesh.relayed
        assert last.session is not None and first.me in last.session.relayed_paths
        # two background tries while the direct path is shut: nothing changes
        await until(lambda: gate.shut_tries >= 3, "the dial and two tries of the direct path")
        assert last.links.get(first.me) is relayed and last.stats.upgrades == 0
        gate.opened.set()
        await until(lambda: _path(last, first.me) == "direct", "the link becomes direct")
        await until(lambda: _path(first, last.me) == "direct", "the listener's side too")
        seen["last relayed"] = frozenset(last.mesh.relayed)
        seen["first relayed"] = frozenset(first.mesh.relayed)
        assert last.session is not None
        seen["paths"] = last.session.relayed_paths
        held.release.set()

    nodes, _ = await _table(tmp_path, "refuse", watch)
    _, first, last = nodes
    assert first.me not in seen["last relayed"]
    assert last.me not in seen["first relayed"]
    assert first.me not in seen["paths"]
    assert last.stats.upgrades == 1
    # the host, the first joiner through the relay, then directly: no redial in between
    assert last.stats.links == 3 and first.stats.links == 3
    _check_records(tmp_path, nodes)


@pytest.mark.trio
@pytest.mark.parametrize("mode", ["silent", "another-key"])
async def test_a_direct_address_that_never_answers_as_the_peer_leaves_the_link_relayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mode: str
) -> None:
    """``silent``: nothing answers there (each try ends after :data:`DIRECT_TRY`).
    ``another-key``: another peer answers there (the host): its key is not the one dialed,
    so no try gets a link, and none goes through the relay."""
    monkeypatch.setattr(links, "UPGRADE_FIRST", 0.2)
    monkeypatch.setattr(links, "UPGRADE_MAX", 0.4)
    monkeypatch.setattr(links, "DIRECT_TRY", 0.5)

    async def watch(nodes: list[Node], gate: DirectGate, held: HeldBot) -> None:
        _, first, last = nodes
        await until(lambda: _path(last, first.me) == "relay", "the link starts relayed")
        relayed = last.links[first.me]
        await until(lambda: gate.shut_tries >= 4, "the dial and three tries of the direct path")
        assert last.links.get(first.me) is relayed
        held.release.set()

    nodes, _ = await _table(tmp_path, mode, watch)
    host, first, last = nodes
    assert last.stats.upgrades == 0
    assert first.me in last.mesh.relayed and last.me in first.mesh.relayed
    # one link to each other peer, for the whole game: failed tries churn nothing
    assert last.stats.links == 2 and first.stats.links == 2 and host.stats.links == 2
    _check_records(tmp_path, nodes)


class ShutUntil:
    """A node's direct connections, all refused until :attr:`opened` is set."""

    def __init__(self, node: Node, opened: trio.Event) -> None:
        self.real = node.mesh.connect_direct
        self.opened = opened

    async def __call__(self, host: str, port: int) -> trio.abc.HalfCloseableStream:
        if not self.opened.is_set():
            raise ConnectionRefusedError(errno.ECONNREFUSED, "refused by the test")
        return await self.real(host, port)


async def play_a_table_whose_every_link_leaves_the_relay(
    tmp_path: Path, *, players: int = 4, after: int = 12, pace: float = 0.03
) -> list[Node]:
    """A table of ``players`` whose every link starts through the relay (every direct
    connection refused, the joiners' lobby connections too), and once the game has made
    ``after`` moves, with frames flowing on every link, the direct paths open: each link
    leaves the relay mid-game. Returns the nodes once all are done."""
    config = TableConfig("durak", players, secrets.token_bytes(32), {}, 60.0)
    host_lines: list[str] = []
    opened = trio.Event()
    with trio.fail_after(150):
        async with trio.open_nursery() as outer:
            relay = RelayServer()
            await outer.start(relay.serve, LOOPBACK, 0)
            where = (LOOPBACK, relay.port)
            bots = ["greedy", "random", "shedder", "random"]
            nodes = [
                loopback_node(
                    tmp_path,
                    i,
                    BotAtTable(load_bot(bots[i % 4], seed=i), pace=pace),
                    host_lines if i == 0 else None,
                    where,
                )
                for i in range(players)
            ]
            for node in nodes:
                node.mesh.connect_direct = ShutUntil(node, opened)  # type: ignore[method-assign]
            async with trio.open_nursery() as nursery:
                host_port = await nursery.start(nodes[0].host, config, 0)
                room = await _invited_room(host_lines)
                for node in nodes[1:]:
                    join = functools.partial(node.join, expect=nodes[0].me, room=room)
                    await nursery.start(join, LOOPBACK, host_port)
                await until(
                    lambda: all(
                        len(n.links) == players - 1
                        and all(_path(n, k) == "relay" for k in n.links)
                        for n in nodes
                    ),
                    "every link up, through the relay",
                )
                await until(
                    lambda: nodes[0].stats.moves >= after or nodes[0].over.is_set(),
                    "the game under way",
                    timeout=60.0,
                )
                opened.set()
            outer.cancel_scope.cancel()  # the relay
    return nodes


def break_relayed_reads_when_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A relayed link's read, cancelled, fails as if the relay had closed the link at that
    very moment: what a loaded machine makes of a relayed link dropped for a direct one (the
    listener closes its end when the direct link replaces it, the relay says so, and the
    dialer's reader wakes with the news in the same step as its cancellation). The link's
    nursery then raises a group of that error and ``Cancelled``."""
    read = Link._read_loop

    async def read_loop(self: Link) -> None:
        try:
            await read(self)
        except trio.Cancelled:
            if not isinstance(self.stream.stream, VirtualStream):
                raise
            raise trio.BrokenResourceError("the relay closed the link") from None

    monkeypatch.setattr(Link, "_read_loop", read_loop)


@pytest.mark.trio
@pytest.mark.parametrize("race", [False, True], ids=["calm", "the relay closes as it drops"])
async def test_every_link_of_a_four_peer_table_leaves_the_relay_mid_game(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, race: bool
) -> None:
    """The links of all six pairs go direct while frames flow on them: no peer dies when its
    relayed link is dropped under it (the relay closing the virtual link as the link is
    cancelled), every game ends with its result and every transcript verifies."""
    monkeypatch.setattr(links, "UPGRADE_FIRST", 0.2)
    monkeypatch.setattr(links, "UPGRADE_MAX", 0.4)
    if race:
        break_relayed_reads_when_cancelled(monkeypatch)
    nodes = await play_a_table_whose_every_link_leaves_the_relay(tmp_path)
    _check_records(tmp_path, nodes)
    # every later peer dialed each earlier one through the relay, then directly
    assert sum(node.stats.upgrades for node in nodes) == 6
