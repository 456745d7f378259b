"""A club of twelve on one LAN: a director and twelve bot entrants, each a real ``moska
tournament`` process in a network namespace of its own, all on one switch
(:class:`~net_harness.Bridged`, made :meth:`~net_harness.Bridged.like_a_lan`). The director
announces the event on the LAN with the defaults (no ``MOSKA_DISCOVERY*``: the default route's
interface); every entrant is started with no address and finds it there, then the event runs
three rounds of three tables of four and a final table of four. Every member's folder
verifies with ``moska verify`` and every member computes the same standings.

Skipped where this machine cannot make namespaces. Every wait is bounded; the fixture kills
whatever still runs and removes the namespaces.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from net_harness import ROOT, Bridged, Peer, namespaces_or_skip

from moska_p2p.crypto.identity import Identity
from moska_p2p.net.discovery import ENV_GROUP, ENV_INTERFACE

ENTRANTS = 12
DEADLINE = 900.0  # seconds the whole event may take on a loaded machine


def finish_all(peers: list[Peer], timeout: float) -> list[int | None]:
    """Every peer's exit code, once all have ended, or as soon as one fails (the others'
    then ``None`` if still running), or at ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        codes = [p.popen.poll() if p.popen is not None else None for p in peers]
        if all(code is not None for code in codes) or any(code for code in codes):
            return codes
        time.sleep(0.5)
    return [p.popen.poll() if p.popen is not None else None for p in peers]


@pytest.fixture
def switch() -> Iterator[Bridged]:
    with namespaces_or_skip(lambda: Bridged(ENTRANTS + 1)) as made:
        made.like_a_lan()
        yield made


def test_a_club_of_twelve_finds_its_director_on_the_lan_and_plays_a_whole_event(
    tmp_path: Path, switch: Bridged, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_GROUP, raising=False)  # the defaults, as on a club's LAN
    monkeypatch.delenv(ENV_INTERFACE, raising=False)
    peers: list[Peer] = []
    try:
        director = Peer(
            "director",
            ["tournament", "direct", "--preset", "durak", "--seats", "4", "--rounds", "3",
             "--games", "1", "--final", "4", "--entrants", str(ENTRANTS), "--name", "lan club",
             "--folder", str(tmp_path / "director"), "--identity", str(tmp_path / "d.pem")],
            tmp_path, prefix=switch.prefix(0),
        )  # fmt: skip
        peers.append(director)
        director.wait_for("announcing the event on the LAN", 60)
        port = director.wait_for(r"open on 0\.0\.0\.0:(\d+)", 10).group(1)
        for n in range(ENTRANTS):  # no address: each looks for the event on the LAN
            entering = ["tournament", "enter", "--bot", "greedy", "--name", f"bot{n}", "--look",
                        "5", "--bind", switch.address(n + 1), "--identity",
                        str(tmp_path / f"bot{n}.pem"), "--folder", str(tmp_path / f"bot{n}"),
                        "-q"]  # fmt: skip
            peers.append(Peer(f"bot{n}", entering, tmp_path, prefix=switch.prefix(n + 1)))
        codes = finish_all(peers, DEADLINE)
        assert codes == [0] * (ENTRANTS + 1), "\n".join(
            f"--- {p.name}: {code}\n{p.out}\n{p.err}" for p, code in zip(peers, codes, strict=True)
        )
    finally:
        for peer in peers:
            peer.kill()
    fingerprint = Identity.load(tmp_path / "d.pem").fingerprint
    for peer in peers[1:]:  # each found the director where it announced itself
        found = f"found one event: {switch.address(0)}:{port}  lan club  durak, 3 rounds at 4"
        assert found in peer.out and fingerprint in peer.out, peer.out
    said = director.out
    assert all(f"entered: bot{n} (bot)" in said for n in range(ENTRANTS)), said
    assert all(f"round {r}: table 3: " in said for r in (1, 2, 3)), said
    folders = [tmp_path / "director", *(tmp_path / f"bot{n}" for n in range(ENTRANTS))]
    checked = subprocess.run(  # moska verify, as any member runs it, over every folder
        [sys.executable, "-m", "moska_p2p", "verify", "--json", *map(str, folders)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout + checked.stderr
    results = [json.loads(line) for line in checked.stdout.splitlines() if line.startswith("{")]
    assert [r["event_folder"] for r in results] == [str(f) for f in folders]
    assert all(r["status"] == "valid" for r in results), results
    assert len({r["standings_digest"] for r in results}) == 1  # one board for all
    standings = results[0]["standings"]
    assert len(standings) == ENTRANTS and sum(row[2] is not None for row in standings) == 4
    assert re.search(r"lan club . final standings", peers[1].out), peers[1].out
