"""Markdown: every section as a table (charts as the table of their numbers), the transcript as
paragraphs. Every text from the data is escaped (:mod:`engine.report.escape`): an answer cannot
open a heading, a list, a code block, a table or raw HTML."""

from __future__ import annotations

from typing import Any

from engine.report.escape import escape_markdown, markdown_cell
from engine.report.model import BarChart, Figures, LineChart, Report, Section, Table, Transcript
from engine.report.render import show


def _cell(value: Any, fmt: str = "") -> str:
    """A table cell: data text escaped, numbers formatted (never escaped: they are ours)."""
    return markdown_cell(value) if isinstance(value, str) else show(value, fmt)


def _table(columns: list[str], rows: list[list[str]]) -> list[str]:
    head = [markdown_cell(c) or " " for c in columns]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _section(s: Section) -> list[str]:
    lines = [f"## {markdown_cell(s.title)}", ""]
    note = getattr(s, "note", "")
    if isinstance(s, Figures):
        lines += _table(["figure", "value", "note"],
                        [[markdown_cell(r.label), _cell(r.value, r.fmt), markdown_cell(r.note)] for r in s.rows])
    elif isinstance(s, Table):
        if not s.rows:
            lines.append("(none)")
        else:
            lines += _table(s.columns, [[_cell(v, s.fmt(i)) for i, v in enumerate(row)] for row in s.rows])
    elif isinstance(s, LineChart):
        lines += _table([s.x_label, s.y_label, "action"],
                        [[markdown_cell(p.x), show(p.y, ".3f"), markdown_cell(p.category)] for p in s.points])
    elif isinstance(s, BarChart):
        cols = ["", *s.series] + (["note"] if s.notes else [])
        rows = []
        for g, label in enumerate(s.groups):
            row = [markdown_cell(label), *[show(v, s.fmt) for v in s.values[g]]]
            if s.notes:
                row.append(markdown_cell(s.notes[g] if g < len(s.notes) else ""))
            rows.append(row)
        lines += _table(cols, rows)
    elif isinstance(s, Transcript):
        lines = lines[:2]
        for t in s.turns:
            lines += [f"### {markdown_cell(t.heading)}", ""]
            if t.meta:
                lines += [f"*{markdown_cell(t.meta)}*", ""]
            lines += [f"**Q:** {escape_markdown(t.question)}", "",
                      f"**A:** {escape_markdown(t.answer) if t.answer else '(no answer)'}", ""]
        return lines
    if note:
        lines += ["", f"*{markdown_cell(note)}*"]
    return lines + [""]


def render_markdown(report: Report) -> str:
    """The report as Markdown (ends with one line break)."""
    lines = [f"# {markdown_cell(report.title)}", "", markdown_cell(report.subtitle), ""]
    for s in report.sections:
        lines += _section(s)
    return "\n".join(lines).rstrip("\n") + "\n"
