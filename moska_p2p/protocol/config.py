"""Table settings that every peer signs its agreement to before a game (the lobby).

A :class:`TableConfig` is plain data with one canonical encoding; its hash, with the sorted
roster of the players' public keys, is the *table id* that the first message of every peer
carries. A fresh ``table_nonce`` per game makes every table id new, so a signed message of an
earlier game can never be mistaken for one of this game.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine import make_rules

PROTOCOL_VERSION = 2
DEFAULT_TIMEOUT = 30.0
MAX_OPTIONS = 32
MAX_OPTION_TEXT = 40
_OPTION_NAME = re.compile(r"[a-z][a-z0-9_-]{0,39}")
_WIRE_FIELDS = ("preset", "players", "options", "timeout", "nonce", "version")


class ConfigError(ValueError):
    """Table settings that cannot make a game."""


@dataclass(frozen=True)
class TableConfig:
    preset: str
    players: int
    table_nonce: bytes
    options: Mapping[str, str] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT  # seconds a peer may take to answer (abandon after)
    version: int = PROTOCOL_VERSION

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

    def to_wire(self) -> dict[str, Any]:
        """The config as a msgpack-ready map (options sorted by name)."""
        return {
            "preset": self.preset,
            "players": self.players,
            "options": {k: str(self.options[k]) for k in sorted(self.options)},
            "timeout": float(self.timeout),
            "nonce": self.table_nonce,
            "version": self.version,
        }

    @classmethod
    def from_wire(cls, data: object) -> TableConfig:
        """The config a peer sent (:meth:`to_wire`'s map); :class:`ConfigError` for anything
        else, never another exception: not a map, a missing or unknown field, a value of the
        wrong type, an unknown option or value (an option named ``preset`` included)."""
        if not isinstance(data, Mapping):
            raise ConfigError(f"the table settings must be a map, not {type(data).__name__}")
        unknown = sorted(str(k) for k in data if k not in _WIRE_FIELDS)
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
            raise ConfigError(f"protocol version {version} is not {PROTOCOL_VERSION}")
        return cls(preset, players, nonce, dict(options), float(timeout), version)

    def canonical(self) -> bytes:
        """A canonical byte form (independent of msgpack), for hashing."""
        parts = [
            f"v={self.version}",
            f"preset={self.preset}",
            f"players={self.players}",
            f"timeout={self.timeout!r}",
            "options=" + ",".join(f"{k}={self.options[k]}" for k in sorted(self.options)),
        ]
        return "\n".join(parts).encode() + b"\nnonce=" + self.table_nonce


def table_id(config: TableConfig, roster: Sequence[bytes]) -> bytes:
    """The id of a table: its settings and its players (public keys, sorted)."""
    h = hashlib.sha256(b"moska-p2p/table\n")
    h.update(config.canonical())
    for key in sorted(roster):
        h.update(key)
    return h.digest()


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
