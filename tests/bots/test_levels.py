"""The levels of ``moska play --level``: each names a built-in bot that plays every preset."""

from __future__ import annotations

import random

import pytest

from moska_p2p.bots import load_bot
from moska_p2p.bots.levels import DEFAULT_LEVEL, HINT_BOT, LEVELS, LevelError, level_named
from moska_p2p.engine import PRESETS, new_game


def test_the_levels_go_from_easy_to_strongest_and_the_hint_is_the_strongest() -> None:
    assert list(LEVELS) == ["easy", "medium", "hard", "strongest"]
    assert DEFAULT_LEVEL == "medium"
    assert LEVELS[DEFAULT_LEVEL].bot == "expert"  # a fair fight, not the greedy pushover
    assert LEVELS["strongest"].bot == HINT_BOT


def test_a_level_is_found_in_any_case_and_a_wrong_one_names_the_choices() -> None:
    assert level_named(" Hard ") is LEVELS["hard"]
    with pytest.raises(LevelError, match="easy, medium, hard, strongest"):
        level_named("expert")


def test_no_level_keeps_a_person_waiting_more_than_half_a_second() -> None:
    """The searching levels are timed (``ismcts:time=T``), never counted in iterations: a
    slow machine makes them weaker, never slower."""
    for level in LEVELS.values():
        name, _, params = level.bot.partition(":")
        if name == "ismcts":
            options = dict(option.split("=") for option in params.split(","))
            assert "iterations" not in options
            assert 0 < float(options["time"]) <= 0.5, level


@pytest.mark.parametrize("level", list(LEVELS))
def test_every_level_plays_every_preset(level: str) -> None:
    """Each level's bot answers a legal move at a real decision of every preset (the
    search levels searched with a few iterations here, their settings otherwise)."""
    spec = LEVELS[level].bot
    if spec.startswith("ismcts"):  # its own settings, but 20 iterations instead of a time
        name, _, params = spec.partition(":")
        kept = [option for option in params.split(",") if not option.startswith("time=")]
        spec = f"{name}:" + ",".join(["iterations=20", *kept])
    for preset in PRESETS:
        players = 4 if preset == "durak-teams" else 3
        game = new_game(preset, players=players, seed=5)
        rng = random.Random(5)
        bot = load_bot(spec, seed=1)
        for _ in range(12):  # a few moves in, past any opening formality
            if game.is_over:
                break
            game.play(game.random_move(rng))
        if game.is_over:
            continue
        seat = game.to_act_seat
        legal = game.legal_moves()
        assert bot.choose(game.view(seat), legal) in legal, (level, preset)
