"""An event through a relay: where the director and its entrants meet when they cannot reach
one another directly, the event's invite, and the director's proof of key.

The director registers at the relay (``moska tournament direct --relay HOST:PORT``, or a relay
it runs itself with ``--relay-for-others``) in the event's *room*: the first 16 bytes of the
event's id, owned by the director's key, behind a secret derived from the director's key and
the event (a deterministic signature, hashed), so the same invite still opens the room after
the director restarts from its folder. The event's invite (:data:`~..net.invite.EVENT_INVITE`)
carries the director's key, the room and its secret, the director's direct addresses and the
relay; an entrant dials the addresses first and the relay when they do not answer.

The event's connection has no link handshake of its own (every statement on it is signed by
its author): an entrant that holds an invite therefore asks the director to prove its key
(``["prove", challenge]``, answered ``["proof", signature]`` of kind
:data:`DIRECTOR_PROOF` over the event's id and the challenge), so neither the relay nor a
machine at the invite's address can pass for the director.

A round's table, in an event with a relay, is opened at the relay too, by its host, in its
own room (as ``moska host --relay``); the host sends the table's invite with its ``TABLE``
statement and the director forwards it in its ``where`` message, adding the host's address as
it sees it (:func:`table_where`), so a joiner plays directly or through the relay.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Callable

import trio

from ..crypto.identity import Identity, fingerprint_of, fingerprint_or_unknown, verify
from ..net.invite import EVENT_INVITE, Invite, InviteError, parse_invite
from ..net.lobby import lan_address
from ..net.relay import RelayServer
from ..net.relay_client import RELAYED_HOST, RelayClient, VirtualStream
from ..net.relay_proto import ROOM_SIZE, SECRET_SIZE, RoomPass, club_caps

Address = tuple[str, int]

DIRECTOR_PROOF = "tournament/director-proof"
"""Signature kind of the director's proof of key on an event connection."""
ROOM_SECRET = "tournament/event-room"
"""Signature kind the event room's secret is derived from (never sent)."""
CHALLENGE_SIZE = 32
DIRECT_TRY = 3.0
"""Seconds a direct dial of the director may take when the relay could carry the link."""


def event_room(director: Identity, event: bytes) -> RoomPass:
    """The event's room at its relay: the same for every run of the director (its restart
    from the folder is reached with the invite it printed first)."""
    seed = hashlib.sha256(director.sign(ROOM_SECRET, event)).digest()
    return RoomPass(event[:ROOM_SIZE], seed[:SECRET_SIZE], director.public_bytes)


def advertised(bind: str) -> str:
    """The host the others dial for what listens on ``bind`` (this machine's LAN address
    for a wildcard)."""
    if bind in ("0.0.0.0", "", "::"):
        return lan_address() or "127.0.0.1"
    return bind


def director_proof(director: Identity, event: bytes, challenge: bytes) -> bytes:
    return director.sign(DIRECTOR_PROOF, event + challenge)


def fresh_challenge() -> bytes:
    return secrets.token_bytes(CHALLENGE_SIZE)


def wrong_director(invite: Invite, key: object, event: bytes) -> str | None:
    """Why the director that answered is not the invite's (None: its key and event are):
    checked before its proof, whose absence :func:`unproved` names."""
    if key != invite.host_key:
        return (
            f"the director that answered is {fingerprint_or_unknown(key)}, and the invite names"
            f" {fingerprint_of(invite.host_key)}: another event, or someone passing for its"
            " director (refused)"
        )
    if event[:ROOM_SIZE] != invite.table:
        return "the director there runs another event than the invite's (an old invite?)"
    return None


def unproved(
    key: bytes, event: bytes, challenge: bytes, proof: object, named_by: str = "invite"
) -> str | None:
    """Why the director's answer to our challenge does not prove the ``key`` the invite (or
    the event's announcement on the LAN: ``named_by``) names."""
    signed = event + challenge
    if isinstance(proof, bytes) and verify(key, DIRECTOR_PROOF, signed, proof):
        return None
    return (
        f"the director there did not prove it holds the key {fingerprint_of(key)}"
        f" the {named_by} names: someone passes for it (refused)"
    )


def table_where(text: object, author: bytes, address: str, port: int) -> Invite | None:
    """The table's invite a joiner dials: the host's (``text``, its relay and room secret:
    only the host's own, ``author``'s, counts) with the host's address as the director sees
    it (when it listens: ``port`` > 0); None when there is no usable invite."""
    if not isinstance(text, str):
        return None
    try:
        invite = parse_invite(text)
    except InviteError:
        return None
    if invite.host_key != author or invite.relay is None:
        return None
    direct = ((address, port),) if port > 0 and address != RELAYED_HOST else ()
    return Invite(author, invite.table, direct, invite.relay, invite.secret)


class EventRelay:
    """The director's presence at the relay: the relay it runs for the entrants
    (``relay_for_others``: a port, 0 any) or the one it was given, and its registration in
    the event's room; every virtual link an entrant opens to it goes to ``incoming``."""

    def __init__(
        self,
        director: Identity,
        event: bytes,
        relay: Address | None,
        relay_for_others: int | None,
        bind: str,
        entrants: int,
    ) -> None:
        self.director, self.event = director, event
        self.relay, self.relay_for_others, self.bind = relay, relay_for_others, bind
        self.entrants = entrants
        self.client: RelayClient | None = None

    @property
    def wanted(self) -> bool:
        return self.relay is not None or self.relay_for_others is not None

    async def open(
        self, nursery: trio.Nursery, incoming: Callable[[VirtualStream], None]
    ) -> str | None:
        """Run the relay for the others (if asked) and register in the event's room; the
        reason when the director cannot register (it keeps trying in the background)."""
        dial = self.relay
        if self.relay_for_others is not None:
            size = 2 * self.entrants + 16  # every entrant's event link and table, restarts
            server = RelayServer(club_caps(size, size))
            try:
                await nursery.start(server.serve, self.bind, self.relay_for_others)
            except OSError as error:
                where = f"{self.bind}:{self.relay_for_others}"
                return f"cannot run the relay on {where}: {error.strerror or error}"
            here = "127.0.0.1" if self.bind in ("0.0.0.0", "", "::") else self.bind
            self.relay, dial = (advertised(self.bind), server.port), (here, server.port)
        assert dial is not None
        room = event_room(self.director, self.event)
        self.client = RelayClient(self.director, *dial, bytes(room), incoming)
        await nursery.start(self.client.run)
        if self.client.registered.is_set():
            return None
        return f"cannot register at the relay {self.client.address}: {self.client.error}"

    def invite(self, direct: tuple[Address, ...]) -> Invite:
        assert self.relay is not None
        room = event_room(self.director, self.event)
        return Invite(
            self.director.public_bytes, room.table, direct, self.relay, room.secret, EVENT_INVITE
        )


class DirectorDoor:
    """An entrant's way to its director from the event's invite: each direct address (for
    :data:`DIRECT_TRY` s when there is a relay), else a virtual link through the relay, to
    the invite's key (the connection to the relay is kept between tries)."""

    def __init__(self, identity: Identity, invite: Invite) -> None:
        self.identity, self.invite = identity, invite
        self.client: RelayClient | None = None

    async def connect(self, nursery: trio.Nursery) -> trio.abc.HalfCloseableStream:
        invite = self.invite
        failures: list[str] = []
        for host, port in invite.direct:
            try:
                with trio.fail_after(DIRECT_TRY if invite.relay is not None else 30.0):
                    return await trio.open_tcp_stream(host, port)
            except (OSError, trio.TooSlowError) as error:
                failures.append(f"{host}:{port}: {error or 'no answer'}")
        if invite.relay is None:
            raise OSError(f"the director does not answer ({'; '.join(failures)})")
        if self.client is None:

            def refuse(stream: VirtualStream) -> None:  # nobody links to an entrant here
                nursery.start_soon(trio.aclose_forcefully, stream)

            self.client = RelayClient(self.identity, *invite.relay, invite.room, refuse)
            await nursery.start(self.client.run)
        return await self.client.open(invite.host_key)
