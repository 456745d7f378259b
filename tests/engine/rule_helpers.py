"""Helpers shared by the rule test files: play scripted steps, list moves, check refusals."""

from __future__ import annotations

import pytest

from moska_p2p.engine import Game, IllegalMove


def run(g: Game, *steps: str) -> None:
    """Play ``"seat: move"`` steps, checking before each that this seat is the one to act."""
    for step in steps:
        seat, move = step.split(":", 1)
        assert g.to_act_seat == int(seat), (
            f"before {step!r}: seat {g.to_act_seat} acts ({g.decision})"
        )
        g.play(move.strip())


def moves(g: Game, kind: str | None = None) -> set[str]:
    return {str(m) for m in g.legal_moves(kind)}


def state(g: Game) -> tuple[object, ...]:
    """Everything a refused move must leave unchanged."""
    return (
        g.to_act_seat,
        g.decision,
        [g.hand(s) for s in range(g.n)],
        g.table,
        g.stock_size,
        g.trump_card,
        g.discard_size,
        g.attacker,
        g.defender,
        g.bout_count,
        g.bout_limit,
        len(g.history),
    )


def refused(g: Game, move: str, match: str) -> None:
    """``move`` raises IllegalMove mentioning ``match`` and leaves the game unchanged."""
    before = state(g)
    with pytest.raises(IllegalMove, match=match):
        g.play(move)
    assert state(g) == before
