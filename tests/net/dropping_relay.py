"""A relay that silently drops what one peer sends once it has forwarded ``after`` bytes of
it: run as ``python dropping_relay.py KEYHEX AFTER``; it prints
``relay listening on 127.0.0.1:PORT`` like ``moska relay``. The peer it drops is honest; the
others' timeout verdicts must say that their link to it went through a relay."""

from __future__ import annotations

import sys

import trio

from moska_p2p.net.relay import RelayServer
from moska_p2p.net.relay_proto import DATA, Conn, Message


class DroppingRelay(RelayServer):
    def __init__(self, victim: bytes, after: int) -> None:
        super().__init__()
        self.victim, self.after, self.forwarded = victim, after, 0

    async def _handle(self, conn: Conn, message: Message) -> None:
        if message.kind == DATA and conn.key == self.victim:
            self.forwarded += len(message.items[1])
            if self.forwarded > self.after:
                return  # dropped: the link stays up, the peer looks silent
        await super()._handle(conn, message)


async def main(victim: bytes, after: int) -> None:
    relay = DroppingRelay(victim, after)
    async with trio.open_nursery() as nursery:
        await nursery.start(relay.serve, "127.0.0.1", 0)
        print(f"relay listening on 127.0.0.1:{relay.port}", flush=True)


if __name__ == "__main__":
    trio.run(main, bytes.fromhex(sys.argv[1]), int(sys.argv[2]))
