"""Importers (SedarEval, TaskWeaver, MedQA, SQuAD, viva JSONL), export round trip, and the CLI."""

from __future__ import annotations

import hashlib
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from engine.bench.export import export_jsonl
from engine.bench.importers import ImportFormatError, run_import
from engine.bench.importers.squad import import_squad
from engine.bench.items import get_benchmark, item_data_dir, list_items
from engine.bench.model import BenchError
from engine.bench.rubric import Add, Delete, current_rubric, edit_rubric

FIX = Path(__file__).parent / "fixtures" / "bench"
DATA = Path(__file__).resolve().parents[3] / "shared" / "data"


class HashEmbedder:
    """A tiny deterministic embedder (hashed bag of words) so that knowledge-base tests stay fast."""

    name = "test-hash@0:64"
    dim = 64

    def embed(self, texts):
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % self.dim] += 1.0
            norm = float(np.linalg.norm(out[i]))
            out[i] /= norm or 1.0
        return out

    def embed_one(self, text):
        return self.embed([text])[0]


def count(store, table):
    return store.one(f"SELECT COUNT(*) AS n FROM {table}")["n"]


def assert_nothing_written(store, home):
    for table in ("benchmarks", "items", "rubrics", "criteria"):
        assert count(store, table) == 0
    assert not (home / "benchmarks").exists() or not any((home / "benchmarks").iterdir())


# -- SedarEval -----------------------------------------------------------------------------------
def test_sedareval_fixture(store, home):
    s = run_import(store, home, "sedareval", FIX / "sedareval.jsonl", "sed")
    assert (s.imported, s.skipped) == (4, {"is_complete < 0": 1})
    assert s.counts["multi-turn items"] == 1 and s.counts["with judge prompt"] == 1
    assert any("NaN" in w and "line 3" in w for w in s.warnings)
    single, multi, nan_ref, full = list_items(store, "sed")
    assert (single.protocol, single.topic, single.ext_id, single.turns) == ("rubric", "创作", "s1", [])
    assert single.meta["category"] == ["创作", "文案创作", "咏物诗"] and single.meta["sample_answer"]
    assert multi.turns == ["我们来玩个游戏吧，我说一个单词，你回复字母序号。", "egg", "abandon"]
    assert nan_ref.reference is None
    rv = current_rubric(store, nan_ref.id)
    assert [(c.cid, c.kind, c.weight) for c in rv.criteria] == [
        ("c1", "point", 2.0), ("c2", "deduction", 1.0), ("c3", "deduction", 1.0), ("c4", "point", 3.0)]
    assert rv.criteria[1].raw == "指令+2：没有替代方案-1；语气不礼貌-1，扣完为止"
    assert (rv.author, rv.version) == ("importer", 1)
    # full format: judge prompt kept, rubric read from its 【评分标准】 section
    assert "{response}" in full.meta["judge_prompt"] and full.meta["system_prompt"].startswith("你是")
    assert full.meta["score_standard_source"] == "auto_prompt" and full.meta["rubric_check"]["consistent"]
    assert [c.weight for c in current_rubric(store, full.id).criteria] == [2.0, 3.0]


def test_sedareval_bad_row_names_line_and_field_and_writes_nothing(store, home):
    with pytest.raises(ImportFormatError) as err:
        run_import(store, home, "sedareval", FIX / "sedareval_bad.jsonl", strict=True)
    assert str(err.value).startswith(str(FIX / "sedareval_bad.jsonl") + ", line 3: field 'query': expected a "
                                                                         "non-empty string")
    assert_nothing_written(store, home)


def test_bad_json_line_is_located(store, home, tmp_path):
    bad = tmp_path / "x.jsonl"
    bad.write_text('{"query": "q", "meta": {"score_standard": "对+5"}}\n\n{"query": oops}\n', encoding="utf-8")
    with pytest.raises(ImportFormatError, match=r"x.jsonl, line 3: not valid JSON"):
        run_import(store, home, "sedareval", bad, strict=True)
    assert_nothing_written(store, home)


# -- TaskWeaver ----------------------------------------------------------------------------------
def test_taskweaver_fixture(store, home):
    s = run_import(store, home, "taskweaver", FIX / "taskweaver" / "cases", "tw")
    assert s.imported == 2 and s.counts["eval_code points"] == 2 and s.counts["data files copied"] == 1
    assert any("HumanMessage" in w for w in s.warnings)
    greet, total = list_items(store, "tw")  # case folders in name order
    assert (total.protocol, total.ext_id, total.meta["max_rounds"], total.meta["max_rounds_source"]) == \
        ("task", "sum_numbers", 6, "case")
    assert (greet.meta["max_rounds"], greet.meta["max_rounds_source"]) == (15, "default")
    assert total.question.startswith("The task is to ask the agent for the sum")
    copied = item_data_dir(home, total)
    assert copied == home / "benchmarks" / "tw" / "sum_numbers"
    assert (copied / "numbers.csv").read_text() == "value\n10\n20\n30\n"
    assert item_data_dir(home, greet) is None
    crit = current_rubric(store, total.id).criteria
    assert [(c.kind, c.weight) for c in crit] == [("point", 2.0), ("code", 1.0)]
    assert "open('total.txt')" in crit[1].eval_code
    assert greet.meta["eval_code_names"] == {"1": ["HumanMessage", "chat_history"]}


def test_taskweaver_bad_case_names_file_and_field(store, home):
    with pytest.raises(ImportFormatError) as err:
        run_import(store, home, "taskweaver", FIX / "taskweaver_bad" / "cases")
    assert "bad_weight.yaml" in str(err.value)
    assert "field 'scoring_points[0].weight': expected a number > 0, got 'heavy'" in str(err.value)
    assert_nothing_written(store, home)


def test_taskweaver_case_folder_must_hold_one_yaml(store, home, tmp_path):
    case = tmp_path / "cases" / "two"
    case.mkdir(parents=True)
    for n in ("a.yaml", "b.yaml"):
        (case / n).write_text("task_description: t\nscoring_points: [{score_point: p, weight: 1}]\n")
    with pytest.raises(ImportFormatError, match="exactly one \\*.yaml case file, found 2: a.yaml, b.yaml"):
        run_import(store, home, "taskweaver", tmp_path / "cases")
    (case / "b.yaml").unlink()
    (case / "a.yaml").write_text("task_description: t\nscoring_points:\n  - score_point: p\n    eval_code: 'x = ('\n")
    with pytest.raises(ImportFormatError, match=r"scoring_points\[0\].eval_code': not valid Python"):
        run_import(store, home, "taskweaver", tmp_path / "cases")
    assert_nothing_written(store, home)


# -- MedQA ---------------------------------------------------------------------------------------
def test_medqa_fixture(store, home):
    s = run_import(store, home, "medqa", FIX / "medqa.jsonl", "med")
    assert s.imported == 3 and s.counts["difficulty"] == {"unlabelled": 1, "easy": 1, "hard": 1}
    scurvy, insulin, tb = list_items(store, "med")
    assert (scurvy.protocol, scurvy.gold, scurvy.reference, scurvy.topic, scurvy.ext_id) == \
        ("graded", "B", "Vitamin C", "step1", "1")
    assert current_rubric(store, scurvy.id).criteria[0].text == "Chooses option B: Vitamin C"
    assert (insulin.options, insulin.gold, insulin.difficulty) == (
        {"A": "Liver", "B": "Pancreas", "C": "Kidney"}, "B", "easy")
    assert (tb.options, tb.gold, tb.difficulty) == (None, "Mycobacterium tuberculosis", "hard")


def test_medqa_bad_answer_idx(store, home):
    with pytest.raises(ImportFormatError, match=r"line 2: field 'answer_idx': expected one of A, B, got 'E'"):
        run_import(store, home, "medqa", FIX / "medqa_bad.jsonl")
    assert_nothing_written(store, home)


# -- SQuAD ---------------------------------------------------------------------------------------
def test_squad_fixture_builds_a_kb_and_adaptive_items(store, home):
    s = import_squad(store, home, FIX / "squad.json", "sq", embedder=HashEmbedder())
    assert (s.imported, s.kb, s.skipped) == (2, "sq", {"unanswerable question (is_impossible)": 1})
    assert s.counts["questions"] == 5 and s.counts["follow-ups"] == 3
    tower, everest = list_items(store, "sq")
    assert get_benchmark(store, "sq").kb == "sq"
    assert (tower.protocol, tower.question, tower.gold, tower.topic) == (
        "adaptive", "In which city is the Eiffel Tower?", ["Paris"], "Landmarks")
    assert [(f["question"], f["cid"]) for f in tower.meta["followups"]] == [
        ("When was the Eiffel Tower completed?", "c2"), ("Who designed the Eiffel Tower?", "c3")]
    assert tower.meta["followups"][0]["answers"] == ["1889", "in 1889"]
    assert [f["question"] for f in everest.meta["followups"]] == ["How high is Mount Everest?"]
    crit = current_rubric(store, tower.id).criteria
    assert [c.cid for c in crit] == ["c1", "c2", "c3"]
    assert crit[1].text == 'Answers "When was the Eiffel Tower completed?" with "1889" (also accepted: "in 1889")'
    kb_id = get_benchmark(store, "sq").kb_id
    for item, c in [(tower, crit[0]), (everest, current_rubric(store, everest.id).criteria[1])]:
        rows = store.query(f"SELECT id, kb_id, text FROM chunks WHERE id IN ({','.join('?' * len(item.source_chunk_ids))})",
                           tuple(item.source_chunk_ids))
        assert rows and all(r["kb_id"] == kb_id for r in rows)
        cited = store.one("SELECT text FROM chunks WHERE id = ?", (c.source_chunk_ids[0],))["text"]
        assert c.text.split(' with "')[1].split('"')[0] in cited


def test_squad_bad_answer_is_located_before_any_kb_is_built(store, home):
    with pytest.raises(ImportFormatError) as err:
        import_squad(store, home, FIX / "squad_bad.json", embedder=HashEmbedder())
    assert "data[0].paragraphs[1].qas[0].answers[0]: field 'text': expected a non-empty answer string" in str(err.value)
    assert count(store, "knowledge_bases") == 0
    assert_nothing_written(store, home)


def test_name_taken_is_refused_before_any_work(store, home):
    run_import(store, home, "medqa", FIX / "medqa.jsonl", "dup")
    with pytest.raises(BenchError, match="'dup' already exists"):
        run_import(store, home, "taskweaver", FIX / "taskweaver" / "cases", "dup")
    assert not (home / "benchmarks" / "dup").exists() and count(store, "items") == 3
    with pytest.raises(BenchError, match="unknown import format"):
        run_import(store, home, "csv", FIX / "medqa.jsonl")


# -- export / import round trip ------------------------------------------------------------------
def export(store, name):
    buf = io.StringIO()
    export_jsonl(store, name, buf)
    return [json.loads(line) for line in buf.getvalue().splitlines()]


def strip(record):
    return {k: v for k, v in record.items() if k not in ("id", "benchmark", "rubric_version")}


def test_export_import_round_trip_is_identical(store, home, tmp_path):
    run_import(store, home, "sedareval", FIX / "sedareval.jsonl", "sed")
    run_import(store, home, "taskweaver", FIX / "taskweaver" / "cases", "tw")
    run_import(store, home, "medqa", FIX / "medqa.jsonl", "med")
    import_squad(store, home, FIX / "squad.json", "sq", embedder=HashEmbedder())
    first = list_items(store, "sed")[0].id
    edit_rubric(store, first, [Delete("c1"), Add("新的得分点", weight=1, position=0)], author="human")
    for name in ("sed", "tw", "med", "sq"):
        records = export(store, name)
        assert [r["id"] for r in records] == [i.id for i in list_items(store, name)]
        path = tmp_path / f"{name}.jsonl"
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
        s = run_import(store, home, "jsonl", path, f"{name}2")
        again = export(store, f"{name}2")
        assert [strip(r) for r in again] == [strip(r) for r in records]
        assert get_benchmark(store, f"{name}2").source == get_benchmark(store, name).source
        assert s.imported == len(records)
    assert [c["cid"] for c in export(store, "sed2")[0]["rubric"]] == ["c3", "c2"]  # cids survive
    copied = item_data_dir(home, list_items(store, "tw2")[1])
    assert copied == home / "benchmarks" / "tw2" / "sum_numbers" and (copied / "numbers.csv").is_file()
    assert get_benchmark(store, "sq2").kb == "sq"
    # a gold criterion keeps its answers and the question that carries it (they were not exported before, so a
    # SQuAD or MedQA benchmark exported and imported again judged its gold criteria as free text)
    from engine.bench.rubric import current_rubric

    for name in ("sq", "med"):
        before = [(c.answers, c.asks) for i in list_items(store, name) for c in current_rubric(store, i.id).criteria]
        after = [(c.answers, c.asks) for i in list_items(store, f"{name}2") for c in current_rubric(store, i.id).criteria]
        assert after == before and any(answers for answers, _ in before)


def test_jsonl_errors_are_located(store, home, tmp_path):
    run_import(store, home, "medqa", FIX / "medqa.jsonl", "med")
    records = export(store, "med")
    records[1]["questoin"] = "typo"
    records[2]["rubric"][0]["weight"] = 0
    path = tmp_path / "e.jsonl"
    for broken, message in [(records[:2], "line 2: unknown field(s) questoin"),
                            ([records[0], records[2]], "line 2: criterion 1: weight must be a number > 0"),
                            ([{"format": "other"}], "line 1: field 'format': expected 'viva.item/1'")]:
        path.write_text("".join(json.dumps(r) + "\n" for r in broken))
        with pytest.raises(ImportFormatError, match=re.escape(message)):
            run_import(store, home, "jsonl", path, "x")
    assert count(store, "benchmarks") == 1


# -- CLI -----------------------------------------------------------------------------------------
def test_cli_import_list_show_export_and_rubric_edit(home, tmp_path):
    from tui.cli import main

    runner = CliRunner()
    r = runner.invoke(main, ["bench", "import", "medqa", str(FIX / "medqa.jsonl"), "--name", "med"])
    assert r.exit_code == 0, r.output
    assert "imported 3 item(s) into benchmark 'med'" in r.output
    r = runner.invoke(main, ["bench", "list", "--json"])
    assert json.loads(r.output)[0] == {**json.loads(r.output)[0], "name": "med", "items": 3,
                                       "protocols": {"graded": 3}}
    r = runner.invoke(main, ["bench", "show", "med", "--json"])
    first = json.loads(r.output)["items"][0]["id"]
    r = runner.invoke(main, ["bench", "show", "med", "--item", str(first), "--json"])
    assert json.loads(r.output)["rubric"]["criteria"][0]["text"] == "Chooses option B: Vitamin C"
    r = runner.invoke(main, ["bench", "show", "med", "--item", str(first)])
    assert r.exit_code == 0 and "Vitamin C" in r.output
    r = runner.invoke(main, ["bench", "export", "med"])
    lines = r.output.splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["id"] == first
    r = runner.invoke(main, ["bench", "rubric", "edit", str(first), '{"op": "reweight", "cid": "c1", "weight": 2}',
                             "--author", "ana"])
    assert r.exit_code == 0, r.output
    r = runner.invoke(main, ["bench", "rubric", "history", str(first), "--json"])
    history = json.loads(r.output)
    assert [(v["version"], v["author"], v["current"]) for v in history] == [(1, "importer", False),
                                                                           (2, "human:ana", True)]
    r = runner.invoke(main, ["bench", "rubric", "restore", str(first), "1"])
    assert r.exit_code == 0 and "restored version 1" in r.output
    r = runner.invoke(main, ["bench", "import", "medqa", str(FIX / "medqa_bad.jsonl")])
    assert r.exit_code == 1 and "line 2: field 'answer_idx'" in r.output
    r = runner.invoke(main, ["bench", "show", "nope"])
    assert r.exit_code == 1 and "existing benchmarks: med" in r.output
    r = runner.invoke(main, ["bench", "rubric", "edit", str(first), '[{"op": "delete", "cid": "c7"}]'])
    assert r.exit_code == 1 and "no criterion 'c7'" in r.output
    r = runner.invoke(main, ["bench", "delete", "med", "--yes"])
    assert r.exit_code == 0 and "deleted benchmark 'med' (3 item(s))" in r.output


# -- the real data in ../shared/data (optional) ----------------------------------------------------
def _real(path: Path) -> Path:
    if not path.exists():
        pytest.skip(f"{path} not present")
    return path


def test_real_sedareval(store, home):
    s = run_import(store, home, "sedareval", _real(DATA / "sedareval" / "test_first100.jsonl"))
    assert (s.imported, sum(s.skipped.values())) == (100, 0)
    assert s.counts["multi-turn items"] == 36 and s.counts["rubrics totalling 5"] >= 90


def test_real_taskweaver(store, home):
    s = run_import(store, home, "taskweaver", _real(DATA / "taskweaver" / "cases"))
    assert s.imported == 10 and s.counts["scoring points"] == 18 and s.counts["data files missing"] == 1


def test_real_medqa(store, home):
    s = run_import(store, home, "medqa", _real(DATA / "medqa" / "us_test_sample50.jsonl"))
    assert s.imported == 50 and s.counts["multiple choice"] == 50


def test_real_squad(store, home):
    s = import_squad(store, home, _real(DATA / "squad" / "dev-v1.1-4articles.json"), embedder=HashEmbedder())
    # 146 paragraphs, cut into windows of 6 questions: 161 items, every question in exactly one of them
    assert (s.imported, s.counts["questions"], s.counts["articles"], s.counts["paragraphs"]) == (161, 746, 4, 146)
    items = list_items(store, s.benchmark)
    asked = [c.asks for i in items for c in current_rubric(store, i.id).criteria]
    assert len(asked) == 746 and all(len(current_rubric(store, i.id).criteria) <= 6 for i in items)
    assert all(c.answers for i in items for c in current_rubric(store, i.id).criteria)


def test_squad_reuses_its_own_kb_and_refuses_someone_elses(store, home, tmp_path):
    import_squad(store, home, FIX / "squad.json", "sq", embedder=HashEmbedder())
    again = import_squad(store, home, FIX / "squad.json", "sq-b", kb="sq", embedder=HashEmbedder())
    assert again.kb == "sq" and get_benchmark(store, "sq-b").kb_id == get_benchmark(store, "sq").kb_id
    assert list_items(store, "sq-b")[0].source_chunk_ids == list_items(store, "sq")[0].source_chunk_ids
    other = tmp_path / "other.json"
    other.write_text((FIX / "squad.json").read_text())
    with pytest.raises(BenchError, match="'sq' already exists with other sources"):
        import_squad(store, home, other, "sq-c", kb="sq", embedder=HashEmbedder())
    assert count(store, "knowledge_bases") == 1
