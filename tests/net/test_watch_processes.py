"""Spectators in real processes on 127.0.0.1: ``moska watch INVITE --plain``
watches a host and two bot joiners, directly and through ``moska relay`` with peers that do
not listen; its output shows the moves and the result, and ``moska verify`` accepts the
transcript it wrote. A host with ``--no-spectators`` refuses it in one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from net_harness import Peer, verified

from moska_p2p.crypto.identity import Identity

INVITE_LINE = re.compile(r"invite \(moska join INVITE\): (moska:[a-z2-7]+)")
RELAY_LINE = re.compile(r"relay listening on 127\.0\.0\.1:(\d+)")
MOVE_LINE = re.compile(r"^seat \d \([a-z]+\): \S", re.M)


class Processes:
    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.peers: list[Peer] = []

    def start(self, name: str, *args: str) -> Peer:
        peer = Peer(name, list(args), self.folder)
        self.peers.append(peer)
        return peer

    def identity(self, name: str) -> str:
        path = self.folder / f"{name}.pem"
        Identity.generate().save(path)
        return str(path)

    def host(self, *extra: str) -> str:
        """A three-seat table with a bot host; its invite."""
        args = [
            "host", "--players", "3", "--bot", "greedy", "--bind", "127.0.0.1",
            "--identity", self.identity("p0"), "--transcript", str(self.folder / "p0.moska"),
            "--wait", "60", "--timeout", "30", "-q", "--no-announce", "--pace", "0.01", *extra,
        ]  # fmt: skip
        return self.start("p0", *args).wait_for(INVITE_LINE).group(1)

    def joiners(self, invite: str, *extra: str) -> None:
        for i in (1, 2):
            args = [
                "join", invite, "--bot", "random", "--seed", str(i), "--bind", "127.0.0.1",
                "--identity", self.identity(f"p{i}"), "--transcript",
                str(self.folder / f"p{i}.moska"), "--wait", "60", "-q", "--pace", "0.01",
                *extra,
            ]  # fmt: skip
            self.start(f"p{i}", *args)

    def watch(self, invite: str) -> Peer:
        transcript = self.folder / "watched.moska"
        return self.start("w", "watch", invite, "--plain", "--transcript", str(transcript))

    def output(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.out}\n{p.err}" for p in self.peers)

    def kill_all(self) -> None:
        for peer in self.peers:
            peer.kill()


@pytest.fixture
def processes(tmp_path: Path):  # type: ignore[no-untyped-def]
    made = Processes(tmp_path)
    try:
        yield made
    finally:
        made.kill_all()


def _check_watched(processes: Processes, watcher: Peer) -> None:
    codes = [peer.finish(120) for peer in processes.peers]
    assert codes == [0] * len(codes), processes.output()
    out = watcher.out
    assert "the game starts:" in out and "seats: seat 0" in out, out
    assert len(MOVE_LINE.findall(out)) >= 10, out
    assert re.search(r"^result: ", out, re.M), out
    assert "transcript verified:" in out and "watched 1 game to the end" in out, out
    # the spectator says where its record of the game went, so a person can check it later
    assert f"the game's transcript: {processes.folder / 'watched.moska'}" in out, out
    assert "valid" in verified(processes.folder / "watched.moska")
    host = processes.peers[0].out
    assert "spectator spectator" in host and "is watching from" in host, host


def test_a_spectator_watches_a_game_directly_and_its_transcript_verifies(
    processes: Processes,
) -> None:
    invite = processes.host()
    watcher = processes.watch(invite)
    watcher.wait_for("waiting for the table to fill", 30)
    processes.joiners(invite)
    _check_watched(processes, watcher)


def test_a_spectator_watches_through_a_relay_peers_that_do_not_listen(
    processes: Processes,
) -> None:
    relay = processes.start("relay", "relay", "--bind", "127.0.0.1", "--port", "0")
    port = relay.wait_for(RELAY_LINE).group(1)
    invite = processes.host("--relay", f"127.0.0.1:{port}", "--no-listen")
    processes.peers.remove(relay)  # it serves until killed: not a peer that finishes
    watcher = processes.watch(invite)
    watcher.wait_for("waiting for the table to fill", 30)
    processes.joiners(invite, "--no-listen")
    try:
        _check_watched(processes, watcher)
    finally:
        relay.kill()
    assert "is watching from the relay 127.0.0.1:" in processes.peers[0].out


def test_a_host_with_no_spectators_refuses_one_in_one_line(processes: Processes) -> None:
    invite = processes.host("--no-spectators")
    watcher = processes.watch(invite)
    assert watcher.finish(60) == 1, watcher.out + watcher.err
    lines = watcher.err.strip().splitlines()
    assert len(lines) == 1, watcher.err
    assert lines[0].startswith("error: could not watch the table at 127.0.0.1:"), lines
    assert "refused: this table takes no spectators" in lines[0], lines
    processes.peers.remove(watcher)
