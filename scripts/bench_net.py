#!/usr/bin/env python3
"""Benchmark the peers on the network: real processes on 127.0.0.1 (the network part of
``scripts/bench_p2p.py``, which measures the same protocol in one process).

For 2, 4 and 6 peers, each run starts ``moska host`` and ``moska join`` processes (random bots,
``python -m moska_p2p``), and each peer writes its figures (``--stats``) when it exits:

* shuffle and deal: from the moment the last peer is seated to the first moment a peer can
  make its first decision (the two-pass shuffle over the mesh and the deal's key releases);
* whole game: from the first session start (the table full) to the last peer's end, against
  the very same game replayed on the engine alone (faces from the seeds revealed at the audit);
* frames and bytes written to sockets per game (relays and sync included);
* peak memory (RSS) per peer; and the wall time of the whole run, process start-up included.

Targets (issue 5): shuffle and deal under 0.3 s for 4 peers and 0.5 s for 6; a whole 4-bot game
under 3 s; under 80 MB per peer. Medians of several runs.

    python scripts/bench_net.py --runs 5
    python scripts/bench_net.py --runs 5 --relay     # every link through a moska relay

``--relay`` starts a ``moska relay`` process for each run; the host and the joiners do not
listen (``--no-listen``) and join by the host's invite, so every link is a virtual one.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from moska_p2p.engine import new_game
from moska_p2p.protocol.session import PeerSession
from moska_p2p.protocol.transcript import read_transcript, verify_transcript

JOIN_LINE = re.compile(r"join with: moska join 127\.0\.0\.1:(\d+)")
INVITE_LINE = re.compile(r"invite \(moska join INVITE\): (moska:[a-z2-7]+)")
RELAY_LINE = re.compile(r"relay listening on 127\.0\.0\.1:(\d+)")


@dataclass
class Run:
    deal: float  # seconds, last seated -> first decision
    game: float  # seconds, first session start -> last end
    engine: float  # seconds, the same game on the engine alone
    wall: float  # seconds, first process start -> last exit
    moves: int
    frames: int
    bytes: int
    rss_mb: list[float]


def _peer(args: list[str], folder: Path, name: str) -> subprocess.Popen[bytes]:
    with open(folder / f"{name}.out", "wb") as out, open(folder / f"{name}.err", "wb") as err:
        return subprocess.Popen(
            [sys.executable, "-m", "moska_p2p", *args], stdout=out, stderr=err
        )


def _wait_for(
    folder: Path, name: str, proc: subprocess.Popen[bytes], pattern: re.Pattern[str]
) -> str:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        found = pattern.search((folder / f"{name}.out").read_text())
        if found:
            return found.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.01)
    raise RuntimeError(f"{name} did not start:\n" + (folder / f"{name}.err").read_text())


def one_run(preset: str, players: int, seed: int, folder: Path, relay: bool = False) -> Run:
    common = ["--bind", "127.0.0.1", "-q", "--bot", "random", "--wait", "60"]

    def files(i: int) -> list[str]:
        return [
            "--identity", str(folder / f"p{i}.pem"), "--transcript", str(folder / f"p{i}.moska"),
            "--stats", str(folder / f"p{i}.json"), "--seed", str(seed * 10 + i),
        ]  # fmt: skip

    started = time.monotonic()
    relay_proc = None
    host_extra: list[str] = []
    if relay:
        relay_proc = _peer(["relay", "--bind", "127.0.0.1", "--port", "0"], folder, "relay")
        relay_port = _wait_for(folder, "relay", relay_proc, RELAY_LINE)
        host_extra = ["--no-listen", "--relay", f"127.0.0.1:{relay_port}"]
    procs = [
        _peer(["host", "--preset", preset, "--players", str(players), *common, *files(0),
               *host_extra], folder, "p0")
    ]  # fmt: skip
    if relay:
        target = [_wait_for(folder, "p0", procs[0], INVITE_LINE), "--no-listen"]
    else:
        target = [f"127.0.0.1:{_wait_for(folder, 'p0', procs[0], JOIN_LINE)}"]
    for i in range(1, players):
        procs.append(_peer(["join", *target, *common, *files(i)], folder, f"p{i}"))
    codes = [p.wait(120) for p in procs]
    wall = time.monotonic() - started
    if relay_proc is not None:
        relay_proc.kill()
        relay_proc.wait(10)
    if codes != [0] * players:
        errors = "\n".join((folder / f"p{i}.out").read_text() for i in range(players))
        raise RuntimeError(f"a peer failed ({codes}):\n{errors}")
    stats: list[dict[str, Any]] = [
        json.loads((folder / f"p{i}.json").read_text()) for i in range(players)
    ]
    deal = min(s["t_first_turn"] for s in stats if s["t_first_turn"]) - max(
        s["t_seated"] for s in stats
    )
    game = max(s["t_end"] for s in stats) - min(s["t_start"] for s in stats)
    engine, moves = engine_alone(folder / "p0.moska")
    return Run(
        deal,
        game,
        engine,
        wall,
        moves,
        sum(s["frames_out"] for s in stats),
        sum(s["bytes_out"] for s in stats),
        [s["max_rss_kb"] / 1024 for s in stats],
    )


def engine_alone(transcript: Path) -> tuple[float, int]:
    """(seconds, moves) of the transcript's game replayed on the engine alone.

    Protocol v2 never reveals a card nobody showed, so the deck is the transcript's public
    faces with every unseen position filled from the cards never seen: every move names only
    shown cards, so the same moves replay, to the same public final state."""
    report = verify_transcript(transcript)
    assert report.valid, report.fault
    _, config, roster, frames = read_transcript(transcript)
    observer = PeerSession(None, config, roster)
    for frame in frames:
        observer.receive(frame)
    assert observer.game is not None
    known = list(observer.game.face)
    unseen = iter(sorted(set(observer.cards) - {c for c in known if c >= 0}))
    faces = [card if card >= 0 else next(unseen) for card in known]
    start = time.perf_counter()
    game = new_game(
        config.preset, config.players, deck=faces, dealer=observer.dealer, **config.options
    )
    for seat, text in observer.moves:
        game.play(text, seat=seat)
    seconds = time.perf_counter() - start
    assert game.state_hash() == observer.final_hash
    return seconds, len(observer.moves)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--preset", default="moska")
    parser.add_argument("--relay", action="store_true", help="every link through a relay")
    parser.add_argument("--players", type=int, nargs="*", default=[2, 4, 6])
    args = parser.parse_args()
    how = "through a moska relay" if args.relay else "over loopback"
    print(f"{args.preset} {how}, one process per peer, random bots; medians of {args.runs}")
    print(
        f"{'peers':>5s} {'deal ms':>8s} {'game ms':>8s} {'engine ms':>9s} {'wall s':>7s}"
        f" {'moves':>6s} {'frames':>7s} {'kB':>7s} {'RSS MB med/max':>15s}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-net-") as tmp:
        for players in args.players:
            runs = []
            for run in range(args.runs):
                folder = Path(tmp) / f"{players}-{run}"
                folder.mkdir()
                runs.append(one_run(args.preset, players, run + 1, folder, args.relay))

            def med(values: list[float]) -> float:
                return statistics.median(values)

            rss = [mb for r in runs for mb in r.rss_mb]
            print(
                f"{players:5d} {med([r.deal for r in runs]) * 1000:8.0f}"
                f" {med([r.game for r in runs]) * 1000:8.0f}"
                f" {med([r.engine for r in runs]) * 1000:9.2f}"
                f" {med([r.wall for r in runs]):7.2f}"
                f" {med([r.moves for r in runs]):6.0f}"
                f" {med([r.frames for r in runs]):7.0f}"
                f" {med([r.bytes for r in runs]) / 1000:7.0f}"
                f" {med(rss):7.1f} /{max(rss):5.1f}",
                flush=True,
            )
    print("deal: last peer seated -> first decision; game: table full -> last peer done;")
    print("engine: the same game replayed on the engine alone; wall: process start to exit")
    return 0


if __name__ == "__main__":
    sys.exit(main())
