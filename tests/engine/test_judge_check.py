"""`viva judge check`: loading labelled rows, the figures against hand counts, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.judge.check import JudgeCheckError, figures, load_rows, overlap_share, run_check, substring_rule
from tui.cli import main

NQ301 = Path(__file__).resolve().parents[3] / "shared" / "data" / "nq301" / "nq301_judged.jsonl"

GOLD_ROWS = [
    {"question": "who wrote hamlet", "golds": ["William Shakespeare"], "answer": "Shakespeare wrote it.",
     "human": True, "model": "a", "other": True},
    {"question": "who wrote hamlet", "golds": ["William Shakespeare"], "answer": "Christopher Marlowe",
     "human": False, "model": "a", "other": True},
    {"question": "when did the war end", "golds": ["1945"], "answer": "It ended in 1945.", "human": True,
     "model": "b", "other": False},
    {"question": "when did the war end", "golds": ["1945"], "answer": "In 1918.", "human": False, "model": "b"},
]


def write(tmp_path: Path, rows, name="rows.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_figures_by_hand():
    # judge/human: TT, TF, FT, FF, TT -> a=2, b=1, c=1, d=1; p_o = 3/5; p_j = p_h = 3/5;
    # p_e = 9/25 + 4/25 = 13/25; kappa = (15/25 - 13/25) / (12/25) = 1/6
    f = figures([(True, True), (True, False), (False, True), (False, False), (True, True)])
    assert (f.n, f.both, f.judge_only, f.human_only, f.neither) == (5, 2, 1, 1, 1)
    assert f.accuracy == pytest.approx(0.6) and f.kappa == pytest.approx(1 / 6)
    assert f.precision == pytest.approx(2 / 3) and f.recall == pytest.approx(2 / 3) and f.base_rate == pytest.approx(0.6)


def test_check_gold_rows(tmp_path):
    path = write(tmp_path, GOLD_ROWS)
    report = run_check(path, load_rows(path), by="model", disagreements=5)
    viva = report.overall["viva (offline)"]
    assert (viva.n, viva.both, viva.neither, viva.kappa) == (4, 2, 2, 1.0)
    assert report.overall["exact match"].both == 0  # no answer is exactly a gold
    assert report.overall["substring"].both == 1  # "1945" is in "It ended in 1945."; "Shakespeare" is not the gold
    assert report.overall["other"].n == 3  # the file's own judge, on the rows that carry it
    assert set(report.groups) == {"a", "b"} and report.groups["b"]["viva (offline)"].n == 2
    assert report.disagreements == []
    assert any("other" in n and "3 rows" in n for n in report.notes)


def test_disagreements_are_listed_with_the_rationale(tmp_path):
    rows = [dict(GOLD_ROWS[0], human=False), dict(GOLD_ROWS[1], human=True)]
    path = write(tmp_path, rows)
    report = run_check(path, load_rows(path), disagreements=5)
    assert [d["what"] for d in report.disagreements] == ["credited, people did not", "missed, people credited"]
    assert report.disagreements[0]["line"] == 1 and "Shakespeare" in report.disagreements[0]["rationale"]


def test_criterion_rows_and_the_fitted_overlap_baseline(tmp_path):
    rows = [{"criterion": "Warfarin needs INR monitoring.", "answer": "Patients on warfarin need regular INR monitoring.",
             "human": True},
            {"criterion": "Warfarin needs INR monitoring.", "answer": "Aspirin is an antiplatelet drug.", "human": False}]
    path = write(tmp_path, rows)
    loaded = load_rows(path)
    assert overlap_share(loaded[0]) == 1.0 and overlap_share(loaded[1]) == 0.0
    report = run_check(path, loaded)
    assert report.kind == "criterion"
    assert report.overall["word overlap (fitted)"].kappa == 1.0
    assert report.overall["viva (offline)"].n == 2


@pytest.mark.parametrize("content, message", [
    ("not json\n", ":1: not JSON"),
    ('{"answer": "x", "human": "yes", "golds": ["x"]}\n', '"human" must be true or false'),
    ('{"answer": "x", "human": true}\n', 'needs "golds"'),
    ('{"answer": "x", "human": true, "golds": []}\n', '"golds" must be a non-empty list'),
    ('[1, 2]\n', "expected a JSON object"),
    ("", "no rows"),
    ('{"answer": "x", "human": true, "golds": ["x"]}\n{"answer": "x", "human": true, "criterion": "c"}\n', "mixes"),
])
def test_bad_files_get_one_line(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(JudgeCheckError, match=message.replace('"', '.').replace("(", ".").replace(")", ".")):
        load_rows(path)


def test_by_a_missing_field_is_refused(tmp_path):
    path = write(tmp_path, GOLD_ROWS)
    with pytest.raises(JudgeCheckError, match="--by nope: no row has that field"):
        run_check(path, load_rows(path), by="nope")


def test_cli(tmp_path):
    path = write(tmp_path, GOLD_ROWS)
    runner = CliRunner()
    result = runner.invoke(main, ["--home", str(tmp_path / "h"), "judge", "check", str(path), "--by", "model"])
    assert result.exit_code == 0, result.output
    assert "viva (offline)" in result.output and "model = a" in result.output and "κ" in result.output
    result = runner.invoke(main, ["--home", str(tmp_path / "h"), "judge", "check", str(path), "--json"])
    assert json.loads(result.output)["overall"]["viva (offline)"]["kappa"] == 1.0
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{oops\n", encoding="utf-8")
    result = runner.invoke(main, ["--home", str(tmp_path / "h"), "judge", "check", str(bad)])
    assert result.exit_code == 1 and "bad.jsonl:1: not JSON" in result.output


def test_substring_rule():
    row = load_rows.__globals__["CheckRow"]("gold", "q", "It was the Ramones.", True, golds=("the Ramones",))
    assert substring_rule(row)
    row = load_rows.__globals__["CheckRow"]("gold", "q", "Ramonesque", True, golds=("Ramones",))
    assert not substring_rule(row)


@pytest.mark.skipif(not NQ301.exists(), reason="../shared/data/nq301 is not on this machine")
def test_nq301_every_system_at_least_the_substring_rule():
    report = run_check(NQ301, load_rows(NQ301), by="model")
    for model, figs in report.groups.items():
        assert figs["viva (offline)"].kappa >= figs["substring"].kappa, model
        assert figs["viva (offline)"].kappa >= figs["exact match"].kappa, model
    assert report.overall["viva (offline)"].precision >= 0.95


def _config(tmp_path: Path, fake) -> Path:
    cfg = tmp_path / "viva.yaml"
    cfg.write_text(f"judge:\n  base_url: {fake.base_url}\n  model: fake-model\n  timeout: 5\n  max_retries: 1\n"
                   f"  price_in: 1.0\n  price_out: 2.0\n", encoding="utf-8")
    return cfg


def test_llm_judge_through_a_real_http_server(tmp_path, fake_openai):
    """The LLM judge is asked once per row with the golds as reference; its verdicts are scored like any
    judge's; a reply that stays invalid costs that row (counted, listed), not the check."""
    def answer(body):
        text = "\n".join(m["content"] for m in body["messages"])
        if "Marlowe" in text:
            return "not JSON at all"
        correct = "Shakespeare" in text.split("Reply:")[-1]  # it misses "It ended in 1945."
        return json.dumps({"reason": "compared with the accepted answers", "correct": correct})

    fake_openai.rule(lambda req: True, answer)
    path = write(tmp_path, GOLD_ROWS)
    runner = CliRunner()
    args = ["--home", str(tmp_path / "h"), "--config", str(_config(tmp_path, fake_openai)), "judge", "check",
            str(path), "--judge", "judge", "--json", "--repeat", "2"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    # viva's judge is what sessions run (engine.judge.decide.judge_turn): credited when the LLM or the lexical
    # rule credits; the invalid reply's row keeps the lexical verdict, as in a session, and is listed
    viva = report["overall"]["viva (judge)"]
    assert (viva["n"], viva["both"], viva["neither"]) == (4, 2, 2)
    either = report["overall"]["viva (judge or lexical)"]
    assert (either["n"], either["both"], either["neither"]) == (4, 2, 2)
    assert report["overall"]["viva (offline)"]["both"] == 2
    assert report["usage"]["rows_not_judged"] == 1 and "line 2" in report["usage"]["not_judged"][0]
    assert report["usage"]["cost"] > 0 and report["usage"]["tokens_in"] > 0
    assert report["repeat"]["runs"] == 2 and report["repeat"]["all_runs_agree"] == 4
    first = fake_openai.chat_requests()[0]
    assert "Accepted answers:" in first.text and "<<<CANDIDATE" in first.text
    # 4 rows: 3 valid calls + 1 call and 2 repairs for the invalid one = 6 per run; the retest run bypasses
    # the cache, so 12 in all; a second check takes its first run from the cache and retests again
    assert fake_openai.count() == 12
    assert runner.invoke(main, args).exit_code == 0
    assert fake_openai.count() == 18


def test_llm_criterion_rows_are_judged_as_a_turns_rubric(tmp_path, fake_openai):
    """Criterion rows are marked by the interview's own judge prompt: the rows that share an answer are one
    rubric in one call (as a turn's criteria are), each row's verdict its criterion's "met"."""
    import re

    def answer(body):
        user = body["messages"][-1]["content"]
        criteria = [json.loads(line) for line in user.splitlines() if line.startswith('{"id"')]
        said = user.split("Latest answer:")[-1].lower()
        verdicts = {c["id"]: {"rationale": "compared with the answer", "in_answer": c["text"].split()[-1].lower()
                              .strip(".") in said, "met": c["text"].split()[-1].lower().strip(".") in said}
                    for c in criteria}
        return json.dumps({"verdicts": verdicts, "summary": re.sub(r"\s+", " ", said)[:80] or "nothing"})

    fake_openai.rule(lambda req: True, answer)
    warfarin = "Warfarin needs regular INR monitoring and raises the risk of bleeding."
    rows = [{"criterion": "Warfarin needs INR", "answer": warfarin, "human": True},
            {"criterion": "Warfarin raises bleeding", "answer": warfarin, "human": True},
            {"criterion": "Warfarin harms the liver", "answer": warfarin, "human": False},
            {"criterion": "Aspirin is an antiplatelet", "answer": "Aspirin thins the blood.", "human": True}]
    path = write(tmp_path, rows)
    result = CliRunner().invoke(main, ["--home", str(tmp_path / "h"), "--config", str(_config(tmp_path, fake_openai)),
                                       "judge", "check", str(path), "--judge", "judge", "--json"])
    assert result.exit_code == 0, result.output
    viva = json.loads(result.output)["overall"]["viva (judge)"]
    assert (viva["both"], viva["neither"], viva["human_only"], viva["judge_only"]) == (2, 1, 1, 0)
    requests = fake_openai.chat_requests()
    assert len(requests) == 2  # one call per answer: its three criteria together, then the other
    first = next(r for r in requests if "INR" in r.text)
    assert "Rubric criteria" in first.text and all(f'"id": "c{k}"' in first.text for k in (1, 2, 3))


def test_unknown_judge_name_and_repeat_offline(tmp_path):
    path = write(tmp_path, GOLD_ROWS)
    runner = CliRunner()
    result = runner.invoke(main, ["--home", str(tmp_path / "h"), "judge", "check", str(path), "--judge", "gpt9"])
    assert result.exit_code == 1 and "--judge gpt9: no such endpoint" in result.output
    result = runner.invoke(main, ["--home", str(tmp_path / "h"), "judge", "check", str(path), "--repeat", "2"])
    assert result.exit_code == 1 and "--repeat needs an LLM judge" in result.output


def test_either_combines_the_files_judges_with_the_lexical_rule(tmp_path):
    """--either: each of the file's own judges 'or' the lexical rule, row by row (known answers)."""
    path = write(tmp_path, GOLD_ROWS)
    report = run_check(path, load_rows(path), either=True)
    # "other" is true on rows 1-2 (of 3), the lexical rule credits rows 1 and 3: either credits 1, 2, 3
    fig = report.overall["other or lexical"]
    assert (fig.n, fig.both, fig.judge_only, fig.human_only, fig.neither) == (3, 2, 1, 0, 0)
    assert "other or lexical" not in run_check(path, load_rows(path)).overall


def test_intervals_too_few_and_rank_agreement(tmp_path):
    from engine.judge.check import render_text

    rows = []
    for model, right in (("a", 30), ("b", 20), ("c", 10)):
        for i in range(40):
            ok = i < right
            rows.append({"question": "when did the war end", "golds": ["1945"],
                         "answer": "It ended in 1945." if ok else "In 1918.", "human": ok, "model": model})
    path = write(tmp_path, rows)
    report = run_check(path, load_rows(path), by="model")
    viva = report.overall["viva (offline)"]
    assert not viva.too_few and viva.intervals["kappa"] == (1.0, 1.0)
    assert report.groups["a"]["viva (offline)"].too_few  # 40 rows < 50
    rank = report.ranks["viva (offline)"]
    assert rank.groups == 3 and rank.kendall == pytest.approx(1.0) and rank.pearson == pytest.approx(1.0)
    text = render_text(report)
    assert "95% CI" in text and "too few to read (n = 40 < 50)" in text
    assert "rank agreement over the model groups" in text and "Kendall τ 1.000" in text
    assert "rate = share the judge credits" in text and "base = share people credit" in text
    assert report.as_dict()["ranks"]["viva (offline)"]["groups"] == 3
