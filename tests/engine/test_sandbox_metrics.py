"""eval_code sandbox limits, and the Dynamism metrics against TestAgent's published row."""

from __future__ import annotations

import pytest

from engine.judge.sandbox import run_eval_code
from engine.metrics.dynamism import TurnRecord, dynamism, robustness
from engine.metrics.scoring import turn_score, weighted_hit_score

HISTORY = [{"role": "examiner", "content": "Say Hello World"}, {"role": "agent", "content": "Hello World"}]


def test_hit_and_shims():
    code = ("assert isinstance(chat_history[-1], HumanMessage)\n"
            "assert isinstance(chat_history[0], AIMessage)\n"
            "assert chat_history[-1].content == 'Hello World' and chat_history[-1].role == 'agent'")
    result = run_eval_code(code, HISTORY)
    assert result.hit, result.reason


def test_miss_reason_is_the_assertion():
    result = run_eval_code("assert chat_history[-1].content == 'Bye', 'wrong words'", HISTORY)
    assert not result.hit and "AssertionError: wrong words" in result.reason


def test_timeout_is_a_miss():
    result = run_eval_code("while True:\n    pass", HISTORY, timeout=1.0)
    assert not result.hit and result.timed_out and result.reason == "timed out"


def test_no_api_keys_in_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("VIVA_SECRET_TOKEN", "also-secret")
    code = "import os\nleaked = [k for k in os.environ if 'KEY' in k or 'SECRET' in k or 'TOKEN' in k]\nassert not leaked, leaked"
    result = run_eval_code(code, HISTORY)
    assert result.hit, result.reason


def test_memory_limit():
    result = run_eval_code("x = bytearray(2 * 1024 ** 3)", HISTORY, memory_mb=256)
    assert not result.hit and "MemoryError" in result.reason


def test_data_files_are_copied_into_a_fresh_directory(tmp_path):
    data = tmp_path / "case"
    data.mkdir()
    (data / "demo_data.csv").write_text("\ufeffcount\n1\n2\n", encoding="utf-8")
    code = ("import os\nassert os.path.exists('demo_data.csv')\n"
            "open('scratch.txt', 'w').write('x')")
    assert run_eval_code(code, HISTORY, data_dir=data).hit
    assert not (data / "scratch.txt").exists()  # the case folder itself is never written


def test_testagent_medical_gpt4o_row():
    r_plus, r_minus, r = robustness(0.803, 0.042, 0.197, 0.086)
    assert round(r_plus, 3) == 0.034 and round(r_minus, 3) == 0.017 and round(r, 3) == 0.017


def test_dynamism_over_conversations():
    conv = [TurnRecord("initial", 0.5, None), TurnRecord("follow-up", 0.75, 0.25),
            TurnRecord("challenge", 0.5, -0.25), TurnRecord("challenge", 0.6, 0.1),
            TurnRecord("challenge", 0.6, 0.0)]
    other = [TurnRecord("initial", 1.0, None), TurnRecord("follow-up", 1.0, 0.0)]
    d = dynamism([conv, other])
    assert d.score == pytest.approx(100 * (0.6 + 1.0) / 2)
    assert d.delta_follow_up == pytest.approx(0.125) and d.follow_ups == 2 and d.challenges == 3
    assert d.p_plus == pytest.approx(1 / 3) and d.m_plus == pytest.approx(0.1)
    assert d.p_minus == pytest.approx(1 / 3) and d.m_minus == pytest.approx(0.25)
    assert d.p_zero == pytest.approx(1 / 3)
    assert d.r == pytest.approx(1 / 3 * 0.1 - 1 / 3 * 0.25)


def test_no_challenges_leaves_robustness_undefined():
    d = dynamism([[TurnRecord("initial", 0.2, None), TurnRecord("follow-up", 0.4, 0.2)]])
    assert d.p_plus is None and d.r is None and d.score == pytest.approx(40.0)


class C:
    def __init__(self, cid, kind, weight):
        self.cid, self.kind, self.weight = cid, kind, weight


def test_turn_score_weights_and_deductions():
    crit = [C("c1", "point", 2), C("c2", "point", 1), C("c3", "deduction", 1), C("c4", "code", 1)]
    assert turn_score(crit, {"c1": True}) == pytest.approx(0.5)
    assert turn_score(crit, {"c1": True, "c3": True}) == pytest.approx(0.25)
    assert turn_score(crit, {"c3": True}) == 0.0  # clipped
    assert turn_score(crit, {"c1": True, "c2": True, "c4": True}) == 1.0
    assert weighted_hit_score([(1, True), (2, False)]) == (1, pytest.approx(1 / 3))
