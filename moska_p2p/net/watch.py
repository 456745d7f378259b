"""``moska watch``: a spectator, with no seat (PROTOCOL.md §8.4 and §23).

The spectator dials the host (an invite's direct address, then its relay, as a joiner does),
pins the host's key, proves a key of its own (a throwaway one is fine: it is on no roster)
with the handshake of :mod:`.watch_proto`, and from then on only reads. What the host streams
(:mod:`.watch_host`) goes into an *observer* session (seat -1, no identity), which checks
every signature, proof, key and move as it comes, exactly as ``moska verify`` does over a
file: the host cannot forge a player's frame (each is signed by its author), it can only
withhold frames, which the spectator reports as the host's silence, blaming nobody at the
table. A frame the observer refuses ends the watch, naming the frame and its signer.

Every frame of a game is written to a transcript whose owner is the host: the host's own
record of the game, frame for frame, which ``moska verify`` accepts; it is verified again at
the end of each game. A spectator never holds a key share: it knows the cards every player
knows, and at the end the cards disclosed.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import trio

from ..crypto.identity import Identity, fingerprint_of, verify
from ..errors import Error
from ..protocol import messages as m
from ..protocol import verdict as v
from ..protocol.config import ConfigError, TableConfig, lobby_id, session_id
from ..protocol.frames import SESSION_RESULT, FrameError, open_frame, printable
from ..protocol.session import DONE, STOPPED, PeerSession
from ..protocol.tally import write_session_file
from ..protocol.transcript import verify_transcript
from .invite import Invite
from .lobby import check_roster
from .persist import TranscriptFile
from .relay_client import RelayClient, RelayUnreachable, VirtualStream
from .relay_proto import ROOM_SIZE
from .state import (
    EXIT_FAILED,
    EXIT_OK,
    Outcome,
    host_port,
    reason_of,
    seat_label,
    seat_name,
)
from .watch_proto import HOST, WATCHER, check_watch_proof, watch_id, watch_proof
from .wire import (
    BYE,
    GAME,
    HI,
    MAX_NAME,
    START,
    WATCH,
    WELCOME,
    FrameStream,
    HandshakeError,
    classify,
    net_frame,
    prefixed,
)

log = logging.getLogger("moska_p2p.net")

DIRECT_TRY = 3.0
"""Seconds a direct dial may take when the invite names a relay too."""


def _echo(text: str) -> None:
    print(text, flush=True)


@dataclass
class WatchOptions:
    """How a spectator runs (``moska watch``, or a test)."""

    identity: Identity  # any key: a spectator is on no roster
    transcript: Path  # the watched game's file (a session's games: NAME-gN beside it)
    name: str = "spectator"
    connect_timeout: float = 10.0  # a dial plus its handshake
    lobby_wait: float = 600.0  # how long the table may take to fill
    silence: float | None = None  # seconds of nothing from the host; None: 2 x timeout + 10
    echo: Callable[[str], None] = _echo


class Spectator(Protocol):
    """What shows the table to the person watching (the ui layer's full screen, or lines).
    Every method is called in the trio thread; ``names`` are the seats' names."""

    def seated(self, session: PeerSession, names: Sequence[str]) -> None: ...

    def moved(self, session: PeerSession, names: Sequence[str], seat: int, move: str) -> None: ...

    def ended(self, session: PeerSession, names: Sequence[str], text: str) -> None: ...


class WatchFailed(Error):
    """The watch cannot go on: the one-line reason."""


class Watcher:
    """One spectator of one table (see the module docstring)."""

    def __init__(self, options: WatchOptions, spectator: Spectator) -> None:
        self.o = options
        self.spectator = spectator
        self.me = options.identity.public_bytes
        self._nursery: trio.Nursery | None = None
        self.host_key = b""
        self.keys: list[bytes] = []
        self.names: dict[bytes, str] = {}
        self.observer: PeerSession | None = None
        self.file: TranscriptFile | None = None
        self.frames = 0  # frames of the current game so far
        self.end: v.Finished | v.Stopped | None = None
        self.games: list[Path] = []  # the transcripts written, verified
        self.results: dict[bytes, bytes] = {}  # signer -> signed session result
        self.config: TableConfig | None = None

    # ------------------------------------------------------------------ entry points

    async def watch_invite(self, invite: Invite) -> Outcome:
        """Watch the table of ``invite``: its direct address, else its relay."""
        direct = invite.direct[0] if invite.direct else None
        return await self.watch(direct, key=invite.host_key, room=invite.room, relay=invite.relay)

    async def watch(
        self,
        direct: tuple[str, int] | None,
        *,
        key: bytes | None = None,
        room: bytes | None = None,
        relay: tuple[str, int] | None = None,
    ) -> Outcome:
        """Watch the table at ``direct`` (or through ``relay``, in ``room``, to ``key``)."""
        where = host_port(*direct) if direct else f"the relay {host_port(*relay or ('', 0))}"
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                outcome = await self._watch(direct, key, room, relay, where)
                nursery.cancel_scope.cancel()
        finally:
            self._close_game_file()
        return outcome

    async def _watch(
        self,
        direct: tuple[str, int] | None,
        key: bytes | None,
        room: bytes | None,
        relay: tuple[str, int] | None,
        where: str,
    ) -> Outcome:
        """The watch, its failures turned into an outcome with a one-line reason."""
        try:
            fs = await self._open(direct, key, room, relay)
            try:
                return await self._run(fs, key, room)
            finally:
                await trio.aclose_forcefully(fs.stream)
        except (OSError, trio.TooSlowError, trio.BrokenResourceError, RelayUnreachable) as error:
            reason = reason_of(error)
            if isinstance(error, ConnectionRefusedError):
                reason = "connection refused (no table is open at that address)"
            return Outcome(EXIT_FAILED, f"could not watch the table at {where}: {reason}")
        except (HandshakeError, FrameError, ConfigError) as error:
            return Outcome(EXIT_FAILED, f"could not watch the table at {where}: {error}")
        except WatchFailed as error:
            return Outcome(EXIT_FAILED, str(error))

    # ------------------------------------------------------------------ the connection

    async def _open(
        self,
        direct: tuple[str, int] | None,
        key: bytes | None,
        room: bytes | None,
        relay: tuple[str, int] | None,
    ) -> FrameStream:
        """A connection to the host: TCP when ``direct`` answers, else a virtual link
        through ``relay`` (registered in ``room`` under our throwaway key)."""
        if direct is not None:
            bound = DIRECT_TRY if relay is not None else self.o.connect_timeout
            try:
                with trio.fail_after(bound):
                    return FrameStream(await trio.open_tcp_stream(*direct))
            except (OSError, trio.TooSlowError) as error:
                if relay is None or key is None or room is None:
                    raise
                log.info("%s does not answer (%s): through the relay", direct, reason_of(error))
        if relay is None or key is None or room is None:
            raise RelayUnreachable("no address to dial")
        assert self._nursery is not None
        nursery = self._nursery

        def nobody(stream: VirtualStream) -> None:  # nobody opens a link to a spectator
            nursery.start_soon(trio.aclose_forcefully, stream)

        client = RelayClient(self.o.identity, *relay, room, nobody, timeout=self.o.connect_timeout)
        await nursery.start(client.run)
        return FrameStream(await client.open(key))

    async def _handshake(
        self, fs: FrameStream, key: bytes | None, room: bytes | None
    ) -> TableConfig:
        """Read the host's ``hi``, check its key and table, prove ours, check its proof."""
        with trio.fail_after(self.o.connect_timeout):
            hi = await fs.receive_net(HI)
            if "config" not in hi.body:
                raise HandshakeError("the peer at that address is not the host of a table")
            if key is not None and hi.key != key:
                raise HandshakeError(
                    f"{fingerprint_of(hi.key)} answers there, not {fingerprint_of(key)} whose"
                    " table the invite names"
                )
            config = TableConfig.from_wire(hi.body["config"])
            table = lobby_id(config)
            if room is not None and table[:ROOM_SIZE] != room[:ROOM_SIZE]:
                raise HandshakeError(
                    "the host there has another table than the invite's (an old invite?)"
                )
            nonce = secrets.token_bytes(32)
            parts = (table, self.me, hi.key, nonce, hi.body["nonce"])
            proof = watch_proof(self.o.identity, *parts, WATCHER)
            body = {"nonce": nonce, "table": table, "proof": proof, "name": self.o.name[:MAX_NAME]}
            await fs.send(net_frame(self.o.identity, WATCH, body))
            welcome = await fs.receive_net(WELCOME)
            if welcome.key != hi.key or not check_watch_proof(welcome.body["proof"], *parts, HOST):
                raise HandshakeError("the host did not prove its key for this connection")
        fs.authenticated(watch_id(*parts))
        self.host_key = hi.key
        host_name = printable(str(hi.body["name"])[:MAX_NAME])
        self.o.echo(
            f"watching {config.preset} for {config.players} players, opened by {host_name}"
            f" ({fingerprint_of(hi.key)}); timeout {config.timeout:g} s"
            + (f"; a session of {config.games} games" if config.in_session else "")
        )
        return config

    # ------------------------------------------------------------------ the stream

    async def _run(self, fs: FrameStream, key: bytes | None, room: bytes | None) -> Outcome:
        config = await self._handshake(fs, key, room)
        self.config = config
        self.o.echo("waiting for the table to fill")
        with trio.move_on_after(self.o.lobby_wait) as waiting:
            first = await fs.receive_net(START, BYE)
        if waiting.cancelled_caught:
            raise WatchFailed(f"the table did not fill within {self.o.lobby_wait:g} s")
        if first.kind == BYE:
            raise WatchFailed(f"the host closed the table: {_said(first.body['reason'])}")
        roster = check_roster(first, self.host_key, config)
        self.keys = [e.key for e in roster]
        self.names = {e.key: printable(e.name) for e in roster}
        players = ", ".join(f"{self.names[k]} ({fingerprint_of(k)})" for k in self.keys)
        self.o.echo(f"the game starts: {players}")
        silence = self.o.silence or 2 * config.timeout + 10.0
        while True:
            with trio.move_on_after(silence) as quiet:
                body = await fs.receive()
            if quiet.cancelled_caught:
                raise WatchFailed(
                    f"the host stopped sending: nothing for {silence:g} s (the game may go on"
                    " without this spectator; nobody at the table is blamed)"
                )
            if body is None:
                if self._watched_to_the_end():
                    break
                raise WatchFailed("the host closed the connection before the end of the game")
            message = classify(body, fs.link)
            if message is None:
                await self._frame(prefixed(body))
                continue
            if message.key != self.host_key:
                raise WatchFailed(f"a {message.kind} message not from the host")
            if message.kind == GAME:
                await self._game(int(message.body["game"]), message.body["config"])
            elif message.kind == BYE:
                if not self._watched_to_the_end():
                    raise WatchFailed(
                        "the host ended the stream before the end of the game:"
                        f" {_said(message.body['reason'])}"
                    )
                break
            else:
                raise WatchFailed(f"a {message.kind} message on a spectator's connection")
        await self._finish_game()
        return self._summary()

    def _watched_to_the_end(self) -> bool:
        return self.end is not None or (self.observer is None and bool(self.games))

    async def _game(self, number: int, wire: object) -> None:
        """The host's ``net/game``: the frames that follow are of game ``number``."""
        await self._finish_game()
        config = TableConfig.from_wire(wire)
        if config.game != number:
            raise WatchFailed(f"the host announced game {number} with the settings of another")
        base = self.o.transcript
        path = base.with_name(f"{base.stem}-g{number}{base.suffix}") if config.in_session else base
        self.observer = PeerSession(None, config, self.keys)
        self.file = TranscriptFile(path, self.host_key, config, self.keys)
        self.frames = 0
        self.end = None
        if config.in_session:
            self.o.echo(f"game {number} of {config.games}")

    async def _frame(self, frame: bytes) -> None:
        """A frame from the host: a session's signed result, or the game's next frame, which
        the observer must apply at once (it is the host's record, in the host's order)."""
        if _kind(frame) == SESSION_RESULT:
            signer = _sender_of_result(frame)
            if signer is not None:
                self.results[signer] = frame
            return
        observer, file = self.observer, self.file
        if observer is None or file is None:
            raise WatchFailed("the host sent a game frame before saying which game")
        index = self.frames
        self.frames += 1
        file.append([frame])
        if observer.stage in (DONE, STOPPED):
            return  # the host's verdict after a cheat, another peer's late result
        before = len(observer.transcript)
        outputs = await trio.to_thread.run_sync(observer.receive, frame)
        stopped = False
        for out in outputs:
            if isinstance(out, v.Rejected):
                raise WatchFailed(
                    f"the host's stream does not verify: frame {index} ({self._signer(frame)}):"
                    f" {out.reason}"
                )
            if isinstance(out, v.Seated):
                self.o.echo(
                    f"seats: {', '.join(self._label(s) for s in range(len(out.seats)))};"
                    f" dealer: seat {out.dealer}"
                )
                self.spectator.seated(observer, self._seat_names())
            elif isinstance(out, v.Moved):
                self.spectator.moved(observer, self._seat_names(), out.seat, out.move)
            elif isinstance(out, v.Finished | v.Stopped):
                stopped = True
                self._ended(out)
        if not stopped and len(observer.transcript) != before + 1:
            raise WatchFailed(
                f"the host's stream does not verify: frame {index} ({self._signer(frame)})"
                " cannot apply at this point (out of order)"
            )

    def _ended(self, end: v.Finished | v.Stopped) -> None:
        observer = self.observer
        assert observer is not None
        self.end = end
        if isinstance(end, v.Finished):
            losers = [self._label(s) for s in end.losers]
            text = "result: " + (" and ".join(losers) + " lost" if losers else "a draw")
        else:
            text = f"game stopped: {end.verdict.describe(self.names)}"
        names = self._seat_names()
        for seat, name in enumerate(names):  # what is known at the end: public and disclosed
            if observer.game is not None:
                cards = " ".join(observer.game.hand(seat)) or "no cards"
                self.o.echo(f"  seat {seat} ({name}) holds: {cards}")
        self.o.echo(text)
        self.spectator.ended(observer, names, text)

    async def _finish_game(self) -> None:
        """The game so far is over (the next one starts, or the stream ends): close its file
        and verify it as ``moska verify`` would."""
        file = self.file
        if file is None:
            return
        self._close_game_file()
        if self.end is None:
            raise WatchFailed(f"game {self.observer and self.observer.config.game} ended unseen")
        report = await trio.to_thread.run_sync(verify_transcript, file.path)
        if not report.valid:
            raise WatchFailed(f"the transcript {file.path} does not verify: {report.fault}")
        self.games.append(file.path)
        self.o.echo(f"transcript verified: {file.path}")
        self.observer = None

    def _close_game_file(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None

    def _summary(self) -> Outcome:
        config = self.config
        if self.results and config is not None and self.host_key in self.results:
            base = self.o.transcript
            path = base.with_name(f"{base.stem}-session{base.suffix}")
            others = [f for k, f in sorted(self.results.items()) if k != self.host_key]
            sid = session_id(config, self.keys)
            try:
                write_session_file(path, self.host_key, sid, [self.results[self.host_key], *others])
                self.o.echo(f"session results signed by {len(self.results)} players: {path}")
            except OSError as error:
                self.o.echo(f"cannot write the session file {path}: {error}")
        games = len(self.games)
        return Outcome(EXIT_OK, f"watched {games} game{'s' if games != 1 else ''} to the end")

    # ------------------------------------------------------------------ names

    def _seat_names(self) -> list[str]:
        observer = self.observer
        assert observer is not None
        return [seat_name(observer, self.names, seat) for seat in range(len(observer.seats))]

    def _label(self, seat: int) -> str:
        assert self.observer is not None
        return seat_label(self.observer, self.names, seat)

    def _signer(self, frame: bytes) -> str:
        """Whose a frame is: signed by a player (named), or only claiming to be (a changed
        frame names nobody: anyone on the path could have changed it)."""
        try:
            kind, payload, signature = open_frame(frame[4:])
            sender = m.parse_payload(payload).sender
        except (FrameError, m.MessageError):
            return "unreadable"
        who = f"{self.names.get(sender, 'not a player')} ({fingerprint_of(sender)})"
        if verify(sender, kind, payload, signature):
            return f"signed by {who}"
        return f"claiming to be by {who}, not signed by it"


def _said(reason: object) -> str:
    return printable(str(reason)[:200])


def _kind(frame: bytes) -> str:
    try:
        return open_frame(frame[4:])[0]
    except FrameError:
        return ""


def _sender_of_result(frame: bytes) -> bytes | None:
    from ..protocol.tally import TallyError, open_result

    try:
        return open_result(frame).signer
    except TallyError:
        return None


__all__ = ["Spectator", "WatchFailed", "WatchOptions", "Watcher"]
