"""The metric panel: the session score with a sparkline over turns, the selected turn's s, Δs and
cos, the policy's probabilities for the next turn, the running P+/P−/R, tokens, cost and latency.

Every figure comes from the engine's events (``verdicts``, ``policy.decided``, ``metrics``); the
panel only lays them out.
"""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import Digits, Sparkline, Static

from tui.board import challenge_line
from tui.state import SessionState
from tui.widgets.interview import fmt_float, fmt_signed

BAR_WIDTH = 12

NARROW = 50
"""The panel's width under which figures are laid out shorter."""


def bar(p: float, width: int = BAR_WIDTH) -> str:
    filled = int(round(max(0.0, min(1.0, p)) * width))
    return "█" * filled + "░" * (width - filled)


def _f(value: Any, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _because(state: Any) -> str:
    """The state the policy decided from (score, Δs, cos of the turn before), as a second line."""
    if not isinstance(state, list | tuple) or len(state) < 3:
        return ""
    first = len(state) > 3 and state[3] == 1.0  # prev=none: Δs and cos are not measured yet
    delta = "–" if first else f"{state[1]:+.2f}"
    cos = "–" if first else f"{state[2]:.2f}"
    return f"\n  from s {state[0]:.2f} Δs {delta} cos {cos}"  # short: fits a 100-column terminal (issue 36)


class MetricPanel(VerticalScroll, can_focus=True):
    """Figures of one session; ``compact`` leaves out the per-challenge breakdown."""

    ALLOW_MAXIMIZE = True

    def __init__(self, *, id: str | None = None, compact: bool = False):
        super().__init__(id=id)
        self.compact = compact
        self._shown: tuple[Any, ...] | None = None
        self._last: tuple[SessionState, int | None] | None = None

    def compose(self) -> ComposeResult:
        with Horizontal(id="score-row"):
            yield Digits("–", id="score-digits")
            yield Static("", id="score-caption")
        yield Sparkline([], id="score-sparkline", summary_function=max)
        yield Static("", id="metric-figures")

    def show(self, state: SessionState, turn_idx: int | None) -> None:
        """Lay out the figures for the selected turn (re-rendered only when they changed)."""
        self._last = (state, turn_idx)
        turn = state.turn(turn_idx)
        m = state.metrics
        key = (id(m), state.rev if turn is None else (turn.idx, turn.score, turn.delta, turn.cos),
               id(state.decision), state.status, tuple(state.pending), self.narrow)
        if key == self._shown:
            return
        self._shown = key
        score = m.get("score")
        self.query_one("#score-digits", Digits).update("–" if score is None else f"{score:.1f}")
        planned = state.planned_turns
        done = sum(1 for t in state.turns if t.judged)
        caption = Text("Score", style="bold")
        caption.append(f"\n{done}/{planned} turns judged" if planned else f"\n{done} turns judged", style="dim")
        self.query_one("#score-caption", Static).update(caption)
        scores = m.get("scores") or [t.score for t in state.turns if t.judged]
        self.query_one("#score-sparkline", Sparkline).data = [float(s) for s in scores]
        self.query_one("#metric-figures", Static).update(self._figures(state, turn_idx))

    @property
    def narrow(self) -> bool:
        """Under :data:`NARROW` columns the figures are laid out shorter (nothing wraps mid-figure)."""
        return 0 < self.size.width < NARROW

    def on_resize(self) -> None:
        if self._last is not None:
            self.show(*self._last)

    def _figures(self, state: SessionState, turn_idx: int | None) -> Table:
        m = state.metrics
        turn = state.turn(turn_idx)
        narrow = self.narrow
        width = BAR_WIDTH // 2 if narrow else BAR_WIDTH
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        if turn is not None:
            gap = "\n" if narrow else "   "
            grid.add_row(f"turn {turn.idx}", f"s {fmt_float(turn.score)}   Δs {fmt_signed(turn.delta)}{gap}"
                                             f"cos {fmt_float(turn.cos)}")
        if turn is not None and turn.challenge:
            grid.add_row("challenge", Text(challenge_line(turn.challenge)))
        decision = state.decision
        pending = state.pending_kinds()
        if decision and decision.get("probs"):
            fu, ch = decision["probs"][0], decision["probs"][1]
            who = decision.get("actor", "policy")
            grid.add_row(f"policy t{decision.get('turn')}",
                         Text(f"follow-up {bar(fu, width)} {fu:.2f}\nchallenge {bar(ch, width)} {ch:.2f}\n"
                              f"→ {decision.get('action')} ({who}){_because(decision.get('state'))}"))
        else:
            grid.add_row("policy", Text("no decision yet" if state.protocol == "adaptive" else f"not used ({state.protocol})",
                                        style="dim"))
        if pending:
            grid.add_row("requested", Text(", ".join(pending), style="bold yellow"))
        graded = m.get("graded")
        if graded is not None:  # JudgeAgent: figures from the engine's metrics event
            track = " ".join(f"{'✔' if s['right'] else '✘'}{s['asked'][0]}" for s in graded["track"])
            grid.add_row("eval score", f"{_f(graded['evaluation_score'])}  ({graded['questions']} graded)")
            grid.add_row("difficulty", track or "–")
            v = graded.get("validation")
            if v:
                grid.add_row("ACC1 / ACC2", f"{_f(v['acc1'])} / {_f(v['acc2'])}")
                grid.add_row("CR / CtE / Δ", f"{_f(v['cr'])} / {_f(v['cte'])} / {_f(v['delta'])}")
            else:
                grid.add_row("validation", Text("after the feedback", style="dim"))
            return grid
        grid.add_row("ΔS_f", f"{_f(m.get('delta_follow_up'))}  ({m.get('follow_ups', 0)} follow-ups)")
        grid.add_row("challenges", str(m.get("challenges", 0)))
        grid.add_row("P+ / P− / P0", f"{_f(m.get('p_plus'), 2)} / {_f(m.get('p_minus'), 2)} / {_f(m.get('p_zero'), 2)}")
        if not self.compact:
            grid.add_row("M+ / M−", f"{_f(m.get('m_plus'))} / {_f(m.get('m_minus'))}")
            grid.add_row("R+ / R−", f"{_f(m.get('r_plus'))} / {_f(m.get('r_minus'))}")
        grid.add_row("R", _f(m.get("r")))
        if m.get("tokens_unknown"):  # a server sent no counts (llama-cpp-python's streams): not 0
            grid.add_row("tokens", f"unknown ({m['tokens_unknown']} call(s) uncounted)")
        else:
            tokens_in, tokens_out = m.get("tokens_in", 0) or 0, m.get("tokens_out", 0) or 0
            grid.add_row("tokens", f"{tokens_in} in / {tokens_out} out")
        # the cost is the price times the counts: unknown with them (issue 36), never $0 beside "unknown"
        grid.add_row("cost", "unknown" if m.get("tokens_unknown") else f"${m.get('cost') or 0.0:.4f}")
        latency = m.get("mean_latency_ms")
        grid.add_row("latency", "–" if latency is None else f"{latency:.0f} ms mean")
        return grid
