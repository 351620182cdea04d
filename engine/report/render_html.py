"""HTML: one self-contained page (inline CSS and SVG; no script, no network, no external file).

Every text is escaped with :func:`html.escape` (quotes too). A Content-Security-Policy in the page
forbids scripts and any load from elsewhere, as a second line of defence.
"""

from __future__ import annotations

from html import escape
from typing import Any

from engine.report.model import BarChart, Figures, LineChart, Report, Section, Table, Transcript
from engine.report.render import show
from engine.report.svg import bars_svg, line_svg

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"

CSS = """
:root { color-scheme: light; }
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; color: #111827; background: #ffffff;
       margin: 0 auto; max-width: 1040px; padding: 24px 28px 48px; line-height: 1.45; }
h1 { font-size: 1.55rem; margin: 0 0 4px; word-break: break-word; }
h2 { font-size: 1.15rem; margin: 28px 0 8px; padding-bottom: 4px; border-bottom: 2px solid #e5e7eb; }
h3 { font-size: 1rem; margin: 18px 0 4px; }
.subtitle { color: #4b5563; margin: 0 0 8px; }
.note { color: #4b5563; font-size: .88rem; margin: 6px 0 0; }
table { border-collapse: collapse; font-size: .9rem; margin: 4px 0; }
th, td { border: 1px solid #e5e7eb; padding: 3px 8px; vertical-align: top; text-align: left; }
th { background: #f9fafb; font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
table.figures td:first-child { font-weight: 600; white-space: nowrap; }
table.figures td.note-cell { color: #4b5563; }
.empty { color: #6b7280; font-style: italic; }
figure { margin: 8px 0; overflow-x: auto; }
.scroll { overflow-x: auto; max-width: 100%; }
svg.chart { max-width: 100%; height: auto; }
nav { font-size: .88rem; color: #4b5563; margin: 8px 0 0; }
nav a { color: #1d4ed8; margin-right: 10px; text-decoration: none; }
article.turn { border-left: 3px solid #e5e7eb; padding: 2px 0 2px 12px; margin: 12px 0; }
article.turn .meta { color: #4b5563; font-size: .88rem; margin: 0 0 6px; }
.q, .a { white-space: pre-wrap; word-break: break-word; margin: 4px 0; }
.label { font-weight: 600; }
footer { margin-top: 32px; color: #6b7280; font-size: .8rem; }
"""


def _e(text: Any) -> str:
    return escape(str(text), quote=True)


def _cell(value: Any, fmt: str = "") -> str:
    text = _e(show(value, fmt))
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    return f"<td class='num'>{text}</td>" if numeric else f"<td>{text}</td>"


def _note(s: Section) -> str:
    note = getattr(s, "note", "")
    return f"<p class='note'>{_e(note)}</p>" if note else ""


def _section(s: Section) -> str:
    head = f"<section id='{_e(s.id)}'><h2>{_e(s.title)}</h2>"
    if isinstance(s, Figures):
        rows = "".join(f"<tr><td>{_e(r.label)}</td>{_cell(r.value, r.fmt)}<td class='note-cell'>{_e(r.note)}</td></tr>"
                       for r in s.rows)
        body = (f"<table class='figures'><thead><tr><th>figure</th><th>value</th><th>note</th></tr></thead>"
                f"<tbody>{rows}</tbody></table>")
    elif isinstance(s, Table):
        if not s.rows:
            body = "<p class='empty'>none</p>"
        else:
            cols = "".join(f"<th>{_e(c)}</th>" for c in s.columns)
            rows = "".join("<tr>" + "".join(_cell(v, s.fmt(i)) for i, v in enumerate(r)) + "</tr>" for r in s.rows)
            body = (f"<div class='scroll'><table class='data'><thead><tr>{cols}</tr></thead><tbody>{rows}</tbody>"
                    "</table></div>")
    elif isinstance(s, LineChart):
        body = f"<figure>{line_svg(s)}</figure>"
    elif isinstance(s, BarChart):
        body = f"<figure>{bars_svg(s)}</figure>"
        if s.notes:
            rows = "".join(f"<tr><td>{_e(g)}</td>" + "".join(_cell(v, s.fmt) for v in s.values[i])
                           + f"<td class='note-cell'>{_e(s.notes[i] if i < len(s.notes) else '')}</td></tr>"
                           for i, g in enumerate(s.groups))
            cols = "".join(f"<th>{_e(x)}</th>" for x in s.series)
            body += (f"<div class='scroll'><table class='data chart-data'><thead><tr><th></th>{cols}<th>note</th>"
                     f"</tr></thead><tbody>{rows}</tbody></table></div>")
    elif isinstance(s, Transcript):
        turns = []
        for t in s.turns:
            answer = (f"<div class='a'><span class='label'>A: </span>{_e(t.answer)}</div>" if t.answer
                      else "<div class='a empty'>(no answer)</div>")
            turns.append(f"<article class='turn' id='turn-{t.idx}'><h3>{_e(t.heading)}</h3>"
                         + (f"<p class='meta'>{_e(t.meta)}</p>" if t.meta else "")
                         + f"<div class='q'><span class='label'>Q: </span>{_e(t.question)}</div>{answer}</article>")
        body = "".join(turns) or "<p class='empty'>no turns</p>"
    else:  # pragma: no cover - every section type is handled above
        raise TypeError(f"unknown section {type(s).__name__}")
    return head + body + _note(s) + "</section>"


def render_html(report: Report) -> str:
    """The report as one HTML page (ends with one line break)."""
    nav = "".join(f"<a href='#{_e(s.id)}'>{_e(s.title)}</a>" for s in report.sections)
    fmt = report.data.get("format", "")
    version = report.data.get("version", "")
    return (
        "<!doctype html>\n<html lang='en'><head><meta charset='utf-8'>"
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{_e(report.title)}</title><style>{CSS}</style></head>"
        f"<body class='report report-{_e(report.kind)}'><header><h1>{_e(report.title)}</h1>"
        f"<p class='subtitle'>{_e(report.subtitle)}</p><nav>{nav}</nav></header><main>"
        + "".join(_section(s) for s in report.sections)
        + f"</main><footer>viva report · {_e(fmt)} {_e(version)} · the same figures as the JSON, Markdown and CSV "
        "exports</footer></body></html>\n"
    )
