"""Python targets of known ability for ``bench/efficiency.py --engine`` (issue 28).

``AbleNN`` (NN = 00..11) has ability ``ABILITIES[NN]`` (evenly spaced from -1.5 to 1.5). Each question of
the answer key (a MedQA-style JSONL, path in ``VIVA_EFFICIENCY_KEY``) has a hidden difficulty ``b`` drawn
from N(0, 1) by a hash of its text; the target answers it right with probability ``1 / (1 + exp(-(ability -
b)))``, the draw also fixed by a hash of (target, question), so the same target always gives the same
answer. Right: the key's letter; wrong: the next letter. Questions not in the key (the graded protocol's
extension questions) get "I do not know."
"""

from __future__ import annotations

import hashlib
import json
import math
import os

import numpy as np

ABILITIES = [round(-1.5 + 3.0 * k / 11, 4) for k in range(12)]
KEY_ENV = "VIVA_EFFICIENCY_KEY"
_KEY: list[dict] | None = None


def _key() -> list[dict]:
    global _KEY
    if _KEY is None:
        with open(os.environ[KEY_ENV], encoding="utf-8") as fh:
            _KEY = [json.loads(line) for line in fh if line.strip()]
    return _KEY


def _unit(*parts: str) -> float:
    return int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "little") / 2 ** 64


def difficulty(question: str) -> float:
    """The hidden difficulty of a question: N(0, 1) seeded by its text."""
    seed = int.from_bytes(hashlib.sha256(question.encode()).digest()[:8], "little")
    return float(np.random.default_rng(seed).normal())


def p_right(ability: float, question: str) -> float:
    """The probability that a target of this ability answers this question right."""
    return 1.0 / (1.0 + math.exp(-(ability - difficulty(question))))


class _Able:
    ability = 0.0

    def reply(self, messages):
        asked = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        row = next((r for r in _key() if r["question"][:200] in asked), None)
        if row is None:
            return "I do not know."
        letters = sorted(row["options"])
        right = row["answer_idx"]
        if _unit(type(self).__name__, row["question"]) < p_right(self.ability, row["question"]):
            return right
        return letters[(letters.index(right) + 1) % len(letters)]

    def close(self):
        pass


for _k, _ability in enumerate(ABILITIES):
    globals()[f"Able{_k:02d}"] = type(f"Able{_k:02d}", (_Able,), {"ability": _ability})
TARGETS = [f"python:bench.efficiency_targets:Able{k:02d}" for k in range(len(ABILITIES))]
