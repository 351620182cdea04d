"""Small modal dialogs; each returns its result to the callback given to ``push_screen``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, RadioButton, RadioSet, Static, TextArea

from tui.state import Verdict
from tui.widgets.checklist import describe_verdict
from tui.widgets.sessions import SessionsTable


async def _nothing() -> None:
    """What awaiting a second dismiss does."""


class Dialog(ModalScreen):
    """A centred box; escape cancels (the callback gets None).

    Dismissing is idempotent: a second Enter (or a submit that arrives while the first one is being
    handled, as in a slow repaint) does nothing, where Textual would pop the screen under the dialog
    too and end the app with "Can't pop screen".
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="dialog_cancel")]

    dismissed = False
    """Set by the first :meth:`dismiss`; later ones are ignored."""

    def dismiss(self, result: Any = None) -> AwaitComplete:
        if self.dismissed:
            return AwaitComplete(_nothing())
        self.dismissed = True
        return super().dismiss(result)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ChoiceSet(RadioSet):
    """A radio set in a form: space picks the highlighted choice, enter submits the form."""

    BINDINGS = [Binding("enter", "screen.submit", "Save", show=False, id="choice_submit")]


def _score(value: float | None, scale: float = 1.0, digits: int = 2) -> str:
    return "–" if value is None else f"{value * scale:.{digits}f}"


def describe_effect(cid: str, turn: int, effect: dict[str, Any] | None) -> str:
    """One line: the verdict, the turn's score and the session's Score before → after an override."""
    if not effect:
        return "working out the effect…"
    b, a = effect["before"], effect["after"]

    def mark(met: bool | None) -> str:
        return "no verdict" if met is None else "met" if met else "not met"

    line = (f"{cid} on turn {turn}: {mark(b['met'])} → {mark(a['met'])} · turn score "
            f"{_score(b['turn_score'])} → {_score(a['turn_score'])} · Score {_score(b['session_score'], 1, 1)} → "
            f"{_score(a['session_score'], 1, 1)}")
    if b["met"] == a["met"]:
        line += " (the judge's verdict: a confirmation, nothing changes)"
    if effect.get("carried_to"):
        line += f" · carried to turn(s) {', '.join(str(t) for t in effect['carried_to'])}"
    return line


class OverrideDialog(Dialog):
    """Set a criterion's verdict for a turn, in two deliberate steps. Returns ``(met, note)``.

    First the choice (the opposite of the verdict, chosen already) and a note, which may be short but
    never empty: enter (or ctrl+s) with an empty note says so and stays. Then the confirmation:
    the verdict, the turn's score and the session's Score before → after, with the note and
    the name it is signed with; enter on "Confirm" (or ctrl+s) saves, escape goes back to editing.
    y / n choose from anywhere but the note (tab reaches the choice).
    """

    BINDINGS = [
        Binding("y", "choose(True)", "Met", id="override_met"),
        Binding("n", "choose(False)", "Not met", id="override_not_met"),
        Binding("ctrl+s", "submit", "Save", id="override_save"),
    ]

    def __init__(self, turn: int, cid: str, text: str, verdict: Verdict,
                 effects: dict[bool, dict[str, Any]] | None = None, who: str = ""):
        super().__init__()
        self.turn, self.cid, self.text, self.verdict = turn, cid, text, verdict
        self.effects = effects or {}
        self.who = who
        self.confirming = False

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog", id="override-dialog"):
            yield Label(f"Override {self.cid} on turn {self.turn}", classes="dialog-title")
            yield Static(self.text, classes="dialog-text")
            yield Static(f"now: {describe_verdict(self.verdict)}", classes="dim")
            if self.verdict.original is not None:
                yield Static(f"judge's original: {describe_verdict(self.verdict.original)}", classes="dim")
            with ChoiceSet(id="override-choice"):
                yield RadioButton("met (y)", value=not self.verdict.met, id="choice-met")
                yield RadioButton("not met (n)", value=self.verdict.met, id="choice-not-met")
            yield Input(placeholder="note: why (required); enter goes on to the confirmation", id="override-note")
            yield Static("", id="override-error", classes="error")
            yield Static("", id="override-effect")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Next", variant="primary", id="save")
                yield Button("Cancel", id="cancel")

    AUTO_FOCUS = "#override-note"  # typed text is the note; the choice is already the opposite verdict

    def on_mount(self) -> None:
        self._show_effect()

    def _show_effect(self) -> None:
        effect = self.effects.get(self._met())
        text = describe_effect(self.cid, self.turn, effect)
        if self.confirming:
            note = self.query_one("#override-note", Input).value.strip()
            text = f"Confirm: {text}\nnote: {note}" + (f"\nsigned: {self.who}" if self.who else "")
            text += "\nenter confirms · escape goes back"
        self.query_one("#override-effect", Static).update(text)

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        self._show_effect()

    def action_choose(self, met: bool) -> None:
        if self.confirming:
            return
        self.query_one("#choice-met" if met else "#choice-not-met", RadioButton).value = True
        self._show_effect()

    def _met(self) -> bool:
        return self.query_one("#choice-met", RadioButton).value

    def _editing(self, editing: bool) -> None:
        self.confirming = not editing
        self.query_one("#override-note", Input).disabled = not editing
        self.query_one("#override-choice", ChoiceSet).disabled = not editing
        self.query_one("#save", Button).label = "Next" if editing else "Confirm"
        self._show_effect()

    def action_submit(self) -> None:
        note = self.query_one("#override-note", Input).value.strip()
        if not note:
            self.query_one("#override-error", Static).update("A note is required: say why (it may be short).")
            self.query_one("#override-note", Input).focus()
            return
        self.query_one("#override-error", Static).update("")
        if not self.confirming:
            self._editing(False)
            self.query_one("#save", Button).focus()
            self.call_after_refresh(self.query_one(".dialog-buttons").scroll_visible, animate=False)
            return
        self.dismiss((self._met(), note))

    def action_cancel(self) -> None:
        if self.confirming:  # escape on the confirmation goes back to the choice and the note
            self._editing(True)
            self.query_one("#override-note", Input).focus()
            return
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if not self.confirming:  # a second enter from the note never confirms (a repeat, a slow repaint)
            self.action_submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "save":
            self.action_submit()
        else:
            self.dismiss(None)


class OverridesDialog(Dialog):
    """The overrides, confirmations and undos of a session or a run: when, who, what, why."""

    def __init__(self, title: str, rows: list[dict[str, Any]], session_id: int | None = None):
        super().__init__()
        self.title_text, self.rows, self.session_id = title, rows, session_id

    def compose(self) -> ComposeResult:
        with VerticalScroll(classes="dialog wide", id="overrides-dialog"):
            yield Label(self.title_text, classes="dialog-title")
            if not self.rows:
                yield Static("No overrides yet.", classes="dim")
            for r in self.rows:
                line = Text()
                here = self.session_id is not None and r["session"] == self.session_id
                line.append(f"{r['at']}  ", style="dim")
                line.append(f"session {r['session']} " if not here else f"session {r['session']}* ",
                            style="bold" if here else "")
                what = {"override": "overrode", "confirm": "confirmed", "undo": "undid"}[r["action"]]
                mark = "" if r["met"] is None else (" → met" if r["met"] else " → not met")
                line.append(f"turn {r['turn']} {r['cid']}: {r['by']} {what}{mark}")
                if r.get("undone"):
                    line.append(" (undone)", style="dim")
                if r.get("session_score") is not None:
                    line.append(f" · Score {r['session_score']:.1f}")
                said = r["note"] if r["action"] == "undo" else f"why: {r['note'] or '–'}"
                line.append(f"\n    {said}", style="italic")
                yield Static(line)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Close", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)


class InjectDialog(Dialog):
    """Write the next question yourself. Returns the question text."""

    BINDINGS = [Binding("ctrl+s", "submit", "Ask", id="inject_submit")]

    def __init__(self, turn: int | None):
        super().__init__()
        self.turn = turn

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            label = "Your next question" + (f" (turn {self.turn})" if self.turn is not None else "")
            yield Label(label, classes="dialog-title")
            yield Static("It is asked instead of the kernel's next question and recorded as a human turn. "
                         "ctrl+s asks, escape cancels.", classes="dim")
            yield TextArea(id="inject-text", soft_wrap=True)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Ask", variant="primary", id="ask")
                yield Button("Cancel", id="cancel")

    AUTO_FOCUS = "#inject-text"

    def action_submit(self) -> None:
        text = self.query_one(TextArea).text.strip()
        if not text:
            self.notify("Write a question first.", severity="warning")
            return
        self.dismiss(text)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "ask":
            self.action_submit()
        else:
            self.dismiss(None)


class SourceDialog(Dialog):
    """The knowledge-base chunks a criterion cites."""

    def __init__(self, cid: str, ids: list[int], chunks: dict[int, dict[str, Any]]):
        super().__init__()
        self.cid, self.ids, self.chunks = cid, ids, chunks

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label(f"Sources of {self.cid}", classes="dialog-title")
            with VerticalScroll(id="source-text"):
                for cid in self.ids:
                    chunk = self.chunks.get(cid)
                    if chunk is None:
                        yield Static(Text(f"chunk #{cid}: no longer in the store", style="red"))
                        continue
                    title = chunk.get("document_title") or chunk.get("document_path") or "document"
                    yield Static(Text(f"#{cid} · {title} · part {chunk['ord'] + 1}", style="bold"))
                    yield Static(chunk["text"], classes="chunk")
            yield Button("Close", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(None)


class JumpDialog(Dialog):
    """Ask for a turn number. Returns it as an int."""

    def __init__(self, last: int):
        super().__init__()
        self.last = last

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog narrow"):
            yield Label(f"Jump to turn (0-{self.last})", classes="dialog-title")
            yield Input(placeholder="turn", type="integer", id="jump-turn")

    AUTO_FOCUS = "#jump-turn"

    def on_input_submitted(self, event: Input.Submitted) -> None:
        try:
            turn = int(event.value)
        except ValueError:
            self.notify("Type a turn number.", severity="warning")
            return
        if not 0 <= turn <= self.last:
            self.notify(f"Turns go from 0 to {self.last}.", severity="warning")
            return
        self.dismiss(turn)


class ExportDialog(Dialog):
    """Choose a format and a file. Returns ``(fmt, path)`` with an absolute path.

    The file goes to ``folder`` (the data home's ``exports/``) unless another path is typed; a
    relative path is taken inside ``folder``. The extension follows the chosen format.
    """

    BINDINGS = [Binding("ctrl+s", "export", "Export", id="export_submit")]

    FORMATS = (("html", "HTML page (charts)"), ("md", "Markdown"), ("json", "JSON"), ("csv", "CSV (turns)"))
    """(format, label) in the order offered; the first is the default."""

    def __init__(self, session_id: int, folder: str | Path, extensions: dict[str, str] | None = None):
        super().__init__()
        self.session_id = session_id
        self.folder = Path(folder).expanduser()
        self.extensions = extensions or {"md": ".md", "json": ".json", "csv": ".csv", "html": ".html"}

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(f"Export the report of session {self.session_id}", classes="dialog-title")
            with RadioSet(id="export-format"):
                for i, (fmt, label) in enumerate(self.FORMATS):
                    yield RadioButton(label, value=i == 0, id=f"fmt-{fmt}")
            default = self.folder / f"viva-session-{self.session_id}{self.extensions[self.FORMATS[0][0]]}"
            yield Input(value=str(default), id="export-path")
            yield Static(Text(f"folder: {self.folder}"), id="export-folder", classes="dim")
            yield Static("enter or ctrl+s exports, escape cancels", classes="dim")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Export", variant="primary", id="export")
                yield Button("Cancel", id="cancel")

    AUTO_FOCUS = "#export-path"

    def _fmt(self) -> str:
        for fmt, _ in self.FORMATS:
            if self.query_one(f"#fmt-{fmt}", RadioButton).value:
                return fmt
        return self.FORMATS[0][0]

    def on_radio_set_changed(self, event: RadioSet.Changed) -> None:
        path = self.query_one("#export-path", Input)
        current = Path(path.value)
        if current.suffix in self.extensions.values():
            path.value = str(current.with_suffix(self.extensions[self._fmt()]))

    def chosen_path(self) -> Path | None:
        """The typed path made absolute (relative ones inside the export folder); None if empty."""
        text = self.query_one("#export-path", Input).value.strip()
        if not text:
            return None
        path = Path(text).expanduser()
        return path if path.is_absolute() else self.folder / path

    def action_export(self) -> None:
        path = self.chosen_path()
        if path is None:
            self.notify("Give a file name.", severity="warning")
            return
        self.dismiss((self._fmt(), str(path)))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        self.action_export()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "export":
            self.action_export()
        else:
            self.dismiss(None)


def comparable(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Sessions worth comparing with: those with at least one answered turn (a session that failed or
    was stopped before its first answer has nothing to show side by side)."""
    return [r for r in rows if (r.get("turns") or 0) > 0]


class PickSessionDialog(Dialog):
    """Pick one session from a list paged from the store. Returns its id.

    ``rows`` is the first page, ``total`` how many there are, ``loader`` fetches further pages
    (:data:`tui.widgets.sessions.Loader`) when the cursor nears the end; without one, ``rows`` is all.
    """

    BINDINGS = [Binding("enter", "pick", "Pick", id="pick_session", priority=True)]

    def __init__(self, title: str, rows: list[dict[str, Any]], total: int | None = None, loader: Any = None):
        super().__init__()
        self.title_text, self.first, self.total, self.loader = title, rows, total, loader

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The sessions loaded so far (the first page until the cursor asks for more)."""
        if not self.is_mounted:
            return list(self.first)
        return self.query_one(SessionsTable).sessions

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide picker"):
            yield Label(self.title_text, classes="dialog-title")
            if self.loader is not None:
                yield SessionsTable(id="pick-table", loader=self.loader)
            else:
                yield SessionsTable(id="pick-table")

    def on_mount(self) -> None:
        table = self.query_one(SessionsTable)
        table.set_rows(self.first, self.total if self.loader is not None else None)
        table.loaded_once = self.loader is not None
        table.border_subtitle = f"{self.total if self.total is not None else len(self.first)} session(s)"
        table.focus()

    def action_pick(self) -> None:
        row = self.query_one(SessionsTable).selected_session
        if row is not None:
            self.dismiss(row["id"])


class ConfirmDialog(Dialog):
    """A yes/no question. Returns True or False."""

    BINDINGS = [Binding("y", "answer(True)", "Yes", id="confirm_yes"),
                Binding("n", "answer(False)", "No", id="confirm_no")]

    def __init__(self, question: str):
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog narrow"):
            yield Static(self.question, classes="dialog-title")  # wraps: a long question is never cut
            with Horizontal(classes="dialog-buttons"):
                yield Button("Yes (y)", variant="error", id="yes")
                yield Button("No (n)", id="no")

    def action_answer(self, yes: bool) -> None:
        self.dismiss(yes)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
