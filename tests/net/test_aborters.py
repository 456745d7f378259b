"""The table-level record of aborts before the deal (PROTOCOL.md section 9).

An abort before the deal cannot be made a forfeit (there is no seat yet), and the last peer to
reveal its seat secret can always abort after seeing the seating: so every honest peer records
the aborter in its known-peers file, and a host refuses to seat a key its file names so.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import trio

from moska_p2p.bots.loader import load_bot
from moska_p2p.crypto.identity import Identity, fingerprint_of
from moska_p2p.net.known import KnownPeers
from moska_p2p.net.node import Node, NodeOptions
from moska_p2p.net.state import EXIT_FAILED
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig
from moska_p2p.table.networked import BotAtTable

LOOPBACK = "127.0.0.1"
CONFIG = TableConfig("moska", 2, bytes(32), {}, 10.0)


def _options(tmp_path: Path, name: str, echo: list[str], **more: Any) -> NodeOptions:
    return NodeOptions(
        identity=Identity.generate(),
        player=BotAtTable(load_bot("random", seed=1)),
        transcript=tmp_path / f"{name}.moska",
        name=name,
        bind=LOOPBACK,
        connect_timeout=3.0,
        lobby_wait=30.0,
        echo=echo.append,
        **more,
    )


def test_an_abort_is_recorded_once_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "moska-p2p" / "known_peers"
    aborter, other = Identity.generate().public_bytes, Identity.generate().public_bytes
    known = KnownPeers.load(path)
    assert known.refusal_of_aborter(aborter) == ""
    assert known.remember_abort(aborter, v.TIMEOUT, "did not answer\nwithin 10 s")
    assert not known.remember_abort(aborter, v.LEFT, "again")  # one line per aborter
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    lines = path.read_text().splitlines()
    assert lines[0].startswith("#") and len(lines) == 2
    assert lines[1].startswith(f"aborted {aborter.hex()} timeout  # {fingerprint_of(aborter)}")
    again = KnownPeers.load(path)
    assert again.aborters == {aborter: v.TIMEOUT}
    assert fingerprint_of(aborter) in again.refusal_of_aborter(aborter)
    assert "--allow-aborters" in again.refusal_of_aborter(aborter)
    assert again.refusal_of_aborter(other) == ""
    # remembering names keeps the abort line (and the other way round)
    again.remember(other, [("bob", other)])
    assert KnownPeers.load(path).aborters == {aborter: v.TIMEOUT}
    assert KnownPeers.load(path).known(other, "bob") == other


def test_a_malformed_abort_line_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "known_peers"
    path.write_text("aborted nothex timeout\naborted 00 timeout\naborted\n")
    path.chmod(0o600)
    assert KnownPeers.load(path).aborters == {}


def test_a_stop_before_the_deal_records_its_culprits_and_a_later_one_does_not(
    tmp_path: Path,
) -> None:
    known = tmp_path / "known_peers"
    echo: list[str] = []
    node = Node(_options(tmp_path, "me", echo, known_peers=known))
    aborter, seated = Identity.generate().public_bytes, Identity.generate().public_bytes
    node.runner._record_aborters(v.Verdict(v.TIMEOUT, (-1,), (aborter,), "did not answer"))
    forfeit = v.Verdict(v.TIMEOUT, (1,), (seated,), "did not answer")
    node.runner._record_aborters(forfeit)
    node.runner._record_aborters(v.Verdict(v.LEFT, (-1,), (node.me,), "I left"))  # never itself
    assert KnownPeers.load(known).aborters == {aborter: v.TIMEOUT}
    assert any("ended the table before the deal" in line for line in echo)


def test_a_silence_before_the_deal_over_a_relay_is_recorded_as_such(tmp_path: Path) -> None:
    """The verdict says the silent peer was reached through a relay, which
    may have held its frames back (PROTOCOL.md §23): the record says so too, and a host that
    refuses the key says why. It is kept all the same: not listening must not make an abort
    free."""
    known = tmp_path / "known_peers"
    node = Node(_options(tmp_path, "me", [], known_peers=known))
    aborter, other = Identity.generate().public_bytes, Identity.generate().public_bytes
    verdict = v.Verdict(v.TIMEOUT, (-1, -1), (aborter, other), "did not answer", relayed=(aborter,))
    node.runner._record_aborters(verdict)
    record = KnownPeers.load(known)
    assert record.aborters == {aborter: "timeout-via-relay", other: v.TIMEOUT}
    assert "before the deal (timeout-via-relay)" in record.refusal_of_aborter(aborter)


@pytest.mark.trio
async def test_the_host_refuses_a_recorded_aborter_unless_allowed(tmp_path: Path) -> None:
    known = tmp_path / "known_peers"
    host_echo: list[str] = []
    host = Node(_options(tmp_path, "alice", host_echo, known_peers=known))
    aborter = Node(_options(tmp_path, "mallory", []))
    KnownPeers.load(known).remember_abort(aborter.me, v.TIMEOUT, "withheld its seat secret")
    with trio.fail_after(15):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(host.host, CONFIG, 0)
            outcome = await aborter.join(LOOPBACK, port)
            nursery.cancel_scope.cancel()
    assert outcome.code == EXIT_FAILED
    assert "ended one of its tables before the deal (timeout)" in outcome.message
    assert any("refused 'mallory'" in line for line in host_echo)

    lenient = Node(_options(tmp_path, "alice2", [], known_peers=known, allow_aborters=True))
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            port = await nursery.start(lenient.host, CONFIG, 0)
            outcome = await Node(aborter.o).join(LOOPBACK, port)
            nursery.cancel_scope.cancel()
    assert "before the deal" not in outcome.message
