"""The actor and critic networks: 3-layer MLPs (two tanh hidden layers) in plain numpy.

Parameters are a dict ``{"W1", "b1", "W2", "b2", "W3", "b3"}`` of float64 arrays; ``W`` has shape
[in, out] so a layer is ``x @ W + b``, exactly the ``MatMul`` + ``Add`` of the ONNX export. The
backward pass is written out by hand (tests check it against finite differences).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.policy.features import N_FEATURES

HIDDEN = 64
LAYERS = ("1", "2", "3")

Params = dict[str, np.ndarray]


def orthogonal(rng: np.random.Generator, rows: int, cols: int, gain: float) -> np.ndarray:
    """An orthogonal matrix [rows, cols] scaled by ``gain`` (the usual PPO initialisation)."""
    a = rng.standard_normal((max(rows, cols), min(rows, cols)))
    q, r = np.linalg.qr(a)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return gain * q[:rows, :cols]


def init_mlp(rng: np.random.Generator, n_out: int, out_gain: float, n_in: int = N_FEATURES,
             hidden: int = HIDDEN) -> Params:
    """Random initial parameters: orthogonal weights (gain √2 for the hidden layers, ``out_gain`` for
    the output layer), zero biases.

    Args:
        rng: the random generator (the seed decides the network).
        n_out: output width (2 for the actor, 1 for the critic).
        out_gain: gain of the output layer (0.01 for the actor, so it starts close to uniform).
        n_in: input width.
        hidden: hidden width.
    """
    sizes = [(n_in, hidden, np.sqrt(2.0)), (hidden, hidden, np.sqrt(2.0)), (hidden, n_out, out_gain)]
    params: Params = {}
    for name, (rows, cols, gain) in zip(LAYERS, sizes, strict=True):
        params[f"W{name}"] = orthogonal(rng, rows, cols, gain)
        params[f"b{name}"] = np.zeros(cols)
    return params


@dataclass
class Cache:
    """Activations kept by :func:`forward` for :func:`backward`."""

    x: np.ndarray
    h1: np.ndarray
    h2: np.ndarray


def forward(params: Params, x: np.ndarray) -> tuple[np.ndarray, Cache]:
    """Outputs (logits for the actor, value for the critic) of a batch ``x`` [N, in]."""
    x = np.asarray(x, dtype=np.float64)
    h1 = np.tanh(x @ params["W1"] + params["b1"])
    h2 = np.tanh(h1 @ params["W2"] + params["b2"])
    return h2 @ params["W3"] + params["b3"], Cache(x, h1, h2)


def backward(params: Params, cache: Cache, d_out: np.ndarray) -> Params:
    """Gradients of a scalar loss with respect to every parameter, given ``d_out`` = dLoss/dOutput."""
    grads: Params = {}
    grads["W3"] = cache.h2.T @ d_out
    grads["b3"] = d_out.sum(axis=0)
    d_z2 = (d_out @ params["W3"].T) * (1.0 - cache.h2 ** 2)
    grads["W2"] = cache.h1.T @ d_z2
    grads["b2"] = d_z2.sum(axis=0)
    d_z1 = (d_z2 @ params["W2"].T) * (1.0 - cache.h1 ** 2)
    grads["W1"] = cache.x.T @ d_z1
    grads["b1"] = d_z1.sum(axis=0)
    return grads


def softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise softmax, numerically stable."""
    z = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Row-wise log-softmax, numerically stable."""
    z = logits - logits.max(axis=1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=1, keepdims=True))


def actor_probs(params: Params, states: np.ndarray) -> np.ndarray:
    """Action probabilities [N, 2] of the actor for states [N, 7] (the ONNX graph computes the same)."""
    logits, _ = forward(params, states)
    return softmax(logits)
