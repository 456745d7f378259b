"""Table settings that every peer signs its agreement to before a game (the lobby).

A :class:`TableConfig` is plain data with one canonical encoding; its hash, with the sorted
roster of the players' public keys, is the *table id* that the first message of every peer
carries. A fresh ``table_nonce`` per game makes every table id new, so a signed message of an
earlier game can never be mistaken for one of this game.

A table that plays a *session* (RULES M24: ``moska host --games N``) adds its place in the
session to the settings: the planned number of games, this game's number, and from the
second game on the seats (kept from the first game), the dealer (the previous game's loser)
and the previous game's id. So every game of a session has its own table id, hence its own
game id bound into every signature (a frame of game 1 is "another game" in game 2), and each
game's settings chain it to the one before: a verifier can check the order of the games and
who dealt from the transcripts alone (:mod:`.tally`).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ..engine import make_rules
from ..errors import ConfigError as ConfigError

PROTOCOL_VERSION = 3
DEFAULT_TIMEOUT = 30.0
MAX_OPTIONS = 32
MAX_OPTION_TEXT = 40
_OPTION_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
_WIRE_FIELDS = ("preset", "players", "options", "timeout", "nonce", "version")
_SESSION_FIELDS = ("games", "game", "seating", "dealer", "previous")
MAX_GAMES = 100
"""Games a session may plan at most (the signed session result lists every one)."""



@dataclass(frozen=True)
class TableConfig:
    preset: str
    players: int
    table_nonce: bytes
    options: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT  # seconds a peer may take to answer (abandon after)
    version: int = PROTOCOL_VERSION
    games: int = 1  # the session's planned games (M24); 1: a single game, no session fields
    game: int = 1  # this game's number in the session, from 1
    seating: tuple[bytes, ...] = ()  # game 2 on: the seats' keys, seat 0 first (game 1's)
    dealer: int = -1  # game 2 on: the dealer's seat, the previous game's loser (M24)
    previous: bytes = b""  # game 2 on: the previous game's id

    def __post_init__(self) -> None:
        if not isinstance(self.preset, str) or not isinstance(self.options, Mapping):
            raise ConfigError("the preset must be text and the options a map")
        if type(self.players) is not int:
            raise ConfigError("the number of players must be an integer")
        if not isinstance(self.table_nonce, bytes):
            raise ConfigError("the table nonce must be bytes")
        if len(self.options) > MAX_OPTIONS:
            raise ConfigError(f"more than {MAX_OPTIONS} options")
        for name, value in self.options.items():
            if not isinstance(name, str) or not _OPTION_NAME.fullmatch(name):
                raise ConfigError(f"{name!r} is not an option name (lower case, digits, _ or -)")
            if not isinstance(value, str) or len(value) > MAX_OPTION_TEXT:
                raise ConfigError(f"option {name} must be text of at most {MAX_OPTION_TEXT}")
        try:
            rules = make_rules(self.preset, **dict(self.options))
        except (ValueError, TypeError) as error:  # TypeError: an option named like an argument
            raise ConfigError(f"bad table settings: {error}") from None
        if not rules.min_players <= self.players <= rules.max_players:
            raise ConfigError(
                f"{self.preset} is for {rules.min_players} to {rules.max_players} players"
            )
        if rules.teams and self.players % 2:
            raise ConfigError("durak-teams needs 4 or 6 players")
        if len(self.table_nonce) != 32:
            raise ConfigError("the table nonce must be 32 bytes")
        if (
            not isinstance(self.timeout, float | int)
            or isinstance(self.timeout, bool)
            or not math.isfinite(self.timeout)
            or not 0 < self.timeout <= 3600
        ):
            raise ConfigError("the timeout must be between 0 and 3600 seconds")
        self._check_session()

    def _check_session(self) -> None:
        games, game = self.games, self.game
        if type(games) is not int or type(game) is not int:
            raise ConfigError("the session's games and game number must be integers")
        if not 1 <= games <= MAX_GAMES:
            raise ConfigError(f"a session plays 1 to {MAX_GAMES} games, not {games}")
        if not 1 <= game <= games:
            raise ConfigError(f"game {game} is not one of the session's {games}")
        if not isinstance(self.seating, tuple) or not isinstance(self.previous, bytes):
            raise ConfigError("the seating must be a tuple of keys and previous bytes")
        if type(self.dealer) is not int:
            raise ConfigError("the dealer must be an integer")
        if game == 1:
            if self.seating or self.dealer != -1 or self.previous:
                raise ConfigError("the first game draws its seats and dealer (M2)")
            return
        seats = self.seating
        if len(seats) != self.players or len(set(seats)) != len(seats):
            raise ConfigError(f"the seating must list {self.players} distinct keys")
        if not all(isinstance(k, bytes) and len(k) == 32 for k in seats):
            raise ConfigError("the seating must list 32-byte keys")
        if not 0 <= self.dealer < self.players:
            raise ConfigError(f"the dealer must be a seat 0..{self.players - 1}")
        if len(self.previous) != 32:
            raise ConfigError("the previous game's id must be 32 bytes")

    @property
    def in_session(self) -> bool:
        """Whether this table plays a session of games (the settings carry ``session``)."""
        return self.games > 1

    def first(self) -> TableConfig:
        """The settings of the session's first game (what its id is made of)."""
        return replace(self, game=1, seating=(), dealer=-1, previous=b"")

    def next_game(self, previous: bytes, seating: Sequence[bytes], dealer: int) -> TableConfig:
        """The settings of the session's next game: the seats kept, the previous game's loser
        dealing (M24), chained to the previous game by its id."""
        if self.game >= self.games:
            raise ConfigError(f"the session has only {self.games} games")
        return replace(
            self, game=self.game + 1, seating=tuple(seating), dealer=dealer, previous=previous
        )

    def to_wire(self) -> dict[str, Any]:
        """The config as a msgpack-ready map (options sorted by name)."""
        return {
            "preset": self.preset,
            "players": self.players,
            "options": {k: str(self.options[k]) for k in sorted(self.options)},
            "timeout": float(self.timeout),
            "nonce": self.table_nonce,
            "version": self.version,
        } | (
            {
                "session": {
                    "games": self.games,
                    "game": self.game,
                    "seating": list(self.seating),
                    "dealer": self.dealer,
                    "previous": self.previous,
                }
            }
            if self.in_session
            else {}
        )

    @classmethod
    def from_wire(cls, data: object) -> TableConfig:
        """The config a peer sent (:meth:`to_wire`'s map); :class:`ConfigError` for anything
        else, never another exception: not a map, a missing or unknown field, a value of the
        wrong type, an unknown option or value (an option named ``preset`` included)."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"the table settings must be a map, not {type(data).__name__}")
        unknown = sorted(str(k) for k in data if k not in (*_WIRE_FIELDS, "session"))
        if unknown:
            raise ConfigError(f"unknown table setting {unknown[0][:40]!r}")
        missing = [k for k in _WIRE_FIELDS if k not in data]
        if missing:
            raise ConfigError(f"the table settings lack {missing[0]!r}")
        options = data["options"]
        if not isinstance(options, Mapping) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in options.items()
        ):
            raise ConfigError("options must map names to text values")
        preset, players, timeout = data["preset"], data["players"], data["timeout"]
        nonce, version = data["nonce"], data["version"]
        if not isinstance(preset, str) or type(players) is not int:
            raise ConfigError("preset must be text and players an integer")
        if not isinstance(timeout, float | int) or isinstance(timeout, bool):
            raise ConfigError("timeout must be a number")
        if not isinstance(nonce, bytes) or type(version) is not int:
            raise ConfigError("nonce must be bytes and version an integer")
        if version != PROTOCOL_VERSION:
            raise ConfigError(
                f"protocol version {version}, and this moska speaks version {PROTOCOL_VERSION}:"
                " it comes from another release of moska-p2p (every seat needs the same one)"
            )
        session: dict[str, Any] = {}
        if "session" in data:
            place = data["session"]
            if not isinstance(place, Mapping) or set(place) != set(_SESSION_FIELDS):
                raise ConfigError(f"the session settings must be a map of {_SESSION_FIELDS}")
            seating = place["seating"]
            if not isinstance(seating, list) or not all(isinstance(k, bytes) for k in seating):
                raise ConfigError("the session's seating must be a list of keys")
            session = {k: place[k] for k in _SESSION_FIELDS} | {"seating": tuple(seating)}
            if place["games"] == 1:
                raise ConfigError("a single game carries no session settings")
        try:
            return cls(
                preset, players, nonce, dict(options), float(timeout), version, **session
            )
        except TypeError as error:  # pragma: no cover - every field is checked above
            raise ConfigError(str(error)) from None

    def canonical(self) -> bytes:
        """A canonical byte form (independent of msgpack), for hashing."""
        parts = [
            f"v={self.version}",
            f"preset={self.preset}",
            f"players={self.players}",
            f"timeout={self.timeout!r}",
            "options=" + ",".join(f"{k}={self.options[k]}" for k in sorted(self.options)),
        ]
        text = "\n".join(parts).encode() + b"\nnonce=" + self.table_nonce
        if self.in_session:  # after the fixed-size nonce: unambiguous
            text += f"\nsession={self.games}/{self.game}\ndealer={self.dealer}".encode()
            text += b"\nseating=" + b"".join(self.seating) + b"\nprevious=" + self.previous
        return text


def table_id(config: TableConfig, roster: Sequence[bytes]) -> bytes:
    """The id of a table: its settings and its players (public keys, sorted)."""
    h = hashlib.sha256(b"moska-p2p/table\n")
    h.update(config.canonical())
    for key in sorted(roster):
        h.update(key)
    return h.digest()


def session_id(config: TableConfig, roster: Sequence[bytes]) -> bytes:
    """The id of a session: the table id of its first game (its settings with the planned
    number of games, and its players)."""
    return table_id(config.first(), roster)


def lobby_id(config: TableConfig) -> bytes:
    """The id of a table while it fills (its roster unknown): what a joiner's proof of key and
    roster entry are bound to. It is the :func:`table_id` with no players, so it commits to
    the settings the joiner was shown."""
    return table_id(config, ())


def game_id(table: bytes, nonces: Sequence[bytes]) -> bytes:
    """The id of a game: the table's id and every peer's nonce (roster order)."""
    h = hashlib.sha256(b"moska-p2p/game\n" + table)
    for nonce in nonces:
        h.update(nonce)
    return h.digest()
