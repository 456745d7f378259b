"""The arena: bots against bots on the engine alone, fast, with statistics (:mod:`.arena`:
duplicate deals, jobs, reproducible runs; :mod:`.stats` loss rates, intervals, ratings;
:mod:`.ratings` a leaderboard across runs; :mod:`.plot` its chart; :mod:`.p2p` every game
through the protocol; :mod:`.cluster` the games on a Dask cluster).

``__all__`` is what the command line and the club's leaderboard use, and the game loop the
arena runs (:func:`~moska_p2p.table.local.play_game`, with its record), which the package has
always offered. The arena's own names are imported from their module on first use, not with
the package: a loss rate's interval (:mod:`.stats`) should not load the protocol that
:mod:`.p2p` plays.
"""

from __future__ import annotations

from ..exports import LazyExports
from ..table.local import GameRecord, play_game

__all__ = [
    "MODEL",
    "ArenaError",
    "ArenaFailed",
    "ArenaResult",
    "BotRecord",
    "GameOutcome",
    "GameRecord",
    "PlotError",
    "Rater",
    "RatingsError",
    "bot_record",
    "check_replay",
    "play_game",
    "read_json",
    "replay_files",
    "run_arena",
    "save_json",
    "wilson_interval",
]

# fmt: off
__getattr__ = LazyExports(__name__, {  # module: its names, imported on first use
    ".arena": ("ArenaError", "ArenaFailed", "ArenaResult", "check_replay", "replay_files",
               "run_arena"),
    ".plot": ("PlotError",),
    ".ratings": ("MODEL", "BotRecord", "Rater", "RatingsError", "bot_record", "read_json",
                 "save_json"),
    ".stats": ("GameOutcome", "wilson_interval"),
})
# fmt: on
