"""The learned value network (``moska_p2p/bots/network.py``): its numpy inference against a
plain-Python reference, the shipped weights, the weight file format and every way a file can
be wrong, the training script's reproducibility, and the search using it."""

from __future__ import annotations

import itertools
import json
import math
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from moska_p2p.bots.encoding import VIEW_ENCODING_VERSION, VIEW_OFFSETS, VIEW_SIZE
from moska_p2p.bots.ismcts import IsmctsBot
from moska_p2p.bots.loader import load_bot
from moska_p2p.bots.network import (
    DEFAULT_WEIGHTS,
    INPUT_SIZE,
    NetworkFormatError,
    ValueNet,
    default_network,
    load_network,
    position_features,
    preset_features,
    save_network,
    view_features,
)
from moska_p2p.engine import PRESETS, make_rules, new_game

ROOT = Path(__file__).resolve().parents[2]


def _reference_forward(net: ValueNet, inputs: list[float]) -> list[float]:
    """The same network evaluated with lists and ``math`` only: no numpy, no BLAS."""
    h = list(inputs)
    last = len(net.layers) - 1
    for i, (w, b) in enumerate(net.layers):
        rows = w.tolist()
        out = [float(b[j]) for j in range(len(b))]
        for k, x in enumerate(h):
            if x:
                row = rows[k]
                for j in range(len(out)):
                    out[j] += x * row[j]
        h = [max(v, 0.0) for v in out] if i < last else out
    return [1.0 / (1.0 + math.exp(-v)) for v in h]


def _positions(count: int, seed: int = 3) -> list[tuple[str, list[float]]]:
    """Features of positions from random games of every preset."""
    rng = random.Random(seed)
    out = []
    presets = list(PRESETS)
    while len(out) < count:
        preset = presets[len(out) % len(presets)]
        rules = make_rules(preset)
        game = new_game(preset, max(rules.min_players, 3 + len(out) % 2 * 1), seed=rng.random())
        for _ in range(rng.randrange(0, 40)):
            if game.to_act_seat < 0:
                break
            game.play_unchecked(game.random_move(rng))
        if game.to_act_seat >= 0:
            out.append((preset, position_features(game, game.to_act_seat)))
    return out


def _small_net(seed: int, hidden: tuple[int, ...] = (5, 4)) -> ValueNet:
    rng = np.random.default_rng(seed)
    sizes = [INPUT_SIZE, *hidden, 6]
    layers = [
        (
            rng.standard_normal((a, b)).astype(np.float32) * 0.1,
            rng.standard_normal(b).astype(np.float32) * 0.1,
        )
        for a, b in itertools.pairwise(sizes)
    ]
    return ValueNet(layers)


# ------------------------------------------------------------------------ inference


def test_the_shipped_network_matches_a_plain_python_forward_pass() -> None:
    net = default_network()
    for _, features in _positions(6):
        fast = net.forward(features)
        slow = _reference_forward(net, features)
        assert np.allclose(fast, slow, atol=1e-5), (fast, slow)


def test_a_batch_gives_the_same_answers_as_one_input_at_a_time() -> None:
    for net in (_small_net(1), default_network()):
        rows = [f for _, f in _positions(8)]
        batch = net.forward(rows)
        for row, answer in zip(rows, batch, strict=True):
            assert np.allclose(net.forward(row), answer, atol=1e-6)
            assert np.allclose(net.evaluate(row), answer, atol=1e-5)  # the search's, no BLAS
            assert np.allclose(_reference_forward(net, row), answer, atol=1e-5)


def test_the_search_evaluation_is_the_same_in_another_process() -> None:
    """The search's evaluation (no BLAS) gives the same bits in a fresh process with other
    BLAS thread settings: what keeps a seeded search's moves the same under ``--jobs``."""
    rows = [f for _, f in _positions(4)]
    here = [default_network().evaluate(row).tobytes().hex() for row in rows]
    script = (
        "import json, sys\n"
        "from moska_p2p.bots.network import default_network\n"
        "rows = json.loads(sys.stdin.read())\n"
        "print(json.dumps([default_network().evaluate(r).tobytes().hex() for r in rows]))\n"
    )
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2", OMP_NUM_THREADS="2")
    done = subprocess.run(
        [sys.executable, "-c", script], input=json.dumps(rows), capture_output=True, text=True,
        timeout=120, check=False, env=env, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == here


def test_features_are_the_view_encoding_then_family_and_teams() -> None:
    game = new_game("durak-teams", 4, seed=1)
    features = view_features(game.view(0))
    assert len(features) == INPUT_SIZE == VIEW_SIZE + 5
    assert features[VIEW_SIZE:] == [0.0, 1.0, 0.0, 0.0, 1.0]  # durak family, team play
    assert preset_features("kaavi") == (0.0, 0.0, 0.0, 1.0, 0.0)
    assert preset_features("mustamaija") == (0.0, 0.0, 1.0, 0.0, 0.0)
    assert preset_features("turamoska") == (1.0, 0.0, 0.0, 0.0, 0.0)


def test_position_features_know_every_hand_and_nothing_else_changes() -> None:
    """A determinization knows all hands: each other hand fills its ``known_left_k`` block;
    the rest is the seat's own view encoding."""
    game = new_game("moska", 4, seed=2)
    seat = game.to_act_seat
    full = position_features(game, seat)
    seen = view_features(game.view(seat))
    offset = VIEW_OFFSETS["known_left_1"]
    for step in range(1, 4):
        block = full[offset + (step - 1) * 52 : offset + step * 52]
        hand = game.hand_mask((seat + step) % 4)
        assert block == [float(hand >> c & 1) for c in range(52)]
        assert sum(block) == game.hand_size((seat + step) % 4)
    outside = [i for i in range(INPUT_SIZE) if not offset <= i < offset + 5 * 52]
    assert [full[i] for i in outside] == [seen[i] for i in outside]
    assert full[offset + 3 * 52 : offset + 5 * 52] == [0.0] * 104  # no fifth or sixth seat


def test_the_shipped_network_loads_and_says_how_it_was_made() -> None:
    net = load_network(DEFAULT_WEIGHTS)
    assert net.sizes[0] == INPUT_SIZE and net.sizes[-1] == 6
    assert net.meta["format"] == "moska-value-net" and net.meta["version"] == 1
    assert net.meta["encoding_version"] == VIEW_ENCODING_VERSION
    training = net.meta["training"]
    assert training["script"] == "scripts/train_value.py"
    assert training["validation_loss"] < training["constant_guess_loss"]
    assert DEFAULT_WEIGHTS.stat().st_size < 1_000_000


def _train_value() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_value", ROOT / "scripts/train_value.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_training_script_defaults_are_the_shipped_file_s_arguments() -> None:
    """``python scripts/train_value.py`` with no arguments is the command that made it."""
    defaults = vars(_train_value().make_parser().parse_args([]))
    assert defaults.pop("out") == DEFAULT_WEIGHTS
    assert defaults == default_network().meta["training"]["arguments"]


def test_the_shipped_network_predicts_better_than_a_constant_guess() -> None:
    """On positions of fresh self-play games (seeds the training never used), the network's
    cross-entropy beats the per-table-size base rate."""
    train_value = _train_value()
    x, y, m, _ = train_value.play_games(228, seed=987_654, sample=0.2, explore=0.05)
    figures = train_value.evaluate(default_network(), x, y, m)
    assert figures["validation_loss"] < figures["constant_guess_loss"] - 0.02, figures


# ------------------------------------------------------------------------ the file format


def _arrays(net: ValueNet) -> dict[str, Any]:
    meta = {
        "format": "moska-value-net",
        "version": 1,
        "encoding_version": VIEW_ENCODING_VERSION,
        "layers": net.sizes,
        "training": {},
    }
    arrays: dict[str, Any] = {"meta": json.dumps(meta)}
    for i, (w, b) in enumerate(net.layers):
        arrays[f"w{i}"], arrays[f"b{i}"] = w, b
    return arrays


def _write(path: Path, arrays: dict[str, Any]) -> Path:
    out = {}
    for name, value in arrays.items():
        if name == "meta" and isinstance(value, str):
            value = np.frombuffer(value.encode(), dtype=np.uint8)
        elif name == "meta" and isinstance(value, dict):
            value = np.frombuffer(json.dumps(value).encode(), dtype=np.uint8)
        out[name] = value
    np.savez(path, **out)
    return path


def test_save_and_load_round_trip_and_the_bytes_depend_on_the_weights_only(
    tmp_path: Path,
) -> None:
    net = _small_net(2)
    net.meta["training"] = {"seed": 2}
    save_network(tmp_path / "a.npz", net)
    save_network(tmp_path / "b.npz", net)
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    back = load_network(tmp_path / "a.npz")
    assert back.sizes == net.sizes and back.meta["training"] == {"seed": 2}
    for (w, b), (w2, b2) in zip(net.layers, back.layers, strict=True):
        assert np.array_equal(w, w2) and np.array_equal(b, b2)


def _meta(**changes: Any) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "format": "moska-value-net",
        "version": 1,
        "encoding_version": VIEW_ENCODING_VERSION,
        "layers": [INPUT_SIZE, 5, 4, 6],
        "training": {},
    }
    meta.update(changes)
    return meta


def _damaged(kind: str) -> dict[str, Any]:
    """A weight file's arrays with one thing wrong."""
    arrays = _arrays(_small_net(3))
    w0 = arrays["w0"]
    if kind == "no meta":
        del arrays["meta"]
    elif kind == "meta not JSON":
        arrays["meta"] = "{not json"
    elif kind == "meta a list":
        arrays["meta"] = "[1, 2]"
    elif kind == "meta not bytes":
        arrays["meta"] = np.zeros(3, dtype=np.float32)
    elif kind == "foreign format":
        arrays["meta"] = _meta(format="keras")
    elif kind == "newer version":
        arrays["meta"] = _meta(version=2)
    elif kind == "other encoding":
        arrays["meta"] = _meta(encoding_version=VIEW_ENCODING_VERSION + 1)
    elif kind == "layers not sizes":
        arrays["meta"] = _meta(layers=[INPUT_SIZE, "5", 6])
    elif kind == "wrong input size":
        arrays["meta"] = _meta(layers=[INPUT_SIZE - 1, 5, 4, 6])
    elif kind == "too big":
        arrays["meta"] = _meta(layers=[INPUT_SIZE, 100_000, 6])
    elif kind == "missing array":
        del arrays["b1"]
    elif kind == "extra array":
        arrays["w9"] = w0
    elif kind == "wrong shape":
        arrays["w1"] = np.zeros((4, 5), dtype=np.float32)
    elif kind == "wrong dtype":
        arrays["w0"] = w0.astype(np.float64)
    elif kind == "not finite":
        w0 = w0.copy()
        w0[3, 2] = np.nan
        arrays["w0"] = w0
    elif kind == "pickled object":
        arrays["b0"] = np.array([{"x": 1}] * 5, dtype=object)
    else:
        raise AssertionError(kind)
    return arrays


DAMAGE = {
    "no meta": "no meta array",
    "meta not JSON": "meta is not JSON",
    "meta a list": "meta is not a JSON object",
    "meta not bytes": "meta is not a byte array",
    "foreign format": "format 'keras'",
    "newer version": "format version 2; this program reads 1",
    "other encoding": "trained on view encoding",
    "layers not sizes": "is not a list of sizes",
    "wrong input size": "do not go from 627 inputs",
    "too big": "parameters",
    "missing array": "expected",
    "extra array": "expected",
    "wrong shape": "w1 is float32 (4, 5), not float32 (5, 4)",
    "wrong dtype": "w0 is float64",
    "not finite": "w0 holds values that are not finite",
    "pickled object": "not a weight file",
}


@pytest.mark.parametrize("kind", sorted(DAMAGE))
def test_a_damaged_weight_file_is_refused_with_its_fault(tmp_path: Path, kind: str) -> None:
    path = _write(tmp_path / "w.npz", _damaged(kind))
    with pytest.raises(NetworkFormatError, match=DAMAGE[kind].replace("(", r"\(").replace(
            ")", r"\)")):  # fmt: skip
        load_network(path)


@pytest.mark.parametrize("content", [b"", b"not a zip at all", b"PK\x03\x04broken"])
def test_a_file_that_is_no_archive_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "w.npz"
    path.write_bytes(content)
    with pytest.raises(NetworkFormatError, match="not a weight file"):
        load_network(path)


def test_a_single_array_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "w.npz"
    with path.open("wb") as out:
        np.save(out, np.zeros(3, dtype=np.float32))
    with pytest.raises(NetworkFormatError, match="a single array, not an archive"):
        load_network(path)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(NetworkFormatError, match="not a weight file"):
        load_network(tmp_path / "none.npz")


def test_a_bot_given_a_bad_weight_file_is_a_clear_load_error(tmp_path: Path) -> None:
    path = tmp_path / "w.npz"
    path.write_bytes(b"junk")
    with pytest.raises(ValueError, match="not a weight file"):
        load_bot(f"ismcts:value=net,weights={path}")


# ------------------------------------------------------------------------ training


def test_training_reproduces_its_file_byte_for_byte(tmp_path: Path) -> None:
    def run(out: Path) -> str:
        done = subprocess.run(
            [sys.executable, str(ROOT / "scripts/train_value.py"), "--games", "120",
             "--epochs", "2", "--hidden", "16", "--seed", "5", "--out", str(out)],
            capture_output=True, text=True, timeout=300, check=False,
        )  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    printed = run(tmp_path / "a.npz")
    run(tmp_path / "b.npz")
    assert (tmp_path / "a.npz").read_bytes() == (tmp_path / "b.npz").read_bytes()
    net = load_network(tmp_path / "a.npz")
    assert net.sizes == [INPUT_SIZE, 16, 6]
    assert net.meta["training"]["arguments"]["seed"] == 5
    assert "validation_loss" in printed


# ------------------------------------------------------------------------ in the search


@pytest.mark.parametrize("preset", ["moska", "durak", "mustamaija", "kaavi", "durak-teams"])
def test_the_search_with_the_network_plays_whole_games_legally(preset: str) -> None:
    players = 4
    game = new_game(preset, players, seed=11)
    bots = [IsmctsBot(seed=s, iterations=12, value="net", depth=2) for s in range(players)]
    moves = 0
    while not game.is_over and moves < 3000:
        seat = game.to_act_seat
        view = game.view(seat)
        legal = game.legal_moves()
        move = bots[seat].choose(view, legal)
        assert move in legal
        game.play(move)
        moves += 1
    assert game.is_over
    assert max(b.last_iterations for b in bots) == 12


class _Counting(ValueNet):
    """The shipped network, counting the leaves it is asked about."""

    def __init__(self) -> None:
        super().__init__(default_network().layers)
        self.calls = 0

    def evaluate(self, features: list[float]) -> Any:
        self.calls += 1
        return super().evaluate(features)


def test_every_unfinished_leaf_is_scored_by_the_network_and_only_with_value_net() -> None:
    game = new_game("moska", 3, seed=4)
    view = game.view(game.to_act_seat)
    legal = game.legal_moves()
    counting = _Counting()
    bot = IsmctsBot(seed=1, iterations=40, value="net", depth=0)
    bot.net = counting
    first = bot.choose(view, legal)
    assert counting.calls == 40  # depth 0, early in the game: no leaf is a finished game
    again = IsmctsBot(seed=1, iterations=40, value="net", depth=0)
    assert again.choose(view, legal) == first  # seeded: the same search
    plain = IsmctsBot(seed=1, iterations=40, value="playout")
    assert plain.net is None
    plain.choose(view, legal)
    assert counting.calls == 40


def test_the_exploration_constant_follows_the_kind_of_leaf_value() -> None:
    """0.4 for the network's probabilities, 0.7 for 0/1 playouts; a given one always wins
    (today's ``ismcts:value=playout`` is the bot it was before the network)."""
    from moska_p2p.bots.ismcts import NET_EXPLORATION, PLAYOUT_EXPLORATION

    assert (NET_EXPLORATION, PLAYOUT_EXPLORATION) == (0.4, 0.7)
    assert IsmctsBot().exploration == NET_EXPLORATION
    assert load_bot("ismcts:time=0.1").exploration == NET_EXPLORATION  # type: ignore[attr-defined]
    assert IsmctsBot(value="playout").exploration == PLAYOUT_EXPLORATION
    assert IsmctsBot(value="playout", exploration=0.2).exploration == 0.2
    assert IsmctsBot(exploration=0).exploration == 0.0


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("ismcts:value=oracle", 'value must be "playout" or "net"'),
        ("ismcts:value=net,depth=-1", "depth must be at least 0"),
        ("ismcts:exploration=-0.1", "exploration must be at least 0"),
    ],
)
def test_bad_network_parameters_are_refused(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        load_bot(spec)


def test_the_bot_at_every_table_and_the_hint_search_with_the_network() -> None:
    """``ismcts`` by name and the ``hint`` command's bot (the terminal's
    default and ``moska play --hint``'s) score their leaves with the shipped network."""
    import inspect

    from moska_p2p.cli.local import play
    from moska_p2p.ui.terminal import DEFAULT_HINT

    for spec in ("ismcts", DEFAULT_HINT, "ismcts:time=0.1"):
        bot = load_bot(spec)
        assert isinstance(bot, IsmctsBot) and bot.net is default_network(), spec
    assert load_bot(DEFAULT_HINT).time == 0.5  # type: ignore[attr-defined]  # strongest
    assert inspect.signature(play).parameters["hint"].default.default == DEFAULT_HINT
    assert load_bot("ismcts:value=playout").net is None  # type: ignore[attr-defined]
