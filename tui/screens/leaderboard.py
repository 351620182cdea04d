"""The per-target leaderboard over finished sessions (engine.interview.queries.leaderboard), the
kernel-vs-human verdict agreement from overrides (engine.interview.control.agreement) and, when there
are rubric sessions, SedarEval's per-category board (engine.metrics.rubric_board.rubric_leaderboard)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Label, Static

from engine.api import Engine
from tui.bridge import db_work
from tui.widgets.header import short

if TYPE_CHECKING:
    from tui.app import VivaApp

COLUMNS = [("target", 34), ("Score", 6), ("ΔS_f", 6), ("P+", 5), ("P−", 5), ("R+", 6), ("R−", 6), ("R", 6),
           ("tokens", 8), ("cost", 8), ("finished", 8), ("failed", 7)]


def load_leaderboard(engine: Engine) -> tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]:
    """The leaderboard, the judge–human agreement and the rubric (SedarEval) board, from the engine."""
    return engine.leaderboard(), engine.agreement(), engine.rubric_leaderboard()


def rubric_rows(entries: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """The rubric board as a table: one column per target (offline estimates labelled), rows for the
    overall figure, the mean of level-1 categories, then every category at every level (indented).
    A cell is ``figure (scored)``, with ``+k cj`` for items the judge could not score."""
    headers = ["category"] + [e["target"] + (" (offline estimate)" if e.get("offline_estimate") else "")
                              for e in entries]

    def cell(score: dict[str, Any] | None) -> str:
        if score is None:
            return ""
        text = f"{_f(score['figure'], 1)} ({score['count']})"
        return text + (f" +{score['cannot_judge']} cj" if score["cannot_judge"] else "")

    rows = [["overall", *[cell(e["overall"]) for e in entries]],
            ["mean of level 1", *[_f(e["macro"], 1) for e in entries]]]
    seen: dict[tuple[str, ...], int] = {}
    per_entry = []
    for e in entries:
        mine = {}
        for c in e["categories"]:
            path = tuple(c["category"])
            seen.setdefault(path, len(seen))
            mine[path] = c
        per_entry.append(mine)
    for path in sorted(seen, key=lambda p: tuple(seen[p[:k]] for k in range(1, len(p) + 1))):
        rows.append(["  " * (len(path) - 1) + path[-1], *[cell(m.get(path)) for m in per_entry]])
    return headers, rows


def _f(value: Any, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


class LeaderboardScreen(ModalScreen):
    """Targets ranked by Score across their finished sessions."""

    BINDINGS = [Binding("escape,l", "close", "Close", id="leaderboard_close")]

    @property
    def viva(self) -> VivaApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog wide"):
            yield Label("Leaderboard: targets over their finished sessions", classes="dialog-title")
            table: DataTable[Any] = DataTable(id="leaderboard-table", cursor_type="row", zebra_stripes=True)
            for name, width in COLUMNS:
                table.add_column(name, key=name, width=width)
            yield table
            yield Static("", id="agreement")
            yield Label("Rubric (SedarEval): Σ score × 100 / (count × 5) per category; (n) scored, cj = cannot judge",
                        id="rubric-title", classes="dialog-title")
            yield DataTable(id="rubric-table", cursor_type="row", zebra_stripes=True)

    def on_mount(self) -> None:
        db_work(self, self.viva.engine, load_leaderboard, then=self.loaded, name="leaderboard")

    def loaded(self, result: tuple[list[dict[str, Any]], dict[str, Any], list[dict[str, Any]]]) -> None:
        rows, agree, rubric = result
        table = self.query_one("#leaderboard-table", DataTable)
        for r in rows:
            table.add_row(short(r["target"], 34), _f(r["score"], 1), _f(r["delta_follow_up"]), _f(r["p_plus"], 2),
                          _f(r["p_minus"], 2), _f(r["r_plus"]), _f(r["r_minus"]), _f(r["r"]),
                          str(r["tokens_in"] + r["tokens_out"]), f"{r['cost']:.4f}",
                          f"{r.get('finished', 0)}/{len(r['sessions'])}", str(len(r.get("failed") or [])))
        if not rows:
            table.add_row("no sessions yet", *[""] * (len(COLUMNS) - 1))
        note = Text()
        if agree.get("agreement") is None:
            note.append("judge–human agreement: no verdict reviewed yet (confirm with k or override with o in "
                        "review)", style="dim")
        else:
            o = agree["overall"]
            kappa = f"κ {o['kappa']:.2f}" if o["kappa"] is not None else f"κ undefined ({o['kappa_note']})"
            note.append(f"judge–human agreement over {o['n']} reviewed verdict(s): raw {o['raw']:.0%}, {kappa}, "
                        f"met rate judge {o['judge_met_rate']:.0%} / human {o['human_met_rate']:.0%}")
            for label, groups in (("kind", agree["by_kind"]), ("benchmark", agree["by_benchmark"])):
                for key, g in groups.items():
                    k = f"κ {g['kappa']:.2f}" if g["kappa"] is not None else "κ undefined"
                    note.append(f"\n  {label} {key}: n {g['n']}, raw {g['raw']:.0%}, {k}", style="dim")
        self.query_one("#agreement", Static).update(note)
        board = self.query_one("#rubric-table", DataTable)
        if rubric:
            headers, body = rubric_rows(rubric)
            for i, name in enumerate(headers):
                board.add_column(short(name, 34), key=f"col{i}")
            for row in body:
                board.add_row(*row)
        else:
            board.display = False
            self.query_one("#rubric-title", Label).display = False
        table.focus()

    def action_close(self) -> None:
        self.dismiss(None)
