"""The fuzz run's small pieces: its counters, where a finding comes from, and the
helpers the fuzzer and its decoder inputs share.
"""

from __future__ import annotations

import re
import resource
import traceback
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from moska_p2p.protocol import messages as m
from moska_p2p.protocol.frames import (
    MAX_PAYLOAD_OF,
    FrameError,
    open_frame,
    unpack,
)
from scripts.lib.fuzz.games import Game, _message

# -- the run -------------------------------------------------------------------------------------


@dataclass
class Stats:
    inputs: int = 0
    session_inputs: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    by_op: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    decoders: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    rejections: Counter[str] = field(default_factory=Counter)
    verdict_reasons: Counter[str] = field(default_factory=Counter)
    exceptions: Counter[str] = field(default_factory=Counter)
    findings: dict[str, dict[str, Any]] = field(default_factory=dict)
    blamed_other: Counter[str] = field(default_factory=Counter)
    blamed_examples: dict[str, str] = field(default_factory=dict)
    time_by_kind: Counter[str] = field(default_factory=Counter)
    count_by_kind: Counter[str] = field(default_factory=Counter)
    slow: list[tuple[float, int, str]] = field(default_factory=list)
    restores: int = 0
    harness_errors: Counter[str] = field(default_factory=Counter)


def _normalize(reason: str) -> str:
    reason = re.sub(r"0x[0-9a-f]+|[0-9A-F]{4}(-[0-9A-F]{4}){7}|\b\d+\b", "N", reason)
    reason = re.sub(r"'[^']*'|\"[^\"]*\"|\[[^\]]*\]|\([^)]*\)", "…", reason)
    return reason[:70]


def _where(error: BaseException) -> str:
    """Where an exception comes from: its type, and the innermost project line of the
    deepest exception it was raised from (a LocalError wraps the real cause)."""
    names = [type(error).__name__]
    root = error
    while root.__cause__ is not None and len(names) < 5:
        root = root.__cause__
        names.append(type(root).__name__)
    frames = traceback.extract_tb(root.__traceback__)
    ours = [f for f in frames if "moska_p2p" in f.filename] or frames
    last = ours[-1] if ours else None
    place = f"{Path(last.filename).name}:{last.lineno}" if last else "?"
    return f"{' from '.join(names)} at {place}"


class _Foreign(Exception):
    def __init__(self, error: BaseException, inputs: list[bytes], note: str) -> None:
        super().__init__(repr(error))
        self.error = error
        self.inputs = inputs
        self.note = note


def _open_and_parse(body: bytes) -> str:
    kind, payload, _ = open_frame(body)
    if kind in m.MESSAGE_TYPES:
        m.parse_payload(payload)
        return "parsed"
    unpack(payload, limit=MAX_PAYLOAD_OF[kind])
    return "unpacked"


def _signers(frames: list[bytes], game: Game) -> set[bytes]:
    """Keys whose valid signature any fed frame (or its evidence) could carry: the senders
    named in the frames, which a fuzzer holding every key may have signed for."""
    out: set[bytes] = set()
    for frame in frames:
        try:
            msg = _message(frame)
        except (FrameError, ValueError):
            continue
        out.add(msg.sender)
    return out & set(game.identities)


def _op_family(op: str) -> str:
    return op.split("+")[0]


def checkpoint_timeout(game: Game) -> float:
    return float(game.config.timeout)


def json_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: json_copy(x) for k, x in value.items()}
    if isinstance(value, list):
        return [json_copy(x) for x in value]
    return value


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _table(title: str, counts: Counter[str], total: int | None) -> None:
    total = total or sum(counts.values()) or 1
    for key, count in counts.most_common():
        print(f"  {key[:72]:72} {count:>10,}  {100 * count / total:5.1f}%")
