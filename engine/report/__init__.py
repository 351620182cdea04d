"""Reports of sessions and runs: one model (:mod:`engine.report.model`) rendered to Markdown, JSON,
CSV and self-contained HTML (:mod:`engine.report.render`); see :mod:`engine.report.export`."""

from engine.report.export import FORMATS, REPORT_VERSION, export_run, export_session, session_report
from engine.report.model import Report, build_run_report, build_session_report
from engine.report.render import EXTENSIONS, render

__all__ = ["EXTENSIONS", "FORMATS", "REPORT_VERSION", "Report", "build_run_report", "build_session_report",
           "export_run", "export_session", "render", "session_report"]
