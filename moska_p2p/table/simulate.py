"""Every seat its own peer, in one process: the game loop of ``moska simulate``.

Each :class:`~moska_p2p.protocol.session.PeerSession` on the in-memory
:class:`~moska_p2p.protocol.simulate.Network` is played by its seat through the
:class:`~.seat.Referee`: a bot that fails leaves the table with a signed ``leave`` whose reason
is the forfeit's, as a network peer's bot would (:mod:`.networked`), so the other peers'
verdicts name it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..protocol.session import DONE, STOPPED
from ..protocol.simulate import Network, SimulationResult
from .seat import DEFAULT_BUDGET, Forfeit, Referee


def run_game(
    network: Network,
    seats: Sequence[Any],
    *,
    max_steps: int = 20_000,
    step_time: float = 0.0,
    stall_time: float | None = None,
    budget: float | None = DEFAULT_BUDGET,
) -> SimulationResult:
    """Start every peer and play until every session is done or stopped.

    ``seats[i]`` decides for session ``i`` (at the session's seat). When nothing moves, the
    virtual clock jumps by ``stall_time`` (default: past the timeout) and every session ticks,
    so a peer that stops answering ends the game with a timeout verdict instead of hanging.
    """
    sessions = network.sessions
    referees = [Referee([seat], budget) for seat in seats]  # one per peer: each has one seat
    for index, session in enumerate(sessions):
        network.handle(index, session.start(network.clock))
    jump = stall_time if stall_time is not None else sessions[0].config.timeout + 1.0
    for _ in range(max_steps):
        network.deliver_all()
        if all(s.stage in (DONE, STOPPED) for s in sessions):
            break
        acted = False
        for index, session in enumerate(sessions):
            if session.my_turn and session.stage != STOPPED and session.game is not None:
                view = session.game.view(session.my_seat)
                network.clock += step_time
                try:
                    move = referees[index].ask(0, view, session.legal_moves())
                except Forfeit as failure:
                    network.handle(index, session.leave(failure.leave_reason, network.clock))
                else:
                    network.handle(index, session.play(move, network.clock))
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
