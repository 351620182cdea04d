"""The questioning policy: follow-up or challenge, decided turn by turn.

- ``features``: the 7-float state, one definition for training, the runner and the evaluation.
- ``policies``: the trained ONNX policy (onnxruntime only) and the rule baselines; ``load_policy``.
- ``reward``: the reward and its constants (τ, λ).
- ``simulator``: simulated targets with ground-truth parameters, the training environment.
- ``network``, ``ppo``: the actor/critic MLPs and PPO in numpy.
- ``export``: the actor to ONNX with ``onnx.helper`` (only place that imports ``onnx``).
- ``evaluate``: held-out evaluation (return, FDR, EIR, ground-truth recovery).
- ``calibrate``: simulator parameters fitted per target from logged sessions.
- ``pipeline``, ``card``, ``cli``: ``viva policy train | eval | calibrate`` and the model card.
"""
