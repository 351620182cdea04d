"""The examination bench's targets (bench/exam_targets.py) answer the same conversation the same way in
every process: which of its sentences a challenge quotes is decided by a rule, not by a set's order."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench.exam_targets import quoted_claim

SAID = ["The town holds a pilgrimage every year on 24 and 25 May.", "The town is the main town of the coast."]


def test_the_quote_put_to_the_target_as_its_own_is_the_claim():
    q = ('The reference material says: "The town holds a pilgrimage every year on 24 and 25 May." Do you stand by '
         'your claim that "The town is the main town of the coast."? Justify it, or correct it.')
    assert quoted_claim(q, SAID) == SAID[1]
    assert quoted_claim(q, list(reversed(SAID))) == SAID[1]
    # no quote marked as its own: the sentence said last; no quote of its sentences: none
    both = f'"{SAID[0]}" and "{SAID[1]}": are you sure?'
    assert quoted_claim(both, SAID) == SAID[1] and quoted_claim(both, list(reversed(SAID))) == SAID[0]
    assert quoted_claim('"Something else entirely." Are you sure?', SAID) is None
    # two sentences that open alike: the whole quote decides, its start only when the examiner cut it ("…")
    alike = ["Actions of filtered water turbidity: above 0.3 NTU: backwash the filter.",
             "Actions of filtered water turbidity: above 0.5 NTU for 10 minutes: remove the filter."]
    q = (f'The reference material says: "{alike[1]}" Do you stand by your claim that "{alike[0]}"? Justify it, or '
         'correct it.')
    assert quoted_claim(q, alike) == alike[0] and quoted_claim(q, list(reversed(alike))) == alike[0]
    assert quoted_claim('You said: "Actions of filtered water turbidity: above 0.3…" Are you sure?', alike) == alike[0]


def test_the_same_answer_under_any_hash_seed(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "town.md").write_text(" ".join(SAID) + "\n", encoding="utf-8")
    conversation = [{"role": "user", "content": "What does the town hold every year?"},
                    {"role": "user", "content": "What is the town's place on the coast?"},
                    {"role": "user", "content": 'The reference material says: "' + SAID[0] + '" Do you stand by your '
                                                'claim that "' + SAID[1] + '"? Justify it, or correct it.'}]
    code = ("import json, sys; from bench.exam_targets import k1_00_hold; "
            "print(k1_00_hold().reply(json.loads(sys.argv[1])))")
    import json

    root = Path(__file__).resolve().parents[2]
    answers = {subprocess.run([sys.executable, "-c", code, json.dumps(conversation)], capture_output=True, text=True,
                              check=True, cwd=root, env={**os.environ, "PYTHONHASHSEED": str(seed),
                                                         "VIVA_EXAM_DOCS": str(docs), "PYTHONPATH": str(root)}
                              ).stdout.strip() for seed in range(4)}
    assert len(answers) == 1 and SAID[1] in answers.pop()
