"""An entrant's table of a round: played in this process with the network node, exactly as
``moska host`` / ``moska join`` play one, then turned into the member's signed result.

The table's settings come from the event (:func:`~moska_p2p.tournament.record.table_settings`:
its nonce is a hash of the event, the round and the table), so every member opens or joins
the same table, and its games' ids bind them to this table of this event.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import trio

from ..crypto.identity import Identity
from ..net.invite import Invite
from ..net.node import Node, NodeOptions, Outcome
from ..net.node import Player as NodePlayer
from ..net.persist import SavedGame, SaveError, find_saved, load_saved
from ..net.relay_proto import RoomPass
from ..net.state import EXIT_FAILED
from ..protocol.config import lobby_id
from ..protocol.tally import GameRecord, TallyError, open_result, read_session_file
from ..protocol.transcript import verify_transcript
from ..tournament import EntryList, Statement, TournamentError
from ..tournament.record import expected_table_id, table_result, table_settings
from ..tournament.service import TableToPlay
from .folder import counted_games, table_folder

log = logging.getLogger(__name__)


@dataclass
class Seat:
    """Who plays this entrant's seats: a fresh player for each table (a bot, a person)."""

    identity: Identity
    name: str
    player: Callable[[], NodePlayer]
    bind: str = "0.0.0.0"
    echo: Callable[[str], None] = print
    lobby_wait: float = 300.0
    listen: bool = True  # False: the tables are reached through the event's relay only


RETRY = 1.0
"""Seconds before a joiner tries a table's invite again (its room did not answer)."""

Address = tuple[str, int]
Where = Address | Invite
"""Where a joiner finds its table: the host's address, or (an event with a relay) the
table's invite: the host's key pinned, its address if it listens, the relay and the room's
secret."""


async def play_table(
    seat: Seat,
    folder: Path,
    table: TableToPlay,
    entry: EntryList,
    announce: Callable[[int, Invite | None], Awaitable[None]],
    host_address: Callable[[Where | None], Awaitable[Where]],
    relay: Address | None = None,
) -> Outcome:
    """Play the table: its host opens it (and ``announce``s its port, and its invite when
    the event has a ``relay``: the host opens its table's room there, as ``moska host
    --relay`` does), the others join it where ``host_address`` says (one other than the one
    given: a joiner that could not reach the host waits for the host to say where it listens
    now, as after a restart of the host before the table filled); through the relay when
    that is all they can reach."""
    config = table_settings(entry, table.round_number, table.table, table.members)
    where = table_folder(folder, table.round_number, table.table)
    where.mkdir(parents=True, exist_ok=True)
    transcript = where / f"{_file_name(seat.name)}.moska"

    def options() -> NodeOptions:
        return NodeOptions(
            identity=seat.identity,
            player=seat.player(),
            transcript=transcript,
            name=seat.name,
            bind=seat.bind,
            echo=seat.echo,
            lobby_wait=seat.lobby_wait,
            fresh_player=seat.player,
            relay=relay,
            listen=seat.listen or relay is None,
        )

    saved = _saved_game(transcript, seat.identity)
    if saved is not None:  # this seat crashed in the middle of the table: back to it
        resumed = options()
        resumed.transcript, resumed.name = saved.transcript, saved.name
        return await Node(resumed).resume(saved)
    if table.host == seat.identity.public_bytes:
        node = Node(options())
        room = RoomPass.new(lobby_id(config), seat.identity.public_bytes)
        invite = None if relay is None else Invite.of(bytes(room), (), relay)
        async with trio.open_nursery() as nursery:

            async def run_host(task_status: trio.TaskStatus[int]) -> None:
                at = bytes(room) if invite is not None else None
                outcomes.append(await node.host(config, 0, room=at, task_status=task_status))

            outcomes: list[Outcome] = []
            port = await nursery.start(run_host)
            if invite is not None:
                await _at_the_relay(node, seat.lobby_wait)
            await announce(port, invite)
        return outcomes[0]
    give_up = trio.current_time() + seat.lobby_wait
    tried: Where | None = None
    outcome = Outcome(EXIT_FAILED, "the table's host never said where its table listens")
    while True:
        address: Where | None = None
        with trio.move_on_after(max(0.0, give_up - trio.current_time())):
            address = await host_address(tried)
        if address is None:
            return outcome
        if isinstance(address, Invite):  # pinned to the host the draw seated, as the seating
            pinned = Invite(table.host, address.table, address.direct, address.relay,
                            address.secret)  # fmt: skip
            outcome = await Node(options()).join_invite(pinned)
        else:
            outcome = await Node(options()).join(*address, expect=table.host)
        sat_down = transcript.exists() or any(where.glob(f"{transcript.stem}-g*"))
        if outcome.code == 0 or sat_down or trio.current_time() > give_up:
            return outcome
        tried = address
        if isinstance(address, Invite):  # the room may only be slow to answer: again
            await trio.sleep(RETRY)
            tried = None


async def _at_the_relay(node: Node, wait: float) -> None:
    """Until the host's node is registered in its table's room at the relay (at most
    ``wait`` s, or until it stops), so that its invite, once out, finds the room there."""
    with trio.move_on_after(wait):
        while node.outcome is None:
            client = node.relay_client
            if client is not None and client.registered.is_set():
                return
            await trio.sleep(0.05)


def _saved_game(transcript: Path, identity: Identity) -> SavedGame | None:
    """The game of this table this seat was playing when it stopped, if the others may
    still be waiting for it (as ``moska join`` run again finds it)."""
    path = find_saved(transcript, identity.public_bytes)
    if path is None:
        return None
    try:
        saved = load_saved(path)
    except SaveError as error:
        log.warning("ignoring an unreadable saved game: %s", error)
        return None
    if saved.roster[saved.me].key != identity.public_bytes:
        return None
    if not saved.fresh():
        saved.discard()  # the others have given up on it: nothing left to resume
        return None
    return saved


def table_played(seat: Seat, folder: Path, table: TableToPlay) -> bool:
    """Whether this seat's table is over already (a restart after its end, before its
    result went out): its session's results are written, or its single game's transcript
    is complete and nothing is left to resume."""
    base = table_folder(folder, table.round_number, table.table) / f"{_file_name(seat.name)}.moska"
    if base.with_name(f"{base.stem}-session{base.suffix}").exists():
        return True
    if not base.exists() or find_saved(base, seat.identity.public_bytes) is not None:
        return False
    return verify_transcript(base).valid


def _file_name(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name) or "player"


def result_of(seat: Seat, folder: Path, table: TableToPlay, entry: EntryList) -> Statement:
    """This member's signed result of its table, from its own transcripts (and its session's
    signed results, when the table played several games)."""
    where = table_folder(folder, table.round_number, table.table)
    base = where / f"{_file_name(seat.name)}.moska"
    key = expected_table_id(entry, table.round_number, table.table, table.members)
    seats: tuple[bytes, ...] = tuple(table.members)
    games: tuple[GameRecord, ...] = ()
    frames: list[bytes] = []
    session = base.with_name(f"{base.stem}-session{base.suffix}")
    if session.exists():
        try:
            _, _, frames = read_session_file(session)
            mine = [open_result(f) for f in frames]
        except TallyError as error:
            raise TournamentError(f"{session}: {error}") from None
        own = [r for r in mine if r.signer == seat.identity.public_bytes]
        if own:
            seats, games = own[0].seats, own[0].games
            frames = [r.frame for r in mine if r.common() == own[0].common()]
    elif base.exists():
        report = verify_transcript(base)
        games = counted_games(report)
        if games:
            seats = report.seats
    return table_result(
        seat.identity,
        entry.event,
        table.round_number,
        table.table,
        key,
        seats,
        games,
        frames,
    )
