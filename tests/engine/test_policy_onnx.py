"""ONNX export and the policies the interview runner loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from engine.policy import network
from engine.policy.export import export_onnx, file_sha256
from engine.policy.features import FEATURE_NAMES, state_vector
from engine.policy.policies import (
    POLICY_NAMES,
    NetworkPolicy,
    OnnxPolicy,
    PolicyError,
    load_policy,
)
from models import model_file


@pytest.fixture
def actor():
    return network.init_mlp(np.random.default_rng(7), 2, 1.0)


@pytest.fixture
def model_path(tmp_path, actor):
    path = tmp_path / "policy.onnx"
    export_onnx(actor, path)
    return path


def test_onnxruntime_matches_numpy_forward(actor, model_path):
    session = ort.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    states = np.random.default_rng(0).uniform(-1.5, 1.5, size=(257, 7)).astype(np.float32)
    got = session.run(["probs"], {"state": states})[0]
    expected = network.actor_probs(actor, states)
    assert got.dtype == np.float32 and got.shape == (257, 2)
    np.testing.assert_allclose(got, expected, atol=1e-5, rtol=0)


def test_graph_uses_only_the_promised_ops(model_path):
    model = onnx.load(str(model_path))
    onnx.checker.check_model(model)
    assert {n.op_type for n in model.graph.node} == {"MatMul", "Add", "Tanh", "Softmax"}
    assert model.opset_import[0].version >= 17
    assert [i.name for i in model.graph.input] == ["state"]
    assert [o.name for o in model.graph.output] == ["probs"]
    meta = {p.key: p.value for p in model.metadata_props}
    assert json.loads(meta["features"]) == list(FEATURE_NAMES)


def test_export_is_byte_deterministic(tmp_path, actor):
    a = export_onnx(actor, tmp_path / "a.onnx", {"seed": "1"})
    b = export_onnx({k: v.copy() for k, v in actor.items()}, tmp_path / "b.onnx", {"seed": "1"})
    assert a == b == file_sha256(tmp_path / "a.onnx")


def test_onnx_policy_equals_network_policy(actor, model_path):
    onnx_policy = OnnxPolicy(model_path)
    assert onnx_policy.version == f"sha256:{file_sha256(model_path)[:12]}"
    states = np.random.default_rng(1).uniform(0, 1, size=(50, 7)).astype(np.float32)
    np.testing.assert_allclose(onnx_policy.probs(states), NetworkPolicy(actor).probs(states), atol=1e-5)
    a, _ = onnx_policy.act(states, np.random.default_rng(3))
    b, _ = NetworkPolicy(actor).act(states, np.random.default_rng(3))
    assert (a == b).mean() > 0.95


def test_choose_is_reproducible_for_a_seed(model_path):
    policy = OnnxPolicy(model_path)
    state = state_vector(0.4, 0.0, 0.95, "follow-up", 2, 6)
    runs = [[policy.choose(state, rng)[0] for _ in range(20)]
            for rng in (np.random.default_rng(11), np.random.default_rng(11))]
    assert runs[0] == runs[1]
    action, probs = policy.choose(state, np.random.default_rng(0))
    assert action in ("follow-up", "challenge") and len(probs) == 2 and abs(sum(probs) - 1) < 1e-5


def test_greedy_takes_the_most_probable_action(model_path):
    policy = OnnxPolicy(model_path, greedy=True)
    states = np.random.default_rng(2).uniform(0, 1, size=(40, 7)).astype(np.float32)
    actions, probs = policy.act(states, np.random.default_rng(0))
    np.testing.assert_array_equal(actions, (probs[:, 1] > probs[:, 0]).astype(int))


def test_missing_model_names_the_file(tmp_path):
    missing = tmp_path / "nope.onnx"
    with pytest.raises(PolicyError, match="nope.onnx"):
        load_policy("onnx", str(missing))


def test_feature_order_mismatch_is_refused(tmp_path, actor):
    path = tmp_path / "old.onnx"
    export_onnx(actor, path, {"features": json.dumps(list(reversed(FEATURE_NAMES)))})
    with pytest.raises(PolicyError, match="retrain"):
        OnnxPolicy(path)


def test_rule_policies():
    t0 = state_vector(0.0, None, None, "none", 0, 6)
    stagnant = state_vector(0.5, 0.0, 0.9, "follow-up", 2, 6)
    gaining = state_vector(0.5, 0.2, 0.9, "follow-up", 2, 6)
    rng = np.random.default_rng(0)
    threshold = load_policy("threshold")
    assert threshold.choose(t0, rng) == ("follow-up", [1.0, 0.0])
    assert threshold.choose(stagnant, rng)[0] == "challenge"
    assert threshold.choose(gaining, rng)[0] == "follow-up"
    assert load_policy("always-follow-up").choose(stagnant, rng)[0] == "follow-up"
    assert load_policy("always-challenge").choose(gaining, rng)[0] == "challenge"
    picks = {load_policy("random").choose(stagnant, rng)[0] for _ in range(50)}
    assert picks == {"follow-up", "challenge"}
    for name in POLICY_NAMES[1:]:
        policy = load_policy(name)
        assert policy.name == name and policy.version
        assert policy.probs(np.stack([t0, stagnant])).shape == (2, 2)


def test_unknown_policy_lists_valid_names():
    with pytest.raises(ValueError) as err:
        load_policy("clever")
    for name in POLICY_NAMES:
        assert name in str(err.value)


def test_bad_state_shape():
    with pytest.raises(ValueError, match="shape"):
        load_policy("random").probs(np.zeros((3, 6)))


def test_shipped_model_loads_with_onnxruntime_alone():
    # A fresh interpreter in which `import onnx` fails: the runner path must not need it.
    code = (
        "import sys; sys.modules['onnx'] = None\n"
        "import numpy as np\n"
        "from engine.policy.policies import load_policy\n"
        "from engine.policy.features import state_vector\n"
        "p = load_policy('onnx')\n"
        "a, probs = p.choose(state_vector(0.5, 0.0, 0.9, 'follow-up', 1, 6), np.random.default_rng(0))\n"
        "assert 'onnx' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
        "print(p.version, a, len(probs))\n"
    )
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=root,
                         env=env)
    assert out.stdout.startswith("sha256:")
    card = json.loads(model_file("policy.json").read_text())
    assert card["sha256"] == file_sha256(model_file("policy.onnx"))
    assert card["features"] == list(FEATURE_NAMES) and card["actions"] == ["follow-up", "challenge"]
    # `viva policy train` without reward options trains the card's reward (RewardSpec.shipped)
    from engine.policy.reward import RewardSpec

    assert card["reward"] == RewardSpec.shipped().card()
    assert card["reproducibility"]["command"].startswith("python bench/policy.py train --seed 0 --steps 400000")
