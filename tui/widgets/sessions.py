"""The session table: one row per session, newest first, read from the store a page at a time.

The store filters, counts and pages (``Engine.list_sessions``); the table holds the pages loaded so
far, fetches the next one when the cursor nears the end, and changes single rows when the events
say a session changed (:meth:`SessionsTable.apply_changes`), so 10,000 sessions cost one page.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable
from textual.widgets.data_table import ColumnKey, RowKey

from tui.bridge import db_work
from tui.filters import compile_filter
from tui.widgets.header import STATUS_STYLES, short, status_label

COLUMNS = [("id", 5), ("target", 28), ("benchmark / item", 22), ("protocol", 9), ("status", 12),
           ("turns", 5), ("score", 6), ("date", 16)]
SHORT_LABELS = {"benchmark / item": "bench/item"}
"""Column labels for a narrow table."""
PAGE = 50
"""Rows fetched per page."""
AHEAD = 20
"""The next page is fetched when the cursor comes this close to the last loaded row."""

Loader = Callable[[Any, str, int, int], tuple[list[dict[str, Any]], int]]
"""``loader(engine, query, offset, limit) -> (rows, total)``: one page from the store (in a worker thread)."""


def list_page(engine: Any, query: str, offset: int, limit: int) -> tuple[list[dict[str, Any]], int]:
    """One page of every session (Home), with the filtered total."""
    return engine.list_sessions(limit=limit, offset=offset, query=query), engine.count_sessions(query)


def fit_columns(width: int) -> list[tuple[str, int]]:
    """:data:`COLUMNS` for a table ``width`` cells wide: the target and item columns give up room
    first (down to 12 each), then the date loses its year; the score is never cut."""
    widths = dict(COLUMNS)
    spare = width - (sum(widths.values()) + 2 * len(widths) + 4)  # cell padding, border, scrollbar
    if spare < 0:
        for name in ("target", "benchmark / item"):
            give = min(-spare, widths[name] - 12)
            widths[name] -= give
            spare += give
    if spare < 0:
        widths["date"] = 11
    return [(name, widths[name]) for name, _ in COLUMNS]


def short_target(spec: str, width: int) -> str:
    """A target as a narrow column shows it: whole when it fits, else the part that tells targets
    apart (``python:module:Class`` -> ``…:Class``, ``openai:MODEL@URL`` -> ``MODEL@…``); the row's
    detail line under the table has it all."""
    if len(spec) <= width:
        return spec
    if spec.startswith("python:"):
        return "…:" + spec.rsplit(":", 1)[-1]
    if spec.startswith("openai:"):
        return spec[len("openai:"):].split("@", 1)[0] + ("@…" if "@" in spec else "")
    return spec


def detail_line(r: dict[str, Any] | None) -> str:
    """Every value of a session row in full (what the narrow columns cut), for the line under the table."""
    if r is None:
        return ""
    item = f"{r.get('benchmark') or '?'}/{r.get('item') or '?'}" + (f" {r['topic']}" if r.get("topic") else "")
    score = "–" if r.get("score") is None else f"{r['score']:.1f}"
    date = (r.get("created_at") or "")[:16].replace("T", " ")
    return (f"session {r['id']} · {r['target']} · {item} · {r['protocol']} · {status_label(r['status'])} · "
            f"{r['turns']} turn(s) · Score {score} · {date}")


def cells(r: dict[str, Any], widths: dict[str, int] | None = None) -> list[Any]:
    """A session row's cells, in :data:`COLUMNS` order (cut to ``widths``, default :data:`COLUMNS`)."""
    w = widths or dict(COLUMNS)
    item = f"{r.get('benchmark') or '?'}/{r.get('item') or '?'}"
    if r.get("topic"):
        item += f" {r['topic']}"
    score = "" if r.get("score") is None else f"{r['score']:.1f}"
    date = (r.get("created_at") or "")[:16].replace("T", " ")
    return [str(r["id"]), short(short_target(r["target"], w["target"]), w["target"]),
            short(item, w["benchmark / item"]), r["protocol"],
            Text(status_label(r["status"]), style=STATUS_STYLES.get(r["status"], "")), str(r["turns"]), score,
            date if w["date"] >= 16 else date[5:]]


def _guarded(engine: Any, loader: Loader, *args: Any) -> Any:
    """``loader(engine, *args)``, or the exception it raised (delivered to the table, which says it)."""
    try:
        return loader(engine, *args)
    except Exception as exc:  # noqa: BLE001 - shown in the panel's subtitle
        return exc


class SessionsTable(DataTable):
    """Sessions newest first, paged from the store.

    ``sessions`` holds the loaded rows (a prefix of the filtered list), ``shown_ids`` their ids in
    table order, ``total`` the filtered count in the store.
    """

    BINDINGS = [Binding("home", "scroll_top", "First", show=False),
                Binding("end", "scroll_bottom", "Last loaded", show=False)]

    def __init__(self, *, id: str | None = None, loader: Loader = list_page):
        super().__init__(id=id, cursor_type="row", zebra_stripes=True)
        self.loader = loader
        self.sessions: list[dict[str, Any]] = []
        self.shown_ids: list[int] = []
        self.by_id: dict[int, dict[str, Any]] = {}
        self.total = 0
        self.query_text = ""
        self.generation = 0  # bumped by every reload; pages of an older one are dropped
        self.loading = False
        self.loaded_once = False
        self.error = ""  # why the last fetch failed ("" when it did not)
        self.widths: dict[str, int] = dict(COLUMNS)

    def on_mount(self) -> None:
        self.widths = dict(COLUMNS)
        for name, width in COLUMNS:
            self.add_column(name, key=name, width=width)

    def on_resize(self) -> None:
        """Fit the columns to the width there is (``fit_columns``): the widths change in place and
        only the cells that are cut differently are written again (rows, cursor and paging stay)."""
        widths = dict(fit_columns(self.size.width))
        if widths == self.widths:
            return
        changed = [name for name in widths if widths[name] != self.widths[name]]
        self.widths = widths
        for key, column in self.columns.items():
            if key.value in changed:
                column.width = widths[key.value]
                # "benchmark / item" in 14 cells: a shorter label (the full one when there is room)
                column.label = Text(SHORT_LABELS.get(key.value, key.value) if len(key.value) > column.width
                                    else key.value)
        for r in self.sessions:
            new = dict(zip([name for name, _ in COLUMNS], cells(r, widths), strict=True))
            for name in changed:
                self.update_cell(str(r["id"]), name, new[name])
        self._require_update_dimensions = True
        self.refresh()

    # -- loading --------------------------------------------------------------------------------
    def reload(self) -> None:
        """Fetch the first page again (at least as many rows as are loaded) for the current filter."""
        self.generation += 1
        generation, query = self.generation, self.query_text
        keep = max(PAGE, len(self.sessions))
        self.loading = True
        db_work(self, self.app.engine, _guarded, self.loader, query, 0, keep,
                then=lambda page: self._page(generation, query, 0, page), name="session list")

    def load_more(self) -> None:
        """Fetch the next page, unless every row is loaded or a fetch is under way."""
        if self.loading or len(self.sessions) >= self.total:
            return
        generation, query, offset = self.generation, self.query_text, len(self.sessions)
        self.loading = True
        db_work(self, self.app.engine, _guarded, self.loader, query, offset, PAGE,
                then=lambda page: self._page(generation, query, offset, page), name="session list page")

    def _page(self, generation: int, query: str, offset: int,
              page: tuple[list[dict[str, Any]], int] | Exception) -> None:
        if generation != self.generation or query != self.query_text:
            return
        if isinstance(page, Exception):  # said in the panel, never a spinner that never ends
            self.error = f"{type(page).__name__}: {page}"
            self.loading = False
            self.loaded_once = True
            self.post_message(self.Loaded(self))
            return
        self.error = ""
        rows, total = page
        self.total = total
        if offset == 0:
            self.set_rows(rows, total)
        else:
            known = set(self.by_id)
            self._append([r for r in rows if r["id"] not in known])
        self.loading = False  # only now: adding rows moves the cursor, which may ask for the next page
        self.loaded_once = True
        self.post_message(self.Loaded(self))

    class Loaded(Message):
        """Rows were loaded (a first page, a reload or the next page)."""

        def __init__(self, table: SessionsTable):
            super().__init__()
            self.table = table

    def set_rows(self, rows: list[dict[str, Any]], total: int | None = None) -> None:
        """Show exactly these rows (the cursor stays on its session when it is among them)."""
        keep = self.selected_session["id"] if self.selected_session else None
        self.clear()
        self.sessions, self.shown_ids, self.by_id = [], [], {}
        self.total = len(rows) if total is None else total
        self._append(rows)
        if keep in self.by_id:
            self.move_cursor(row=self.shown_ids.index(keep), animate=False)

    def _append(self, rows: list[dict[str, Any]]) -> None:
        for r in rows:
            self.sessions.append(r)
            self.shown_ids.append(r["id"])
            self.by_id[r["id"]] = r
            self.add_row(*cells(r, self.widths), key=str(r["id"]))

    def set_filter(self, text: str) -> None:
        """Apply a filter string (see ``tui.filters``); raises ``FilterError`` on a bad term."""
        compile_filter(text)
        self.query_text = text
        self.reload()

    # -- live changes -----------------------------------------------------------------------------
    def apply_changes(self, query: str, rows: list[dict[str, Any]], gone: list[int], total: int | None) -> None:
        """Change only the rows that changed: ``rows`` (matching ``query``) are updated in place or
        added in id order; ``gone`` (no longer matching) are removed; ``total`` replaces the count."""
        if query != self.query_text:
            return  # computed for another filter; the reload under way covers it
        keep = self.selected_session["id"] if self.selected_session else None
        added = False
        changed: dict[str, dict[str, Any]] = {}
        for r in rows:
            old = self.by_id.get(r["id"])
            if old is not None:
                new_cells = cells(r, self.widths)
                for (name, _), before, after in zip(COLUMNS, cells(old, self.widths), new_cells, strict=True):
                    if str(before) != str(after):
                        changed.setdefault(str(r["id"]), {})[name] = after
                self.by_id[r["id"]] = r
                self.sessions[self.shown_ids.index(r["id"])] = r
            elif not self.shown_ids or r["id"] > self.shown_ids[-1] or len(self.sessions) >= self.total:
                self.add_row(*cells(r, self.widths), key=str(r["id"]))
                self.by_id[r["id"]] = r
                added = True
        self.update_rows(changed)
        for sid in gone:
            if sid in self.by_id:
                self.remove_row(str(sid))
                del self.by_id[sid]
                added = True
        if added:
            self.sort("id", key=lambda v: int(str(v)), reverse=True)
            self.shown_ids = [int(str(row.key.value)) for row in self.ordered_rows]
            self.sessions = [self.by_id[sid] for sid in self.shown_ids]
            if keep in self.by_id:
                self.move_cursor(row=self.shown_ids.index(keep), animate=False)
        if total is not None:
            self.total = total

    _CACHES = ("_cell_render_cache", "_row_render_cache", "_row_renderable_cache", "_line_cache")

    def update_rows(self, changed: dict[str, dict[str, Any]]) -> None:
        """Set cells of some rows (row key -> column key -> value) and repaint only those rows.

        ``DataTable.update_cell`` forgets every cached render of the table and repaints all of it
        (~50 ms of CPU for a screen of rows), and a run in progress changes a row every few tenths of
        a second: a key pressed meanwhile waited for it. Here only the changed rows' cached renders
        are dropped (the cell, row and row-renderable caches; the per-line cache is rebuilt from
        the row cache) and only their lines are repainted. A Textual without those caches gets
        ``update_cell``.
        """
        if not changed:
            return
        caches = [getattr(self, name, None) for name in self._CACHES]
        if not isinstance(getattr(self, "_data", None), dict) or not all(
                hasattr(c, "keys") and hasattr(c, "discard") and hasattr(c, "clear") for c in caches):
            for key, columns in changed.items():
                for column, value in columns.items():
                    self.update_cell(key, column, value)
            return
        cell_cache, row_cache, renderable_cache, line_cache = caches
        keys = {RowKey(key) for key in changed}
        indices = {self.get_row_index(key) for key in keys}
        for key, columns in changed.items():
            row = self._data[RowKey(key)]
            for column, value in columns.items():
                row[ColumnKey(column)] = value
        for cache, forget in ((cell_cache, lambda k: k[0] in keys), (row_cache, lambda k: k[0] in keys),
                              (renderable_cache, lambda k: k[1] in indices)):
            for k in [k for k in cache.keys() if forget(k)]:
                cache.discard(k)
        line_cache.clear()
        for index in indices:
            self.refresh_row(index)

    # -- selection ----------------------------------------------------------------------------------
    @property
    def selected_session(self) -> dict[str, Any] | None:
        """The session under the cursor, or None."""
        if not self.shown_ids or self.cursor_row is None or self.cursor_row >= len(self.shown_ids):
            return None
        return self.by_id.get(self.shown_ids[self.cursor_row])

    def watch_cursor_coordinate(self, old: Any, new: Any) -> None:
        super().watch_cursor_coordinate(old, new)
        if self.loaded_once and new.row >= len(self.shown_ids) - AHEAD:
            self.load_more()
