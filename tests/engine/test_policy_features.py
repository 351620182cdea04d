"""State features: order, encoding of undefined values at t = 0, validation."""

from __future__ import annotations

import numpy as np
import pytest

from engine.policy.features import (
    ACTIONS,
    FEATURE_NAMES,
    PREV_ACTIONS,
    state_batch,
    state_vector,
)


def test_names_and_orders():
    assert ACTIONS == ("follow-up", "challenge")
    assert PREV_ACTIONS == ("none", "follow-up", "challenge")
    assert len(FEATURE_NAMES) == 7


def test_state_vector_layout():
    x = state_vector(0.5, -0.25, 0.8, "challenge", 3, 6)
    assert x.dtype == np.float32 and x.shape == (7,)
    np.testing.assert_allclose(x, [0.5, -0.25, 0.8, 0, 0, 1, 0.5], rtol=0, atol=1e-7)


def test_undefined_values_at_t0():
    x = state_vector(0.25, None, None, "none", 0, 6)
    np.testing.assert_array_equal(x, np.array([0.25, 0.0, 1.0, 1, 0, 0, 0.0], dtype=np.float32))


def test_batch_matches_vector_and_nan_means_undefined():
    batch = state_batch([0.1, 0.9], [np.nan, 0.2], [np.nan, 0.7], [0, 1], 2, 6)
    assert batch.shape == (2, 7)
    np.testing.assert_array_equal(batch[0], state_vector(0.1, None, None, "none", 2, 6))
    np.testing.assert_array_equal(batch[1], state_vector(0.9, 0.2, 0.7, "follow-up", 2, 6))


@pytest.mark.parametrize("kwargs", [
    {"prev_action": "maybe"},
    {"t": 6},
    {"t": -1},
    {"turns": 0},
])
def test_invalid_inputs(kwargs):
    args = {"score": 0.5, "delta": 0.0, "cos": 1.0, "prev_action": "none", "t": 0, "turns": 6} | kwargs
    with pytest.raises(ValueError):
        state_vector(**args)


def test_batch_shape_mismatch():
    with pytest.raises(ValueError, match="delta"):
        state_batch([0.1, 0.2], [0.0], None, [0, 0], 0, 6)
