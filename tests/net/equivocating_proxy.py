"""A man in the middle that makes a real peer equivocate.

Links are authenticated by a signed handshake (``hi`` / ``join`` or ``link`` / ``welcome``,
:mod:`moska_p2p.net.wire`) but not encrypted: after the handshake, game frames cross a link as
plain length-prefixed signed frames. So a relay that forwards the handshake unchanged and
holds the *cheater's* identity key can rewrite the cheater's own game frames on that one link,
and only there: the honest end sees a validly signed second version, the cheater's other links
carry the first. That is exactly a modified client that sends version A to some peers and
version B to others, without modifying any client.

:class:`EquivocatingProxy` listens on 127.0.0.1, forwards every connection to one upstream
port (an honest peer's), and on the way up (client to upstream) replaces the cheater's target
message with another valid version signed by the cheater's key, then re-chains every later
frame of the cheater on it (the same body, ``prev`` renamed), as the in-memory
``tests/protocol/adversary_matrix.py`` :class:`Adversary` does for its second group. Frames of
anyone else, network messages and the downstream direction pass unchanged.

It runs an asyncio loop in a thread of the test process, so a synchronous test can drive
real processes and still have a live relay; :meth:`EquivocatingProxy.stop` ends it.
"""

from __future__ import annotations

import asyncio
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from moska_p2p.crypto import deck as mp
from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol import messages as m
from moska_p2p.protocol.deck_phase import STAGE_PASS1
from moska_p2p.protocol.frames import GAME_KINDS, LENGTH_SIZE, encode_frame, open_frame
from moska_p2p.protocol.session import PeerSession
from moska_p2p.protocol.transcript import read_transcript

Variant = Callable[[m.Message, "EquivocatingProxy"], tuple[dict[str, Any], list[tuple[int, bytes]]]]
"""The other version of the target: its body and heads, from the original and the proxy."""


def other_heads(msg: m.Message, proxy: EquivocatingProxy) -> tuple[dict[str, Any], list[Any]]:
    """The same body under other heads: the cheater claims to hold nothing of anyone else.
    The body stays valid whatever the stage (no secret of the cheater is needed), and the two
    frames differ in hash, so the pair is an equivocation (the matrix's variant for a seat)."""
    roster = proxy.roster
    assert roster is not None, "the cheater's hello passed the proxy before any target"
    heads = [
        (0, b"") if key != msg.sender else head for key, head in zip(roster, msg.heads, strict=True)
    ]
    return m.to_wire(msg.body), heads


def reshuffled(transcript: Path) -> Variant:
    """Another valid pass 1 for the cheater's ``shuffle1``: a shuffle of the same input under
    fresh secrets, with its own correct proof (the issue's attack: the next seat builds on
    one version, and a peer holding the other finds that seat's proof wrong).

    The proxy needs the pass's input and the cheater's seat, which only the cheater's frames
    and those it received tell: it replays the cheater's own transcript (a peer writes every
    frame there before it sends anything that follows from it) with an observer, up to the
    target, and shuffles what comes next. Later passes of the cheater are re-chained with their
    own bodies, as for every variant; the game stops at the equivocation before they matter.
    """

    def variant(msg: m.Message, proxy: EquivocatingProxy) -> tuple[dict[str, Any], list[Any]]:
        _, config, roster, frames = read_transcript(transcript)
        observer = PeerSession(None, config, roster)
        for frame in frames:
            seen = _parse(frame)
            if seen is not None and seen.sender == msg.sender and seen.seq >= msg.seq:
                continue  # the target itself, or what follows it
            observer.receive(frame)
        deck = observer.deck
        assert deck is not None, "the cheater's transcript has no deck before its pass 1"
        turn = deck.next_turn()
        assert turn is not None and turn[0] == STAGE_PASS1, turn
        seat = turn[1]
        other = mp.DeckSecrets.from_seed(secrets.token_bytes(32), msg.game, seat, deck.size)
        points, proof = mp.pass1(other, deck.context(seat, STAGE_PASS1), deck._pass1_input())
        body = m.Shuffle1Body(scalar=other.public_scalar, points=tuple(points), proof=proof)
        deck.accept_pass1(seat, body)  # raises unless it is a valid pass 1 of that seat
        proxy.seat = seat
        return m.to_wire(body), list(msg.heads)

    return variant


def _parse(frame: bytes) -> m.Message | None:
    """The game message in a frame (length prefix included), ``None`` for anything else (a
    network message, a session result, bytes that are not a frame: all passed unchanged)."""
    try:
        kind, payload, _ = open_frame(frame[LENGTH_SIZE:])
        if kind not in GAME_KINDS:
            return None
        return m.parse_payload(payload)
    except Exception:  # not ours to judge: the honest end decides what a bad frame is
        return None


class EquivocatingProxy:
    """A relaying TCP proxy that equivocates for ``cheater`` toward ``upstream_port``."""

    def __init__(
        self,
        upstream_port: int,
        cheater: Identity,
        is_target: Callable[[m.Message], bool],
        variant: Variant = other_heads,
    ) -> None:
        self.upstream_port = upstream_port
        self.cheater = cheater
        self.is_target = is_target
        self.variant = variant
        self.roster: list[bytes] | None = None  # from the cheater's hello
        self.target: int | None = None  # the cheater's sequence number of the target
        self.forged: dict[bytes, bytes] = {}  # original hash -> the other version's frame
        self.renamed: dict[bytes, bytes] = {}  # original hash -> the other version's hash
        self.connections = 0
        self.seat: int | None = None  # the cheater's seat, where a variant had to find it
        self.rewritten = 0  # frames replaced on the way up
        self.errors: list[str] = []
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server: asyncio.Server | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # -- lifecycle

    def start(self) -> int:
        """Listen on 127.0.0.1 (any free port) and return the port; the loop runs in a
        daemon thread so a failed test never hangs on it."""
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)

            async def open_server() -> None:
                self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
                self.port = int(self._server.sockets[0].getsockname()[1])
                ready.set()

            loop.run_until_complete(open_server())
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="equivocating-proxy", daemon=True)
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("the proxy did not start listening within 10 s")
        return self.port

    def stop(self) -> None:
        loop = self._loop
        if loop is None or loop.is_closed():
            return

        async def close() -> None:
            if self._server is not None:
                self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()
            loop.stop()

        loop.call_soon_threadsafe(lambda: asyncio.ensure_future(close()))
        if self._thread is not None:
            self._thread.join(10)

    # -- relaying

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            up_reader, up_writer = await asyncio.wait_for(
                asyncio.open_connection("127.0.0.1", self.upstream_port), 10
            )
        except (OSError, TimeoutError) as error:
            self.errors.append(f"cannot reach upstream: {error}")
            writer.close()
            return
        up = asyncio.ensure_future(self._pump_up(reader, up_writer))
        down = asyncio.ensure_future(self._pump_down(up_reader, writer))
        try:
            await asyncio.wait({up, down}, return_when=asyncio.ALL_COMPLETED)
        finally:
            for task in (up, down):
                task.cancel()
            for w in (writer, up_writer):
                w.close()

    async def _pump_down(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Upstream to the cheater: bytes as they come (the half-close passes on too)."""
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        except (OSError, asyncio.IncompleteReadError):
            pass

    async def _pump_up(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """The cheater to upstream, frame by frame: the cheater's game frames rewritten."""
        try:
            while True:
                try:
                    prefix = await reader.readexactly(LENGTH_SIZE)
                except asyncio.IncompleteReadError as end:
                    if end.partial:
                        writer.write(end.partial)
                    break
                size = int.from_bytes(prefix, "big")
                body = await reader.readexactly(size)  # the honest end caps sizes itself
                writer.write(self.rewrite(prefix + body))
                await writer.drain()
            if writer.can_write_eof():
                writer.write_eof()
        except (OSError, asyncio.IncompleteReadError):
            pass
        except Exception as error:  # a bug of the proxy: say so in the test, not silently
            self.errors.append(f"{type(error).__name__}: {error}")
            raise

    # -- equivocating

    def rewrite(self, frame: bytes) -> bytes:
        """What upstream receives instead of ``frame`` (the frame itself if not the cheater's
        target or later)."""
        msg = _parse(frame)
        if msg is None or msg.sender != self.cheater.public_bytes:
            return frame
        with self._lock:
            if msg.type == m.HELLO and self.roster is None:
                self.roster = list(msg.body.roster)
            if self.target is None and self.is_target(msg):
                self.target = msg.seq
            if self.target is None or msg.seq < self.target:
                return frame
            if msg.hash in self.forged:  # a resend or a relay of the same frame: same answer
                self.rewritten += 1
                return self.forged[msg.hash]
            if msg.seq == self.target:
                body, heads = self.variant(msg, self)
                new = self._sign(msg, body, prev=msg.prev, heads=heads)
            elif msg.prev in self.renamed:
                new = self._sign(msg, m.to_wire(msg.body), prev=self.renamed[msg.prev])
            else:  # not on the chain of the target (cannot happen for one sender): unchanged
                return frame
            self.forged[msg.hash] = new
            forged = _parse(new)
            assert forged is not None
            self.renamed[msg.hash] = forged.hash
            self.rewritten += 1
            return new

    def _sign(
        self,
        msg: m.Message,
        body: dict[str, Any],
        *,
        prev: bytes,
        heads: list[tuple[int, bytes]] | None = None,
    ) -> bytes:
        """``msg`` signed again by the cheater with ``body``, ``prev`` and ``heads``."""
        payload = m.encode_payload(
            msg.game,
            msg.sender,
            msg.seq,
            prev,
            msg.type,
            body,
            list(msg.heads) if heads is None else heads,
        )
        return encode_frame(msg.type, payload, self.cheater.sign(msg.type, payload))
