"""OpenSkill ratings game by game: the trajectory of one run, and a leaderboard kept in a file.

An arena run's table rates its bots from scratch (:func:`.stats.rate`); a club that holds a
tournament every week wants one leaderboard that every run adds to (``moska arena --ratings
FILE``), printed by ``moska ratings FILE``. Both use :class:`Rater`, which applies the same
update as :func:`.stats.rate` (OpenSkill Plackett-Luce, the loser last and every other seat
tied ahead of it, a bot with several seats at one table rated once per seat from its rating
before the game and given the mean of those updates, unfinished games not rated) but starts
from whatever ratings it is given, and reports every step, so the plot can draw the ratings
over the games (``tests/arena/test_ratings.py`` checks that a run rated from scratch ends
exactly where :func:`.stats.rate` does).

The ratings file, format version 1, is one JSON object::

    {
      "format": "moska-ratings",          # what the file is: anything else is refused
      "version": 1,                       # a later version is refused, not misread
      "model": "openskill-plackett-luce", # the rating model (its default mu 25, sigma 25/3)
      "preset": "moska",                  # the game rated: a run of another preset is refused
      "runs": 3,                          # arena runs that updated it
      "games": 600,                       # finished games rated, over all runs
      "updated": "2026-12-02T03:10:00Z",  # the last update (UTC)
      "bots": {                           # by bot specification, as named in --bots
        "greedy": {"mu": 28.9, "sigma": 0.9, "games": 600, "updated": "2026-12-02T03:10:00Z"}
      }
    }

A bot's ``games`` counts the finished games it was rated in (a bot with two seats at one
table is rated once for that game). One file holds one preset, since a bot's skill at Durak
says nothing of its skill at Moska; table sizes and ``--option`` changes may mix (the model
rates any number of seats). The file is replaced atomically (a temporary file in the same
folder, flushed to disk, then renamed over it), so a run interrupted at any moment leaves
either the old leaderboard or the new one, never half of one; the arena only writes it once
its games are done.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .stats import GameOutcome, Rating

FORMAT = "moska-ratings"
VERSION = 1
MODEL = "openskill-plackett-luce"


class RatingsError(ValueError):
    """A ratings file that cannot be used: unreadable, damaged, foreign, newer, or of another
    preset. The message is one line, naming the file. ``damaged``: its bytes are not JSON
    (a club's leaderboard keeps such a file aside, ``ui/club_leaderboard.py``)."""

    def __init__(self, message: str, *, damaged: bool = False) -> None:
        super().__init__(message)
        self.damaged = damaged


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# ------------------------------------------------------------------------ the updates


class Rater:
    """OpenSkill Plackett-Luce ratings updated one finished game at a time.

    ``start`` maps a bot specification to its ``(mu, sigma)``; a bot not in it starts at the
    model's default. ``current`` holds every bot rated so far (and those of ``start``).
    """

    def __init__(self, start: Mapping[str, tuple[float, float]] | None = None) -> None:
        from openskill.models import PlackettLuce  # the arena imports this module lazily

        self._model = PlackettLuce()
        self.current: dict[str, tuple[float, float]] = dict(start or {})

    def rating(self, name: str) -> tuple[float, float]:
        """``(mu, sigma)`` of ``name``: its rating so far, or the model's default."""
        return self.current.get(name, (self._model.mu, self._model.sigma))

    def play(self, bots: Sequence[str], game: GameOutcome) -> list[str]:
        """Rate one game (``bots`` is the run's bot list, ``game.entries`` indexes it); the
        names rated, in seat order without repeats (none for an unfinished game)."""
        if game.unfinished:
            return []
        model = self._model
        seat_names = [bots[e] for e in game.entries]
        teams = [[model.rating(*self.rating(n))] for n in seat_names]
        ranks: list[float] = [2.0 if s in game.losers else 1.0 for s in range(len(teams))]
        updated = model.rate(teams, ranks=ranks)
        sums: dict[str, list[float]] = {}
        for name, team in zip(seat_names, updated, strict=True):
            acc = sums.setdefault(name, [0.0, 0.0, 0.0])
            acc[0] += team[0].mu
            acc[1] += team[0].sigma
            acc[2] += 1
        for name, (mu, sigma, count) in sums.items():
            self.current[name] = (mu / count, sigma / count)
        return list(sums)


@dataclass
class Trajectory:
    """Every bot's rating after each rated game of a run, from the model's default.

    ``games[k]`` is how many games of the run had been played at step ``k`` (0 first, the
    default ratings), ``points[name][k]`` that bot's ``(mu, sigma)`` then.
    """

    games: list[int]
    points: dict[str, list[tuple[float, float]]]


def trajectory(bots: Sequence[str], outcomes: Sequence[GameOutcome]) -> Trajectory:
    """The ratings of a run over its games, in game order (unfinished games add no step)."""
    names = list(dict.fromkeys(bots))
    rater = Rater()
    points = {name: [rater.rating(name)] for name in names}
    games = [0]
    for game in outcomes:
        if not rater.play(bots, game):
            continue
        games.append(game.game + 1)
        for name in names:
            points[name].append(rater.rating(name))
    return Trajectory(games, points)


# ------------------------------------------------------------------ the leaderboard file


@dataclass
class BotRecord:
    """One bot's line in a ratings file."""

    mu: float
    sigma: float
    games: int
    updated: str

    @property
    def ordinal(self) -> float:
        return Rating("", self.mu, self.sigma).ordinal


@dataclass
class Standing:
    """A line of the leaderboard, best first."""

    rank: int
    bot: str
    record: BotRecord

    def to_json(self) -> dict[str, Any]:
        r = self.record
        return {
            "rank": self.rank,
            "bot": self.bot,
            "ordinal": r.ordinal,
            "mu": r.mu,
            "sigma": r.sigma,
            "games": r.games,
            "updated": r.updated,
        }


@dataclass
class Leaderboard:
    """The contents of a ratings file (see the module docstring for its format)."""

    preset: str
    runs: int = 0
    games: int = 0
    updated: str = ""
    bots: dict[str, BotRecord] = field(default_factory=dict)

    def update(
        self, bots: Sequence[str], outcomes: Sequence[GameOutcome], now: str | None = None
    ) -> int:
        """Rate one arena run's games in order, from the ratings held; the games rated."""
        when = now or _now()
        rater = Rater({name: (r.mu, r.sigma) for name, r in self.bots.items()})
        rated = 0
        for game in outcomes:
            names = rater.play(bots, game)
            if not names:
                continue
            rated += 1
            for name in names:
                mu, sigma = rater.rating(name)
                old = self.bots.get(name)
                self.bots[name] = BotRecord(mu, sigma, (old.games if old else 0) + 1, when)
        self.runs += 1
        self.games += rated
        self.updated = when
        return rated

    def standings(self) -> list[Standing]:
        """Best first by ordinal (mu - 3 sigma, the conservative rating), then by name."""
        order = sorted(self.bots.items(), key=lambda item: (-item[1].ordinal, item[0]))
        return [Standing(rank, name, record) for rank, (name, record) in enumerate(order, 1)]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "model": MODEL,
            "preset": self.preset,
            "runs": self.runs,
            "games": self.games,
            "updated": self.updated,
            "bots": {
                name: {"mu": r.mu, "sigma": r.sigma, "games": r.games, "updated": r.updated}
                for name, r in sorted(self.bots.items())
            },
        }


def _number(value: object) -> float | None:
    """``value`` as a float if it is a finite JSON number (not a boolean), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def _count(value: object) -> int | None:
    """``value`` if it is a whole JSON number, 0 or more (not a boolean), else ``None``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


def bot_record(name: str, data: object) -> BotRecord | str:
    """The record of ``data`` (a ratings file's line: mu, sigma, games, updated), or what is
    wrong with it; a club's leaderboard file reads its players' ratings with it too."""
    if not isinstance(data, dict):
        return f'bot "{name}" is not an object'
    mu, sigma = _number(data.get("mu")), _number(data.get("sigma"))
    games, updated = _count(data.get("games")), data.get("updated")
    if mu is None:
        return f'bot "{name}": mu must be a number'
    if sigma is None or sigma <= 0:
        return f'bot "{name}": sigma must be a positive number'
    if games is None:
        return f'bot "{name}": games must be a whole number, 0 or more'
    if not isinstance(updated, str):
        return f'bot "{name}": updated must be a date'
    return BotRecord(mu, sigma, games, updated)


def parse(data: object, source: str) -> Leaderboard:
    """A leaderboard from a ratings file's JSON; :class:`RatingsError` naming ``source`` if
    it is not one this version can read."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise RatingsError(f'{source}: not a ratings file (no "format": "{FORMAT}")')
    version = _count(data.get("version"))
    if version is None:
        raise RatingsError(f"{source}: damaged ratings file: no format version")
    if version > VERSION:
        raise RatingsError(
            f"{source}: ratings format {version} is newer than this moska reads ({VERSION});"
            " upgrade moska-p2p"
        )
    if data.get("model") != MODEL:
        raise RatingsError(f"{source}: ratings of another model ({data.get('model')!r})")
    preset, updated, bots = data.get("preset"), data.get("updated"), data.get("bots")
    runs, games = _count(data.get("runs")), _count(data.get("games"))
    if not isinstance(preset, str) or not preset:
        raise RatingsError(f"{source}: damaged ratings file: no preset")
    if runs is None or games is None or not isinstance(updated, str):
        raise RatingsError(f"{source}: damaged ratings file: runs, games or updated is wrong")
    if not isinstance(bots, dict):
        raise RatingsError(f"{source}: damaged ratings file: no bots")
    board = Leaderboard(preset, runs, games, updated)
    for name, entry in bots.items():
        record = bot_record(str(name), entry)
        if isinstance(record, str):
            raise RatingsError(f"{source}: damaged ratings file: {record}")
        board.bots[str(name)] = record
    return board


def load(path: Path, preset: str | None = None, *, missing_ok: bool = False) -> Leaderboard:
    """Read the ratings file at ``path``. With ``missing_ok``, a file that does not exist yet
    is an empty leaderboard of ``preset``; with ``preset``, a file of another preset is
    refused. Raises :class:`RatingsError` (one line, naming the file)."""
    try:
        data = read_json(path, "ratings")
    except FileNotFoundError:
        if missing_ok and preset is not None:
            return Leaderboard(preset)
        raise RatingsError(f"{path}: no such ratings file") from None
    board = parse(data, str(path))
    if preset is not None and board.preset != preset:
        raise RatingsError(
            f"{path} rates {board.preset} and this run is {preset}: name another ratings file"
        )
    return board


def read_json(path: Path, kind: str) -> object:
    """The JSON value in the file at ``path``, a ``kind`` file as the messages name it.
    ``FileNotFoundError`` as it is (a first run has none yet); :class:`RatingsError` (one
    line, naming the file) for a folder, an unreadable file, or one that is not JSON (then
    ``damaged``)."""
    try:
        text = path.read_bytes()
    except FileNotFoundError:
        raise
    except IsADirectoryError:
        raise RatingsError(f"{path}: that is a folder; name a {kind} file") from None
    except OSError as error:
        raise RatingsError(f"{path}: cannot read it: {error.strerror or error}") from None
    try:
        return json.loads(text)
    except (UnicodeDecodeError, ValueError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise RatingsError(
            f"{path}: not a {kind} file (not JSON: {reason})", damaged=True
        ) from None


def save(path: Path, board: Leaderboard) -> None:
    """Write ``board`` to ``path`` atomically (:func:`save_json`)."""
    save_json(path, board.to_json())


def save_json(path: Path, value: Mapping[str, Any]) -> None:
    """Write ``value`` as JSON to ``path`` atomically: a temporary file beside it, flushed to
    disk, renamed over it. Whatever stops this midway leaves the old file whole and no
    temporary file behind. Raises ``OSError`` if it cannot be written."""
    data = (json.dumps(value, indent=2) + "\n").encode()
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        if path.exists():  # keep the file's permissions (mkstemp makes it 0600)
            os.chmod(temporary, path.stat().st_mode & 0o777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(temporary, 0o666 & ~umask)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
