"""The learned evaluation: a small value network over the view encoding, run with numpy.

What it predicts: for a position with every hand known (a search's determinization), the
probability that each seat (counted from the seat to act, as the view encoding counts them)
ends the game among the losers when every seat plays on with the heuristic playout policy of
:mod:`.ismcts`. That is
exactly what the tail of a search playout estimates, one noisy sample at a time; the network
is a learned, low-variance stand-in for it, so the search can cut its playouts short
(:class:`~moska_p2p.bots.ismcts.IsmctsBot` with ``value="net"``) and spend the time saved on
more iterations. One sigmoid per seat, not a softmax over seats, because a game can have no
loser (a draw) or two (a team in ``durak-teams``).

One network for every preset, with the family and team play as inputs, rather than one per
family: the families share most of their structure (killing by rank and trump, taking,
hand sizes as the measure of danger), the smaller families (Kaavi, Mustamaija) get the
others' data for free, and one file of about 350 kB ships instead of four.

Why every hand: a leaf of the search is a determinization, whose playout would use all
hands; a network reading only the seat's own view (tried first) scored leaves worse than the
playouts it replaced (24% and 33% losses against three plain searches, par 25%).

Input (:func:`position_features`): :func:`~moska_p2p.bots.encoding.encode_view`'s 622 values
of the seat to act, with the ``known_left_k`` blocks holding the other hands whole, then
one-hot family
(moska, durak, mustamaija, kaavi: the engine's ``F_*`` order) and a team-play flag:
:data:`INPUT_SIZE` = 627. Layers: dense, ReLU, dense, ReLU, dense, sigmoid.

**The weight file format** (version 1, a numpy ``.npz`` read with ``allow_pickle=False``, so
a file can hold arrays only, never code): arrays ``w0, b0, w1, b1, ...`` (float32; ``wK``
has shape ``(inputs, outputs)``) and ``meta``, a uint8 array holding UTF-8 JSON with
``format`` (``"moska-value-net"``), ``version`` (1), ``encoding_version`` (the view
encoding's, :data:`~moska_p2p.bots.encoding.VIEW_ENCODING_VERSION`), ``layers`` (the sizes,
input first) and ``training`` (how the file was made: seed, games, positions, losses; free
form). :func:`load_network` checks all of it and raises :class:`NetworkFormatError` for a file
that does not match; the shipped file is ``weights/value-v1.npz`` beside this module, made by
``scripts/train_value.py``.
"""

from __future__ import annotations

import itertools
import json
import zipfile
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from moska_p2p.bots.encoding import (
    MAX_SEATS,
    VIEW_ENCODING_VERSION,
    VIEW_OFFSETS,
    VIEW_SIZE,
    encode_view,
)
from moska_p2p.cards import NUM_CARDS
from moska_p2p.engine import Game, View, make_rules

__all__ = [
    "DEFAULT_WEIGHTS",
    "FORMAT",
    "FORMAT_VERSION",
    "INPUT_SIZE",
    "NetworkFormatError",
    "ValueNet",
    "checked_layers",
    "default_network",
    "load_network",
    "position_features",
    "preset_features",
    "read_archive",
    "save_network",
    "view_features",
    "write_archive",
]

FORMAT = "moska-value-net"
FORMAT_VERSION = 1
FAMILY_ORDER = ("moska", "durak", "mustamaija", "kaavi")  # the engine's F_* order
INPUT_SIZE = VIEW_SIZE + len(FAMILY_ORDER) + 1  # 627
OUTPUT_SIZE = MAX_SEATS
DEFAULT_WEIGHTS = Path(__file__).with_name("weights") / "value-v1.npz"
# A shipped network is small; a file much larger than this is not one of ours.
MAX_PARAMETERS = 4_000_000

Array = npt.NDArray[np.float32]


class NetworkFormatError(ValueError):
    """A weight file that is not a value network of this format (wrong arrays, shapes,
    version, encoding, or values that are not finite numbers)."""


@cache
def preset_features(preset: str) -> tuple[float, ...]:
    """The inputs after the view encoding: one-hot family, then 1.0 for team play."""
    rules = make_rules(preset)
    family = [1.0 if rules.family == f else 0.0 for f in FAMILY_ORDER]
    return (*family, 1.0 if rules.teams else 0.0)


def view_features(view: View) -> list[float]:
    """The view encoding and the preset's features: the input layout, hands as one seat
    knows them."""
    values = encode_view(view)
    values.extend(preset_features(view.preset))
    return values


_KNOWN = VIEW_OFFSETS["known_left_1"]


def position_features(game: Game, seat: int) -> list[float]:
    """The network's input for a position with every hand known, as in a search's
    determinization or a finished self-play game: ``seat``'s view encoding with each other
    hand's block (``known_left_k``) holding that whole hand, then the preset's features."""
    values = view_features(game.view(seat))
    n = game.n
    for step in range(1, n):
        mask = game.hand_mask((seat + step) % n)
        offset = _KNOWN + (step - 1) * NUM_CARDS
        while mask:
            low = mask & -mask
            values[offset + low.bit_length() - 1] = 1.0
            mask ^= low
    return values


def _sigmoid(x: Array) -> Array:
    return np.asarray(1.0 / (1.0 + np.exp(-np.clip(x, -30.0, 30.0))), dtype=np.float32)


class Perceptron:
    """The weights of a multilayer perceptron, ``layers`` of ``(weights, bias)`` with ReLU
    between them, and the meta its file carries. The value and the policy networks share it
    and differ in their last layer and in how they multiply (each its own, for speed or for
    bit-for-bit reproducible training)."""

    def __init__(
        self, layers: list[tuple[Array, Array]], meta: dict[str, Any] | None = None
    ) -> None:
        self.layers = [(np.ascontiguousarray(w), np.ascontiguousarray(b)) for w, b in layers]
        self.meta: dict[str, Any] = dict(meta or {})

    @property
    def sizes(self) -> list[int]:
        return [int(self.layers[0][0].shape[0])] + [int(w.shape[1]) for w, _ in self.layers]


class ValueNet(Perceptron):
    """P(loses) for each relative seat: sigmoid outputs."""

    def logits(self, inputs: npt.ArrayLike) -> Array:
        """The last layer's outputs before the sigmoid, for a batch ``(N, inputs)`` or one
        input vector."""
        h = np.asarray(inputs, dtype=np.float32)
        last = len(self.layers) - 1
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < last:
                np.maximum(h, 0.0, out=h)
        return h

    def forward(self, inputs: npt.ArrayLike) -> Array:
        """P(loses) for each relative seat (entries for seats not at the table mean nothing)."""
        return _sigmoid(self.logits(inputs))

    def evaluate(self, features: list[float]) -> Array:
        """:meth:`forward` of one input, computed without BLAS: the search's call.

        A BLAS matrix product may split its sums differently with the number of threads or
        the process it runs in, and a last-bit difference can turn a search's choice; here
        every sum is numpy's own (``einsum`` without ``optimize``) in a fixed order, so a
        seeded search plays the same moves in the arena's worker processes as in one
        process. The input is mostly zeros (cards absent), so the first layer sums only the
        rows of the inputs present."""
        x = np.fromiter(features, dtype=np.float32, count=len(features))
        present = np.flatnonzero(x)
        w, b = self.layers[0]
        h = np.einsum("i,ij->j", x[present], w[present]) + b  # einsum's own loops, no BLAS
        for w, b in self.layers[1:]:
            np.maximum(h, 0.0, out=h)
            h = np.einsum("i,ij->j", h, w) + b
        return _sigmoid(h)


def save_network(path: Path, net: ValueNet) -> None:
    """Write ``net`` in the documented format (``training`` in its meta is kept)."""
    meta = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "encoding_version": VIEW_ENCODING_VERSION,
        "layers": net.sizes,
        "training": net.meta.get("training", {}),
    }
    write_archive(path, meta, net.layers)


def write_archive(path: Path, meta: dict[str, Any], layers: list[tuple[Array, Array]]) -> None:
    """A weight archive: ``meta`` as UTF-8 JSON bytes and the layers as ``w0, b0, ...``
    (float32), written so that the file is a function of its contents alone."""
    arrays: dict[str, Any] = {
        "meta": np.frombuffer(json.dumps(meta, sort_keys=True).encode(), dtype=np.uint8)
    }
    for i, (w, b) in enumerate(layers):
        arrays[f"w{i}"] = w.astype(np.float32)
        arrays[f"b{i}"] = b.astype(np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    # np.savez stamps each member with the time of writing; a fixed stamp and order make
    # the file a function of the weights alone, so training reproduces it byte for byte.
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name in sorted(arrays):
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            with archive.open(info, "w") as member:
                np.lib.format.write_array(member, arrays[name], allow_pickle=False)


def read_archive(path: Path) -> dict[str, Any]:
    """Every array of a weight archive, read without pickle (a file holds data, never
    code); :class:`NetworkFormatError` if it is not an archive of arrays."""
    try:
        with path.open("rb") as file:  # ours to close, also when numpy gives up on it
            loaded = np.load(file, allow_pickle=False)
            if not isinstance(loaded, np.lib.npyio.NpzFile):
                raise ValueError("a single array, not an archive of arrays")
            with loaded as data:
                return {name: data[name] for name in data.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as error:
        # ValueError: among others an array that would need pickle to load
        raise NetworkFormatError(f"{path}: not a weight file: {error}") from None


def load_network(path: Path) -> ValueNet:
    """Read a weight file, checking everything the format fixes (see the module docstring)."""
    return _from_arrays(read_archive(path), str(path))


def _from_arrays(arrays: dict[str, Any], where: str) -> ValueNet:
    meta, layers = checked_layers(
        arrays, where, FORMAT, FORMAT_VERSION, INPUT_SIZE, OUTPUT_SIZE, VIEW_ENCODING_VERSION
    )
    return ValueNet(layers, meta)


def checked_layers(
    arrays: dict[str, Any],
    where: str,
    form: str,
    version: int,
    inputs: int,
    outputs: int,
    encoding_version: int,
) -> tuple[dict[str, Any], list[tuple[Array, Array]]]:
    """The meta and the layers of a weight archive's ``arrays``, after checking all that a
    format fixes (its name and version, the encoding's version, the sizes, float32 finite
    arrays); :class:`NetworkFormatError` naming the first fault."""
    if "meta" not in arrays:
        raise NetworkFormatError(f"{where}: no meta array")
    raw = arrays.pop("meta")
    if not isinstance(raw, np.ndarray) or raw.dtype != np.uint8 or raw.ndim != 1:
        raise NetworkFormatError(f"{where}: meta is not a byte array")
    try:
        meta = json.loads(raw.tobytes().decode())
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise NetworkFormatError(f"{where}: meta is not JSON: {error}") from None
    if not isinstance(meta, dict):
        raise NetworkFormatError(f"{where}: meta is not a JSON object")
    if meta.get("format") != form:
        raise NetworkFormatError(f"{where}: format {meta.get('format')!r}, not {form!r}")
    if meta.get("version") != version:
        raise NetworkFormatError(
            f"{where}: format version {meta.get('version')!r}; this program reads {version}"
        )
    if meta.get("encoding_version") != encoding_version:
        raise NetworkFormatError(
            f"{where}: trained on view encoding {meta.get('encoding_version')!r}, this program"
            f" encodes version {encoding_version}"
        )
    sizes = meta.get("layers")
    if (
        not isinstance(sizes, list)
        or len(sizes) < 2
        or not all(isinstance(s, int) and not isinstance(s, bool) and s > 0 for s in sizes)
    ):
        raise NetworkFormatError(f"{where}: layers {sizes!r} is not a list of sizes")
    if sizes[0] != inputs or sizes[-1] != outputs:
        raise NetworkFormatError(
            f"{where}: layers {sizes} do not go from {inputs} inputs to {outputs} outputs"
        )
    if sum(a * b + b for a, b in itertools.pairwise(sizes)) > MAX_PARAMETERS:
        raise NetworkFormatError(f"{where}: more than {MAX_PARAMETERS} parameters")
    expected = {f"{k}{i}" for i in range(len(sizes) - 1) for k in "wb"}
    if set(arrays) != expected:
        raise NetworkFormatError(
            f"{where}: arrays {sorted(arrays)}, expected {sorted(expected)} and meta"
        )
    layers = []
    for i, (fan_in, fan_out) in enumerate(itertools.pairwise(sizes)):
        w, b = arrays[f"w{i}"], arrays[f"b{i}"]
        for name, array, shape in ((f"w{i}", w, (fan_in, fan_out)), (f"b{i}", b, (fan_out,))):
            if array.dtype != np.float32 or array.shape != shape:
                raise NetworkFormatError(
                    f"{where}: {name} is {array.dtype} {array.shape}, not float32 {shape}"
                )
            if not np.isfinite(array).all():
                raise NetworkFormatError(f"{where}: {name} holds values that are not finite")
        layers.append((w, b))
    return meta, layers


@cache
def default_network() -> ValueNet:
    """The shipped network, read once per process."""
    return load_network(DEFAULT_WEIGHTS)
