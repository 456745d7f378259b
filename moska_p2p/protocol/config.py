"""Table settings that every peer signs its agreement to before a game (the lobby).

A :class:`TableConfig` is plain data with one canonical encoding; its hash, with the sorted
roster of the players' public keys, is the *table id* that the first message of every peer
carries. A fresh ``table_nonce`` per game makes every table id new, so a signed message of an
earlier game can never be mistaken for one of this game.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..engine import make_rules

PROTOCOL_VERSION = 1
DEFAULT_TIMEOUT = 30.0


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
        try:
            rules = make_rules(self.preset, **dict(self.options))
        except ValueError as error:
            raise ConfigError(str(error)) from None
        if not rules.min_players <= self.players <= rules.max_players:
            raise ConfigError(
                f"{self.preset} is for {rules.min_players} to {rules.max_players} players"
            )
        if rules.teams and self.players % 2:
            raise ConfigError("durak-teams needs 4 or 6 players")
        if len(self.table_nonce) != 32:
            raise ConfigError("the table nonce must be 32 bytes")
        if not 0 < self.timeout <= 3600:
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
    def from_wire(cls, data: Mapping[str, Any]) -> TableConfig:
        try:
            options = data["options"]
            if not isinstance(options, Mapping) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in options.items()
            ):
                raise ConfigError("options must map names to text values")
            preset, players, timeout = data["preset"], data["players"], data["timeout"]
            nonce, version = data["nonce"], data["version"]
        except KeyError as missing:
            raise ConfigError(f"the table settings lack {missing}") from None
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


def game_id(table: bytes, nonces: Sequence[bytes]) -> bytes:
    """The id of a game: the table's id and every peer's nonce (roster order)."""
    h = hashlib.sha256(b"moska-p2p/game\n" + table)
    for nonce in nonces:
        h.update(nonce)
    return h.digest()
