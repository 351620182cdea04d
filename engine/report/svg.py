"""Inline SVG charts for the HTML report: a line over turns and horizontal (grouped) bars.

Plain SVG 1.1 with presentation attributes only: no script, no external reference, no font
download; every text is escaped. Each chart is ``<svg role="img">`` with a ``<title>``; each point
and bar has its own ``<title>`` (shown on hover by browsers, without JavaScript).
"""

from __future__ import annotations

from html import escape

from engine.report.model import BarChart, LineChart
from engine.report.render import show

PALETTE = ("#2563eb", "#d97706", "#059669", "#dc2626", "#7c3aed", "#0891b2", "#db2777", "#65a30d")
"""Series colours, in order (colour-blind-safe enough for up to four series; the legend names them)."""

ACTION_COLOURS = {"initial": "#6b7280", "follow-up": "#2563eb", "challenge": "#d97706", "injected": "#7c3aed",
                  "end": "#059669"}
"""Point colours of a score line by the turn's action; other actions take palette colours."""

FONT = "font-family='system-ui, sans-serif' font-size='12'"


def _e(text: object) -> str:
    return escape(str(text), quote=True)


CHAR_PX = 7.0
"""A generous average advance of one character at font-size 12 in a sans-serif face (digits and lower
case are 6-7 px): a label estimated wider than its box is fitted with ``textLength``."""

LABEL_MARGIN = 4
"""Pixels kept free at the left edge of the chart before a right-aligned label."""


def fit_attrs(text: str, box: float) -> str:
    """SVG attributes that keep ``text`` within ``box`` pixels: none when its estimated width
    (:data:`CHAR_PX` per character) fits, else ``textLength`` = ``box`` with glyphs and spacing
    compressed to it, so the label is never clipped at the edge of the chart ("ython:engine…")."""
    if len(text) * CHAR_PX <= box:
        return ""
    return f" textLength='{box:.0f}' lengthAdjust='spacingAndGlyphs'"


def _short(text: str, n: int) -> str:
    """``text`` on one line in at most ``n`` characters: its start and its end around an ellipsis
    (two labels that differ only at the end, like two targets on one server, stay apart)."""
    text = " ".join(str(text).split())
    if len(text) <= n:
        return text
    tail = (n - 1) // 3
    return text[: n - 1 - tail] + "…" + text[len(text) - tail:]


def _legend(items: list[tuple[str, str]], x0: int, y0: int, width: int, mark: str) -> tuple[list[str], int]:
    """Legend entries (label, colour) laid out in rows within ``width``; returns the SVG and the
    height used. ``mark`` is ``circle`` or ``square``."""
    out, x, y = [], x0, y0
    for label, colour in items:
        text = _short(label or "–", 48)
        w = 26 + 7 * len(text)
        if x > x0 and x + w > width:
            x, y = x0, y + 18
        shape = (f"<circle cx='{x + 5}' cy='{y + 6}' r='5' fill='{colour}'/>" if mark == "circle"
                 else f"<rect x='{x}' y='{y}' width='12' height='12' fill='{colour}'/>")
        out.append(f"{shape}<text x='{x + 16}' y='{y + 11}' fill='#374151'><title>{_e(label)}</title>{_e(text)}</text>")
        x += w
    return out, y - y0 + 18


def _category_colours(categories: list[str]) -> dict[str, str]:
    colours: dict[str, str] = {}
    spare = iter(PALETTE[4:] + PALETTE[:4])
    for c in categories:
        if c not in colours:
            colours[c] = ACTION_COLOURS.get(c) or next(spare, "#374151")
    return colours


def line_svg(chart: LineChart, width: int = 720, height: int = 260) -> str:
    """A line chart of ``chart.points`` on ``[y_min, y_max]``; gaps where a value is None."""
    left, right, top, bottom = 56, 16, 28, 44
    pw, ph = width - left - right, height - top - bottom
    n = len(chart.points)
    span = (chart.y_max - chart.y_min) or 1.0

    def x(i: int) -> float:
        return left + (pw / 2 if n == 1 else pw * i / (n - 1))

    def y(v: float) -> float:
        v = min(max(v, chart.y_min), chart.y_max)
        return top + ph * (1 - (v - chart.y_min) / span)

    out = [f"<svg xmlns='http://www.w3.org/2000/svg' class='chart chart-line' id='{_e(chart.id)}-svg' "
           f"role='img' aria-labelledby='{_e(chart.id)}-title' viewBox='0 0 {width} {height}' width='{width}' "
           f"height='{height}' {FONT}>",
           f"<title id='{_e(chart.id)}-title'>{_e(chart.title)}</title>",
           f"<rect x='0' y='0' width='{width}' height='{height}' fill='#ffffff'/>"]
    for k in range(5):  # grid and y labels
        v = chart.y_min + span * k / 4
        gy = y(v)
        out.append(f"<line x1='{left}' y1='{gy:.1f}' x2='{left + pw}' y2='{gy:.1f}' stroke='#e5e7eb'/>")
        out.append(f"<text x='{left - 6}' y='{gy + 4:.1f}' text-anchor='end' fill='#374151'>{_e(show(v, '.2f'))}</text>")
    out.append(f"<line x1='{left}' y1='{top}' x2='{left}' y2='{top + ph}' stroke='#9ca3af'/>")
    out.append(f"<line x1='{left}' y1='{top + ph}' x2='{left + pw}' y2='{top + ph}' stroke='#9ca3af'/>")
    out.append(f"<text x='{left + pw / 2:.1f}' y='{height - 6}' text-anchor='middle' fill='#374151'>"
               f"{_e(chart.x_label)}</text>")
    out.append(f"<text x='12' y='{top + ph / 2:.1f}' text-anchor='middle' fill='#374151' "
               f"transform='rotate(-90 12 {top + ph / 2:.1f})'>{_e(chart.y_label)}</text>")
    step = max(1, -(-n // 24))  # at most ~24 x labels
    for i, p in enumerate(chart.points):
        if i % step == 0 or i == n - 1:
            out.append(f"<text x='{x(i):.1f}' y='{top + ph + 16}' text-anchor='middle' fill='#374151'>"
                       f"{_e(_short(p.x, 8))}</text>")
    segment: list[str] = []
    segments = []
    for i, p in enumerate(chart.points):
        if p.y is None:
            if segment:
                segments.append(segment)
            segment = []
        else:
            segment.append(f"{x(i):.1f},{y(p.y):.1f}")
    if segment:
        segments.append(segment)
    for seg in segments:
        if len(seg) > 1:
            out.append(f"<polyline class='series' points='{' '.join(seg)}' fill='none' stroke='#1f2937' "
                       f"stroke-width='2'/>")
    colours = _category_colours([p.category for p in chart.points])
    for i, p in enumerate(chart.points):
        if p.y is None:
            continue
        out.append(f"<circle class='point' cx='{x(i):.1f}' cy='{y(p.y):.1f}' r='5' fill='{colours[p.category]}' "
                   f"stroke='#ffffff' stroke-width='1.5'><title>{_e(p.tip or show(p.y))}</title></circle>")
    legend, _ = _legend(list(colours.items()), left + 8, 4, width - right, "circle")
    out += legend
    out.append("</svg>")
    return "".join(out)


def bars_svg(chart: BarChart, width: int = 720) -> str:
    """Horizontal bars: a row per group, a bar per series on ``[0, v_max]``; a legend when there
    are several series; a value of None is drawn as ``–``."""
    label_w, value_w, bar_h, gap, group_gap, top = 230, 56, 16, 3, 12, 8
    series = len(chart.series)
    legend, legend_h = ([], 0)
    if series > 1:
        legend, legend_h = _legend([(name, PALETTE[s % len(PALETTE)]) for s, name in enumerate(chart.series)],
                                   label_w, top, width - 8, "square")
        legend_h += 4
    pw = width - label_w - value_w - 8
    known = [v for row in chart.values for v in row if v is not None]
    v_max = chart.v_max if chart.v_max is not None else (max(known) if known else 1.0)
    v_max = v_max if v_max and v_max > 0 else 1.0
    group_h = series * bar_h + (series - 1) * gap
    height = top + legend_h + len(chart.groups) * (group_h + group_gap) + 20
    out = [f"<svg xmlns='http://www.w3.org/2000/svg' class='chart chart-bars' id='{_e(chart.id)}-svg' "
           f"role='img' aria-labelledby='{_e(chart.id)}-title' viewBox='0 0 {width} {height}' width='{width}' "
           f"height='{height}' {FONT}>",
           f"<title id='{_e(chart.id)}-title'>{_e(chart.title)}</title>",
           f"<rect x='0' y='0' width='{width}' height='{height}' fill='#ffffff'/>"]
    out += legend
    y0 = top + legend_h
    base = label_w
    for g, label in enumerate(chart.groups):
        gy = y0 + g * (group_h + group_gap)
        text = _short(label, 34)
        out.append(f"<text x='{label_w - 8}' y='{gy + group_h / 2 + 4:.1f}' text-anchor='end' fill='#111827'"
                   f"{fit_attrs(text, label_w - 8 - LABEL_MARGIN)}><title>{_e(label)}</title>{_e(text)}</text>")
        for s in range(series):
            v = chart.values[g][s] if s < len(chart.values[g]) else None
            by = gy + s * (bar_h + gap)
            colour = PALETTE[s % len(PALETTE)]
            tip = f"{label} · {chart.series[s]}: {show(v, chart.fmt)}"
            if g < len(chart.notes) and chart.notes[g]:
                tip += f" ({chart.notes[g]})"
            out.append(f"<rect x='{base}' y='{by}' width='{pw}' height='{bar_h}' fill='#f3f4f6'/>")
            if v is not None:  # a zero (or near-zero) value gets a 2-pixel mark: a bar, not a gap
                w = max(2.0, max(0.0, min(v, v_max)) / v_max * pw)
                out.append(f"<rect class='bar' x='{base}' y='{by}' width='{w:.1f}' height='{bar_h}' fill='{colour}'>"
                           f"<title>{_e(tip)}</title></rect>")
            out.append(f"<text x='{base + pw + 6}' y='{by + bar_h - 4}' fill='#111827'>{_e(show(v, chart.fmt))}</text>")
    axis_y = y0 + len(chart.groups) * (group_h + group_gap)
    out.append(f"<line x1='{base}' y1='{axis_y}' x2='{base + pw}' y2='{axis_y}' stroke='#9ca3af'/>")
    for k in range(5):
        tx = base + pw * k / 4
        out.append(f"<text x='{tx:.1f}' y='{axis_y + 14}' text-anchor='middle' fill='#6b7280'>"
                   f"{_e(show(v_max * k / 4, chart.fmt))}</text>")
    out.append("</svg>")
    return "".join(out)
