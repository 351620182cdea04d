"""CSV: the report's main table (a session's turns, a run's leaderboard), one header row, no
trailing blank row; text cells that a spreadsheet would run as formulas are quoted as text."""

from __future__ import annotations

import csv
import io

from engine.report.escape import csv_text_cell
from engine.report.model import Report


def render_csv(report: Report) -> str:
    """``report.csv`` as RFC 4180 CSV (``\\r\\n`` line ends, the last line ended once)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n")
    writer.writerow([csv_text_cell(c) for c in report.csv.columns])
    for row in report.csv.rows:
        writer.writerow([csv_text_cell(c) for c in row])
    return buf.getvalue()
