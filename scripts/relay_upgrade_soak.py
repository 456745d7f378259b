"""Soak the relay-to-direct upgrade: a table of four real ``moska`` processes, each in a
network namespace of its own (root only), meets through ``moska relay`` while no peer can reach
another's port, so every link starts through the relay; once all are seated the namespaces
start forwarding between the peers, and every link should leave the relay for a direct one
(six links, each upgraded by its dialer) while the game goes on. N runs in a row, optionally
with CPU hogs running meanwhile (the upgrade races the game's frames on a loaded machine).

Per run it reports how many links left the relay, each peer's outcome (``result``, ``stopped``
with the verdict, or a crash: an exit without either line, or a traceback) and whether the
records verify and agree; then a summary.

    sudo python scripts/relay_upgrade_soak.py --runs 20
    sudo python scripts/relay_upgrade_soak.py --runs 5 --hogs 2

Reuses the tests' set-up (``tests/net/net_harness.py`` :class:`Hub`,
``tests/net/test_relay_resume.py`` :class:`RelaySession`). Every wait is bounded; every process
and namespace is removed at the end of its run.
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "net"))

from net_harness import Hub  # noqa: E402
from test_relay_resume import PLAYERS, RelaySession  # noqa: E402

from moska_p2p.protocol.transcript import verify_transcript  # noqa: E402

LINKS = PLAYERS * (PLAYERS - 1) // 2
UPGRADED = re.compile(r"reached .* directly at \S+: the link leaves the relay")
RESULT = re.compile(r"^result: (.*)$", re.M)
STOPPED = re.compile(r"^game stopped: (\S+):", re.M)
SEATED = re.compile(r"^seats: ", re.M)


@dataclass
class Run:
    index: int
    upgrades: int = 0
    outcomes: list[str] = field(default_factory=list)  # per peer
    crashes: list[str] = field(default_factory=list)
    records: str = ""
    seconds: float = 0.0

    def line(self) -> str:
        counts = collections.Counter(self.outcomes)
        said = ", ".join(f"{kind} x{n}" for kind, n in sorted(counts.items()))
        crashed = f"; CRASHES: {'; '.join(self.crashes)}" if self.crashes else ""
        return (f"run {self.index}: {self.upgrades}/{LINKS} links left the relay; {said};"
                f" records {self.records}; {self.seconds:.0f} s{crashed}")  # fmt: skip


def outcome_of(out: str, err: str, code: int | None) -> tuple[str, str | None]:
    """(what the peer said at the end, why it counts as a crash or None)."""
    stopped = STOPPED.search(out)
    said = "result" if RESULT.search(out) else f"stopped {stopped.group(1)}" if stopped else ""
    if "Traceback (most recent call last)" in err:
        return said or "crash", "an uncaught traceback"
    if not said:
        return "crash", f"exited {code} without a result or a verdict"
    return said, None


def one_run(index: int, folder: Path, args: argparse.Namespace) -> Run:
    run = Run(index)
    started = time.monotonic()
    hub = Hub(PLAYERS)
    table = RelaySession(folder, hub, timeout=args.timeout)
    table.games, table.pace = 1, args.pace
    codes: list[int | None] = [None] * PLAYERS
    try:
        table.start()
        for peer in table.peers:
            peer.wait_for(SEATED, 120)
        hub.open_paths()
        deadline = time.monotonic() + args.game_timeout
        for i, peer in enumerate(table.peers):
            assert peer.popen is not None
            try:
                codes[i] = peer.popen.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                run.crashes.append(f"p{i} still running after {args.game_timeout:g} s")
    except AssertionError as error:  # a peer that never got seated, or exited before
        run.crashes.append(str(error).splitlines()[0][:300])
    finally:
        table.kill_all()
        hub.close()
    for i, peer in enumerate(table.peers):
        out, err = peer.out, peer.err
        run.upgrades += len(UPGRADED.findall(err))
        said, crash = outcome_of(out, err, codes[i])
        run.outcomes.append(said)
        if crash is not None:
            run.crashes.append(f"p{i}: {crash}")
    reports = []
    for i in range(len(table.peers)):
        path = folder / f"p{i}.moska"
        if path.exists():
            reports.append(verify_transcript(path))
    valid = sum(r.valid for r in reports)
    agree = len({(tuple(r.losers), r.verdict_kind) for r in reports}) <= 1
    run.records = f"{valid}/{PLAYERS} valid, {'agree' if agree else 'DISAGREE'}"
    run.seconds = time.monotonic() - started
    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--hogs", type=int, default=0, help="CPU-burning processes meanwhile")
    parser.add_argument("--timeout", type=float, default=15.0, help="the table's timeout")
    parser.add_argument(
        "--pace", type=float, default=0.25,
        help="seconds each bot waits before a move: the game outlasts the upgrade's tries",
    )  # fmt: skip
    parser.add_argument("--game-timeout", type=float, default=180.0)
    parser.add_argument("--keep", action="store_true", help="keep the runs' folders (printed)")
    args = parser.parse_args()
    if os.geteuid() != 0 or not all(shutil.which(t) for t in ("ip", "unshare", "nsenter")):
        raise SystemExit("needs root, ip, unshare and nsenter (network namespaces)")
    base = Path(tempfile.mkdtemp(prefix="relay-upgrade-soak-"))
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
            for _ in range(args.hogs)]  # fmt: skip
    runs: list[Run] = []
    try:
        for index in range(1, args.runs + 1):
            folder = base / f"run{index}"
            folder.mkdir()
            runs.append(one_run(index, folder, args))
            print(runs[-1].line(), flush=True)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait(5)
        if args.keep:
            print(f"the runs' folders: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    upgraded = sum(r.upgrades == LINKS for r in runs)
    crashed = sum(bool(r.crashes) for r in runs)
    outcomes = collections.Counter(o for r in runs for o in r.outcomes)
    print(f"{len(runs)} runs with {args.hogs} hogs: every link left the relay in {upgraded};"
          f" runs with a crash {crashed}; peers' outcomes: {dict(outcomes)}")  # fmt: skip


if __name__ == "__main__":
    main()
