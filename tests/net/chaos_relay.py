"""A relay that drops, delays, reorders and duplicates the bytes of virtual links:
run as ``python chaos_relay.py SEED [FAULTS [RATE]]``; it prints ``relay listening on
127.0.0.1:PORT`` like ``moska relay``, then one ``fault: KIND FROM -> TO`` line per fault.

A fault hits one ``data`` message (a chunk of a link's byte stream, which need not start or end
at a frame's edge), with probability ``RATE`` (0.1) per message, seeded, and at most
``FAULTS`` (2) times for each ordered pair of peers, over all their links: so the chaos ends
and a game can too. A link's first :data:`SPARED` messages (its handshake) are spared: a relay
that breaks a handshake only makes the dialer try again (``test_relay_splice.py``).

- ``drop``: the chunk is not forwarded (the stream loses bytes: a frame cut in two, or gone);
- ``duplicate``: it is forwarded twice (the stream repeats bytes);
- ``reorder``: it is held back and forwarded after the link's next chunk (or after
  :data:`HOLD` seconds if none comes);
- ``delay``: it is forwarded after 0.1 to 1 s, and so is everything after it from that peer;
- ``cut``: only a part of it is forwarded (its head), so a frame is cut off in the middle;
- ``swap``: its second part is forwarded before its first.

A link's chunks are mostly whole frames (a link writes what it has queued in one go), so the
first four usually lose, repeat or reorder whole frames, which the sessions take in stride
(duplicates are ignored, frames out of order wait, a lost one is asked for again); the last
two break the framing of the stream, which the receiver must notice, closing the link.

Every peer it carries is honest: nobody may be convicted, and every transcript must verify.
"""

from __future__ import annotations

import random
import sys
from collections import Counter

import trio

from moska_p2p.crypto.identity import fingerprint_of
from moska_p2p.net.relay import RelayServer
from moska_p2p.net.relay_proto import DATA, Conn, Message

KINDS = ("drop", "duplicate", "reorder", "delay", "cut", "swap")
SPARED = 4
HOLD = 0.5


class ChaosRelay(RelayServer):
    def __init__(self, seed: int, faults: int, rate: float) -> None:
        super().__init__()
        self.rng = random.Random(seed)
        self.faults, self.rate = faults, rate
        self.used: Counter[tuple[bytes, bytes]] = Counter()  # faults per (from, to) pair
        self.seen: Counter[tuple[int, int]] = Counter()  # data messages per (conn, link)
        self.held: dict[tuple[int, int], Message] = {}  # a chunk held back, per link
        self.nursery: trio.Nursery | None = None

    async def _handle(self, conn: Conn, message: Message) -> None:
        link = (conn.id, message.items[0]) if message.kind == DATA else None
        end = self.book.route(conn.id, message.items[0]) if link else None  # type: ignore[arg-type]
        if link is None or end is None or conn.key is None:
            await super()._handle(conn, message)
            return
        target = self.book.conns.get(end[0])
        pair = (conn.key, target.key if target is not None and target.key else b"")
        self.seen[link] += 1
        kind = None
        eligible = self.seen[link] > SPARED and self.used[pair] < self.faults
        if eligible and self.rng.random() < self.rate:
            kind = self.rng.choice(KINDS)
            self.used[pair] += 1
            print(f"fault: {kind} {_fp(pair[0])} -> {_fp(pair[1])}", flush=True)
        held = self.held.pop(link, None)
        if kind == "drop":
            pass
        elif kind == "duplicate":
            await super()._handle(conn, message)
            await super()._handle(conn, message)
        elif kind == "reorder":
            self.held[link] = message
            assert self.nursery is not None
            self.nursery.start_soon(self._release, conn, link, message)
        elif kind == "delay":
            await trio.sleep(self.rng.uniform(0.1, 1.0))
            await super()._handle(conn, message)
        elif kind in ("cut", "swap"):
            data = message.items[1]
            assert isinstance(data, bytes)
            at = self.rng.randrange(1, len(data)) if len(data) > 1 else 1
            parts = [data[:at]] if kind == "cut" else [data[at:], data[:at]]
            for part in parts:
                if part:
                    await super()._handle(conn, Message(DATA, (message.items[0], part)))
        else:
            await super()._handle(conn, message)
        if held is not None:  # the chunk held back goes after the one that came next
            await super()._handle(conn, held)

    async def _release(self, conn: Conn, link: tuple[int, int], message: Message) -> None:
        await trio.sleep(HOLD)
        if self.held.get(link) is message:
            del self.held[link]
            await super()._handle(conn, message)


def _fp(key: bytes) -> str:
    return fingerprint_of(key) if key else "?"


async def main(seed: int, faults: int, rate: float) -> None:
    relay = ChaosRelay(seed, faults, rate)
    async with trio.open_nursery() as nursery:
        relay.nursery = nursery
        await nursery.start(relay.serve, "127.0.0.1", 0)
        print(f"relay listening on 127.0.0.1:{relay.port}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    trio.run(
        main,
        int(args[0]),
        int(args[1]) if len(args) > 1 else 2,
        float(args[2]) if len(args) > 2 else 0.1,
    )
