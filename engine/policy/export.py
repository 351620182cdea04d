"""Export the actor to ONNX with ``onnx.helper`` (the ``onnx`` package is needed here only).

Graph: ``state`` float32 [N, 7] → MatMul/Add/Tanh → MatMul/Add/Tanh → MatMul/Add → Softmax(axis=1)
→ ``probs`` float32 [N, 2] (index 0 follow-up, 1 challenge). Opset 17, IR version 8, so any
onnxruntime >= 1.13 loads it. The feature and action names are written into the model's metadata,
which :class:`engine.policy.policies.OnnxPolicy` checks when it loads a file.

The serialisation is deterministic: the same weights give the same bytes (no timestamps inside).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from engine.policy.features import ACTIONS, FEATURE_NAMES, N_FEATURES
from engine.policy.network import LAYERS, Params

OPSET = 17
IR_VERSION = 8
INPUT_NAME = "state"
OUTPUT_NAME = "probs"


def build_model(actor: Params, metadata: dict[str, str] | None = None):
    """The ONNX ``ModelProto`` of the actor.

    Args:
        actor: actor parameters (``W1 .. b3``; weights [in, out]).
        metadata: extra ``metadata_props`` (string to string).

    Returns:
        An ``onnx.ModelProto`` that passes ``onnx.checker.check_model``.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    initializers = []
    nodes = []
    current = INPUT_NAME
    for i, name in enumerate(LAYERS):
        w, b = f"W{name}", f"b{name}"
        initializers.append(numpy_helper.from_array(np.asarray(actor[w], dtype=np.float32), w))
        initializers.append(numpy_helper.from_array(np.asarray(actor[b], dtype=np.float32), b))
        nodes.append(helper.make_node("MatMul", [current, w], [f"mm{name}"], name=f"matmul{name}"))
        nodes.append(helper.make_node("Add", [f"mm{name}", b], [f"z{name}"], name=f"add{name}"))
        current = f"z{name}"
        if i < len(LAYERS) - 1:
            nodes.append(helper.make_node("Tanh", [current], [f"h{name}"], name=f"tanh{name}"))
            current = f"h{name}"
    nodes.append(helper.make_node("Softmax", [current], [OUTPUT_NAME], name="softmax", axis=1))
    graph = helper.make_graph(
        nodes,
        "viva_policy_actor",
        [helper.make_tensor_value_info(INPUT_NAME, TensorProto.FLOAT, ["N", N_FEATURES])],
        [helper.make_tensor_value_info(OUTPUT_NAME, TensorProto.FLOAT, ["N", len(ACTIONS)])],
        initializer=initializers,
    )
    model = helper.make_model(graph, producer_name="viva", opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    model.doc_string = "viva questioning policy: state [N, 7] -> probs [N, 2] (follow-up, challenge)"
    props = {"features": json.dumps(list(FEATURE_NAMES)), "actions": json.dumps(list(ACTIONS))}
    props.update(metadata or {})
    helper.set_model_props(model, props)
    onnx.checker.check_model(model)
    return model


def export_onnx(actor: Params, path: str | Path, metadata: dict[str, str] | None = None) -> str:
    """Write the actor to ``path`` as ONNX and return the file's sha256 (hex).

    Args:
        actor: actor parameters.
        path: destination ``.onnx`` file (parent folders are created).
        metadata: extra ``metadata_props``; keep them deterministic (no times) so that retraining
            with the same seed gives the same bytes.
    """
    data = build_model(actor, metadata).SerializeToString()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def file_sha256(path: str | Path) -> str:
    """sha256 (hex) of a file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()
