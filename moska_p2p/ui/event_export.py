"""Every game of an event as a text record (``docs/RECORD.md``), as ``moska export`` writes
one game: the games a club wants to keep, read and replay without the event's folder.

Each transcript is exported on its own: one that does not verify (or cannot be read) is
reported and the others are still written, since a member's copy of one table must not cost
the club the rest of the evening's games. As with ``moska export``, a record of a transcript
is an unverified copy (it has none of the signatures): the transcripts stay the proof.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from .record_text import RecordError, record_text
from .replay import NotVerified, ReplayError, load_replay

SUFFIX = ".txt"


@dataclass(frozen=True)
class Exported:
    """One transcript: the record written (``None`` if not) and why not."""

    source: Path
    record: Path | None
    error: str = ""


def record_name(source: Path, root: Path) -> str:
    """The record's file name: the transcript's path under ``root`` joined by ``-`` (two
    tables' ``game-g1.moska`` stay two records), with the record's suffix."""
    relative = source.resolve().relative_to(root)
    return "-".join(relative.with_suffix("").parts) + SUFFIX


def export_games(transcripts: Sequence[Path], folder: Path) -> list[Exported]:
    """Export each of ``transcripts`` into ``folder`` (made if missing) as a text record,
    named by :func:`record_name` under the transcripts' common folder; one
    :class:`Exported` each, in order. ``OSError`` only if ``folder`` cannot be made."""
    if not transcripts:
        return []
    sources = [path.resolve() for path in transcripts]
    root = Path(os.path.commonpath([path.parent for path in sources]))
    folder.mkdir(parents=True, exist_ok=True)
    written: set[Path] = set()
    done: list[Exported] = []
    for given, source in zip(transcripts, sources, strict=True):
        target = folder.resolve() / record_name(source, root)
        if target in sources or target in written:
            done.append(Exported(given, None, f"{target} would overwrite another file"))
            continue
        try:
            text = record_text(load_replay(source))
        except NotVerified as error:
            done.append(Exported(given, None, f"{error.fault}: it does not verify"))
            continue
        except (RecordError, ReplayError) as error:
            done.append(Exported(given, None, str(error)))
            continue
        try:
            target.write_text(text, encoding="utf-8")
        except OSError as error:
            done.append(Exported(given, None, f"{target}: {error.strerror or error}"))
            continue
        written.add(target)
        done.append(Exported(given, target))
    return done
