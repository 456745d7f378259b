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
* peak memory (RSS) per peer; and the wall time of the whole run, process start-up included;
* the event loop's longest stall: each peer runs with a probe, a trio task
  that sleeps 5 ms in a loop and records every wake-up later than 10 ms; the figure is the
  longest gap between two wake-ups, over every peer, that overlaps the deal (last peer seated
  to first decision), and over the whole game (each peer's seating to its end).

Targets: shuffle and deal under 0.3 s for 4 peers and 0.5 s for 6; a whole 4-bot game
under 3 s; under 80 MB per peer. Since: a 6-peer deal under 0.9 s, no stall over 50 ms.
Medians of several runs.

    python scripts/bench_net.py --runs 5
    python scripts/bench_net.py --runs 5 --relay     # every link through a moska relay
    python scripts/bench_net.py --baseline 60253b3 --runs 5   # this tree against a revision

``--relay`` starts a ``moska relay`` process for each run; the host and the joiners do not
listen (``--no-listen``) and join by the host's invite, so every link is a virtual one.

``--baseline REV`` extracts git revision ``REV`` with ``git archive`` into a temporary
directory and measures, in one run, a 6-peer deal (and its stalls) and a whole 4-peer game
over loopback on both trees, the sides interleaved and their order alternated; ``--accel``
adds this tree with the libdecaf accelerator (``MOSKA_P2P_ACCEL=decaf``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A --probe peer runs the tree named by --root (the baseline's or this one): it must be first
# on the path before anything of moska_p2p is imported.
sys.path.insert(
    0,
    sys.argv[sys.argv.index("--root") + 1]
    if "--root" in sys.argv[:-1]
    else str(Path(__file__).resolve().parent.parent),
)

from moska_p2p.engine import new_game
from moska_p2p.protocol.session import PeerSession
from moska_p2p.protocol.transcript import read_transcript, verify_transcript

REPO = Path(__file__).resolve().parent.parent
PROBE_SLEEP = 0.005
PROBE_KEEP = 0.010  # wake-ups later than this after the previous one are recorded

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
    stall_deal: float  # seconds, the longest gap of any peer's loop during the deal
    stall_game: float  # seconds, the same over each peer's whole game
    cpu: float  # seconds, the CPU time of a peer's process (median of the peers), start-up included


def _probe(out: Path, argv: list[str]) -> int:
    """Run ``moska ARGV`` in this process with the stall probe beside the node: every
    ``trio.run`` gets a task that sleeps :data:`PROBE_SLEEP` in a loop and keeps each
    wake-up more than :data:`PROBE_KEEP` after the previous one, written to ``out`` at exit."""
    import trio

    real_run = trio.run
    gaps: list[tuple[float, float]] = []

    async def probe() -> None:
        last = time.time()
        while True:
            await trio.sleep(PROBE_SLEEP)
            now = time.time()
            if now - last > PROBE_KEEP:
                gaps.append((last, now))
            last = now

    def run(function: Any, *args: Any, **options: Any) -> Any:
        async def beside() -> Any:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(probe)
                result = await function(*args)
                nursery.cancel_scope.cancel()
            return result

        return real_run(beside, **options)

    trio.run = run
    sys.argv = ["moska", *argv]
    try:
        runpy.run_module("moska_p2p", run_name="__main__")
    except SystemExit as done:
        return int(done.code or 0)
    finally:
        used = resource.getrusage(resource.RUSAGE_SELF)
        out.write_text(json.dumps({"gaps": gaps, "cpu": used.ru_utime + used.ru_stime}))
    return 0


def _peer(
    args: list[str], folder: Path, name: str, root: Path = REPO, accel: bool = False
) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "MOSKA_P2P_ACCEL"}
    env["PYTHONPATH"] = str(root)
    if accel:
        env["MOSKA_P2P_ACCEL"] = "decaf"
    probe = [str(Path(__file__).resolve()), "--probe", str(folder / f"{name}.gaps")]
    command = [sys.executable, *probe, "--root", str(root), "--", *args]
    with open(folder / f"{name}.out", "wb") as out, open(folder / f"{name}.err", "wb") as err:
        return subprocess.Popen(command, stdout=out, stderr=err, cwd=root, env=env)


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


def _longest(gaps: list[tuple[float, float]], start: float, end: float) -> float:
    """The longest gap that overlaps ``[start, end]`` (0 for none recorded)."""
    return max((b - a for a, b in gaps if a < end and b > start), default=0.0)


def one_run(
    preset: str,
    players: int,
    seed: int,
    folder: Path,
    root: Path = REPO,
    accel: bool = False,
    relay: bool = False,
) -> Run:
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
        relay_proc = _peer(["relay", "--bind", "127.0.0.1", "--port", "0"], folder, "relay", root)
        relay_port = _wait_for(folder, "relay", relay_proc, RELAY_LINE)
        host_extra = ["--no-listen", "--relay", f"127.0.0.1:{relay_port}"]
    procs = [
        _peer(["host", "--preset", preset, "--players", str(players), *common, *files(0),
               *host_extra], folder, "p0", root, accel)
    ]  # fmt: skip
    if relay:
        target = [_wait_for(folder, "p0", procs[0], INVITE_LINE), "--no-listen"]
    else:
        target = [f"127.0.0.1:{_wait_for(folder, 'p0', procs[0], JOIN_LINE)}"]
    for i in range(1, players):
        join = ["join", *target, *common, *files(i)]
        procs.append(_peer(join, folder, f"p{i}", root, accel))
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
    dealt = min(s["t_first_turn"] for s in stats if s["t_first_turn"])
    seated = max(s["t_seated"] for s in stats)
    deal = dealt - seated
    probes = [json.loads((folder / f"p{i}.gaps").read_text()) for i in range(players)]
    gaps = [probe["gaps"] for probe in probes]
    stall_deal = max(_longest(g, seated, dealt) for g in gaps)
    stall_game = max(
        _longest(g, s["t_seated"], s["t_end"]) for g, s in zip(gaps, stats, strict=True)
    )
    game = max(s["t_end"] for s in stats) - min(s["t_start"] for s in stats)
    engine, moves = engine_alone_of(root, folder / "p0.moska")
    return Run(
        deal,
        game,
        engine,
        wall,
        moves,
        sum(s["frames_out"] for s in stats),
        sum(s["bytes_out"] for s in stats),
        [s["max_rss_kb"] / 1024 for s in stats],
        stall_deal,
        stall_game,
        statistics.median(probe["cpu"] for probe in probes),
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


def engine_alone_of(root: Path, transcript: Path) -> tuple[float, int]:
    """:func:`engine_alone` by the tree that wrote the transcript: another revision's wire
    format (a proof's layout) need not be this tree's, so its transcript is read by a
    subprocess on that tree's code (this script, ``--engine-alone`` with ``--root``)."""
    if root.resolve() == REPO:
        return engine_alone(transcript)
    command = [sys.executable, __file__, "--engine-alone", str(transcript), "--root", str(root)]
    out = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
    seconds, moves = json.loads(out.stdout)
    return float(seconds), int(moves)


def _extract(rev: str, into: Path) -> None:
    """The files of git revision ``rev`` under ``into`` (no worktree, no index change)."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", rev], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)


FIGURES = (
    ("deal", "6-peer deal over loopback (s)"),
    ("stall_deal", "longest loop stall in it (s)"),
    ("stall_game", "longest loop stall, whole game (s)"),
    ("cpu", "CPU per peer process, 6-peer game (s)"),
    ("game", "whole 4-peer game over loopback (s)"),
)


def _compare(args: argparse.Namespace) -> int:
    """This tree (and with --accel, this tree accelerated) against ``args.baseline``."""
    sides = ["base", "tree"] + (["tree+decaf"] if args.accel else [])
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory(prefix="bench-net-") as tmp:
        base = Path(tmp) / "base"
        base.mkdir()
        _extract(args.baseline, base)
        roots = {"base": base, "tree": REPO, "tree+decaf": REPO}
        for run in range(args.runs):
            order = sides if run % 2 == 0 else list(reversed(sides))
            for side in order:
                folders = [Path(tmp) / f"{side}-{run}-{n}" for n in (6, 4)]
                for folder in folders:
                    folder.mkdir()
                accel = side == "tree+decaf"
                six = one_run(args.preset, 6, run + 1, folders[0], roots[side], accel)
                four = one_run(args.preset, 4, run + 1, folders[1], roots[side], accel)
                runs[side].append(
                    {
                        "deal": six.deal,
                        "stall_deal": six.stall_deal,
                        "stall_game": max(six.stall_game, four.stall_game),
                        "cpu": six.cpu,
                        "game": four.game,
                    }
                )
            print(f"  run {run + 1}/{args.runs} done", file=sys.stderr, flush=True)
    print(f"baseline {args.baseline} against this tree ({args.preset}), medians of {args.runs}")
    print(f"{'':38s}" + "".join(f"{side:>12s}" for side in sides) + "  ratios (base/side)")
    for key, label in FIGURES:
        medians = {side: statistics.median(r[key] for r in runs[side]) for side in sides}
        ratios = "  ".join(
            f"x{medians['base'] / medians[side]:.2f}" if medians[side] else "-"
            for side in sides[1:]
        )
        print(f"{label:38s}" + "".join(f"{medians[side]:12.3f}" for side in sides) + f"  {ratios}")
    return 0


def main() -> int:
    if "--engine-alone" in sys.argv[1:2]:
        print(json.dumps(engine_alone(Path(sys.argv[2]))))
        return 0
    if "--probe" in sys.argv[1:3]:
        rest = sys.argv[sys.argv.index("--") + 1 :]
        return _probe(Path(sys.argv[sys.argv.index("--probe") + 1]), rest)
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--preset", default="moska")
    parser.add_argument("--relay", action="store_true", help="every link through a relay")
    parser.add_argument("--players", type=int, nargs="*", default=[2, 4, 6])
    parser.add_argument("--baseline", metavar="REV", help="compare with this git revision")
    parser.add_argument("--accel", action="store_true", help="with --baseline: a decaf side")
    args = parser.parse_args()
    if args.baseline:
        return _compare(args)
    how = "through a moska relay" if args.relay else "over loopback"
    print(f"{args.preset} {how}, one process per peer, random bots; medians of {args.runs}")
    print(
        f"{'peers':>5s} {'deal ms':>8s} {'game ms':>8s} {'engine ms':>9s} {'wall s':>7s}"
        f" {'moves':>6s} {'frames':>7s} {'kB':>7s} {'RSS MB med/max':>15s} {'stall ms':>8s}"
    )
    with tempfile.TemporaryDirectory(prefix="bench-net-") as tmp:
        for players in args.players:
            runs = []
            for run in range(args.runs):
                folder = Path(tmp) / f"{players}-{run}"
                folder.mkdir()
                runs.append(one_run(args.preset, players, run + 1, folder, relay=args.relay))

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
                f" {med(rss):7.1f} /{max(rss):5.1f}"
                f" {med([r.stall_deal for r in runs]) * 1000:8.0f}",
                flush=True,
            )
    print("deal: last peer seated -> first decision; game: table full -> last peer done;")
    print("engine: the same game replayed on the engine alone; wall: process start to exit;")
    print("stall: the longest gap between two wake-ups of any peer's event loop in the deal")
    return 0


if __name__ == "__main__":
    sys.exit(main())
