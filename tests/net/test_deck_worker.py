"""The deck's costly steps never run in a peer's event loop: a table of
three nodes in one trio run, every pass check and every pass made watched for the thread it
runs in. Speed itself is measured by scripts/bench_net.py (the loop's longest stall)."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import trio

from moska_p2p.bots.loader import load_bot
from moska_p2p.crypto import deck as mp
from moska_p2p.crypto.identity import Identity
from moska_p2p.net.node import Node, NodeOptions
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.transcript import verify_transcript
from moska_p2p.table.networked import BotAtTable


def _node(tmp_path: Path, index: int, echo: list[str]) -> Node:
    return Node(
        NodeOptions(
            identity=Identity.generate(),
            player=BotAtTable(load_bot("random", seed=index)),
            transcript=tmp_path / f"p{index}.moska",
            name=f"random{index}",
            bind="127.0.0.1",
            connect_timeout=5.0,
            lobby_wait=20.0,
            echo=echo.append,
        )
    )


@pytest.mark.trio
async def test_every_pass_is_checked_and_made_outside_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loop = threading.get_ident()
    calls: list[tuple[str, bool]] = []  # (step, in the event loop's thread)

    def watched(name: str, step: Callable[..., Any]) -> Callable[..., Any]:
        def run(*args: Any) -> Any:
            calls.append((name, threading.get_ident() == loop))
            return step(*args)

        return run

    for name in ("pass1", "pass2", "verify_pass1", "verify_pass2"):
        monkeypatch.setattr(mp, name, watched(name, getattr(mp, name)))
    echoes: list[list[str]] = [[], [], []]
    nodes = [_node(tmp_path, i, echoes[i]) for i in range(3)]
    config = TableConfig("durak", 3, secrets.token_bytes(32), {}, 10.0)
    with trio.fail_after(40):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(nodes[0].host, config, 0)
            for node in nodes[1:]:
                nursery.start_soon(node.join, "127.0.0.1", port)
    assert [n.outcome.code if n.outcome else None for n in nodes] == [0, 0, 0], echoes
    # Each node made its two passes and checked the other two seats' four.
    assert sorted({name for name, _ in calls}) == ["pass1", "pass2", "verify_pass1", "verify_pass2"]
    assert sum(name.startswith("pass") for name, _ in calls) == 6
    assert [name for name, in_loop in calls if in_loop] == []
    hashes = {verify_transcript(tmp_path / f"p{i}.moska").final_state_hash for i in range(3)}
    assert len(hashes) == 1 and None not in hashes
