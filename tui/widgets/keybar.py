"""The footer: the keys of the screen as they apply now, keys that do not apply dimmed.

A key whose meaning follows the state (space: Pause, or Resume while paused) takes its words from
its node's ``describe_binding(action)`` when the node has one (see :func:`describe`).

A single widget that redraws one line when the bindings change, where Textual's ``Footer``
rebuilds a widget per key on every focus change (a full layout pass each time, which showed up
as key latency while an answer streams). Clicking a key runs its action, as in ``Footer``.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget

Item = tuple[str, str, bool, str, Any]  # key display, description, enabled, action, node


def describe(node: Any, binding: Binding) -> str:
    """A binding's description now: ``node.describe_binding(action)`` when it answers, else the binding's."""
    hook = getattr(node, "describe_binding", None)
    if callable(hook):
        text = hook(binding.action)
        if text:
            return text
    return binding.description


class KeyBar(Widget):
    """One line of ``key description`` pairs for the active bindings (``show=True``)."""

    COMPONENT_CLASSES = {"keybar--key", "keybar--description", "keybar--disabled"}
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        background: $footer-background;
        color: $footer-foreground;
    }
    KeyBar > .keybar--key { color: $footer-key-foreground; text-style: bold; }
    KeyBar > .keybar--description { color: $footer-description-foreground; }
    KeyBar > .keybar--disabled { color: $text-disabled; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.items: list[Item] = []
        self.spans: list[tuple[int, int, Item]] = []

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self.bindings_changed)
        self.call_after_refresh(self.bindings_changed, self.screen)  # once the screen is composed

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def bindings_changed(self, screen: Screen) -> None:
        if not self.is_attached or screen is not self.screen:
            return
        items: list[Item] = []
        seen: set[tuple[int, str]] = set()
        for active in screen.active_bindings.values():
            binding = active.binding
            if not binding.show or (id(active.node), binding.action) in seen:
                continue
            seen.add((id(active.node), binding.action))
            items.append((self.app.get_key_display(binding), describe(active.node, binding), active.enabled,
                          binding.action, active.node))
        if items != self.items:
            self.items = items
            self.refresh()

    def render(self) -> Text:
        key_style = self.get_component_rich_style("keybar--key")
        desc_style = self.get_component_rich_style("keybar--description")
        dim = self.get_component_rich_style("keybar--disabled")
        text = Text(no_wrap=True, overflow="crop")
        self.spans = []
        items = self.fitting(self.size.width)
        for item in items:
            key, description, enabled, _action, _node = item
            start = text.cell_len
            text.append(f" {key}", style=key_style if enabled else dim)
            text.append(f" {description} ", style=desc_style if enabled else dim)
            self.spans.append((start, text.cell_len, item))
        if any(i[2] and i not in items for i in self.items):  # a key that applies is left out: say where
            text.append(" f1", style=key_style)
            text.append(" more keys ", style=desc_style)
            return text
        if self.app.ENABLE_COMMAND_PALETTE:
            palette = self.app.get_key_display(Binding(self.app.COMMAND_PALETTE_BINDING, "command_palette"))
            hint = Text.assemble((palette, key_style), (" palette ", desc_style))
            gap = self.size.width - text.cell_len - hint.cell_len
            if gap > 0:
                text.append(" " * gap)
                text.append_text(hint)
        return text

    MORE = len(" f1 more keys ")

    def fitting(self, width: int) -> list[Item]:
        """The items the bar shows in ``width`` cells (issue 36: a key is never cut at the edge): all of
        them when they fit; else those that apply now, in order, as many as fit before " f1 more keys"."""
        def cells(item: Item) -> int:
            return len(f" {item[0]}") + len(f" {item[1]} ")

        if width <= 0 or sum(cells(i) for i in self.items) <= width:
            return list(self.items)
        out: list[Item] = []
        used = 0
        for item in (i for i in self.items if i[2]):
            if used + cells(item) + self.MORE > width:
                break
            out.append(item)
            used += cells(item)
        return out

    def on_click(self, event: events.Click) -> None:
        for start, end, item in self.spans:
            if start <= event.x < end and item[2]:
                event.stop()
                self.app.call_later(self.app.run_action, item[3], item[4])
                return
