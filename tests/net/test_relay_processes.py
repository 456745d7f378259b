"""Peers through a relay, in real processes on 127.0.0.1: peers
that do not listen at all play a whole game, and a session of games, through ``moska relay``;
a host relays for the others; invites on the command line; every transcript verifies with
``moska verify``."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from net_harness import ROOT, Peer, assert_abandoned, verified

from moska_p2p.crypto.identity import Identity, fingerprint_of
from moska_p2p.net.invite import Invite, parse_invite
from moska_p2p.protocol.transcript import verify_transcript

RELAY_LINE = re.compile(r"relay listening on 127\.0\.0\.1:(\d+)")
INVITE_LINE = re.compile(r"invite \(moska join INVITE\): (moska:[a-z2-7]+)")
RELAYING_LINE = re.compile(r"relaying for the others on 127\.0\.0\.1:(\d+)")


class Script(Peer):
    """``tests/net/dropping_relay.py`` as a process, watched like a peer."""

    script = "dropping_relay.py"

    def start(self) -> None:
        self.runs += 1
        script = Path(__file__).with_name(self.script)
        with open(self.out_path, "wb") as out, open(self.err_path, "wb") as err:
            self.popen = subprocess.Popen(
                [sys.executable, str(script), *self.args], cwd=ROOT, stdout=out, stderr=err
            )


class RelayTable:
    """A relay process (maybe none), a host and joiners started from its invite."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.peers: list[Peer] = []
        self.relay: Peer | None = None
        self.transcripts: list[Path] = []

    def start_relay(self) -> int:
        args = ["relay", "--bind", "127.0.0.1", "--port", "0", "-v"]
        self.relay = Peer("relay", args, self.folder)
        return int(self.relay.wait_for(RELAY_LINE).group(1))

    def _identity(self, index: int) -> Path:
        path = self.folder / f"p{index}.pem"
        Identity.generate().save(path)
        return path

    def host(self, players: int, *extra: str) -> str:
        """Start the host; its invite."""
        transcript = self.folder / "p0.moska"
        self.transcripts.append(transcript)
        args = [
            "host", "--players", str(players), "--bot", "greedy", "--bind", "127.0.0.1",
            "--identity", str(self._identity(0)), "--transcript", str(transcript),
            "--wait", "60", "--timeout", "30", "-q", "-v", "--no-announce", *extra,
        ]  # fmt: skip
        self.peers.append(Peer("p0", args, self.folder))
        return self.peers[0].wait_for(INVITE_LINE).group(1)

    def join(self, invite: str, *extra: str) -> Peer:
        index = len(self.peers)
        transcript = self.folder / f"p{index}.moska"
        self.transcripts.append(transcript)
        args = [
            "join", invite, "--bot", "random", "--seed", str(index), "--bind", "127.0.0.1",
            "--identity", str(self._identity(index)), "--transcript", str(transcript),
            "--wait", "60", "--timeout", "10", "-q", "-v", *extra,
        ]  # fmt: skip
        peer = Peer(f"p{index}", args, self.folder)
        self.peers.append(peer)
        return peer

    def finish(self, timeout: float) -> list[int]:
        return [peer.finish(timeout) for peer in self.peers]

    def kill_all(self) -> None:
        for peer in [*self.peers, *([self.relay] if self.relay else [])]:
            peer.kill()

    def output(self) -> str:
        everyone = [*self.peers, *([self.relay] if self.relay else [])]
        return "\n".join(f"--- {p.name}\n{p.out}\n{p.err}" for p in everyone)


@pytest.fixture
def relay_table(tmp_path: Path):  # type: ignore[no-untyped-def]
    table = RelayTable(tmp_path)
    try:
        yield table
    finally:
        table.kill_all()


def _games(transcript: Path) -> list[Path]:
    """A peer's game transcripts: the file itself, or NAME-gN.moska of a session."""
    session = sorted(transcript.parent.glob(f"{transcript.stem}-g*.moska"))
    return session or [transcript]


def test_peers_that_do_not_listen_play_a_session_through_a_relay(
    relay_table: RelayTable,
) -> None:
    """Four peers, none with a port of its own, play a session of 3 games through ``moska
    relay``: every link is a virtual one, every transcript verifies."""
    port = relay_table.start_relay()
    invite = relay_table.host(4, "--no-listen", "--relay", f"127.0.0.1:{port}", "--games", "3")
    for _ in range(3):
        relay_table.join(invite, "--no-listen")
    codes = relay_table.finish(240)
    assert codes == [0] * 4, relay_table.output()
    for peer in relay_table.peers:
        assert "listening on" not in peer.out
        assert "through the relay" in peer.out or peer.name == "p0"
    finals = []
    for transcript in relay_table.transcripts:
        games = _games(transcript)
        assert len(games) == 3, games
        for game in games:
            report = verify_transcript(game)
            assert report.valid, report.fault
            verified(game)
        finals.append([verify_transcript(g).final_state_hash for g in games])
    assert all(f == finals[0] for f in finals)


def test_a_host_relays_for_the_others_and_a_listening_joiner_links_directly(
    relay_table: RelayTable,
) -> None:
    """``host --relay-for-others``: its invite carries its address and its relay; one joiner
    listens (its links are direct), one does not (its links go through the host's relay)."""
    invite = relay_table.host(3, "--relay-for-others")
    assert RELAYING_LINE.search(relay_table.peers[0].out)
    relay_table.join(invite)
    relay_table.join(invite, "--no-listen")
    codes = relay_table.finish(120)
    assert codes == [0] * 3, relay_table.output()
    finals = set()
    for transcript in relay_table.transcripts:
        report = verify_transcript(transcript)
        assert report.valid, report.fault
        finals.add(report.final_state_hash)
        verified(transcript)
    assert len(finals) == 1


def test_an_invite_with_only_a_direct_address_needs_nothing_else(
    relay_table: RelayTable,
) -> None:
    invite = relay_table.host(2)
    joiner = relay_table.join(invite)
    assert relay_table.finish(90) == [0, 0], relay_table.output()
    assert "table at 127.0.0.1:" in joiner.out
    for transcript in relay_table.transcripts:
        verified(transcript)


GOOD = str(Invite(Identity.generate().public_bytes, bytes(16), (("127.0.0.1", 7000),)))
TYPO = GOOD[:30] + ("a" if GOOD[30] != "a" else "b") + GOOD[31:]


@pytest.mark.parametrize(
    ("invite", "names"),
    [
        (TYPO, "checksum"),
        (GOOD[:28] + "0" + GOOD[29:], "'0' at position 23"),
        ("moska:", "empty"),
        ("mosca:" + GOOD[6:], "HOST:PORT"),  # not taken for an invite at all
    ],
)
def test_a_malformed_invite_is_refused_in_one_line(invite: str, names: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "moska_p2p", "join", invite, "--bot", "random"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert names in lines[0]
    assert "Traceback" not in done.stderr


def test_a_joiner_without_a_port_needs_a_relay(relay_table: RelayTable) -> None:
    invite = relay_table.host(2)
    joiner = relay_table.join(invite, "--no-listen")
    assert joiner.finish(30) == 1
    assert "this invite names no relay" in joiner.err + joiner.out


def _dead_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_direct_address_that_does_not_answer_falls_back_to_the_relay(
    relay_table: RelayTable,
) -> None:
    """The invite's direct address is one nothing answers at (a host behind a NAT): the
    joiner reaches the host through the relay, and the game is played."""
    port = relay_table.start_relay()
    invite = parse_invite(relay_table.host(2, "--relay", f"127.0.0.1:{port}"))
    assert invite.direct and invite.relay == ("127.0.0.1", port)
    unreachable = replace(invite, direct=(("127.0.0.1", _dead_port()),))
    joiner = relay_table.join(str(unreachable), "--no-listen")
    assert relay_table.finish(120) == [0, 0], relay_table.output()
    assert "through the relay" in joiner.err, joiner.err
    finals = {verify_transcript(t).final_state_hash for t in relay_table.transcripts}
    assert len(finals) == 1


def test_a_relay_that_drops_a_peer_makes_it_lose_by_abandonment_on_a_signed_relayed_path(
    relay_table: RelayTable,
) -> None:
    """A relay drops everything an honest joiner sends once the game is under way. Nobody at
    the table hears it, which is what quitting looks like (PROTOCOL.md §15.4, §23: a relay
    that holds frames back looks the same as a silent peer): the two others both sign that
    they lost it and stop with ``abandoned``, it is the loser, and each signs in its verdict
    that its link to it went through a relay, for anyone reading the record.

    The relay drops the victim's frames link by link, so one survivor may hold a frame the
    other never got; the other then waits for the victim while the first waits for it. The
    stuck survivor's ``sync`` (and its ``wait``) bring the frame from the first before anyone
    is named, so neither survivor names the other."""
    victim = Identity.generate()
    victim_file = relay_table.folder / "victim.pem"
    victim.save(victim_file)
    args = [victim.public_bytes.hex(), "20000"]
    relay_table.relay = Script("relay", args, relay_table.folder)
    port = int(relay_table.relay.wait_for(RELAY_LINE).group(1))
    relay = f"127.0.0.1:{port}"
    invite = relay_table.host(3, "--no-listen", "--relay", relay, "--timeout", "4")
    relay_table.join(invite, "--no-listen")
    relay_table.join(invite, "--no-listen", "--identity", str(victim_file))
    codes = relay_table.finish(120)
    assert codes[:2] == [1, 1], relay_table.output()
    reports = [verify_transcript(transcript) for transcript in relay_table.transcripts[:2]]
    witnesses = [fingerprint_of(report.owner_key) for report in reports]
    for peer in relay_table.peers[:2]:
        stopped = re.search(r"^game stopped: abandoned: (.*)", peer.out, re.M)
        assert stopped, peer.out
        named = re.findall(r"[0-9A-F]{4}(?:-[0-9A-F]{4}){7}", stopped.group(1).split(":")[0])
        assert named == [victim.fingerprint], relay_table.output()
    for report in reports:
        assert_abandoned(report, victim.fingerprint, witnesses)
        assert victim.public_bytes in report.relayed  # signed: the path was relayed


class ChaosScript(Script):
    """``tests/net/chaos_relay.py`` as a process."""

    script = "chaos_relay.py"


FAULT_LINE = re.compile(r"^fault: (\w+) ", re.M)


@pytest.mark.parametrize("seed", [1, 2])
def test_a_relay_that_drops_delays_reorders_and_duplicates_bytes_convicts_nobody(
    relay_table: RelayTable, seed: int
) -> None:
    """Item 6: three peers that do not listen play through a relay that drops, delays,
    reorders and duplicates chunks of their links' byte streams (seeded, at most 3 faults per
    pair of peers). A chunk cut out or repeated breaks a link's framing: the receiver finds
    bytes that are no signed frame, closes the link, the dialer dials again and ``sync`` brings
    back what was lost; a frame lost whole is asked for again by the stuck peer's periodic
    ``sync``. The game finishes, or ends with verdicts that convict nobody; every transcript
    verifies; no honest peer is named as a cheater."""
    relay_table.relay = ChaosScript("relay", [str(seed), "3", "0.15"], relay_table.folder)
    port = int(relay_table.relay.wait_for(RELAY_LINE).group(1))
    relay = f"127.0.0.1:{port}"
    invite = relay_table.host(
        3, "--no-listen", "--relay", relay, "--timeout", "15", "--preset", "durak"
    )
    relay_table.join(invite, "--no-listen")
    relay_table.join(invite, "--no-listen")
    codes = relay_table.finish(240)
    faults = FAULT_LINE.findall(relay_table.relay.out)
    assert faults, relay_table.output()  # the relay did its worst
    finals = set()
    for code, transcript in zip(codes, relay_table.transcripts, strict=True):
        report = verify_transcript(transcript)
        assert report.valid, (report.fault, relay_table.output())
        assert report.losers == [] or report.verdict is None, relay_table.output()
        assert not (report.verdict and report.conviction), (report.verdict, relay_table.output())
        if report.verdict is None:
            assert code == 0
            finals.add(report.final_state_hash)
        verified(transcript)
    assert len(finals) <= 1
    print(f"seed {seed}: faults {faults}; exit codes {codes}")


def test_a_relay_restarted_mid_game_is_reconnected_and_the_game_goes_on(
    relay_table: RelayTable,
) -> None:
    """The relay dies in the middle of a game and comes back on its port: every peer
    registers again, the later peers redial, the links resync, and the game ends normally."""
    port = _dead_port()
    args = ["relay", "--bind", "127.0.0.1", "--port", str(port), "-v"]
    relay_table.relay = Peer("relay", args, relay_table.folder)
    relay_table.relay.wait_for(RELAY_LINE)
    relay = f"127.0.0.1:{port}"
    invite = relay_table.host(3, "--no-listen", "--relay", relay, "--pace", "0.2")
    relay_table.join(invite, "--no-listen", "--pace", "0.2")
    relay_table.join(invite, "--no-listen", "--pace", "0.2")
    relay_table.peers[0].wait_for(re.compile(r"^seats: ", re.M), timeout=60)
    for peer in relay_table.peers:
        assert "result:" not in peer.out, "the game ended before the relay could die"
    relay_table.relay.kill()
    relay_table.relay.start()  # the same command, the same port
    relay_table.relay.wait_for(RELAY_LINE)
    assert relay_table.finish(120) == [0, 0, 0], relay_table.output()
    for peer in relay_table.peers:
        assert peer.err.count("registered at the relay") >= 2, peer.err  # and after it
    finals = {verify_transcript(t).final_state_hash for t in relay_table.transcripts}
    assert len(finals) == 1


def test_a_relay_that_cannot_listen_says_why_in_one_line() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "moska_p2p", "relay", "--bind", "127.0.0.1", "--port",
             str(port)],
            cwd=ROOT, capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: cannot listen on 127.0.0.1:{port}:")


def test_an_invite_to_a_table_that_is_not_at_the_relay_fails_in_one_line(
    relay_table: RelayTable,
) -> None:
    port = relay_table.start_relay()
    gone = Invite(Identity.generate().public_bytes, bytes(16), (), ("127.0.0.1", port))
    joiner = relay_table.join(str(gone), "--no-listen", "--timeout", "2")
    assert joiner.finish(60) == 1, joiner.out + joiner.err
    assert f"error: could not join the table at the relay 127.0.0.1:{port}: no answer in time" in (
        joiner.err
    ), joiner.err
