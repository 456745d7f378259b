"""The arena through the protocol (``moska arena --p2p``): the soak test of the trust layer.

Every game is played by one :class:`~moska_p2p.protocol.session.PeerSession` per seat, each
with its own engine, its own share of the mental-poker deck and its own checks of every
proof, key and move (:func:`moska_p2p.table.simulate.play_peer_game`, the loop of ``moska
simulate``). Only the deck differs from the engine-only arena: the protocol shuffles it, so
the games are not the engine-only arena's games. Everything else is the same: the seating
rotation, the bots' seeds (:func:`~.arena.bot_seeds`), the tally, the options. The protocol's
secrets derive from the group's deal seed (:func:`~.arena.deal_seed`), so the ``n`` games of
a group get the same seat draw, dealer and shuffle, and the deals are duplicated here as
well; the game id repeats within a group too, which is harmless for games that never leave
the process (each game's transcripts go to a folder of their own). Seeded keys are for
tournaments of bots only, never for a game between people.

What the engine-only arena cannot see, this one counts: a game stopped by a verdict (a
peer convicted of cheating or of silence) and peers that disagree on how the game ended.
With honest bots both are 0; anything else is a bug of the protocol or a cheat.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .stats import GameOutcome

if TYPE_CHECKING:
    from ..table.simulate import TamperFactory


def play_game(
    preset: str,
    options: Mapping[str, str],
    players: Sequence[Any],
    entries: tuple[int, ...],
    index: int,
    deal: int,
    *,
    budget: float | None,
    max_moves: int,
    tamper: TamperFactory | None = None,
    save_dir: Path | None = None,
    name_width: int = 6,
) -> GameOutcome:
    """Game ``index`` through the protocol, ``players[s]`` at seat ``s`` (bot list entry
    ``entries[s]``), the protocol's secrets from ``deal``; every peer's transcript to
    ``save_dir/game-NNNNNN/`` when given."""
    # Imported here: the engine-only arena never loads the protocol and crypto stack.
    from ..table.simulate import play_peer_game

    game = play_peer_game(
        preset,
        options,
        players,
        deal,
        budget=budget,
        max_moves=max_moves,
        tamper=tamper,
        game=index,
    )
    if save_dir is not None:
        game.save(save_dir / f"game-{index:0{name_width}d}")
    return GameOutcome(
        index,
        entries,
        game.losers,
        game.forfeit,
        game.reason,
        game.unfinished,
        game.moves,
        game.verdict,
        game.named,
        game.disagreeing,
    )
