"""Sessions of games over the network (RULES M24): ``moska host --games N``
between real processes on 127.0.0.1, a peer gone between games, and a frame of game 1 fed to
a node in game 2 (in one trio run, over real links).

Every wait is bounded; the fixture kills whatever still runs at the end.
"""

from __future__ import annotations

import logging
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import trio
from net_harness import ROOT, Table

from moska_p2p.bots.loader import load_bot
from moska_p2p.cli.results import results_table
from moska_p2p.crypto.identity import Identity
from moska_p2p.net.node import EXIT_OK, Node, NodeOptions
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.tally import Transcript, check_session, file_digest, read_session_file
from moska_p2p.protocol.transcript import read_transcript, verify_transcript
from moska_p2p.table.networked import BotAtTable

TABLE = re.compile(r"^session results: .*?(?=^session over)", re.M | re.S)


def _table_of(text: str) -> str:
    found = TABLE.search(text)
    assert found, text
    return found.group(0)


def _verify(folder: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "moska_p2p", "verify", str(folder)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_three_peers_play_a_session_of_three_games(make_table: Callable[..., Table]) -> None:
    table = make_table("durak", 3, host_args=["--games", "3"])
    codes = table.finish(90)
    assert codes == [0, 0, 0], table.output()
    tables = {_table_of(p.out) for p in table.peers}
    assert len(tables) == 1, tables  # every peer prints the same results table
    (printed,) = tables
    assert "session results: 3 of 3 games" in printed
    # the losses counted are the games' losers, as each game's record has them (a Durak game
    # may end without one: D10's draw, when nobody is left holding cards)
    losers = [verify_transcript(table.folder / f"p0-g{k}.moska").losers for k in (1, 2, 3)]
    counted = sum(int(line.split()[2]) for line in printed.splitlines()[2:])
    assert counted == sum(len(seats) for seats in losers), (printed, losers)
    for peer in table.peers:
        assert len(re.findall(r"^after game \d of 3: ", peer.out, re.M)) == 3, peer.out
        assert "session over (all 3 games played); signed by 3 of 3 players" in peer.out
        assert re.search(r"^game 2 of 3: seat \d deals \(the last loser\)", peer.out, re.M)
    folder = table.folder
    assert len(list(folder.glob("p*-g*.moska"))) == 9
    assert len(list(folder.glob("p*-session.moska"))) == 3
    checked = _verify(folder)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "valid: session " in checked.stdout
    assert "result signed by 3 of 3 players" in checked.stdout
    assert printed.rstrip("\n") in checked.stdout  # verify prints the very same table


def test_a_peer_killed_between_games_ends_the_session_with_the_games_so_far(
    make_table: Callable[..., Table],
) -> None:
    table = make_table("durak", 2, host_args=["--games", "3"], timeout=3)
    host, joiner = table.peers
    joiner.wait_for(r"after game 1 of 3: ", 45)
    joiner.kill()
    code = host.finish(30)
    if "game stopped: timeout" in host.out:
        # The joiner's bot votes "go" the moment game 1 ends, so on a fast machine the kill
        # can land after game 2 began: a peer gone mid-game, named by a timeout. The session
        # still ends for the host with the games so far counted and its result signed. The
        # exit code says which: 0 when game 2 never drew its seats (gone between games, not
        # counted), 1 when a verdict stopped it (README, "Exit codes").
        counted = re.search(r"session results: ([12]) of 3 games", _table_of(host.out))
        assert counted, host.out
        assert code == (0 if counted.group(1) == "1" else 1), (code, table.output())
        named = rf"game stopped: timeout: [^\n]*{table.fingerprints[1]}"  # its name or key
        assert re.search(named, host.out), host.out
        assert "signed by 1 of 2 players" in host.out, host.out
        return
    assert code == 0, table.output()
    printed = _table_of(host.out)
    assert "session results: 1 of 3 games" in printed, host.out
    ended = r"session over \(ended after game 1 of 3\); signed by 1 of 2 players"
    assert re.search(ended, host.out), host.out
    assert re.search(rf"\({table.fingerprints[1]}\).* (did not answer|never started)", host.out,
                     re.S), host.out  # fmt: skip
    # The host's files alone verify: its game 1, and its signed result naming the joiner as
    # gone between games. (The joiner, killed, left a game 2 it never finished: its own file
    # of it does not verify, as it should not.)
    owner, _, results = read_session_file(table.folder / "p0-session.moska")
    assert owner == Identity.load(table.identities[0]).public_bytes and len(results) == 1
    mine = table.folder / "host"
    mine.mkdir()
    for path in table.folder.glob("p0-*.moska"):
        shutil.copy(path, mine / path.name)
    assert not list(mine.glob("p0-g2*")), "a game that never started is set aside"
    checked = _verify(mine)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "(1 left between games)" in checked.stdout
    assert printed.rstrip("\n") in checked.stdout


class _Declines(BotAtTable):
    """A bot seat that plays ``games`` games of a session and then says no."""

    def __init__(self, bot: object, games: int) -> None:
        super().__init__(bot)
        self.games = games
        self.asked: list[str] = []

    def next_game(self, summary: str) -> bool:
        self.asked.append(summary)
        return len(self.asked) < self.games


def test_a_frame_of_game_1_fed_to_a_node_in_game_2_is_refused_and_named(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two nodes in one trio run over real links, a Durak session planned for 3 games: once
    game 2 is under way, every frame the host signed in game 1 is given to the joiner's node
    as if its link had brought it. Each is refused as another game's (the log names it) and
    game 2 ends normally. Then the joiner's player declines the next game: the session ends
    cleanly for both with the 2 games counted, and it verifies."""
    caplog.set_level(logging.INFO, logger="moska_p2p.net")
    ids = [Identity.generate(), Identity.generate()]
    echoes: list[list[str]] = [[], []]

    decliner = _Declines(load_bot("random", seed=1), 2)

    def options(i: int) -> NodeOptions:
        return NodeOptions(
            identity=ids[i],
            player=decliner if i else BotAtTable(load_bot("random", seed=0)),
            transcript=tmp_path / f"n{i}.moska",
            name=f"n{i}",
            bind="127.0.0.1",
            echo=echoes[i].append,
            results=results_table,
        )

    host, joiner = Node(options(0)), Node(options(1))
    config = TableConfig("durak", 2, bytes(range(32)), timeout=10.0, games=3)
    replayed: list[bytes] = []

    async def attack() -> None:
        while joiner.saved is None or joiner.saved.config.game != 2:
            await trio.sleep(0.01)
        session = joiner.session
        assert session is not None
        while len(session.moves) < 4 and not joiner.over.is_set():
            await trio.sleep(0.01)
        _, _, _, frames = read_transcript(tmp_path / "n1-g1.moska")
        for frame in frames:
            if _signer(frame) == ids[0].public_bytes:
                replayed.append(frame)
                joiner.on_frame(frame, ids[0].public_bytes)

    async def main() -> list[int]:
        codes: list[int] = []

        async def run_host(task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
            codes.append((await host.host(config, 0, task_status=task_status)).code)

        async def run_joiner(port: int) -> None:
            codes.append((await joiner.join("127.0.0.1", port)).code)

        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                port = await nursery.start(run_host)
                nursery.start_soon(run_joiner, port)
                nursery.start_soon(attack)
        return codes

    codes = trio.run(main)
    assert codes == [EXIT_OK, EXIT_OK], echoes
    assert len(replayed) > 10
    refused = [r for r in caplog.records if "a frame from another game or table" in r.getMessage()]
    assert len(refused) >= len(replayed), [r.getMessage() for r in caplog.records][-20:]
    paths = sorted(tmp_path.glob("n1-g*.moska"))  # one peer's games, everyone's signatures
    transcripts = [Transcript(verify_transcript(p), file_digest(p), p.name) for p in paths]
    held = [read_session_file(tmp_path / f"n{i}-session.moska")[2] for i in (0, 1)]
    assert [len(h) for h in held] == [2, 2]  # each peer keeps both signed results
    results = held[1]
    check = check_session(transcripts, results)
    assert check.fault is None and check.tally is not None and len(check.tally.games) == 2
    assert [a.split(":")[0] for a in decliner.asked] == ["after game 1 of 3", "after game 2 of 3"]
    for asked in decliner.asked:  # M24: whoever stands korokkeella is named at the question
        assert ("(korokkeella)" in asked) == ("stands korokkeella: by custom" in asked), asked
    assert "you end the session here" in echoes[1]
    assert any(line.endswith("ends the session here") for line in echoes[0]), echoes[0]
    for echoed in echoes:
        assert "session results: 2 of 3 games" in echoed
        assert any(e.startswith("session over (ended after game 2 of 3)") for e in echoed)


class _Screen:
    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.questions: list[tuple[str, bool]] = []

    def ask_yes(self, question: str, default: bool = False) -> bool:
        self.questions.append((question, default))
        return self.answer


@pytest.mark.parametrize("answer", [True, False])
def test_a_person_is_asked_next_game_with_no_as_the_default(answer: bool) -> None:
    from moska_p2p.table.networked import PersonAtTable

    screen = _Screen(answer)
    person = PersonAtTable(screen)  # type: ignore[arg-type]
    assert person.next_game("after game 1 of 3: ann 1 loss; bob 0 losses") is answer
    assert screen.questions == [("after game 1 of 3: ann 1 loss; bob 0 losses\nnext game?", False)]
    assert BotAtTable(load_bot("random")).next_game("after game 1 of 3: ...") is True


def _signer(frame: bytes) -> bytes:
    from moska_p2p.protocol import messages as m
    from moska_p2p.protocol.frames import open_frame

    _, payload, _ = open_frame(frame[4:])
    return m.parse_payload(payload).sender
