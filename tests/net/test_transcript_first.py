"""A frame of this peer's own is on the disk before it is on the wire.

A peer restarted after a crash rebuilds its session from its transcript; had it sent a frame
the file lacks, it could sign another frame with the same number (equivocation). Appending
first covers a killed process (the kernel holds the bytes); a power cut needs the bytes on
the disk, so the transcript is ``fsync``ed before a frame of ours is handed to a link. The
test records, in one real game of three peers, every write and ``fsync`` of each peer's
transcript and every frame handed to a link, and checks each of the peer's own frames was
written and synced first.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import msgpack
import pytest
import trio

from moska_p2p.bots.loader import load_bot
from moska_p2p.crypto.identity import Identity
from moska_p2p.net.link import Link
from moska_p2p.net.node import Node, NodeOptions
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.frames import FrameError, open_frame
from moska_p2p.table.networked import BotAtTable

LOOPBACK = "127.0.0.1"


class Disk:
    """What reached each file descriptor (``os.write``) and what of it was synced
    (``os.fsync``)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.written: dict[int, bytearray] = {}
        self.synced: dict[int, int] = {}
        write, fsync = os.write, os.fsync

        def recording_write(fd: int, data: bytes | memoryview) -> int:
            done = write(fd, data)
            self.written.setdefault(fd, bytearray()).extend(bytes(data[:done]))
            return done

        def recording_fsync(fd: int) -> None:
            fsync(fd)
            self.synced[fd] = len(self.written.get(fd, b""))

        monkeypatch.setattr(os, "write", recording_write)
        monkeypatch.setattr(os, "fsync", recording_fsync)


def _sender(frame: bytes) -> bytes | None:
    """The author of a game frame (None for anything else)."""
    try:
        kind, payload, _ = open_frame(frame[4:])
        body = msgpack.unpackb(payload)
    except (FrameError, ValueError):
        return None
    if kind.startswith("net/") or not isinstance(body, dict):
        return None
    sender = body.get("f")
    return sender if isinstance(sender, bytes) else None


@pytest.mark.trio
async def test_every_frame_of_ours_is_synced_to_the_transcript_before_a_link_gets_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    disk = Disk(monkeypatch)
    nodes = [
        Node(
            NodeOptions(
                identity=Identity.generate(),
                player=BotAtTable(load_bot("random", seed=i)),
                transcript=tmp_path / f"p{i}.moska",
                name=f"p{i}",
                bind=LOOPBACK,
                connect_timeout=5.0,
                lobby_wait=20.0,
                echo=lambda line: None,
            )
        )
        for i in range(3)
    ]
    checked: list[tuple[bytes, bool]] = []  # (sender, written and synced before the link)
    enqueue = Link.enqueue

    def watched(self: Link, frame: bytes) -> None:
        for node in nodes:
            if self.owner is node.runner and _sender(frame) == node.me:
                file = node.runner.file
                fd = file._fd if file is not None else None
                data = disk.written.get(fd, bytearray()) if fd is not None else bytearray()
                at = data.find(frame)
                on_disk = at >= 0 and at + len(frame) <= disk.synced.get(fd or -1, 0)
                checked.append((node.me, on_disk or file is None or fd is None))
        enqueue(self, frame)

    monkeypatch.setattr(Link, "enqueue", watched)
    config = TableConfig("durak", 3, secrets.token_bytes(32), {}, 20.0)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(nodes[0].host, config, 0)
            for node in nodes[1:]:
                nursery.start_soon(node.join, LOOPBACK, port)
    assert [node.outcome.code if node.outcome else None for node in nodes] == [0, 0, 0]
    assert {sender for sender, _ in checked} == {node.me for node in nodes}
    late = [sender for sender, on_disk in checked if not on_disk]
    assert not late, f"{len(late)} of {len(checked)} own frames went out before their fsync"
