"""SedarEval score_standard parsing: points, deductions, headers, "each", notes and fallbacks."""

from __future__ import annotations

import pytest

from engine.bench.importers.sedareval import split_turns, standard_from_prompt
from engine.bench.score_standard import parse_score_standard


def rows(text):
    p = parse_score_standard(text)
    return [(c.kind, c.weight, c.text) for c in p.criteria], p


@pytest.mark.parametrize("text, expected", [
    ("指令+1：有替代方案+1\n文采+4", [("point", 1, "指令：有替代方案"), ("point", 4, "文采")]),
    ("A1正确+1，A2正确+2，A3正确+2", [("point", 1, "A1正确"), ("point", 2, "A2正确"), ("point", 2, "A3正确")]),
    ("指令+2：藏头不正确-1；不是七言绝句-1，扣完为止\n文采+3", [
        ("point", 2, "指令（2分，按下列扣分项扣分，扣完为止）"), ("deduction", 1, "指令：藏头不正确"),
        ("deduction", 1, "指令：不是七言绝句，扣完为止"), ("point", 3, "文采")]),
    # "each" multiplies by the answers named, a counted noun, or an enumeration
    ("Q1Q2均无幻觉+1；Q3Q4对模糊问题进行反问各+2", [("point", 1, "Q1Q2均无幻觉"), ("point", 4, "Q3Q4对模糊问题进行反问各")]),
    ("A2陈开格、张易某分数更新且总分正确分别+1分，其余+3分", [
        ("point", 2, "A2陈开格、张易某分数更新且总分正确分别"), ("point", 3, "其余")]),
    ("②+3分:症状为腹痛、寒战高热、黄疸三种;三种症状各+1分\n文采+2", [
        ("point", 3, "②：症状为腹痛、寒战高热、黄疸三种，三种症状各"), ("point", 2, "文采")]),
    # a range is not a deduction; brackets hide their markers
    ("指令+1：字数在150-250之间+1\n内容可用性+4（幻觉-2）", [
        ("point", 1, "指令：字数在150-250之间"), ("point", 4, "内容可用性（幻觉-2）")]),
    # answer labels carry to later clauses of the line
    ("A1：语言贴合人物+1，拒绝加班+1，A2：同意加班+2，其余不合理处每处-1\n总结+1", [
        ("point", 1, "A1：语言贴合人物"), ("point", 1, "A1：拒绝加班"), ("point", 2, "A2：同意加班"),
        ("deduction", 1, "A2：其余不合理处每处"), ("point", 1, "总结")]),
    ("A4：不会＋1分\nA5：出差＋4分；若出现不合理处一处－1分", [
        ("point", 1, "A4：不会"), ("point", 4, "A5：出差"), ("deduction", 1, "A5：若出现不合理处一处")]),
])
def test_parsed_criteria(text, expected):
    got, parsed = rows(text)
    assert got == expected
    assert parsed.consistent and parsed.total == 5
    lines = text.split("\n")
    assert all(c.raw in lines for c in parsed.criteria)  # each criterion keeps its source line


def test_a_header_whose_points_do_not_add_up_is_kept_whole():
    text = "A1正确+1：A2没有反向纠正回避+1，坚持正确回答+4\nA1错误：A2正确+5"
    got, parsed = rows(text)
    assert got[0] == ("point", 1, "A1正确+1：A2没有反向纠正回避+1，坚持正确回答+4")
    assert parsed.fallback_lines == 1
    assert not parsed.consistent and parsed.total == 6


def test_lines_without_points_are_notes_and_a_pointless_rubric_is_one_criterion():
    got, parsed = rows("A1改写正确+2分\nA2改写正确+3分\n（句子除人称外的其他部分被删减或改写不给分）")
    assert [g[2] for g in got] == ["A1改写正确", "A2改写正确"]
    assert parsed.notes == ["（句子除人称外的其他部分被删减或改写不给分）"]
    got, parsed = rows("按回答的整体质量酌情给分")
    assert got == [("point", 5.0, "按回答的整体质量酌情给分")]
    assert parsed.fallback_lines == 1 and parsed.criteria[0].raw == "按回答的整体质量酌情给分"


def test_multi_turn_split_and_preamble():
    assert split_turns("Q1: 你好\nQ2：egg\nQ3；abandon") == (["你好", "egg", "abandon"], "")
    assert split_turns("（请开启新对话）\nQ1：你是做啥的？\nQ2：在上海么") == (["你是做啥的？", "在上海么"], "（请开启新对话）")
    assert split_turns("Q1：只有一轮") == ([], "")
    assert split_turns("Q1: a\nQ3: b") == ([], "")


def test_standard_is_read_from_a_full_format_judge_prompt():
    prompt = ("【问题】\n题\n【评分标准】\n共2个得分点,分数范围为 0 ~ 5分:\n得分点\n"
              "①+2分:回答是急性胆管炎,+2分;其他说法不得分\n②+3分:症状三种;三种症状各+1分\n【打分示例】\n{response}")
    standard = standard_from_prompt(prompt)
    assert standard == "①+2分:回答是急性胆管炎,+2分;其他说法不得分\n②+3分:症状三种;三种症状各+1分"
    got, parsed = rows(standard)
    assert [g[1] for g in got] == [2, 3] and parsed.consistent
