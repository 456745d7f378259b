"""Rejoining through a relay: peers that cannot accept connections play a
session of 3 games through ``moska relay``; one of them is killed -9 (in game 2, or between
games 1 and 2) and started again with the very same command. It reaches the table the way it
did (the relay, its room, no port of its own), catches up, is counted back into the session,
and every peer's folder verifies alone and all together.

Real processes on 127.0.0.1 (and, where this machine allows it, each peer in a network
namespace of its own that no other peer can reach); every wait is bounded and a fixture kills
whatever still runs at the end.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from net_harness import (
    Hub,
    Peer,
    Table,
    in_game,
    moska_verify,
    namespaces_or_skip,
    own_folder,
)

from moska_p2p.crypto.identity import Identity
from moska_p2p.net.persist import Route, SavedGame, load_saved
from moska_p2p.net.wire import Entry
from moska_p2p.protocol.config import TableConfig, lobby_id
from moska_p2p.protocol.frames import open_frame, pack
from moska_p2p.protocol.messages import WAIT
from moska_p2p.protocol.transcript import read_transcript

RELAY_LINE = re.compile(r"relay listening on [\d.]+:(\d+)")
INVITE_LINE = re.compile(r"invite \(moska join INVITE\): (moska:[a-z2-7]+)")
PLAYERS, GAMES = 4, 3
ALL_SIGNED = f"session over (all {GAMES} games played); signed by {PLAYERS} of {PLAYERS} players"


# -- the saved game's route -------------------------------------------------------------------

ALICE = Identity.from_seed(bytes([1]) * 32)
BOB = Identity.from_seed(bytes([2]) * 32)
CONFIG = TableConfig("moska", 2, bytes(32), {}, 5.0, games=3)
ROSTER = (
    Entry.sign(ALICE, lobby_id(CONFIG), "alice", "", 7000),
    Entry.sign(BOB, lobby_id(CONFIG), "bob", "@relay", 7100),
)


def test_a_saved_game_keeps_how_the_peer_reached_the_table(tmp_path: Path) -> None:
    """A peer that did not listen and met the others at a relay saves that, so that its
    restart registers in the same room instead of listening."""
    route = Route(listen=False, relay=("10.0.0.9", 7100), room=bytes(range(16)))
    saved = SavedGame(tmp_path / "bob-g2.moska", bytes(32), CONFIG, ROSTER, 1, "bob",
                      ("@relay", 1), route)  # fmt: skip
    saved.save()
    assert load_saved(saved.state_path) == saved
    host = Route(listen=True, relay=("127.0.0.1", 7200), room=bytes(16), relay_port=7200)
    hosting = SavedGame(tmp_path / "alice.moska", bytes(32), CONFIG, ROSTER, 0, "alice", None,
                        host)  # fmt: skip
    hosting.save()
    assert load_saved(hosting.state_path).route == host


def test_a_saved_game_of_the_older_format_resumes_on_the_lan(tmp_path: Path) -> None:
    """A ``.resume`` file written before the route was saved has none of its fields: it is a
    peer that listened and had no relay (all such files were)."""
    path = tmp_path / "bob.moska.resume"
    old = {
        "moska-resume": 1,
        "transcript": str(tmp_path / "bob.moska"),
        "secret": bytes(32),
        "config": CONFIG.to_wire(),
        "roster": [e.to_wire() for e in ROSTER],
        "me": 1,
        "name": "bob",
        "host_address": ["10.0.0.2", 7000],
    }
    path.write_bytes(pack(old))
    saved = load_saved(path)
    assert saved.route == Route(listen=True, relay=None, room=None, relay_port=None)
    assert saved.host_address == ("10.0.0.2", 7000)


@pytest.mark.parametrize(
    ("field", "value"),
    [("listen", 1), ("relay", ["host"]), ("relay", ["h", 70000]), ("room", "r"),
     ("relay_port", 0)],
)  # fmt: skip
def test_a_saved_route_that_makes_no_sense_is_refused(
    tmp_path: Path, field: str, value: object
) -> None:
    from moska_p2p.net.persist import SaveError

    saved = SavedGame(tmp_path / "bob.moska", bytes(32), CONFIG, ROSTER, 1, "bob", None)
    saved.save()
    from moska_p2p.protocol.frames import unpack

    data = unpack(saved.state_path.read_bytes())
    data[field] = value
    saved.state_path.write_bytes(pack(data))
    with pytest.raises(SaveError):
        load_saved(saved.state_path)


# -- real processes ---------------------------------------------------------------------------


class RelaySession:
    """A ``moska relay`` and a host and three joiners from its invite, in a session of 3
    games; each peer either without a port (``--no-listen``) or in a namespace of its own."""

    def __init__(self, folder: Path, nets: Hub | None = None, timeout: float = 15) -> None:
        self.folder = folder
        self.nets = nets
        self.timeout = timeout
        self.host_relays = False  # the host runs the relay (--relay-for-others), and listens
        self.games = GAMES
        self.pace = 0.01  # seconds each bot waits before a move
        self.peers: list[Peer] = []
        self.relay: Peer | None = None
        self.identities = [folder / f"p{i}.pem" for i in range(PLAYERS)]
        for path in self.identities:
            Identity.generate().save(path)

    def _where(self, index: int) -> list[str]:
        """How peer ``index`` is placed: no port at all, or its own namespace's address."""
        if self.nets is None:
            return ["--no-listen", "--bind", "127.0.0.1"]
        return ["--bind", self.nets.address(index)]

    def _prefix(self, index: int) -> list[str] | None:
        return None if self.nets is None else self.nets.prefix(index)

    def start(self) -> None:
        common = ["--pace", str(self.pace), "-q", "-v", "--wait", "60"]
        host = [
            "host", "--preset", "durak", "--players", str(PLAYERS), "--games", str(self.games),
            "--timeout", str(self.timeout), "--no-announce", "--bot", "greedy", *self._files(0),
            *common,
        ]  # fmt: skip
        if self.host_relays:
            host += ["--relay-for-others", "--bind", "127.0.0.1"]
        else:
            relay_bind = "127.0.0.1" if self.nets is None else "0.0.0.0"
            prefix = None if self.nets is None else self.nets.prefix(-1)
            self.relay = Peer("relay", ["relay", "--bind", relay_bind, "--port", "0", "-v"],
                              self.folder, prefix=prefix)  # fmt: skip
            port = int(self.relay.wait_for(RELAY_LINE).group(1))
            relay_host = "127.0.0.1" if self.nets is None else Hub.RELAY
            host += ["--relay", f"{relay_host}:{port}", *self._where(0)]
        self.peers.append(Peer("p0", host, self.folder, prefix=self._prefix(0)))
        invite = self.peers[0].wait_for(INVITE_LINE).group(1)
        for i in range(1, PLAYERS):
            join = ["join", invite, "--bot", "random", "--seed", str(i), *self._files(i),
                    *self._where(i), *common]  # fmt: skip
            self.peers.append(Peer(f"p{i}", join, self.folder, prefix=self._prefix(i)))

    def _files(self, index: int) -> list[str]:
        return ["--identity", str(self.identities[index]),
                "--transcript", str(self.folder / f"p{index}.moska")]  # fmt: skip

    def game_file(self, index: int, game: int) -> Path:
        return self.folder / f"p{index}-g{game}.moska"

    def finish(self, timeout: float) -> list[int]:
        deadline = time.monotonic() + timeout
        return [p.finish(max(0.1, deadline - time.monotonic())) for p in self.peers]

    def kill_all(self) -> None:
        for peer in [*self.peers, *([self.relay] if self.relay else [])]:
            peer.kill(signal.SIGCONT)
            peer.kill()

    def output(self) -> str:
        everyone = [*self.peers, *([self.relay] if self.relay else [])]
        return "\n".join(f"--- {p.name}\n{p.out}\n{p.err}" for p in everyone)

    def check_records(self) -> None:
        _check_session(self.peers, self.folder, self.output())


def _check_session(peers: list[Peer], folder: Path, output: str) -> None:
    """Every peer played the 3 games and signed the session with all 4; each one's folder
    verifies alone, and all together."""
    for peer in peers:
        assert ALL_SIGNED in peer.out, output
    folders = [own_folder(folder, index) for index in range(len(peers))]
    for mine in folders:
        files = list(mine.iterdir())
        assert len(files) == GAMES + 1, files  # the games and the session file
        checked = moska_verify(mine)
        assert checked.returncode == 0, checked.stdout + checked.stderr
    together = moska_verify(*folders)
    assert together.returncode == 0, together.stdout + together.stderr
    assert f"result signed by {PLAYERS} of {PLAYERS} players" in together.stdout


@pytest.fixture
def relay_session(tmp_path: Path) -> Iterator[RelaySession]:
    made = RelaySession(tmp_path)
    try:
        yield made
    finally:
        made.kill_all()


def _restarted_in_game_2(table: RelaySession, seat: int) -> None:
    victim = table.peers[seat]
    in_game(victim, table.game_file(seat, 2), 2, size=56_000, timeout=90)
    assert "game 3 of" not in victim.out, "the game ended before the test could act"
    victim.kill()
    time.sleep(0.3)
    victim.start()
    codes = table.finish(180)
    assert codes == [0] * PLAYERS, table.output()
    resumed = rf"resumed the game saved in \S*p{seat}-g2\.moska"
    assert re.search(resumed, victim.out), table.output()
    if table.nets is None and not table.host_relays:
        assert "listening on" not in victim.out, victim.out
    table.check_records()


@pytest.mark.parametrize(
    ("seat", "host_relays"),
    [(2, False), (0, False), (0, True)],
    ids=["joiner", "host", "host-that-relays"],
)
def test_a_peer_without_a_port_killed_in_game_2_comes_back_through_the_relay(
    relay_session: RelaySession, seat: int, host_relays: bool
) -> None:
    """The whole of it: four peers that cannot accept connections play a 3-game
    session through a relay; one killed -9 in game 2 and started again with the very same
    command registers at the relay again (its old registration replaced), is redialed
    through it, finishes game 2 and plays game 3; all four sign the session.

    ``host-that-relays``: the host runs the relay (``--relay-for-others``) for three joiners
    without a port; killed, it takes every link down with it. Started again, it runs the
    relay on the same port, the joiners register there again, and the session goes on."""
    relay_session.host_relays = host_relays
    relay_session.start()
    _restarted_in_game_2(relay_session, seat)
    if host_relays:
        assert "relaying for the others on 127.0.0.1:" in relay_session.peers[0].out


@pytest.mark.parametrize(
    ("seat", "others"),
    [(3, "wait"), (3, "went-on"), (0, "went-on")],
    ids=["joiner-others-wait", "joiner-others-went-on", "host-others-went-on"],
)
def test_a_peer_killed_between_games_1_and_2_comes_back_to_the_vote(
    relay_session: RelaySession, seat: int, others: str
) -> None:
    """A peer killed after game 1 ended and before it began game 2 is started again with
    the same command: it picks up game 1's saved state (finished: kept until the next game
    starts), votes on game 2 again, plays games 2 and 3 and signs the session with all four.

    ``wait``: the others are held (SIGSTOP) before they can vote, so game 2 cannot start
    without the victim. ``went-on``: the victim is held once it has voted, the others start
    game 2 without it, then it is killed: back, it takes their yes to game 2 from the game
    they play, starts game 2 and asks them for the frames of it that it missed."""
    table = relay_session
    table.timeout = 40  # a quarter of it: what a peer stuck at a game's start waits to ask
    table.start()
    _killed_between_games_1_and_2(table.peers, seat, table.folder, others, table.output)


def _killed_between_games_1_and_2(
    peers: list[Peer], seat: int, folder: Path, others: str, output: Callable[[], str]
) -> None:
    victim = peers[seat]
    rest = [p for p in peers if p is not victim]
    victim.wait_for(re.compile(r"^result: ", re.M), 120)
    for peer in rest:  # none of them can vote now: game 2 cannot start without them
        peer.kill(signal.SIGSTOP)
    try:
        victim.wait_for(rf"after game 1 of {GAMES}", 30)
        time.sleep(0.5)  # its vote is cast, and it waits for theirs
        if others == "wait":
            victim.kill()
        else:
            victim.kill(signal.SIGSTOP)
    finally:
        for peer in rest:
            peer.kill(signal.SIGCONT)
    if others == "went-on":
        for peer in rest:
            peer.wait_for(r"game 2 of 3: seat \d deals", 60)
        victim.kill()
    assert "game 2 of" not in victim.out, "the victim started game 2 before the test stopped it"
    assert (folder / f"p{seat}-g1.moska.resume").exists()
    assert not (folder / f"p{seat}-g2.moska.resume").exists()
    victim.start()
    deadline = time.monotonic() + 180
    codes = [p.finish(max(0.1, deadline - time.monotonic())) for p in peers]
    assert codes == [0] * PLAYERS, output()
    assert re.search(rf"resumed the game saved in \S*p{seat}-g1\.moska", victim.out), victim.out
    assert "game 2 of 3" in victim.out and "game 3 of 3" in victim.out, victim.out
    _check_session(peers, folder, output())
    assert not list(folder.glob("*.resume")), "a finished session leaves no saved state"
    if others == "went-on":  # it asked for what it missed as game 2 began, not 10 s later
        assert _waits(folder / f"p{seat}-g2.moska") == 0, output()


def test_a_peer_killed_between_games_on_the_lan_comes_back_too(
    make_table: Callable[..., Table],
) -> None:
    """The same on a LAN, without a relay: the joiner listens again on its port, the others
    redial it there."""
    table = make_table("durak", PLAYERS, host_args=["--games", str(GAMES)], timeout=40,
                       pace=0.01)  # fmt: skip
    _killed_between_games_1_and_2(table.peers, 2, table.folder, "went-on", table.output)


def test_a_joiner_back_without_its_saved_game_is_refused_then_resumes_with_it(
    relay_session: RelaySession,
) -> None:
    """``join INVITE`` again with the same key but not its saved game (another
    ``--transcript``) would play the seat with a fresh secret, so sign other frames under
    numbers it has used: the host refuses it, saying why, before it is seated. The very same
    command then resumes the seat and the session ends as if nothing had happened."""
    table = relay_session
    table.timeout = 30  # two restarts within it on a loaded machine
    table.start()
    seat, victim = 2, table.peers[2]
    victim.wait_for(re.compile(r"^seats: ", re.M), 90)
    path = table.game_file(seat, 1)
    deadline = time.monotonic() + 30
    while (not path.exists() or path.stat().st_size < 56_000) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "result:" not in victim.out, "the game ended before the test could act"
    victim.kill()
    command = victim.args
    mine = str(table.folder / f"p{seat}.moska")
    elsewhere = str(table.folder / "elsewhere" / f"p{seat}.moska")
    victim.args = [elsewhere if arg == mine else arg for arg in command]
    victim.start()
    assert victim.finish(60) == 1, victim.out + victim.err
    assert "this seat has played already" in victim.out + victim.err, victim.out + victim.err
    victim.args = command
    victim.start()
    codes = table.finish(180)
    assert codes == [0] * PLAYERS, table.output()
    assert re.search(rf"resumed the game saved in \S*p{seat}-g1\.moska", victim.out), victim.out
    table.check_records()


def _waits(transcript: Path) -> int:
    """The ``wait`` messages in a transcript: a peer stuck for a quarter of the timeout
    asks with one for frames it lacks."""
    _, _, _, frames = read_transcript(transcript)
    return sum(open_frame(frame[4:])[0] == WAIT for frame in frames)


# -- each peer in a network namespace of its own ----------------------------------------------


@pytest.fixture
def hub(tmp_path: Path) -> Iterator[Hub]:
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    with namespaces_or_skip(lambda: Hub(PLAYERS)) as made:
        yield made


def test_peers_that_cannot_reach_one_another_resume_through_the_relay(
    tmp_path: Path, hub: Hub
) -> None:
    """Each peer listens on an address of its own namespace that no other peer can reach
    (checked first): every link goes through the relay after a direct try that fails. A
    joiner killed -9 in game 2 and started again tries the host's direct address, falls back
    to the relay, and the session ends as if nothing had happened."""
    table = RelaySession(tmp_path, hub)
    try:
        table.start()
        assert table.relay is not None
        relay_port = int(table.relay.wait_for(RELAY_LINE).group(1))
        host_port = int(table.peers[0].wait_for(r"join with: moska join [\d.]+:(\d+)").group(1))
        assert hub.reaches(1, Hub.RELAY, relay_port)
        assert not hub.reaches(1, hub.address(0), host_port), "the peers can reach one another"
        _restarted_in_game_2(table, 2)
        assert re.search(r"does not answer .*: through the relay", table.peers[2].err)
    finally:
        table.kill_all()
