"""Session reports (Markdown, JSON, CSV, HTML), built from the store; see :mod:`engine.report.export`."""

from engine.report.export import (
    FORMATS,
    REPORT_VERSION,
    export_session,
    session_report,
    to_csv,
    to_html,
    to_markdown,
)

__all__ = ["FORMATS", "REPORT_VERSION", "export_session", "session_report", "to_csv", "to_html", "to_markdown"]
