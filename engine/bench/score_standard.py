"""Parse SedarEval's compact rubric text (``meta.score_standard``) into criteria.

SedarEval writes a rubric as a few lines of Chinese shorthand, always for a 0-5 score::

    指令+1：有替代方案+1              header "指令" worth 1, one scoring point
    文采+4                            a dimension worth 4
    指令+2：藏头不正确-1；不是七言绝句-1，扣完为止   worth 2, minus deductions, floor 0
    A1正确+1，A2正确+2，A3正确+2      one scoring point per answer of a multi-turn item
    Q3Q4对模糊问题进行反问各+2         "each": +2 for Q3 and +2 for Q4 = 4
    A2陈开格、张易某分数更新且总分正确分别+1分   "each" over an enumeration = 2

Rules (each criterion keeps the whole source line in ``raw``):

* A line splits into clauses at ``，,；;`` outside brackets; a clause splits after each score
  marker outside brackets (``+k``, ``-k``, ``加k分``, ``扣k分``; ``150-250`` is a range, not a
  deduction). A piece ending in ``+k`` is a scoring point of weight k, one ending in ``-k`` a
  deduction of size k; pieces without a marker are qualifiers joined to the neighbouring point.
* ``各`` / ``分别`` right before a marker multiplies it by the number of things named: a counted
  noun (``三种``), answer labels (``Q3Q4``) or an enumeration (``甲、乙``, ``甲和乙``).
* ``LABEL+k：…`` is a header worth k. If its scoring points add up to k they are its criteria;
  if it has only deductions it becomes one point worth k plus the deductions; with no marker it is
  one point worth k. If its points do not add up to k (conditional rubrics) the whole line becomes
  one criterion worth k: the line "cannot be parsed" and is kept verbatim.
* A line with no scoring marker at all is a note (kept in ``notes``), unless no criterion could be
  parsed from the whole text, in which case the text becomes one point worth the full 5.

:attr:`ParsedStandard.total` is the sum of the scoring points; SedarEval rubrics are written to
total 5, so ``total != 5`` flags a rubric the parser may have misread (conditional or alternative
scoring); the raw text on every criterion and the item's judge prompt remain authoritative.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.bench.model import Criterion

FULL_SCORE = 5.0

_OPEN = "（(【[“「《\"‘"
_CLOSE = "）)】]”」》\"’"
_CLAUSE_SEP = set("，,；;")

_MARKER_RE = re.compile(
    r"(?P<sign>[+＋]|(?<![0-9０-９])[-－−]|加|扣|减)\s*(?P<num>\d+(?:\.\d+)?)\s*分?"
)
_PER_UNIT_RE = re.compile(r"^每.*?(?P<num>\d+(?:\.\d+)?)\s*分$")
_HEADER_RE = re.compile(r"^(?P<label>[^+＋:：\-－]{1,20}?)\s*[+＋]\s*(?P<num>\d+(?:\.\d+)?)\s*分?\s*[:：](?P<rest>.*)$")
_LEAD_LABEL_RE = re.compile(r"^(?P<label>[AQ]\d+(?:\s*[、和]?\s*[AQ]\d+)*)\s*[:：]\s*")
_ANSWER_LABEL_RE = re.compile(r"[AQ]\d+")
_COUNTED_RE = re.compile(r"(?P<n>[一二两三四五六七八九十]|\d+)\s*(?:种|个|点|处|项|条|句|位|人)")
_CN_NUM = {"一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9, "十": 10}
_TRIM = " \t，,；;。：:"


@dataclass
class ParsedStandard:
    """The result of parsing one ``score_standard``.

    Attributes:
        criteria: the criteria in order (cid and ord unassigned).
        notes: lines that state no points (scoring remarks), verbatim.
        fallback_lines: how many lines were kept as one unparsed criterion.
        total: sum of the weights of the scoring points.
    """

    criteria: list[Criterion] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fallback_lines: int = 0

    @property
    def total(self) -> float:
        """Sum of the weights of the scoring points."""
        return sum(c.weight for c in self.criteria if c.kind == "point")

    @property
    def consistent(self) -> bool:
        """True when the points total SedarEval's full score (5)."""
        return abs(self.total - FULL_SCORE) < 1e-9


@dataclass
class _Piece:
    text: str
    sign: int  # +1 point, -1 deduction, 0 qualifier
    weight: float = 0.0
    label: str = ""  # answer label (A2, Q3) carried from an earlier clause of the line


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


def _pieces(clause: str) -> list[_Piece]:
    """Cut a clause after each score marker outside brackets."""
    masked = _mask_brackets(clause)
    pieces: list[_Piece] = []
    start = 0
    for m in _MARKER_RE.finditer(masked):
        weight = float(m.group("num"))
        body = clause[start:m.start()]
        sign = 1 if m.group("sign") in "+＋加" else -1
        end = m.end()
        start = end
        if weight == 0:
            pieces.append(_Piece((body + clause[m.start():end]).strip(_TRIM), 0))
            continue
        stripped = body.rstrip()
        if sign > 0 and (stripped.endswith("各") or stripped.endswith("分别")):
            weight *= _count_units(stripped)
        pieces.append(_Piece(body.strip(_TRIM), sign, weight))
    tail = clause[start:]
    if tail.strip(_TRIM):
        per_unit = _PER_UNIT_RE.match(tail.strip(_TRIM)) if not pieces else None
        if per_unit and float(per_unit.group("num")) > 0:
            pieces.append(_Piece(tail.strip(_TRIM), 1, float(per_unit.group("num"))))
        else:
            pieces.append(_Piece(tail.strip(_TRIM), 0))
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
            p = _Piece(text, p.sign, p.weight, pending[0].label)
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


def _line_pieces(text: str) -> list[_Piece]:
    """Pieces of a line (or a header's rest), with ``A2：`` labels carried to later clauses."""
    raw: list[_Piece] = []
    label = ""
    for clause in _split_outside(text, _CLAUSE_SEP):
        clause = clause.strip()
        m = _LEAD_LABEL_RE.match(clause)
        ps = _pieces(clause)
        if m:
            label = m.group("label")
        elif label and not _ANSWER_LABEL_RE.match(clause):
            for p in ps:
                p.label = label
        raw.extend(ps)
    return _merge(raw)


def _crit(piece: _Piece, raw: str, prefix: str = "") -> Criterion:
    text = piece.text or prefix or raw
    if prefix and piece.text and not piece.text.startswith(prefix):
        text = f"{prefix}：{piece.text}"
    kind = "point" if piece.sign > 0 else "deduction"
    return Criterion.new(text.strip(), kind=kind, weight=piece.weight, raw=raw)


def parse_score_standard(text: str) -> ParsedStandard:
    """Parse a SedarEval ``score_standard`` (see the module docstring for the rules).

    Args:
        text: the rubric text, lines separated by newlines.

    Returns:
        The criteria (each with its source line in ``raw``), the notes, and how many lines fell
        back to one unparsed criterion.
    """
    result = ParsedStandard()
    for line in (ln.strip() for ln in text.replace("\r\n", "\n").split("\n")):
        if not line:
            continue
        header = _HEADER_RE.match(line)
        if header and not _MARKER_RE.search(_mask_brackets(header.group("label"))):
            label = header.group("label").strip()
            budget = float(header.group("num"))
            rest = header.group("rest").strip()
            pieces = [p for p in _line_pieces(rest) if p.sign] if rest else []
            points = [p for p in pieces if p.sign > 0]
            deductions = [p for p in pieces if p.sign < 0]
            if budget <= 0:
                result.notes.append(line)
            elif not pieces:
                body = f"{label}：{rest.strip(_TRIM)}" if rest.strip(_TRIM) else label
                result.criteria.append(Criterion.new(body, weight=budget, raw=line))
            elif not points:
                base = f"{label}（{budget:g}分，按下列扣分项扣分，扣完为止）"
                result.criteria.append(Criterion.new(base, weight=budget, raw=line))
                result.criteria.extend(_crit(p, line, label) for p in deductions)
            elif abs(sum(p.weight for p in points) - budget) < 1e-9:
                result.criteria.extend(_crit(p, line, label) for p in pieces)
            else:
                result.criteria.append(Criterion.new(line, weight=budget, raw=line))
                result.fallback_lines += 1
            continue
        pieces = [p for p in _line_pieces(line) if p.sign]
        if not pieces:
            result.notes.append(line)
        else:
            result.criteria.extend(_crit(p, line) for p in pieces)
    if not any(c.kind == "point" for c in result.criteria):
        whole = text.strip()
        result.criteria.insert(0, Criterion.new(whole or "(empty rubric)", weight=FULL_SCORE, raw=whole))
        result.fallback_lines += 1
    return result
