#!/usr/bin/env python3
"""Attack a ``moska relay`` on 127.0.0.0/8 while a real table plays through it, and say whether
the table finished.

The stranger has 256 source addresses (127.0.1.1-127.0.1.255 and 127.0.2.1, each socket bound
to one) and, on each, keeps as many connections as the relay takes, registered under
throwaway keys in rooms of its own (so it opens as many rooms as it may), reconnecting when
it is cut off; it also keeps silent connections that never register, and a few pairs of its
own keys pump data through the relay as fast as it forwards. A member of the real table's room
(anyone holding the invite: a spectator) registers extra keys there from one address before
the joiners come, then floods the host with data. Meanwhile ``moska host --no-listen --relay``
and two ``moska join INVITE --no-listen`` (bots) play a game whose every link goes through the
relay.

    python scripts/relay_attack.py                    # this tree
    python scripts/relay_attack.py --addresses 0      # the member alone
    PYTHONPATH=/path/to/old/tree python scripts/relay_attack.py   # another tree's relay and
                                                     # peers (the attack adapts its messages)

Bounded in time (``--seconds``, and every wait); 127.0.0.1 only. Prints the table's exit codes
and time, what the stranger got, and the relay's peak memory.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import trio

from moska_p2p.crypto.identity import Identity
from moska_p2p.net import relay_proto
from moska_p2p.net.invite import parse_invite
from moska_p2p.net.relay_proto import CHALLENGE, DATA, OPEN, RelayDecoder, encode

RELAY_LINE = re.compile(r"relay listening on 127\.0\.0\.1:(\d+)")
INVITE_LINE = re.compile(r"(moska:[a-z2-7]+)")
NEW = hasattr(relay_proto, "registration")  # this tree's relay protocol (tickets, rosters)


def addresses() -> list[str]:
    return [f"127.0.1.{n}" for n in range(1, 256)] + ["127.0.2.1"]


class Stranger:
    def __init__(self, port: int) -> None:
        self.port = port
        self.opened = self.refused = self.registered = self.cut = 0
        self.pumped = 0
        self.member_bytes = 0
        self.squatters = 0
        self.held = 0
        self.peak_held = 0

    async def _connect(self, source: str) -> tuple[trio.SocketStream, bytes, RelayDecoder] | None:
        try:
            stream = await trio.open_tcp_stream("127.0.0.1", self.port, local_address=source)
        except OSError:
            self.refused += 1
            return None
        decoder = RelayDecoder()
        with trio.move_on_after(3):
            try:
                while True:
                    data = await stream.receive_some(65536)
                    if not data:
                        break
                    got = list(decoder.feed(bytes(data)))
                    if got and got[0].kind == CHALLENGE:
                        self.opened += 1
                        return stream, got[0].items[0], decoder
            except (trio.BrokenResourceError, OSError, relay_proto.RelayError):
                pass
        self.refused += 1
        await trio.aclose_forcefully(stream)
        return None

    def _register(self, me: Identity, nonce: bytes, room: bytes, pass_: bytes | None) -> bytes:
        if NEW:
            room_pass = relay_proto.RoomPass.parse(pass_) if pass_ else relay_proto.RoomPass.new(
                room, me.public_bytes
            )
            return relay_proto.registration(me, nonce, room_pass)
        proof = relay_proto.register_proof(me, nonce, room)
        return encode("register", room, me.public_bytes, proof)

    async def hold(self, source: str, deadline: float) -> None:
        """One connection slot of ``source``: registered in a room of its own, silent;
        reconnect when cut off."""
        while trio.current_time() < deadline:
            got = await self._connect(source)
            if got is None:
                await trio.sleep(0.5)
                continue
            stream, nonce, _ = got
            me = Identity.generate()
            try:
                await stream.send_all(self._register(me, nonce, secrets.token_bytes(16), None))
                self.registered += 1
                self.held += 1
                self.peak_held = max(self.peak_held, self.held)
                with trio.move_on_at(deadline):
                    while await stream.receive_some(65536):
                        pass
            except (trio.BrokenResourceError, OSError):
                pass
            finally:
                self.held -= 1
                self.cut += 1
                await trio.aclose_forcefully(stream)

    async def silent(self, source: str, deadline: float) -> None:
        """A connection that never registers, again and again."""
        while trio.current_time() < deadline:
            got = await self._connect(source)
            if got is None:
                await trio.sleep(0.5)
                continue
            with trio.move_on_at(deadline):
                with contextlib.suppress(trio.BrokenResourceError, OSError):
                    while await got[0].receive_some(65536):
                        pass
            await trio.aclose_forcefully(got[0])

    async def pump(self, source: str, deadline: float) -> None:
        """Two keys of ours in a room of ours; one pushes data at the other."""
        while trio.current_time() < deadline:
            room = secrets.token_bytes(16)
            sink_key, source_key = Identity.generate(), Identity.generate()
            sink = await self._connect(source)
            src = await self._connect(source)
            if sink is None or src is None:
                await trio.sleep(0.5)
                continue
            owner_pass = None
            if NEW:
                owner_pass = bytes(relay_proto.RoomPass.new(room, sink_key.public_bytes))
            chunk = encode(DATA, 1, secrets.token_bytes(relay_proto.MAX_CHUNK))
            with contextlib.suppress(trio.BrokenResourceError, OSError):
                await sink[0].send_all(self._register(sink_key, sink[1], room, owner_pass))
                await trio.sleep(0.2)
                await src[0].send_all(self._register(source_key, src[1], room, owner_pass))
                await trio.sleep(0.2)
                await src[0].send_all(encode(OPEN, 1, sink_key.public_bytes))
            with trio.move_on_at(deadline):
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(_drain, sink[0])
                    await self._push(src[0], [chunk], "pumped")
                    nursery.cancel_scope.cancel()
            for stream in (sink[0], src[0]):
                await trio.aclose_forcefully(stream)

    async def _push(self, stream: trio.SocketStream, frames: list[bytes], count: str) -> None:
        """Send ``frames`` round and round until the relay cuts ``stream`` off."""
        with contextlib.suppress(trio.BrokenResourceError, OSError):
            while True:
                for frame in frames:
                    await stream.send_all(frame)
                    setattr(self, count, getattr(self, count) + len(frame))

    async def member(self, source: str, invite: str, keys: int, deadline: float) -> None:
        """An invite holder: ``keys`` keys in the table's room from one address (squatting
        before the joiners come), each flooding the host with links of junk."""
        parsed = parse_invite(invite)
        pass_ = parsed.room if NEW else None
        chunk = encode(DATA, 1, secrets.token_bytes(relay_proto.MAX_CHUNK))
        flood = [encode(OPEN, 1, parsed.host_key), *[chunk] * 64, encode("close", 1, "again")]

        async def one_key() -> None:
            got = await self._connect(source)
            if got is None:
                return
            me = Identity.generate()
            with contextlib.suppress(trio.BrokenResourceError, OSError):
                await got[0].send_all(self._register(me, got[1], parsed.table, pass_))
                self.squatters += 1
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_drain, got[0])
                await self._push(got[0], flood, "member_bytes")
                nursery.cancel_scope.cancel()
            await trio.aclose_forcefully(got[0])

        with trio.move_on_at(deadline):
            async with trio.open_nursery() as nursery:
                for _ in range(keys):
                    nursery.start_soon(one_key)


async def _drain(stream: trio.SocketStream) -> None:
    with contextlib.suppress(trio.BrokenResourceError, OSError):
        while await stream.receive_some(65536):
            pass


def _wait_for(path: Path, pattern: re.Pattern[str], seconds: float) -> re.Match[str]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        text = path.read_text(errors="replace") if path.exists() else ""
        found = pattern.search(text)
        if found:
            return found
        time.sleep(0.1)
    raise SystemExit(f"no {pattern.pattern!r} in {path} within {seconds} s:\n{text[-2000:]}")


def _peak_rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=150.0, help="the attack's length")
    parser.add_argument("--head-start", type=float, default=8.0, help="attack alone first")
    parser.add_argument("--no-attack", action="store_true", help="the table alone (control)")
    parser.add_argument(
        "--addresses", type=int, default=256, help="the stranger's addresses (0: the member only)"
    )
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="relay-attack-"))
    env = dict(os.environ, XDG_CONFIG_HOME=str(folder / "config"))
    env["XDG_DATA_HOME"] = str(folder / "data")
    procs: list[subprocess.Popen[bytes]] = []

    def spawn(name: str, *cli: str) -> tuple[subprocess.Popen[bytes], Path]:
        out = folder / f"{name}.out"
        proc = subprocess.Popen(
            [sys.executable, "-m", "moska_p2p", *cli],
            stdout=out.open("wb"),
            stderr=subprocess.STDOUT,
            env=env,
            cwd=folder,  # not this tree's folder: PYTHONPATH picks the tree under test
        )
        procs.append(proc)
        return proc, out

    relay, relay_out = spawn("relay", "relay", "--bind", "127.0.0.1", "--port", "0")
    port = int(_wait_for(relay_out, RELAY_LINE, 20).group(1))
    stranger = Stranger(port)
    result: dict[str, object] = {}

    async def table() -> None:
        await trio.sleep(0 if args.no_attack else args.head_start)
        started = time.monotonic()
        common = ["--bot", "greedy", "--no-listen", "--bind", "127.0.0.1", "-q", "--wait", "90"]
        host, host_out = spawn(
            "host", "host", "--players", "3", "--relay", f"127.0.0.1:{port}", "--timeout",
            "30", "--no-announce", *common,
        )  # fmt: skip
        with trio.move_on_after(30):
            while not INVITE_LINE.search(host_out.read_text(errors="replace")):
                if host.poll() is not None:
                    break
                await trio.sleep(0.1)
        found = INVITE_LINE.search(host_out.read_text(errors="replace"))
        if found is None:
            result["table"] = f"the host never printed an invite: {host_out.read_text()[-300:]}"
            return
        invite = found.group(1)
        result["invite"] = invite
        joiners = []
        for n in range(2):
            await trio.sleep(1)
            joiners.append(spawn(f"join{n}", "join", invite, *common)[0])
        codes = []
        with trio.move_on_after(args.seconds):
            for proc in (host, *joiners):
                while proc.poll() is None:
                    await trio.sleep(0.2)
                codes.append(proc.returncode)
        result["codes"] = codes
        result["seconds"] = round(time.monotonic() - started, 1)
        result["finished"] = len(codes) == 3 and all(c == 0 for c in codes)

    async def attack() -> None:
        deadline = trio.current_time() + args.seconds
        async with trio.open_nursery() as nursery:
            nursery.start_soon(table)
            if not args.no_attack:
                sources = addresses()[: args.addresses]
                for source in sources[:8]:
                    nursery.start_soon(stranger.pump, source, deadline)
                await trio.sleep(1)
                for source in sources:
                    for _ in range(10):
                        nursery.start_soon(stranger.hold, source, deadline)
                    for _ in range(4):
                        nursery.start_soon(stranger.silent, source, deadline)
                for _ in range(int(args.head_start * 10) + 300):
                    if "invite" in result:
                        break
                    await trio.sleep(0.1)
                if "invite" in result:
                    nursery.start_soon(
                        stranger.member, "127.0.3.1", str(result["invite"]), 7, deadline
                    )
            while "codes" not in result and "table" not in result:
                if trio.current_time() > deadline + 5:
                    break
                await trio.sleep(0.5)
            nursery.cancel_scope.cancel()

    try:
        trio.run(attack)
        peak = _peak_rss_kb(relay.pid)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
    print(f"relay protocol: {'tickets and rosters' if NEW else 'before'}; folder {folder}")
    print(f"table: {result.get('table') or ''} exit codes {result.get('codes')},"
          f" {result.get('seconds')} s, finished: {result.get('finished', False)}")
    print(
        f"stranger: {stranger.opened} connections opened, {stranger.refused} refused,"
        f" {stranger.registered} registrations, peak {stranger.peak_held} held at once,"
        f" {stranger.cut} cut; pumped {stranger.pumped / 2**20:.0f} MiB;\n "
        f" member: {stranger.squatters} keys in the table's room, flood"
        f" {stranger.member_bytes / 2**20:.1f} MiB"
    )
    print(f"relay peak memory: {peak / 1024:.0f} MB")
    for name in ("host", "join0", "join1"):
        path = folder / f"{name}.out"
        if path.exists():
            tail = path.read_text(errors="replace").strip().splitlines()[-2:]
            print(f"  {name}: {' | '.join(tail)[:300]}")


if __name__ == "__main__":
    main()
