"""The reward comparison: candidates trained and evaluated alike, and merged from separate runs."""

from __future__ import annotations

import json

import pytest

from engine.policy.compare import compare, merge
from engine.policy.evaluate import EvalSet
from engine.policy.simulator import CRITERIA, draw_targets

SETS = [EvalSet("validation", tuple(draw_targets(11, 10)), 4, CRITERIA, 12),
        EvalSet("held-out", tuple(draw_targets(13, 10)), 4, CRITERIA, 14)]


def test_merged_runs_equal_one_run():
    names = ["stake-mu0.5-eir0.2", "retrial-mu0.1-eir0.1"]
    whole = compare(600, seed=1, names=names, sets=SETS)
    parts = [json.loads(json.dumps(compare(600, seed=1, names=[n], sets=SETS).as_dict())) for n in names]
    merged = merge(parts)
    assert [c.name for c in merged.candidates] == names
    for s in SETS:
        assert [r.as_dict() for r in merged.rows(s.name)] == [r.as_dict() for r in whole.rows(s.name)]
    assert merged.selection == whole.selection
    assert whole.candidates[0].config.unit == "stake" and whole.candidates[1].config.unit == "retrial"
    with pytest.raises(ValueError, match="more than one"):
        merge([parts[0], parts[0]])
    other = dict(parts[1], seed=2)
    with pytest.raises(ValueError, match="share seed"):
        merge([parts[0], other])
