"""The policy prior: its rows read only what the seat to act sees, its priors are a
distribution, its weight file is checked and reproducible, its training is reproducible byte
for byte and learns, and the search uses it behind its option."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from moska_p2p.bots import policy as policy_module
from moska_p2p.bots.ismcts import IsmctsBot, score_moves
from moska_p2p.bots.network import DEFAULT_WEIGHTS, NetworkFormatError
from moska_p2p.bots.policy import (
    FEATURES,
    STATE_FEATURES,
    PolicyNet,
    default_policy,
    load_policy,
    move_rows,
    save_policy,
)
from moska_p2p.engine import Game, new_game
from tests.bots.deal_checks import CASES, players_for, random_moves
from tests.bots.test_ismcts import check_documented_api_only

ROOT = Path(__file__).resolve().parents[2]


def _train_policy() -> Any:
    spec = importlib.util.spec_from_file_location("train_policy", ROOT / "scripts/train_policy.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _position(preset: str, seed: int, count: int) -> Game | None:
    g = new_game(preset, players_for(preset, seed), seed=seed)
    random_moves(g, count, random.Random(seed))
    return g if g.to_act_seat >= 0 else None


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), seed=st.integers(0, 10_000), count=st.integers(0, 100))
def test_a_row_reads_only_what_the_seat_to_act_sees(
    case: tuple[str, dict[str, Any]], seed: int, count: int
) -> None:
    """A determinization of the seat's view gives the very same rows as the real game, so the
    search (which sees determinizations) and the training (which sees the real game) agree."""
    preset, _ = case
    real = _position(preset, seed, count)
    if real is None:
        return
    moves = real.legal_moves()[:12]
    rows = move_rows(real, moves, score_moves(real, moves))
    assert len(rows) == len(moves) and all(len(r) == FEATURES for r in rows)
    assert all(r[:STATE_FEATURES] == rows[0][:STATE_FEATURES] for r in rows)
    assert all(-1.0 <= v <= 1.0 for r in rows for v in r)
    dealt = real.view(real.to_act_seat).determinize(random.Random(seed))
    assert move_rows(dealt, moves, score_moves(dealt, moves)) == rows


def _tiny_net(seed: int = 0) -> PolicyNet:
    rng = np.random.default_rng(seed)
    return PolicyNet(
        [
            (rng.standard_normal((FEATURES, 8)).astype(np.float32), np.zeros(8, np.float32)),
            (rng.standard_normal((8, 1)).astype(np.float32), np.zeros(1, np.float32)),
        ]
    )


def test_the_priors_are_a_distribution_and_the_logits_the_plain_product() -> None:
    g = _position("moska", 3, 20)
    assert g is not None
    moves = g.legal_moves()[:8]
    rows = np.asarray(move_rows(g, moves, score_moves(g, moves)), dtype=np.float32)
    net = _tiny_net()
    (w0, b0), (w1, b1) = net.layers
    plain = (np.maximum(rows @ w0 + b0, 0.0) @ w1 + b1)[:, 0]
    assert np.allclose(net.logits(rows), plain, atol=1e-4)
    priors = net.priors(rows)
    assert priors.shape == (len(moves),)
    assert (priors > 0).all() and priors.sum() == pytest.approx(1.0, abs=1e-5)


def test_the_weight_file_round_trips_and_is_checked(tmp_path: Path) -> None:
    net = _tiny_net()
    save_policy(tmp_path / "a.npz", net)
    save_policy(tmp_path / "b.npz", net)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    back = load_policy(tmp_path / "a.npz")
    for (w, b), (w2, b2) in zip(net.layers, back.layers, strict=True):
        assert np.array_equal(w, w2) and np.array_equal(b, b2)
    with pytest.raises(NetworkFormatError, match="moska-policy-net"):
        load_policy(DEFAULT_WEIGHTS)  # a value network is not a policy
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(NetworkFormatError, match="not a weight file"):
        load_policy(tmp_path / "junk.npz")


def test_training_is_reproducible_byte_for_byte_and_learns(tmp_path: Path) -> None:
    train_policy = _train_policy()
    args = ["--games", "3", "--iterations", "12", "--epochs", "150", "--presets", "durak"]
    assert train_policy.main([*args, "--out", str(tmp_path / "a.npz")]) == 0
    assert train_policy.main([*args, "--out", str(tmp_path / "b.npz")]) == 0
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    # It learns: on its own data it beats the uniform prior's cross-entropy.
    x, t, group, _ = train_policy.play_games(3, 1, 12, ["durak"], 4)
    assert len(x) and np.allclose(np.add.reduceat(t, np.unique(group, return_index=True)[1]), 1)
    net = load_policy(tmp_path / "a.npz")
    figures = train_policy.evaluate(net, x, t, group)
    assert figures["validation_loss"] < figures["uniform_loss"]


def test_the_search_takes_its_priors_from_the_network_behind_its_option(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_policy(tmp_path / "p.npz", _tiny_net(1))
    g = _position("durak", 4, 6)
    assert g is not None
    while len(g.legal_moves()) < 2:
        random_moves(g, 1, random.Random(0))
    seat = g.to_act_seat
    legal = g.legal_moves()
    calls: list[int] = []
    real = PolicyNet.priors

    def counting(self: PolicyNet, rows: Any) -> Any:
        calls.append(1)
        return real(self, rows)

    monkeypatch.setattr(policy_module.PolicyNet, "priors", counting)
    IsmctsBot(seed=1, iterations=30).choose(g.view(seat), legal)
    assert not calls
    spec = {"seed": 1, "iterations": 30, "prior": 2, "prior_weights": str(tmp_path / "p.npz")}
    first = IsmctsBot(**spec).choose(g.view(seat), legal)
    assert 1 < len(calls) <= 30  # at most once an iteration: where a node grows
    assert IsmctsBot(**spec).choose(g.view(seat), legal) == first
    calls.clear()
    IsmctsBot(**(spec | {"prior": 1})).choose(g.view(seat), legal)
    assert len(calls) == 1  # the root's moves, once a decision
    bot = IsmctsBot(**spec, puct=1.5)
    assert bot.choose(g.view(seat), legal) in legal
    assert sum(bot.last_visits.values()) == 30


def test_the_options_are_checked(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="prior must be 0, 1"):
        IsmctsBot(prior="yes")
    with pytest.raises(ValueError, match="puct"):
        IsmctsBot(puct=-1.0)
    with pytest.raises(NetworkFormatError):
        IsmctsBot(prior=1, prior_weights=str(tmp_path / "missing.npz"))


def test_the_shipped_policy_was_made_by_the_training_script_with_its_defaults() -> None:
    """``python scripts/train_policy.py`` with no arguments is the command that made it."""
    net = default_policy()
    assert net.sizes == [FEATURES, 32, 16, 1]
    training = net.meta["training"]
    assert training["script"] == "scripts/train_policy.py"
    defaults = vars(_train_policy().make_parser().parse_args([]))
    del defaults["out"], defaults["data"]
    assert training["arguments"] == defaults
    assert training["validation_loss"] < training["uniform_loss"]


def test_policy_uses_only_the_documented_engine_api() -> None:
    check_documented_api_only(Path(policy_module.__file__), packages=("numpy",))
