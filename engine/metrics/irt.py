"""Item response theory for viva's benchmarks: calibrated items, a target's ability with its standard
error, the Score that ability implies, and adaptive item selection (issue 28).

The model. A scored unit (a gold question, a multiple-choice item, a criterion) ``i`` has a
discrimination ``a_i`` and a difficulty ``b_i``; a target of ability ``theta`` gets it right with
probability ``P_i(theta) = 1 / (1 + exp(-a_i (theta - b_i)))`` (the 2-parameter logistic model, 2PL).
Rasch is the same with every ``a_i = 1``. Abilities are on the scale of the targets the items were
calibrated on: ``theta ~ N(0, 1)`` over them.

Calibration (:func:`calibrate`): marginal maximum a posteriori, by Bock-Aitkin EM on a fixed grid of
:data:`GRID_POINTS` abilities from -6 to 6 weighted by the N(0, 1) density; each M-step takes Fisher-scoring
steps for every item at once, with the priors below. Missing responses (``NaN``: a target that never
met the item) are left out of the likelihood.

- Parametrised as ``logit P = a theta + d`` (``b = -d / a``). Priors: ``d_i ~ N(0, PRIOR_D_SD^2)`` with
  :data:`PRIOR_D_SD` = 2 keeps an item every calibration target got right (or wrong) finite, at a share
  right of about 0.95 to 0.98, instead of running off to infinity; ``log a ~ N(0, PRIOR_LOG_A_SD^2)``
  with :data:`PRIOR_LOG_A_SD` = 0.5 keeps a discrimination near 1 unless the responses clearly say
  otherwise (95% of the prior between 0.38 and 2.7).
- Rasch below :data:`MIN_TARGETS_2PL` targets: a discrimination estimated from fewer targets' responses
  than that mostly fits their noise (with 11 targets an item's 11 responses cannot tell a steep curve
  from a shallow one); ``model="auto"`` picks Rasch there and 2PL from there on. Measured
  (``bench/efficiency.py --models``, docs/calibration.md): on NQ301 with 11 targets the two predict
  held-out answers equally; on simulated items 2PL gains from 20 targets when discriminations vary
  widely and not yet at 50 when they vary little, so 30 is a compromise. viva's Rasch has one
  discrimination shared by every item, estimated (equivalently: the spread of the targets' abilities is
  estimated rather than fixed at 1), so targets that differ little are not spread over the whole scale.

Why hand-written rather than a library: ``girth`` (calibration) needs scipy, which viva does not
otherwise install; its 2PL fit took 97 s for 11 targets x 301 items on the project's shared 2-core
machine, ran its discriminations and difficulties into their bounds (no prior on difficulty), and it has
no adaptive loop. ``catsim`` (selection) pulls in matplotlib and scikit-learn. What viva needs is about
150 lines of numpy; with the priors off it gives girth's ``onepl_mml`` and ``twopl_mml`` estimates on a
fixed matrix, and the closed forms of the ability (tests/engine/test_irt.py).

Ability (:func:`ability`): the expected a posteriori (EAP) ability given the item parameters and the
target's responses, with the N(0, 1) prior of the calibration, on the same grid; its standard error is
the posterior standard deviation. A target that got everything right has a finite ability and a wide
interval, not an infinite one.

Expected Score (:func:`expected_accuracy`): the share of all the benchmark's items the target is expected
to get right, averaged over its ability's posterior; items it was asked count as answered (their
observed result), the others by their probability at that ability.

Selection (:func:`next_item`): the unasked item with the most Fisher information ``a^2 P (1 - P)`` at the
current ability estimate, drawn at random (seeded) among the :data:`TOP_K` most informative, so that
items are not all over-exposed ("randomesque" selection).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GRID_POINTS = 121
GRID = np.linspace(-6.0, 6.0, GRID_POINTS)
"""Abilities the integrals are taken over (quadrature nodes)."""
_PRIOR = np.exp(-0.5 * GRID ** 2)
PRIOR_WEIGHTS = _PRIOR / _PRIOR.sum()
"""The N(0, 1) ability prior on :data:`GRID`."""
PRIOR_D_SD = 2.0
"""Prior standard deviation of an item's intercept ``d = -a b`` (logits of its share right)."""
PRIOR_LOG_A_SD = 0.5
"""Prior standard deviation of the log of a discrimination."""
MIN_TARGETS_2PL = 30
"""Calibrations on fewer targets fit Rasch (every discrimination 1) when ``model="auto"``."""
TOP_K = 5
"""Adaptive selection draws among this many most informative items."""
MODELS = ("rasch", "2pl")


class IRTError(ValueError):
    """Responses that cannot be calibrated or scored (the message says why)."""


@dataclass(frozen=True)
class Calibration:
    """Fitted item parameters.

    Attributes:
        model: ``rasch`` or ``2pl``.
        a: discriminations [items] (all 1.0 under Rasch).
        b: difficulties [items].
        b_se: standard errors of the difficulties (from the curvature of the posterior, Rasch) or of
            the same for 2PL with the discrimination held at its estimate.
        n_targets: targets the fit used.
        iterations: EM iterations run.
        converged: whether the largest parameter change fell below the tolerance.
    """

    model: str
    a: np.ndarray
    b: np.ndarray
    b_se: np.ndarray
    n_targets: int
    iterations: int
    converged: bool


def p_correct(theta: np.ndarray | float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``P_i(theta)`` for every ability in ``theta`` (rows) and item (columns)."""
    theta = np.atleast_1d(np.asarray(theta, dtype=float))
    z = np.asarray(a, dtype=float)[None, :] * (theta[:, None] - np.asarray(b, dtype=float)[None, :])
    return 1.0 / (1.0 + np.exp(-z))


def _check(responses: np.ndarray) -> np.ndarray:
    r = np.asarray(responses, dtype=float)
    if r.ndim != 2:
        raise IRTError(f"responses must be a targets x items matrix, got shape {r.shape}")
    seen = r[~np.isnan(r)]
    if seen.size and not np.isin(seen, (0.0, 1.0)).all():
        raise IRTError("responses must be 1 (right), 0 (wrong) or missing")
    return r


def calibrate(responses: np.ndarray, model: str = "auto", max_iter: int = 500, tol: float = 1e-4) -> Calibration:
    """Fit item parameters to a targets x items matrix of 1/0 (``NaN``: not asked).

    Args:
        responses: [targets, items].
        model: ``rasch``, ``2pl`` or ``auto`` (Rasch below :data:`MIN_TARGETS_2PL` targets).
        max_iter: EM iterations at most.
        tol: stop when no parameter moves by more than this in an iteration.

    Raises:
        IRTError: fewer than 2 targets, an item no target answered, or an unknown model.
    """
    r = _check(responses)
    n_targets, n_items = r.shape
    if n_targets < 2:
        raise IRTError(f"calibration needs at least 2 targets' responses, got {n_targets}")
    observed = ~np.isnan(r)
    if not observed.any(axis=0).all():
        raise IRTError(f"{int((~observed.any(axis=0)).sum())} item(s) have no response from any target")
    if model == "auto":
        model = "2pl" if n_targets >= MIN_TARGETS_2PL else "rasch"
    if model not in MODELS:
        raise IRTError(f"unknown model {model!r} (choose from {', '.join(MODELS)} or auto)")
    right = np.where(observed, r, 0.0)
    seen = observed.astype(float)
    # start: intercept from the share right (logit), discrimination 1
    share = (right.sum(0) + 0.5) / (seen.sum(0) + 1.0)
    d = np.log(share / (1.0 - share))
    log_a = np.zeros(n_items)
    converged = False
    iterations = 0
    while iterations < max_iter:
        iterations += 1
        post = _posteriors(right, seen, np.exp(log_a), -d / np.exp(log_a))  # [targets, grid]
        n_q = post.T @ seen  # expected responses per grid point and item [grid, items]
        r_q = post.T @ right  # expected right answers
        old_d, old_log_a = d.copy(), log_a.copy()
        for _ in range(5):  # Fisher scoring in the M-step
            d, log_a = _m_step(n_q, r_q, d, log_a, model)
        change = max(np.abs(d - old_d).max(), np.abs(log_a - old_log_a).max())
        if change < tol:
            converged = True
            break
    a = np.exp(log_a)
    post = _posteriors(right, seen, a, -d / a)
    n_q = post.T @ seen
    p = p_correct(GRID, a, -d / a)
    info_d = (n_q * p * (1 - p)).sum(0) + 1.0 / PRIOR_D_SD ** 2
    return Calibration(model, a, -d / a, 1.0 / (np.sqrt(info_d) * a), n_targets, iterations, converged)


def _posteriors(right: np.ndarray, seen: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each target's posterior over :data:`GRID` [targets, grid] given its responses."""
    p = np.clip(p_correct(GRID, a, b), 1e-12, 1 - 1e-12)  # [grid, items]
    log_like = right @ np.log(p).T + (seen - right) @ np.log(1 - p).T  # [targets, grid]
    log_post = log_like + np.log(PRIOR_WEIGHTS)[None, :]
    log_post -= log_post.max(axis=1, keepdims=True)
    post = np.exp(log_post)
    return post / post.sum(axis=1, keepdims=True)


def _m_step(n_q: np.ndarray, r_q: np.ndarray, d: np.ndarray, log_a: np.ndarray, model: str) -> tuple:
    """One Fisher-scoring step on the expected counts, with the priors: every item's intercept ``d``
    (``logit P = a theta + d``) and discrimination (2PL: each item's; Rasch: the one they share)."""
    a = np.exp(log_a)
    p = 1.0 / (1.0 + np.exp(-(a[None, :] * GRID[:, None] + d[None, :])))
    resid = r_q - n_q * p  # d loglik / d z  [grid, items]
    w = n_q * p * (1 - p)
    dz_la = a[None, :] * GRID[:, None]  # d z / d log a
    g_d = resid.sum(0) - d / PRIOR_D_SD ** 2
    h_dd = w.sum(0) + 1.0 / PRIOR_D_SD ** 2
    if model == "rasch":  # the shared slope first, then the intercepts
        g = float((resid * dz_la).sum()) - float(log_a[0]) / PRIOR_LOG_A_SD ** 2
        h = float((w * dz_la ** 2).sum()) + 1.0 / PRIOR_LOG_A_SD ** 2
        return d + g_d / h_dd, log_a + float(np.clip(g / h, -0.5, 0.5))
    g_la = (resid * dz_la).sum(0) - log_a / PRIOR_LOG_A_SD ** 2
    h_ll = (w * dz_la ** 2).sum(0) + 1.0 / PRIOR_LOG_A_SD ** 2
    h_ld = (w * dz_la).sum(0)
    det = h_ll * h_dd - h_ld ** 2
    step_la = (h_dd * g_la - h_ld * g_d) / det
    step_d = (h_ll * g_d - h_ld * g_la) / det
    return d + np.clip(step_d, -1, 1), log_a + np.clip(step_la, -0.5, 0.5)


def posterior(responses: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """A target's posterior over :data:`GRID` given its responses [items] (``NaN``: not asked)."""
    r = np.asarray(responses, dtype=float).reshape(1, -1)
    _check(r)
    seen = ~np.isnan(r)
    return _posteriors(np.where(seen, r, 0.0), seen.astype(float), np.asarray(a, float), np.asarray(b, float))[0]


def ability(responses: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """The EAP ability and its standard error (posterior SD) from responses [items] (``NaN``: not asked)."""
    post = posterior(responses, a, b)
    mean = float(post @ GRID)
    return mean, float(np.sqrt(max(post @ (GRID - mean) ** 2, 0.0)))


def expected_accuracy(responses: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    """The share of all items the target is expected to get right (see the module docstring)."""
    r = np.asarray(responses, dtype=float)
    post = posterior(r, a, b)
    predicted = post @ p_correct(GRID, a, b)  # [items]
    seen = ~np.isnan(r)
    return float(np.where(seen, r, predicted).mean())


def information(theta: float, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Fisher information of every item at ``theta``: ``a^2 P (1 - P)``."""
    p = p_correct(theta, a, b)[0]
    return np.asarray(a, float) ** 2 * p * (1 - p)


def pick(info: np.ndarray, available: np.ndarray, rng: np.random.Generator, top_k: int = TOP_K) -> int | None:
    """Randomesque choice: the index of one of the ``top_k`` largest ``info`` among those ``available``
    (bool), drawn with ``rng`` (ties in stable index order); None when none is available."""
    candidates = np.flatnonzero(np.asarray(available, bool))
    if candidates.size == 0:
        return None
    order = candidates[np.argsort(-np.asarray(info, float)[candidates], kind="stable")]
    return int(rng.choice(order[:max(1, top_k)]))


def next_item(theta: float, a: np.ndarray, b: np.ndarray, available: np.ndarray, rng: np.random.Generator,
              top_k: int = TOP_K) -> int | None:
    """The index of the next item to ask: drawn (``rng``) among the ``top_k`` most informative at
    ``theta`` of those ``available`` (bool [items]); None when none is left."""
    return pick(information(theta, a, b), available, rng, top_k)
