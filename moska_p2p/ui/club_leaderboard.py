"""The club's leaderboard: OpenSkill ratings of its members, people and bots, carried from
one event to the next, in a file of the data folder.

Each event adds its games (:func:`~moska_p2p.tournament.leaderboard.ranked_games`: each game
a ranking, the losers last) to the ratings the file holds, with the arena's own
:class:`~moska_p2p.arena.ratings.Rater` (the same model and update as ``moska arena
--ratings``), and remembers the event's id, so an event is rated once even if its runner
records it again after a crash. A member is its key (as in the event: a name can change
between events, a key cannot); the file keeps the name it last played under.

The file, format version 1, is one JSON object::

    {
      "format": "moska-club-leaderboard", # what the file is: anything else is refused
      "version": 1,                       # a later version is refused, not misread
      "model": "openskill-plackett-luce", # the rating model (mu 25, sigma 25/3 at first)
      "preset": "moska",                  # one game a file: Durak skill says nothing of Moska
      "games": 180,                       # games rated, over all events
      "updated": "2026-12-07T21:40:00Z",
      "events": [{"id": "<event id, hex>", "name": "club night", "games": 36,
                  "rated": "2026-12-07T21:40:00Z"}],
      "players": {"<public key, hex>": {"name": "alice", "plays": "person", "events": 3,
                  "mu": 27.1, "sigma": 3.2, "games": 54, "updated": "2026-12-07T21:40:00Z"}}
    }

It is replaced atomically (the arena's :func:`~moska_p2p.arena.ratings.save_json`), so a crash
leaves the old leaderboard or the new one. A file that is damaged (not JSON, fields missing
or wrong) is never written over and never lost: :func:`record_event` keeps it aside, beside
itself (``NAME.damaged-<UTC time>``), says so, and starts the leaderboard afresh. A file of
a later version, of another preset, or of another kind is refused and left as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..arena.ratings import (
    MODEL,
    BotRecord,
    Rater,
    RatingsError,
    bot_record,
    read_json,
    save_json,
)
from ..arena.stats import GameOutcome
from ..dirs import data_dir
from ..tournament.entry import BOT, PERSON, Entrant
from ..tournament.leaderboard import RankedGame

FORMAT = "moska-club-leaderboard"
VERSION = 1
DAMAGED = ".damaged-"


class LeaderboardError(RatingsError):
    """A leaderboard file that cannot be used. ``damaged``: its contents are broken (and
    :func:`record_event` keeps it aside); otherwise it is sound but not for this (a later
    version, another preset, another kind of file, unreadable), and is left alone."""


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Member:
    """One member's line: the name and kind it last played under, its events, its rating."""

    name: str
    plays: str
    events: int
    rating: BotRecord

    @property
    def ordinal(self) -> float:
        return self.rating.ordinal


@dataclass
class RatedEvent:
    id: str  # hex
    name: str
    games: int
    rated: str


@dataclass
class ClubLeaderboard:
    """The contents of a leaderboard file (see the module docstring)."""

    preset: str
    games: int = 0
    updated: str = ""
    events: list[RatedEvent] = field(default_factory=list)
    members: dict[str, Member] = field(default_factory=dict)  # by public key, hex

    def has_event(self, event: bytes) -> bool:
        return any(rated.id == event.hex() for rated in self.events)

    def rate_event(
        self,
        event: bytes,
        name: str,
        entrants: Sequence[Entrant],
        games: Sequence[RankedGame],
        now: str | None = None,
    ) -> int:
        """Rate an event's games in order, from the ratings held; the games rated.
        :class:`LeaderboardError` if the event was rated already, or a game seats a key that
        is not among ``entrants``."""
        if self.has_event(event):
            raise LeaderboardError(f"event {event.hex()[:16]} is on the leaderboard already")
        when = now or _now()
        known = {entrant.key.hex(): entrant for entrant in entrants}
        rater = Rater({key: (m.rating.mu, m.rating.sigma) for key, m in self.members.items()})
        played: dict[str, int] = {}
        for number, game in enumerate(games):
            keys = [key.hex() for key in game.players]
            if not set(keys) <= set(known):
                raise LeaderboardError(f"game {number + 1} of the event seats a non-entrant")
            outcome = GameOutcome(number, tuple(range(len(keys))), game.losers, None, "", False, 0)
            for key in rater.play(keys, outcome):
                played[key] = played.get(key, 0) + 1
        for key, count in played.items():
            mu, sigma = rater.rating(key)
            entrant, old = known[key], self.members.get(key)
            self.members[key] = Member(
                entrant.name,
                entrant.plays,
                (old.events if old else 0) + 1,
                BotRecord(mu, sigma, (old.rating.games if old else 0) + count, when),
            )
        rated = len(games)
        self.events.append(RatedEvent(event.hex(), name, rated, when))
        self.games += rated
        self.updated = when
        return rated

    def standings(self) -> list[tuple[int, str, Member]]:
        """``(rank, key hex, member)``, best first by ordinal (mu - 3 sigma), then name."""
        order = sorted(self.members.items(), key=lambda kv: (-kv[1].ordinal, kv[1].name, kv[0]))
        return [(rank, key, member) for rank, (key, member) in enumerate(order, start=1)]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "model": MODEL,
            "preset": self.preset,
            "games": self.games,
            "updated": self.updated,
            "events": [vars(rated) for rated in self.events],
            "players": {
                key: {
                    "name": m.name,
                    "plays": m.plays,
                    "events": m.events,
                    "mu": m.rating.mu,
                    "sigma": m.rating.sigma,
                    "games": m.rating.games,
                    "updated": m.rating.updated,
                }
                for key, m in sorted(self.members.items())
            },
        }


def _whole(value: object) -> int | None:
    return value if type(value) is int and value >= 0 else None


def _event(item: object) -> RatedEvent | str:
    if not isinstance(item, dict):
        return "an event is not an object"
    eid, name, games, rated = (item.get(k) for k in ("id", "name", "games", "rated"))
    count = _whole(games)
    if not (isinstance(eid, str) and len(eid) == 64 and all(c in "0123456789abcdef" for c in eid)):
        return "an event's id must be 64 hex digits"
    if not isinstance(name, str) or count is None or not isinstance(rated, str):
        return f"event {eid[:16]}: name, games or rated is wrong"
    return RatedEvent(eid, name, count, rated)


def _member(key: str, item: object) -> Member | str:
    record = bot_record(key[:16], item)
    if isinstance(record, str):
        return record
    assert isinstance(item, dict)  # bot_record refuses anything else
    name, plays, events = item.get("name"), item.get("plays"), _whole(item.get("events"))
    if not isinstance(name, str) or plays not in (PERSON, BOT) or events is None:
        return f"player {key[:16]}: name, plays or events is wrong"
    return Member(name, str(plays), events, record)


def parse(data: object, source: str) -> ClubLeaderboard:
    """A leaderboard from its file's JSON; :class:`LeaderboardError` naming ``source``."""
    if not isinstance(data, dict):
        raise LeaderboardError(f"{source}: damaged leaderboard: not a JSON object", damaged=True)
    if data.get("format") != FORMAT:
        raise LeaderboardError(f'{source}: not a club leaderboard (no "format": "{FORMAT}")')
    version = _whole(data.get("version"))
    if version is not None and version > VERSION:
        raise LeaderboardError(
            f"{source}: leaderboard format {version} is newer than this moska reads"
            f" ({VERSION}); upgrade moska-p2p"
        )

    def damaged(what: str) -> LeaderboardError:
        return LeaderboardError(f"{source}: damaged leaderboard: {what}", damaged=True)

    if version is None:
        raise damaged("no format version")
    if data.get("model") != MODEL:
        raise LeaderboardError(f"{source}: ratings of another model ({data.get('model')!r})")
    preset, games, updated = data.get("preset"), _whole(data.get("games")), data.get("updated")
    events, players = data.get("events"), data.get("players")
    if not isinstance(preset, str) or not preset:
        raise damaged("no preset")
    if games is None or not isinstance(updated, str):
        raise damaged("games or updated is wrong")
    if not isinstance(events, list) or not isinstance(players, dict):
        raise damaged("no events or no players")
    board = ClubLeaderboard(preset, games, updated)
    for item in events:
        rated = _event(item)
        if isinstance(rated, str):
            raise damaged(rated)
        board.events.append(rated)
    for key, item in players.items():
        member = _member(str(key), item)
        if isinstance(member, str):
            raise damaged(member)
        board.members[str(key)] = member
    return board


def default_path(preset: str) -> Path:
    """Where a club's leaderboard of ``preset`` is kept by default: the data folder."""
    return data_dir() / f"leaderboard-{preset}.json"


def load(path: Path, preset: str | None = None, *, missing_ok: bool = False) -> ClubLeaderboard:
    """Read the leaderboard at ``path`` (``missing_ok``: none yet is an empty one of
    ``preset``); with ``preset``, one of another preset is refused."""
    try:
        data = read_json(path, "leaderboard")
    except FileNotFoundError:
        if missing_ok and preset is not None:
            return ClubLeaderboard(preset)
        raise LeaderboardError(f"{path}: no such leaderboard file") from None
    except RatingsError as error:
        raise LeaderboardError(str(error), damaged=error.damaged) from None
    board = parse(data, str(path))
    if preset is not None and board.preset != preset:
        raise LeaderboardError(
            f"{path} rates {board.preset} and this event is {preset}: name another file"
        )
    return board


def save(path: Path, board: ClubLeaderboard) -> None:
    """Write ``board`` to ``path`` atomically; ``OSError`` if it cannot be written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    save_json(path, board.to_json())


def set_aside(path: Path) -> Path:
    """Rename a damaged file to ``NAME.damaged-<UTC time>`` beside it (never over another
    file); where it went."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    target = path.with_name(f"{path.name}{DAMAGED}{stamp}")
    number = 1
    while target.exists():
        number += 1
        target = path.with_name(f"{path.name}{DAMAGED}{stamp}-{number}")
    path.rename(target)
    return target


@dataclass
class Recorded:
    """What :func:`record_event` did: the leaderboard now, the games it rated (0: the event
    was on it already), and where a damaged file was kept aside (``None``: it was not)."""

    board: ClubLeaderboard
    rated: int
    kept_aside: Path | None = None


def record_event(
    path: Path,
    preset: str,
    event: bytes,
    name: str,
    entrants: Sequence[Entrant],
    games: Sequence[RankedGame],
    now: str | None = None,
) -> Recorded:
    """Add an event to the leaderboard at ``path`` (made if there is none): read it, rate
    the event's games, write it back atomically. An event on it already changes nothing. A
    damaged file is kept aside (:func:`set_aside`) and the leaderboard starts afresh with
    this event; any other :class:`LeaderboardError` (a later version, another preset) is
    raised with the file untouched, as is an ``OSError`` writing it."""
    kept: Path | None = None
    try:
        board = load(path, preset, missing_ok=True)
    except LeaderboardError as error:
        if not error.damaged:
            raise
        kept = set_aside(path)
        board = ClubLeaderboard(preset)
    if board.has_event(event):
        return Recorded(board, 0, kept)
    rated = board.rate_event(event, name, entrants, games, now)
    save(path, board)
    return Recorded(board, rated, kept)
