"""What the live and review screens share: the three regions (interview, rubric checklist,
metrics), moving between them, resizing and collapsing them, and the interventions that need no
runner (override a verdict, edit the rubric, read a criterion's source)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen

from tui.bridge import db_work
from tui.messages import CriterionSelected, TurnSelected
from tui.state import SessionState
from tui.widgets.checklist import RubricChecklist
from tui.widgets.header import SessionHeader
from tui.widgets.interview import InterviewPane
from tui.widgets.keybar import KeyBar
from tui.widgets.metrics import MetricPanel

if TYPE_CHECKING:
    from tui.app import VivaApp

REGIONS = ("#interview", "#checklist-table", "#metrics")
MIN_WIDTH, MAX_WIDTH, WIDTH_STEP = 25, 80, 5


NARROW_TERMINAL = 120
"""Under this many columns the interview pane starts narrower (:data:`NARROW_INTERVIEW_WIDTH`)."""

SHORT_TERMINAL = 36
"""Under this many rows the criterion's detail gets fewer lines (the checklist more)."""

NARROW_INTERVIEW_WIDTH = 45
"""The interview pane's share (%) in a narrow terminal; ``[`` and ``]`` still resize it."""

class SessionScreen(Screen):
    """Base of the live and review screens (not used on its own)."""

    BINDINGS = [
        Binding("tab", "next_region(1)", "Region", show=False, id="next_region", tooltip="Move to the next region"),
        Binding("shift+tab", "next_region(-1)", "Previous region", show=False, id="prev_region"),
        Binding("o", "override", "Override", id="override",
                tooltip="Override the selected verdict (the judge's original is kept)"),
        Binding("k", "confirm_verdict", "Confirm", id="confirm_verdict",
                tooltip="Confirm the selected verdict as reviewed (counts in judge–human agreement, κ)"),
        Binding("r", "rubric_editor", "Rubric", id="rubric_editor", tooltip="Open the rubric editor"),
        Binding("s", "show_source", "Source", show=False, id="show_source",
                tooltip="Read the knowledge-base chunks the selected criterion cites"),
        Binding("m", "toggle_maximize", "Maximize", show=False, id="maximize",
                tooltip="Maximize the focused region (again to restore)"),
        Binding("left_square_bracket", "resize(-1)", "Narrower", show=False, id="narrow_interview",
                tooltip="Make the interview pane narrower"),
        Binding("right_square_bracket", "resize(1)", "Wider", show=False, id="widen_interview",
                tooltip="Make the interview pane wider"),
        Binding("1", "collapse('interview')", "Interview", show=False, id="toggle_interview",
                tooltip="Collapse or expand the interview pane"),
        Binding("2", "collapse('checklist')", "Checklist", show=False, id="toggle_checklist",
                tooltip="Collapse or expand the rubric checklist"),
        Binding("3", "collapse('metrics')", "Metrics", show=False, id="toggle_metrics",
                tooltip="Collapse or expand the metric panel"),
    ]

    def __init__(self, name: str | None = None, id: str | None = None):
        super().__init__(name=name, id=id)
        self.state: SessionState | None = None
        self.interview_width = 55

    @property
    def viva(self) -> VivaApp:
        return self.app  # type: ignore[return-value]

    # -- layout -------------------------------------------------------------------------------
    def compose_top(self) -> ComposeResult:
        """Widgets above the regions (the header by default)."""
        yield SessionHeader(id="session-header")

    def compose(self) -> ComposeResult:
        yield from self.compose_top()
        with Horizontal(id="regions"):
            pane = InterviewPane(id="interview", classes="region")
            pane.border_title = "Interview"
            yield pane
            with Vertical(id="side"):
                checklist = RubricChecklist(id="checklist")
                checklist.add_class("region")
                checklist.border_title = "Rubric checklist"
                yield checklist
                metrics = MetricPanel(id="metrics")
                metrics.add_class("region")
                metrics.border_title = "Metrics"
                yield metrics
        yield KeyBar()

    def fit(self) -> None:
        """Classes for small terminals (app.tcss): ``-narrow`` under :data:`NARROW_TERMINAL` columns,
        ``-short`` under :data:`SHORT_TERMINAL` rows."""
        self.set_class(0 < self.app.size.width < NARROW_TERMINAL, "-narrow")
        self.set_class(0 < self.app.size.height < SHORT_TERMINAL, "-short")

    def on_resize(self) -> None:
        self.fit()

    def on_mount(self) -> None:
        self.fit()
        if 0 < self.app.size.width < NARROW_TERMINAL:  # the checklist needs the room more than the prose
            self.interview_width = NARROW_INTERVIEW_WIDTH
        self.query_one("#interview").styles.width = f"{self.interview_width}%"
        self.query_one(InterviewPane).focus()

    @property
    def pane(self) -> InterviewPane:
        return self.query_one(InterviewPane)

    @property
    def checklist(self) -> RubricChecklist:
        return self.query_one(RubricChecklist)

    @property
    def metrics_panel(self) -> MetricPanel:
        return self.query_one(MetricPanel)

    @property
    def selected_turn(self) -> int | None:
        return self.pane.selected

    # -- rendering ----------------------------------------------------------------------------
    def header_extra(self) -> str:
        return ""

    def render_state(self, follow: bool = True) -> None:
        """Show ``self.state`` in every region."""
        state = self.state
        self.query_one(SessionHeader).show(state, self.header_extra())
        if state is None:
            return
        self.pane.show(state, follow=follow)
        self.render_selection()
        self.refresh_bindings()

    def render_selection(self) -> None:
        if self.state is None:
            return
        turn = self.selected_turn
        self.checklist.show(self.state, turn)
        self.metrics_panel.show(self.state, turn)

    def on_turn_selected(self, message: TurnSelected) -> None:
        message.stop()
        self.render_selection()
        self.refresh_bindings()

    def on_criterion_selected(self, message: CriterionSelected) -> None:
        message.stop()
        self.refresh_bindings()

    # -- regions ------------------------------------------------------------------------------
    def _regions(self) -> list[Any]:
        out = []
        for selector in REGIONS:
            widget = self.query_one(selector)
            region = widget if selector != "#checklist-table" else self.checklist
            if region.display:
                out.append(widget)
        return out

    def action_next_region(self, step: int) -> None:
        regions = self._regions()
        if not regions:
            return
        focused = self.focused
        index = next((i for i, w in enumerate(regions) if focused is w or (focused and w in focused.ancestors)), -1)
        regions[(index + step) % len(regions)].focus()

    def action_toggle_maximize(self) -> None:
        if self.maximized is not None:
            self.minimize()
        elif self.focused is not None:
            inside = self.checklist in self.focused.ancestors_with_self
            self.maximize(self.checklist if inside else self.focused, container=False)

    def action_resize(self, direction: int) -> None:
        self.interview_width = max(MIN_WIDTH, min(MAX_WIDTH, self.interview_width + direction * WIDTH_STEP))
        self.query_one("#interview").styles.width = f"{self.interview_width}%"

    def action_collapse(self, region: str) -> None:
        """Hide a region (the others take its room) or bring it back; one always stays."""
        widget = self.query_one(f"#{region}")
        others = [w for w in (self.query_one("#interview"), self.checklist, self.metrics_panel) if w is not widget]
        if widget.display and not any(w.display for w in others):
            self.notify("At least one region stays open.", severity="warning")
            return
        widget.display = not widget.display
        side = self.query_one("#side")
        side.display = self.checklist.display or self.metrics_panel.display
        interview = self.query_one("#interview")
        interview.styles.width = f"{self.interview_width}%" if side.display else "1fr"
        if not widget.display and (self.focused is None or not self.focused.display):
            self.action_next_region(1)

    # -- interventions that need no runner ---------------------------------------------------
    def can_edit(self) -> bool:
        """Whether overrides and rubric edits apply to what is on screen (a review in the middle
        of its replay says no: edit the end of the record)."""
        return self.state is not None

    def selected_verdict_target(self) -> tuple[int, str] | None:
        state = self.state
        if state is None:
            return None
        turn = state.turn(self.selected_turn)
        cid = self.checklist.selected_cid
        if turn is None or not turn.judged or cid is None or cid not in turn.verdicts:
            return None
        return turn.idx, cid

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if not self.is_mounted:
            return None
        if action in ("override", "confirm_verdict"):
            return True if self.can_edit() and self.selected_verdict_target() is not None else None
        if action == "rubric_editor":
            return True if self.can_edit() and self.state is not None and self.state.item_id else None
        if action == "show_source":
            return True if self.checklist.source_ids() else None
        return True

    def action_override(self) -> None:
        from tui.screens.dialogs import OverrideDialog

        target = self.selected_verdict_target()
        if target is None or self.state is None:
            return
        turn_idx, cid = target
        turn = self.state.turns[turn_idx]
        crit = next((c for c in self.state.criteria(turn.rubric_version_id) if c["cid"] == cid), {"text": cid})
        sid = self.state.session_id

        def done(result: tuple[bool, str] | None) -> None:
            if result is None:
                return
            met, note = result
            db_work(self, self.viva.engine, lambda e, *a: e.override_verdict(*a), sid, turn_idx, cid, met, note,
                    then=self.after_override, name="override verdict")

        self.app.push_screen(OverrideDialog(turn_idx, cid, crit["text"], turn.verdicts[cid]), done)

    def action_confirm_verdict(self) -> None:
        """Record that the evaluator agrees with the judge on the selected verdict (a human row with
        the judge's value: the score does not change; agreement and κ count it)."""
        target = self.selected_verdict_target()
        if target is None or self.state is None:
            return
        turn_idx, cid = target
        verdict = self.state.turns[turn_idx].verdicts[cid]
        judged = verdict.original if verdict.original is not None else verdict
        sid = self.state.session_id
        db_work(self, self.viva.engine, lambda e, *a: e.override_verdict(*a), sid, turn_idx, cid, judged.met,
                "confirmed by the evaluator", then=self.after_confirm, name="confirm verdict")

    def after_confirm(self, result: dict[str, Any]) -> None:
        """Called when a confirmation is on record."""
        self.notify(f"turn {result['turn']}: {result['cid']} confirmed as {'met' if result['met'] else 'not met'}",
                    title="Verdict confirmed")

    def after_override(self, result: dict[str, Any]) -> None:
        """Called with ``override_verdict``'s result; the live screen sees the event anyway."""
        self.notify(f"turn {result['turn']}: {result['cid']} set to {'met' if result['met'] else 'not met'}; "
                    f"s = {result['score']:.2f}", title="Verdict overridden")

    def action_rubric_editor(self) -> None:
        from tui.screens.editor import RubricEditor

        state = self.state
        if state is None or not state.item_id:
            return
        self.app.push_screen(RubricEditor(state.item_id, state.session_id, self.session_running()),
                             self.after_rubric_saved)

    def session_running(self) -> bool:
        """True when a runner will apply control events to this session."""
        return False

    def after_rubric_saved(self, version_id: int | None) -> None:
        """The editor closed; ``version_id`` is the last version it saved (re-scoring is under way)."""

    def action_show_source(self) -> None:
        from tui.screens.dialogs import SourceDialog

        ids = self.checklist.source_ids()
        if not ids:
            return
        cid = self.checklist.selected_cid or ""
        db_work(self, self.viva.engine, lambda e, chunk_ids: e.chunks(chunk_ids), ids,
                then=lambda chunks: self.app.push_screen(SourceDialog(cid, ids, chunks)), name="read source")
