"""The ISMCTS bot: legal moves in every preset, reproducible with a seed and an iteration
budget, within its time budget, and on the engine's documented Search API only."""

from __future__ import annotations

import ast
import random
import re
import sys
import time
from pathlib import Path

import pytest

from moska_p2p import engine
from moska_p2p.arena import play_game
from moska_p2p.bots import ismcts
from moska_p2p.bots.builtin import GreedyBot, RandomBot
from moska_p2p.bots.ismcts import IsmctsBot
from moska_p2p.engine import ATTACK, PASS, PRESETS, Game, Move, make_move, new_game

PASS_MOVE = make_move(PASS)

ALL_PRESETS = (
    "moska",
    "turamoska",
    "turamoska-pyhaselka",
    "moska-simple",
    "taraki",
    "taraki-mm",
    "kaavi",
    "durak",
    "durak-52",
    "perevodnoy",
    "durak-teams",
    "mustamaija",
)


def test_every_preset_is_covered() -> None:
    assert set(ALL_PRESETS) == set(PRESETS)


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_plays_whole_games_with_legal_moves_only(preset: str) -> None:
    for seed in range(2):
        players = 4 if seed == 0 or preset == "durak-teams" else 3
        game = new_game(preset, players=players, seed=seed)
        ismcts = IsmctsBot(seed=seed, iterations=8)
        bots = [ismcts if s == seed % players else RandomBot(seed=s) for s in range(players)]
        # The runner forfeits a bot that answers a move not in the legal list.
        record = play_game(game, bots, seed=seed, budget=None, max_moves=3000)
        assert record.forfeit is None, record.reason
        assert not record.unfinished
        assert game.is_over


def _moves_of(bot_seed: int, game_seed: int) -> list[Move]:
    game = new_game("moska", players=4, seed=game_seed)
    bot = IsmctsBot(seed=bot_seed, iterations=30)
    greedy = GreedyBot()
    chosen: list[Move] = []
    while game.to_act_seat >= 0 and len(chosen) < 12:
        seat = game.to_act_seat
        legal = game.legal_moves()
        if seat == 0:
            move = bot.choose(game.view(seat), legal)
            chosen.append(move)
        else:
            move = greedy.choose(game.view(seat), legal)
        game.play(move)
    return chosen


def test_deterministic_with_a_seed_and_an_iteration_budget() -> None:
    first = _moves_of(bot_seed=5, game_seed=3)
    assert len(first) == 12
    assert first == _moves_of(bot_seed=5, game_seed=3)


def test_iteration_budget_is_exact() -> None:
    game = new_game("durak", players=4, seed=1)
    while game.count_legal_moves() < 2:
        game.play(game.legal_moves()[0])
    bot = IsmctsBot(seed=0, iterations=37)
    move = bot.choose(game.view(game.to_act_seat), game.legal_moves())
    assert move in game.legal_moves()
    assert bot.last_iterations == 37


def test_one_legal_move_is_answered_without_search() -> None:
    game = new_game("moska", players=4, seed=0)
    view = game.view(game.to_act_seat)
    only = game.legal_moves()[:1]
    bot = IsmctsBot(seed=0, iterations=10_000)
    start = time.perf_counter()
    assert bot.choose(view, only) == only[0]
    assert time.perf_counter() - start < 0.01
    assert bot.last_iterations == 0


def _decisions(preset: str, seed: int, count: int) -> list[Game]:
    """Positions with a real choice, taken along a random game."""
    rng = random.Random(seed)
    game = new_game(preset, players=4, seed=seed)
    found: list[Game] = []
    while game.to_act_seat >= 0 and len(found) < count:
        if game.count_legal_moves() > 1 and rng.random() < 0.3:
            found.append(game.copy())
        game.play(game.random_move(rng))
    return found


@pytest.mark.parametrize("preset", ["moska", "durak", "mustamaija"])
def test_time_budget_is_respected(preset: str) -> None:
    budget = 0.05
    bot = IsmctsBot(seed=1, time=budget)
    positions = _decisions(preset, seed=2, count=6)
    assert positions
    spent = []
    for game in positions:
        legal = game.legal_moves()
        start, worked = time.perf_counter(), time.thread_time()
        move = bot.choose(game.view(game.to_act_seat), legal)
        elapsed, work = time.perf_counter() - start, time.thread_time() - worked
        assert move in legal
        # The search's own work stops at the budget: its CPU time, which a busy machine that
        # pauses the process does not lengthen (the wall time it does), with a margin.
        assert work < 2 * budget, f"{work:.3f} s of CPU for a budget of {budget} s"
        assert bot.last_iterations >= 1
        spent.append(elapsed)
    # The search uses its budget rather than stopping at once (a busy machine only adds).
    assert max(spent) > budget / 2


@pytest.mark.parametrize("preset", ALL_PRESETS)
def test_bounded_move_lists_hold_legal_moves_only(
    preset: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the thresholds at zero every opening, throw-in and giving decision gets the
    short list built for huge move sets: each of its moves must be legal, and it must keep
    the safe answers (pass where pass is legal)."""
    monkeypatch.setattr(ismcts, "MAX_LISTED_MOVES", 0)
    monkeypatch.setattr(ismcts, "_SMALL_HAND", 0)
    rng = random.Random(preset)
    checked = 0
    for seed in range(3):
        game = new_game(preset, players=4, seed=seed)
        while game.to_act_seat >= 0 and checked < 60:
            moves = ismcts.search_moves(game, rng)
            legal = game.legal_moves()
            assert moves and set(moves) <= set(legal)
            if game.decision in ("open", "throw-in", "give"):
                checked += 1
                assert (PASS_MOVE in legal) == (PASS_MOVE in moves)
                kinds = {move.kind for move in legal}
                assert kinds == {move.kind for move in moves}
                if game.decision == "open":  # every single card opens (M7 a)
                    singles = {m for m in legal if m.kind == ATTACK and len(m.cards) == 1}
                    assert singles <= set(moves)
            game.play(rng.choice(moves))
    assert checked >= 20


def test_parameters_are_checked() -> None:
    with pytest.raises(ValueError):
        IsmctsBot(time=0)
    with pytest.raises(ValueError):
        IsmctsBot(iterations=0)
    with pytest.raises(ValueError):
        IsmctsBot(width=0)
    with pytest.raises(ValueError):
        IsmctsBot(playout="smart")


def test_random_playouts_play_legal_moves() -> None:
    game = new_game("durak", players=3, seed=4)
    bots = [IsmctsBot(seed=s, iterations=10, playout="random") for s in range(3)]
    record = play_game(game, bots, seed=4, budget=None)
    assert record.forfeit is None, record.reason
    assert game.is_over


def test_loads_by_name_with_parameters() -> None:
    from moska_p2p.bots.loader import load_bot

    bot = load_bot("ismcts:iterations=20,width=4", seed=3)
    assert isinstance(bot, IsmctsBot)
    assert (bot.iterations, bot.width) == (20, 4)


def _search_api_names() -> set[str]:
    """The names the engine's docstring lists under "Search API"."""
    doc = engine.__doc__ or ""
    assert "Search API" in doc
    return set(re.findall(r"``(\w+)", doc.split("Search API", 1)[1]))


def test_uses_only_the_documented_engine_api() -> None:
    """The bot is the model for search bots outside the package: it imports the engine's
    public module only (no ``engine.game`` or ``engine.moves`` internals) and reads, of a
    game, only the members the engine documents for search."""
    check_documented_api_only(Path(ismcts.__file__))


def check_documented_api_only(path: Path) -> None:
    """The import and ``game.<member>`` checks of the test above, for any bot module."""
    tree = ast.parse(path.read_text())
    allowed = {
        "moska_p2p.engine",
        "moska_p2p.cards",
        "moska_p2p.bots.api",
        "moska_p2p.bots.inference",
        "moska_p2p.bots.network",
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            assert node.level == 0, f"relative import of {module}"
            assert module in allowed or module.split(".")[0] in sys.stdlib_module_names, module
        elif isinstance(node, ast.Import):
            for alias in node.names:
                assert alias.name.split(".")[0] in sys.stdlib_module_names, alias.name
    used = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "game"
    }
    assert used, "the walk found no game.<member> at all"
    assert used <= _search_api_names(), used - _search_api_names()
