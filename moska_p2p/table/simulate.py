"""Every seat its own peer, in one process: the game loop of ``moska simulate``.

Each :class:`~moska_p2p.protocol.session.PeerSession` on the in-memory
:class:`~moska_p2p.protocol.simulate.Network` is played by its seat through the
:class:`~.seat.Referee`: a bot that fails leaves the table with a signed ``leave`` whose reason
is the forfeit's, as a network peer's bot would (:mod:`.networked`), so the other peers'
verdicts name it.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..crypto.identity import Identity
from ..engine import Move, View
from ..protocol.config import TableConfig
from ..protocol.session import DONE, STOPPED, PeerSession
from ..protocol.simulate import Network, SimulationResult, Tamper, make_peers, save_transcripts
from ..protocol.verdict import LEFT
from .seat import DEFAULT_BUDGET, Forfeit, Referee, is_trusted


def run_game(
    network: Network,
    seats: Sequence[Any],
    *,
    max_steps: int = 20_000,
    step_time: float = 0.0,
    stall_time: float | None = None,
    budget: float | None = DEFAULT_BUDGET,
    max_moves: int | None = None,
    on_forfeit: Callable[[int, Forfeit], None] | None = None,
) -> SimulationResult:
    """Start every peer and play until every session is done or stopped.

    ``seats[i]`` decides for session ``i`` (at the session's seat). When nothing moves, the
    virtual clock jumps by ``stall_time`` (default: past the timeout) and every session ticks,
    so a peer that stops answering ends the game with a timeout verdict instead of hanging.
    ``max_moves`` leaves the game unfinished after that many moves (the arena's cap);
    ``on_forfeit(i, forfeit)`` hears of session ``i``'s seat failing before its peer leaves,
    so a driver can tell a seat's own forfeit from a verdict the protocol reached.
    """
    sessions = network.sessions
    referees = [Referee([seat], budget) for seat in seats]  # one per peer: each has one seat
    for index, session in enumerate(sessions):
        network.handle(index, session.start(network.clock))
    jump = stall_time if stall_time is not None else sessions[0].config.timeout + 1.0
    played = 0
    for _ in range(max_steps):
        network.deliver_all()
        if all(s.stage in (DONE, STOPPED) for s in sessions):
            break
        if max_moves is not None and played >= max_moves:
            break
        acted = False
        for index, session in enumerate(sessions):
            if session.my_turn and session.stage != STOPPED and session.game is not None:
                view = session.game.view(session.my_seat)
                network.clock += step_time
                try:
                    move = referees[index].ask(0, view, session.legal_moves())
                except Forfeit as failure:
                    if on_forfeit is not None:
                        on_forfeit(index, failure)
                    network.handle(index, session.leave(failure.leave_reason, network.clock))
                else:
                    network.handle(index, session.play(move, network.clock))
                    played += 1
                acted = True
                break
        if not acted:
            network.clock += jump
            for index, session in enumerate(sessions):
                network.handle(index, session.tick(network.clock))
            if not network.queue and all(
                s.stage in (DONE, STOPPED) or not s.waiting_on() for s in sessions
            ):
                break
    network.deliver_all()
    for referee in referees:
        referee.close()
    return SimulationResult(
        sessions,
        network.verdicts,
        network.rejected,
        network.frames,
        network.bytes,
        network.clock,
        network.events,
    )


TamperFactory = Callable[[int, Network], Tamper | None]
"""``factory(game, network)``: the tamper hook of one arena game's network (or ``None``),
made once its peers exist so the hook can look at them (the adversary harness's cheaters)."""


@dataclass
class PeerGame:
    """One game played by every seat's own peer, judged as the arena counts it.

    Each peer ends with an outcome of its own: finished (its final state hash and losers),
    stopped (its verdict's kind and the seats it named), or neither (the move cap). The
    game's outcome is the one most peers hold; ``disagreeing`` lists the seats of the peers
    that hold another, leaving out the seats that outcome convicts (a cheater's own peer
    sees its game differently, and that is no news).
    """

    result: SimulationResult
    losers: tuple[int, ...]
    forfeit: int | None
    reason: str
    verdict: str  # the verdict's kind ("" without one, or for a seat's own forfeit)
    named: tuple[int, ...]  # the seats the verdict named (none for a seat's own forfeit)
    disagreeing: tuple[int, ...]
    moves: int
    unfinished: bool

    def save(self, directory: Path) -> list[Path]:
        """Every peer's transcript in ``directory`` (``moska verify`` checks the folder)."""
        return save_transcripts(self.result, directory)


def _outcome(session: PeerSession) -> tuple[Any, ...]:
    if session.stage == DONE:
        return ("done", session.final_hash, session.losers)
    if session.stage == STOPPED and session.verdict is not None:
        return ("stopped", session.verdict.kind, tuple(session.verdict.seats))
    return ("open",)


def play_peer_game(
    preset: str,
    options: Mapping[str, str],
    seats: Sequence[Any],
    secret: int,
    *,
    budget: float | None = DEFAULT_BUDGET,
    max_moves: int | None = None,
    tamper: TamperFactory | None = None,
    game: int = 0,
) -> PeerGame:
    """Play one game through the full protocol, ``seats[s]`` deciding for whichever peer
    draws seat ``s``; every secret (keys, table nonce, shuffles, seat draw) derives from
    ``secret``, so equal secrets give the same seats, dealer and deck: the arena's duplicate
    deals. Keys anyone can derive: for tests and tournaments of bots, never a real game.
    """
    players = len(seats)
    digest = hashlib.sha256(f"moska-p2p/arena-peers/{secret}".encode()).digest()
    config = TableConfig(preset, players, digest, dict(options))
    identities = [
        Identity.from_seed(hashlib.sha256(digest + bytes([i])).digest()) for i in range(players)
    ]
    network = Network(
        make_peers(config, identities, seed=secret, names=[f"peer{i}" for i in range(players)])
    )
    if tamper is not None:
        network.tamper = tamper(game, network)
    forfeits: dict[int, Forfeit] = {}

    def heard(index: int, failure: Forfeit) -> None:
        forfeits[index] = failure

    by_seat = _BySeat(seats)
    result = run_game(
        network,
        [by_seat] * players,
        budget=budget,
        max_moves=max_moves,
        on_forfeit=heard,
    )
    sessions = result.sessions
    outcomes = [_outcome(s) for s in sessions]
    seat_of = [s.my_seat for s in sessions]
    counted = Counter(outcomes)
    best = max(counted.values())
    # The most common outcome; a tie goes to the one held at the lowest seat.
    chosen = min(
        (o for o in counted if counted[o] == best),
        key=lambda o: min(seat_of[i] for i, x in enumerate(outcomes) if x == o),
    )
    majority = next(i for i, o in enumerate(outcomes) if o == chosen)
    lead = sessions[majority]
    kind = chosen[0]
    named: tuple[int, ...] = chosen[2] if kind == "stopped" else ()
    disagreeing = tuple(
        sorted(
            seat_of[i]
            for i, o in enumerate(outcomes)
            if o != chosen and seat_of[i] not in named
        )
    )
    losers: tuple[int, ...] = ()
    forfeit: int | None = None
    reason = verdict = ""
    if kind == "done":
        losers = chosen[2]
    elif kind == "stopped":
        losers = tuple(s for s in named if s >= 0)
        forfeit = losers[0] if len(losers) == 1 else None
        assert lead.verdict is not None
        own = [f for i, f in forfeits.items() if seat_of[i] in losers]
        if chosen[1] == LEFT and len(own) == 1 and len(losers) == 1:
            reason = own[0].reason  # the seat's own forfeit, worded as in the engine arena
            named = ()  # a forfeit, not a verdict of the protocol
        else:
            verdict = lead.verdict.kind
            reason = f"{lead.verdict.kind}: {lead.verdict.reason}"
    return PeerGame(
        result,
        losers,
        forfeit,
        reason,
        verdict,
        named,
        disagreeing,
        len(lead.moves),
        kind == "open",
    )


class _BySeat:
    """The seat of every peer: it asks the player of the seat its peer drew (the draw is
    the protocol's), so ``seats[s]`` plays seat ``s`` whatever peer sits there."""

    def __init__(self, seats: Sequence[Any]) -> None:
        self.seats = seats
        self.trusted_fast = all(is_trusted(s) for s in seats)

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        return self.seats[view.seat].choose(view, legal_moves)  # type: ignore[no-any-return]
