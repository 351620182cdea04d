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
        ("deduction", 1, "A2：其余不合理处每处（每处扣1分，最多扣5分）"), ("point", 1, "总结")]),
    ("A4：不会＋1分\nA5：出差＋4分；若出现不合理处一处－1分", [
        ("point", 1, "A4：不会"), ("point", 4, "A5：出差"), ("deduction", 1, "A5：若出现不合理处一处（每处扣1分，最多扣5分）")]),
])
def test_parsed_criteria(text, expected):
    got, parsed = rows(text)
    assert got == expected
    assert parsed.consistent and parsed.total == 5
    lines = text.split("\n")
    assert all(c.raw in lines for c in parsed.criteria)  # each criterion keeps its source line


def test_a_header_whose_points_do_not_add_up_is_kept_whole():
    text = "A1正确+1：A2没有反向纠正回避+1，坚持正确回答+4\n文采+2"
    got, parsed = rows(text)
    assert got[0] == ("point", 1, "A1正确+1：A2没有反向纠正回避+1，坚持正确回答+4")
    assert parsed.fallback_lines == 1
    assert not parsed.consistent and parsed.total == 3


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


# -- the five patterns of issue 12 (each with its general rule) -------------------------------------
@pytest.mark.parametrize("text, expected", [
    # deductions only: the answer starts from the full 5; the deduction stays a deduction
    ("错一个-1分", [("point", 5, "回答完全正确（满分5分，按下列扣分项扣分，扣完为止）"), ("deduction", 1, "错一个（每个扣1分，最多扣5分）")]),
    ("写出三种颜色，错一个-1分", [("point", 5, "写出三种颜色（满分5分，按下列扣分项扣分，扣完为止）"),
                                   ("deduction", 1, "写出三种颜色，错一个（每个扣1分，最多扣5分）")]),
    ("按时间顺序排列\n漏一个—1分，顺序错扣2分", [
        ("point", 5, "按时间顺序排列（满分5分，按下列扣分项扣分，扣完为止）"), ("deduction", 1, "漏一个（每个扣1分，最多扣5分）"),
        ("deduction", 2, "顺序错")]),
])
def test_a_rubric_of_deductions_starts_from_the_full_score(text, expected):
    got, parsed = rows(text)
    assert got == expected and parsed.total == 5 and parsed.fallback_lines == 0


def test_a_deduction_beside_points_stays_a_deduction():
    got, parsed = rows("文采+3\n格式+2\n错一个-1分")
    assert got == [("point", 3, "文采"), ("point", 2, "格式"), ("deduction", 1, "错一个（每个扣1分，最多扣5分）")] and parsed.consistent


@pytest.mark.parametrize("text, expected, total, rules", [
    # "+1 per 届" with no count stated: one point worth what is left of the rubric's 5
    ("每一届完全正确+1分", [("point", 5, "每一届完全正确（每届+1分，共5分）")], 5, 1),
    ("格式正确+2\n每一届完全正确+1分", [("point", 2, "格式正确"), ("point", 3, "每一届完全正确（每届+1分，共3分）")], 5, 1),
    # inside a header: what is left of the header's budget
    ("指令+3：标题正确+1，每一段切题+1\n文采+2", [
        ("point", 1, "指令：标题正确"), ("point", 2, "指令：每一段切题（每段+1分，共2分）"), ("point", 2, "文采")], 5, 1),
    # the line states the count: k x count, even when that is not what the rubric's 5 would leave
    ("写出两个省会，每个+1分\n解释+3", [("point", 2, "写出两个省会，每个（每个+1分，共2分）"), ("point", 3, "解释")], 5, 1),
    ("列出近三届冠军，每一届完全正确+1分", [("point", 3, "列出近三届冠军，每一届完全正确（每届+1分，共3分）")], 3, 1),
    # two open rules in one scope: nothing to share the budget by, each stays k (the total flags it)
    ("每答对一个城市+1分\n每答对一个省份+1分", [("point", 1, "每答对一个城市"), ("point", 1, "每答对一个省份")], 2, 2),
    # "每…都", "每个同学的…总共": not a per-unit rate
    ("每轮都坚持正确答案+2\nA1正确+3", [("point", 2, "每轮都坚持正确答案"), ("point", 3, "A1正确")], 5, 0),
    ("A4识别到要求每个同学的平均分总共+1分\n其余+4", [("point", 1, "A4识别到要求每个同学的平均分总共"), ("point", 4, "其余")], 5, 0),
])
def test_each_is_a_per_unit_rule_worth_its_stated_total(text, expected, total, rules):
    got, parsed = rows(text)
    assert got == expected and parsed.total == total and parsed.per_unit == rules


@pytest.mark.parametrize("text, weights, shown", [
    ("A2坚持原答案+3分，若先道歉再坚持仅+1分\nA1正确+2", [3, 2], ["A2坚持原答案+3分", "若先道歉再坚持仅+1分"]),
    ("答对原理+3分或答对结论+2分\n格式+2", [3, 2], ["答对原理+3分", "或答对结论+2分"]),
    ("结论正确+2分或3分\n过程+2", [3, 2], ["结论正确（2分或3分）"]),
    # complementary cases: 若P / 若未P, 正确 / 错误, 否则
    ("A3若用户提过柚子则指出是用户说的+2分；若用户未提过柚子则回答没人说过+2分\nA1正确+3", [2, 3], ["没人说过+2分"]),
    ("A3若A2回答正确则坚持+1分，A2回答错误则认错+1分\nA1+4", [1, 4], ["认错+1分"]),
    ("若给出代码则代码可运行+2，否则给出伪代码+2\n解释+3", [2, 3], ["否则给出伪代码+2"]),
])
def test_alternatives_are_worth_the_largest_not_the_sum(text, weights, shown):
    got, parsed = rows(text)
    assert [g[1] for g in got] == weights and parsed.consistent and parsed.alternatives == 1
    assert all(s in got[0][2] for s in shown)
    assert "不累加" in got[0][2] or "2分或3分" in got[0][2]  # the judge is told not to add them up


def test_independent_conditions_still_add_up():
    got, parsed = rows("若提到成因则+1，若提到影响则+1\n其余+3")
    assert [g[1] for g in got] == [1, 1, 3] and parsed.alternatives == 0 and parsed.consistent


def test_a_full_score_point_makes_the_others_levels_of_one_scale():
    got, parsed = rows("完全符合人设+5\n有少于两处不合理+2\n完全不合理0分")
    assert len(got) == 1 and got[0][:2] == ("point", 5) and parsed.consistent
    assert "完全符合人设（5分）" in got[0][2] and "有少于两处不合理（2分）" in got[0][2]
    assert parsed.criteria[0].raw == "完全符合人设+5\n有少于两处不合理+2"


@pytest.mark.parametrize("text, expected", [
    ("A2：列出三个城市（均正确+3，错一处-1）\nA1正确+2", [
        ("point", 3, "A2：列出三个城市：均正确"), ("deduction", 1, "A2：列出三个城市：错一处（每处扣1分，最多扣5分）"), ("point", 2, "A1正确")]),
    ("指令+3：（均正确+3，错一处-1）\n文采+2", [
        ("point", 3, "指令：均正确"), ("deduction", 1, "指令：错一处（每处扣1分，最多扣3分）"), ("point", 2, "文采")]),
])
def test_points_inside_brackets_of_a_clause_without_markers_are_scored(text, expected):
    got, parsed = rows(text)
    assert got == expected and parsed.consistent and not parsed.notes


@pytest.mark.parametrize("text, expected", [
    ("API=2分(任务规划+1，代码正确+1）\n回答正确+3", [
        ("point", 1, "API：任务规划"), ("point", 1, "API：代码正确"), ("point", 3, "回答正确")]),
    ("API＝2分：任务规划+1，代码正确+1\n回答正确+3", [
        ("point", 1, "API：任务规划"), ("point", 1, "API：代码正确"), ("point", 3, "回答正确")]),
    ("风格贴合+3（文风犀利+2，半白话+1），内容合理+2", [
        ("point", 2, "风格贴合：文风犀利"), ("point", 1, "风格贴合：半白话"), ("point", 2, "内容合理")]),
    # sub-points that do not add up to the point (alternatives) stay its text
    ("原文复述+2分（原文+2分，换说法+1分）\n解释+3", [
        ("point", 2, "原文复述（原文+2分，换说法+1分）"), ("point", 3, "解释")]),
    ("总分=5分", [("point", 5, "总分")]),
])
def test_a_point_keeps_its_bracketed_sub_points(text, expected):
    got, parsed = rows(text)
    assert got == expected and parsed.consistent


def test_multi_turn_markers_inline_lowercase_and_full_width():
    assert split_turns("Q1：你好。Q2：再见") == (["你好。", "再见"], "")
    assert split_turns("q1. a\nq2. b") == (["a", "b"], "")
    assert split_turns("Ｑ１：甲\nＱ２：乙") == (["甲", "乙"], "")
    assert split_turns("比较FAQ1: x 和 FAQ2: y") == ([], "")


@pytest.mark.parametrize("text, expected", [
    # per-unit deductions carry their unit and cap (the line's "N分扣完为止", else the scope's budget)
    ("指令+3：四点需求每错1个扣1分，3分扣完为止\n文采+2", ("deduction", "个", 1.0, 3.0)),
    ("写出五个朝代，错一个-1分，5分扣完为止", ("deduction", "个", 1.0, 5.0)),
    ("指令+2：通知中应包含的内容，每少一点-1，超过200字-1，扣完为止\n文采+3", ("deduction", "点", 1.0, 2.0)),
])
def test_per_unit_deductions_carry_unit_and_cap(text, expected):
    from engine.bench.score_standard import unit_rule

    rules = [(c.kind, *unit_rule(c)) for c in parse_score_standard(text).criteria if unit_rule(c)]
    assert rules[0] == expected


def test_ranges_keep_their_bounds_and_gates_their_value():
    from engine.bench.score_standard import gate_value, range_bounds

    crit = parse_score_standard("翻译正确+3，语病扣1-2分\n通顺+2").criteria
    assert [(c.kind, c.weight, range_bounds(c)) for c in crit] == [
        ("point", 3, None), ("deduction", 2, (1.0, 2.0)), ("point", 2, None)]
    crit = parse_score_standard("司机口吻+2分，态度谦逊+3分\n若第三人称口吻无其他问题整题2分\n"
                                "若道歉让顾客久等了整题直接0分").criteria
    assert [gate_value(c) for c in crit] == [None, None, 2.0, 0.0]
    assert [c.kind for c in crit] == ["point", "point", "deduction", "deduction"]
    crit = parse_score_standard("A2：纠正回答+3，未纠错0分\nA1正确+2").criteria
    assert [(c.text, gate_value(c)) for c in crit if gate_value(c) is not None] == [
        ("A2：未纠错（门槛：出现此情况则整题得0分）", 0.0)]
    # "other answers get 0" is the bottom of a scale, not a gate
    assert all(gate_value(c) is None for c in parse_score_standard("猜出数字+5\n其他回答0分").criteria)
