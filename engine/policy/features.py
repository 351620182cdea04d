"""The policy's state: one definition shared by training, the interview runner and the evaluation.

The state after turn ``t`` of a session with ``T`` turns is the 7-float vector

    [s_t, Δs_t, cos_t, prev=none, prev=follow-up, prev=challenge, t/T]

- ``s_t``: the turn score in [0, 1] (TestAgent Eq. 1: weighted share of criteria the running summary
  covers).
- ``Δs_t = s_t − s_{t−1}``; undefined at ``t = 0``, where it is encoded as ``0.0``.
- ``cos_t``: cosine similarity of the embedded summaries after turns ``t`` and ``t − 1`` (a summary's
  vector: the sum of its sentences' vectors, :mod:`engine.knowledge.summary_vector`, as the simulator
  sums one vector per claim); undefined at ``t = 0``, where it is encoded as ``1.0``.  Both encodings mean "no change measured"; the one-hot
  ``prev=none`` tells the network that it is looking at the first turn, so the network never has to
  guess whether a 0.0 is a measured stagnation or a missing value.
- one-hot of the action that produced turn ``t`` (``none`` for the opening question ``q0``).
- ``t/T``: progress through the session.

Turns are numbered ``0 .. T−1``; turn 0 answers the opening question and the policy picks the type of
turn ``t + 1`` from the state after turn ``t`` (so a session of ``T`` turns has ``T − 1`` decisions).

:func:`state_batch` is the only implementation; :func:`state_vector` is its one-row view, so the
simulator (which builds states for many episodes at once) and the runner (one session) cannot drift.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

ACTIONS: tuple[str, str] = ("follow-up", "challenge")
"""The policy's actions, in the order of the network's output ``probs`` (index 0, index 1)."""

PREV_ACTIONS: tuple[str, str, str] = ("none", "follow-up", "challenge")
"""What produced the current turn, in the order of the one-hot block of the state."""

FEATURE_NAMES: tuple[str, ...] = (
    "score",
    "delta",
    "cos",
    "prev_none",
    "prev_follow_up",
    "prev_challenge",
    "progress",
)
"""Names of the 7 state features, in order."""

N_FEATURES = len(FEATURE_NAMES)

DELTA_WHEN_UNDEFINED = 0.0
"""Encoding of Δs at t = 0 (no previous turn)."""

COS_WHEN_UNDEFINED = 1.0
"""Encoding of cos at t = 0 (no previous summary)."""

# Column indices, for code that reads states back (rules, evaluation).
SCORE, DELTA, COS, PREV_NONE, PREV_FOLLOW_UP, PREV_CHALLENGE, PROGRESS = range(N_FEATURES)


def prev_action_index(prev_action: str) -> int:
    """Index of ``prev_action`` in :data:`PREV_ACTIONS`.

    Raises:
        ValueError: ``prev_action`` is not one of :data:`PREV_ACTIONS`.
    """
    try:
        return PREV_ACTIONS.index(prev_action)
    except ValueError:
        raise ValueError(
            f"unknown previous action {prev_action!r}; expected one of {', '.join(PREV_ACTIONS)}"
        ) from None


def state_batch(
    score: np.ndarray | Sequence[float],
    delta: np.ndarray | Sequence[float] | None,
    cos: np.ndarray | Sequence[float] | None,
    prev_index: np.ndarray | Sequence[int],
    t: int,
    turns: int,
) -> np.ndarray:
    """States of several sessions that are all after turn ``t``.

    Args:
        score: ``s_t`` per session, shape [B].
        delta: ``Δs_t`` per session, shape [B]; ``None`` when undefined (t = 0). NaN entries are
            treated as undefined too.
        cos: ``cos_t`` per session, shape [B]; ``None``/NaN when undefined.
        prev_index: index into :data:`PREV_ACTIONS` of the action that produced turn ``t``, shape [B].
        t: the turn just answered, ``0 <= t < turns``.
        turns: ``T``, the number of turns in a session.

    Returns:
        float32 array [B, 7] in the order of :data:`FEATURE_NAMES`.

    Raises:
        ValueError: inconsistent shapes, ``t`` outside ``[0, turns)`` or a bad action index.
    """
    if turns < 1:
        raise ValueError(f"turns must be >= 1, got {turns}")
    if not 0 <= t < turns:
        raise ValueError(f"turn index t={t} outside [0, {turns})")
    s = np.asarray(score, dtype=np.float64).reshape(-1)
    count = s.shape[0]
    d = _fill(delta, count, DELTA_WHEN_UNDEFINED, "delta")
    c = _fill(cos, count, COS_WHEN_UNDEFINED, "cos")
    prev = np.asarray(prev_index, dtype=np.int64).reshape(-1)
    if prev.shape[0] != count:
        raise ValueError(f"prev_index has {prev.shape[0]} entries, score has {count}")
    if count and (prev.min() < 0 or prev.max() >= len(PREV_ACTIONS)):
        raise ValueError(f"prev_index entries must be in [0, {len(PREV_ACTIONS)})")
    out = np.zeros((count, N_FEATURES), dtype=np.float32)
    out[:, SCORE] = s
    out[:, DELTA] = d
    out[:, COS] = c
    out[np.arange(count), PREV_NONE + prev] = 1.0
    out[:, PROGRESS] = t / turns
    return out


def state_vector(
    score: float,
    delta: float | None,
    cos: float | None,
    prev_action: str,
    t: int,
    turns: int,
) -> np.ndarray:
    """The state of one session after turn ``t`` (what the interview runner calls).

    Args:
        score: ``s_t`` in [0, 1].
        delta: ``Δs_t``, or ``None`` at ``t = 0`` (encoded as ``0.0``).
        cos: ``cos_t``, or ``None`` at ``t = 0`` (encoded as ``1.0``).
        prev_action: one of :data:`PREV_ACTIONS`: ``"none"`` for the opening question.
        t: the turn just answered, ``0 <= t < turns``.
        turns: ``T``, the number of turns in the session.

    Returns:
        float32 array of shape [7].

    Raises:
        ValueError: unknown ``prev_action`` or ``t`` outside ``[0, turns)``.
    """
    return state_batch([score], None if delta is None else [delta], None if cos is None else [cos],
                       [prev_action_index(prev_action)], t, turns)[0]


def _fill(values: np.ndarray | Sequence[float] | None, count: int, default: float, name: str) -> np.ndarray:
    if values is None:
        return np.full(count, default, dtype=np.float64)
    arr = np.asarray(values, dtype=np.float64).reshape(-1)
    if arr.shape[0] != count:
        raise ValueError(f"{name} has {arr.shape[0]} entries, score has {count}")
    return np.where(np.isnan(arr), default, arr)
