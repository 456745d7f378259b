"""The transport in one process (pytest-trio): framing over memory streams, one link, and a
mesh of three peers on 127.0.0.1 in one trio run, with links cut mid-game."""

from __future__ import annotations

import secrets
from pathlib import Path

import msgpack
import pytest
import trio
import trio.testing
from typer.testing import CliRunner

from moska_p2p.bots.loader import load_bot
from moska_p2p.cli import app
from moska_p2p.crypto.identity import Identity
from moska_p2p.net.link import Link
from moska_p2p.net.node import Node, NodeOptions
from moska_p2p.net.wire import (
    BYE,
    SYNC,
    FrameStream,
    NetMessage,
    classify,
    link_id,
    net_frame,
    prefixed,
)
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.frames import MAX_FRAME, FrameError, open_frame, pack, signed_frame
from moska_p2p.protocol.transcript import verify_transcript
from moska_p2p.table.networked import BotAtTable

ALICE = Identity.from_seed(bytes([1]) * 32)
BOB = Identity.from_seed(bytes([2]) * 32)
LINK = link_id(bytes(32), ALICE.public_bytes, BOB.public_bytes, bytes([3]) * 32, bytes([4]) * 32)
"""The id of a link between ALICE and BOB (what their handshake would give)."""


def _authenticated(stream: trio.abc.HalfCloseableStream) -> FrameStream:
    fs = FrameStream(stream)
    fs.authenticated(LINK)
    return fs


@pytest.mark.trio
async def test_frames_cross_a_stream_whatever_the_chunking() -> None:
    left, right = trio.testing.memory_stream_pair()
    frames = [signed_frame(ALICE, "move", {"n": i, "pad": "x" * 300 * i}) for i in range(5)]
    data = b"".join(frames)
    reader = FrameStream(right)
    got: list[bytes] = []
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:

            async def send() -> None:
                for at in range(0, len(data), 7):
                    await left.send_all(data[at : at + 7])
                await left.send_eof()

            nursery.start_soon(send)
            while (body := await reader.receive()) is not None:
                got.append(prefixed(body))
    assert got == frames


@pytest.mark.trio
@pytest.mark.parametrize(
    "junk",
    [b"\x00\x00\x00\x05hello", (MAX_FRAME + 1).to_bytes(4, "big"), b"\x00\x00\x01\x00abc"],
    ids=["garbage", "oversized", "cut short"],
)
async def test_garbage_an_oversized_or_a_truncated_frame_breaks_the_stream(junk: bytes) -> None:
    left, right = trio.testing.memory_stream_pair()
    await left.send_all(junk)
    await left.send_eof()
    reader = FrameStream(right)
    with trio.fail_after(5), pytest.raises(FrameError):
        body = await reader.receive()
        assert body is not None
        classify(body)


def test_network_messages_are_told_apart_from_game_frames_and_checked() -> None:
    assert classify(signed_frame(ALICE, "hello", {"t": "hello", "b": {}})[4:]) is None
    message = classify(net_frame(ALICE, SYNC, {"have": []}, LINK)[4:], LINK)
    assert message == NetMessage(SYNC, ALICE.public_bytes, {"have": []})
    forged = signed_frame(ALICE, "net/sync", {"key": BOB.public_bytes, "have": []})
    payload = pack({"key": ALICE.public_bytes})
    unknown = prefixed(msgpack.packb(["net/teleport", payload, ALICE.sign("net/x", payload)]))
    missing = signed_frame(ALICE, "net/bye", {"key": ALICE.public_bytes})
    _, bye_payload, bye_signature = open_frame(net_frame(ALICE, BYE, {"reason": "x"}, LINK)[4:])
    relabelled = prefixed(msgpack.packb(["net/refuse", bye_payload, bye_signature]))  # a bye
    beacon = signed_frame(ALICE, "beacon", {"key": ALICE.public_bytes})
    for frame in (forged, unknown, missing, beacon, relabelled):
        with pytest.raises(FrameError):
            classify(frame[4:], LINK)


class _Owner:
    send_timeout = 5.0
    identity = ALICE

    def __init__(self) -> None:
        self.frames: list[bytes] = []
        self.net: list[NetMessage] = []

    def on_frame(self, frame: bytes, source: bytes) -> None:
        self.frames.append(frame)

    def on_net(self, link: Link, message: NetMessage) -> None:
        self.net.append(message)


@pytest.mark.trio
async def test_a_link_carries_frames_says_bye_and_ends() -> None:
    a, b = trio.testing.memory_stream_pair()
    owner_a, owner_b = _Owner(), _Owner()
    link_a = Link(owner_a, BOB.public_bytes, _authenticated(a))
    link_b = Link(owner_b, ALICE.public_bytes, _authenticated(b))
    frames = [signed_frame(ALICE, "move", {"n": i}) for i in range(3)]
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(link_a.run)

            async def run_b() -> None:
                await link_b.run()  # ends at a's end of stream, after its bye
                await b.aclose()

            nursery.start_soon(run_b)
            for frame in frames:
                link_a.enqueue(frame)
            link_a.finish("done")
    assert owner_b.frames == frames
    assert [m.kind for m in owner_b.net] == [BYE]
    assert link_a.frames_out == 4


@pytest.mark.trio
async def test_garbage_on_a_link_ends_that_link() -> None:
    a, b = trio.testing.memory_stream_pair()
    link = Link(_Owner(), BOB.public_bytes, _authenticated(a))
    await b.send_all(signed_frame(BOB, "move", {"n": 1}) + b"\x00\x00\x00\x03xyz")
    broke = False
    with trio.fail_after(5):
        try:
            await link.run()
        except* FrameError:
            broke = True
    assert broke
    assert link.frames_in == 1  # the good frame before the garbage got through


def _node(tmp_path: Path, index: int, bot: str, echo: list[str], pace: float = 0.0) -> Node:
    options = NodeOptions(
        identity=Identity.generate(),
        player=BotAtTable(load_bot(bot, seed=index), pace=pace),
        transcript=tmp_path / f"p{index}.moska",
        name=f"{bot}{index}",
        bind="127.0.0.1",
        connect_timeout=5.0,
        lobby_wait=20.0,
        echo=echo.append,
    )
    return Node(options)


async def _play(nodes: list[Node], config: TableConfig, chaos: bool) -> None:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(nodes[0].host, config, 0)
        for node in nodes[1:]:
            nursery.start_soon(node.join, "127.0.0.1", port)
        if chaos:
            # Cut every link of the host, then of the last joiner, after some moves: the
            # later peers redial and a sync fills the gap.
            for victim, moves in ((nodes[0], 10), (nodes[-1], 30)):
                while victim.stats.moves < moves and not victim.over.is_set():
                    await trio.sleep(0.005)
                assert victim.links, "no link to cut"
                for link in list(victim.links.values()):
                    link.cancel()


@pytest.mark.trio
@pytest.mark.parametrize("chaos", [False, True], ids=["calm", "links cut mid-game"])
async def test_a_mesh_of_three_peers_in_one_trio_run(tmp_path: Path, chaos: bool) -> None:
    echoes: list[list[str]] = [[], [], []]
    nodes = [
        _node(tmp_path, i, bot, echoes[i], pace=0.005 if chaos else 0.0)
        for i, bot in enumerate(["greedy", "random", "shedder"])
    ]
    config = TableConfig("durak", 3, secrets.token_bytes(32), {}, 10.0)
    with trio.fail_after(40):
        await _play(nodes, config, chaos)
    outcomes = [node.outcome for node in nodes]
    assert [o.code if o else None for o in outcomes] == [0, 0, 0], echoes
    hashes = {verify_transcript(tmp_path / f"p{i}.moska").final_state_hash for i in range(3)}
    assert len(hashes) == 1 and None not in hashes
    assert any(line.startswith("result: ") for line in echoes[1])
    # each peer links to the two others once, and again after each cut that touched it
    # (host cut: the joiners redial it; last joiner cut: it redials both)
    expected = [5, 4, 5] if chaos else [2, 2, 2]
    assert all(n.stats.links >= e for n, e in zip(nodes, expected, strict=True))


runner = CliRunner()


def test_without_a_bot_the_commands_seat_a_person() -> None:
    """Without --bot the person plays at the terminal (tests/net/test_person.py plays it)."""
    for command in ("host", "join"):
        result = runner.invoke(app, [command, "--help"])
        assert result.exit_code == 0
        assert "--bot" in result.output and "terminal" in result.output


def test_a_bad_address_is_a_usage_error() -> None:
    result = runner.invoke(app, ["join", "nowhere", "--bot", "random"])
    assert result.exit_code == 2
    assert "is not HOST:PORT" in result.output
