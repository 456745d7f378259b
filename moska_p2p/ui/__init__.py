"""Play for a person at the terminal: the full-screen table (:mod:`.app`), the table as text
(:mod:`.render`), the seat a person fills (:mod:`.terminal`), ``moska play``'s session
(:mod:`.local`), replays and the text record (:mod:`.replay`, :mod:`.record_text`), bots
watched (:mod:`.watch`) and a network table watched (:mod:`.spectate`).

The layer sits beside the bots: a :class:`~moska_p2p.ui.terminal.TerminalPlayer` speaks the
bot API, so whatever seats a bot (the local driver, a network peer) can seat a person instead.

``__all__`` is what the command line uses. Each name is imported from its module on first
use, not with the package: the terminal's modules load prompt_toolkit, which a replay check
or a record export never needs.
"""

from __future__ import annotations

from ..exports import LazyExports

__all__ = [
    "RECORD_NAME",
    "BoardScreen",
    "LeaderboardError",
    "LocalTable",
    "NotVerified",
    "PlayerRecord",
    "ReplayError",
    "SpectatorScreen",
    "TerminalPlayer",
    "bot_specs",
    "color_wanted",
    "default_path",
    "export_games",
    "load",
    "load_replay",
    "play_session",
    "record_event",
    "render_board",
    "run_replay",
    "seat_names",
    "symbols_wanted",
    "watch_game",
]

# fmt: off
__getattr__ = LazyExports(__name__, {  # module: its names, imported on first use
    ".board": ("BoardScreen", "render_board"),
    ".club_leaderboard": ("LeaderboardError", "default_path", "load", "record_event"),
    ".event_export": ("export_games",),
    ".local": ("LocalTable", "bot_specs", "play_session", "seat_names"),
    ".player_record": ("PlayerRecord", "RECORD_NAME"),
    ".render": ("color_wanted", "symbols_wanted"),
    ".replay": ("NotVerified", "ReplayError", "load_replay", "run_replay"),
    ".spectate": ("SpectatorScreen",),
    ".terminal": ("TerminalPlayer",),
    ".watch": ("watch_game",),
})
# fmt: on
