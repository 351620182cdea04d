"""Bindings as the help screen and the command palette list them: one row per action with all its
keys (after the user's keymap), its id and whether it applies now (``check_action``)."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.screen import Screen

from tui.widgets.keybar import describe


def binding_rows(screen: Screen) -> list[dict[str, Any]]:
    """Active bindings of ``screen`` (its focus chain, the screen and the app), one per action."""
    app = screen.app
    rows: dict[tuple[int, str], dict[str, Any]] = {}
    for key, active in screen.active_bindings.items():
        binding: Binding = active.binding
        ident = (id(active.node), binding.action)
        display = app.get_key_display(Binding(key, binding.action))
        row = rows.get(ident)
        if row is None:
            rows[ident] = {
                "key": display, "action": binding.action, "node": active.node,
                "description": describe(active.node, binding) or binding.action.replace("_", " "),
                "id": binding.id, "enabled": active.enabled, "tooltip": binding.tooltip or "",
                "show": binding.show,
            }
        elif display not in row["key"].split(" / "):
            row["key"] += f" / {display}"
    return sorted(rows.values(), key=lambda r: (not r["show"], r["node"] is app, r["description"].lower()))
