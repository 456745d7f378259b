"""Finding a club event on the LAN (``moska_p2p/event/lan.py``): the director's signed
beacon beside the tables', the strict parser, the entrant's pin on the announced director,
and ``moska tournament enter`` with no address, in one trio run and with real processes on
loopback.

Every test uses a multicast group and port of its own, on loopback only (the ``lan``
fixture). Every wait is bounded; whatever process a test starts is killed at its end.
"""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from functools import partial
from pathlib import Path

import msgpack
import pytest
import trio
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from net_harness import ROOT, Peer, send_datagrams
from typer.testing import CliRunner

from moska_p2p.cli import app as moska_app
from moska_p2p.crypto.identity import Identity
from moska_p2p.event.carrier import DirectorNode, DirectorOptions, EntrantNode, EntrantOptions
from moska_p2p.event.folder import verify_event
from moska_p2p.event.lan import (
    EntryStatus,
    Pin,
    announce_event,
    event_announcement,
    event_collector,
    event_tag,
    find_events,
    find_running_event,
    open_events,
    parse_event_announcement,
    pin_refusal,
)
from moska_p2p.event.tables import Seat
from moska_p2p.net.discovery import (
    Collector,
    Settings,
    TableStatus,
    announce,
    announcement,
    find_tables,
)
from moska_p2p.net.node import Player as NodePlayer
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.frames import FrameError, open_frame, signed_frame
from moska_p2p.tournament import BOT, EventSpec, digest, event_id

ALICE = Identity.from_seed(bytes([1]) * 32)
MALLORY = Identity.from_seed(bytes([3]) * 32)
SPEC = EventSpec("club evening", "durak", 3, 2, 1)
NONCE = bytes(range(32))
EVENT = event_id(SPEC, ALICE.public_bytes, NONCE)
TABLE = TableConfig("moska", 3, bytes(32), {}, 10.0)
LOOPBACK = "127.0.0.1"


def _datagram(
    entered: int = 1,
    seq: int = 1,
    port: int = 7777,
    is_open: bool = True,
    identity: Identity = ALICE,
    spec: EventSpec = SPEC,
    event: bytes = EVENT,
) -> bytes:
    return event_announcement(
        identity, spec, event, port=port, wanted=6, entered=entered, seq=seq, open=is_open
    )


def _body(datagram: bytes) -> dict[str, object]:
    _, payload, _ = open_frame(datagram[4:])
    body = msgpack.unpackb(payload)
    assert isinstance(body, dict)
    return body


# ------------------------------------------------------------------------ sans-IO pieces


def test_an_event_announcement_says_what_the_list_shows() -> None:
    found = parse_event_announcement(_datagram(entered=2), "192.0.2.7")
    assert (found.key, found.fingerprint) == (ALICE.public_bytes, ALICE.fingerprint)
    assert (found.name, found.preset, found.seats, found.rounds, found.games) == (
        "club evening", "durak", 3, 2, 1,
    )  # fmt: skip
    assert (found.wanted, found.entered, found.final, found.bots) == (6, 2, 0, True)
    assert found.endpoint == "192.0.2.7:7777" and found.event == event_tag(EVENT)
    assert found.enterable
    assert found.describe() == (
        f"192.0.2.7:7777  club evening  durak, 2 rounds at 3 a table, 2 of 6 entered"
        f"  {ALICE.fingerprint}"
    )
    final = EventSpec("mm\x1b[31m", "moska", 4, 3, 1, 4, 1, bots_allowed=False)
    shown = parse_event_announcement(_datagram(spec=final), LOOPBACK).describe()
    assert "mm?[31m  moska, 3 rounds at 4 a table + a final of 4" in shown  # no escape
    assert shown.endswith("[no bots]")


def test_tables_and_events_ignore_each_others_beacons() -> None:
    table = announcement(ALICE, TABLE, name="alice", port=7777, seats=1, seq=1, open=True)
    event = _datagram()
    both = signed_frame(ALICE, "beacon", {**_body(table), **_body(event)})  # one of each?
    tables, events = Collector(), event_collector()
    for data in (table, event, both):
        tables.feed(data, LOOPBACK)
        events.feed(data, LOOPBACK)
    assert [t.name for t in tables.tables()] == ["alice"]  # a table reads extra fields
    assert tables.ignored == 1  # the event's
    assert [e.name for e in open_events(events)] == ["club evening"]
    assert events.ignored == 2  # the table's, and the one that claims to be both
    with pytest.raises(FrameError, match="a table and an event at once"):
        parse_event_announcement(both, LOOPBACK)
    with pytest.raises(FrameError, match="not a moska-event announcement"):
        parse_event_announcement(table, LOOPBACK)


def test_malformed_event_datagrams_are_dropped() -> None:
    genuine = _datagram()
    body = _body(genuine)
    without_port = {k: v for k, v in body.items() if k != "port"}
    junk = [
        b"",
        b"\x00\x00\x00\x05hello",
        genuine[:-1],  # truncated
        genuine + b"x",  # trailing byte
        b"\xff" * 3000,  # oversized
        signed_frame(ALICE, "net/hi", body),  # an event, signed as another kind
        signed_frame(MALLORY, "beacon", {**body, "entered": 5}),  # Alice's key, Mallory signs
        genuine.replace(b"club evening", b"club evenin9"),  # tampered after signing
        signed_frame(ALICE, "beacon", {**body, "entered": 7}),  # more than it wants
        signed_frame(ALICE, "beacon", {**body, "port": 0}),
        signed_frame(ALICE, "beacon", {**body, "seats": 9}),
        signed_frame(ALICE, "beacon", {**body, "final": 1}),
        signed_frame(ALICE, "beacon", {**body, "name": ""}),
        signed_frame(ALICE, "beacon", {**body, "event": bytes(7)}),
        signed_frame(ALICE, "beacon", {**body, "bots": 1}),
        signed_frame(ALICE, "beacon", {**body, "key": bytes([1]) + bytes(31)}),
        signed_frame(ALICE, "beacon", without_port),
        signed_frame(ALICE, "beacon", [body]),
        signed_frame(ALICE, "beacon", {**body, **{f"x{i}": i for i in range(30)}}),
    ]
    heard = event_collector()
    for data in junk:
        with pytest.raises(FrameError):
            parse_event_announcement(data, LOOPBACK)
        assert heard.feed(data, LOOPBACK) is None
    assert heard.ignored == len(junk) and open_events(heard) == []
    assert heard.feed(genuine, LOOPBACK) is not None and len(open_events(heard)) == 1


def test_the_newest_state_of_each_event_wins() -> None:
    heard = event_collector()
    for data in (_datagram(entered=4, seq=5), _datagram(entered=2, seq=3)):  # out of order
        heard.feed(data, LOOPBACK)
    heard.feed(_datagram(port=8888), "192.0.2.9")
    assert [(e.port, e.entered) for e in open_events(heard)] == [(7777, 4), (8888, 1)]
    heard.feed(_datagram(entered=6, seq=6, is_open=False), LOOPBACK)  # the entry closed
    assert [e.port for e in open_events(heard)] == [8888]
    other = event_id(SPEC, ALICE.public_bytes, bytes(32))  # a new event, same key and port
    heard.feed(_datagram(event=other, seq=1), LOOPBACK)
    assert sorted(e.port for e in open_events(heard)) == [7777, 8888]
    heard.feed(_datagram(entered=6, seq=7, port=8888), "192.0.2.9")  # full: not enterable
    assert [e.port for e in open_events(heard)] == [7777]


def test_the_pin_holds_the_director_to_its_announcement() -> None:
    pin = Pin.of(parse_event_announcement(_datagram(), LOOPBACK))
    assert pin_refusal(None, MALLORY.public_bytes, EVENT) is None  # an address given: no pin
    assert pin_refusal(pin, ALICE.public_bytes, EVENT) is None
    other = pin_refusal(pin, MALLORY.public_bytes, EVENT)
    assert other is not None and MALLORY.fingerprint in other and ALICE.fingerprint in other
    assert "which announced the event" in other
    again = pin_refusal(pin, ALICE.public_bytes, event_id(SPEC, ALICE.public_bytes, bytes(32)))
    assert again is not None and "another event" in again


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
    | st.binary(max_size=40),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner,
                                                                max_size=3),
    max_leaves=8,
)  # fmt: skip


@given(_values, st.dictionaries(st.text(max_size=8), _values, max_size=14))
@settings(max_examples=300)
def test_event_announcements_raise_only_frame_errors(
    value: object, fields: dict[str, object]
) -> None:
    base = _body(_datagram())
    for obj in (value, {**base, **fields}, {**fields, "moska-event": 1, "key": ALICE.public_bytes}):
        try:
            datagram = signed_frame(ALICE, "beacon", obj)
        except FrameError:
            continue
        with suppress(FrameError):
            parse_event_announcement(datagram, LOOPBACK)


@given(st.binary(max_size=400))
@settings(max_examples=300)
def test_random_bytes_raise_only_frame_errors(data: bytes) -> None:
    for datagram in (data, len(data).to_bytes(4, "big") + data):
        with suppress(FrameError):
            parse_event_announcement(datagram, LOOPBACK)


# ------------------------------------------------------------------------ in one trio run


@pytest.mark.trio
async def test_an_announced_event_is_found_and_its_beacon_stops_when_the_entry_is_full(
    lan: Settings,
) -> None:
    state = EntryStatus(2, True)
    lines: list[str] = []
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: announce_event(
                    ALICE, SPEC, EVENT, port=7777, wanted=6, status=lambda: state,
                    bind=LOOPBACK, settings=lan, interval=0.1, ready=lines.append,
                )
            )  # fmt: skip
            found = await find_events(5.0, lan, enough=lambda heard: bool(open_events(heard)))
            assert [e.describe() for e in found.events] == [
                f"127.0.0.1:7777  club evening  durak, 2 rounds at 3 a table, 2 of 6 entered"
                f"  {ALICE.fingerprint}"
            ]
            assert lines and "announcing the event on the LAN" in lines[0]
            heard: list[int] = []

            async def listen() -> None:
                after = await find_events(1.0, lan)
                heard.extend([after.received, len(after.events)])

            async with trio.open_nursery() as listening:
                listening.start_soon(listen)
                await trio.sleep(0.3)
                state = EntryStatus(6, False)  # full: one closed announcement, then no more
    assert heard[0] >= 2 and heard[1] == 0, heard  # the beacon ended on its own


@pytest.mark.trio
async def test_a_running_event_is_announced_closed_and_found_only_by_its_own_entrants(
    lan: Settings,
) -> None:
    """After the entry closes the director keeps announcing the event, marked closed: no
    newcomer is offered it, but an entrant started again with no address finds where it
    runs, by the event's id and its director's key (another key's beacon of the same event
    is not taken); when the event ends the beacon stops."""
    state = EntryStatus(6, False, running=True)
    forged = _datagram(identity=MALLORY, port=6666, event=EVENT, seq=99, is_open=False)

    async def forging() -> None:  # Mallory's beacon of Alice's event, newer by its seq
        for _ in range(40):
            send_datagrams(lan, forged)
            await trio.sleep(0.05)

    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: announce_event(
                    ALICE, SPEC, EVENT, port=7777, wanted=6, status=lambda: state,
                    bind=LOOPBACK, settings=lan, interval=0.1,
                )
            )  # fmt: skip
            nursery.start_soon(forging)
            newcomers = await find_events(1.0, lan)
            assert newcomers.events == [] and newcomers.received > 0
            found = await find_running_event(5.0, EVENT, {ALICE.public_bytes}, lan)
            assert found is not None and (found.key, found.port) == (ALICE.public_bytes, 7777)
            assert not found.open
            other = event_id(SPEC, ALICE.public_bytes, bytes(32))
            assert await find_running_event(0.5, other, {ALICE.public_bytes}, lan) is None
            state = EntryStatus(6, False, running=False)  # the event is over
            await trio.sleep(0.3)
            assert await find_running_event(0.5, EVENT, {ALICE.public_bytes}, lan) is None


@pytest.mark.trio
async def test_table_and_event_listeners_each_hear_only_their_own(lan: Settings) -> None:
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(
                lambda: announce(
                    ALICE, TABLE, name="alice", port=7001, status=lambda: TableStatus(1, True),
                    bind=LOOPBACK, settings=lan, interval=0.1,
                )
            )  # fmt: skip
            nursery.start_soon(
                lambda: announce_event(
                    MALLORY, SPEC, EVENT, port=7002, wanted=6,
                    status=lambda: EntryStatus(0, True), bind=LOOPBACK, settings=lan,
                    interval=0.1,
                )
            )  # fmt: skip
            tables = await find_tables(1.0, lan)
            events = await find_events(1.0, lan)
            nursery.cancel_scope.cancel()
    assert [t.port for t in tables.tables] == [7001] and tables.ignored >= 2
    assert [e.port for e in events.events] == [7002] and events.ignored >= 2


@pytest.mark.trio
async def test_an_entrant_refuses_a_director_other_than_the_announced_one(
    tmp_path: Path,
) -> None:
    """A forged or replayed announcement pointing at another director: the key that
    answers is not the pinned one, and the entrant enters nothing."""
    said: list[str] = []
    director = DirectorNode(
        DirectorOptions(ALICE, SPEC, NONCE, 6, tmp_path / "director", LOOPBACK, 0, echo=said.append)
    )
    entrant_id = Identity.from_seed(bytes([9]) * 32)
    forged = parse_event_announcement(_datagram(identity=MALLORY), LOOPBACK)

    def no_player() -> NodePlayer:
        raise AssertionError("no table is played here")

    def entrant(port: int, pin: Pin) -> EntrantNode:
        seat = Seat(entrant_id, "bob", no_player, LOOPBACK, echo=said.append)
        return EntrantNode(
            EntrantOptions(
                seat,
                BOT,
                tmp_path / "bob",
                LOOPBACK,
                port,
                echo=said.append,
                connect_wait=5.0,
                pin=pin,
            )
        )

    (tmp_path / "bob").mkdir()
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(director.run)
            code = await entrant(port, Pin.of(forged)).run()
            assert code == 1
            assert any(
                f"is {ALICE.fingerprint}, not {MALLORY.fingerprint}, which announced" in line
                for line in said
            ), said
            assert director.role.entrants == {}  # it never entered
            genuine = Pin(ALICE.public_bytes, event_tag(director.role.event))
            nursery.start_soon(entrant(port, genuine).run)
            with trio.move_on_after(10):
                while not director.role.entrants:
                    await trio.sleep(0.05)
            nursery.cancel_scope.cancel()
    assert list(director.role.entrants) == [entrant_id.public_bytes]  # the pinned one enters


@pytest.mark.trio
async def test_an_entrant_refuses_a_replayed_announcement_whose_director_cannot_prove_its_key(
    tmp_path: Path,
) -> None:
    """Mallory replays Alice's genuine announcement from her own address and answers as
    Alice (her key, her event's settings and nonce, all public): she cannot sign the
    entrant's challenge with Alice's key, and the entrant enters nothing."""
    from moska_p2p.net.wire import FrameStream, prefixed
    from moska_p2p.protocol.frames import pack

    heard: list[object] = []

    async def impostor(stream: trio.SocketStream) -> None:
        frames = FrameStream(stream)
        await stream.send_all(prefixed(pack(["event", SPEC.to_wire(), ALICE.public_bytes, NONCE])))
        body = await frames.receive()
        heard.append(None if body is None else msgpack.unpackb(body)[0])
        await stream.send_all(prefixed(pack(["proof", MALLORY.sign("x", bytes(8))])))
        with trio.move_on_after(2):
            while (body := await frames.receive()) is not None:
                heard.append(msgpack.unpackb(body)[0])

    said: list[str] = []

    def no_player() -> NodePlayer:
        raise AssertionError("no table is played here")

    seat = Seat(Identity.from_seed(bytes([9]) * 32), "bob", no_player, LOOPBACK, echo=said.append)
    (tmp_path / "bob").mkdir()
    pin = Pin.of(parse_event_announcement(_datagram(), LOOPBACK))  # Alice's, genuine
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            listeners = await nursery.start(partial(trio.serve_tcp, impostor, 0, host=LOOPBACK))
            port = listeners[0].socket.getsockname()[1]
            options = EntrantOptions(
                seat, BOT, tmp_path / "bob", LOOPBACK, port, echo=said.append,
                connect_wait=5.0, pin=pin,
            )  # fmt: skip
            code = await EntrantNode(options).run()
            nursery.cancel_scope.cancel()
    assert code == 1
    assert heard[0] == "prove" and "enter" not in heard, heard
    assert any(
        f"did not prove it holds the key {ALICE.fingerprint} the announcement names" in line
        for line in said
    ), said


# ------------------------------------------------------------------------ the command line


class Repeating:
    """Datagrams sent to the test's group every 0.1 s from a thread, while a command
    listens."""

    def __init__(self, lan: Settings, *datagrams: bytes) -> None:
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, args=(lan, datagrams), daemon=True)

    def run(self, lan: Settings, datagrams: tuple[bytes, ...]) -> None:
        for _ in range(600):
            if self.stop.wait(0.1):
                return
            send_datagrams(lan, *datagrams)

    def __enter__(self) -> Repeating:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.stop.set()
        self.thread.join(5)


def _entering(tmp_path: Path, *extra: str) -> list[str]:
    return ["tournament", "enter", "--bot", "greedy", "--name", "bob", "--look", "1",
            "--wait", "1", "--identity", str(tmp_path / "bob.pem"),
            "--folder", str(tmp_path / "bob"), "--bind", LOOPBACK, "-q", *extra]  # fmt: skip


def test_no_event_found_says_how_to_enter_one(lan: Settings, tmp_path: Path) -> None:
    table = announcement(ALICE, TABLE, name="alice", port=7777, seats=1, seq=1, open=True)
    with Repeating(lan, table):  # a table is no event
        done = CliRunner().invoke(moska_app, _entering(tmp_path))
    assert done.exit_code == 2, done.output
    assert "no open event found on the LAN in 1 s" in done.output
    assert "moska tournament enter 192.168.1.20:41234" in done.output


def test_several_events_and_a_bot_must_choose_by_name_or_fingerprint(
    lan: Settings, tmp_path: Path
) -> None:
    other = EventSpec("mm-kisat", "moska", 4, 3, 1)
    ours = _datagram(port=7777)
    theirs = _datagram(spec=other, identity=MALLORY, port=7778,
                       event=event_id(other, MALLORY.public_bytes, NONCE))  # fmt: skip
    runner = CliRunner()
    with Repeating(lan, ours, theirs):
        several = runner.invoke(moska_app, _entering(tmp_path))
        named = runner.invoke(moska_app, _entering(tmp_path, "--event", "MM-KISAT"))
        pinned = runner.invoke(moska_app, _entering(tmp_path, "--expect", ALICE.fingerprint))
    assert several.exit_code == 2, several.output
    assert "found 2 events:" in several.output
    assert "1. 127.0.0.1:7777  club evening  durak" in several.output
    assert "2. 127.0.0.1:7778  mm-kisat  moska, 3 rounds at 4 a table" in several.output
    assert "choose one with --event NAME or --expect FINGERPRINT" in several.output
    # Chosen, each is entered at its own address (nobody listens there: no director found)
    assert "found one event: 127.0.0.1:7778  mm-kisat" in named.output, named.output
    assert "entering the event at 127.0.0.1:7778" in named.output
    assert "found one event: 127.0.0.1:7777  club evening" in pinned.output, pinned.output
    assert named.exit_code == pinned.exit_code == 1
    given = runner.invoke(moska_app, [*_entering(tmp_path, "--event", "x"), "127.0.0.1:7"])
    assert given.exit_code == 2 and "no HOST:PORT" in given.output


# ------------------------------------------------------------------------ real processes

OPEN_LINE = re.compile(r"open on 127\.0\.0\.1:(\d+)")


@pytest.fixture
def peers() -> Iterator[list[Peer]]:
    made: list[Peer] = []
    try:
        yield made
    finally:
        for peer in made:
            peer.kill()


def _club(
    tmp_path: Path, peers: list[Peer], name: str, rounds: int, *quiet: str
) -> tuple[Peer, str]:
    """A director of a durak event of three entrants on loopback, and three bots entering
    with no address (found on the LAN); ``quiet``: ``-q`` or nothing. (The director, its
    port.)"""
    director = Peer(
        "director",
        ["tournament", "direct", "--preset", "durak", "--seats", "3", "--rounds", str(rounds),
         "--games", "1", "--entrants", "3", "--bind", LOOPBACK, "--name", name,
         "--folder", str(tmp_path / "director"), "--identity", str(tmp_path / "d.pem")],
        tmp_path,
    )  # fmt: skip
    peers.append(director)
    director.wait_for("announcing the event on the LAN", 60)
    port = director.wait_for(OPEN_LINE).group(1)
    for n in range(3):  # no address: each finds the one event on the LAN
        entering = ["tournament", "enter", "--bot", "greedy", "--name", f"bot{n}", "--look", "5",
                    "--identity", str(tmp_path / f"bot{n}.pem"),
                    "--folder", str(tmp_path / f"bot{n}"), "--bind", LOOPBACK, *quiet]  # fmt: skip
        peers.append(Peer(f"bot{n}", entering, tmp_path))
    return director, port


def _all_end_with_one_board(tmp_path: Path, peers: list[Peer], within: float = 300) -> None:
    end = time.monotonic() + within
    for peer in peers:
        assert peer.finish(max(1.0, end - time.monotonic())) == 0, peer.out + peer.err
    boards = set()
    for folder in ["director", "bot0", "bot1", "bot2"]:
        report = verify_event(tmp_path / folder)
        assert report.status == "valid", (folder, report.fault)
        boards.add(digest(report.rows or []))
    assert len(boards) == 1


def test_bots_enter_an_event_found_on_the_lan_and_every_folder_verifies(
    lan: Settings, tmp_path: Path, peers: list[Peer]
) -> None:
    _director, port = _club(tmp_path, peers, "loopback club", 1, "-q")
    fingerprint = Identity.load(tmp_path / "d.pem").fingerprint
    _all_end_with_one_board(tmp_path, peers)
    for peer in peers[1:]:
        assert f"found one event: 127.0.0.1:{port}  loopback club  durak" in peer.out, peer.out
        assert fingerprint in peer.out
    # the entry is full: the event is no longer offered
    after = CliRunner().invoke(moska_app, _entering(tmp_path / "late"))
    assert after.exit_code == 2 and "no open event found" in after.output, after.output


def test_an_entrant_found_on_the_lan_comes_back_with_the_same_command_after_a_crash(
    lan: Settings, tmp_path: Path, peers: list[Peer]
) -> None:
    """An entrant that entered with no address is killed at its first table and started
    again with the same command: its folder holds the event, so it looks for that event's
    beacon (announced closed now, the entry full), reaches the director again, goes back to
    its table, and the event ends with every folder verifying one board."""
    _director, port = _club(tmp_path, peers, "crash club", 2)
    crashed = peers[1]
    crashed.wait_for("round 1: table", 240)
    crashed.kill()
    crashed.start()  # the same command: no address, the same --folder
    crashed.wait_for(f"found it at 127.0.0.1:{port}", 120)
    _all_end_with_one_board(tmp_path, peers, within=900)  # a loaded machine: two rounds, a grace
    assert "holds an event: looking for it on the LAN" in crashed.out


def test_an_announcement_forged_for_a_real_director_is_refused(
    lan: Settings, tmp_path: Path, peers: list[Peer]
) -> None:
    """Mallory announces an event at the real director's address: the entrant connects,
    meets the director's key where it expected Mallory's, and enters nothing."""
    director = Peer(
        "director",
        ["tournament", "direct", "--preset", "durak", "--seats", "3", "--entrants", "3",
         "--bind", LOOPBACK, "--no-announce", "--folder", str(tmp_path / "director"),
         "--identity", str(tmp_path / "d.pem")],
        tmp_path,
    )  # fmt: skip
    peers.append(director)
    port = int(director.wait_for(OPEN_LINE, 60).group(1))
    real = Identity.load(tmp_path / "d.pem")
    forged = _datagram(identity=MALLORY, port=port)
    with Repeating(lan, forged):
        done = subprocess.run(
            [sys.executable, "-m", "moska_p2p", *_entering(tmp_path)],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"is {real.fingerprint}, not {MALLORY.fingerprint}, which announced the event" in (
        done.stdout
    )
    time.sleep(0.5)
    assert "entered:" not in director.out  # the director never saw an entry


class _Terminal:
    """Standard input as a person's terminal."""

    def isatty(self) -> bool:
        return True


def test_a_person_picks_an_event_or_says_yes_to_the_only_one(
    lan: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moska_p2p.cli.tournament import EventChoice, find_event

    other = EventSpec("mm-kisat", "moska", 4, 3, 1)
    theirs = _datagram(spec=other, identity=MALLORY, port=7778,
                       event=event_id(other, MALLORY.public_bytes, NONCE))  # fmt: skip
    asked: list[str] = []
    answers: list[str] = []

    def ask(prompt: str) -> str:
        asked.append(prompt)
        return answers.pop(0)

    monkeypatch.setattr(sys, "stdin", _Terminal())
    monkeypatch.setattr("builtins.input", ask)
    with Repeating(lan, _datagram(port=7777), theirs):
        answers[:] = ["9", "2"]  # no such number, then the second
        picked = find_event(EventChoice(look=1.0), automatic=False)
        assert picked.name == "mm-kisat" and picked.key == MALLORY.public_bytes
        assert asked[0].startswith("enter which event? [1-2")
        answers[:] = ["y"]
        only = find_event(EventChoice(look=1.0, event="club evening"), automatic=False)
        assert only.port == 7777 and len(asked) == 2  # named: taken without a question
    with Repeating(lan, _datagram(port=7777)):
        answers[:] = ["y"]
        assert find_event(EventChoice(look=1.0), automatic=False).port == 7777
        assert asked[-1] == "enter it? [y/N] "  # the only one, confirmed
        answers[:] = [""]
        with pytest.raises(typer.Exit) as refused:  # the only one, not confirmed
            find_event(EventChoice(look=1.0), automatic=False)
    assert refused.value.exit_code == 2
