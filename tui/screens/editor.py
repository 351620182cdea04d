"""The rubric editor: change an item's criteria from the keyboard and save a new rubric version.

Moves with ↑/↓ or j/k; ``a`` adds below, ``enter`` edits the text in place (a multi-line area that wraps a
long criterion whole, :class:`CriterionArea`: ``enter`` keeps it, ``escape`` cancels), ``d`` deletes, ``K``/``J``
move the criterion up/down, ``+``/``-`` change its weight, ``t`` makes it a deduction (or a point
again), ``u``/``ctrl+y`` undo/redo, ``ctrl+s`` saves. Saving writes one new version
(``edit_rubric``) and re-scores the session's stored answers without calling the target: a running
session is told through a control event, any other is re-scored by the app in a worker. The right
side shows the pending changes, then the diff of the saved version against its parent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Label, Static, TextArea

from engine.api import BenchError, Criterion, Engine, RubricVersion
from tui.bridge import db_work
from tui.editing import WEIGHT_STEP, RubricDraft, diff_criteria, next_cid_number
from tui.widgets.keybar import KeyBar

if TYPE_CHECKING:
    from tui.app import VivaApp


def load_rubric(engine: Engine, item_id: int) -> tuple[RubricVersion, list[RubricVersion]]:
    """The current version of an item's rubric and all its versions."""
    return engine.current_rubric(item_id), engine.list_versions(item_id)


def save_rubric(engine: Engine, item_id: int, ops: list[dict[str, Any]], base_id: int) -> RubricVersion:
    """Write the new version (who re-scores the session is the engine's decision, at save time)."""
    return engine.edit_rubric(item_id, ops, author="human", base_version_id=base_id)


class CriterionArea(TextArea):
    """A criterion's text while it is edited: wrapped over as many lines as it needs (issue 36: a long
    criterion was edited in a one-line input that showed 31 characters of it). A criterion is one
    paragraph, so ``enter`` keeps the text (:class:`CriterionArea.Submitted`) instead of starting a line;
    ``escape`` reaches the editor, which cancels."""

    class Submitted(Message):
        """The text is done (``enter``)."""

        def __init__(self, area: CriterionArea) -> None:
            super().__init__()
            self.area = area

    def __init__(self, text: str = "", placeholder: str = "") -> None:
        super().__init__(text, soft_wrap=True, show_line_numbers=False, compact=True, placeholder=placeholder,
                         classes="criterion-input")

    @property
    def value(self) -> str:
        """The text as one line (a pasted line break is a space)."""
        return " ".join(self.text.split())

    async def _on_key(self, event: events.Key) -> None:
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self))
            return
        await super()._on_key(event)


class CriterionRow(Horizontal):
    """One criterion: its id, kind and weight, and its text (a :class:`CriterionArea` while it is edited)."""

    def __init__(self, criterion: Criterion | None, index: int):
        super().__init__(classes="criterion-row")
        self.criterion = criterion
        self.index = index

    def compose(self) -> ComposeResult:
        c = self.criterion
        if c is None:
            yield Label("new", classes="criterion-meta")
            yield CriterionArea(placeholder="what an answer must show; enter keeps it, escape cancels")
            return
        meta = Text(f"{c.cid:<4}", style="bold")
        meta.append(f"{c.kind:<10}", style="red" if c.kind == "deduction" else "")
        meta.append(f"w {c.weight:g}")
        yield Label(meta, classes="criterion-meta")
        yield Static(c.text, classes="criterion-text")

    def start_edit(self) -> CriterionArea:
        """Swap the text for an area holding it, the cursor at its end."""
        text = self.query_one(".criterion-text", Static)
        text.display = False
        field = CriterionArea(self.criterion.text if self.criterion else "")
        self.mount(field)
        field.move_cursor(field.document.end)
        return field


class RubricEditor(Screen[int | None]):
    """Edit an item's rubric; dismisses with the id of the last version saved (or None)."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "Up", show=False, id="editor_up"),
        Binding("down,j", "cursor(1)", "Down", show=False, id="editor_down"),
        Binding("a", "add", "Add", id="editor_add", tooltip="Add a criterion below the cursor"),
        Binding("enter", "edit", "Edit", id="editor_edit", tooltip="Edit the text in place"),
        Binding("d,delete", "delete", "Del", id="editor_delete", tooltip="Delete the criterion"),
        Binding("K,ctrl+up", "move(-1)", "Up", id="editor_move_up", tooltip="Move the criterion up"),
        Binding("J,ctrl+down", "move(1)", "Down", id="editor_move_down", tooltip="Move the criterion down"),
        Binding("plus,equals_sign", "weight(1)", "W+", id="editor_weight_up", tooltip="Weight up by 0.5"),
        Binding("minus", "weight(-1)", "W−", id="editor_weight_down", tooltip="Weight down by 0.5"),
        Binding("t", "toggle_deduction", "Deduct", id="editor_toggle_deduction",
                tooltip="Make it a deduction, or a scoring point again"),
        Binding("u,ctrl+z", "undo", "Undo", id="editor_undo"),
        Binding("ctrl+y,U", "redo", "Redo", id="editor_redo"),
        Binding("ctrl+s", "save", "Save", id="editor_save", tooltip="Save a new version and re-score"),
        Binding("escape", "close", "Close", id="editor_close"),
    ]
    AUTO_FOCUS = None  # the keys act on the list; only the input of an edit takes focus

    def __init__(self, item_id: int, session_id: int | None = None, running: bool = False):
        super().__init__(id="rubric-editor")
        self.item_id = item_id
        self.session_id = session_id
        self.running = running
        self.draft: RubricDraft | None = None
        self.versions: list[RubricVersion] = []
        self.cursor = 0
        self.editing: tuple[CriterionRow, CriterionArea] | None = None
        self.saved: int | None = None

    @property
    def viva(self) -> VivaApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static("", id="editor-title")
        with Horizontal(id="editor-body"):
            with Vertical(id="editor-left", classes="region") as left:
                left.border_title = "Criteria"
                yield VerticalScroll(id="criteria", can_focus=False)
            with Vertical(id="editor-right"):
                with VerticalScroll(id="editor-diff", classes="region", can_focus=False) as diff:
                    diff.border_title = "Changes"
                    yield Static("", id="diff-text")
                with VerticalScroll(id="editor-versions", classes="region", can_focus=False) as versions:
                    versions.border_title = "Versions"
                    yield Static("", id="versions-text")
        yield KeyBar()

    def on_mount(self) -> None:
        self.load()

    def load(self) -> None:
        db_work(self, self.viva.engine, load_rubric, self.item_id, then=self.loaded, name="load rubric")

    def loaded(self, result: tuple[RubricVersion, list[RubricVersion]]) -> None:
        current, versions = result
        self.versions = versions
        self.draft = RubricDraft(current, next_cid_number(versions))
        self.refresh_view()

    # -- view ---------------------------------------------------------------------------------
    def refresh_view(self) -> None:
        draft = self.draft
        if draft is None:
            return
        criteria = draft.criteria
        self.cursor = max(0, min(self.cursor, len(criteria) - 1))
        box = self.query_one("#criteria", VerticalScroll)
        box.remove_children()
        rows = [CriterionRow(c, i) for i, c in enumerate(criteria)]
        for row in rows:
            row.set_class(row.index == self.cursor, "-cursor")
        box.mount_all(rows)
        self.editing = None
        self._title()
        self._diff()
        self._versions()
        self.refresh_bindings()
        if rows:
            self.call_after_refresh(box.scroll_to_widget, rows[self.cursor], animate=False)

    def _title(self) -> None:
        draft = self.draft
        assert draft is not None
        line = Text()
        line.append(f"Rubric editor · item {self.item_id} · editing v{draft.base.version}", style="bold")
        if draft.dirty:
            line.append(f" · {len(draft.ops)} unsaved change(s)", style="bold yellow")
        if self.session_id is not None:
            how = "the running session re-scores at its next step" if self.running else \
                "saving re-scores the stored answers (the target is not asked again)"
            line.append(f" · session {self.session_id}: {how}", style="dim")
        self.query_one("#editor-title", Static).update(line)

    def _diff(self) -> None:
        draft = self.draft
        assert draft is not None
        box = self.query_one("#editor-diff")
        if draft.dirty:
            box.border_title = f"Unsaved changes vs v{draft.base.version}"
            lines = diff_criteria(draft.base.criteria, draft.criteria)
        else:
            parent = next((v for v in self.versions if v.id == draft.base.parent_id), None)
            if parent is None:
                box.border_title = f"v{draft.base.version}"
                self.query_one("#diff-text", Static).update(Text("first version: nothing to compare with", style="dim"))
                return
            box.border_title = f"v{draft.base.version} vs v{parent.version}"
            lines = diff_criteria(parent.criteria, draft.base.criteria)
        text = Text()
        styles = {"+": "green", "-": "red", "~": "yellow", ">": "cyan"}
        for mark, line in lines:
            text.append(f"{mark} {line}\n", style=styles.get(mark, ""))
        self.query_one("#diff-text", Static).update(text if lines else Text("no changes", style="dim"))

    def _versions(self) -> None:
        current = self.draft.base.id if self.draft else None
        text = Text()
        for v in reversed(self.versions):
            text.append(f"v{v.version}", style="bold" if v.id == current else "")
            text.append(f" {v.author}", style="dim")
            if v.id == current:
                text.append(" (current)", style="bold")
            text.append(f"  {v.note}\n" if v.note else "\n")
        self.query_one("#versions-text", Static).update(text)

    def _rows(self) -> list[CriterionRow]:
        return list(self.query(CriterionRow))

    def _current(self) -> Criterion | None:
        if self.draft is None:
            return None
        criteria = self.draft.criteria
        return criteria[self.cursor] if 0 <= self.cursor < len(criteria) else None

    def _apply(self, change: Any, *args: Any) -> None:
        """Run a draft operation; an invalid one is refused with the engine's reason."""
        try:
            change(*args)
        except BenchError as exc:
            self.notify(str(exc), severity="error", title="Not applied")
            return
        self.refresh_view()

    # -- availability -------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("close", "cursor") or self.draft is None:
            return True if action in ("close", "cursor") else None
        if self.editing is not None:
            return True if action == "save" else None
        if action == "undo":
            return True if self.draft.ops else None
        if action == "redo":
            return True if self.draft.undone else None
        if action == "save":
            return True if self.draft.dirty else None
        if action == "toggle_deduction":
            current = self._current()
            return True if current is not None and current.kind != "code" else None
        if action in ("edit", "delete", "move", "weight"):
            return True if self._current() is not None else None
        return True

    # -- actions ------------------------------------------------------------------------------
    def action_cursor(self, step: int) -> None:
        if self.editing is not None or self.draft is None:
            return
        rows = self._rows()
        if not rows:
            return
        self.cursor = max(0, min(len(rows) - 1, self.cursor + step))
        for row in rows:
            row.set_class(row.index == self.cursor, "-cursor")
        self.query_one("#criteria", VerticalScroll).scroll_to_widget(rows[self.cursor], animate=False)
        self.refresh_bindings()

    def action_add(self) -> None:
        if self.draft is None:
            return
        row = CriterionRow(None, self.cursor + 1)
        rows = self._rows()
        box = self.query_one("#criteria", VerticalScroll)
        if rows:
            box.mount(row, after=rows[self.cursor])
        else:
            box.mount(row)
        self.call_after_refresh(lambda: self._start(row, row.query_one(CriterionArea)))

    def action_edit(self) -> None:
        rows = self._rows()
        if self.draft is None or not rows:
            return
        row = rows[self.cursor]
        self._start(row, row.start_edit())

    def _start(self, row: CriterionRow, field: CriterionArea) -> None:
        self.editing = (row, field)
        row.add_class("-editing")
        field.focus()
        self.refresh_bindings()

    def on_criterion_area_submitted(self, event: CriterionArea.Submitted) -> None:
        event.stop()
        self._commit()

    def _commit(self) -> bool:
        """Turn the open input into an add or edit operation; False if it was refused."""
        if self.editing is None or self.draft is None:
            return True
        row, field = self.editing
        text = field.value.strip()
        if not text:
            self.notify("A criterion needs a text (escape cancels).", severity="warning")
            return False
        try:
            if row.criterion is None:
                self.draft.add(text, position=row.index)
                self.cursor = row.index
            else:
                self.draft.edit(row.criterion.cid, text)
        except BenchError as exc:
            self.notify(str(exc), severity="error", title="Not applied")
            return False
        self.refresh_view()
        return True

    def action_delete(self) -> None:
        current = self._current()
        if current is not None and self.draft is not None:
            self._apply(self.draft.delete, current.cid)

    def action_move(self, step: int) -> None:
        current = self._current()
        if current is None or self.draft is None:
            return
        target = max(0, min(len(self.draft.criteria) - 1, self.cursor + step))
        if target != self.cursor:
            self.cursor = target
            self._apply(self.draft.move, current.cid, target)

    def action_weight(self, direction: int) -> None:
        current = self._current()
        if current is not None and self.draft is not None:
            self._apply(self.draft.reweight, current.cid, direction * WEIGHT_STEP)

    def action_toggle_deduction(self) -> None:
        current = self._current()
        if current is not None and self.draft is not None:
            self._apply(self.draft.toggle_deduction, current.cid)

    def action_undo(self) -> None:
        if self.draft is not None and self.draft.undo():
            self.refresh_view()

    def action_redo(self) -> None:
        if self.draft is not None and self.draft.redo():
            self.refresh_view()

    def action_save(self) -> None:
        draft = self.draft
        if draft is None:
            return
        if self.editing is not None and not self._commit():
            return
        if not draft.dirty:
            return
        db_work(self, self.viva.engine, save_rubric, self.item_id, list(draft.ops), draft.base.id,
                then=self.saved_version, name="save rubric")

    def saved_version(self, version: RubricVersion) -> None:
        self.saved = version.id
        if self.session_id is not None:
            self.viva.apply_rubric(self.session_id, version.id)
        self.notify(f"saved as v{version.version}" + (f"; re-scoring session {self.session_id}"
                                                       if self.session_id is not None else ""),
                    title="Rubric saved")
        self.load()

    def action_close(self) -> None:
        from tui.screens.dialogs import ConfirmDialog

        if self.editing is not None:
            self.refresh_view()  # cancel the edit in progress
            return
        if self.draft is not None and self.draft.dirty:
            self.app.push_screen(ConfirmDialog(f"Discard {len(self.draft.ops)} unsaved change(s)?"),
                                 lambda yes: yes and self.dismiss(self.saved))
            return
        self.dismiss(self.saved)
