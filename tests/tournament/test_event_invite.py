"""An event's invite: its own kind of invite (a table's is refused where an event's is due,
and the other way round, each naming the command that takes it), the director's key pinned
by it (another key answering, or one that cannot prove it holds the key, is refused with the
reason), and what a joiner of a relayed event's table dials (:func:`table_where`)."""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from moska_p2p.crypto.identity import Identity, fingerprint_of
from moska_p2p.event.carrier import DirectorNode, DirectorOptions, EntrantNode, EntrantOptions
from moska_p2p.event.relayed import event_room, table_where
from moska_p2p.event.tables import Seat
from moska_p2p.net.invite import EVENT_INVITE, Invite, InviteError, parse_invite
from moska_p2p.net.relay_client import RELAYED_HOST
from moska_p2p.net.relay_proto import Caps, club_caps
from moska_p2p.net.wire import FrameStream, prefixed
from moska_p2p.protocol.frames import pack, unpack
from moska_p2p.tournament import EventSpec, event_id

ROOT = Path(__file__).resolve().parents[2]
DIRECTOR = Identity.from_seed(bytes([41]) * 32)
OTHER = Identity.from_seed(bytes([42]) * 32)
ENTRANT = Identity.from_seed(bytes([43]) * 32)
SPEC = EventSpec("club evening", "durak", 3, 1, 1, 0, 0, True)
NONCE = bytes(range(32))
EVENT = event_id(SPEC, DIRECTOR.public_bytes, NONCE)


def an_event_invite(key: bytes = DIRECTOR.public_bytes, event: bytes = EVENT) -> Invite:
    return Invite(key, event[:16], (("127.0.0.1", 7000),), ("127.0.0.1", 7117), bytes(16),
                  EVENT_INVITE)  # fmt: skip


A_TABLE_INVITE = Invite(DIRECTOR.public_bytes, bytes(16), (), ("127.0.0.1", 7117), bytes(16))


def test_an_event_invite_round_trips_and_each_kind_is_refused_where_the_other_is_due() -> None:
    invite = an_event_invite()
    text = str(invite)
    assert parse_invite(text, EVENT_INVITE) == invite and text != str(A_TABLE_INVITE)
    with pytest.raises(InviteError, match=r"invite of an event.*moska tournament enter INVITE"):
        parse_invite(text)  # moska join, watch: a table's
    with pytest.raises(InviteError, match=r"invite of a table.*use it with moska join INVITE"):
        parse_invite(str(A_TABLE_INVITE), EVENT_INVITE)
    assert parse_invite(str(A_TABLE_INVITE)) == A_TABLE_INVITE  # a table's is as it was


def test_the_event_room_is_the_directors_own_and_the_same_at_every_run() -> None:
    room = event_room(DIRECTOR, EVENT)
    assert room == event_room(DIRECTOR, EVENT) and room.owner == DIRECTOR.public_bytes
    assert room.table == EVENT[:16] and len(room.secret) == 16
    assert event_room(OTHER, EVENT).secret != room.secret  # nobody else can compute it


def test_a_joiner_dials_the_hosts_address_when_it_listens_and_the_relay_always() -> None:
    host = OTHER.public_bytes
    hosted = str(Invite(host, bytes(16), (), ("relay.example.org", 7117), bytes(range(16))))
    listens = table_where(hosted, host, "192.168.1.5", 4000)
    assert listens is not None and listens.direct == (("192.168.1.5", 4000),)
    assert listens.relay == ("relay.example.org", 7117) and listens.secret == bytes(range(16))
    relayed = table_where(hosted, host, RELAYED_HOST, 0)
    assert relayed is not None and relayed.direct == ()
    assert table_where(hosted, DIRECTOR.public_bytes, "192.168.1.5", 4000) is None  # not its
    assert table_where("moska:garbage", host, "192.168.1.5", 4000) is None
    assert table_where(None, host, "192.168.1.5", 4000) is None


def test_the_club_caps_of_a_relay_default_to_a_public_relays() -> None:
    assert club_caps(8, 16) == Caps()
    bigger = club_caps(32, 40)
    assert bigger.connections_per_address == 32 and bigger.members == 40
    assert bigger.rooms_per_address == 8 and bigger.members_per_address == 32


def moska(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


def test_the_commands_refuse_the_other_kinds_invite_with_the_command_that_takes_it(
    tmp_path: Path,
) -> None:
    entered = moska("tournament", "enter", str(A_TABLE_INVITE), "--folder", str(tmp_path / "e"))
    assert entered.returncode == 2 and "use it with moska join INVITE" in entered.stderr, entered
    joined = moska("join", str(an_event_invite()), "--transcript", str(tmp_path / "t.moska"))
    assert joined.returncode == 2, joined
    assert "use it with moska tournament enter INVITE" in joined.stderr, joined
    no_relay = Invite(DIRECTOR.public_bytes, EVENT[:16], (("127.0.0.1", 7000),), None,
                      b"", EVENT_INVITE)  # fmt: skip
    deaf = moska("tournament", "enter", str(no_relay), "--no-listen", "--folder",
                 str(tmp_path / "d"))  # fmt: skip
    assert deaf.returncode == 2 and "needs an event invite with a relay" in deaf.stderr, deaf
    director = moska("tournament", "direct", "--entrants", "2", "--no-listen")
    assert director.returncode == 2 and "--no-listen needs --relay" in director.stderr, director


# -- the director's key, pinned by the invite: real TCP on 127.0.0.1 in one trio run -----------


def entrant(tmp_path: Path, invite: Invite, said: list[str]) -> EntrantNode:
    def no_player() -> object:
        raise AssertionError("no table is played here")

    seat = Seat(ENTRANT, "ann", no_player, "127.0.0.1", echo=said.append)  # type: ignore[arg-type]
    options = EntrantOptions(seat, "bot", tmp_path / "entrant", "", 0, echo=said.append,
                             connect_wait=20.0, invite=invite)  # fmt: skip
    (tmp_path / "entrant").mkdir()
    return EntrantNode(options)


async def until(said: list[str], text: str) -> None:
    with trio.fail_after(60):
        while not any(text in line for line in said):
            await trio.sleep(0.05)


def director(tmp_path: Path, identity: Identity, said: list[str]) -> DirectorNode:
    (tmp_path / "director").mkdir()
    options = DirectorOptions(identity, SPEC, NONCE, 3, tmp_path / "director", "127.0.0.1",
                              echo=said.append)  # fmt: skip
    return DirectorNode(options)


def test_an_entrant_with_the_invite_enters_when_its_director_proves_its_key(
    tmp_path: Path,
) -> None:
    said: list[str] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(director(tmp_path, DIRECTOR, said).run)
            invite = Invite(DIRECTOR.public_bytes, EVENT[:16], (("127.0.0.1", port),), None,
                            b"", EVENT_INVITE)  # fmt: skip
            nursery.start_soon(entrant(tmp_path, invite, said).run)
            await until(said, "entered the event 'club evening' as ann")
            await until(said, "entered: ann (bot)")
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_another_director_at_the_invites_address_is_refused_with_both_keys_named(
    tmp_path: Path,
) -> None:
    said: list[str] = []
    codes: list[int] = []

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            port = await nursery.start(director(tmp_path, OTHER, said).run)
            invite = Invite(DIRECTOR.public_bytes, EVENT[:16], (("127.0.0.1", port),), None,
                            b"", EVENT_INVITE)  # fmt: skip
            with trio.fail_after(60):
                codes.append(await entrant(tmp_path, invite, said).run())
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert codes == [1]
    refusal = next(line for line in said if line.startswith("error: "))
    assert fingerprint_of(OTHER.public_bytes) in refusal, refusal
    assert fingerprint_of(DIRECTOR.public_bytes) in refusal and "refused" in refusal, refusal
    assert not any("entered" in line for line in said), said


def test_a_peer_that_claims_the_directors_key_but_cannot_prove_it_is_refused(
    tmp_path: Path,
) -> None:
    """A stand-in (a relay, a machine at the address) says the pinned key and the event, and
    answers the challenge with a signature it cannot make."""
    said: list[str] = []
    codes: list[int] = []
    asked: list[object] = []

    async def impostor(stream: trio.SocketStream) -> None:
        frames = FrameStream(stream)
        forged = OTHER.sign("tournament/director-proof", EVENT + bytes(32))
        try:
            await stream.send_all(
                prefixed(pack(["event", SPEC.to_wire(), DIRECTOR.public_bytes, NONCE]))
            )
            body = await frames.receive()
            asked.append(unpack(body) if body is not None else None)
            await stream.send_all(prefixed(pack(["proof", forged])))
            await frames.receive()
        except (trio.BrokenResourceError, OSError):
            pass  # the entrant hung up on it

    async def main() -> None:
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(
                functools.partial(trio.serve_tcp, impostor, 0, host="127.0.0.1")
            )
            port = listeners[0].socket.getsockname()[1]
            with trio.fail_after(60):
                codes.append(await entrant(tmp_path, an_event_invite_at(port), said).run())
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert codes == [1]
    assert isinstance(asked[0], list) and asked[0][0] == "prove", asked  # it was challenged
    refusal = next(line for line in said if line.startswith("error: "))
    assert "did not prove it holds the key" in refusal, refusal
    assert fingerprint_of(DIRECTOR.public_bytes) in refusal, refusal


def an_event_invite_at(port: int) -> Invite:
    return Invite(DIRECTOR.public_bytes, EVENT[:16], (("127.0.0.1", port),), None, b"",
                  EVENT_INVITE)  # fmt: skip


def test_a_director_that_relays_for_others_is_entered_through_its_relay_alone(
    tmp_path: Path,
) -> None:
    """``direct --relay-for-others --no-listen``: the invite names no address, only the relay
    the director runs; the entrant enters through it (and the director proves its key)."""
    said: list[str] = []

    async def main() -> None:
        (tmp_path / "director").mkdir()
        options = DirectorOptions(DIRECTOR, SPEC, NONCE, 3, tmp_path / "director", "127.0.0.1",
                                  echo=said.append, relay_for_others=0, listen=False)  # fmt: skip
        async with trio.open_nursery() as nursery:
            assert await nursery.start(DirectorNode(options).run) == 0  # no port of its own
            line = next(line for line in said if line.startswith("event invite"))
            invite = parse_invite(line.split(": ", 1)[1], EVENT_INVITE)
            assert invite.direct == () and invite.relay is not None
            assert invite.host_key == DIRECTOR.public_bytes
            nursery.start_soon(entrant(tmp_path, invite, said).run)
            await until(said, "entered: ann (bot)")
            nursery.cancel_scope.cancel()

    trio.run(main)


def test_an_entrant_at_host_port_learns_the_relay_its_tables_meet_at(tmp_path: Path) -> None:
    """An event with a relay, entered by ``HOST:PORT`` (no invite): the director tells the
    entrant its relay, where the entrant's tables open their rooms too."""
    said: list[str] = []
    learnt: list[tuple[str, int] | None] = []

    async def main() -> None:
        (tmp_path / "director").mkdir()
        options = DirectorOptions(DIRECTOR, SPEC, NONCE, 3, tmp_path / "director", "127.0.0.1",
                                  echo=said.append, relay_for_others=0)  # fmt: skip
        async with trio.open_nursery() as nursery:
            port = await nursery.start(DirectorNode(options).run)
            line = next(line for line in said if line.startswith("event invite"))
            invite = parse_invite(line.split(": ", 1)[1], EVENT_INVITE)
            assert invite.direct == (("127.0.0.1", port),)
            (tmp_path / "entrant").mkdir()
            seat = Seat(ENTRANT, "ann", lambda: None, "127.0.0.1")  # type: ignore[arg-type,return-value]
            node = EntrantNode(EntrantOptions(seat, "bot", tmp_path / "entrant", "127.0.0.1",
                                              port, echo=said.append))  # fmt: skip
            nursery.start_soon(node.run)
            with trio.fail_after(60):
                while node.relay is None:
                    await trio.sleep(0.05)
            learnt.append(node.relay)
            assert invite.relay == node.relay
            nursery.cancel_scope.cancel()

    trio.run(main)
    assert learnt and learnt[0] is not None
