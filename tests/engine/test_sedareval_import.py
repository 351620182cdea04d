"""SedarEval import: valid rows imported, every bad row reported with its line, --strict all-or-nothing."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from engine.bench.importers.base import ImportFormatError
from engine.bench.importers.sedareval import import_sedareval, read_rows
from engine.bench.items import list_items
from engine.bench.rubric import current_rubric

JUDGE_PROMPT = ("【问题】\n夏科氏三联征是什么疾病的典型症状?\n【评分标准】\n共2个得分点,分数范围为 0 ~ 5分:\n得分点\n"
                "①+2分:回答是急性胆管炎,+2分;其他说法不得分\n②+3分:症状为腹痛、寒战高热、黄疸三种;三种症状各+1分\n"
                "【打分示例】\n...\n【待评估模型】:\n{response}\n")


def _row(query, standard, category=("问答", "常识", "地理"), **meta):
    return {"id": hashlib.md5(query.encode()).hexdigest()[:8], "query": query,
            "meta": {"category": list(category), "reference": "参考", "score_standard": standard, **meta}}


def _line(obj) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode("utf-8")  # NaN is written as NaN, as upstream does


# line number -> (content, expected outcome); blank line 12 is passed over
ROWS: list[tuple[bytes, str]] = [
    (_line(_row("中国的首都是哪里？", "回答北京+5")), "ok"),                                     # 1
    (_line(_row("法国的首都是哪里？", "")), "no rubric"),                                       # 2 empty standard
    (_line(_row("德国的首都是哪里？", float("nan"))), "no rubric"),                           # 3 NaN standard
    (_line({**_row("夏科氏三联征是什么疾病的典型症状?", float("nan"), ("问答", "专业知识问答", "医学")),
            "auto_prompt": {"system_prompt": "你是评估助手。", "prompt": JUDGE_PROMPT}}), "ok"),  # 4 from prompt
    (_line(_row("写一首关于秋天的诗", "指令+1：是诗+1\n文采+4",
                ("创作", "文案创作", "诗歌", "现代诗", "四季"))), "ok"),                        # 5 five levels
    (_line(_row("列出三种颜色", "错一个-1分", ("问答", float("nan"), "常识"))), "ok"),        # 6 NaN level
    (b'{"query": "\xff\xfe\xc3", "meta": {"score_standard": "\xe5\xaf\xb9+5"}}', "not UTF-8"),  # 7
    (b'{"query": "\xe4\xbd\xa0\xe5\xa5\xbd", "meta": {"score_standard": ', "broken JSON"),     # 8
    (_line(_row("（请开启新对话）\nQ1：我说一个单词，你回复字母序号。\nQ2：egg\nQ3：abandon",
                "A1正确+1，A2正确+2，A3正确+2", ("对话", "多轮对话", "游戏"))), "ok"),         # 9 multi-turn
    (_line(_row("这一行不完整", "正确+5", is_complete=-1)), "is_complete < 0"),              # 10
    (_line({"id": "x", "meta": {"category": ["问答"], "score_standard": "正确+5"}}), "bad query"),  # 11
    (b"   ", "blank"),                                                                          # 12
    (_line(_row("说出一种水果", "若提到苹果则+1，若提到香蕉则+1\n其余合理+4")), "ok"),        # 13 totals 6
    (b"[1, 2]", "not a JSON object"),                                                           # 14
]


@pytest.fixture
def constructed(tmp_path) -> Path:
    path = tmp_path / "sedar_constructed.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + b"\r\n".join(content for content, _ in ROWS) + b"\n")
    return path


def test_every_bad_row_kind_is_skipped_with_its_line_and_the_rest_imported(store, constructed):
    s = import_sedareval(store, constructed, "sed")
    expected_skips = {i + 1: kind for i, (_, kind) in enumerate(ROWS) if kind not in ("ok", "blank")}
    assert s.imported == sum(1 for _, kind in ROWS if kind == "ok") == 6
    assert {r.line: r.kind for r in s.skipped_rows} == expected_skips
    assert s.skipped == {"no rubric": 2, "not UTF-8": 1, "broken JSON": 1, "is_complete < 0": 1, "bad query": 1,
                         "not a JSON object": 1}
    reasons = {r.line: r.reason for r in s.skipped_rows}
    assert "is empty" in reasons[2] and "is NaN" in reasons[3] and "【评分标准】" in reasons[3]
    assert reasons[7].startswith("not UTF-8 text (byte 12 of the line)")
    assert reasons[8].startswith("not valid JSON") and "field 'query'" in reasons[11]
    # the rubric totals: five sum to 5, the additive conditions of line 13 to 6
    assert s.rubric_totals == {"5": 5, "6": 1} and s.totalling_full == 5
    assert s.counts["categories with NaN/empty levels dropped"] == 1 and s.counts["rubrics read from auto_prompt"] == 1
    text = "\n".join(s.lines())
    assert "line 8: not valid JSON" in text and "line 2: field 'meta.score_standard' is empty" in text
    assert text.endswith("rubric totals: 5 of 6 sum to 5; others: 6 points: 1")
    assert json.loads(json.dumps(s.to_dict()))["skipped_rows"][0] == {"line": 2, "kind": "no rubric",
                                                                      "reason": reasons[2]}

    items = {it.meta["line"]: it for it in list_items(store, "sed")}
    assert sorted(items) == [1, 4, 5, 6, 9, 13]
    assert items[5].meta["category"] == ["创作", "文案创作", "诗歌", "现代诗", "四季"] and items[5].topic == "创作"
    assert items[6].meta["category"] == ["问答", "常识"] and items[6].meta["category_dropped_levels"] == 1
    assert items[4].meta["score_standard_source"] == "auto_prompt"
    assert [c.weight for c in current_rubric(store, items[4].id).criteria] == [2.0, 3.0]
    # a deduction-only rubric starts from 5; its deduction stays a deduction
    assert [(c.kind, c.weight) for c in current_rubric(store, items[6].id).criteria] == [("point", 5.0),
                                                                                        ("deduction", 1.0)]
    # multi-turn: one user message per turn, the preamble kept apart
    assert items[9].turns == ["我说一个单词，你回复字母序号。", "egg", "abandon"]
    assert items[9].meta["preamble"] == "（请开启新对话）" and items[9].multi_turn


def test_strict_stops_at_the_first_bad_line_and_writes_nothing(store, constructed):
    with pytest.raises(ImportFormatError) as err:
        import_sedareval(store, constructed, "sed", strict=True)
    assert str(err.value) == (f"{constructed}, line 2: field 'meta.score_standard' is empty and there is no "
                              "auto_prompt with a 【评分标准】 section to read the rubric from; add a score_standard")
    assert store.one("SELECT COUNT(*) AS n FROM items")["n"] == 0
    assert store.one("SELECT COUNT(*) AS n FROM benchmarks")["n"] == 0


@pytest.mark.parametrize("content, message, lenient", [
    (b'{"query": "q", "meta": {"score_standard": "x+5"}}\n{"query": oops}\n', "line 2: not valid JSON", 1),
    (b'{"query": "q", "meta": {"score_standard": "x+5"}}\n{"query": "\xff"}\n', "line 2: not UTF-8 text", 1),
    (b'{"query": "q", "meta": {"score_standard": "x+5", "category": [1]}}\n', "line 1: field 'meta.category'", 0),
])
def test_strict_names_the_file_and_line_of_each_kind(store, tmp_path, content, message, lenient):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(ImportFormatError, match=rf"bad.jsonl, {message}"):
        import_sedareval(store, path, strict=True)
    if lenient:  # without strict, the good first line is imported and the bad one reported
        s = import_sedareval(store, path)
        assert (s.imported, [r.line for r in s.skipped_rows]) == (1, [2])


def test_nothing_valid_is_an_error_naming_the_first_skip(store, tmp_path):
    path = tmp_path / "none.jsonl"
    path.write_bytes(b'{"query": "q", "meta": {"score_standard": NaN}}\n')
    with pytest.raises(ImportFormatError, match=r"none.jsonl: no rows to import \(1 skipped; line 1: field "
                                                r"'meta.score_standard' is NaN"):
        import_sedareval(store, path)


def test_read_rows_splits_on_newlines_only(tmp_path):
    path = tmp_path / "sep.jsonl"
    path.write_text('{"query": "a\u2028b"}\n\n{"query": "c"}\n', encoding="utf-8")
    assert [(n, r["query"]) for n, r, _ in read_rows(path)] == [(1, "a\u2028b"), (3, "c")]


def _shared(relative: str) -> Path:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "shared" / "data" / relative
        if candidate.exists():
            return candidate
    pytest.skip(f"shared/data/{relative} not present")


def test_real_first_100_rows(store):
    s = import_sedareval(store, _shared("sedareval/test_first100.jsonl"))
    assert (s.imported, s.skipped_rows) == (100, [])
    assert s.counts["multi-turn items"] == 36
    assert s.rubric_totals == {"5": 100}
