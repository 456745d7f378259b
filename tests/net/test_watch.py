"""Spectators: ``moska watch`` in one trio run on 127.0.0.1, every wait
bounded. A spectator watches a whole game and its transcript verifies; it never knows a card
no player shows; the host refuses spectators it does not take (none, too many, a player's
key), with a one-line reason; a spectator that sends anything after its handshake is cut off
and the game goes on; a host that withholds frames is reported as silent, blaming nobody."""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from pathlib import Path

import pytest
import trio
import trio.testing

from moska_p2p.bots.loader import load_bot
from moska_p2p.crypto.identity import Identity
from moska_p2p.net.node import EXIT_FAILED, EXIT_OK, Node, NodeOptions
from moska_p2p.net.watch import Watcher, WatchOptions
from moska_p2p.net.watch_proto import (
    HOST,
    WATCHER,
    check_watch_proof,
    watch_id,
    watch_proof,
)
from moska_p2p.net.wire import HI, REFUSE, WATCH, FrameStream, link_id, net_frame
from moska_p2p.protocol.config import TableConfig, lobby_id
from moska_p2p.protocol.frames import FrameError
from moska_p2p.protocol.session import PeerSession
from moska_p2p.protocol.transcript import verify_transcript
from moska_p2p.table.networked import BotAtTable

LOOPBACK = "127.0.0.1"


def _config(players: int = 2, timeout: float = 10.0) -> TableConfig:
    return TableConfig("moska", players, secrets.token_bytes(32), {}, timeout)


def _node(tmp_path: Path, name: str, echo: list[str], pace: float = 0.01, **extra: object) -> Node:
    options = NodeOptions(identity=Identity.generate(),
                          player=BotAtTable(load_bot("random", seed=len(name)), pace=pace),
                          transcript=tmp_path / f"{name}.moska", name=name, bind=LOOPBACK,
                          connect_timeout=5.0, lobby_wait=30.0, echo=echo.append,
                          announce=False)  # fmt: skip
    for key, value in extra.items():
        setattr(options, key, value)
    return Node(options)


class Seen:
    """A spectator's screen that remembers what it was shown."""

    def __init__(self) -> None:
        self.moves: list[tuple[int, str]] = []
        self.ends: list[str] = []
        self.seatings = 0
        self.on_move: list[object] = []

    def seated(self, session: PeerSession, names: Sequence[str]) -> None:
        self.seatings += 1

    def moved(self, session: PeerSession, names: Sequence[str], seat: int, move: str) -> None:
        self.moves.append((seat, move))
        for check in self.on_move:
            check(session)  # type: ignore[operator]

    def ended(self, session: PeerSession, names: Sequence[str], text: str) -> None:
        self.ends.append(text)


def _watcher(tmp_path: Path, echo: list[str], seen: Seen, **extra: object) -> Watcher:
    options = WatchOptions(Identity.generate(), tmp_path / "watched.moska", echo=echo.append,
                           connect_timeout=5.0, lobby_wait=30.0)  # fmt: skip
    for key, value in extra.items():
        setattr(options, key, value)
    return Watcher(options, seen)


class Knowledge:
    """What one peer knew of every hand right after each move, by the number of moves so far.

    The spectator is compared with the players at the same move, never live: on a loaded
    machine its observer runs moves behind the players, and a card that was public in a hand
    then may have been played since (the players no longer count it in that hand)."""

    def __init__(self) -> None:
        self.seat_of: dict[bytes, int] = {}
        self.me = b""
        self.after: dict[int, list[int]] = {}  # moves so far -> the hands known then

    def take(self, session: PeerSession) -> None:
        game = session.game
        assert game is not None
        self.seat_of = dict(session.seat_of)
        self.me = session.me or b""
        self.after[len(session.moves)] = list(game.hands)


def _knowing(node: Node) -> Knowledge:
    """A player's :class:`Knowledge`, taken as its node reports each move to its player."""
    knowledge = Knowledge()
    player = node.o.player
    reported = player.moved

    def moved(seat: int, move: str) -> None:
        assert node.session is not None
        knowledge.take(node.session)
        reported(seat, move)

    player.moved = moved  # type: ignore[method-assign]
    return knowledge


def _known_to_others(players: Sequence[Knowledge], seat_key: bytes, moves: int) -> int:
    """The cards of ``seat_key``'s hand that every other player knew (public ones) when
    ``moves`` moves had been made."""
    known = -1
    for player in players:
        if player.me == seat_key:
            continue
        assert moves in player.after, f"no record of a player after move {moves}"
        known &= player.after[moves][player.seat_of[seat_key]]
    return known


@pytest.mark.trio
async def test_a_spectator_watches_a_whole_game_live_and_its_transcript_verifies(
    tmp_path: Path,
) -> None:
    host_echo: list[str] = []
    host = _node(tmp_path, "host", host_echo)
    joiner = _node(tmp_path, "joiner", [])
    players = [_knowing(host), _knowing(joiner)]
    echo: list[str] = []
    seen = Seen()
    spectator: list[tuple[int, list[bytes], list[int]]] = []  # moves so far, seats, hands

    def remember(observer: PeerSession) -> None:
        game = observer.game
        assert game is not None
        spectator.append((len(observer.moves), list(observer.seats), list(game.hands)))

    seen.on_move.append(remember)
    watcher = _watcher(tmp_path, echo, seen)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, _config(), 0)
            nursery.start_soon(joiner.join, LOOPBACK, port)
            outcome = await watcher.watch((LOOPBACK, port))
    assert outcome.code == EXIT_OK, (outcome.message, echo)
    assert host.outcome is not None and host.outcome.code == EXIT_OK
    # Mid-game: every card the spectator knew in a hand, every other player knew then.
    leaks = [
        f"after move {moves}, seat {seat}: {extra:b}"
        for moves, seats, hands in spectator
        for seat, key in enumerate(seats)
        if (extra := hands[seat] & ~_known_to_others(players, key, moves))
    ]
    assert spectator and not leaks, leaks
    assert seen.seatings == 1 and seen.ends and seen.moves
    assert any(line.startswith("result: ") for line in echo), echo
    assert any("spectator" in line and "is watching" in line for line in host_echo), host_echo
    report = verify_transcript(tmp_path / "watched.moska")
    assert report.valid, report.fault
    host_report = verify_transcript(tmp_path / "host.moska")
    assert report.final_state_hash == host_report.final_state_hash
    assert len(seen.moves) == report.moves


@pytest.mark.trio
@pytest.mark.parametrize(
    ("spectators", "reason"),
    [(0, "takes no spectators"), (1, "has 1 spectators already")],
)
async def test_a_host_refuses_spectators_it_does_not_take_with_a_reason(
    tmp_path: Path, spectators: int, reason: str
) -> None:
    host = _node(tmp_path, "host", [], spectators=spectators, lobby_wait=8.0)
    seen = Seen()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, _config(), 0)
            first: list[object] = []
            if spectators:  # the one it takes, waiting for the table to fill

                async def one() -> None:
                    first.append(await _watcher(tmp_path, [], Seen()).watch((LOOPBACK, port)))

                nursery.start_soon(one)
                while not host.spectators.spectators:
                    await trio.sleep(0.02)
            outcome = await _watcher(tmp_path, [], seen).watch((LOOPBACK, port))
            nursery.cancel_scope.cancel()
    assert outcome.code == EXIT_FAILED
    assert "refused: " in outcome.message and reason in outcome.message, outcome.message
    assert "\n" not in outcome.message


async def _hello(port: int) -> tuple[FrameStream, dict[str, object], bytes]:
    stream = await trio.open_tcp_stream(LOOPBACK, port)
    fs = FrameStream(stream)
    hi = await fs.receive_net(HI)
    return fs, hi.body, hi.key


@pytest.mark.trio
async def test_a_spectator_that_speaks_after_its_handshake_is_cut_off_and_the_game_goes_on(
    tmp_path: Path,
) -> None:
    host = _node(tmp_path, "host", [])
    joiner = _node(tmp_path, "joiner", [])
    config = _config()
    rude = Identity.generate()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, config, 0)
            fs, hi, host_key = await _hello(port)
            table = lobby_id(config)
            nonce = secrets.token_bytes(32)
            parts = (table, rude.public_bytes, host_key, nonce, hi["nonce"])
            proof = watch_proof(rude, *parts, WATCHER)
            body = {"nonce": nonce, "table": table, "proof": proof, "name": "rude"}
            await fs.send(net_frame(rude, WATCH, body))
            welcome = await fs.receive_net("welcome")
            assert check_watch_proof(welcome.body["proof"], *parts, HOST)
            fs.authenticated(watch_id(*parts))
            assert len(host.spectators.spectators) == 1
            await fs.send(b"\x00\x00\x00\x05hello")  # garbage: a spectator sends nothing
            with trio.fail_after(10):
                while host.spectators.spectators:
                    await trio.sleep(0.02)
            nursery.start_soon(joiner.join, LOOPBACK, port)
            await host.over.wait()
            await fs.stream.aclose()
    assert host.outcome is not None and host.outcome.code == EXIT_OK


@pytest.mark.trio
async def test_a_link_proof_is_no_spectators_proof_and_a_player_key_cannot_watch(
    tmp_path: Path,
) -> None:
    """Domain separation: the dialer's proof of a game link, over the very same parts, does
    not open a spectator's connection; nor does the host's own key."""
    config = _config()
    table = lobby_id(config)
    host = _node(tmp_path, "host", [], lobby_wait=8.0)
    key = Identity.generate()
    from moska_p2p.net.wire import DIALER, link_proof

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, config, 0)
            for who, proof_of in (
                (key, lambda parts: link_proof(key, *parts, DIALER)),
                (host.identity, lambda parts: watch_proof(host.identity, *parts, WATCHER)),
            ):
                fs, hi, host_key = await _hello(port)
                nonce = secrets.token_bytes(32)
                parts = (table, who.public_bytes, host_key, nonce, hi["nonce"])
                body = {"nonce": nonce, "table": table, "proof": proof_of(parts), "name": "x"}
                await fs.send(net_frame(who, WATCH, body))
                refusal = await fs.receive_net(REFUSE)
                while host.spectators.spectators:  # its slot is given back once the refusal is out
                    await trio.sleep(0.02)
                assert refusal.body["reason"], refusal
                await fs.stream.aclose()
            nursery.cancel_scope.cancel()
    assert watch_id(*parts) != link_id(*parts)


@pytest.mark.trio
async def test_a_host_that_withholds_frames_is_reported_silent_blaming_nobody(
    tmp_path: Path,
) -> None:
    host = _node(tmp_path, "host", [], pace=0.2)  # a game longer than the spectator's patience
    joiner = _node(tmp_path, "joiner", [], pace=0.2)
    echo: list[str] = []
    stalled = trio.Event()

    async def withhold(self: object, fs: FrameStream) -> None:  # the host's stream, cut short
        while host.session is None:
            await trio.sleep(0.02)
        await fs.send(host.lobby.hosting.start_frame)  # type: ignore[union-attr]
        stalled.set()
        await trio.sleep_forever()

    watcher = _watcher(tmp_path, echo, Seen(), silence=1.0)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            host.spectators.stream = withhold.__get__(host.spectators)  # type: ignore[method-assign]
            port = await nursery.start(host.host, _config(), 0)
            nursery.start_soon(joiner.join, LOOPBACK, port)
            outcome = await watcher.watch((LOOPBACK, port))
            assert not host.over.is_set()  # it gave up while the game went on
            await host.over.wait()
    assert stalled.is_set()
    assert outcome.code == EXIT_FAILED
    assert "the host stopped sending: nothing for 1 s" in outcome.message, outcome.message
    assert "nobody at the table is blamed" in outcome.message


@pytest.mark.trio
async def test_a_late_spectator_gets_the_game_from_its_start_and_a_session_to_its_result(
    tmp_path: Path,
) -> None:
    """A spectator that comes when the first game is under way still gets every frame of it
    from the hellos on, then the session's next game and every player's signed result."""
    host = _node(tmp_path, "host", [])
    joiner = _node(tmp_path, "joiner", [])
    config = TableConfig("moska", 2, secrets.token_bytes(32), {}, 10.0, games=2)
    echo: list[str] = []
    seen = Seen()
    watcher = _watcher(tmp_path, echo, seen)
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, config, 0)
            nursery.start_soon(joiner.join, LOOPBACK, port)
            while host.session is None or len(host.session.moves) < 5:
                await trio.sleep(0.01)
            outcome = await watcher.watch((LOOPBACK, port))
    assert outcome.code == EXIT_OK, (outcome.message, echo)
    assert outcome.message == "watched 2 games to the end", echo
    assert len(seen.ends) == 2 and seen.seatings == 2
    for number in (1, 2):
        mine = verify_transcript(tmp_path / f"watched-g{number}.moska")
        theirs = verify_transcript(tmp_path / f"host-g{number}.moska")
        assert mine.valid, mine.fault
        assert mine.final_state_hash == theirs.final_state_hash
        assert mine.moves == theirs.moves
    assert (tmp_path / "watched-session.moska").exists()
    assert any("session results signed by 2 players" in line for line in echo), echo


@pytest.mark.trio
async def test_a_spectator_that_does_not_read_is_cut_off_without_waiting_for_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A send to a spectator that takes nothing is bounded: it fails (and the spectator is
    cut off) instead of holding anything up."""
    from moska_p2p.net import watch_host

    monkeypatch.setattr(watch_host, "WATCH_SEND_TIMEOUT", 0.2)
    sender, _never_read = trio.testing.lockstep_stream_pair()
    with trio.fail_after(10), pytest.raises(trio.TooSlowError):
        await watch_host._send_frames(FrameStream(sender), [b"\x00" * 1000] * 3)


@pytest.mark.trio
async def test_the_stream_follows_the_game_by_its_news_alone_even_with_slow_sends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the periodic look switched off (WATCH_POLL of an hour) and every chunk slow to
    send, so that moves are made while a chunk is on its way, the spectator still gets the
    whole game: the stream waits on the news that was current before it looked at the table,
    so news that came during a send is never missed."""
    from moska_p2p.net import watch_host

    monkeypatch.setattr(watch_host, "WATCH_POLL", 3600.0)
    original = watch_host._send_frames

    async def slow(fs: FrameStream, frames: list[bytes]) -> None:
        await trio.sleep(0.02)
        await original(fs, frames)

    monkeypatch.setattr(watch_host, "_send_frames", slow)
    host = _node(tmp_path, "host", [])
    joiner = _node(tmp_path, "joiner", [])
    seen = Seen()
    watcher = _watcher(tmp_path, [], seen)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, _config(), 0)
            nursery.start_soon(joiner.join, LOOPBACK, port)
            outcome = await watcher.watch((LOOPBACK, port))
    assert outcome.code == EXIT_OK, outcome.message
    report = verify_transcript(tmp_path / "watched.moska")
    assert report.valid, report.fault
    assert len(seen.moves) == report.moves > 0


@pytest.mark.trio
async def test_a_frame_altered_on_its_way_to_the_spectator_is_named_with_its_signer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The host (or anyone on the path) cannot pass off a changed frame: the spectator's
    observer refuses it and the watch ends naming the frame and whom it claims as signer;
    the game itself goes on (the players never saw the change)."""
    from moska_p2p.net import watch_host

    sent = 0
    original = watch_host._send_frames

    async def tampering(fs: FrameStream, frames: list[bytes]) -> None:
        nonlocal sent
        out = []
        for frame in frames:
            if sent == 12:  # flip a bit of its signature
                frame = frame[:-1] + bytes([frame[-1] ^ 1])
            sent += 1
            out.append(frame)
        await original(fs, out)

    monkeypatch.setattr(watch_host, "_send_frames", tampering)
    host = _node(tmp_path, "host", [])
    joiner = _node(tmp_path, "joiner", [])
    watcher = _watcher(tmp_path, [], Seen())
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, _config(), 0)
            nursery.start_soon(joiner.join, LOOPBACK, port)
            outcome = await watcher.watch((LOOPBACK, port))
    assert outcome.code == EXIT_FAILED
    message = outcome.message
    assert message.startswith("the host's stream does not verify: frame 12 (claiming to be by")
    assert "not signed by it)" in message, message
    assert any(f"{name} (" in outcome.message for name in ("host", "joiner")), outcome.message
    assert host.outcome is not None and host.outcome.code == EXIT_OK


def test_the_watch_vectors_recompute() -> None:
    """protocol/vectors/sessions.json's ``watch`` (scripts/make_vectors.py, PROTOCOL.md §23):
    the spectator's and the host's proofs, the watch id, a ``net/game`` signed over it."""
    import hashlib
    import json

    from moska_p2p.crypto.identity import signing_input
    from moska_p2p.net.watch_proto import watch_transcript
    from moska_p2p.net.wire import GAME, classify
    from moska_p2p.protocol.frames import open_frame

    root = Path(__file__).resolve().parents[2] / "protocol" / "vectors" / "sessions.json"
    data = json.loads(root.read_text())["watch"]
    parts = tuple(
        bytes.fromhex(data[k]) for k in ("table", "watcher", "host", "watcher_nonce", "host_nonce")
    )
    assert Identity.from_seed(bytes.fromhex(data["watcher_seed"])).public_bytes == parts[1]
    wid = watch_id(*parts)
    assert wid.hex() == data["watch_id"]
    for role in (WATCHER, HOST):
        entry = data["proofs"][role.decode()]
        assert check_watch_proof(bytes.fromhex(entry["proof"]), *parts, role)
        other = HOST if role == WATCHER else WATCHER
        assert not check_watch_proof(bytes.fromhex(entry["proof"]), *parts, other)
        digest = hashlib.sha256(signing_input("net/watch-auth", watch_transcript(*parts, role)))
        assert digest.hexdigest() == entry["signing_input_sha256"]
    frame = bytes.fromhex(data["game_frame"])
    message = classify(frame[4:], wid)
    assert message is not None and message.kind == GAME and message.key == parts[2]
    _, payload, _ = open_frame(frame[4:])
    digest = hashlib.sha256(signing_input("net/game", wid + payload)).hexdigest()
    assert digest == data["game_signing_input_sha256"]
    with pytest.raises(FrameError):  # bound to its connection: another id refuses it
        classify(frame[4:], link_id(*parts))


@pytest.mark.trio
async def test_a_spectator_sees_a_game_stopped_by_a_verdict_and_its_record_verifies(
    tmp_path: Path,
) -> None:
    """A player leaves mid-game: the spectator reports the verdict (naming the player that
    left) and its copy of the host's record, which ends with the host's verdict, verifies."""
    host = _node(tmp_path, "host", [], pace=0.05)
    joiner = _node(tmp_path, "joiner", [], pace=0.05)
    echo: list[str] = []
    seen = Seen()
    watcher = _watcher(tmp_path, echo, seen)
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, _config(), 0)
            nursery.start_soon(joiner.join, LOOPBACK, port)

            async def leave_soon() -> None:
                while joiner.session is None or len(joiner.session.moves) < 6:
                    await trio.sleep(0.01)
                joiner.runner.leave("had to go")

            nursery.start_soon(leave_soon)
            outcome = await watcher.watch((LOOPBACK, port))
    assert outcome.code == EXIT_OK, (outcome.message, echo)
    stopped = [line for line in echo if line.startswith("game stopped: ")]
    assert stopped and "joiner" in stopped[0] and "left" in stopped[0], echo
    report = verify_transcript(tmp_path / "watched.moska")
    assert report.valid, report.fault
    assert (
        report.verdict is not None
        and report.verdict == verify_transcript(tmp_path / "host.moska").verdict
    )
