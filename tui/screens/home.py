"""Home: every session in a filterable table, the benchmarks, and "new interview".

The list follows the store: a session started here or by ``viva run`` in another terminal shows
up, and its status changes, without a refresh. The store filters and pages the list; the events say
which sessions changed, and only those rows are read and redrawn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Input, Static

from tui.bridge import follow_sessions
from tui.filters import FilterError
from tui.messages import BenchmarksChanged, SessionRowsChanged
from tui.widgets.keybar import KeyBar
from tui.widgets.sessions import SessionsTable

if TYPE_CHECKING:
    from tui.app import VivaApp


class HomeScreen(Screen):
    """The Home screen (mode ``home``)."""

    AUTO_FOCUS = "#sessions"  # the keys (n, w, v, ?) work at once; / goes to the filter

    BINDINGS = [
        Binding("n", "new_interview", "New interview", id="new_interview",
                tooltip="Pick a benchmark item, target, kernel, protocol, policy and turns"),
        Binding("w", "watch", "Watch", id="watch_session", tooltip="Open the selected session on the live screen"),
        Binding("v", "review", "Review", id="review_session", tooltip="Replay the selected session"),
        Binding("c", "compare", "Compare", id="compare_sessions",
                tooltip="Compare the selected session with another of the same item"),
        Binding("l", "leaderboard", "Leaderboard", id="leaderboard"),
        Binding("slash", "focus_filter", "Filter", id="focus_filter"),
    ]

    def __init__(self) -> None:
        super().__init__(id="home")
        self.benchmarks: list[Any] = []

    @property
    def viva(self) -> VivaApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static("", id="home-title")
        yield Input(placeholder="filter: words, target:…, bench:…, status:…, policy:…, date:2025-11, score>50",
                    id="filter")
        yield Static("", id="filter-error")
        sessions = SessionsTable(id="sessions")
        sessions.add_class("region")
        sessions.border_title = "Sessions"
        yield sessions
        yield Static("", id="session-detail")  # the highlighted row in full: the columns cut in a narrow terminal
        benchmarks: DataTable[Any] = DataTable(id="benchmarks", cursor_type="row", zebra_stripes=True)
        benchmarks.add_class("region")
        benchmarks.border_title = "Benchmarks"
        for name, width in (("name", 24), ("source", 10), ("items", 6), ("protocols", 30), ("knowledge base", 20)):
            benchmarks.add_column(name, key=name, width=width)
        yield benchmarks
        yield KeyBar()

    def on_mount(self) -> None:
        title = Text("viva", style="bold")
        title.append(" · oral examinations of language models", style="dim")
        title.append(f" · home {self.viva.engine.home}", style="dim")
        self.query_one("#home-title", Static).update(title)
        table = self.query_one(SessionsTable)
        table.focus()
        follow_sessions(self, self.viva.engine, lambda: table.query_text, lambda: list(table.shown_ids))
        table.reload()

    # -- data ---------------------------------------------------------------------------------
    def on_sessions_table_loaded(self, message: SessionsTable.Loaded) -> None:
        self._count()
        self._detail()
        self.refresh_bindings()

    def on_session_rows_changed(self, message: SessionRowsChanged) -> None:
        table = self.query_one(SessionsTable)
        if message.reset:
            table.reload()
            return
        table.apply_changes(message.query, message.rows, message.gone, message.total)
        self._count()
        self.refresh_bindings()

    def _count(self) -> None:
        table = self.query_one(SessionsTable)
        loaded = len(table.shown_ids)
        if table.error:
            table.border_subtitle = f"could not list the sessions: {table.error}"
            return
        table.border_subtitle = (f"{table.total} session(s)" if loaded >= table.total
                                 else f"{loaded} of {table.total} session(s) loaded")

    def on_benchmarks_changed(self, message: BenchmarksChanged) -> None:
        self.benchmarks = message.benchmarks
        table = self.query_one("#benchmarks", DataTable)
        keep = table.cursor_row
        table.clear()
        for b in message.benchmarks:
            protocols = ", ".join(f"{k} {v}" for k, v in sorted(b.protocols.items()))
            table.add_row(b.name, b.source, str(b.n_items), protocols, b.kb or "", key=b.name)
        if message.benchmarks:
            table.move_cursor(row=min(keep or 0, len(message.benchmarks) - 1), animate=False)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "filter":
            return
        try:
            self.query_one(SessionsTable).set_filter(event.value)
            event.input.remove_class("-invalid")
            event.input.tooltip = None
            self.query_one("#filter-error", Static).update("")
            self.query_one("#filter-error", Static).display = False
        except FilterError as exc:
            event.input.add_class("-invalid")
            event.input.tooltip = str(exc)
            error = self.query_one("#filter-error", Static)
            table = self.query_one(SessionsTable)
            shown = f"the list shows the last filter that applied, {table.query_text!r}" if table.query_text \
                else "the list shows every session"
            error.update(Text(f"filter not applied: {exc} ({shown})", style="bold red"))
            error.display = True

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "filter":
            self.query_one(SessionsTable).focus()

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.data_table.id == "sessions":
            self._detail()

    def _detail(self) -> None:
        from tui.widgets.sessions import detail_line

        row = self.query_one(SessionsTable).selected_session
        self.query_one("#session-detail", Static).update(Text(detail_line(row), style="dim", overflow="fold"))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.data_table.id == "sessions":
            self.action_open()
        elif event.data_table.id == "benchmarks":
            self.action_new_interview()

    # -- actions ------------------------------------------------------------------------------
    @property
    def selected(self) -> dict[str, Any] | None:
        return self.query_one(SessionsTable).selected_session

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("watch", "review", "compare"):
            return True if self.selected is not None else None
        return True

    def action_open(self) -> None:
        row = self.selected
        if row is None:
            return
        if row["status"] in ("running", "paused", "created"):
            self.viva.open_live(session_id=row["id"])
        else:
            self.viva.open_review(row["id"])

    def action_watch(self) -> None:
        if self.selected is not None:
            self.viva.open_live(session_id=self.selected["id"])

    def action_review(self) -> None:
        if self.selected is not None:
            self.viva.open_review(self.selected["id"])

    def action_compare(self) -> None:
        from tui.screens.review import pick_comparison

        if self.selected is not None:
            pick_comparison(self, self.selected["id"])

    def action_leaderboard(self) -> None:
        from tui.screens.leaderboard import LeaderboardScreen

        # scoped to Home's filter when one applies, else the latest run
        table = self.query_one(SessionsTable)
        invalid = self.query_one("#filter", Input).has_class("-invalid")
        self.app.push_screen(LeaderboardScreen("" if invalid else table.query_text.strip()))

    def action_focus_filter(self) -> None:
        self.query_one("#filter", Input).focus()

    def action_new_interview(self) -> None:
        from tui.screens.new_interview import NewInterviewDialog

        bench_table = self.query_one("#benchmarks", DataTable)
        selected = None
        if self.benchmarks and bench_table.cursor_row is not None and bench_table.cursor_row < len(self.benchmarks):
            selected = self.benchmarks[bench_table.cursor_row].name

        def planned(run_id: int | None) -> None:
            if run_id is not None:
                self.viva.start_run(run_id)
                self.viva.open_live(run_id=run_id)

        self.app.push_screen(NewInterviewDialog(selected), planned)
