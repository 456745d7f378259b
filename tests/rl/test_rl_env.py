"""The PettingZoo AEC environment (moska_p2p.rl): PettingZoo's own API and seed tests, the
action mask against the engine's legal moves, multi-card attacks built in steps, rewards,
and illegal actions refused the PettingZoo way."""

from __future__ import annotations

import random
import warnings
from typing import Any

import pytest

pytest.importorskip("pettingzoo", reason="the rl extra is not installed: pip install -e '.[rl]'")
pytest.importorskip("gymnasium", reason="the rl extra is not installed: pip install -e '.[rl]'")
np = pytest.importorskip("numpy", reason="the rl extra is not installed: pip install -e '.[rl]'")

from pettingzoo.test import api_test, seed_test  # noqa: E402

from moska_p2p.bots.encoding import VIEW_SIZE, encode_view, move_id  # noqa: E402
from moska_p2p.engine import ATTACK, PRESETS, View, make_rules  # noqa: E402
from moska_p2p.rl import (  # noqa: E402
    ADD_CARD_BASE,
    LAY_ACTION,
    NUM_ACTIONS,
    OBSERVATION_SIZE,
    MoskaEnv,
    env,
    raw_env,
)

API_TABLES = [
    ("moska", 4),
    ("moska", 2),
    ("durak", 3),
    ("durak", 6),
    ("mustamaija", 5),
    ("kaavi", 4),
    ("durak-teams", 4),
    ("perevodnoy", 2),
    ("turamoska-pyhaselka", 3),
    ("taraki-mm", 6),
]


@pytest.mark.parametrize(("preset", "players"), API_TABLES)
def test_pettingzoo_api_test_passes(preset: str, players: int) -> None:
    with warnings.catch_warnings():
        # Dict observations (observation + action_mask) draw advisory warnings, as for
        # PettingZoo's own classic games.
        warnings.simplefilter("ignore")
        api_test(env(preset, players), num_cycles=200)


@pytest.mark.parametrize(("preset", "players"), [("moska", 4), ("durak", 3), ("kaavi", 2)])
def test_a_seeded_run_repeats(preset: str, players: int) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seed_test(lambda: env(preset, players), num_cycles=200)
    first = _play_random(raw_env(preset, players), seed=5, policy_seed=1)
    second = _play_random(raw_env(preset, players), seed=5, policy_seed=1)
    assert first == second
    assert first != _play_random(raw_env(preset, players), seed=6, policy_seed=1)


def _play_random(e: MoskaEnv, seed: int, policy_seed: int) -> list[tuple[str, int]]:
    """Every (agent, action) of one game with uniformly random legal actions."""
    rng = random.Random(policy_seed)
    e.reset(seed=seed)
    steps: list[tuple[str, int]] = []
    for agent in e.agent_iter():
        obs, _, terminated, truncated, _ = e.last()
        if terminated or truncated:
            e.step(None)
            continue
        action = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
        steps.append((agent, action))
        e.step(action)
    return steps


def test_every_preset_and_player_count_plays_to_the_end() -> None:
    for preset in PRESETS:
        rules = make_rules(preset)
        for players in range(rules.min_players, rules.max_players + 1):
            if rules.teams and players % 2:
                with pytest.raises(ValueError, match="even number"):
                    raw_env(preset, players)
                continue
            e = raw_env(preset, players)
            steps = _play_random(e, seed=players, policy_seed=players)
            assert steps and e.game.is_over, (preset, players)
            assert e.agents == []  # every agent stepped out with None


def test_mask_matches_the_engines_legal_moves_and_multi_attacks_build() -> None:
    """Dense actions are exactly the non-multi legal moves' ids; the add-card actions are
    the cards of the multi-card attacks; building one and laying it plays that attack."""
    e = raw_env("moska", 4)
    built = 0
    for seed in range(4):
        e.reset(seed=seed)
        rng = random.Random(seed)
        while not e.game.is_over:
            agent = e.agent_selection
            seat = int(agent.split("_")[1])
            game = e.game
            assert seat == game.to_act_seat
            legal = game.legal_moves()
            obs = e.observe(agent)
            assert obs["observation"].shape == (OBSERVATION_SIZE,)
            expected = np.asarray(encode_view(View(game, seat)), dtype=np.float32)
            assert np.array_equal(obs["observation"][:VIEW_SIZE], expected)
            mask = obs["action_mask"]
            assert mask.shape == (NUM_ACTIONS,) and mask.dtype == np.int8
            multis = [m for m in legal if m.kind == ATTACK and len(m.cards) >= 2]
            dense = {move_id(m) for m in legal if m not in multis}
            cards = {c for m in multis for c in m.cards}
            assert set(np.flatnonzero(mask[:ADD_CARD_BASE]).tolist()) == dense
            assert set((np.flatnonzero(mask[ADD_CARD_BASE:LAY_ACTION])).tolist()) == cards
            assert not mask[LAY_ACTION]
            # Others see no legal action.
            other = e.possible_agents[(seat + 1) % 4]
            assert not e.observe(other)["action_mask"].any()
            if multis and (rng.random() < 0.7 or not dense):
                target = rng.choice(multis)
                for card in target.cards:
                    assert e.observe(agent)["action_mask"][ADD_CARD_BASE + card]
                    e.step(ADD_CARD_BASE + card)
                    assert e.agent_selection == agent  # building: the same agent again
                    assert e.observe(agent)["observation"][VIEW_SIZE + card] == 1.0
                assert e.observe(agent)["action_mask"][LAY_ACTION]
                before = len(game.history)
                e.step(LAY_ACTION)
                assert game.history[before] == (seat, target)
                built += 1
            else:
                e.step(rng.choice(sorted(dense)))
    assert built >= 3


def _finish(e: Any) -> tuple[dict[str, float], list[int]]:
    """Play random legal actions to the end; the rewards each agent got, the losers."""
    rng = random.Random(0)
    total: dict[str, float] = {}
    losers: list[int] = []
    for agent in e.agent_iter():
        obs, reward, terminated, truncated, _ = e.last()
        total[agent] = total.get(agent, 0.0) + reward
        if terminated or truncated:
            losers = list(e.unwrapped.game.loser_seats)
            e.step(None)
            continue
        e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    return total, losers


@pytest.mark.parametrize(("preset", "players"), [("moska", 4), ("durak-teams", 4), ("durak", 3)])
def test_rewards_are_zero_sum_minus_one_for_each_loser(preset: str, players: int) -> None:
    e = env(preset, players)
    e.reset(seed=3)
    total, losers = _finish(e)
    assert sum(total.values()) == pytest.approx(0.0)
    for seat in range(players):
        expected = -1.0 if seat in losers else len(losers) / (players - len(losers))
        assert total[f"player_{seat}"] == pytest.approx(expected if losers else 0.0)


def test_an_illegal_action_ends_the_game_with_minus_one_for_its_agent() -> None:
    e = env("moska", 4)
    e.reset(seed=1)
    agent = e.agent_selection
    mask = e.observe(agent)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PettingZoo warns of the illegal move
        e.step(illegal)
    assert all(e.terminations.values())
    assert e.rewards[agent] == -1.0
    assert all(r == 0.0 for a, r in e.rewards.items() if a != agent)


def test_the_raw_env_refuses_an_illegal_action_and_a_bad_table() -> None:
    e = raw_env("durak", 2)
    e.reset(seed=2)
    mask = e.observe(e.agent_selection)["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    history = e.game.history  # a snapshot
    with pytest.raises(ValueError, match="not legal"):
        e.step(illegal)
    assert e.game.history == history  # nothing was played
    with pytest.raises(ValueError, match="2 to 6 players"):
        raw_env("moska", 7)
    with pytest.raises(ValueError, match="unknown preset"):
        raw_env("poker", 2)


def test_truncation_after_max_moves() -> None:
    e = raw_env("moska", 4, max_moves=10)
    e.reset(seed=0)
    rng = random.Random(0)
    for _ in range(10):
        obs = e.observe(e.agent_selection)
        action = rng.choice(np.flatnonzero(obs["action_mask"][:ADD_CARD_BASE]).tolist())
        e.step(action)
    assert all(e.truncations.values()) and not any(e.terminations.values())
    assert all(r == 0.0 for r in e.rewards.values())


def test_ansi_render() -> None:
    e = raw_env("mustamaija", 2, render_mode="ansi")
    e.reset(seed=4)
    text = e.render()
    assert text is not None and text.startswith("mustamaija") and "player_1" in text
