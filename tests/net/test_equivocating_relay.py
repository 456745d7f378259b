"""The adversary matrix through real processes, for a few cells: a relaying
TCP proxy that equivocates between two links.

Three ``python -m moska_p2p`` peers with bots on 127.0.0.1. The cheater (``p1``) is an
unmodified client: it joins the host through :class:`EquivocatingProxy`, so its lobby
connection, which becomes its game link to the host (and any redial: the joiner redials the
address it reached the host at), runs through the proxy. The proxy holds the cheater's key
(the test wrote its identity file) and, on that link only, replaces one of the cheater's
messages with another version signed by that key and re-chains its later frames. The host
thus holds version B; the third peer (``p2``, which links to the cheater directly) holds
version A. Nothing here changes package code: links are authenticated by the handshake but
not encrypted, so the game frames after it are the proxy's to rewrite.

What each cell asserts, as the in-memory matrix does (``tests/protocol/adversary_matrix.py``):
both honest peers stop with a verdict that names the cheater and no honest seat (printed and
in the transcript), and each honest transcript verifies with that same verdict.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from equivocating_proxy import EquivocatingProxy, Variant, other_heads, reshuffled
from net_harness import JOIN_LINE, Peer

from moska_p2p.crypto.identity import Identity
from moska_p2p.protocol import messages as m
from moska_p2p.protocol.transcript import verify_transcript

TABLE_TIMEOUT = 6.0  # the table's timeout: it bounds how long a message may wait for its pair
FINISH = 35.0  # seconds for both honest peers to stop, from the start of the cheater
CHEATER = 1
TRIES = 4  # tables at most for a cell that wants the cheater before the last seat
STOPPED = re.compile(r"^game stopped: (\S+): (.*)$", re.M)
JOINED = re.compile(r"^joined; waiting", re.M)


Cell = tuple[Callable[[m.Message], bool], Callable[["Relayed"], Variant]]
"""Which message of the cheater is the target, and how its other version is made."""


class Relayed:
    """A table of three processes whose peer ``p1`` reaches the host through the proxy."""

    def __init__(self, folder: Path, cell: Cell) -> None:
        self.folder = folder
        self.identities = [Identity.generate() for _ in range(3)]
        self.paths = [folder / f"p{i}.pem" for i in range(3)]
        for identity, path in zip(self.identities, self.paths, strict=True):
            identity.save(path)
        self.transcripts = [folder / f"p{i}.moska" for i in range(3)]
        self.cell = cell
        self.peers: list[Peer] = []
        self.proxy: EquivocatingProxy | None = None

    @property
    def cheater(self) -> Identity:
        return self.identities[CHEATER]

    def start(self) -> None:
        """Host, then the proxy in front of it, then the cheater through the proxy, then the
        honest joiner straight to the host (after the cheater joined: roster order fixed)."""
        common = ["--bind", "127.0.0.1", "-q"]
        host = [
            "host", "--preset", "moska", "--players", "3", "--port", "0", "--bot", "greedy",
            "--identity", str(self.paths[0]), "--transcript", str(self.transcripts[0]),
            "--wait", "30", "--timeout", str(TABLE_TIMEOUT), *common,
        ]  # fmt: skip
        self.peers.append(Peer("p0", host, self.folder))
        port = int(self.peers[0].wait_for(JOIN_LINE).group(1))
        is_target, variant = self.cell
        self.proxy = EquivocatingProxy(port, self.cheater, is_target, variant(self))
        proxy_port = self.proxy.start()
        for i, target in ((1, proxy_port), (2, port)):
            args = [
                "join", f"127.0.0.1:{target}", "--bot", "random", "--seed", str(i),
                "--identity", str(self.paths[i]), "--transcript", str(self.transcripts[i]),
                "--wait", "30", "--timeout", "5", *common,
            ]  # fmt: skip
            self.peers.append(Peer(f"p{i}", args, self.folder))
            self.peers[-1].wait_for(JOINED)

    def honest(self) -> list[int]:
        return [i for i in range(3) if i != CHEATER]

    def kill_all(self) -> None:
        for peer in self.peers:
            peer.kill()
        if self.proxy is not None:
            self.proxy.stop()

    def output(self) -> str:
        return "\n".join(f"--- {p.name}\n{p.out}\n{p.err}" for p in self.peers)


@pytest.fixture
def relayed(tmp_path: Path) -> Iterator[Callable[[Cell], Relayed]]:
    """Tables whose every process (and the proxy) is ended at teardown, whatever happened."""
    made: list[Relayed] = []

    def make(cell: Cell) -> Relayed:
        folder = tmp_path / f"table{len(made)}"
        folder.mkdir()
        table = Relayed(folder, cell)
        made.append(table)
        table.start()
        return table

    try:
        yield make
    finally:
        for table in made:
            table.kill_all()


def _first(kind: str) -> Callable[[m.Message], bool]:
    return lambda msg: msg.type == kind


def _same_body(table: Relayed) -> Variant:
    return other_heads


def _new_shuffle(table: Relayed) -> Variant:
    return reshuffled(table.transcripts[CHEATER])


CELLS: dict[str, Cell] = {
    # the same body under other heads (needs no secret of the cheater)
    "seat": (_first(m.SEAT), _same_body),
    "shuffle1-heads": (_first(m.SHUFFLE1), _same_body),
    "move": (_first(m.MOVE), _same_body),
    # another shuffle with its own correct proof: the next seat builds on one of the two
    "shuffle1-reshuffled": (_first(m.SHUFFLE1), _new_shuffle),
}


@pytest.mark.parametrize("stage", list(CELLS))
def test_a_relay_that_equivocates_for_one_peer_convicts_only_that_peer(
    relayed: Callable[[Cell], Relayed], stage: str
) -> None:
    for _ in range(TRIES):
        table = relayed(CELLS[stage])
        started = time.monotonic()
        codes = [table.peers[i].finish(max(0.1, FINISH - (time.monotonic() - started)))
                 for i in table.honest()]  # fmt: skip
        proxy = table.proxy
        assert proxy is not None
        # A second shuffle matters most where an honest seat shuffles after it: the seats are
        # drawn at random, so play another table when the cheater drew the last one.
        if proxy.seat is None or proxy.seat < 2:
            break
        table.kill_all()
    assert not proxy.errors, proxy.errors
    assert proxy.target is not None and proxy.forged, (
        f"the proxy never saw the cheater's {stage}:\n{table.output()}"
    )
    assert codes == [1, 1], table.output()
    cheater = table.cheater
    honest_prints = [table.identities[i].fingerprint for i in table.honest()]
    for i in table.honest():
        out = table.peers[i].out
        stopped = STOPPED.search(out)
        assert stopped, out
        kind, named = stopped.groups()
        assert cheater.fingerprint in named, out
        for fingerprint in honest_prints:
            assert fingerprint not in named, f"p{i} named an honest seat: {stopped.group(0)}"
        report = verify_transcript(table.transcripts[i])
        assert report.valid, (i, report.fault, table.output())
        assert report.verdict_kind == kind, (report.verdict, stopped.group(0))
        assert report.culprits == (cheater.public_bytes,), report.verdict
