"""The questioning policy: follow-up or challenge, decided turn by turn.

- ``features``: the 7-float state, one definition for training, the runner and the evaluation.
- ``policies``: the trained ONNX policy (onnxruntime only) and the rule baselines; ``load_policy``.
- ``reward``: the rewards (``outcome``, ``evidence``, ``measure``) and their constants.
- ``simulator``: simulated targets with ground-truth parameters, the training environment; the
  held-out, shifted and validation target draws.
- ``network``, ``ppo``: the actor/critic MLPs and PPO in numpy.
- ``export``: the actor to ONNX with ``onnx.helper`` (only place that imports ``onnx``).
- ``logs``: logged adaptive sessions read back from a store.
- ``evaluate``: the evaluation (measurement error, FDR, EIR, ground-truth recovery) on simulated
  sets and on logged real-engine sessions; the goals and the reward selection rule.
- ``compare``: trains every candidate reward and compares them (``bench/policy.py compare``).
- ``calibrate``: simulator parameters fitted per target from logged sessions.
- ``pipeline``, ``card``: train/export/evaluate/card (``train_and_export``) and ``eval_report``,
  what ``viva policy eval`` prints; ``cli``: the click commands.
"""
