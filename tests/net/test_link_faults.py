"""Links over a path that loses, repeats or mangles bytes: real link
code, real TCP on 127.0.0.1, ``b`` keeping its link to ``a`` up through an on-path attacker
(``test_link_replay._Path``).

- Bytes that are no frame as its signer sent it (a chunk of the stream cut out or repeated
  by a relay can splice two frames into one that parses) end the link: the session refuses
  them, the node closes the link, the later peer dials again, and ``sync`` brings back what
  was lost. Before, the link stayed up with its framing lost.
- A peer stuck waiting for others asks its live links what it lacks (``sync``) every
  :func:`~moska_p2p.net.runner.sync_interval`, so a frame that reached one peer and not
  another comes back from whoever holds it; a peer waiting for itself (its own move) asks
  nothing.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import trio
from test_link_replay import TO_A, _linked, _pair, _path_listening, _Session, _wait_for

from moska_p2p.crypto.identity import Identity
from moska_p2p.net.runner import sync_interval
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.frames import encode_frame
from moska_p2p.protocol.session import HELLO


class _Judging(_Session):
    """A session that refuses every game frame as no signed frame (what the real intake says
    of one whose signature does not verify)."""

    stage = HELLO
    transcript: list[bytes] = []  # noqa: RUF012
    my_turn = False

    def receive(self, frame: bytes, now: float) -> list[Any]:
        return [v.Rejected("a forged signature (claims seq 3)", corrupt=True)]


class _Stuck(_Session):
    """A session that waits for ``waits_on`` and never moves (what the ticker reads)."""

    transcript: list[bytes] = []  # noqa: RUF012
    my_turn = False
    last_progress = 0.0

    def __init__(self, me: bytes, waits_on: bytes) -> None:
        super().__init__(me)
        self.waits_on = waits_on
        self.config = TableConfig("moska", 2, bytes(32), {}, 2.0)

    def waiting_on(self) -> list[bytes]:
        return [self.waits_on]

    def tick(self, now: float) -> list[Any]:
        return []


@pytest.mark.trio
async def test_a_link_that_carries_a_frame_nobody_signed_is_closed_and_dialed_again(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, "moska_p2p.net")
    with trio.fail_after(40):
        async with trio.open_nursery() as outer:
            path = await _path_listening(outer)
            a, b = _pair(tmp_path, Identity.generate(), Identity.generate(), path.port)
            a.runner.session = _Judging(a.me)  # type: ignore[assignment]
            async with _linked(a, b, path):
                await _wait_for(lambda: b.me in a.links, "no first link")
                forged = encode_frame("move", b"\x80", bytes(64))  # parses; signed by nobody
                await path.conns[0].inject(TO_A, forged)
                await _wait_for(lambda: b.me not in a.links, "a kept the link")
                await path.conns[0].cut()  # a's reset, passed on (the path forwards frames)
                await _wait_for(lambda: len(path.conns) >= 2 and b.me in a.links, "no redial")
            outer.cancel_scope.cancel()
    assert "bytes that are no signed frame (a forged signature" in caplog.text


@pytest.mark.trio
async def test_a_stuck_peer_asks_its_links_for_what_it_lacks_again_and_again(
    tmp_path: Path,
) -> None:
    every = sync_interval(2.0)
    assert every < 2.0 / 2  # well under the timeout
    with trio.fail_after(40):
        async with trio.open_nursery() as outer:
            path = await _path_listening(outer)
            a, b = _pair(tmp_path, Identity.generate(), Identity.generate(), path.port)
            asked: list[dict[bytes, int]] = a.session.asked  # type: ignore[union-attr]
            async with _linked(a, b, path) as nursery:
                await _wait_for(lambda: len(asked) == 1, "no first sync")  # the link's own
                b.runner.session = _Stuck(b.me, a.me)  # type: ignore[assignment]
                nursery.start_soon(b.runner._ticker)
                await _wait_for(lambda: len(asked) >= 3, "no periodic sync")
                b.over.set()  # the game is over: the ticker stops, and so do the syncs
            outer.cancel_scope.cancel()
    assert len(path.conns) == 1  # on the link that was up: nothing was dialed again


@pytest.mark.trio
async def test_a_peer_waiting_for_itself_asks_nothing(tmp_path: Path) -> None:
    """Its own move (a bot or a person thinking) is nothing another peer can send it."""
    with trio.fail_after(40):
        async with trio.open_nursery() as outer:
            path = await _path_listening(outer)
            a, b = _pair(tmp_path, Identity.generate(), Identity.generate(), path.port)
            asked: list[dict[bytes, int]] = a.session.asked  # type: ignore[union-attr]
            async with _linked(a, b, path) as nursery:
                await _wait_for(lambda: len(asked) == 1, "no first sync")
                stuck = _Stuck(b.me, b.me)
                b.runner.session = stuck  # type: ignore[assignment]
                ticks = []
                stuck.tick = lambda now: ticks.append(now) or []  # type: ignore[method-assign]
                nursery.start_soon(b.runner._ticker)
                await _wait_for(lambda: len(ticks) >= 3 * round(sync_interval(2.0) / 0.5), "")
                b.over.set()
            outer.cancel_scope.cancel()
    assert len(asked) == 1
