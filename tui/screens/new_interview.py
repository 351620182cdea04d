"""The "new interview" dialog: benchmark, item(s), target, kernel, protocol, policy and turns.

It plans the run with the engine (``plan_run``, which validates the target, kernel and policy) and
returns the run id; planning errors stay in the dialog so the evaluator can fix the field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.segment import Segment
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.strip import Strip
from textual.suggester import SuggestFromList
from textual.widgets import Button, Input, Label, Select, SelectionList, Static
from textual.widgets.option_list import OptionDoesNotExist

from engine.api import MAX_TURNS, Engine, RunRequest
from tui.bridge import db_work
from tui.screens.dialogs import Dialog

if TYPE_CHECKING:
    from tui.app import VivaApp

POLICIES = ("onnx", "threshold", "random", "always-follow-up", "always-challenge")
PROTOCOLS = (("auto (each item's own)", ""), ("adaptive", "adaptive"), ("task", "task"), ("graded", "graded"),
             ("rubric", "rubric"))


def plan(engine: Engine, request: dict[str, Any]) -> int:
    """Plan the run (the engine validates the target, kernel and policy); returns its id. A target on
    this machine that refuses connections is an error before anything is created."""
    dead = engine.unreachable_targets(request["targets"])
    if dead:
        raise ValueError("; ".join(dead))
    return engine.plan_run(RunRequest(**request))


def known_targets(engine: Engine, config_targets: list[str]) -> list[str]:
    """Targets worth suggesting: the configured ones, the embedded model, the reference target of each
    knowledge base (``kb:NAME``) and those used before."""
    from engine.api import list_kbs

    references = [f"kb:{kb['name']}" for kb in list_kbs(engine.runtime.store)]
    return list(dict.fromkeys([*config_targets, "local", *references, *engine.known_targets()]))


def benchmarks(engine: Engine) -> list[Any]:
    """Every benchmark."""
    return engine.list_benchmarks()


def items_of(engine: Engine, benchmark: str) -> list[Any]:
    """A benchmark's items."""
    return engine.list_items(benchmark)


class MarkedSelectionList(SelectionList):
    """A selection list whose boxes are empty unless chosen: the choice shows without colour."""

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        segments = list(strip)
        try:
            selection = self.get_option_at_index(self.scroll_offset.y + y)
        except OptionDoesNotExist:
            return strip
        if len(segments) < 3 or selection.value in self.selected:
            return strip
        box = segments[1]
        segments[1] = Segment(" " * len(box.text), box.style, box.control)
        return Strip(segments, strip.cell_length)


class NewInterviewDialog(Dialog):
    """Returns the planned run's id."""

    BINDINGS = [Binding("ctrl+s", "start", "Start", id="new_interview_start")]
    AUTO_FOCUS = "#target"

    def __init__(self, selected: str | None = None):
        super().__init__()
        self.selected_bench = selected

    @property
    def viva(self) -> VivaApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        cfg = self.viva.engine.config
        with Vertical(classes="dialog wide", id="new-interview"):
            yield Label("New interview", classes="dialog-title")
            with VerticalScroll(id="new-form"):
                yield Label("Benchmark")
                yield Select([], prompt="loading benchmarks…", id="bench")
                yield Label("Items (space toggles; X marks the chosen ones)")
                yield MarkedSelectionList(id="items")
                with Horizontal(classes="form-row"):
                    with Vertical():
                        yield Label("Target")
                        yield Input(value=next(iter(cfg.targets), "local"), id="target",
                                    placeholder="openai:MODEL@BASE_URL, a configured name, python:mod:Class, local, kb:NAME")
                    with Vertical():
                        yield Label("Kernel")
                        yield Input(value="config" if cfg.kernel is not None else "offline", id="kernel",
                                    suggester=SuggestFromList(["offline", "config"]),
                                    placeholder="offline, config, openai:MODEL@BASE_URL")
                with Horizontal(classes="form-row"):
                    with Vertical():
                        yield Label("Protocol")
                        yield Select(PROTOCOLS, value="", allow_blank=False, id="protocol")
                    with Vertical():
                        yield Label("Policy")
                        yield Select([(p, p) for p in POLICIES],
                                     value=cfg.interview.policy if cfg.interview.policy in POLICIES else "onnx",
                                     allow_blank=False, id="policy")
                    with Vertical():
                        yield Label("Turns")
                        yield Input(value=str(cfg.interview.turns), type="integer", id="turns")
            yield Static("", id="new-error")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Start (ctrl+s)", variant="primary", id="start")
                yield Button("Cancel", id="cancel")

    FORM_OVERHEAD = 13
    """Rows the dialog needs besides the form: borders, padding, title, error line and buttons."""

    def on_resize(self) -> None:
        """The form scrolls within what the terminal leaves, so Start and Cancel always show (issue 36)."""
        room = int(self.app.size.height * 0.9) - self.FORM_OVERHEAD
        self.query_one("#new-form").styles.max_height = max(6, min(30, room))

    def on_mount(self) -> None:
        self.on_resize()
        engine = self.viva.engine
        db_work(self, engine, known_targets, list(engine.config.targets), then=self._targets, name="targets")
        db_work(self, engine, benchmarks, then=self._benchmarks, name="benchmarks")

    def _benchmarks(self, found: list[Any]) -> None:
        select = self.query_one("#bench", Select)
        if not found:
            select.prompt = "no benchmark"
            self._error("No benchmark yet: create one with `viva bench import` or `viva bench generate` "
                        "(or run `viva demo`).")
            return
        names = [b.name for b in found]
        if self.selected_bench not in names:
            self.selected_bench = names[0]
        select.set_options([(f"{b.name} ({b.n_items} items, {b.source})", b.name) for b in found])
        select.value = self.selected_bench
        self._load_items(self.selected_bench)

    def _targets(self, names: list[str]) -> None:
        self.query_one("#target", Input).suggester = SuggestFromList(names, case_sensitive=False)

    def _load_items(self, bench: str) -> None:
        db_work(self, self.viva.engine, items_of, bench, then=self._items, name="load items")

    def _items(self, items: list[Any]) -> None:
        box = self.query_one("#items", MarkedSelectionList)
        box.clear_options()
        for i, item in enumerate(items):
            question = item.question.replace("\n", " ")
            label = f"#{item.id} [{item.protocol}] {item.topic + ': ' if item.topic else ''}{question[:70]}"
            box.add_option((label, item.id, i == 0))

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "bench" and event.value is not Select.NULL and event.value != self.selected_bench:
            self.selected_bench = str(event.value)
            self._load_items(self.selected_bench)

    def _error(self, text: str) -> None:
        self.query_one("#new-error", Static).update(text)

    def request(self) -> dict[str, Any] | None:
        """The run request from the form, or None (with the reason shown) when a field is wrong."""
        if not self.selected_bench:
            self._error("Pick a benchmark.")
            return None
        items = list(self.query_one("#items", MarkedSelectionList).selected)
        if not items:
            self._error("Pick at least one item (space toggles).")
            return None
        target = self.query_one("#target", Input).value.strip()
        if not target:
            self._error("Give a target.")
            return None
        turns_text = self.query_one("#turns", Input).value.strip()
        if not turns_text.isdigit() or not 1 <= int(turns_text) <= MAX_TURNS:
            self._error(f"Turns must be a whole number from 1 to {MAX_TURNS}.")
            return None
        protocol = self.query_one("#protocol", Select).value
        return {"bench": self.selected_bench, "targets": [target], "items": items,
                "kernel": self.query_one("#kernel", Input).value.strip() or None,
                "protocol": protocol or None, "policy": str(self.query_one("#policy", Select).value),
                "turns": int(turns_text)}

    def action_start(self) -> None:
        request = self.request()
        if request is None:
            return
        self._error("planning…")
        db_work(self, self.viva.engine, plan, request, then=self.dismiss, name="plan the run")

    def on_worker_state_changed(self, event: Any) -> None:
        from textual.worker import WorkerState

        if event.worker.name == "plan the run" and event.state == WorkerState.ERROR:
            event.stop()
            self._error(f"cannot start: {event.worker.error}")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "start":
            self.action_start()
        else:
            self.dismiss(None)
