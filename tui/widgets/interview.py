"""The interview pane: the conversation turn by turn, the answer appearing as it streams.

One Line API widget (like Toolong's log view) rather than a widget per turn: each turn is rendered
once to lines at the pane's width and cached by the turn's revision, and only the lines on screen are
drawn. A streamed piece re-renders one turn; a 200-turn session opens without 200 widgets.
"""

from __future__ import annotations

from bisect import bisect_right

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from tui.messages import TurnSelected
from tui.state import Note, SessionState, Turn

ACTION_LABELS = {
    "initial": "initial question",
    "follow-up": "follow-up",
    "challenge": "challenge",
    "human": "human question",
    "task": "examiner",
}
LABEL_WIDTH = 9
BAR = "▌ "
STREAM_HEADROOM = 40


def fmt_signed(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:+.{digits}f}"


def fmt_float(value: float | None, digits: int = 2) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def rubric_line(judgement: dict) -> str:
    """A rubric session's judgement in one line: ``score 3 / 5``, or ``cannot judge``, labelled
    "offline estimate" when no LLM judge gave it."""
    label = " · offline estimate" if judgement.get("offline_estimate") else ""
    if judgement.get("score") is None:
        return f"cannot judge ({judgement.get('attempts', 0)} judge replies){label}"
    return f"score {judgement['score']:g} / {judgement.get('max_score', 5):g}{label}"


def note_text(note: Note, style: Style | None = None) -> Text:
    """A session note as the pane shows it: its kind, and its text (``prompt trimmed: judge prompt cut…``);
    a note on another turn than the one it is shown under says which."""
    style = style or Style()
    text = Text(f"{note.label}: ", style=style + Style(bold=True))
    if note.turn >= 0 and note.turn != note.at:
        text.append(f"(turn {note.turn}) ", style=style)
    text.append(note.text, style=style)
    return text


def turn_label(turn: Turn) -> str:
    """``follow-up``, ``challenge (forced)``, ``human question``... as the pane and tables show it."""
    label = ACTION_LABELS.get(turn.action, turn.action or "…")
    if turn.action in ("follow-up", "challenge") and turn.actor == "human":
        label += " (forced)"
    return label


class InterviewPane(ScrollView, can_focus=True):
    """The conversation. ↑/↓ (k/j) select a turn (or click it); the checklist and metrics follow.

    New turns are selected as they start while the selection is on the last turn, so a live
    interview follows itself until the evaluator looks back at an earlier turn. Colours come from
    the theme through the component classes (see app.tcss).
    """

    ALLOW_MAXIMIZE = True
    COMPONENT_CLASSES = {
        "turn--kernel", "turn--target", "turn--label", "turn--up", "turn--down", "turn--dim", "turn--selected",
        "turn--bar-initial", "turn--bar-follow-up", "turn--bar-challenge", "turn--bar-human", "turn--bar-task",
        "turn--note",
    }
    BINDINGS = [
        Binding("up,k", "select(-1)", "Previous turn", show=False, id="turn_prev"),
        Binding("down,j", "select(1)", "Next turn", show=False, id="turn_next"),
        Binding("home", "select_edge(0)", "First turn", show=False, id="turn_first"),
        Binding("end", "select_edge(-1)", "Last turn", show=False, id="turn_last"),
    ]

    selected: reactive[int | None] = reactive(None)

    def __init__(self, *, id: str | None = None, classes: str | None = None):
        super().__init__(id=id, classes=classes)
        self.state: SessionState | None = None
        self._lines: list[list[Strip]] = []
        self._keys: list[tuple[object, ...] | None] = []
        self._offsets: list[int] = []
        self._width = 0
        self._total = 0
        self._palette: tuple[Style, ...] = ()
        self._strips: dict[tuple[object, ...], Strip] = {}

    # -- what is shown ------------------------------------------------------------------------
    @property
    def turn_count(self) -> int:
        return len(self._lines)

    def turn_text(self, idx: int) -> str:
        """The plain text of a turn as drawn (for tests and copy)."""
        return "\n".join(strip.text.rstrip() for strip in self._lines[idx])

    def show(self, state: SessionState, follow: bool = True) -> None:
        """Bring the pane in line with ``state``; with ``follow``, a selection on the last turn
        moves to a new last turn."""
        self.state = state
        count = len(state.turns)
        was_last = self.selected is None or self.selected >= self.turn_count - 1
        if self.turn_count > count:
            del self._lines[count:], self._keys[count:]
        while self.turn_count < count:
            self._lines.append([])
            self._keys.append(None)
        if count == 0:
            self.selected = None
        elif self.selected is None or self.selected >= count or (follow and was_last):
            self.selected = count - 1
        self._render_all()

    def refresh_turn(self, idx: int) -> None:
        """Re-render one turn (a streamed piece arrived)."""
        if self.state is None or idx >= self.turn_count:
            return
        before = len(self._lines[idx])
        self._render_turn(idx)
        if len(self._lines[idx]) != before:
            self._layout()
        self.refresh()  # only the lines on screen are drawn again, from the cache
        if idx == self.turn_count - 1 and self.selected == idx:
            self._scroll_to_last_line()

    def _scroll_to_last_line(self) -> None:
        """Show the end of the conversation (not the blank room kept below it while streaming)."""
        height = self.scrollable_content_region.height
        self.scroll_to(y=max(0, self._total - height), animate=False, immediate=True)

    # -- rendering ----------------------------------------------------------------------------
    def _content_width(self) -> int:
        # The scrollbar's room is always kept (scrollbar-gutter: stable), so this width does not
        # change when the conversation grows past one screen.
        return max(20, self.scrollable_content_region.width or 80)

    def _render_all(self) -> None:
        for idx in range(self.turn_count):
            self._render_turn(idx)
        self._layout()
        self.refresh()

    def _render_turn(self, idx: int) -> None:
        assert self.state is not None
        turn = self.state.turns[idx]
        version = self.state.version_label(turn.rubric_version_id)
        width = self._content_width()
        key = (turn.rev, id(turn), version, idx == self.selected, width, self._scored_later(turn),
               len(self.state.notes_under(idx)))
        if self._keys[idx] == key:
            return
        self._keys[idx] = key
        self._lines[idx] = self._turn_lines(turn, version, width, idx == self.selected)

    def _turn_lines(self, turn: Turn, version: str, width: int, selected: bool) -> list[Strip]:
        style = self.get_component_rich_style
        console = self.app.console
        base = style("turn--selected") if selected else Style()
        bar_style = base + style(f"turn--bar-{turn.action}" if turn.action in ACTION_LABELS else "turn--dim")
        inner = width - len(BAR)
        lines: list[Strip] = []
        cache = self._strips

        def line_strip(line: Text, label: Text | None) -> Strip:
            # A streamed answer is wrapped again on every piece; its lines but the last are the
            # same as before, so their strips come from the cache.
            key = (line.plain, line.style, tuple(line.spans), None if label is None else (label.plain, label.style),
                   bar_style, base, width)
            strip = cache.get(key)
            if strip is None:
                segments = [Segment(BAR, bar_style)]
                if label is not None:
                    segments.extend(label.render(console))
                segments.extend(line.render(console))
                strip = self._strip(segments, width, base)
                if len(cache) > 4000:
                    cache.clear()
                cache[key] = strip
            return strip

        def add(text: Text, label: Text | None = None) -> None:
            if label is None:
                for line in text.wrap(console, inner):
                    lines.append(line_strip(line, None))
                return
            for n, line in enumerate(text.wrap(console, max(8, inner - LABEL_WIDTH))):
                lead = label.copy() if n == 0 else Text("")
                lead.truncate(LABEL_WIDTH, pad=True)
                lines.append(line_strip(line, lead))

        add(self._header(turn, version))
        kernel, target = style("turn--kernel"), style("turn--target")
        add(Text(turn.question, style=kernel), Text("examiner", style=kernel + Style(bold=True)))
        if turn.answer or turn.done:
            answer = Text(turn.answer or "(empty answer)", style=target)
            if turn.partial:
                answer.append("  [stopped: partial answer, asked again on resume]", style=style("turn--dim"))
            elif not turn.done:
                answer.append("▌")
            add(answer, Text("target", style=target + Style(bold=True)))
        else:
            add(Text(self._no_answer(), style=style("turn--dim")), Text("target", style=target + Style(bold=True)))
        for note in turn.extra:
            add(Text(note, style=style("turn--dim")), Text("protocol", style=style("turn--dim")))
        if self.state is not None:
            for n in self.state.notes_under(turn.idx):
                add(note_text(n, style("turn--note")), Text("note", style=style("turn--note") + Style(bold=True)))
        judgement = turn.rubric_judgement
        if judgement is not None:
            label = style("turn--label")
            add(Text(rubric_line(judgement), style=label), Text("judge", style=label + Style(bold=True)))
            if (judgement.get("reasoning") or "").strip():
                add(Text(judgement["reasoning"].strip(), style=style("turn--dim")), Text(""))
        lines.append(Strip.blank(width, Style()))
        return lines

    def _no_answer(self) -> str:
        """What stands for an answer not given: waiting while the session runs, else why not."""
        status = self.state.status if self.state is not None else "running"
        return {
            "failed": "no answer: the session failed (the error is in the header; R resumes)",
            "stopped": "no answer: the session was stopped (R resumes it)",
            "interrupted": "no answer: the session was interrupted (R resumes it)",
            "finished": "no answer",
            "not_examined": "no answer: the session examined nothing (the header says why)",
            "paused": "paused: the question waits for its answer until you resume (space)",
        }.get(status, "waiting for the answer…")

    def _header(self, turn: Turn, version: str) -> Text:
        style = self.get_component_rich_style
        head = Text()
        head.append(f"Turn {turn.idx} · {turn_label(turn)}", style=style("turn--label"))
        if turn.judged:
            head.append(f"  s {fmt_float(turn.score)}", style=style("turn--label"))
            if turn.delta is not None:
                head.append(f"  Δs {fmt_signed(turn.delta)}",
                            style=style("turn--up") if turn.delta > 0 else style("turn--down") if turn.delta < 0
                            else "")
            elif turn.idx > 0 and not self._scored_at_end():
                head.append("  Δs –")
            head.append(f"  {version}", style=style("turn--dim"))
            if turn.rescored:
                head.append(" re-scored", style=style("turn--dim"))
            if any(v.overridden for v in turn.verdicts.values()):
                head.append(" · overridden", style=style("turn--dim"))
        elif turn.done and turn.rubric_judgement is None and not self._scored_later(turn):
            head.append("   judging…", style=style("turn--dim"))
        return head

    def _scored_at_end(self) -> bool:
        """True when the session's protocol scores once at the end (no Δs, no per-turn judging)."""
        return self.state is not None and self.state.protocol in ("rubric", "task")

    def _scored_later(self, turn: Turn) -> bool:
        """True for a turn of a protocol that scores once at the end, other than the last turn."""
        return self._scored_at_end() and self.state is not None and turn.idx < len(self.state.turns) - 1

    @staticmethod
    def _strip(segments: list[Segment], width: int, base: Style) -> Strip:
        length = Segment.get_line_length(segments)
        if length < width:
            segments.append(Segment(" " * (width - length), base))
        if base:
            segments = list(Segment.apply_style(segments, style=base))  # under the text's own colours
        return Strip(segments).crop(0, width) if length > width else Strip(segments, width)

    def _layout(self) -> None:
        offsets, total = [], 0
        for lines in self._lines:
            offsets.append(total)
            total += len(lines)
        self._offsets, self._total = offsets, total
        height = total or 1
        streaming = self.state is not None and any(not t.done and not t.partial for t in self.state.turns[-1:])
        if streaming:
            # A new line every few pieces would mean a layout of the whole screen each time;
            # keep some room below the end while an answer streams, exact size again after.
            current = self.virtual_size.height
            height = current if current >= height else height + STREAM_HEADROOM
        width = self._content_width()
        if self.virtual_size != Size(width, height):
            self.virtual_size = Size(width, height)

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        line = round(self.scroll_y) + y
        if not self._lines:
            if y == 1:
                empty = ("  No turn: nothing was examined (the header says why)."
                         if self.state is not None and self.state.status == "not_examined" else "  No turns yet.")
                return Strip([Segment(empty, self.get_component_rich_style("turn--dim"))]) \
                    .adjust_cell_length(width)
            # with no turn to stand under, the notes (a question skipped, ...) follow, one line each
            notes = [n for n in self.state.session_notes if n.what != "not-examined"] if self.state else []
            if 3 <= y < 3 + len(notes):
                text = Text("  ") + note_text(notes[y - 3], self.get_component_rich_style("turn--note"))
                return Strip(list(text.render(self.app.console))).crop_extend(0, width, None)
            return Strip.blank(width)
        idx = bisect_right(self._offsets, line) - 1
        if idx < 0 or line - self._offsets[idx] >= len(self._lines[idx]):
            return Strip.blank(width)
        return self._lines[idx][line - self._offsets[idx]].crop_extend(0, width, None)

    def on_resize(self, event: events.Resize) -> None:
        if self.state is None:
            return
        if self._content_width() != self._width:
            self._width = self._content_width()
            self._render_all()
        # the selected turn stays in view at the new size: a scroll asked for before the pane had its size
        # (a review opened on its last turn) was clamped to the room there was then
        if self.selected is not None:
            self.call_after_refresh(self._scroll_to_turn, self.selected)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if not self.is_mounted:
            return
        # Focus and hover also land here; only a change of the colours (a theme) needs a redraw.
        palette = tuple(self.get_component_rich_style(name) for name in sorted(self.COMPONENT_CLASSES))
        if palette != self._palette:
            self._palette = palette
            self._keys = [None] * len(self._keys)
            if self.state is not None:
                self._render_all()

    # -- selection ----------------------------------------------------------------------------
    def watch_selected(self, old: int | None, new: int | None) -> None:
        if self.state is not None:
            for idx in (old, new):
                if idx is not None and idx < self.turn_count:
                    self._render_turn(idx)
            self._layout()
            self.refresh()
            if new is not None and new < self.turn_count:
                self.call_after_refresh(self._scroll_to_turn, new)
        self.post_message(TurnSelected(new, self))

    def _scroll_to_turn(self, idx: int) -> None:
        if idx >= self.turn_count:
            return
        if idx == self.turn_count - 1:
            self._scroll_to_last_line()
        else:
            self.scroll_to_region(Region(0, self._offsets[idx], 1, len(self._lines[idx])), animate=False,
                                  top=True)

    def on_click(self, event: events.Click) -> None:
        line = round(self.scroll_y) + event.y
        idx = bisect_right(self._offsets, line) - 1
        if 0 <= idx < self.turn_count:
            self.selected = idx

    def action_select(self, step: int) -> None:
        if not self.turn_count:
            return
        current = self.turn_count - 1 if self.selected is None else self.selected
        self.selected = max(0, min(self.turn_count - 1, current + step))

    def action_select_edge(self, edge: int) -> None:
        if self.turn_count:
            self.selected = 0 if edge == 0 else self.turn_count - 1

    def select_turn(self, idx: int) -> None:
        """Select a turn from outside (a review step, a jump)."""
        if self.turn_count:
            self.selected = max(0, min(self.turn_count - 1, idx))
