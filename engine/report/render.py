"""Render a :class:`~engine.report.model.Report` in one of :data:`FORMATS`, and the two exports.

Every rendering passes :func:`engine.redact.redact` (the exports' choke point for secrets).

Every renderer ends its text with exactly one line break (CSV: ``\\r\\n`` as RFC 4180 asks), so
writing it to a file or a terminal never adds a blank row; write CSV with ``newline=""``.
"""

from __future__ import annotations

import json
from typing import Any

from engine.report.model import Report
from engine.store import Store

FORMATS = ("md", "json", "csv", "html")
"""Report formats: Markdown, JSON, CSV, self-contained HTML."""

EXTENSIONS = {"md": ".md", "json": ".json", "csv": ".csv", "html": ".html"}
"""File name extension per format."""


def show(value: Any, fmt: str = "") -> str:
    """A value as report text: ``–`` for None, yes/no for a bool, numbers with ``fmt`` (floats
    default to 3 significant decimals trimmed), anything else as ``str``."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float)):
        if fmt:
            return format(value, fmt)
        if isinstance(value, float):
            return f"{value:.3f}".rstrip("0").rstrip(".") if value == value else "nan"
        return str(value)
    return str(value)


def render(report: Report, fmt: str) -> str:
    """The report as text in ``fmt`` (one of :data:`FORMATS`), redacted."""
    from engine.redact import redact

    return redact(_render(report, fmt))


def _render(report: Report, fmt: str) -> str:
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if fmt == "json":
        return json.dumps(report.document(), ensure_ascii=False, indent=2) + "\n"
    if fmt == "csv":
        from engine.report.render_csv import render_csv

        return render_csv(report)
    if fmt == "html":
        from engine.report.render_html import render_html

        return render_html(report)
    from engine.report.render_md import render_markdown

    return render_markdown(report)


def export_run(store: Store, run_id: int, fmt: str = "md") -> str:
    """A run's report (leaderboard across targets) in ``md``, ``json``, ``csv`` or ``html``."""
    from engine.report.model import build_run_report

    return render(build_run_report(store, run_id), fmt)


def export_session_report(store: Store, session_id: int, fmt: str = "md") -> str:
    """A session's report in ``md``, ``json``, ``csv`` or ``html``."""
    from engine.report.model import build_session_report

    return render(build_session_report(store, session_id), fmt)
