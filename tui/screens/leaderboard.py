"""The leaderboard of one scope (the latest run unless a filter is typed: ``run:3``, ``bench:medqa``,
``target:gpt``...): rows per (benchmark, target) with n and bootstrap 95% intervals over items, the
highlighted row's every figure, paired comparisons, the judge–human agreement with κ's n
(engine.metrics.leaderboard) and, when there are rubric sessions, SedarEval's per-category board."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Input, Label, Static

from engine.api import Engine
from tui.board import (
    COLUMNS,
    agreement_line,
    cells,
    columns_for,
    comparison,
    detail,
    fit_columns,
    legend,
    method_line,
)
from tui.bridge import db_work
from tui.widgets.header import short

if TYPE_CHECKING:
    from tui.app import VivaApp

def load_leaderboard(engine: Engine, query: str = "") -> tuple[dict[str, Any] | str, list[dict[str, Any]]]:
    """The scoped board (``query``: a Home filter; empty: the latest run) and the rubric (SedarEval)
    board of the same sessions; the board is the error's text when the scope names nothing."""
    from engine.api import ScopeError

    try:
        board = engine.board(query=query or None)
    except ScopeError as exc:
        return str(exc), []
    return board, engine.rubric_leaderboard(board["sessions"]) if board["sessions"] else []


def rubric_rows(entries: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The rubric board as a table: one column per target (offline estimates labelled), rows for the
    overall figure, the mean of level-1 categories, then every category at every level (indented).
    A cell is ``figure (scored)``, with ``+k cj`` for items the judge could not score."""
    headers = ["category"] + [e["target"] + (" (offline estimate)" if e.get("offline_estimate") else "")
                              for e in entries]

    def cell(score: dict[str, Any] | None) -> str:
        if score is None:
            return ""
        text = f"{_f(score['figure'], 1)} ({score['count']})"
        return text + (f" +{score['cannot_judge']} cj" if score["cannot_judge"] else "")

    rows = [["overall", *[cell(e["overall"]) for e in entries]],
            ["mean of level 1", *[_f(e["macro"], 1) for e in entries]]]
    seen: dict[tuple[str, ...], int] = {}
    per_entry = []
    for e in entries:
        mine = {}
        for c in e["categories"]:
            path = tuple(c["category"])
            seen.setdefault(path, len(seen))
            mine[path] = c
        per_entry.append(mine)
    for path in sorted(seen, key=lambda p: tuple(seen[p[:k]] for k in range(1, len(p) + 1))):
        rows.append(["  " * (len(path) - 1) + path[-1], *[cell(m.get(path)) for m in per_entry]])
    return headers, rows


def _f(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


class LeaderboardScreen(ModalScreen):
    """Targets ranked by Score per benchmark, over one scope."""

    BINDINGS = [Binding("escape,l", "close", "Close", id="leaderboard_close")]

    def __init__(self, query: str = "") -> None:
        super().__init__()
        self.query_text = query
        self.board: dict[str, Any] | None = None

    @property
    def viva(self) -> VivaApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide", id="leaderboard"):
            yield Label("Leaderboard", id="leaderboard-title", classes="dialog-title")
            yield Input(self.query_text, placeholder="scope: empty = the latest run; run:3, bench:NAME or any "
                        "Home filter; Enter applies", id="scope")
            table: DataTable[Any] = DataTable(id="leaderboard-table", cursor_type="row", zebra_stripes=True)
            for name, _, width in COLUMNS:
                table.add_column(name, key=name, width=width)
            yield table
            with VerticalScroll(id="leaderboard-notes"):
                yield Static("", id="row-detail")
                yield Static("", id="comparisons")
                yield Static("", id="agreement")
                yield Label("Rubric (SedarEval): Σ score × 100 / (count × 5) per category; (n) scored, "
                            "cj = cannot judge", id="rubric-title", classes="dialog-title")
                yield DataTable(id="rubric-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        self.load()

    def load(self) -> None:
        db_work(self, self.viva.engine, load_leaderboard, self.query_text, then=self.loaded, name="leaderboard")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "scope":
            self.query_text = event.value.strip()
            self.load()

    def loaded(self, result: tuple[dict[str, Any] | str, list[dict[str, Any]]]) -> None:
        board, rubric = result
        table = self.query_one("#leaderboard-table", DataTable)
        table.clear()
        title = self.query_one("#leaderboard-title", Label)
        if isinstance(board, str):
            self.board = None
            title.update(Text(f"Leaderboard: {board}", style="bold red"))
            return
        self.board = board
        title.update(f"Leaderboard, {board['scope']['label']}: figures over finished sessions, per benchmark")
        # columns shrink by priority to the screen's width (tui.board.fit_columns); the row's detail has them all
        columns, hidden = fit_columns(columns_for(board), max(40, self.app.size.width - 8))
        if [str(k.value) for k in table.columns] != [name for name, _, _ in columns]:
            table.clear(columns=True)
            for name, _, width in columns:
                table.add_column(name, key=name, width=width)
        for i, r in enumerate(board["rows"]):
            table.add_row(*[short(c, w) for c, (_, _, w) in zip(cells(r, narrow=True, columns=columns), columns,
                                                                 strict=True)], key=str(i))
        if not board["rows"]:
            table.add_row("no sessions in this scope", *[""] * (len(columns) - 1))
        comparisons = Text()
        if hidden:
            comparisons.append(f"hidden at this width: {', '.join(hidden)} (in the row's detail below; a wider "
                               "terminal shows them)\n", style="dim")
        for line in legend(board):
            comparisons.append(line + "\n", style="dim")
        for c in board["comparisons"]:
            comparisons.append("paired: " + comparison(c) + "\n")
        comparisons.append(method_line(board), style="dim")
        self.query_one("#comparisons", Static).update(comparisons)
        self.query_one("#agreement", Static).update(agreement_line(board["agreement"]))
        self._detail(0)
        rubric_table = self.query_one("#rubric-table", DataTable)
        rubric_table.clear(columns=True)
        shown = bool(rubric)
        rubric_table.display = shown
        self.query_one("#rubric-title", Label).display = shown
        if shown:
            headers, body = rubric_rows(rubric)
            for i, name in enumerate(headers):
                rubric_table.add_column(short(name, 34), key=f"col{i}")
            for row in body:
                rubric_table.add_row(*row)
        table.focus()

    def _detail(self, index: int) -> None:
        rows = self.board["rows"] if self.board else []
        text = detail(rows[index]) if 0 <= index < len(rows) else ""
        self.query_one("#row-detail", Static).update(text)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "leaderboard-table":
            self._detail(event.cursor_row)

    def action_close(self) -> None:
        self.dismiss(None)
