"""A peer's own bug shows as a bug, not as a network failure.

The links catch what the network can do to a connection (:data:`~moska_p2p.net.wire.
TRANSPORT_ERRORS`) and nothing else. A ``LocalError`` of this peer's session (raised by
``receive``: its own bug) used to be taken for a dropped connection: the link was redialed,
the other side resent the frame, and the bug fired again, for as long as the table lasted.
Now it stops the node: one line to the person, the traceback in the log, the bug once.
"""

from __future__ import annotations

import logging
import secrets
from pathlib import Path

import pytest
import trio

from moska_p2p import ConfigError, Error
from moska_p2p.bots.loader import load_bot
from moska_p2p.crypto.identity import Identity
from moska_p2p.net.node import EXIT_FAILED, Node, NodeOptions
from moska_p2p.protocol import config as protocol_config
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.frames import open_frame
from moska_p2p.protocol.session import LocalError, PeerSession
from moska_p2p.table.networked import BotAtTable

LOOPBACK = "127.0.0.1"


def _node(tmp_path: Path, index: int, echo: list[str]) -> Node:
    options = NodeOptions(
        identity=Identity.generate(),
        player=BotAtTable(load_bot("random", seed=index), pace=0.01),
        transcript=tmp_path / f"p{index}.moska",
        name=f"p{index}",
        bind=LOOPBACK,
        connect_timeout=5.0,
        lobby_wait=20.0,
        echo=echo.append,
    )
    return Node(options)


@pytest.mark.trio
async def test_a_local_error_stops_the_peer_once_with_its_traceback_instead_of_a_redial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    echoes: list[list[str]] = [[], [], []]
    nodes = [_node(tmp_path, i, echoes[i]) for i in range(3)]
    victim = nodes[2]
    fired = 0
    receive = PeerSession.receive

    def buggy(self: PeerSession, frame: bytes, now: float = 0.0) -> list[object]:
        nonlocal fired
        if self.me == victim.me and open_frame(frame[4:])[0] == "move":
            fired += 1
            raise LocalError("a bug of this peer's own, on another's move")
        return receive(self, frame, now)  # type: ignore[return-value]

    monkeypatch.setattr(PeerSession, "receive", buggy)
    caplog.set_level(logging.INFO, logger="moska_p2p.net")
    config = TableConfig("durak", 3, secrets.token_bytes(32), {}, 30.0)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(nodes[0].host, config, 0)
            nursery.start_soon(nodes[1].join, LOOPBACK, port)
            outcome = await victim.join(LOOPBACK, port)
            nursery.cancel_scope.cancel()  # the others would wait for the victim's timeout
    assert outcome.code == EXIT_FAILED
    assert "LocalError" in outcome.message and "traceback is in the log" in outcome.message
    assert outcome.message in echoes[2]  # the person's one line
    stopped = [r for r in caplog.records if r.levelno == logging.ERROR and r.exc_info]
    assert stopped, "no traceback logged"
    assert fired == 1, "the bug fired again: the node took it for a dropped connection"


def test_the_package_has_one_root_exception_and_one_config_error() -> None:
    """``moska_p2p.Error`` is the root; the protocol's ``ConfigError`` is the package's one,
    still a ``ValueError`` for the callers that catch that."""
    assert protocol_config.ConfigError is ConfigError
    assert issubclass(ConfigError, Error) and issubclass(ConfigError, ValueError)
    with pytest.raises(Error):
        TableConfig("no such preset", 3, bytes(32))
