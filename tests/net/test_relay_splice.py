"""A relay that tries to splice itself into a link: it rewrites or
replays the link handshake's messages on a virtual link. The handshake binds both keys and a
fresh nonce of each end (``net/wire.py``), so every attempt is refused by the peers and no
link forms: the relay can only forward or drop.

Two nodes of one table (``a`` earlier in the roster, ``b`` later) reach each other only
through a real relay on 127.0.0.1 whose forwarding the test rewrites; first an honest link
(which the relay records), then each attack on a new one.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import trio
from test_link_handshake_and_caps import _eventually, _linked_pair

from moska_p2p.crypto.identity import Identity
from moska_p2p.net.node import Node
from moska_p2p.net.relay import RelayServer
from moska_p2p.net.relay_client import RELAYED_HOST, RelayClient
from moska_p2p.net.relay_proto import DATA, Conn, Message
from moska_p2p.net.wire import HI, LINK, WELCOME, classify, link_proof, net_frame, prefixed
from moska_p2p.protocol.frames import FrameError

LOOPBACK = "127.0.0.1"
Rewrite = Callable[[bytes, str, bytes], bytes]  # (sender key, frame kind, frame) -> frame


class SplicingRelay(RelayServer):
    """A relay that records every handshake frame it forwards (by kind, the first of each)
    and lets the test rewrite them."""

    def __init__(self) -> None:
        super().__init__()
        self.recorded: dict[str, bytes] = {}
        self.rewrite: Rewrite | None = None

    async def _handle(self, conn: Conn, message: Message) -> None:
        if message.kind == DATA and conn.key is not None:
            payload = message.items[1]
            kind = _kind(payload)
            if kind is not None:
                self.recorded.setdefault(kind, payload)
                if self.rewrite is not None:
                    payload = self.rewrite(conn.key, kind, payload)
                message = Message(DATA, (message.items[0], payload))
        await super()._handle(conn, message)


def _kind(payload: bytes) -> str | None:
    """The kind of a handshake frame that fills a data chunk by itself, else None."""
    size = int.from_bytes(payload[:4], "big")
    if len(payload) != 4 + size:
        return None
    try:
        message = classify(payload[4:])
    except FrameError:
        return None
    return None if message is None else message.kind


async def _through_relay(
    tmp_path: Path, attack: Callable[[SplicingRelay, Node, Node], Rewrite], a_fooled: bool
) -> tuple[Node, Node, BaseException | None]:
    """An honest link from ``b`` to ``a`` through the relay, then one more under ``attack``;
    the nodes and what ``b``'s second dial raised (None: it connected). ``a_fooled``: the
    attack is on ``a``'s side of the handshake, and ``a`` must not count a link at all; else
    ``a`` did talk to the real ``b`` (the relay only rewrote ``a``'s answer), and that link
    must end as ``b`` hangs up."""
    a, b = _linked_pair(tmp_path)
    room = a.table_id[:16]
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            relay = SplicingRelay()
            await nursery.start(relay.serve, LOOPBACK, 0)
            for node in (a, b):
                node._nursery = node.mesh.nursery = node.runner.nursery = nursery
                incoming = node.mesh.relayed_in
                client = RelayClient(node.identity, LOOPBACK, relay.port, room, incoming)
                node.mesh.relay_client = client
                await nursery.start(client.run)
                assert client.registered.is_set(), client.error
            first = await b.mesh.dial(RELAYED_HOST, 1, a.me)
            assert first.is_authenticated
            assert await _eventually(lambda: b.me in a.links)
            await first.stream.aclose()
            assert await _eventually(lambda: b.me not in a.links)
            links_before = a.stats.links
            relay.rewrite = attack(relay, a, b)
            error: BaseException | None = None
            try:
                second = await b.mesh.dial(RELAYED_HOST, 1, a.me)
                await second.stream.aclose()
            except Exception as caught:  # what b was told
                error = caught
            await trio.sleep(0.3)  # a's side of the refused handshake ends
            if a_fooled:
                assert a.stats.links == links_before, "a took the spliced connection for b"
            assert await _eventually(lambda: b.me not in a.links)
            nursery.cancel_scope.cancel()
    return a, b, error


def _replay(kind: str) -> Callable[[SplicingRelay, Node, Node], Rewrite]:
    """The relay plays the ``kind`` frame it recorded on the honest link instead of the new
    one."""

    def attack(relay: SplicingRelay, a: Node, b: Node) -> Rewrite:
        old = relay.recorded[kind]
        return lambda key, seen, frame: old if seen == kind else frame

    return attack


def _flip_nonce(relay: SplicingRelay, a: Node, b: Node) -> Rewrite:
    """The relay changes a byte of ``a``'s fresh nonce in its ``hi``."""

    def rewrite(key: bytes, kind: str, frame: bytes) -> bytes:
        if kind != HI:
            return frame
        message = classify(frame[4:])
        assert message is not None
        at = frame.index(message.body["nonce"])
        return frame[:at] + bytes([frame[at] ^ 1]) + frame[at + 1 :]

    return rewrite


def _own_welcome(relay: SplicingRelay, a: Node, b: Node) -> Rewrite:
    """The relay answers ``b``'s ``link`` with a ``welcome`` of its own key, over the right
    nonces: it would be the listener if keys were not checked."""
    mallory = Identity.generate()
    nonces: dict[str, bytes] = {}

    def rewrite(key: bytes, kind: str, frame: bytes) -> bytes:
        message = classify(frame[4:])
        assert message is not None
        if kind in (HI, LINK):
            nonces[kind] = message.body["nonce"]
        if kind != WELCOME:
            return frame
        parts = (b.table_id, b.me, mallory.public_bytes, nonces[LINK], nonces[HI])
        proof = link_proof(mallory, *parts, b"listener")
        return net_frame(mallory, WELCOME, {"proof": proof})

    return rewrite


@pytest.mark.trio
@pytest.mark.parametrize(
    ("attack", "b_is_told", "on_a"),
    [
        (_replay(HI), "does not answer this connection", True),  # a refuses b's proof
        (_replay(LINK), "does not answer this connection", True),
        (_replay(WELCOME), "did not prove its key", False),
        (_flip_nonce, "bad signature", True),
        (_own_welcome, "did not prove its key", False),
    ],
    ids=["replayed-hi", "replayed-link", "replayed-welcome", "rewritten-nonce", "own-welcome"],
)
async def test_a_relay_cannot_splice_itself_into_a_link(
    tmp_path: Path,
    attack: Callable[[SplicingRelay, Node, Node], Rewrite],
    b_is_told: str,
    on_a: bool,
) -> None:
    _, b, error = await _through_relay(tmp_path, attack, on_a)
    assert error is not None, "b took the spliced connection for a"
    assert b_is_told in str(error)
    assert not b.links


def test_the_recorded_frames_are_whole_handshake_frames() -> None:
    """The test's relay can only rewrite what it recognises: a frame that fills its chunk."""
    me = Identity.generate()
    frame = net_frame(me, HI, {"nonce": bytes(32), "name": "a"})
    assert _kind(frame) == HI and _kind(frame + b"x") is None
    assert _kind(prefixed(b"junk")) is None
