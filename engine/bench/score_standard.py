"""Parse SedarEval's compact rubric text (``meta.score_standard``) into criteria.

SedarEval writes a rubric as a few lines of Chinese shorthand, always for a 0-5 score::

    指令+1：有替代方案+1              header "指令" worth 1, one scoring point
    文采+4                            a dimension worth 4
    指令+2：藏头不正确-1；不是七言绝句-1，扣完为止   worth 2, minus deductions, floor 0
    A1正确+1，A2正确+2，A3正确+2      one scoring point per answer of a multi-turn item
    Q3Q4对模糊问题进行反问各+2         "each": +2 for Q3 and +2 for Q4 = 4
    A2陈开格、张易某分数更新且总分正确分别+1分   "each" over an enumeration = 2
    API=2分(任务规划+1，代码正确+1）  a point worth 2 made of two sub-points of 1
    三个城市（均正确+3，错一处-1）    the scoring sits inside the brackets: +3 and -1
    写出五个朝代，错一个-1分           deductions only: from the full 5, minus 1 per error
    列出历届冠军，每一届完全正确+1分    +1 per 届: one point worth the rubric's remaining total
    A2坚持赵云+2分，若先道歉再坚持…仅+1分   alternatives: worth 2, not 3

Rules (each criterion keeps its source line in ``raw``):

* **Markers.** A line splits into clauses at ``，,；;`` outside brackets; a clause splits after each
  score marker outside brackets: ``+k``, ``-k``, ``加k分``, ``扣k分``, ``减k分``, ``=k分`` (a point:
  ``API=2分``), and a dash ``–k分``/``—k分`` (a deduction; the ``分`` is required for these two
  forms). ``150-250`` is a range, not a deduction. A piece ending in a positive marker is a scoring
  point of weight k, one ending in a negative marker a deduction of size k (per occurrence); pieces
  without a marker are qualifiers joined to the neighbouring point.
* **Brackets.** Markers inside brackets are part of the text (``内容可用性+4（幻觉-2）`` is one
  point worth 4), with two exceptions. A clause with no marker outside its brackets is scored by
  the markers inside them (``三个城市（均正确+3，错一处-1）`` is a point of 3 and a deduction of 1,
  each prefixed with the text outside the brackets). A point whose bracket holds only scoring points
  adding up to the point's weight is split into those sub-points (``API=2分(任务规划+1，代码正确+1）``
  becomes two points of 1); brackets that do not add up (``+2分（原文+2分，换说法+1分）``) stay text.
* **"Each".** ``各`` / ``分别`` right before a marker multiplies it by the number of things named: a
  counted noun (``三种``), answer labels (``Q3Q4``) or an enumeration (``甲、乙``, ``甲和乙``). A point
  stated per unit (``每一届完全正确+1分``, ``每处1分``) is one criterion for the whole rule (its text
  says ``每届+1分，共N分``): N = k × the count the line states for that unit (``2处断句，每处1分``
  = 2); without a stated count, the weight is what is left of the budget (a header's k, or the full
  5 for the rubric) after every other point of that scope, when exactly one such rule is open in the
  scope and at least k is left; otherwise it stays k (and the total flags the rubric). Criteria have
  no partial credit: a judge gives the rule's points when the answer meets it, and the text carries
  the per-unit rate for a judge that scores proportionally.
* **Alternatives are not summed.** Points of one line (same answer label) are alternatives, merged
  into one criterion worth the largest of them, when the later one is a reduced credit (``仅+1分``,
  ``只+1``), starts with ``或`` (``X+2分或Y+1分``), is ``+k分或m分``, or states the complementary
  case of the earlier one (``若P…+1；若未P…+1``, ``若回答正确则…+1，回答错误则…+1``, ``否则…``).
  And when one scoring point alone is worth the full 5 and there are others, the points are levels
  of one scale (``完全符合+5；有少于2处不合理+2``): they become one criterion worth 5 listing every
  level with its score.
* **Headers.** ``LABEL+k：…`` (or ``LABEL=k分：…``) is a header worth k. If its scoring points add up
  to k they are its criteria; if it has only deductions it becomes one point worth k plus the
  deductions; with no marker it is one point worth k. If its points do not add up to k (conditional
  rubrics) the whole line becomes one criterion worth k: the line "cannot be parsed" and is kept
  verbatim (counted in ``fallback_lines``).
* **Deductions only.** A rubric with deductions but no scoring point starts from the full 5: one point
  worth 5 (its text is the rubric's lines that state no points, or "回答完全正确") plus the
  deductions, e.g. ``写出五个朝代，错一个-1分``.
* **Notes.** A line with no scoring marker at all is a note (kept in ``notes``), unless no criterion
  could be parsed from the whole text, in which case the text becomes one point worth the full 5.

:attr:`ParsedStandard.total` is the sum of the scoring points; SedarEval rubrics are written to
total 5, so ``total != 5`` flags a rubric the parser may have misread; the raw text on every
criterion and the item's judge prompt remain authoritative.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from engine.bench.model import Criterion

FULL_SCORE = 5.0

_OPEN = "（(【[“「《\"‘"
_CLOSE = "）)】]”」》\"’"
_CLAUSE_SEP = set("，,；;")
_EPS = 1e-9

_MARKER_RE = re.compile(
    r"(?P<sign>[+＋]|(?<![0-9０-９])[-－−]|加|扣|减)\s*(?P<num>\d+(?:\.\d+)?)"
    r"(?:\s*[-~～至到]\s*(?P<hi>\d+(?:\.\d+)?)(?=\s*分))?\s*分?"
    r"|(?P<esign>[=＝]|(?<![0-9０-９])[–—﹣])\s*(?P<enum>\d+(?:\.\d+)?)\s*分"
)
_POSITIVE = set("+＋加=＝")
_ALT_VALUE_RE = re.compile(r"\s*或\s*[+＋]?\s*(?P<num>\d+(?:\.\d+)?)\s*分?")
_PER_UNIT_RE = re.compile(r"^每.*?(?P<num>\d+(?:\.\d+)?)\s*分$")
_HEADER_RE = re.compile(
    r"^(?P<label>[^+＋=＝:：\-－]{1,20}?)\s*"
    r"(?:[+＋]\s*(?P<num>\d+(?:\.\d+)?)\s*分?|[=＝]\s*(?P<enum>\d+(?:\.\d+)?)\s*分)\s*[:：](?P<rest>.*)$"
)
_LEAD_LABEL_RE = re.compile(r"^(?P<label>[AQ]\d+(?:\s*[、和]?\s*[AQ]\d+)*)\s*[:：]\s*")
_ANSWER_LABEL_RE = re.compile(r"[AQ]\d+")
_COUNTED_RE = re.compile(r"(?P<n>[一二两三四五六七八九十]|\d+)\s*(?:种|个|点|处|项|条|句|位|人)")
_CN_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_NUM = r"(?:\d+|[一二两三四五六七八九十]+)"
_MEASURES = set("个处点项条句位人种届次道题首段组对名本篇张门款部首件条轮")
_PER_LEAD_RE = re.compile(r"^(?:[AQ]\d+\s*[:：]?\s*)?(?:以上|其中|其余|其他|凡是?|对于)?\s*每")
_EVERY_RE = re.compile(r"每.{0,8}?[都均]")  # 每轮都…: "every", not a per-unit rate
_IN_TOTAL_RE = re.compile(r"总共|一共|共计|合计|总计")
_REDUCED_RE = re.compile(r"(?:仅|只)(?:能|得|给|加|可)?$")
_COND_RE = re.compile(r"(?:若|如果|假如|倘若|如若|假设)(?P<c>.+?)(?:则|那么|[，,]|$)")
_THEN_RE = re.compile(r"^(?P<c>.+?)(?<![规原准法细守总实否])则")
_OTHERWISE_RE = re.compile(r"^(?:否则|反之|不然|其他情况|其余情况)")
_NEGATORS_RE = re.compile(r"未|没有|没|不|非|无")
_ANTONYMS = (("错误", "正确"), ("错", "对"), ("失败", "成功"), ("假", "真"))
_TRIM = " \t，,；;。：:"


@dataclass
class ParsedStandard:
    """The result of parsing one ``score_standard``.

    Attributes:
        criteria: the criteria in order (cid and ord unassigned).
        notes: lines that state no points (scoring remarks), verbatim.
        fallback_lines: how many lines were kept as one unparsed criterion.
        alternatives: how many criteria merge alternative scores (worth the largest, not the sum).
        per_unit: how many criteria state a per-unit rule (``每…+k``) worth k × a count or a budget.
    """

    criteria: list[Criterion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fallback_lines: int = 0
    alternatives: int = 0
    per_unit: int = 0

    @property
    def total(self) -> float:
        """Sum of the weights of the scoring points."""
        return sum(c.weight for c in self.criteria if c.kind == "point")

    @property
    def consistent(self) -> bool:
        """True when the points total SedarEval's full score (5)."""
        return abs(self.total - FULL_SCORE) < _EPS


@dataclass
class _Piece:
    text: str
    sign: int  # +1 point, -1 deduction, 0 qualifier
    weight: float = 0.0
    label: str = ""  # answer label (A2, Q3) carried from an earlier clause of the line
    marker: str = ""  # the marker as written (``+2分``), shown when alternatives are listed
    reduced: bool = False  # ``仅+1``: a reduced credit, an alternative to the point before
    alt_or: bool = False  # the piece starts with ``或``
    alt_values: list[float] = field(default_factory=list)  # ``+7分或8分``
    unit: str | None = None  # a per-unit rule (``每届+1``): the unit ("" when unknown)
    rate: float = 0.0  # the per-unit rate k
    count: int = 0  # how many units the line states (0: unknown, weight still open)
    alts: list[_Piece] = field(default_factory=list)  # alternatives merged into this point
    levels: bool = False  # the merged levels of a rubric's one scale
    low: float | None = None  # a range ``扣1-2分``: its lower bound (weight holds the upper one)
    per: str | None = None  # a per-unit deduction (``每错一个-1``, ``错一处-1``): the unit ("" unnamed)
    cap: float = 0.0  # a per-unit deduction's cap (``3分扣完为止``; else the scope's budget)


# -- text helpers ---------------------------------------------------------------------------------
def _split_outside(text: str, seps: set[str]) -> list[str]:
    """Split at separator characters that are not inside brackets or quotes."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch in _OPEN and not (ch in _CLOSE and depth):
            depth += 1
        elif ch in _CLOSE and depth:
            depth -= 1
        if ch in seps and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    out.append("".join(cur))
    return [p for p in out if p.strip()]


def _mask_brackets(text: str) -> str:
    """The text with everything inside brackets replaced by spaces (same length)."""
    out, depth = [], 0
    for ch in text:
        if ch in _OPEN and not (ch in _CLOSE and depth):
            depth += 1
            out.append(ch)
        elif ch in _CLOSE and depth:
            depth -= 1
            out.append(ch)
        else:
            out.append(" " if depth else ch)
    return "".join(out)


def _bracket_groups(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each top-level bracket group, brackets included."""
    groups, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in _OPEN and not (ch in _CLOSE and depth):
            if depth == 0:
                start = i
            depth += 1
        elif ch in _CLOSE and depth:
            depth -= 1
            if depth == 0:
                groups.append((start, i + 1))
    if depth:
        groups.append((start, len(text)))
    return groups


def _cn_int(s: str) -> int:
    """``12``, ``三``, ``十二``, ``二十`` as an int (0 when it cannot tell)."""
    if s.isdigit():
        return int(s)
    if len(s) == 1:
        return _CN_NUM.get(s, 0)
    if s.startswith("十"):
        return 10 + _CN_NUM.get(s[1:], 0) if len(s) == 2 else 0
    if len(s) in (2, 3) and s[1] == "十":
        return _CN_NUM.get(s[0], 0) * 10 + (_CN_NUM.get(s[2], 0) if len(s) == 3 else 0)
    return 0


def _count_units(segment: str) -> int:
    """How many things a "各/分别" segment names (1 when it cannot tell)."""
    m = _COUNTED_RE.search(segment)
    if m:
        n = m.group("n")
        count = int(n) if n.isdigit() else _CN_NUM.get(n, 1)
        if count > 1:
            return count
    labels = set(_ANSWER_LABEL_RE.findall(segment))
    if len(labels) > 1:
        return len(labels)
    body = _ANSWER_LABEL_RE.sub("", segment).strip(_TRIM)
    parts = [p for p in re.split(r"[、和与及/]", body) if p.strip()]
    return max(1, len(parts))


def _per_unit(body: str) -> str | None:
    """The unit of a per-unit rule in ``body`` (``每一届…`` -> ``届``; "" if unnamed), or None."""
    masked = _mask_brackets(body).strip(_TRIM)
    lead = _PER_LEAD_RE.match(masked)
    if not lead or _EVERY_RE.search(masked) or _IN_TOTAL_RE.search(masked):
        return None
    i = lead.end() - 1
    after = masked[i + 1:].lstrip()
    if after[:1] in ("一", "1") and len(after) > 1 and after[1].strip():
        return after[1]
    if after[:1] in _MEASURES:
        return after[0]
    m = re.search(r"[一1](?P<u>\S)", after[:8])
    if m and m.group("u") in _MEASURES:
        return m.group("u")
    return ""


_PER_DEDUCTION_RE = re.compile(r"每[^，,；;。]{0,12}?(?:[一1](?P<u1>\S)|(?P<u2>[个处点项条句位人种届次道题首段组对名本篇张门款部件轮]))"
                               r"|(?:错|少|漏|多|缺)(?:了)?[一1](?P<u3>\S)|(?:出现)?[一1](?P<u4>[处个])")
_CAP_RE = re.compile(r"(?P<n>\d+(?:\.\d+)?)\s*分\s*扣完为止")
_GATE_RE = re.compile(r"^(?P<cond>.*?\S.*?)[，,]?\s*(?:则)?\s*(?P<whole>整题|全题|总分|整体)?\s*(?P<direct>直接)?\s*"
                      r"(?:得|给|计|为|记)?\s*(?P<v>\d+(?:\.\d+)?)\s*分$")
_NOT_GATE_RE = re.compile(r"^(?:[AQ]\d+\s*[:：]?\s*)?(?:其他|其余|其它|否则|完全不|均不|都不|不满足|以上都不|其他回答|其余回答)")
UNIT_TAG = re.compile(r"（每(?P<unit>\S?)扣(?P<rate>\d+(?:\.\d+)?)分，最多扣(?P<cap>\d+(?:\.\d+)?)分）$")
"""The tag a per-unit deduction's text ends with: its unit, its rate per occurrence and its cap."""
RANGE_TAG = re.compile(r"（(?P<sign>[+扣])(?P<low>\d+(?:\.\d+)?)至(?P<high>\d+(?:\.\d+)?)分）$")
"""The tag a range criterion's text ends with (``扣1-2分``): its bounds."""
GATE_TAG = re.compile(r"（门槛：出现此情况则整题得(?P<value>\d+(?:\.\d+)?)分）$")
"""The tag a gate's text ends with: the score the whole item gets when the gate applies."""


def _deduction_unit(body: str) -> str | None:
    """The unit of a per-unit deduction (``每错一个`` / ``错一处`` / ``每处`` -> 个 / 处 / 处; "" when
    unnamed), or None when the deduction is not stated per occurrence."""
    masked = _mask_brackets(body)
    m = _PER_DEDUCTION_RE.search(masked)
    if not m:
        return None
    unit = next((g for g in (m.group("u1"), m.group("u2"), m.group("u3"), m.group("u4")) if g), "")
    return unit if unit in _MEASURES else ""


def _gate(clause: str) -> _Piece | None:
    """A gate clause (``太宰治外漏直接0分``, ``若道歉…整题直接0分``, ``若第三人称口吻…整题2分``): a
    condition that sets the whole score; None for anything else (``其他回答0分`` is a level, not a gate)."""
    text = clause.strip(_TRIM)
    if _MARKER_RE.search(_mask_brackets(text)):
        return None
    m = _GATE_RE.match(text)
    if not m or _NOT_GATE_RE.match(text):
        return None
    value = float(m.group("v"))
    if value >= FULL_SCORE or not (value == 0 or m.group("whole")):
        return None
    cond = m.group("cond").strip(_TRIM)
    cond = re.sub(r"^(?:若|如果|如)", "", cond).strip(_TRIM)
    if len(cond) < 2:
        return None
    return _Piece(cond, -1, FULL_SCORE - value if value < FULL_SCORE else FULL_SCORE, low=None, per=None,
                  marker=f"gate:{value:g}")


def _set_caps(pieces: list[_Piece], line: str, budget: float) -> None:
    """A per-unit deduction's cap: the line's ``N分扣完为止``, else the scope's budget (a header's k, or 5)."""
    stated = _CAP_RE.search(line)
    for p in pieces:
        if p.per is not None and p.sign < 0:
            p.cap = float(stated.group("n")) if stated else budget
            p.text = _CAP_RE.sub("", p.text).strip(_TRIM) or p.text


def unit_rule(c: Criterion) -> tuple[str, float, float] | None:
    """A per-unit deduction's (unit, rate per occurrence, cap), read from its text's tag; else None."""
    m = UNIT_TAG.search(c.text) if c.kind == "deduction" else None
    return (m.group("unit"), float(m.group("rate")), float(m.group("cap"))) if m else None


def range_bounds(c: Criterion) -> tuple[float, float] | None:
    """A range criterion's (low, high) bounds (``扣1-2分`` -> (1, 2)), read from its text's tag; else None."""
    m = RANGE_TAG.search(c.text)
    return (float(m.group("low")), float(m.group("high"))) if m else None


def gate_value(c: Criterion) -> float | None:
    """The score a gate sets the whole item to when it applies, read from its text's tag; else None."""
    m = GATE_TAG.search(c.text) if c.kind == "deduction" else None
    return float(m.group("value")) if m else None


def _stated_count(line: str, unit: str) -> int:
    """How many ``unit`` the line states (``2处断句`` -> 2); 0 when it states none above 1."""
    if not unit:
        return 0
    for m in re.finditer(rf"(?<![第每一二两三四五六七八九十\d])(?P<n>{_NUM})\s*{re.escape(unit)}", line):
        n = _cn_int(m.group("n"))
        if n > 1:
            return n
    return 0


def _condition(text: str) -> str | None:
    """The condition of a conditional point (``若P则…`` or ``P则…``), or None."""
    m = _COND_RE.search(text)
    if m and m.group("c").strip(_TRIM):
        return m.group("c").strip(_TRIM)
    m = _THEN_RE.search(text)
    return m.group("c").strip(_TRIM) if m else None


def _normalise_condition(cond: str) -> str:
    s = re.sub(r"[\s，,。；;：:、]", "", _ANSWER_LABEL_RE.sub("", cond))
    s = _NEGATORS_RE.sub("", s)
    for a, b in _ANTONYMS:
        s = s.replace(a, b)
    return s


def _complementary(first: _Piece, later: _Piece) -> bool:
    """True when ``later`` scores the opposite case of ``first`` (若P… / 若未P…, 正确/错误, 否则)."""
    c1 = _condition(first.text)
    if c1 is None:
        return False
    body = _ANSWER_LABEL_RE.sub("", later.text, count=1).strip(_TRIM) if later.label else later.text
    if _OTHERWISE_RE.match(body.strip(_TRIM)):
        return True
    c2 = _condition(later.text)
    if c2 is None or c2 == c1:
        return False
    n1, n2 = _normalise_condition(c1), _normalise_condition(c2)
    return bool(n1) and n1 == n2


# -- pieces ---------------------------------------------------------------------------------------
def _pieces(clause: str) -> list[_Piece]:
    """Cut a clause after each score marker outside brackets."""
    masked = _mask_brackets(clause)
    pieces: list[_Piece] = []
    start = pos = 0
    while (m := _MARKER_RE.search(masked, pos)) is not None:
        sign = 1 if (m.group("sign") or m.group("esign")) in _POSITIVE else -1
        weight = float(m.group("num") or m.group("enum"))
        low = None
        if m.group("hi") is not None and float(m.group("hi")) > weight:
            low, weight = weight, float(m.group("hi"))
        end = m.end()
        alt_values: list[float] = []
        alt = _ALT_VALUE_RE.match(masked, end) if sign > 0 else None
        if alt:
            alt_values = [weight, float(alt.group("num"))]
            weight, end = max(alt_values), alt.end()
        body = clause[start:m.start()]
        marker = clause[m.start():end].strip()
        start = pos = end
        if weight == 0:
            gate = _gate(body + marker)
            pieces.append(gate or _Piece((body + marker).strip(_TRIM), 0))
            continue
        stripped = body.rstrip()
        piece = _Piece(body.strip(_TRIM), sign, weight, marker=marker, alt_values=alt_values, low=low)
        if sign < 0 and low is None:
            piece.per = _deduction_unit(stripped)
        if sign > 0:
            piece.reduced = bool(_REDUCED_RE.search(stripped))
            piece.alt_or = body.lstrip(_TRIM).startswith("或")
            if stripped.endswith("各") or stripped.endswith("分别"):
                piece.weight *= _count_units(stripped)
            elif not alt_values and (unit := _per_unit(stripped)) is not None:
                piece.unit, piece.rate = unit, weight
        pieces.append(piece)
    tail = clause[start:].strip(_TRIM)
    if tail:
        per_unit = _PER_UNIT_RE.match(tail) if not pieces else None
        if per_unit and float(per_unit.group("num")) > 0:
            k = float(per_unit.group("num"))
            pieces.append(_Piece(tail, 1, k, marker=f"{k:g}分", unit=_per_unit(tail) or "", rate=k))
        else:
            pieces.append(_gate(tail) or _Piece(tail, 0))
    return pieces


def _join(left: str, right: str) -> str:
    if not left or not right:
        return left or right
    return f"{left}{right}" if right[:1] in _OPEN else f"{left}，{right}"


def _merge(pieces: list[_Piece]) -> list[_Piece]:
    """Join qualifiers to their neighbours: leading ones to the next point, the rest to the previous."""
    out: list[_Piece] = []
    pending: list[_Piece] = []
    for p in pieces:
        if p.sign == 0:
            if out:
                out[-1].text = _join(out[-1].text, p.text)
            else:
                pending.append(p)
            continue
        if pending:
            text = pending[0].text
            for q in [*pending[1:], p]:
                text = _join(text, q.text)
            p = replace(p, text=text, label=pending[0].label or p.label)
            pending = []
        out.append(p)
    if pending:
        text = pending[0].text
        for q in pending[1:]:
            text = _join(text, q.text)
        out.append(_Piece(text, 0, 0.0, pending[0].label))
    for p in out:
        if p.label and not _ANSWER_LABEL_RE.match(p.text):
            p.text = f"{p.label}：{p.text}"
    return out


def _bracket_scored(clause: str) -> list[_Piece] | None:
    """Pieces of a clause whose only markers sit inside its brackets (``城市（均正确+3，错一处-1）``)."""
    if _MARKER_RE.search(_mask_brackets(clause)) or not _MARKER_RE.search(clause):
        return None
    scored = [(a, b) for a, b in _bracket_groups(clause) if _MARKER_RE.search(clause[a + 1:b - 1])]
    outside, last = "", 0
    for a, b in scored:
        outside += clause[last:a]
        last = b
    outside = (outside + clause[last:]).strip(_TRIM)
    out: list[_Piece] = []
    for a, b in scored:
        for p in _line_pieces(clause[a + 1:b - 1]):
            if p.sign and outside:
                p.text = f"{outside}：{p.text}" if p.text else outside
            out.append(p)
    return out


def _split_sub_points(p: _Piece) -> list[_Piece]:
    """A point whose bracket holds only points adding up to its weight, as those sub-points."""
    if p.sign <= 0 or p.unit is not None or p.alt_values:
        return [p]
    groups = [(a, b) for a, b in _bracket_groups(p.text) if _MARKER_RE.search(p.text[a + 1:b - 1])]
    if len(groups) != 1:
        return [p]
    a, b = groups[0]
    subs = [s for s in _line_pieces(p.text[a + 1:b - 1]) if s.sign]
    if (len(subs) < 2 or any(s.sign < 0 or s.unit is not None or s.alts for s in subs)
            or abs(sum(s.weight for s in subs) - p.weight) > _EPS):
        return [p]
    outside = (p.text[:a] + p.text[b:]).strip(_TRIM)
    return [replace(s, text=f"{outside}：{s.text}" if outside else s.text, label=p.label) for s in subs]


def _group_alternatives(pieces: list[_Piece]) -> list[_Piece]:
    """Merge a point into the point before it when it is an alternative to it (see the module doc)."""
    out: list[_Piece] = []
    for p in pieces:
        prev = out[-1] if out and out[-1].sign > 0 and p.sign > 0 and out[-1].label == p.label else None
        if prev is not None and (p.reduced or p.alt_or or _complementary(prev, p)):
            prev.alts.append(p)
            continue
        out.append(p)
    return out


def _line_pieces(text: str) -> list[_Piece]:
    """Pieces of a line (or a header's rest), with ``A2：`` labels carried to later clauses."""
    raw: list[_Piece] = []
    label = ""
    for clause in _split_outside(text, _CLAUSE_SEP):
        clause = clause.strip()
        m = _LEAD_LABEL_RE.match(clause)
        ps = _bracket_scored(clause)
        if ps is None:
            ps = _pieces(clause)
        if m:
            label = m.group("label")
        elif label and not _ANSWER_LABEL_RE.match(clause):
            for p in ps:
                p.label = label
        raw.extend(ps)
    merged = [s for p in _merge(raw) for s in _split_sub_points(p)]
    return _group_alternatives(merged)


# -- weights, alternatives and criteria -----------------------------------------------------------
def _weight(p: _Piece) -> float:
    """A point's weight: the largest of its alternatives."""
    return max([p.weight, *(a.weight for a in p.alts)])


def _settle_units(pieces: list[_Piece], line_of: dict[int, str], budget: float) -> None:
    """Give per-unit rules their weight: k × the stated count, else the scope's remaining budget."""
    for p in pieces:
        if p.unit is not None and not p.count:
            n = _stated_count(line_of.get(id(p), ""), p.unit)
            if n:
                p.count, p.weight = n, p.rate * n
    open_ = [p for p in pieces if p.sign > 0 and p.unit is not None and not p.count]
    if len(open_) != 1:
        return
    p = open_[0]
    left = budget - sum(_weight(q) for q in pieces if q.sign > 0 and q is not p)
    if left >= p.rate - _EPS:
        p.weight = left
        p.count = -1  # settled from the budget


def _text(p: _Piece, prefix: str = "") -> str:
    text = p.text or prefix
    if prefix and p.text and not p.text.startswith(prefix):
        text = f"{prefix}：{p.text}"
    if p.marker.startswith("gate:"):
        return f"{text.strip()}（门槛：出现此情况则整题得{p.marker[5:]}分）"
    if p.per is not None and p.sign < 0:
        return f"{text.strip()}（每{p.per}扣{p.weight:g}分，最多扣{p.cap:g}分）"
    if p.low is not None:
        return f"{text.strip()}（{'+' if p.sign > 0 else '扣'}{p.low:g}至{p.weight:g}分）"
    if p.unit is not None and abs(p.weight - p.rate) > _EPS:
        text = f"{text}（每{p.unit or '项'}+{p.rate:g}分，共{p.weight:g}分）"
    elif p.alt_values:
        text = f"{text}（{p.alt_values[0]:g}分或{p.alt_values[1]:g}分）"
    return text.strip()


def _crit(p: _Piece, raw: str, prefix: str = "") -> Criterion:
    kind = "point" if p.sign > 0 else "deduction"
    if not p.alts:
        return Criterion.new(_text(p, prefix) or raw, kind=kind, weight=p.weight, raw=raw)
    options = [_text(q, prefix) + ("" if q.unit is not None or q.alt_values else q.marker) for q in [p, *p.alts]]
    weight = _weight(p)
    text = "；".join(options) + f"（以上按满足的一项计分，不累加，最高{weight:g}分）"
    return Criterion.new(text, kind=kind, weight=weight, raw=raw)


def _levels(entries: list[tuple[_Piece, str, str]]) -> list[tuple[_Piece, str, str]]:
    """Points of a rubric holding a full-score point are levels of one scale: one point worth 5."""
    points = [e for e in entries if e[0].sign > 0]
    if len(points) < 2 or not any(_weight(e[0]) >= FULL_SCORE - _EPS for e in points):
        return entries
    levels = [f"{_text(q, prefix)}（{q.weight:g}分）" for p, _, prefix in points for q in [p, *p.alts]]
    text = "；".join(levels) + f"（以上为同一评分的不同档次，按满足的最高一档计分，最高{FULL_SCORE:g}分）"
    merged = _Piece(text, 1, FULL_SCORE, label=points[0][0].label, levels=True)
    raws = "\n".join(dict.fromkeys(raw for _, raw, _ in points))
    out: list[tuple[_Piece, str, str]] = []
    for e in entries:
        if e is points[0]:
            out.append((merged, raws, ""))
        elif e[0].sign <= 0:
            out.append(e)
    return out


def parse_score_standard(text: str) -> ParsedStandard:
    """Parse a SedarEval ``score_standard`` (see the module docstring for the rules).

    Args:
        text: the rubric text, lines separated by newlines.

    Returns:
        The criteria (each with its source line in ``raw``), the notes, how many lines fell back to
        one unparsed criterion, how many criteria merge alternatives and how many are per-unit rules.
    """
    result = ParsedStandard()
    entries: list[tuple[_Piece, str, str]] = []  # (piece, raw line, header label)
    loose: list[_Piece] = []  # points outside headers: their per-unit rules share the full score
    line_of: dict[int, str] = {}
    subjects: list[str] = []
    for line in (ln.strip() for ln in text.replace("\r\n", "\n").split("\n")):
        if not line:
            continue
        header = _HEADER_RE.match(line)
        if header and not _MARKER_RE.search(_mask_brackets(header.group("label"))):
            label = header.group("label").strip()
            budget = float(header.group("num") or header.group("enum"))
            rest = header.group("rest").strip()
            pieces = [p for p in _line_pieces(rest) if p.sign] if rest else []
            _set_caps(pieces, line, budget)
            for p in pieces:
                line_of[id(p)] = rest
            _settle_units(pieces, line_of, budget)
            points = [p for p in pieces if p.sign > 0]
            deductions = [p for p in pieces if p.sign < 0]
            if budget <= 0:
                result.notes.append(line)
            elif not pieces:
                body = f"{label}：{rest.strip(_TRIM)}" if rest.strip(_TRIM) else label
                entries.append((_Piece(body, 1, budget), line, ""))
            elif not points:
                base = f"{label}（{budget:g}分，按下列扣分项扣分，扣完为止）"
                entries.append((_Piece(base, 1, budget), line, ""))
                entries.extend((p, line, label) for p in deductions)
            elif abs(sum(_weight(p) for p in points) - budget) < _EPS:
                entries.extend((p, line, label) for p in pieces)
            else:
                entries.append((_Piece(line, 1, budget), line, ""))
                result.fallback_lines += 1
            continue
        pieces = [p for p in _line_pieces(line) if p.sign]
        if not pieces:
            result.notes.append(line)
            continue
        _set_caps(pieces, line, FULL_SCORE)
        for p in pieces:
            line_of[id(p)] = line
        loose.extend(pieces)
        entries.extend((p, line, "") for p in pieces)
        if not any(p.sign > 0 for p in pieces):
            lead = []
            for clause in _split_outside(line, _CLAUSE_SEP):
                if _MARKER_RE.search(clause):
                    break
                lead.append(clause.strip(_TRIM))
            subjects.append("，".join(c for c in lead if c))
    fixed = sum(_weight(p) for p, _, _ in entries if p.sign > 0 and not any(p is q for q in loose))
    _settle_units(loose, line_of, FULL_SCORE - fixed)
    entries = _levels(entries)
    result.criteria = [_crit(p, raw, prefix) for p, raw, prefix in entries]
    result.alternatives = sum(1 for p, _, _ in entries if p.alts or p.alt_values or p.levels)
    result.per_unit = sum(1 for p, _, _ in entries if p.unit is not None and p.sign > 0)
    if not any(c.kind == "point" for c in result.criteria):
        whole = text.strip()
        if result.criteria:  # deductions only: the answer starts from the full score
            what = "；".join(s for s in [*result.notes, *subjects] if s) or "回答完全正确"
            base = f"{what}（满分{FULL_SCORE:g}分，按下列扣分项扣分，扣完为止）"
            result.criteria.insert(0, Criterion.new(base, weight=FULL_SCORE, raw=whole))
        else:
            result.criteria.insert(0, Criterion.new(whole or "(empty rubric)", weight=FULL_SCORE, raw=whole))
            result.fallback_lines += 1
    return result
