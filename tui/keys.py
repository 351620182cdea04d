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


class KeymapError(ValueError):
    """A ``keys:`` remapping in viva.yaml that names no binding or gives two bindings one key."""


def _bindings(*classes: type) -> list[Binding]:
    out: list[Binding] = []
    for cls in classes:
        for klass in reversed(cls.__mro__):
            for b in klass.__dict__.get("BINDINGS", []):
                if isinstance(b, Binding) and b.id:
                    out.append(b)
    return out


def binding_contexts() -> dict[str, list[Binding]]:
    """Where bindings are active together: per screen, the app's, the screen's and its widgets'."""
    from tui.app import VivaApp
    from tui.screens import dialogs
    from tui.screens.compare import CompareScreen
    from tui.screens.editor import RubricEditor
    from tui.screens.help import HelpScreen
    from tui.screens.home import HomeScreen
    from tui.screens.leaderboard import LeaderboardScreen
    from tui.screens.live import LiveScreen
    from tui.screens.new_interview import NewInterviewDialog
    from tui.screens.review import ReviewScreen
    from tui.widgets.interview import InterviewPane
    from tui.widgets.sessions import SessionsTable

    contexts = {
        "Home": (HomeScreen, SessionsTable), "Live": (LiveScreen, InterviewPane),
        "Review": (ReviewScreen, InterviewPane), "Compare": (CompareScreen,), "Rubric editor": (RubricEditor,),
        "Leaderboard": (LeaderboardScreen,), "Help": (HelpScreen,), "New interview": (NewInterviewDialog,),
    }
    for name in dir(dialogs):
        obj = getattr(dialogs, name)
        if isinstance(obj, type) and issubclass(obj, dialogs.Dialog) and obj is not dialogs.Dialog:
            contexts[name] = (obj,)
    return {name: _bindings(VivaApp, *classes) for name, classes in contexts.items()}


MODIFIERS = ("ctrl", "shift", "alt", "meta", "super", "hyper")
"""The modifiers Textual reads in a key (``ctrl+shift+up``)."""


def key_problem(key: str) -> str | None:
    """Why one key (``ctrl+p``, ``f5``, ``question_mark``, ``a``) is not one Textual knows, else None.

    A key is modifiers from :data:`MODIFIERS` joined by ``+`` to a key name: one printable character, a
    name of ``textual.keys.Keys`` (``escape``, ``pageup``, ``f1``-``f24``...), or the name Textual gives a
    character (``question_mark``, ``slash``, ``plus``, ``full_stop``: its Unicode name, lower case)."""
    from textual import keys as tk

    *mods, name = key.split("+")
    bad = [m for m in mods if m not in MODIFIERS]
    if bad or not name:
        what = f"{bad[0]!r} is not a modifier ({', '.join(MODIFIERS)})" if bad else "nothing after the last +"
        return f"{key!r}: {what}"
    known = ({v.value.split("+")[-1] for v in tk.Keys if not v.value.endswith(">")}
             | set(tk.KEY_NAME_REPLACEMENTS.values()) | set(tk.KEY_TO_UNICODE_NAME))
    if name in known or (len(name) == 1 and name.isprintable()) or tk.key_to_character(name) is not None:
        return None
    return f"{key!r}: {name!r} is not a key name Textual knows (e.g. a, f5, escape, pageup, question_mark)"


def check_keymap(keymap: dict[str, str]) -> None:
    """Refuse a keymap that names an unknown binding id, a key Textual does not know (:func:`key_problem`),
    or gives a key to two bindings of one screen.

    Raises:
        KeymapError: every problem, one per line, naming the key and the ids (and the screen).
    """
    if not keymap:
        return
    contexts = binding_contexts()
    known = {b.id for bindings in contexts.values() for b in bindings}
    problems = [f"keys: {ident!r} is not a binding id (the help screen, F1, lists every id)"
                for ident in keymap if ident not in known]
    for ident, keys in keymap.items():
        parts = [k.strip() for k in str(keys).split(",")]
        if not any(parts):
            problems.append(f"keys: {ident}: no key given")
        problems += [f"keys: {ident}: {why}" for why in (key_problem(k) for k in parts if k) if why]
    for screen, bindings in contexts.items():
        owner: dict[str, set[str]] = {}
        for b in bindings:
            keys = keymap.get(b.id or "", b.key)
            for key in (k.strip() for k in str(keys).split(",")):
                if key:
                    owner.setdefault(key, set()).add(b.id or "")
        for key, ids in owner.items():
            moved = sorted(i for i in ids if i in keymap)
            if len(ids) > 1 and moved:
                problems.append(f"keys: {key!r} would be both {' and '.join(sorted(ids))} on {screen} "
                                f"(remapped: {', '.join(moved)}); choose another key")
    if problems:
        raise KeymapError("\n".join(dict.fromkeys(problems)))
