"""The numpy training both learned parts of the search share (``train_value.py``,
``train_policy.py``): a perceptron's initial weights, its forward and backward passes, and
Adam with decoupled weight decay, all in float32 and in a fixed order of operations, so that
the same arguments train the same file byte for byte."""

from __future__ import annotations

import itertools

import numpy as np


def initial_params(sizes: list[int], rng: np.random.Generator) -> list[np.ndarray]:
    """He-initialised weights and zero biases, ``[w0, b0, w1, b1, ...]``."""
    params: list[np.ndarray] = []
    for fan_in, fan_out in itertools.pairwise(sizes):
        params.append((rng.standard_normal((fan_in, fan_out)) * np.sqrt(2.0 / fan_in)).astype(
            np.float32))  # fmt: skip
        params.append(np.zeros(fan_out, dtype=np.float32))
    return params


def forward(params: list[np.ndarray], x: np.ndarray) -> list[np.ndarray]:
    """Every layer's output from the input ``x`` on (ReLU between, the last one linear)."""
    layers = len(params) // 2
    acts = [x]
    h = x
    for i in range(layers):
        h = h @ params[2 * i] + params[2 * i + 1]
        if i < layers - 1:
            h = np.maximum(h, 0.0)
        acts.append(h)
    return acts


def backward(
    params: list[np.ndarray], acts: list[np.ndarray], grad: np.ndarray
) -> list[np.ndarray]:
    """The gradients of every parameter from ``grad``, that of the last layer's output."""
    layers = len(params) // 2
    grads: list[np.ndarray] = [np.empty(0)] * len(params)
    for i in reversed(range(layers)):
        grads[2 * i] = acts[i].T @ grad
        grads[2 * i + 1] = grad.sum(axis=0)
        if i:
            grad = (grad @ params[2 * i].T) * (acts[i] > 0)
    return grads


class Adam:
    """Adam with decoupled weight decay (AdamW) on the weight matrices (not the biases)."""

    def __init__(self, params: list[np.ndarray]) -> None:
        self.first = [np.zeros_like(p) for p in params]
        self.second = [np.zeros_like(p) for p in params]
        self.beta1, self.beta2, self.eps = 0.9, 0.999, 1e-8
        self.steps = 0

    def step(
        self, params: list[np.ndarray], grads: list[np.ndarray], rate: float, decay: float
    ) -> None:
        """One update of ``params`` in place."""
        beta1, beta2 = self.beta1, self.beta2
        self.steps += 1
        step = self.steps
        first, second = self.first, self.second
        for k, g in enumerate(grads):
            g = g.astype(np.float32)
            first[k] = beta1 * first[k] + (1 - beta1) * g
            second[k] = beta2 * second[k] + (1 - beta2) * g * g
            mhat = first[k] / (1 - beta1**step)
            vhat = second[k] / (1 - beta2**step)
            shrink = rate * decay * params[k] if k % 2 == 0 else 0.0
            params[k] = (params[k] - rate * mhat / (np.sqrt(vhat) + self.eps) - shrink).astype(
                np.float32
            )
