"""One relay connection carries every virtual link: a write cut short by one link's deadline
must not cut a relay message in half for all of them.

A fake relay on 127.0.0.1 registers the client, then stops reading (its socket buffers fill),
so the client's writes block mid-message. A link's deadline then cancels its write: the
write goes on, shielded, and once the relay reads again every message arrives whole. A relay
that never reads again costs the client that connection (not a garbled stream): the write
fails with ``BrokenResourceError`` after the client's timeout and the client reconnects.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio

from moska_p2p.crypto.identity import Identity
from moska_p2p.net.relay_client import RelayClient, VirtualStream
from moska_p2p.net.relay_proto import (
    CHALLENGE,
    DATA,
    MAX_CHUNK,
    REGISTER,
    REGISTERED,
    Message,
    RelayDecoder,
    RelayError,
    encode,
)

LOOPBACK = "127.0.0.1"
CHUNK = bytes(range(256)) * (MAX_CHUNK // 256)
"""One virtual link's chunk: a relay message of about 16 KiB."""


class StalledRelay:
    """Registers each connection, then reads nothing until :attr:`reading` is set; what it
    reads after that is decoded into :attr:`messages` (a :class:`RelayError` there: the
    stream was garbled)."""

    def __init__(self) -> None:
        self.reading = trio.Event()
        self.connections = 0
        self.messages: list[Message] = []
        self.garbled: RelayError | None = None
        self.port = 0

    async def serve(self, stream: trio.SocketStream) -> None:
        self.connections += 1
        decoder = RelayDecoder()
        async with stream:
            await stream.send_all(encode(CHALLENGE, secrets.token_bytes(32)))
            while not any(m.kind == REGISTER for m in self.messages):
                data = await stream.receive_some(65536)
                if not data:
                    return
                self.messages.extend(decoder.feed(data))
            await stream.send_all(encode(REGISTERED))
            await self.reading.wait()
            try:
                while data := await stream.receive_some(65536):
                    self.messages.extend(decoder.feed(data))
            except RelayError as error:
                self.garbled = error
            except trio.BrokenResourceError:
                pass


@asynccontextmanager
async def _relay_and_client(timeout: float) -> AsyncIterator[tuple[StalledRelay, RelayClient]]:
    relay = StalledRelay()
    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(trio.serve_tcp, relay.serve, 0)
        relay.port = listeners[0].socket.getsockname()[1]

        def incoming(stream: VirtualStream) -> None:
            raise AssertionError("no link comes in")

        client = RelayClient(
            Identity.generate(), LOOPBACK, relay.port, bytes(16), incoming, timeout=timeout
        )
        await nursery.start(client.run)
        assert client.registered.is_set(), client.error
        yield relay, client
        nursery.cancel_scope.cancel()


async def _write_until_the_deadline(
    client: RelayClient, relay: StalledRelay, deadline: float
) -> int:
    """Write chunks as one link does, under its deadline, while the relay reads nothing; the
    relay reads again only once that deadline has passed (the write it cancelled still
    blocked). How many writes were started."""
    started = 0

    async def write() -> None:
        nonlocal started
        with trio.move_on_after(deadline):
            while started < 10_000:  # far more than any socket buffer holds
                started += 1
                await client.send(encode(DATA, 1, CHUNK))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(write)
        await trio.sleep(2 * deadline)  # never returns before the writer's deadline passed
        relay.reading.set()
    return started


@pytest.mark.trio
async def test_a_write_cancelled_mid_message_still_sends_the_whole_message() -> None:
    with trio.fail_after(30):
        async with _relay_and_client(timeout=20.0) as (relay, client):
            started = await _write_until_the_deadline(client, relay, 0.5)
            # a later write, after the cancelled one: the stream must still be in step
            await client.send(encode(DATA, 2, b"after"))
            while not any(m.items == (2, b"after") for m in relay.messages):
                assert relay.garbled is None, f"the stream was garbled: {relay.garbled}"
                await trio.sleep(0.01)
    assert relay.garbled is None
    data = [m for m in relay.messages if m.kind == DATA]
    assert data[-1].items == (2, b"after")
    # every write was sent whole, the one the deadline cancelled in the middle too (the last
    # one started may have been cancelled before it began: then nothing of it was sent)
    assert all(m.items == (1, CHUNK) for m in data[:-1])
    assert len(data) - 1 in (started - 1, started)
    assert relay.connections == 1


@pytest.mark.trio
async def test_a_relay_that_stops_reading_costs_the_connection_not_the_stream() -> None:
    with trio.fail_after(60):
        async with _relay_and_client(timeout=1.0) as (relay, client):
            with pytest.raises(trio.BrokenResourceError, match="took nothing"):
                while True:  # until the socket buffers are full and the timeout runs out
                    await client.send(encode(DATA, 1, CHUNK))
            while relay.connections < 2 or not client.registered.is_set():
                await trio.sleep(0.01)  # the client dropped that connection and came back
            assert client.registered.is_set()
