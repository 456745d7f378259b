"""External process bots: whole games through the runner, the state id echo, and every way a
bot process can fail (each a forfeit with a clear reason, no process left behind)."""

from __future__ import annotations

import os
import pickle
import shlex
import shutil
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from moska_p2p.bots import load_bot
from moska_p2p.bots.api import Bot
from moska_p2p.bots.builtin import RandomBot
from moska_p2p.bots.external import ExternalBot, ExternalBotError, view_json
from moska_p2p.engine import Move, View, new_game
from moska_p2p.table.local import GameRecord, play_game

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = Path(__file__).resolve().parent / "fixtures" / "misbehaving_bot.py"
PYTHON = shlex.quote(sys.executable)
PY_EXAMPLE = f"{PYTHON} {ROOT / 'bots' / 'examples' / 'external_random.py'}"
NODE = shutil.which("node")
JS_EXAMPLE = f"{NODE} {ROOT / 'bots' / 'examples' / 'random_bot.js'}"


def _children() -> set[int]:
    """Live (or zombie) child processes of this test process, from /proc."""
    pids: set[int] = set()
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        try:
            pids.update(int(p) for p in (task / "children").read_text().split())
        except OSError:
            continue
    return pids


@pytest.fixture
def bots_made() -> Iterator[list[ExternalBot]]:
    """External bots a test makes; closed after it, then no child process may remain and
    no empty temporary stderr log either."""
    before = _children()
    made: list[ExternalBot] = []
    yield made
    for bot in made:
        bot.close()
        assert bot.pid is None
        if bot.stderr is None and bot.stderr_path is not None:
            assert not bot.stderr_path.exists() or bot.stderr_path.stat().st_size > 0
    assert _children() - before == set(), "a bot process was left behind"


LONG = 30.0
"""The timeout of every decision where a bot means to answer: the first decision's time
includes the interpreter's start-up, which takes seconds on a loaded machine."""


class ShortAtFault(ExternalBot):
    """An external bot whose decision number ``fault`` (from 1) gets ``short`` seconds and
    every other one :data:`LONG`: only the decision where the bot misbehaves by time needs a
    short timeout, and a short one anywhere else fails on a busy machine, not on the bot."""

    def __init__(self, command: str, fault: int, short: float, **kwargs: Any) -> None:
        super().__init__(command, timeout=LONG, **kwargs)
        self.fault, self.short, self.decisions = fault, short, 0

    def choose(self, view: View, legal_moves: Sequence[Move]) -> Move:
        self.decisions += 1
        self.timeout = self.short if self.decisions == self.fault else LONG
        return super().choose(view, legal_moves)


@pytest.fixture
def misbehaving(bots_made: list[ExternalBot], tmp_path: Path) -> Callable[..., ExternalBot]:
    """Make a bot running the misbehaving fixture script, its stderr logged in tmp_path;
    with ``short``, the decision where it misbehaves (after ``after`` answers) has that
    timeout and the others :data:`LONG` (:class:`ShortAtFault`)."""

    def make(mode: str, after: int = 0, short: float | None = None, **kwargs: Any) -> ExternalBot:
        log = tmp_path / f"{mode}-{len(bots_made)}.log"
        command = f"{PYTHON} {FIXTURE} {mode} {after}"
        bot = (
            ShortAtFault(command, after + 1, short, stderr=log, **kwargs)
            if short is not None
            else ExternalBot(command, stderr=log, **{"timeout": LONG, **kwargs})
        )
        bots_made.append(bot)
        return bot

    return make


def play(preset: str, bot: Bot, seed: int = 3, budget: float | None = None) -> GameRecord:
    """A 4-seat game with ``bot`` at seat 1 and random bots elsewhere."""
    game = new_game(preset, players=4, seed=seed)
    bots: list[Bot] = [RandomBot(seed), bot, RandomBot(seed + 1), RandomBot(seed + 2)]
    return play_game(game, bots, seed=seed, budget=budget)


def choices_of(record: GameRecord, seat: int) -> int:
    return sum(1 for s, _ in record.moves if s == seat)


# ------------------------------------------------------------------------- whole games


@pytest.mark.parametrize("preset", ["moska", "durak"])
@pytest.mark.parametrize("language", ["python", "javascript"])
def test_example_bots_play_whole_games(
    bots_made: list[ExternalBot], preset: str, language: str
) -> None:
    if language == "javascript" and NODE is None:
        pytest.skip("node is not installed")
    bot = ExternalBot(PY_EXAMPLE if language == "python" else JS_EXAMPLE, LONG, seed=5)
    bots_made.append(bot)
    for seed in (1, 2):
        record = play(preset, bot, seed=seed)
        assert record.forfeit is None, record.reason
        assert not record.unfinished
        assert choices_of(record, 1) > 0
        assert record.losers or preset == "durak"  # Durak may end in a draw (D10)


def test_same_process_serves_game_after_game(misbehaving: Callable[..., ExternalBot]) -> None:
    bot = misbehaving("ok")
    play("moska", bot, seed=1)
    pid = bot.pid
    assert pid is not None
    record = play("moska", bot, seed=2)
    assert record.forfeit is None, record.reason
    assert bot.pid == pid


def test_external_random_bot_is_repeatable(bots_made: list[ExternalBot]) -> None:
    records = []
    for _ in range(2):
        bot = ExternalBot(PY_EXAMPLE, LONG, seed=11)
        bots_made.append(bot)
        records.append(play("durak", bot, seed=4).moves)
        bot.close()
    assert records[0] == records[1]


def test_load_bot_exec_spec(bots_made: list[ExternalBot]) -> None:
    bot = load_bot(f"exec:{PY_EXAMPLE}")
    assert isinstance(bot, ExternalBot)
    bots_made.append(bot)
    assert play("moska", bot).forfeit is None


def test_replies_by_move_id(misbehaving: Callable[..., ExternalBot]) -> None:
    record = play("moska", misbehaving("ids"))
    assert record.forfeit is None, record.reason
    assert choices_of(record, 1) > 0


def test_events_arrive_for_every_move(misbehaving: Callable[..., ExternalBot]) -> None:
    record = play("durak", misbehaving("events", events=True))
    assert record.forfeit is None, record.reason


def test_a_pickled_bot_starts_its_own_process(
    bots_made: list[ExternalBot], misbehaving: Callable[..., ExternalBot]
) -> None:
    bot = misbehaving("ok")
    play("moska", bot)
    copy = pickle.loads(pickle.dumps(bot))
    bots_made.append(copy)
    assert copy.pid is None
    assert play("moska", copy).forfeit is None
    assert copy.pid != bot.pid


# ---------------------------------------------------------------------------- state id


def test_a_reply_with_a_stale_state_id_is_ignored(misbehaving: Callable[..., ExternalBot]) -> None:
    bot = misbehaving("stale")
    record = play("moska", bot)
    assert record.forfeit is None, record.reason
    # Every decision got a late reply to the one before (naming no move at all) first.
    assert bot.stale_replies == choices_of(record, 1) > 0


def test_a_late_reply_is_not_taken_in_the_next_game(
    misbehaving: Callable[..., ExternalBot],
) -> None:
    bot = misbehaving("slow", after=2, short=0.3)
    first = play("moska", bot, seed=1)
    assert first.forfeit == 1 and "did not answer within 0.3 s" in first.reason
    pid = bot.pid
    assert pid is not None  # a bot that was merely slow keeps its process
    # Its late answer (not even a move) arrives during the next game and must be dropped.
    second = play("moska", bot, seed=2)
    assert second.forfeit is None, second.reason
    assert bot.stale_replies == 1
    assert bot.pid == pid


# ---------------------------------------------------------------------------- failures


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("crash", 'the bot process exited with code 3 (its stderr ends: "RuntimeError: boom")'),
        ("garbage", "the bot printed a line that is not JSON: 'hello, arena'"),
        ("illegal", "which is not a legal move"),
        ("closeout", "the bot closed its stdout"),
        ("sleep", "the bot did not answer within 0.3 s"),
    ],
)
def test_a_failing_bot_forfeits_with_a_clear_reason(
    mode: str, reason: str, misbehaving: Callable[..., ExternalBot]
) -> None:
    # Only the sleeper fails by time; the others' failures must not race a short timeout.
    bot = misbehaving(mode, after=3, short=0.3 if mode == "sleep" else None)
    record = play("moska", bot)
    assert record.forfeit == 1
    assert record.losers == (1,)
    assert reason in record.reason
    assert choices_of(record, 1) == 3
    if mode != "sleep":
        assert bot.pid is None  # stopped and reaped at once


def test_a_crashed_bot_is_restarted_for_the_next_game(
    misbehaving: Callable[..., ExternalBot],
) -> None:
    bot = misbehaving("crash", after=2)
    first = play("moska", bot, seed=1)
    assert first.forfeit == 1 and "exited with code 3" in first.reason
    second = play("moska", bot, seed=2)  # a fresh process: 2 good answers again, then a crash
    assert second.forfeit == 1
    assert choices_of(second, 1) == 2


def test_the_runner_budget_applies_to_external_bots(
    misbehaving: Callable[..., ExternalBot],
) -> None:
    bot = misbehaving("sleep", after=1, timeout=5.0)
    record = play("durak", bot, budget=0.3)
    assert record.forfeit == 1
    assert "time budget of 0.3 s" in record.reason


def test_a_missing_program_forfeits_at_start(bots_made: list[ExternalBot]) -> None:
    bot = ExternalBot("/nonexistent/moska-bot --fast")
    bots_made.append(bot)
    record = play("moska", bot)
    assert record.forfeit == 1
    assert "cannot start '/nonexistent/moska-bot --fast'" in record.reason


def test_choose_raises_outside_the_runner(misbehaving: Callable[..., ExternalBot]) -> None:
    game = new_game("moska", players=2, seed=1)
    with misbehaving("garbage") as bot:
        with pytest.raises(ExternalBotError, match="not JSON"):
            bot.choose(game.view(game.to_act_seat), game.legal_moves())
        assert bot.pid is None


def test_close_stops_a_bot_that_ignores_its_stdin(misbehaving: Callable[..., ExternalBot]) -> None:
    bot = misbehaving("sleep", timeout=0.2)
    game = new_game("moska", players=2, seed=1)
    with pytest.raises(ExternalBotError, match="did not answer"):
        bot.choose(game.view(game.to_act_seat), game.legal_moves())
    pid = bot.pid
    assert pid is not None
    bot.close()
    assert bot.pid is None
    assert not Path(f"/proc/{pid}").exists()  # terminated and reaped: not even a zombie


# ------------------------------------------------------------------------- the JSON view


def test_view_json_holds_what_the_seat_sees() -> None:
    game = new_game("durak", players=3, seed=2)
    played = 0
    while played < 12 and not game.is_over:
        game.play(game.legal_moves()[0])
        played += 1
    seat = game.to_act_seat
    data = view_json(game.view(seat))
    assert data["hand"] == game.hand(seat)
    assert data["known"][seat] == game.hand(seat)
    assert data["hand_sizes"] == game.hand_sizes()
    assert data["trump_card"] == game.trump_card
    assert data["decision"] == game.decision
    assert data["to_act"] == seat
    assert len(data["history"]) == played
    assert all(isinstance(s, int) and isinstance(m, str) for s, m in data["history"])
    for other in range(3):
        if other != seat:
            assert set(data["known"][other]) <= set(game.hand(other))
