"""One suite for seat behaviour: every kind of failing seat, every driver.

A bot from a file that raises, answers an illegal move or sleeps past its budget, and an
external process that crashes or prints garbage: each must forfeit with the same reason in
the arena, in ``moska play``'s session, in ``moska simulate``'s in-memory peers and at a
network table over loopback (where the reason is the signed ``leave`` the honest peer's
verdict quotes).
"""

from __future__ import annotations

import io
import re
import secrets
import sys
from pathlib import Path

import pytest
import trio

from moska_p2p.arena.arena import run_arena
from moska_p2p.bots.loader import load_bot
from moska_p2p.crypto.identity import Identity
from moska_p2p.engine import Move, View
from moska_p2p.net.node import Node, NodeOptions
from moska_p2p.protocol import verdict as v
from moska_p2p.protocol.config import TableConfig
from moska_p2p.protocol.simulate import Network, make_peers
from moska_p2p.table.networked import BotAtTable
from moska_p2p.table.simulate import run_game
from moska_p2p.ui.local import LocalTable, play_session, seat_names
from moska_p2p.ui.terminal import TerminalPlayer

TESTS = Path(__file__).resolve().parent.parent
BAD_BOTS = TESTS / "arena" / "fixtures" / "bad_bots.py"
EXTERNAL = TESTS / "bots" / "fixtures" / "misbehaving_bot.py"
# The sleeper's budget is far below its sleep, and every other seat's far above anything a
# loaded machine needs to start a process and answer: so which failure a seat shows never
# depends on the machine's load (a 0.3 s budget made a crashing external bot, slow to start
# under load, forfeit by time instead).
SLEEP, SHORT_BUDGET, LONG_BUDGET = 3.0, 1.0, 30.0
PRESET, PLAYERS = "durak", 2

SEATS = {
    "raises": (f"{BAD_BOTS}:Raiser", "raised RuntimeError: boom"),
    "illegal": (f"{BAD_BOTS}:Illegal", "answered ('no such move', ()), which is not a legal move"),
    "sleeps": (
        f"{BAD_BOTS}:Sleeper:sleep={SLEEP:g}",
        f"ran past its time budget of {SHORT_BUDGET:g} s",
    ),
    "crashes": (f"exec:{sys.executable} {EXTERNAL} crash 3", "raised ExternalBotError: "),
    "garbage": (
        f"exec:{sys.executable} {EXTERNAL} garbage 3",
        "raised ExternalBotError: the bot printed a line that is not JSON",
    ),
}


def budget_for(spec: str) -> float:
    return SHORT_BUDGET if "Sleeper" in spec else LONG_BUDGET


def in_the_arena(spec: str) -> str:
    result = run_arena(PRESET, [spec, "random"], games=1, seed=1, budget=budget_for(spec))
    (outcome,) = result.outcomes
    assert outcome.forfeit is not None
    return outcome.reason


class _FirstMove(TerminalPlayer):
    """The person's seat, its decisions made by rule (the drawing is the real one)."""

    def choose(self, view: View, legal_moves: list[Move]) -> Move:  # type: ignore[override]
        return legal_moves[0]


def in_moska_play(spec: str) -> str:
    out = io.StringIO()
    person = _FirstMove(seat_names("you", [spec]), stdout=out, interactive=False, color=False)
    table = LocalTable(PRESET, PLAYERS, [spec], seed=1, budget=budget_for(spec))
    assert play_session(table, person, ask_again=False) == 0
    found = re.search(r"The session stops: .* forfeits: (.*)\.\n", out.getvalue())
    assert found, out.getvalue()[-500:]
    return found.group(1)


def _left_reason(verdict: v.Verdict | None) -> str:
    assert verdict is not None and verdict.kind == v.LEFT, verdict
    prefix = "left the table: its seat forfeits: "
    assert verdict.reason.startswith(prefix), verdict.reason
    return verdict.reason[len(prefix) :]


def in_simulate(spec: str) -> str:
    ids = [Identity.from_seed(bytes([i + 1]) * 32) for i in range(PLAYERS)]
    config = TableConfig(PRESET, PLAYERS, bytes(32), {}, 10.0)
    network = Network(make_peers(config, ids, seed=1))
    bad, honest = load_bot(spec), load_bot("random", seed=2)
    result = run_game(network, [bad, honest], budget=budget_for(spec))
    return _left_reason(result.verdicts[1])


def at_a_network_table(spec: str, tmp_path: Path) -> str:
    bots = [load_bot(spec), load_bot("random", seed=2)]
    nodes = [
        Node(
            NodeOptions(
                identity=Identity.generate(),
                player=BotAtTable(bot, budget=budget_for(spec)),
                transcript=tmp_path / f"p{i}.moska",
                name=f"p{i}",
                bind="127.0.0.1",
                connect_timeout=5.0,
                lobby_wait=20.0,
                echo=lambda line: None,
            )
        )
        for i, bot in enumerate(bots)
    ]
    config = TableConfig(PRESET, PLAYERS, secrets.token_bytes(32), {}, 10.0)

    async def main() -> None:
        with trio.fail_after(40):
            async with trio.open_nursery() as nursery:
                port = await nursery.start(nodes[0].host, config, 0)
                nursery.start_soon(nodes[1].join, "127.0.0.1", port)

    try:
        trio.run(main)
    finally:
        for bot in bots:
            close = getattr(bot, "close", None)
            if close:
                close()
    outcome = nodes[1].outcome
    assert outcome is not None
    return _left_reason(outcome.verdict)


@pytest.mark.parametrize("kind", list(SEATS))
def test_a_failing_seat_forfeits_with_the_same_reason_everywhere(
    kind: str, tmp_path: Path
) -> None:
    spec, expected = SEATS[kind]
    reasons = {
        "arena": in_the_arena(spec),
        "moska play": in_moska_play(spec),
        "moska simulate": in_simulate(spec),
        "network": at_a_network_table(spec, tmp_path),
    }
    assert all(reason.startswith(expected) for reason in reasons.values()), reasons
    assert len(set(reasons.values())) == 1, reasons
