"""The ``expert`` bot (moska_p2p.bots.expert): legal play in every preset and player count,
only its view read, tactical choices (cheap kills, trumps kept, D6's take, card counting)
and the endgame search finding a forced win the heuristic alone misses."""

from __future__ import annotations

import ast
import json
import pickle
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from moska_p2p import engine
from moska_p2p.bots import expert, load_bot
from moska_p2p.bots.builtin import GreedyBot
from moska_p2p.bots.expert import ExpertBot, _Position
from moska_p2p.cards import parse_card
from moska_p2p.engine import PRESETS, Game, Move, View, make_rules, new_game, parse_move, stack_deck


def _play(game: Game, bots: list[ExpertBot]) -> None:
    while not game.is_over:
        seat = game.to_act_seat
        moves = game.legal_moves()
        move = bots[seat].choose(View(game, seat), moves)
        assert move in moves, (game.rules.preset, str(move))
        game.play(move)
        assert len(game.history) < 3000, "a game that never ends"


@pytest.mark.parametrize("preset", PRESETS)
def test_plays_every_player_count_to_the_end(preset: str) -> None:
    rules = make_rules(preset)
    for players in range(rules.min_players, rules.max_players + 1):
        if rules.teams and players % 2:
            continue
        for seed in range(2):
            game = new_game(preset, players, seed=100 * players + seed)
            # A small node budget keeps the many endgame searches fast.
            _play(game, [ExpertBot(seed=s, nodes=60) for s in range(players)])


def test_loaded_by_name_with_parameters() -> None:
    bot = load_bot("expert:endgame=0,nodes=50", seed=3)
    assert isinstance(bot, ExpertBot) and not bot.endgame and bot.nodes == 50
    with pytest.raises(ValueError, match="nodes"):
        ExpertBot(nodes=0)


def _hidden_variants(game: Game, seat: int, rng: random.Random) -> tuple[Game, Game] | None:
    """Two full-information games that differ only in cards hidden from ``seat`` (None
    when nothing is hidden from it)."""
    view = View(game, seat)
    for _ in range(20):
        first, second = view.determinize(rng), view.determinize(rng)
        if [first.hand_mask(s) for s in range(game.n)] != [
            second.hand_mask(s) for s in range(game.n)
        ] or first.stock != second.stock:
            return first, second
    return None


@pytest.mark.parametrize(("preset", "players"), [("moska", 3), ("durak", 3), ("mustamaija", 4)])
def test_reads_only_its_view(preset: str, players: int) -> None:
    """At many decisions, including endgame searches, two deals differing only in cards
    hidden from the seat give byte-identical views and the same move."""
    rng = random.Random(1)
    checked = searched = 0
    for seed in range(3):
        game = new_game(preset, players, seed=seed)
        greedy = GreedyBot()
        while not game.is_over:
            seat = game.to_act_seat
            moves = game.legal_moves()
            variants = _hidden_variants(game, seat, rng) if rng.random() < 0.3 else None
            if len(moves) > 1 and variants is not None:
                first, second = variants
                a, b = View(first, seat), View(second, seat)
                assert pickle.dumps(a) == pickle.dumps(b)
                bot_a, bot_b = ExpertBot(seed=7, nodes=300), ExpertBot(seed=7, nodes=300)
                assert bot_a.choose(a, first.legal_moves()) == bot_b.choose(
                    b, second.legal_moves()
                )
                searched += bot_a.searches
                checked += 1
            game.play(greedy.choose(View(game, seat), moves))
    assert checked > 20
    assert searched > 0 or preset != "moska"  # the endgame search ran on hidden cards


def _defend(defender_hand: str, attack: str, indicator: str = "5H", preset: str = "moska") -> Move:
    """What the expert defends against ``attack`` with ``defender_hand`` at a table of
    two (seat 1 attacks seat 0, RULES M5)."""
    attacker = "3C 8D KS 4S 9S 10S"
    deck = stack_deck(
        preset, 2, {0: defender_hand, 1: attacker}, dealer=0, indicator=indicator
    )
    game = new_game(preset, 2, deck=deck)
    if game.to_act_seat != 1:  # D3: the lowest trump's holder may attack first
        pytest.skip("the deal gives the first attack to the other seat")
    game.play(parse_move(attack))
    assert game.to_act_seat == 0 and game.decision == "defend"
    return ExpertBot(seed=0).choose(View(game, 0), game.legal_moves())


def test_kills_with_the_cheapest_card() -> None:
    assert str(_defend("7C 9C QC 6H AH KD", "attack 3C")) == "kill 3C 7C"


def test_keeps_a_trump_when_a_plain_card_kills() -> None:
    # 3H (the lowest trump) is a lower rank than JD, but a trump is kept while JD kills.
    assert str(_defend("JD 3H 6C 7C 4D QC", "attack 8D")) == "kill 8D JD"


def test_takes_rather_than_spend_the_ace_of_trumps_early() -> None:
    assert str(_defend("AH 6C 7C 4D 2D 3D", "attack 8D")) == "take"


def test_durak_takes_at_once_what_it_cannot_kill() -> None:
    # D6: the killers go back to the hand on a take, so a partial defence is wasted.
    deck = stack_deck("durak", 2, {0: "7C 8C 9C 10C JC QC", 1: "6S 6D 7D 8D 9D 10D"},
                      dealer=0, indicator="6H")
    game = new_game("durak", 2, deck=deck)
    attacker = game.to_act_seat
    assert attacker == 1
    game.play(parse_move("attack 6S"))
    move = ExpertBot(seed=0).choose(View(game, 0), game.legal_moves())
    assert str(move) == "take"


def test_card_counting_from_the_view() -> None:
    """The chance that the other seat holds a killer: none when every killer is in this
    hand, certain once it is known to hold one (picked up), in between otherwise."""
    deck = stack_deck("moska", 2, {0: "AH KH 3C 4C 5C 6C"}, dealer=1, indicator="2H")
    game = new_game("moska", 2, deck=deck, dealer=1)
    view = View(game, 0)
    pos = _Position(view)
    card = parse_card
    assert pos.p_beat(card("AH"), 1) == 0.0  # the top trump: nothing beats it
    assert pos.p_beat(card("KH"), 1) == 0.0  # its only killer is in this hand
    assert not pos.pool >> card("2H") & 1  # the indicator is seen
    chance = pos.p_beat(card("3C"), 1)
    assert 0.5 < chance < 1.0
    view.known_mask = list(view.known_mask)
    view.known_mask[1] = 1 << card("7C")
    assert _Position(view).p_beat(card("3C"), 1) == 1.0
    assert _Position(view).p_beat(card("6C"), 1) == 1.0
    view.known_mask[1] = 1 << card("2C")  # a known card that kills nothing
    assert _Position(view).p_beat(card("3C"), 1) < chance  # one unknown card fewer


class _Budget(Exception):
    pass


def _can_force(game: Game, seat: int, left: list[int]) -> bool:
    """Exhaustive two-player search: can ``seat`` make sure it does not lose?"""
    left[0] -= 1
    if left[0] < 0:
        raise _Budget
    if game.is_over:
        return seat not in game.loser_seats
    mover = game.to_act_seat
    for move in game.legal_moves():
        child = game.copy()
        child.play_unchecked(move)
        result = _can_force(child, seat, left)
        if mover == seat and result:
            return True
        if mover != seat and not result:
            return False
    return mover != seat


def test_the_endgame_search_finds_a_forced_win_the_heuristic_misses() -> None:
    """Two-player Moska endgames (stock empty, nothing unknown): where the plain heuristic's
    move loses against best play but another move wins, the expert plays a winning one."""
    found = 0
    for seed in range(6):
        game = new_game("moska", 2, seed=seed)
        greedy = GreedyBot()
        while not game.is_over:
            seat = game.to_act_seat
            view = View(game, seat)
            moves = game.legal_moves()
            if game.stock_size == 0 and len(moves) > 1 and sum(game.hand_sizes()) <= 9:
                plain = ExpertBot(endgame=0).choose(view, moves)
                try:
                    wins = {}
                    for move in moves:
                        child = game.copy()
                        child.play(move)
                        wins[move] = _can_force(child, seat, [200_000])
                except _Budget:
                    wins = {}
                if wins and any(wins.values()) and not wins[plain]:
                    expert = ExpertBot(seed=0)
                    assert wins[expert.choose(view, moves)], (seed, len(game.history))
                    assert expert.searches == 1
                    found += 1
            game.play(greedy.choose(view, moves))
    assert found >= 2


def test_the_timing_script_runs_at_a_tiny_size(tmp_path: Path) -> None:
    out = tmp_path / "times.json"
    script = Path(__file__).resolve().parents[2] / "scripts" / "eval_bots.py"
    subprocess.run(
        [sys.executable, str(script), "--games", "1", "--presets", "mustamaija",
         "--players", "3", "--json", str(out)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    (result,) = json.loads(out.read_text())
    assert result["preset"] == "mustamaija" and result["all"]["decisions"] > 0


def test_searches_only_through_the_documented_engine_api() -> None:
    """Like ISMCTS, the endgame search is a model for bots outside the package: only the
    engine's public module, and of a game only the members its "Search API" lists."""
    tree = ast.parse(Path(expert.__file__).read_text())
    allowed = {"moska_p2p.engine", "moska_p2p.cards", "moska_p2p.bots.api", "moska_p2p.bots.ismcts"}
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
        and node.value.id in ("game", "child")
    }
    doc = engine.__doc__ or ""
    api = set(re.findall(r"``(\w+)", doc.split("Search API", 1)[1]))
    assert {"copy", "legal_moves", "play_unchecked"} <= used <= api, used - api
