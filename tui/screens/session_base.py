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
        Binding("a", "confirm_verdict", "Agree", id="confirm_verdict",
                tooltip="Agree with the selected verdict: confirmed as reviewed (counts in judge–human "
                        "agreement, κ; u undoes)"),
        Binding("u", "undo_override", "Undo", id="undo_override",
                tooltip="Undo your latest override or confirmation of the selected verdict"),
        Binding("O", "list_overrides", "Overrides", show=False, id="list_overrides",
                tooltip="Every override of this session and its run: who, when, why"),
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
            # shown whenever there is a judged turn to act on: with nothing selected the key says where to go
            return True if self.can_edit() and self.state is not None and any(t.judged for t in self.state.turns) \
                else None
        if action == "undo_override":
            verdict = self.selected_verdict()
            return True if self.can_edit() and verdict is not None and verdict.source == "human" \
                and verdict.carried_from is None else None
        if action == "list_overrides":
            return True if self.state is not None else None
        if action == "rubric_editor":
            return True if self.can_edit() and self.state is not None and self.state.item_id else None
        if action == "show_source":
            return True if self.checklist.source_ids() else None
        return True

    VERDICT_ACTIONS = ("override", "confirm_verdict", "undo_override")

    def verdict_key_refusal(self, action: str) -> str | None:
        """Why a key that acts on a verdict does nothing here and now, and where to go (None: it acts)."""
        state = self.state
        if state is None or not any(t.judged for t in state.turns):
            return "No judged turn yet: verdicts appear once the judge has scored a turn."
        if not self.can_edit():
            return "Overrides apply to the end of the record: → (or End) goes there."
        if action == "undo_override":
            target = self.selected_verdict_target()
            verdict = self.selected_verdict()
            if target is None or verdict is None:
                return None  # the action says where to go
            if verdict.carried_from is not None:
                return f"turn {target[0]}: {target[1]} carries the override of turn {verdict.carried_from}: " \
                       f"undo it there."
            if verdict.source != "human":
                return f"turn {target[0]}: {target[1]} is the judge's verdict; there is no override to undo."
        return None

    def on_key(self, event: Any) -> None:
        """A verdict key that cannot act says why and where to go, never nothing."""
        if event.key not in self._bindings.key_to_bindings:
            return
        for binding in self._bindings.key_to_bindings[event.key]:
            if binding.action in self.VERDICT_ACTIONS and not self.check_action(binding.action, ()):
                why = self.verdict_key_refusal(binding.action)
                if why:
                    event.stop()
                    event.prevent_default()
                    self.notify(why, severity="warning", timeout=6)
                return

    def selected_verdict(self) -> Any:
        """The verdict of the selected turn on the selected criterion (None: nothing to act on)."""
        target = self.selected_verdict_target()
        if target is None or self.state is None:
            return None
        return self.state.turns[target[0]].verdicts[target[1]]

    def _target_or_say(self) -> tuple[int, str] | None:
        """The verdict a key acts on, or a line saying where to go to pick one."""
        target = self.selected_verdict_target()
        if target is None:
            turn = self.state.turn(self.selected_turn) if self.state is not None else None
            if turn is None or not turn.judged:
                self.notify("Pick a judged turn in the interview pane (↑/↓), then a criterion in the checklist (tab).",
                            severity="warning")
            else:
                self.notify(f"Pick a criterion of turn {turn.idx} in the checklist (tab, then ↑/↓).",
                            severity="warning")
        return target

    def action_override(self) -> None:
        from tui.screens.dialogs import OverrideDialog

        target = self._target_or_say()
        if target is None or self.state is None:
            return
        turn_idx, cid = target
        turn = self.state.turns[turn_idx]
        crit = next((c for c in self.state.criteria(turn.rubric_version_id) if c["cid"] == cid), {"text": cid})
        sid = self.state.session_id
        verdict = turn.verdicts[cid]

        def done(result: tuple[bool, str] | None) -> None:
            if result is None:
                return
            met, note = result
            db_work(self, self.viva.engine, lambda e, *a: e.override_verdict(*a), sid, turn_idx, cid, met, note,
                    then=self.after_override, name="override verdict")

        def previewed(found: tuple[dict[bool, dict[str, Any]], str]) -> None:
            effects, who = found
            self.app.push_screen(OverrideDialog(turn_idx, cid, crit["text"], verdict, effects, who), done)

        def preview(engine: Any) -> tuple[dict[bool, dict[str, Any]], str]:
            return ({met: engine.preview_override(sid, turn_idx, cid, met) for met in (True, False)},
                    engine.evaluator)

        db_work(self, self.viva.engine, preview, then=previewed, name="work out the override's effect")

    def action_confirm_verdict(self) -> None:
        """Record that the evaluator agrees with the judge on the selected verdict (a human row with
        the judge's value: the score does not change; agreement and κ count it)."""
        target = self._target_or_say()
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
        self.notify(f"turn {result['turn']}: {result['cid']} confirmed as {'met' if result['met'] else 'not met'} "
                    f"by {result['by']} (u undoes)", title="Verdict confirmed")

    def after_override(self, result: dict[str, Any]) -> None:
        """Called with ``override_verdict``'s result; the live screen sees the event anyway."""
        score = result.get("session_score")
        self.notify(f"turn {result['turn']}: {result['cid']} set to {'met' if result['met'] else 'not met'} "
                    f"by {result['by']}; s = {result['score']:.2f}"
                    + (f", Score {score:.1f}" if score is not None else "") + " (u undoes)",
                    title="Verdict overridden")

    def action_undo_override(self) -> None:
        """Take back the latest override or confirmation of the selected verdict, after a yes."""
        from tui.screens.dialogs import ConfirmDialog

        target = self._target_or_say()
        verdict = self.selected_verdict()
        if target is None or self.state is None or verdict is None:
            return
        if verdict.source != "human" or verdict.carried_from is not None:
            where = f" (it is carried from turn {verdict.carried_from}: undo it there)" \
                if verdict.carried_from is not None else ""
            self.notify(f"turn {target[0]}: {target[1]} has no override of yours to undo{where}.", severity="warning")
            return
        turn_idx, cid = target
        sid = self.state.session_id
        mark = "met" if verdict.met else "not met"
        question = f"Undo the override of {cid} on turn {turn_idx} ({mark}: {verdict.rationale})?"

        def answered(yes: bool | None) -> None:
            if yes:
                db_work(self, self.viva.engine, lambda e, *a: e.undo_override(*a), sid, turn_idx, cid,
                        then=self.after_undo, name="undo override")

        self.app.push_screen(ConfirmDialog(question), answered)

    def after_undo(self, result: dict[str, Any]) -> None:
        """Called with ``undo_override``'s result."""
        mark = "met" if result["met"] else "not met"
        whose = "the judge's verdict" if result["source"] == "judge" else "your earlier override"
        score = result.get("session_score")
        self.notify(f"turn {result['turn']}: {result['cid']} back to {whose} ({mark})"
                    + (f"; Score {score:.1f}" if score is not None else ""), title="Override undone")
        self.after_override_undone(result)

    def after_override_undone(self, result: dict[str, Any]) -> None:
        """Hook: the review reloads its record; the live screen sees the event anyway."""

    def action_list_overrides(self) -> None:
        from tui.screens.dialogs import OverridesDialog

        state = self.state
        if state is None:
            return
        sid = state.session_id

        def load(engine: Any) -> tuple[str, list[dict[str, Any]]]:
            run = engine.session_row(sid).get("run_id")
            if run is not None:
                return f"Overrides in run {run} (* this session, {sid})", engine.overrides(run_id=run)
            return f"Overrides in session {sid}", engine.overrides(session_id=sid)

        db_work(self, self.viva.engine, load,
                then=lambda found: self.app.push_screen(OverridesDialog(found[0], found[1], sid)),
                name="list overrides")

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
