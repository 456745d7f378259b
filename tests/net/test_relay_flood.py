"""A ``moska relay`` process flooded by strangers on 127.0.0.1 stays under its caps: silent
connections, garbage, registrations under throwaway keys in many rooms, and
virtual links pumping data at members that never read. Its peak resident memory stays under
100 MB, it refuses what is over its caps, and afterwards it still relays for a real table."""

from __future__ import annotations

import contextlib
import secrets
from pathlib import Path

import pytest
import trio
from net_harness import Peer
from test_relay_processes import RELAY_LINE

from moska_p2p.crypto.identity import Identity
from moska_p2p.net.relay_client import RelayClient, VirtualStream
from moska_p2p.net.relay_proto import (
    CHALLENGE,
    DATA,
    MAX_CHUNK,
    OPEN,
    RelayDecoder,
    RoomPass,
    encode,
    registration,
)

LOOPBACK = "127.0.0.1"
FLOOD_SECONDS = 12.0
MAX_RSS_KB = 100 * 1024


def _memory_kb(pid: int) -> tuple[int, int]:
    """The process's resident memory now and at its peak (VmRSS, VmHWM), in kB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        fields[name] = value
    return int(fields["VmRSS"].split()[0]), int(fields["VmHWM"].split()[0])


class Flood:
    """Strangers at the relay's port, every one of them bounded by the test's deadline."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.opened = self.refused = self.registered = self.pumped = 0
        self.held: list[trio.SocketStream] = []

    async def _connect(self) -> tuple[trio.SocketStream, bytes] | None:
        """A connection and the relay's challenge, or None (refused or closed at once)."""
        try:
            stream = await trio.open_tcp_stream(LOOPBACK, self.port)
        except OSError:
            self.refused += 1
            return None
        self.held.append(stream)
        self.opened += 1
        decoder = RelayDecoder()
        with trio.move_on_after(2):
            while True:
                try:
                    data = await stream.receive_some(4096)
                except trio.BrokenResourceError:
                    data = b""
                if not data:
                    break
                messages = list(decoder.feed(bytes(data)))
                if messages and messages[0].kind == CHALLENGE:
                    return stream, messages[0].items[0]
        self.refused += 1
        return None

    async def silent(self) -> None:
        """Connect and say nothing."""
        await self._connect()

    async def garbage(self) -> None:
        got = await self._connect()
        if got is not None:
            with contextlib.suppress(trio.BrokenResourceError, OSError):
                await got[0].send_all(b"\xff\xff\xff\xff" + secrets.token_bytes(1000))

    async def register(self, room: bytes, me: Identity) -> trio.SocketStream | None:
        got = await self._connect()
        if got is None:
            return None
        stream, nonce = got
        try:
            await stream.send_all(registration(me, nonce, RoomPass(room)))
        except (trio.BrokenResourceError, OSError):
            return None
        self.registered += 1
        return stream

    async def pump(self) -> None:
        """Two throwaway keys in a fresh room: one opens a link to the other, which never
        reads, and pushes data as fast as the relay takes it."""
        room = secrets.token_bytes(16)
        sink_key, source_key = Identity.generate(), Identity.generate()
        sink = await self.register(room, sink_key)
        source = await self.register(room, source_key)
        if sink is None or source is None:
            return
        chunk = encode(DATA, 1, secrets.token_bytes(MAX_CHUNK))
        try:
            await source.send_all(encode(OPEN, 1, sink_key.public_bytes))
            while True:
                await source.send_all(chunk)
                self.pumped += len(chunk)
        except (trio.BrokenResourceError, trio.ClosedResourceError, OSError):
            pass

    async def close(self) -> None:
        for stream in self.held:
            await trio.aclose_forcefully(stream)
        self.held.clear()


async def _flood_and_measure(port: int, pid: int) -> tuple[Flood, int]:
    """Flood for :data:`FLOOD_SECONDS`, sampling the relay's memory; the peak seen (kB)."""
    flood = Flood(port)
    peak = 0
    with trio.move_on_after(FLOOD_SECONDS):
        async with trio.open_nursery() as nursery:
            for i in range(300):
                kind = i % 5
                if kind in (0, 1):
                    nursery.start_soon(flood.pump)
                elif kind == 2:
                    nursery.start_soon(flood.silent)
                elif kind == 3:
                    nursery.start_soon(flood.garbage)
                else:
                    room = secrets.token_bytes(16)
                    nursery.start_soon(flood.register, room, Identity.generate())
                if i % 10 == 0:
                    peak = max(peak, _memory_kb(pid)[0])
                    await trio.sleep(0.02)
            while True:
                peak = max(peak, _memory_kb(pid)[0])
                await trio.sleep(0.2)
    peak = max(peak, _memory_kb(pid)[1])  # the kernel's own peak: nothing slips between samples
    await flood.close()
    return flood, peak


async def _still_relays(port: int) -> None:
    """Two real members of a fresh room exchange bytes through the relay."""
    room = secrets.token_bytes(16)
    alice, bob = Identity.generate(), Identity.generate()
    inbox: list[VirtualStream] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            a = RelayClient(alice, LOOPBACK, port, room, lambda s: None, timeout=10)
            b = RelayClient(bob, LOOPBACK, port, room, inbox.append, timeout=10)
            for client in (a, b):
                await nursery.start(client.run)
                while not client.registered.is_set():  # it retries: the flood's buckets refill
                    await trio.sleep(0.1)
            link = await a.open(bob.public_bytes)
            await link.send_all(b"still here")
            while not inbox:
                await trio.sleep(0.01)
            received = b""
            while len(received) < 10:
                received += await inbox[0].receive_some()
            assert received == b"still here"
            nursery.cancel_scope.cancel()


def test_a_flooded_relay_stays_under_its_caps(tmp_path: Path) -> None:
    relay = Peer("relay", ["relay", "--bind", LOOPBACK, "--port", "0", "-v"], tmp_path)
    try:
        port = int(relay.wait_for(RELAY_LINE).group(1))
        assert relay.popen is not None
        pid = relay.popen.pid
        idle = _memory_kb(pid)[0]
        flood, peak = trio.run(_flood_and_measure, port, pid)
        assert relay.popen.poll() is None, relay.out + relay.err
        print(f"relay memory: {idle} kB idle, {peak} kB at the flood's peak; {flood.opened}"
              f" connections opened, {flood.refused} refused or cut, {flood.registered}"
              f" registered, {flood.pumped >> 20} MiB pushed")  # fmt: skip
        assert peak < MAX_RSS_KB, (peak, relay.err)
        assert flood.refused > 0  # the caps were reached
        trio.run(_still_relays, port)
    finally:
        relay.kill()


if __name__ == "__main__":  # pragma: no cover - the figures for a report
    pytest.main([__file__, "-q", "-s", "-p", "no:cacheprovider"])
