"""The rubric checklist: every criterion with its kind and weight, its verdict for the selected
turn and overall (the latest judged turn), and the details of the highlighted one."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from tui.messages import CriterionSelected
from tui.state import SessionState, Turn, Verdict
from tui.widgets.header import short

NARROW = 50
"""The checklist's width under which verdicts are glyphs."""


def verdict_text(turn: Turn | None, cid: str, kind: str, words: bool = True) -> Text:
    """``✔ met``, ``✘ not met``, ``· pending`` or ``✔ overridden``; a deduction that applies is red."""
    verdict = None if turn is None else turn.verdicts.get(cid)
    if turn is None or not turn.judged or verdict is None:
        return Text("· pending" if words else "·", style="dim")
    good = verdict.met != (kind == "deduction")
    glyph = "✔" if verdict.met else "✘"
    if verdict.overridden:
        label = f"{glyph} overridden" if words else f"{glyph}*"
    else:
        label = f"{glyph} {'met' if verdict.met else 'not met'}" if words else glyph
    return Text(label, style="green" if good else "red")


def points_text(kind: str, weight: float) -> Text:
    """A criterion's kind and weight in one cell: ``+2`` a point, ``−1`` a deduction, ``+1⚙`` code."""
    if kind == "deduction":
        return Text(f"−{weight:g}", style="red")
    return Text(f"+{weight:g}" + ("⚙" if kind == "code" else ""))


def describe_verdict(verdict: Verdict | None) -> str:
    if verdict is None:
        return "no verdict yet"
    mark = "met" if verdict.met else "not met"
    text = f"{mark} ({verdict.source})"
    if verdict.rationale:
        text += f": {verdict.rationale}"
    return text


def _verdict_key(turn: Turn | None) -> tuple[Any, ...] | None:
    if turn is None:
        return None
    return (turn.idx, turn.judged, tuple((v.cid, v.met, v.source, v.rationale) for v in turn.verdicts.values()))


class RubricChecklist(Vertical):
    """Criteria of the rubric version the selected turn was scored with."""

    ALLOW_MAXIMIZE = True

    def __init__(self, *, id: str | None = None):
        super().__init__(id=id)
        self.state: SessionState | None = None
        self.turn_idx: int | None = None
        self.cids: list[str] = []
        self._shown: tuple[Any, ...] | None = None
        self._layout: tuple[bool, int] | None = None

    def compose(self) -> ComposeResult:
        yield DataTable(id="checklist-table", cursor_type="row", zebra_stripes=True)
        yield Static("", id="criterion-detail")

    @property
    def narrow(self) -> bool:
        """In a terminal under 120 columns, or a checklist under :data:`NARROW` columns, the verdict of
        the turn is a glyph (the criterion gets the room)."""
        return 0 < self.app.size.width < 120 or 0 < self.size.width < NARROW

    def _columns(self) -> None:
        """(Re)build the columns for the width there is: the criterion column takes what is left, so
        its text is cut at the panel's edge, never at ten characters."""
        narrow = self.narrow
        state_width = 4 if narrow else 12
        fixed = 3 + state_width + 3 + 4 + 2 * 5  # the other columns and the cells' padding
        text_width = max(12, (self.size.width or 80) - fixed)
        layout = (narrow, text_width)
        if layout == self._layout:
            return
        self._layout = layout
        table = self.table
        table.clear(columns=True)
        table.add_column("id", key="cid", width=3)
        table.add_column("turn" if narrow else "this turn", key="state", width=state_width)
        table.add_column("all", key="overall", width=3)
        table.add_column("pts", key="points", width=4)
        table.add_column("criterion", key="text", width=text_width)
        self._shown = None

    def on_mount(self) -> None:
        self._columns()

    def on_resize(self) -> None:
        self._columns()
        if self.state is not None:
            self.show(self.state, self.turn_idx)

    @property
    def table(self) -> DataTable[Any]:
        return self.query_one("#checklist-table", DataTable)

    @property
    def selected_cid(self) -> str | None:
        table = self.table
        if not self.cids or table.cursor_row is None or table.cursor_row >= len(self.cids):
            return None
        return self.cids[table.cursor_row]

    def show(self, state: SessionState, turn_idx: int | None) -> None:
        """Fill the table for ``turn_idx`` (rebuilt only when something it shows changed)."""
        self.state, self.turn_idx = state, turn_idx
        self._columns()
        turn = state.turn(turn_idx)
        last = state.last_judged()
        version = turn.rubric_version_id if turn is not None and turn.judged else state.rubric_version_id
        criteria = state.criteria(version)
        key = (turn_idx, version, _verdict_key(turn), _verdict_key(last), id(criteria), len(criteria),
               state.version_label(version))
        if key == self._shown:
            return
        self._shown = key
        table = self.table
        cursor = table.cursor_row
        table.clear()
        self.cids = [c["cid"] for c in criteria]
        for c in criteria:
            table.add_row(
                c["cid"],
                verdict_text(turn, c["cid"], c["kind"], words=not self.narrow),
                verdict_text(last, c["cid"], c["kind"], words=False),
                points_text(c["kind"], c["weight"]),
                short(c["text"], self._layout[1]) if self._layout else c["text"],  # whole in the detail below
                key=c["cid"],
            )
        if self.cids:
            table.move_cursor(row=min(cursor or 0, len(self.cids) - 1), animate=False)
        self.border_subtitle = f"rubric {state.version_label(version)}"
        self._detail()

    def _detail(self) -> None:
        detail = self.query_one("#criterion-detail", Static)
        cid = self.selected_cid
        if self.state is None or cid is None:
            detail.update("")
            return
        turn = self.state.turn(self.turn_idx)
        version = turn.rubric_version_id if turn is not None and turn.judged else self.state.rubric_version_id
        crit = next((c for c in self.state.criteria(version) if c["cid"] == cid), None)
        if crit is None:
            detail.update("")
            return
        verdict = None if turn is None else turn.verdicts.get(cid)
        lines = Text()
        lines.append(f"{cid} ", style="bold")
        lines.append(f"[{crit['kind']}, weight {crit['weight']:g}] ", style="dim")
        lines.append(crit["text"])
        if turn is not None and turn.judged:
            lines.append(f"\nturn {turn.idx}: {describe_verdict(verdict)}")
            if verdict is not None and verdict.original is not None:
                lines.append(f"\njudge's original: {describe_verdict(verdict.original)}", style="dim")
        sources = crit.get("source_chunk_ids") or []
        if sources:
            lines.append(f"\nsource chunks {', '.join(f'#{s}' for s in sources)} · press s to read",
                         style="dim")
        detail.update(lines)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        self._detail()
        self.post_message(CriterionSelected(self.selected_cid))

    def source_ids(self) -> list[int]:
        """Source chunk ids of the highlighted criterion."""
        if self.state is None or self.selected_cid is None:
            return []
        turn = self.state.turn(self.turn_idx)
        version = turn.rubric_version_id if turn is not None and turn.judged else self.state.rubric_version_id
        crit = next((c for c in self.state.criteria(version) if c["cid"] == self.selected_cid), None)
        return list((crit or {}).get("source_chunk_ids") or [])
