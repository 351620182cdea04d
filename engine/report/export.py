"""Session and run exports: the entry points over the report model.

The report itself is built once (:mod:`engine.report.model`) and rendered per format
(:mod:`engine.report.render`): Markdown, JSON (the versioned ``viva-session`` and ``viva-run``
documents), CSV and a self-contained HTML page with inline SVG charts. Candidate text is escaped
in every format (:mod:`engine.report.escape`). API keys are never in the store, and every export
passes :func:`engine.redact.redact` as well (in :func:`engine.report.render.render`: a database
written by an older viva, a key-shaped token).
"""

from __future__ import annotations

from typing import Any

from engine.report.escape import csv_text_cell, escape_markdown
from engine.report.model import SESSION_VERSION, session_document
from engine.report.render import FORMATS, export_run, export_session_report
from engine.store import Store

REPORT_VERSION = SESSION_VERSION
"""The version of the ``viva-session`` JSON document."""


def session_report(store: Store, session_id: int) -> dict[str, Any]:
    """The session as its ``viva-session`` JSON document (see :mod:`engine.report.model`)."""
    return session_document(store, session_id)


def export_session(store: Store, session_id: int, fmt: str = "md") -> str:
    """The session report in ``md``, ``json``, ``csv`` or ``html``."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; choose one of {', '.join(FORMATS)}")
    return export_session_report(store, session_id, fmt)


__all__ = ["FORMATS", "REPORT_VERSION", "csv_text_cell", "escape_markdown", "export_run", "export_session",
           "session_report"]
