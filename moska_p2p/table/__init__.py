"""The table: one game driven for its seats, wherever the dealer is.

* :mod:`.seat` — whoever plays a seat, and the :class:`~.seat.Referee` that asks it for a move
  and turns every failure into the same forfeit;
* :mod:`.local` — a full-information engine with every seat in this process (the arena,
  ``moska play``);
* :mod:`.simulate` — every seat its own peer session, on an in-memory network
  (``moska simulate``, the protocol's test harness);
* :mod:`.networked` — this peer's seat at a table on the network: a bot or a person plays
  through the node's :class:`~moska_p2p.net.port.GamePort`.

``__all__`` is what the other packages use. Each name is imported from its module on first
use, not with the package: :mod:`.networked` brings trio and the whole network layer, which
the arena and ``moska play`` (:mod:`.local`) never need.
"""

from __future__ import annotations

from ..exports import LazyExports

__all__ = [
    "DEFAULT_BUDGET",
    "WAIT_EVERY",
    "BotAtTable",
    "Forfeit",
    "GameRecord",
    "LeaveTable",
    "PersonAtTable",
    "Referee",
    "TamperFactory",
    "is_trusted",
    "play_game",
    "play_peer_game",
    "run_game",
    "watched_wait",
]

# fmt: off
__getattr__ = LazyExports(__name__, {  # module: its names, imported on first use
    ".local": ("GameRecord", "play_game"),
    ".networked": ("BotAtTable", "PersonAtTable", "WAIT_EVERY", "watched_wait"),
    ".seat": ("DEFAULT_BUDGET", "Forfeit", "LeaveTable", "Referee", "is_trusted"),
    ".simulate": ("TamperFactory", "play_peer_game", "run_game"),
})
# fmt: on
