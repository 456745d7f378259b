"""Carrying an event's statements between the members' machines (trio, TCP).

A star: every entrant keeps one connection to the director, which re-broadcasts every
statement it receives to every entrant, so all records hold the same set (the director
cannot alter what it carries: each statement is signed by its author; what it can and
cannot do by leaving things out is :mod:`moska_p2p.tournament.service`'s docstring). The
roles' decisions are the sans-IO :class:`~moska_p2p.tournament.service.Director` and
:class:`~moska_p2p.tournament.service.EntrantRole`; this module only moves bytes, keeps
time and the folder, and starts the tables.

Messages are length-prefixed msgpack frames (:class:`~moska_p2p.net.wire.FrameStream`):

* director to entrant, first: ``["event", settings, director key, nonce]``, and a hub run
  by a successor (the director's key lost) adds its own key: ``[..., successor key]``;
* entrant to director: ``["enter", ENTER statement]``; the director answers
  ``["refused", reason]`` or sends every statement it holds;
* entrant to director, once entered: ``["held", [statement, ...], more]``: every statement
  its record holds (a restarted director may lack some, its own closures included), the
  director's last, in parts of at most :data:`HELD_PART` bytes (``more``: parts follow);
* both ways: ``["s", statement]``; director to entrants: ``["where", TABLE statement,
  address]``: a table's host said on which port its table listens, and the director says at
  which address it sees that host (the joiners pin the host's key, so a wrong address only
  fails to connect).

An event with a relay (:mod:`.relayed`) adds: entrant to director, before its entry,
``["prove", challenge]``, answered ``["proof", signature]`` (an entrant that holds the
event's invite checks the director's key); director to entrant, after the entry,
``["relay", [host, port]]`` (where the tables meet too) and, now and then, ``["tick"]``
(the relay closes a room that relays nothing for a while); a table's host to the director
``["table", TABLE statement, table invite]``, which the director forwards as ``["where",
TABLE statement, address, table invite]``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

from ..crypto.identity import Identity
from ..net.invite import Invite
from ..net.relay_client import RELAYED_HOST, VirtualStream
from ..net.wire import FrameStream, prefixed
from ..protocol.frames import FrameError, pack, unpack
from ..tournament import BoardState, EventSpec, Statement, TournamentError, read
from ..tournament.record import EventRecord, EventState, follow, table_open
from ..tournament.service import Director, EntrantRole, TableToPlay, enter
from ..tournament.signed import ENTER, SUCCEED, TABLE
from .folder import EVENT_FILE, load, save, write_standings
from .lan import Pin, pin_refusal
from .relayed import (
    CHALLENGE_SIZE,
    DirectorDoor,
    EventRelay,
    advertised,
    director_proof,
    fresh_challenge,
    table_where,
    unproved,
    wrong_director,
)
from .results import board_state, standings_text
from .tables import Seat, Where, play_table, result_of, table_played

log = logging.getLogger(__name__)

EVENT_LINK_ID = b"moska-p2p/event-link"
"""What an event connection's stream is marked with once its peer has signed its entry:
the full frame cap (every statement is checked by its own signature, not by the link)."""
TICK = 0.2
STAGE_TIMEOUT = 900.0
"""Seconds the director waits for a stage (commitments, reveals, a round's tables) before
closing it with what is in (a round of tables may take long: people play it)."""
RETRY = 0.5
HELD_PART = 32 * 1024
"""Bytes of statements in one ``held`` message (a frame is at most 64 KiB)."""
KEEPALIVE = 120.0
"""Seconds between the director's ``["tick"]`` to every entrant in an event with a relay: a
relay closes a room that relays nothing for a while (a long round says nothing)."""


@dataclass
class Connection:
    key: bytes
    stream: FrameStream
    address: str
    send: trio.MemorySendChannel[bytes]


def _message(kind: str, *items: object) -> bytes:
    return prefixed(pack([kind, *items]))


def _decode(body: bytes) -> list[object]:
    value = unpack(body)
    if not isinstance(value, list) or not value or not isinstance(value[0], str):
        raise FrameError("an event message is [kind, ...]")
    return value


def held_messages(record: EventRecord) -> list[bytes]:
    """An entrant's record as ``held`` messages: its items before the director's
    statements (a closure is taken only once the items it counts are)."""
    try:
        entry = follow(record).entry if len(record) else None
    except TournamentError:  # a record that does not follow: its order as it is
        entry = None
    director = entry.director if entry is not None else None
    statements = sorted(record.statements.values(), key=lambda s: s.author == director)
    parts: list[list[bytes]] = [[]]
    size = 0
    for statement in statements:
        data = statement.to_bytes()
        if parts[-1] and size + len(data) > HELD_PART:
            parts.append([])
            size = 0
        parts[-1].append(data)
        size += len(data)
    return [_message("held", part, n < len(parts) - 1) for n, part in enumerate(parts)]


async def _write_out(stream: trio.abc.SendStream, outbox: trio.MemoryReceiveChannel[bytes]) -> None:
    """Send what is queued for a connection, in order (a slow reader never blocks the
    others: the queue is its own)."""
    async with outbox:
        async for message in outbox:
            await stream.send_all(message)


BoardPrinter = Callable[[BoardState], None]
"""Shows the standings board: when a round is seated (its tables playing) and when its
standings are published."""


# ---------------------------------------------------------------------- the director


@dataclass
class DirectorOptions:
    identity: Identity
    spec: EventSpec
    nonce: bytes
    entrants: int
    folder: Path
    bind: str = "0.0.0.0"
    port: int = 0
    echo: Callable[[str], None] = print
    show: BoardPrinter | None = None
    stage_timeout: float = STAGE_TIMEOUT
    relay: tuple[str, int] | None = None  # where the entrants and the tables meet (.relayed)
    relay_for_others: int | None = None  # the director runs that relay, on this port (0: any)
    listen: bool = True  # False: the entrants reach the director through the relay only
    announce: bool = False  # announce the event on the LAN while its entry is open (.lan)


@dataclass
class DirectorNode:
    o: DirectorOptions
    record: EventRecord = field(default_factory=EventRecord)
    connections: dict[bytes, Connection] = field(default_factory=dict)
    where: dict[tuple[object, ...], bytes] = field(default_factory=dict)  # the where messages
    done: trio.Event = field(default_factory=trio.Event)

    def __post_init__(self) -> None:
        if (self.o.folder / EVENT_FILE).exists():
            _, self.record = load(self.o.folder)  # the director resumes from its folder
        entry = follow(self.record).entry
        self.role = Director(
            self.o.identity,
            self.o.spec,
            self.o.nonce,
            self.record,
            self.o.entrants,
            entry.director if entry is not None else None,  # a successor's: not its own key
        )
        if len(self.record):
            self.role.resume()  # no closure before the entrants' records are in
        self.shown = (0, 0)  # rounds seated and published when the board was shown
        self.seated = 0  # rounds whose tables were shown
        self.stage_started = 0.0  # when the stage under way began (trio time, from run)
        self.succeeded = False  # whether a succession was said to count
        self.progress = -1
        self.relay_address: tuple[str, int] | None = None  # the event's relay, as others dial it
        self.table_invites: dict[bytes, str] = {}  # TABLE statement -> its host's invite

    async def run(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> int:
        listeners: list[trio.SocketListener] = []
        if self.o.listen:
            listeners = await trio.open_tcp_listeners(self.o.port, host=self.o.bind)
        port = listeners[0].socket.getsockname()[1] if listeners else 0
        if listeners:
            self.o.echo(
                f"event {self.role.event.hex()[:16]} open on {self.o.bind}:{port}: enter with"
                f" moska tournament enter HOST:{port}"
            )
        self.stage_started = trio.current_time()
        async with trio.open_nursery() as nursery:
            if not await self._meet_at_relay(nursery, port):
                nursery.cancel_scope.cancel()
                return 1
            task_status.started(port)
            for listener in listeners:
                nursery.start_soon(trio.serve_listeners, self._serve, [listener])
            nursery.start_soon(self._ticker)
            if self.o.announce and not follow(self.record).finished():
                nursery.start_soon(self._beacon, port)
            await self.done.wait()
            await trio.sleep(1.0)  # the last statements reach everyone
            nursery.cancel_scope.cancel()
        return 0

    async def _beacon(self, port: int) -> None:
        """Announce the event on the LAN while it runs: open while its entry takes
        entrants, then marked closed, so that an entrant started again with no address
        finds its event (here, or wherever a resumed director listens now); a failure only
        costs the announcement, never the event."""
        from ..net.discovery import DiscoveryError
        from .lan import EntryStatus, announce_event

        def status() -> EntryStatus:
            entered = len(self.role.entrants)
            closed = follow(self.record).entry is not None
            return EntryStatus(
                entered, not closed and entered < self.o.entrants, not self.done.is_set()
            )

        try:
            await announce_event(
                self.o.identity, self.o.spec, self.role.event, port=port,
                wanted=self.o.entrants, status=status, bind=self.o.bind,
                ready=lambda where: self.o.echo(
                    f"{where}: find it with moska tournament enter (no address)"
                ),
            )  # fmt: skip
        except* (OSError, DiscoveryError) as group:
            log.warning("cannot announce the event on the LAN: %s", group.exceptions[0])

    async def _meet_at_relay(self, nursery: trio.Nursery, port: int) -> bool:
        """Meet the entrants at the event's relay too (when it has one) and print the event's
        invite; False when the director cannot (and the relay is the only way in)."""
        relay = EventRelay(
            self.o.identity,
            self.role.event,
            self.o.relay,
            self.o.relay_for_others,
            self.o.bind,
            self.o.entrants,
        )
        if not relay.wanted:
            return True

        def incoming(stream: VirtualStream) -> None:
            nursery.start_soon(self._serve, stream, RELAYED_HOST)

        failure = await relay.open(nursery, incoming)
        if failure is not None and (not self.o.listen or relay.relay is None):
            self.o.echo(f"error: {failure}")
            return False
        if failure is not None:
            self.o.echo(f"{failure}; direct connections only until it answers")
        assert relay.relay is not None
        self.relay_address = relay.relay
        direct = ((advertised(self.o.bind), port),) if self.o.listen else ()
        host, relay_port = relay.relay
        self.o.echo(f"event {self.role.event.hex()[:16]} meets at the relay {host}:{relay_port}")
        self.o.echo(f"event invite (moska tournament enter INVITE): {relay.invite(direct)}")
        return True

    async def _ticker(self) -> None:
        """The director's decisions, and the folder, once a tick: a stage's statements come
        in bursts, and the record is read once per burst, not once per statement."""
        saved = len(self.record)
        said = trio.current_time()
        while True:
            await trio.sleep(TICK)
            if self.relay_address is not None and trio.current_time() - said > KEEPALIVE:
                said = trio.current_time()
                self._broadcast(_message("tick"))
            self._advance()
            if len(self.record) != saved:
                saved = len(self.record)
                self._save()

    def _advance(self) -> None:
        state = follow(self.record)
        marker = (
            len(state.rounds),
            sum(1 for r in state.rounds for s in r.stages.values() if s.closure),
        )
        if hash(marker) != self.progress:
            self.progress, self.stage_started = hash(marker), trio.current_time()
        late = trio.current_time() - self.stage_started > self.o.stage_timeout
        try:
            out = self.role.step(deadline=late and state.entry_closed)
        except TournamentError as error:
            self.o.echo(f"the event stops: {error}")
            self.done.set()
            return
        for statement in out:
            self._broadcast(_message("s", statement.to_bytes()))
            if statement.kind == SUCCEED:
                number, stage = statement.body()[1:3]
                self.o.echo(
                    f"succeeding the director from the {stage} of round {number}: once more "
                    "than half of the entrants acknowledge it"
                )
        if out:
            self._save()
            self._show()
        state = follow(self.record)
        if state.successor is not None and not self.succeeded:
            self.succeeded = True
            name = state.entry.entrant(state.successor).name if state.entry else "?"
            self.o.echo(f"{name} directs the event now (more than half acknowledged it)")
        if state.conflicts:
            for conflict in state.conflicts:
                self.o.echo(f"the event stops: {conflict}")
            self.done.set()
        elif state.finished():
            self.done.set()

    def _show(self) -> None:
        state = follow(self.record)
        assert state.entry is not None or not state.rounds
        for current in state.rounds[self.seated :]:
            if current.tables is None or state.entry is None:
                break
            self.seated += 1
            for number, members in enumerate(current.tables, start=1):
                names = ", ".join(state.entry.entrant(k).name for k in members)
                self.o.echo(f"round {current.number}: table {number}: {names}")
            for note in state.notes:
                if note.startswith(f"round {current.number}:"):
                    self.o.echo(note)
        self.shown = show_standings(state, self.shown, self.o.folder, self.o.show)

    def _save(self) -> None:
        save(self.o.folder, self.role.event, self.record)

    def _broadcast(self, message: bytes) -> None:
        for connection in list(self.connections.values()):
            try:
                connection.send.send_nowait(message)
            except (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError):
                self._drop(connection)

    def _drop(self, connection: Connection) -> None:
        if self.connections.get(connection.key) is connection:
            del self.connections[connection.key]
        connection.send.close()

    async def _serve(
        self, stream: trio.abc.HalfCloseableStream, address: str | None = None
    ) -> None:
        """One entrant's connection (``address``: where it comes from, when not a TCP
        connection's peer); whatever breaks it ends it, and nothing else."""
        try:
            await self._serve_entrant(stream, address)
        except BaseException as error:
            if not connection_lost(error):
                raise
            log.info("an entrant's connection broke: %s", error)

    async def _serve_entrant(
        self, stream: trio.abc.HalfCloseableStream, address: str | None
    ) -> None:
        frames = FrameStream(stream)
        if isinstance(stream, trio.SocketStream):
            try:
                address = stream.socket.getpeername()[0]
            except OSError:
                return
        address = address or RELAYED_HOST
        send, receive = trio.open_memory_channel[bytes](10_000)
        connection: Connection | None = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(_write_out, stream, receive)
            try:
                hub = [self.o.identity.public_bytes] if self.role.succeeding else []
                await send.send(
                    _message("event", self.o.spec.to_wire(), self.role.director, self.o.nonce, *hub)
                )
                with trio.fail_after(30):
                    first = await frames.receive()
                if first is None:
                    raise FrameError("closed before entering")
                kind, *rest = _decode(first)
                if kind == "prove":  # an entrant with the event's invite checks our key
                    kind, *rest = _decode(await self._prove(frames, send, rest))
                if kind != "enter" or len(rest) != 1 or not isinstance(rest[0], bytes):
                    raise FrameError("the first message is an entry")
                statement = read(rest[0])
                if statement.kind != ENTER:
                    raise TournamentError("the first statement is an entry")
                entrant = self.role.admit(statement)
                frames.authenticated(EVENT_LINK_ID)
                connection = Connection(entrant.key, frames, address, send)
                old = self.connections.get(entrant.key)
                if old is not None:
                    self._drop(old)
                self.connections[entrant.key] = connection
                self.o.echo(f"entered: {entrant.name} ({'returning' if old else entrant.plays})")
                if self.relay_address is not None:
                    await send.send(_message("relay", list(self.relay_address)))
                for held in list(self.record.statements.values()):
                    await send.send(_message("s", held.to_bytes()))
                for message in list(self.where.values()):
                    await send.send(message)
                self._advance()
                while (body := await frames.receive()) is not None:
                    self._on_message(connection, body)
            except (TournamentError, FrameError, trio.TooSlowError) as error:
                with _quiet():
                    await send.send(_message("refused", str(error)))
                    await trio.sleep(0.2)
                log.info("an entrant's connection ends: %s", error)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as error:
                log.info("an entrant's connection broke: %s", error)
            finally:
                if connection is not None:
                    self._drop(connection)
                else:
                    send.close()
                nursery.cancel_scope.cancel()

    async def _prove(
        self, frames: FrameStream, send: trio.MemorySendChannel[bytes], rest: list[object]
    ) -> bytes:
        """Answer an entrant's challenge with the proof of our key; its next message."""
        if len(rest) != 1 or not isinstance(rest[0], bytes) or len(rest[0]) != CHALLENGE_SIZE:
            raise FrameError("a challenge is 32 bytes")
        proof = director_proof(self.o.identity, self.role.event, rest[0])
        await send.send(_message("proof", proof))
        with trio.fail_after(30):
            body = await frames.receive()
        if body is None:
            raise FrameError("closed before entering")
        return body

    def _on_message(self, connection: Connection, body: bytes) -> None:
        kind, *rest = _decode(body)
        if kind == "held" and len(rest) == 2 and isinstance(rest[0], list):
            self._on_held(connection, rest[0], rest[1] is True)
            return
        if kind == "table" and len(rest) == 2 and isinstance(rest[0], bytes):
            self._table_invite(connection, rest[0], rest[1])  # a TABLE statement, an invite
            kind, rest = "s", rest[:1]
        if kind != "s" or len(rest) != 1 or not isinstance(rest[0], bytes):
            raise FrameError(f"an entrant sends statements, not {kind!r}")
        self._on_statement(connection, read(rest[0]))

    def _on_held(self, connection: Connection, items: list[object], more: bool) -> None:
        """A part of an entrant's whole record, as it (re)connects: whatever this record
        lacks (its own items, or a closure this director signed before it restarted) is
        taken and carried; a table's address only from its host."""
        if not all(isinstance(item, bytes) for item in items):
            raise FrameError("held is a list of statements")
        statements = [read(item) for item in items if isinstance(item, bytes)]
        if any(s.event() != self.role.event for s in statements):
            raise TournamentError("a statement of another event")
        for statement in statements:
            if statement.kind == TABLE and statement.author == connection.key:
                self._on_statement(connection, statement)
        clashes = len(self.role.clashes)
        others = [s for s in statements if s.kind != TABLE]
        for statement in self.role.take_held(connection.key, others, last=not more):
            self._broadcast(_message("s", statement.to_bytes()))
        for clash in self.role.clashes[clashes:]:
            self.o.echo(f"warning: {clash}")

    def _table_invite(self, connection: Connection, said: bytes, invite: object) -> None:
        """Keep the invite a table's host sent with its TABLE statement (a usable one of
        its own table), for every ``where`` of that statement from now on (the statement
        comes again without it when the host reconnects)."""
        author = read(said).author
        if isinstance(invite, str) and table_where(invite, author, connection.address, 0):
            self.table_invites[said] = invite

    def _on_statement(self, connection: Connection, statement: Statement) -> None:
        if statement.event() != self.role.event:
            raise TournamentError("a statement of another event")
        self.role.admissible(statement)  # anything else would spoil every record
        if statement.kind == TABLE:
            where = statement.body()[1:]
            invite = self.table_invites.get(statement.to_bytes())
            extra = [invite] if invite is not None else []
            message = _message("where", statement.to_bytes(), connection.address, *extra)
            self.where[(where[0], where[1], statement.author)] = message
            self.record.add(statement)
            self._broadcast(message)
            return
        if self.record.add(statement):
            self._broadcast(_message("s", statement.to_bytes()))


# ---------------------------------------------------------------------- the entrant


@dataclass
class EntrantOptions:
    seat: Seat
    plays: str
    folder: Path
    host: str
    port: int
    echo: Callable[[str], None] = print
    show: BoardPrinter | None = None
    connect_wait: float = 600.0
    before_table: Callable[[], None] | None = None  # the terminal is the table's from now
    invite: Invite | None = None  # the event's: the director's key pinned, its relay (.relayed)
    pin: Pin | None = None  # the director's key and event, as announced on the LAN (.lan)


class EntrantNode:
    def __init__(self, o: EntrantOptions) -> None:
        self.o = o
        self.record = EventRecord()
        self.event: bytes | None = None
        if (o.folder / EVENT_FILE).exists():
            self.event, self.record = load(o.folder)  # a restart: what it had
        self.role = EntrantRole(o.seat.identity, self.record)
        self.where: dict[tuple[int, int, bytes], Where] = {}  # (round, table, host)
        self.where_changed = trio.Event()
        self.playing: TableToPlay | None = None
        self.outbox: trio.MemorySendChannel[bytes] | None = None
        self.shown = (0, 0)
        self.code: int | None = None
        self.deadline = 0.0  # when to give up on the director (trio time)
        self.done = trio.Event()
        self.changed = trio.Event()  # statements came in since the last decisions
        self.relay = o.invite.relay if o.invite is not None else None  # the tables' too
        self.door = DirectorDoor(o.seat.identity, o.invite) if o.invite is not None else None
        self.table_invites: dict[bytes, str] = {}  # our TABLE statements' invites, to resend
        self.nursery: trio.Nursery | None = None

    async def run(self) -> int:
        self.deadline = trio.current_time() + self.o.connect_wait
        async with trio.open_nursery() as nursery:
            self.nursery = nursery
            nursery.start_soon(self._tables)
            nursery.start_soon(self._progressing)
            while not self.done.is_set():
                try:
                    await self._session()
                except BaseException as error:
                    if not connection_lost(error):
                        raise
                    if self.done.is_set():
                        break
                    if trio.current_time() > self.deadline:
                        self.o.echo(f"error: lost the director: {error}")
                        self.code = 1
                        break
                    log.info("the director's connection: %s; again", error)
                    await trio.sleep(RETRY)
            nursery.cancel_scope.cancel()
        return self.code if self.code is not None else 1

    async def _reach_director(self) -> trio.abc.HalfCloseableStream:
        if self.door is None:
            return await trio.open_tcp_stream(self.o.host, self.o.port)
        assert self.nursery is not None
        return await self.door.connect(self.nursery)

    async def _wrong_director(
        self, frames: FrameStream, send: trio.MemorySendChannel[bytes], key: object, event: bytes
    ) -> str | None:
        """Why the director that answered is not the invite's, or the one that announced the
        event on the LAN (its key, or its proof of it)."""
        invite, pin = self.o.invite, self.o.pin
        if invite is not None:
            reason, pinned, named_by = wrong_director(invite, key, event), invite.host_key, "invite"
        elif pin is not None:
            reason, pinned, named_by = pin_refusal(pin, key, event), pin.key, "announcement"
        else:
            return None
        if reason is not None:
            return reason
        challenge = fresh_challenge()
        await send.send(_message("prove", challenge))
        with trio.fail_after(30):
            answer = await frames.receive()
        if answer is None:
            raise OSError("the director closed the connection")
        kind, *items = _decode(answer)
        proof = items[0] if kind == "proof" and items else None
        return unproved(pinned, event, challenge, proof, named_by)

    async def _session(self) -> None:
        stream = await self._reach_director()
        frames = FrameStream(stream)
        send, receive = trio.open_memory_channel[bytes](10_000)
        self.outbox = send
        try:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_write_out, stream, receive)
                with trio.fail_after(30):
                    first = await frames.receive()
                if first is None:
                    raise OSError("the director closed the connection")
                kind, *rest = _decode(first)
                if kind != "event" or len(rest) not in (3, 4):
                    raise FrameError("the director's first message is the event")
                hub = rest[3] if len(rest) == 4 else rest[1]  # the director, or its successor
                self.role.hub = hub if isinstance(hub, bytes) else None
                spec = EventSpec.from_wire(rest[0])
                from ..tournament import event_id

                assert isinstance(rest[1], bytes) and isinstance(rest[2], bytes)
                event = event_id(spec, rest[1], rest[2])
                refusal = await self._wrong_director(frames, send, hub, event)
                if refusal is not None:
                    self.o.echo(f"error: {refusal}")
                    self.code = 1
                    self.done.set()
                    nursery.cancel_scope.cancel()  # the writer too
                    return
                if self.event is not None and event != self.event:
                    self.o.echo("error: this folder holds another event")
                    self.code = 1
                    self.done.set()
                    nursery.cancel_scope.cancel()  # the writer too
                    return
                self.event = event
                me = self.o.seat
                statement = enter(me.identity, event, me.name, self.o.plays)
                await send.send(_message("enter", statement.to_bytes()))
                frames.authenticated(EVENT_LINK_ID)
                for message in held_messages(self.record):  # what the director may lack
                    await send.send(message)
                for said, invite in self.table_invites.items():  # and how to reach our table
                    await send.send(_message("table", said, invite))
                self.o.echo(f"entered the event {spec.name!r} as {me.name}")
                self.deadline = trio.current_time() + self.o.connect_wait  # from now on
                if len(self.record):
                    self._progress()  # a restart: carry on from the folder
                while not self.done.is_set():
                    body = await frames.receive()
                    if body is None:
                        raise OSError("the director closed the connection")
                    self._on_message(body)
                nursery.cancel_scope.cancel()
        finally:
            self.outbox = None
            send.close()
            await trio.aclose_forcefully(stream)

    def _statement_message(self, statement: Statement) -> bytes:
        """A statement of ours as sent: a TABLE one with its table's invite, if it has one."""
        invite = self.table_invites.get(statement.to_bytes())
        if invite is not None:
            return _message("table", statement.to_bytes(), invite)
        return _message("s", statement.to_bytes())

    def _send(self, statement: Statement) -> None:
        if self.outbox is not None:
            with _quiet():
                self.outbox.send_nowait(self._statement_message(statement))

    def _on_message(self, body: bytes) -> None:
        kind, *rest = _decode(body)
        if kind == "refused":
            self.o.echo(f"error: the director refused this entrant: {rest[0] if rest else ''}")
            self.code = 1
            self.done.set()
            return
        if kind == "tick":  # the director keeps the event's room at the relay open
            return
        if kind == "relay" and len(rest) == 1 and isinstance(rest[0], list) and len(rest[0]) == 2:
            host, port = rest[0]
            if self.relay is None and isinstance(host, str) and type(port) is int:
                self.relay = (host, port)  # the tables of a relayed event meet there too
            return
        if kind == "where" and len(rest) in (2, 3) and isinstance(rest[0], bytes):
            statement = read(rest[0])
            body_ = statement.body()
            if statement.kind == TABLE and len(body_) == 4 and isinstance(rest[1], str):
                self.record.add(statement)
                round_number, table, port = body_[1:]
                if type(round_number) is int and type(table) is int and type(port) is int:
                    place: Where = (rest[1], port)
                    if len(rest) == 3:
                        place = table_where(rest[2], statement.author, rest[1], port) or place
                    self.where[(round_number, table, statement.author)] = place
                self.where_changed.set()
                self.where_changed = trio.Event()
            return
        if kind != "s" or len(rest) != 1 or not isinstance(rest[0], bytes):
            raise FrameError(f"unexpected message {kind!r}")
        statement = read(rest[0])
        if self.record.add(statement):
            self.changed.set()

    async def _progressing(self) -> None:
        """The entrant's decisions once per burst of statements (a stage's statements come
        together, and the record is read once for them all)."""
        while not self.done.is_set():
            await self.changed.wait()
            self.changed = trio.Event()
            self._progress()
            await trio.sleep(TICK / 4)

    def _progress(self) -> None:
        assert self.event is not None
        try:
            out = self.role.step()
            state = follow(self.record)
        except TournamentError as error:
            self.o.echo(f"error: the event does not verify: {error}")
            save(self.o.folder, self.event, self.record)
            self.code = 1
            self.done.set()
            return
        for statement in out:
            self._send(statement)
        save(self.o.folder, self.event, self.record)
        self.shown = show_standings(state, self.shown, self.o.folder, self.o.show)
        if state.conflicts:
            for conflict in state.conflicts:
                self.o.echo(f"the event stops: {conflict}")
            self.code = 1
            self.done.set()
        elif state.finished():
            self.code = 0
            self.done.set()
        elif out:
            self._progress()

    async def _tables(self) -> None:
        """Play each table the draw seats this entrant at, then send its result."""
        while not self.done.is_set():
            await trio.sleep(TICK)
            table = self.role.table_to_play()
            if table is not None and table != self.playing:
                self.playing = table
                await self._play(table)

    async def _play(self, table: TableToPlay) -> None:
        entry = follow(self.record).entry
        assert entry is not None and self.event is not None
        event, seat = self.event, self.o.seat
        self.o.echo(
            f"round {table.round_number}: table {table.table + 1} with "
            + ", ".join(entry.entrant(k).name for k in table.members)
        )

        async def announce(port: int, invite: Invite | None) -> None:
            said = table_open(seat.identity, event, table.round_number, table.table, port)
            self.record.add(said)
            if invite is not None:
                self.table_invites[said.to_bytes()] = str(invite)
            self._send(said)

        async def host_address(tried: Where | None) -> Where:
            """Where the table's host says it listens (only the host's word counts)."""
            while True:
                found = self.where.get((table.round_number, table.table, table.host))
                if found is not None and found != tried:
                    return found
                await self.where_changed.wait()

        if not table_played(seat, self.o.folder, table):
            if self.o.before_table is not None:
                self.o.before_table()
            outcome = await play_table(
                seat, self.o.folder, table, entry, announce, host_address, self.relay
            )
            self.o.echo(f"round {table.round_number}, table {table.table + 1}: {outcome.message}")
        result = result_of(seat, self.o.folder, table, entry)
        self.record.add(result)
        self._send(result)
        self._progress()


CONNECTION_ERRORS = (
    OSError,
    trio.BrokenResourceError,
    trio.ClosedResourceError,
    trio.TooSlowError,
    FrameError,
)


def connection_lost(error: BaseException) -> bool:
    """Whether ``error`` (a nursery's group of them too) only says a connection broke."""
    if isinstance(error, BaseExceptionGroup):
        return all(connection_lost(inner) for inner in error.exceptions)
    return isinstance(error, CONNECTION_ERRORS)


def show_standings(
    state: EventState, shown: tuple[int, int], folder: Path, show: BoardPrinter | None
) -> tuple[int, int]:
    """Show the board when a round's standings are published (and write them to the
    folder), then when the next round is seated (``shown``: how many rounds were seated and
    published when it was last shown); the counts now. A round published and the next one
    seated at once are two boards: the round's standings, then who plays where."""
    published = sum(1 for r in state.rounds if r.published is not None and r.rows is not None)
    seated = sum(1 for r in state.rounds if r.tables is not None)
    if (seated, published) == shown or state.entry is None:
        return shown
    boards: list[BoardState | None] = []
    if published > shown[1]:
        board = board_state(state, published)
        assert board is not None
        write_standings(folder, standings_text(board))
        boards.append(board)
    if seated > max(shown[0], published):
        boards.append(board_state(state))
    if show is not None:
        for board in boards:
            if board is not None:
                show(board)
    return seated, published


class _quiet:
    """Swallow a send on a closed or full channel (the other side is gone: nothing to say)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, value: object, traceback: object) -> bool:
        return isinstance(
            value, (trio.WouldBlock, trio.BrokenResourceError, trio.ClosedResourceError, OSError)
        )
