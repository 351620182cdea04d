"""One line about the session on screen: who is examined on what, by which kernel and policy,
and where the interview stands (status, turn, pending interventions)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from tui.state import SessionState

STATUS_STYLES = {
    "running": "bold green", "paused": "bold yellow", "finished": "bold", "failed": "bold red",
    "interrupted": "bold red", "stopped": "bold yellow", "created": "dim", "replay": "bold cyan",
    "not_examined": "bold magenta",
}

STATUS_LABELS = {"not_examined": "not examined"}
"""How a stored status reads on screen, where it differs (``status:not-examined`` filters on it)."""


def status_label(status: str) -> str:
    """A session status as the app shows it (``not_examined`` reads "not examined")."""
    return STATUS_LABELS.get(status, status)


ERROR_CHARS = 400
"""The most of a session's error the header shows (it wraps; the full text is in the session's log)."""

RESUMABLE = ("failed", "interrupted", "stopped")


def short(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def turn_position(state: SessionState) -> str:
    """Where the interview is, in the numbering every screen uses (turns count from 0, as in the pane,
    the replay and ``g``): the latest turn, then how many of the planned turns are judged."""
    judged = sum(1 for t in state.turns if t.judged)
    planned = state.planned_turns
    latest = f"turn {len(state.turns) - 1}" if state.turns else "no turn yet"
    return f"  {latest} · {judged}/{planned} judged" if planned else f"  {latest} · {judged} judged"


class SessionHeader(Static):
    """The session line above the live, review and compare layouts."""

    def show(self, state: SessionState | None, extra: str = "", compact: bool = False) -> None:
        if state is None:
            self.update(Text("no session", style="dim"))
            return
        if compact:
            self.update(self._compact(state))
            return
        info, row = state.info, state.row
        line = Text()
        line.append(f"session {state.session_id} ", style="bold")
        line.append(f"● {status_label(state.status)}", style=STATUS_STYLES.get(state.status, ""))
        line.append(turn_position(state))
        line.append(f"  target {short(state.target, 40)}", style="bold")
        item = info.get("benchmark") or ""
        item_id = state.item_id
        line.append(f"  {item}/item {item_id}" if item else f"  item {item_id}")
        if info.get("topic"):
            line.append(f" ({short(info['topic'], 24)})")
        line.append(f"  {state.protocol}")
        kernel = info.get("kernel") or row.get("kernel") or ""
        if info.get("kernel_offline") or kernel == "offline":
            line.append("  kernel offline (deterministic, no LLM)", style="dim")
        else:
            line.append(f"  kernel {short(kernel, 30)}", style="dim")
        policy = info.get("policy") or row.get("policy")
        if policy and state.protocol != "task":
            line.append(f"  policy {policy}", style="dim")
        pending = state.pending_kinds()
        if pending:
            line.append("  requested: " + ", ".join(pending), style="bold yellow")
        if extra:
            line.append(f"  {extra}", style="italic")
        if state.not_examined:  # why there is no score (and no turn, usually)
            line.append("\nnot examined: ", style=STATUS_STYLES["not_examined"])
            line.append(short(state.not_examined, ERROR_CHARS), style="magenta")
        counts = state.note_counts()
        if counts:  # what the session went on without: each note is under its turn in the interview pane
            line.append("\nnotes: ", style="bold yellow")
            line.append(" · ".join(f"{label} ×{n}" for label, n in counts))
            line.append("  (under their turns)" if state.turns else "", style="dim")
        if state.error:  # on its own line(s), whole: the cause is at the end of the message
            line.append("\nerror: ", style="bold red")
            line.append(short(state.error, ERROR_CHARS), style="red")
            if state.status in RESUMABLE:
                line.append("  (R resumes the session)", style="dim")
        self.update(line)

    def _compact(self, state: SessionState) -> Text:
        """One short line, for half the screen (compare)."""
        line = Text()
        line.append(f"session {state.session_id} ", style="bold")
        line.append(f"● {status_label(state.status)}", style=STATUS_STYLES.get(state.status, ""))
        score = state.metrics.get("score")
        if score is not None:
            line.append(f"  Score {score:.1f}", style="bold")
        line.append(f"  {short(state.target, 24)}")
        notes = sum(n for _, n in state.note_counts())
        if notes:
            line.append(f"  notes {notes}", style="yellow")
        policy = state.info.get("policy") or state.row.get("policy")
        if policy and state.protocol != "task":
            line.append(f"  policy {policy}")
        return line
