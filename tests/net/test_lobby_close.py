"""A host that gives up its lobby (the table did not fill within ``--wait``) tells each
waiting joiner why in a ``refuse`` before it closes, instead of a bare close that the joiner
could only report as "the other side closed the connection"; and it seats no one while it
closes. One trio run on 127.0.0.1, every wait bounded."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from moska_p2p.bots.loader import load_bot
from moska_p2p.crypto.identity import Identity
from moska_p2p.net.node import EXIT_FAILED, Node, NodeOptions
from moska_p2p.net.wire import Entry
from moska_p2p.protocol.config import TableConfig, lobby_id
from moska_p2p.table.networked import BotAtTable

LOOPBACK = "127.0.0.1"
CONFIG = TableConfig("moska", 3, bytes([7]) * 32, {}, 10.0)


def _node(tmp_path: Path, name: str, echo: list[str], lobby_wait: float) -> Node:
    return Node(NodeOptions(identity=Identity.generate(),
                            player=BotAtTable(load_bot("random", seed=1)),
                            transcript=tmp_path / f"{name}.moska", name=name, bind=LOOPBACK,
                            connect_timeout=5.0, lobby_wait=lobby_wait,
                            echo=echo.append))  # fmt: skip


@pytest.mark.trio
async def test_a_host_that_gives_up_its_lobby_tells_the_waiting_joiner_why(
    tmp_path: Path,
) -> None:
    host_echo: list[str] = []
    host = _node(tmp_path, "host", host_echo, lobby_wait=4.0)  # 1 of the 2 joiners comes
    joiner = _node(tmp_path, "joiner", [], lobby_wait=60.0)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)
            outcome = await joiner.join(LOOPBACK, port)
    assert any("joined from" in line for line in host_echo), host_echo  # it waited, seated
    assert host.outcome is not None and host.outcome.code == EXIT_FAILED
    assert "the table did not fill within 4 s (2 of 3 players)" in host.outcome.message
    assert outcome.code == EXIT_FAILED
    assert "refused: the table did not fill within 4 s (2 of 3 players)" in outcome.message, (
        outcome.message
    )
    assert host.lobby.hosting is not None and host.lobby.hosting.waiting == 0


def test_a_closing_lobby_seats_no_one(tmp_path: Path) -> None:
    """A join that arrives while the host tells the others it gave up must not fill (and
    start) the table it is closing: it is refused with the same reason."""
    host = _node(tmp_path, "host", [], lobby_wait=60.0)
    lobby = host.lobby.open(CONFIG)
    late = Identity.generate()
    entry = Entry.sign(late, lobby_id(CONFIG), "late", LOOPBACK, 1)
    assert host.lobby.refusal(late.public_bytes, entry) == ""
    lobby.error = "the table did not fill within 5 s (2 of 3 players)"
    lobby.full.set()
    assert host.lobby.refusal(late.public_bytes, entry) == lobby.error
