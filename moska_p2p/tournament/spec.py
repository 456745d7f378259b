"""What an event is: its settings, fixed by the director before anyone enters, and its id.

An event (a club evening, the MM-kisat of seed 003) is rounds of tables: every round draws
the entrants to tables afresh (:mod:`.pairing`, from randomness everyone contributed,
:mod:`.draw`), each table plays ``games_per_round`` games of ``preset`` as one session (RULES
M24), and after the last round the best ``final_size`` entrants may play a final table. The
settings are data that every entrant acknowledges (:mod:`.entry`), so nobody can change them
once the entry closes: the id of the event is a hash of them and of the director's key.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..engine import OptionError, Rules, make_rules
from ..protocol.frames import FrameError, pack


class TournamentError(ValueError):
    """An event's settings, statements or results that are malformed or do not verify.

    The message says what is wrong and, where a person or a key is at fault, names it.
    """


MAX_ROUNDS = 50
MAX_GAMES_PER_ROUND = 50
MAX_ENTRANTS = 120
EVENT_TAG = b"moska-p2p/tournament/event\n"


@dataclass(frozen=True)
class EventSpec:
    """The settings of one event, as the director opens it."""

    name: str
    preset: str
    seats_per_table: int
    rounds: int
    games_per_round: int
    final_size: int = 0  # 0: no final table; else the best N play one (2..6)
    final_games: int = 0  # games of the final table's session
    bots_allowed: bool = True

    def __post_init__(self) -> None:
        rules = self.rules()
        if not 1 <= len(self.name) <= 80:
            raise TournamentError("an event's name is 1 to 80 characters")
        if not rules.min_players <= self.seats_per_table <= rules.max_players:
            raise TournamentError(
                f"{self.preset} seats {rules.min_players} to {rules.max_players} players a "
                f"table, not {self.seats_per_table}"
            )
        if rules.teams and self.seats_per_table % 2:
            raise TournamentError(f"{self.preset} plays in teams of two: an even table size")
        if not 1 <= self.rounds <= MAX_ROUNDS:
            raise TournamentError(f"an event has 1 to {MAX_ROUNDS} rounds, not {self.rounds}")
        if not 1 <= self.games_per_round <= MAX_GAMES_PER_ROUND:
            raise TournamentError(
                f"a round plays 1 to {MAX_GAMES_PER_ROUND} games a table, not "
                f"{self.games_per_round}"
            )
        if self.final_size and not (
            max(2, rules.min_players) <= self.final_size <= rules.max_players
        ):
            raise TournamentError(
                f"a final table of {self.preset} seats {rules.min_players} to "
                f"{rules.max_players}, not {self.final_size}"
            )
        if bool(self.final_size) != bool(self.final_games) or not (
            0 <= self.final_games <= MAX_GAMES_PER_ROUND
        ):
            raise TournamentError("a final table needs its number of games, and only it does")

    def rules(self) -> Rules:
        try:
            return make_rules(self.preset)
        except OptionError as error:
            raise TournamentError(str(error)) from None

    def to_wire(self) -> list[object]:
        return [
            self.name,
            self.preset,
            self.seats_per_table,
            self.rounds,
            self.games_per_round,
            self.final_size,
            self.final_games,
            self.bots_allowed,
        ]

    @classmethod
    def from_wire(cls, item: object) -> EventSpec:
        if not isinstance(item, list) or len(item) != 8:
            raise TournamentError("an event's settings are a list of 8 values")
        name, preset, seats, rounds, games, final_size, final_games, bots = item
        if not isinstance(name, str) or not isinstance(preset, str):
            raise TournamentError("an event's name and preset are texts")
        numbers = (seats, rounds, games, final_size, final_games)
        if any(type(x) is not int for x in numbers) or type(bots) is not bool:
            raise TournamentError("an event's sizes are integers and bots_allowed a bool")
        return cls(name, preset, seats, rounds, games, final_size, final_games, bots)


def event_id(spec: EventSpec, director: bytes, nonce: bytes) -> bytes:
    """The event's id: a hash of its settings, the director's key and a fresh nonce (so two
    events with the same settings are two events, and a statement of one never counts in the
    other)."""
    if len(nonce) != 32:
        raise TournamentError("an event's nonce is 32 bytes")
    try:
        body = pack([spec.to_wire(), director, nonce])
    except FrameError as error:  # pragma: no cover - the spec's checks keep it packable
        raise TournamentError(str(error)) from None
    return hashlib.sha256(EVENT_TAG + body).digest()
