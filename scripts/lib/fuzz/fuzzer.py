"""The fuzzer: inputs fed to restored sessions (or, a share of them, to the decoders of
:mod:`.decoders`), findings kept once per place, and the summary of the run.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path
from typing import Any

from moska_p2p.crypto.identity import Identity
from moska_p2p.event import lan
from moska_p2p.net import discovery, wire
from moska_p2p.protocol import messages as m
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import lobby_id, table_id
from moska_p2p.protocol.session import WINDOW, PeerSession
from moska_p2p.tournament import EventSpec, event_id
from scripts.lib.fuzz.decoders import DecoderInputs
from scripts.lib.fuzz.frames import Mutator
from scripts.lib.fuzz.games import (
    BATCH,
    GAMES,
    MAX_HEX,
    SLOW_INPUT,
    WEIGHTS,
    Checkpoint,
    Game,
    Snapshots,
    _message,
    play,
    validate,
)
from scripts.lib.fuzz.run_tools import (
    Stats,
    _normalize,
    _op_family,
    _peak_rss_mb,
    _signers,
    _table,
    _where,
    checkpoint_timeout,
)
from scripts.lib.fuzz.values import Context


class Fuzzer(DecoderInputs):
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.seed: int = args.seed
        self.snapshots = Snapshots()
        self.games: list[Game] = []
        self.checkpoints: list[Checkpoint] = []
        self.stats = Stats()
        self.findings_dir = Path(args.findings)
        self.live: tuple[int, PeerSession] | None = None
        self.tmp = Path(tempfile.mkdtemp(prefix="moska-fuzz-"))
        self.net_frames: list[tuple[bytes, Identity, bytes | None]] = []  # (frame, signer, link)
        self.announcements: list[bytes] = []
        self.configs: list[dict[str, Any]] = []

    # -- setup

    def setup(self) -> None:
        start = time.perf_counter()
        for index, spec in enumerate(GAMES):
            t0 = time.perf_counter()
            game, checkpoints = play(index, self.snapshots, self.args.checkpoints)
            checkpoints = validate(checkpoints, self.snapshots)
            self.games.append(game)
            self.checkpoints.extend(checkpoints)
            kinds = Counter(c.kind for c in checkpoints)
            size = sum(len(c.blob) for c in checkpoints) >> 10
            print(
                f"  {spec.name:14} {len(game.frames):4} frames, {len(checkpoints):3} checkpoints"
                f" ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}), {size} KiB,"
                f" {time.perf_counter() - t0:.1f} s"
            )
        if not any(g.by_type.get(m.DISCLOSE) for g in self.games):
            print("  (no game has a disclosure this time)")
        self.weights = [WEIGHTS.get(c.kind, 1.0) for c in self.checkpoints]
        for game in self.games:
            for frame in game.by_type[m.HELLO][:1]:
                self.configs.append(_message(frame).body.config)
        self._net_setup()
        print(f"  setup {time.perf_counter() - start:.1f} s, {len(self.checkpoints)} checkpoints")

    def _net_setup(self) -> None:
        game = self.games[0]
        config = game.config
        host, joiner = (game.identities[k] for k in game.roster[:2])
        lobby = lobby_id(config)
        table = table_id(config, game.roster)
        n_host, n_join = bytes([7]) * 32, bytes([8]) * 32
        entry_host = wire.Entry.sign(host, lobby, "alice", "", 7000)
        entry_join = wire.Entry.sign(joiner, lobby, "bob", "192.0.2.2", 7001)
        dialer = wire.link_proof(
            joiner, lobby, joiner.public_bytes, host.public_bytes, n_join, n_host, wire.DIALER
        )
        listener = wire.link_proof(
            host, table, joiner.public_bytes, host.public_bytes, n_join, n_host, wire.LISTENER
        )
        bodies: list[tuple[Identity, str, dict[str, Any]]] = [
            (host, wire.HI, {"nonce": n_host, "name": "alice", "config": config.to_wire()}),
            (host, wire.HI, {"nonce": n_host, "name": "alice"}),
            (
                joiner,
                wire.JOIN,
                {
                    "nonce": n_join,
                    "table": lobby,
                    "proof": dialer,
                    "name": "bob",
                    "host": "192.0.2.2",
                    "port": 7001,
                    "sig": entry_join.sig,
                },
            ),
            (joiner, wire.LINK, {"nonce": n_join, "table": table, "proof": dialer}),
            (host, wire.WELCOME, {"proof": listener}),
            (
                host,
                wire.START,
                {
                    "config": config.to_wire(),
                    "roster": [entry_host.to_wire(), entry_join.to_wire()],
                },
            ),
            (host, wire.REFUSE, {"reason": "the table is full"}),
        ]
        # after the handshake: signed over the link's id, checked on that link only
        link = wire.link_id(table, joiner.public_bytes, host.public_bytes, n_join, n_host)
        bound: list[tuple[Identity, str, dict[str, Any]]] = [
            (joiner, wire.SYNC, {"have": [[host.public_bytes, 3], [joiner.public_bytes, 0]]}),
            (joiner, wire.BYE, {"reason": "done"}),
            (joiner, wire.NEXT, {"game": 1, "go": False}),
            (host, wire.REFUSE, {"reason": "the game could not start"}),
        ]
        self.net_frames = [(wire.net_frame(i, kind, body), i, None) for i, kind, body in bodies]
        self.net_frames += [
            (wire.net_frame(i, kind, body, link), i, link) for i, kind, body in bound
        ]
        self.lobby = lobby
        for seq, (seats, is_open) in enumerate([(1, True), (2, False)]):
            self.announcements.append(
                discovery.announcement(
                    host, config, name="alice", port=7000, seats=seats, seq=seq, open=is_open
                )
            )
        spec = EventSpec("club evening", "moska", 4, 3, 1, 4, 1)
        event = event_id(spec, host.public_bytes, bytes(32))
        for seq, (entered, is_open) in enumerate([(3, True), (12, False)]):
            self.announcements.append(
                lan.event_announcement(
                    host,
                    spec,
                    event,
                    port=7001,
                    wanted=12,
                    entered=entered,
                    seq=seq,
                    open=is_open,
                )
            )

    # -- findings

    def finding(
        self, where: str, index: int, error: BaseException, inputs: list[bytes], note: str
    ) -> None:
        key = f"{where}: {_where(error)}"
        self.stats.exceptions[f"{where}: {type(error).__name__}"] += 1
        if key in self.stats.findings:
            self.stats.findings[key]["count"] += 1
            return
        tb = "".join(traceback.format_exception(error))
        record = {
            "where": where,
            "error": repr(error),
            "seed": self.seed,
            "input": index,
            "note": note,
            "count": 1,
            "inputs_hex": [x.hex() for x in inputs],
            "traceback": tb,
        }
        self.stats.findings[key] = record
        self.findings_dir.mkdir(parents=True, exist_ok=True)
        name = re.sub(r"[^A-Za-z0-9]+", "-", key)[:100]
        (self.findings_dir / f"{name}.json").write_text(json.dumps(record, indent=1))
        print(f"\n!!! FINDING {key} (input {index}, {note})", flush=True)
        for i, data in enumerate(inputs):
            text = data.hex()
            cut = f" ... ({len(text)} hex digits in all)" if len(text) > MAX_HEX else ""
            print(f"    input[{i}] = {text[:MAX_HEX]}{cut}")
        print("    " + tb.replace("\n", "\n    "), flush=True)

    # -- one input

    def run_one(self, index: int, verbose: bool = False) -> None:
        rng = random.Random((self.seed << 40) ^ index)
        started = time.perf_counter()
        r = rng.random()
        if r < self.args.session_share:
            label = self.session_input(index, rng, verbose)
        else:
            label = self.decoder_input(index, rng, verbose)
        spent = time.perf_counter() - started
        self.stats.inputs += 1
        self.stats.time_by_kind[label] += spent  # type: ignore[assignment]
        self.stats.count_by_kind[label] += 1
        if spent > SLOW_INPUT:
            self.stats.slow.append((spent, index, label))

    def _session_for(self, number: int) -> PeerSession:
        if self.live is not None and self.live[0] == number:
            return self.live[1]
        self.stats.restores += 1
        session = self.snapshots.loads(self.checkpoints[number].blob)
        self.live = (number, session)
        return session

    def session_input(self, index: int, rng: random.Random, verbose: bool) -> str:
        batch = random.Random((self.seed << 40) ^ (1 << 39) ^ (index // BATCH))
        number = batch.choices(range(len(self.checkpoints)), self.weights)[0]
        checkpoint = self.checkpoints[number]
        game = self.games[checkpoint.game]
        session = self._session_for(number)
        ctx = Context(rng, game, session)
        mutator = Mutator(ctx)
        try:
            frames, follow, op = self._craft(rng, mutator, checkpoint, game)
        except Exception as error:  # a bug of this script, not of the library
            self.harness_error(index, error)
            return checkpoint.kind
        now = checkpoint.clock
        if rng.random() < 0.1:
            now += rng.choice([checkpoint_timeout(game) / 2, checkpoint_timeout(game) + 1])
        tick = rng.random() < 0.03
        crafted = (frames, follow, op, now, tick)
        return self._feed(index, checkpoint, session, game, mutator, crafted, verbose)

    def _craft(
        self, rng: random.Random, mutator: Mutator, checkpoint: Checkpoint, game: Game
    ) -> tuple[list[bytes], list[bytes], str]:
        r = rng.random()
        if r < 0.8:
            base = checkpoint.frame
        elif r < 0.9:
            base = rng.choice(game.frames)
        else:
            base = rng.choice([c.frame for c in self.checkpoints if c.game == checkpoint.game])
        follow: list[bytes] = []
        if rng.random() < 0.002:
            frames, op = mutator.ahead(base, rng.choice([3, 20, WINDOW - 1, WINDOW + 1])), "flood"
        else:
            frame, op = mutator.mutate(base)
            frames = [frame]
            r = rng.random()
            if r < 0.04:
                frames.append(frame)
                op += "+again"
            elif r < 0.12:
                later = [f for t, f, _ in game.log[checkpoint.at + 1 :] if t == checkpoint.target]
                follow = later[: rng.randrange(1, 4)]
                op += "+honest"
        return frames, follow, op

    def _feed(
        self,
        index: int,
        checkpoint: Checkpoint,
        session: PeerSession,
        game: Game,
        mutator: Mutator,
        crafted: tuple[list[bytes], list[bytes], str, float, bool],
        verbose: bool,
    ) -> str:
        frames, follow, op, now, tick = crafted
        before = (session.stage, len(session.transcript), len(session._seen), len(session._limbo))
        outputs: list[v.Output] = []
        fed: list[bytes] = []
        try:
            for frame in [*frames, *follow]:
                fed.append(frame)
                outputs += session.receive(frame, now)
            if tick:
                outputs += session.tick(now + checkpoint_timeout(game) + 1)
        except Exception as error:
            self.finding(
                "receive",
                index,
                error,
                fed,
                f"checkpoint {checkpoint.label}, stage {checkpoint.stage}, op {op}, now {now}",
            )
            self.live = None
            self.stats.outcomes["exception"] += 1
            self.stats.by_op[_op_family(op)]["exception"] += 1
            return checkpoint.kind
        after = (session.stage, len(session.transcript), len(session._seen), len(session._limbo))
        # A timeout this peer saw itself (a tick, or a verdict adopted after waiting) names a
        # silent peer by design: only other verdicts against a non-signer are suspicious.
        timed = tick or now > checkpoint.clock
        outcome = self._classify(
            outputs, before, after, mutator.signers | _signers(fed, game), timed
        )
        self.stats.session_inputs += 1
        self.stats.outcomes[outcome] += 1
        self.stats.by_op[_op_family(op)][outcome.split(":")[0]] += 1
        dirty = tick or before != after or any(not isinstance(o, v.Rejected) for o in outputs)
        if dirty:
            self.live = None
        if verbose:
            print(f"input {index}: checkpoint {checkpoint.label} op {op} now {now}")
            for frame in fed:
                print(f"  fed {frame.hex()}")
            for out in outputs:
                print(f"  -> {out!r}"[:400])
            print(f"  outcome {outcome}")
        return checkpoint.kind

    def _classify(
        self,
        outputs: list[v.Output],
        before: tuple[Any, ...],
        after: tuple[Any, ...],
        signers: set[bytes],
        timed: bool,
    ) -> str:
        stopped = [o for o in outputs if isinstance(o, v.Stopped)]
        if stopped:
            verdict = stopped[0].verdict
            self.stats.verdict_reasons[f"{verdict.kind}: {_normalize(verdict.reason)}"] += 1
            expected = timed and verdict.kind == v.TIMEOUT
            if not set(verdict.keys) <= signers and not expected:
                self.stats.blamed_other[verdict.kind] += 1
                self.stats.blamed_examples.setdefault(verdict.kind, verdict.reason[:200])
            return f"stopped:{verdict.kind}"
        rejected = [o for o in outputs if isinstance(o, v.Rejected)]
        if rejected:
            self.stats.rejections[_normalize(rejected[0].reason)] += 1
            return "rejected"
        if after[1] > before[1]:
            return "accepted:applied"
        if after[2] > before[2] or after[3] > before[3]:
            return "accepted:queued"
        return "ignored (a copy)"

    def run(self) -> int:
        args = self.args
        if args.only is not None:
            self.run_one(args.only, verbose=True)
            self.print_summary(0.0)
            return 1 if self.stats.findings else 0
        start = time.perf_counter()
        last = start
        for index in range(args.inputs):
            self.run_one(index)
            if (index + 1) % args.report_every == 0:
                now = time.perf_counter()
                rate = args.report_every / (now - last)
                last = now
                print(
                    f"  {index + 1:>9} inputs  {rate:6.0f}/s now  "
                    f"{(index + 1) / (now - start):6.0f}/s overall  {now - start:7.0f} s  "
                    f"peak RSS {_peak_rss_mb():.0f} MB  findings {len(self.stats.findings)}",
                    flush=True,
                )
        self.print_summary(time.perf_counter() - start)
        return 1 if self.stats.findings else 0

    def print_summary(self, elapsed: float) -> None:
        s = self.stats
        print("\n== summary ==")
        rate = s.inputs / elapsed if elapsed else 0.0
        print(f"inputs {s.inputs:,} in {elapsed:.0f} s: {rate:.0f} inputs/s; seed {self.seed}")
        print(f"peak RSS {_peak_rss_mb():.0f} MB; session restores {s.restores:,}")
        print(f"\nlive sessions: {s.session_inputs:,} inputs")
        _table("outcome", s.outcomes, s.session_inputs)
        print("\nby mutation (outcome family):")
        families = sorted({k for c in s.by_op.values() for k in c})
        print(f"  {'mutation':24}" + "".join(f"{f[:12]:>13}" for f in families))
        for op, counts in sorted(s.by_op.items(), key=lambda kv: -sum(kv[1].values())):
            print(f"  {op[:24]:24}" + "".join(f"{counts.get(f, 0):>13,}" for f in families))
        print("\nmost common refusals:")
        _table("reason", Counter(dict(s.rejections.most_common(15))), None)
        print("\nmost common verdicts:")
        _table("verdict", Counter(dict(s.verdict_reasons.most_common(20))), None)
        if s.blamed_other:
            print("\nverdicts naming a key that signed nothing in the input (by kind):")
            for kind, count in s.blamed_other.most_common():
                print(f"  {kind:20} {count:>9,}  e.g. {s.blamed_examples[kind]!r}")
        print("\npure decoders:")
        for name, counts in sorted(s.decoders.items()):
            total = sum(counts.values())
            parts = ", ".join(f"{k} {n:,}" for k, n in counts.most_common(8))
            print(f"  {name:13} {total:>9,}: {parts}")
        print("\ncost by checkpoint kind / decoder:")
        for label, count in s.count_by_kind.most_common():
            mean = 1000 * s.time_by_kind[label] / count
            print(f"  {label:22} {count:>9,} inputs  {mean:8.2f} ms each")
        if s.slow:
            print(f"\ninputs slower than {SLOW_INPUT} s:")
            for spent, index, label in sorted(s.slow, reverse=True)[:10]:
                print(f"  input {index}: {spent:.1f} s ({label})")
        print("\nexceptions by type:")
        if not s.exceptions:
            print("  none")
        for key, count in s.exceptions.most_common():
            print(f"  {key:50} {count:>9,}")
        if s.findings:
            print(f"\n{len(s.findings)} finding(s), saved in {self.findings_dir}:")
            for key, record in s.findings.items():
                print(f"  {key}  x{record['count']}  first at input {record['input']}")
