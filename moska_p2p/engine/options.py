"""Presets and options as data (RULES.md option and preset tables).

One :class:`Rules` value describes a whole variant; the engine reads its fields, so a preset
is a row of data, never a subclass. Option values are the strings of RULES.md so that a table
setting can be written, signed and compared as text.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

MOSKA, DURAK, MUSTAMAIJA, KAAVI = "moska", "durak", "mustamaija", "kaavi"

# Values of each option, the default first (RULES "Moska options", D5, D11).
MOSKA_OPTIONS: dict[str, tuple[str, ...]] = {
    "limit": ("six-or-hand", "hand", "none"),
    "throw_in_ranks": ("all", "attack-only"),
    "trump_exchange": ("any-time", "before-first-attack", "never"),
    "self_execution": ("off", "on", "on-with-draw"),
    "deck_kill": ("off", "on"),
    "expose_second_last": ("off", "on"),
}
DURAK_OPTIONS: dict[str, tuple[str, ...]] = {
    "first_bout_limit": ("off", "5"),
}
PEREVODNOY_OPTIONS: dict[str, tuple[str, ...]] = {
    "transfer_show_trump": ("off", "on"),
}


@dataclass(frozen=True)
class Rules:
    """Everything that distinguishes one variant from another."""

    preset: str
    family: str
    lowest_rank: int = 0  # 0: 52 cards (2..A); 4: 36 cards (6..A), RULES D1
    hand_size: int = 6
    min_players: int = 2
    max_players: int = 6
    limit: str = "six-or-hand"
    throw_in_ranks: str = "all"
    trump_exchange: str = "any-time"
    self_execution: str = "off"
    deck_kill: str = "off"
    expose_second_last: str = "off"
    first_bout_limit: str = "off"
    transfer: bool = False
    transfer_show_trump: str = "off"
    teams: bool = False

    @property
    def pack_size(self) -> int:
        return 52 - 4 * self.lowest_rank

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle as a call of the constructor: a frozen dataclass compiled by mypyc cannot be
        rebuilt field by field, as pickle does by default."""
        return (Rules, tuple(getattr(self, field.name) for field in fields(self)))

    def options(self) -> dict[str, str]:
        """The settable options of this preset with their current values."""
        names = _settable(self.preset)
        values = asdict(self)
        return {name: values[name] for name in names}


_BASE: dict[str, Rules] = {
    "moska": Rules("moska", MOSKA),
    "turamoska": Rules("turamoska", MOSKA, limit="hand"),
    "turamoska-pyhaselka": Rules("turamoska-pyhaselka", MOSKA, limit="none"),
    "moska-simple": Rules("moska-simple", MOSKA, throw_in_ranks="attack-only"),
    "taraki": Rules("taraki", MOSKA, self_execution="on", trump_exchange="never"),
    "taraki-mm": Rules(
        "taraki-mm", MOSKA, self_execution="on-with-draw", trump_exchange="before-first-attack"
    ),
    "kaavi": Rules("kaavi", KAAVI),
    "durak": Rules("durak", DURAK, lowest_rank=4),
    "durak-52": Rules("durak-52", DURAK),
    "perevodnoy": Rules("perevodnoy", DURAK, lowest_rank=4, transfer=True),
    "durak-teams": Rules("durak-teams", DURAK, lowest_rank=4, min_players=4, teams=True),
    "mustamaija": Rules("mustamaija", MUSTAMAIJA, hand_size=5),
}

PRESETS: tuple[str, ...] = tuple(_BASE)


def _settable(preset: str) -> dict[str, tuple[str, ...]]:
    family = _BASE[preset].family
    if family == MOSKA:
        return MOSKA_OPTIONS
    if family == DURAK:
        extra = PEREVODNOY_OPTIONS if _BASE[preset].transfer else {}
        return DURAK_OPTIONS | extra
    return {}  # Kaavi (K: "other option values are refused") and Mustamaija have none


class OptionError(ValueError):
    """An unknown preset, option or option value."""


def make_rules(preset: str, **options: Any) -> Rules:
    """The rules of ``preset`` with ``options`` changed, every name and value checked."""
    if preset not in _BASE:
        raise OptionError(f'unknown preset "{preset}": choose one of {", ".join(PRESETS)}')
    base = _BASE[preset]
    settable = _settable(preset)
    changes: dict[str, Any] = {}
    for name, value in options.items():
        if value is None:
            continue
        key = name.replace("-", "_")
        text = str(value).lower()
        if key not in settable:
            if preset == "kaavi" and key in MOSKA_OPTIONS:
                default = MOSKA_OPTIONS[key][0]
                if text == default:
                    continue
                raise OptionError(
                    f'preset kaavi plays option {key} at its default "{default}" only (RULES K)'
                )
            known = ", ".join(settable) or "none"
            raise OptionError(f'preset {preset} has no option "{name}" (its options: {known})')
        if text not in settable[key]:
            allowed = ", ".join(settable[key])
            raise OptionError(f'option {key} cannot be "{value}": choose one of {allowed}')
        changes[key] = text
    return replace(base, **changes) if changes else base
