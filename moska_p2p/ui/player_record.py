"""A person's record against the bots of ``moska play``: games and losses per preset, table
size and level, and the losses in a row now, *korokkeella* at two and *poronmuna* at three
or more (RULES M24), kept across sessions in the data folder.

The file is small JSON, rewritten whole after each game: a temporary file beside it,
flushed to disk, renamed over it, so a crash at any moment leaves the old record or the new
one, never a mix. A file that cannot be read is never overwritten: the person is told what
is wrong and where, and the games are played without a record until it is moved away.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

RECORD_VERSION = 1
RECORD_NAME = "record.json"  # in the data folder, beside the saved games (the cli's choice)
PORONMUNA_RUN = 3  # M24: three losses in a row
KOROKKEELLA_RUN = 2  # M24: two losses in a row


class RecordError(ValueError):
    """A record file that cannot be read back (and so must not be written over)."""


@dataclass
class Tally:
    """One preset, table size and level: how the person has done."""

    games: int = 0
    losses: int = 0
    run: int = 0  # losses in a row up to the last game
    longest_run: int = 0
    poronmunat: int = 0  # how many times a run reached three (M24)

    def add(self, lost: bool) -> None:
        self.games += 1
        if lost:
            self.losses += 1
            self.run += 1
            self.longest_run = max(self.longest_run, self.run)
            if self.run == PORONMUNA_RUN:
                self.poronmunat += 1
        else:
            self.run = 0

    @property
    def standing(self) -> str | None:
        """``poronmuna``, ``korokkeella`` or None, as the run of losses stands (M24)."""
        if self.run >= PORONMUNA_RUN:
            return "poronmuna"
        if self.run == KOROKKEELLA_RUN:
            return "korokkeella"
        return None


@dataclass(frozen=True, order=True)
class Table:
    """What a tally is kept for: the preset, the number of seats and the level (or the
    bots, when the person chose them instead of a level)."""

    preset: str
    players: int
    level: str


class PlayerRecord:
    """Every tally of the person, read from and written to one file."""

    def __init__(self, path: Path, tallies: dict[Table, Tally] | None = None) -> None:
        self.path = path
        self.tallies: dict[Table, Tally] = dict(tallies or {})

    @classmethod
    def load(cls, path: Path) -> PlayerRecord:
        """The record at ``path``: empty if there is no file yet; :class:`RecordError` if
        the file is there but is not a record this program wrote."""
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(path)
        except (OSError, UnicodeDecodeError) as error:
            raise RecordError(_unreadable(path, str(error))) from None
        try:
            return cls(path, _parse(json.loads(text)))
        except (ValueError, TypeError, KeyError) as error:
            reason = str(error).splitlines()[0] if str(error) else type(error).__name__
            raise RecordError(_unreadable(path, reason)) from None

    def tally(self, table: Table) -> Tally:
        return self.tallies.setdefault(table, Tally())

    def __iter__(self) -> Iterator[tuple[Table, Tally]]:
        return iter(sorted(self.tallies.items()))

    def save(self) -> None:
        """Write the record atomically (see the module docstring); ``OSError`` if it
        cannot be written, the old file then left whole."""
        data = {
            "version": RECORD_VERSION,
            "tallies": [asdict(table) | asdict(tally) for table, tally in self],
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(
            prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent
        )
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(json.dumps(data, indent=1) + "\n")
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, self.path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise


def add_game(path: Path, table: Table, lost: bool) -> Tally:
    """Count one finished game in the record at ``path`` and save it; the table's tally
    after it. Read again each time, so two sessions at once both count. Raises
    :class:`RecordError` (an unreadable file, left as it is) or ``OSError``."""
    record = PlayerRecord.load(path)
    tally = record.tally(table)
    tally.add(lost)
    record.save()
    return tally


def _unreadable(path: Path, reason: str) -> str:
    return (
        f"{path} is not a record moska can read ({reason}); it is left as it is: move it"
        " away or delete it to start a new record"
    )


def _parse(data: Any) -> dict[Table, Tally]:
    if not isinstance(data, dict) or data.get("version") != RECORD_VERSION:
        raise ValueError(f"not a version {RECORD_VERSION} record")
    tallies: dict[Table, Tally] = {}
    for item in data["tallies"]:
        table = Table(str(item["preset"]), _count(item, "players"), str(item["level"]))
        tally = Tally(**{name: _count(item, name) for name in Tally.__dataclass_fields__})
        if tally.losses > tally.games or tally.run > tally.losses:
            raise ValueError(f"impossible counts for {table.preset}, {table.level}")
        tallies[table] = tally
    return tallies


def _count(item: dict[str, Any], name: str) -> int:
    value = item[name]
    if type(value) is not int or value < 0:
        raise ValueError(f"{name} is not a count: {value!r}")
    return value
