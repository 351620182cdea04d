"""``viva run``, ``viva resume`` and ``viva demo``."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from engine.termsafe import termsafe, termsafe_value
from tui.cli.context import get_engine


def escape(text: str) -> str:
    from rich.markup import escape as _escape

    return _escape(termsafe(text))


class LivePrinter:
    """Prints an interview as its events arrive (the headless demo and ``viva run --live``)."""

    def __init__(self, console: Any, several: bool = False):
        self.console = console
        self.several = several  # several sessions at once: tag lines, print answers whole
        self.streaming: set[tuple[int, int]] = set()
        self.protocols: dict[int, str] = {}

    def __call__(self, sid: int, kind: str, p: dict[str, Any]) -> None:
        c = self.console
        if self.several and kind == "answer.delta":
            return
        p = termsafe_value(p)  # every string of the event is foreign or may be: shown safe, stored as said
        tag = f"[dim]s{sid}[/] " if self.several else ""
        if kind in ("session.started", "session.resumed"):
            self.protocols[sid] = p.get("protocol", "")
            c.rule(f"session {sid}: {escape(p['target'])} on item {p['item_id']} ({p['protocol']}, kernel {p['kernel']})")
            if kind == "session.resumed":
                c.print("[dim]resumed: finished turns are not redone[/]")
            for crit in p["criteria"]:
                c.print(f"  [dim]{crit['cid']} ({crit['kind']}, w={crit['weight']:g}): {escape(crit['text'][:100])}[/]")
        elif kind == "policy.decided":
            probs = p.get("probs") or [0, 0]
            state = p.get("state") or []
            why = ""
            if len(state) >= 4:  # the state it decided from; Δs and cos are unmeasured after the first turn
                first = state[3] == 1.0
                why = (f" (from score {state[0]:.2f}, Δs {'–' if first else format(state[1], '+.2f')}, "
                       f"cos {'–' if first else format(state[2], '.2f')})")
            c.print(f"{tag}[dim]policy: follow-up {probs[0]:.2f} / challenge {probs[1]:.2f} -> {p['action']}{why}[/]")
        elif kind == "turn.started":
            c.print(f"\n{tag}[bold cyan]Q{p['turn']} \\[{p['action']}, {p['actor']}][/] {escape(p['question'])}")
        elif kind == "answer.delta":
            if (sid, p["turn"]) not in self.streaming:
                self.streaming.add((sid, p["turn"]))
                c.print("[bold green]A:[/] ", end="")
            c.print(p["text"], end="", markup=False, highlight=False)
        elif kind == "answer.done":
            if (sid, p["turn"]) not in self.streaming:
                c.print(f"{tag}[bold green]A:[/] ", end="")
                c.print(p["answer"], markup=False, highlight=False)
            else:
                c.print()
        elif kind == "verdicts":
            if p["score"] is None or self.protocols.get(sid) == "rubric":
                return  # a rubric session's judgement is printed from its rubric.scored event
            met = [v["cid"] for v in p["verdicts"] if v["met"]]
            delta = "" if p["delta"] is None else f"  Δs {p['delta']:+.2f}"
            cos = "" if p.get("cos") is None else f"  cos {p['cos']:.2f}"
            c.print(f"{tag}[yellow]score {p['score']:.2f}{delta}{cos}  met: {', '.join(met) or 'none'}[/]")
            if p.get("challenge"):
                from tui.board import challenge_line

                c.print(f"{tag}[yellow]challenge {escape(challenge_line(p['challenge']))}[/]")
        elif kind == "rubric.scored":
            c.print(f"{tag}[yellow]{escape(rubric_score_line(p))}[/]")
            reasoning = (p.get("reasoning") or "").strip()
            if reasoning:
                c.print(f"{tag}[dim]{escape(reasoning[:600])}{'…' if len(reasoning) > 600 else ''}[/]")
        elif kind == "session.note":  # a bad reply that cost a turn (cannot judge, skipped, not rated...)
            where = f"turn {p['turn']}: " if p.get("turn", -1) >= 0 else ""
            c.print(f"{tag}[magenta]{escape(where + p.get('what', ''))}: {escape((p.get('text') or '')[:300])}[/]")
        elif kind == "session.finished" and p.get("status") == "not_examined":
            c.print(f"[bold magenta]session {sid} not examined: {escape((p.get('reason') or '')[:300])}[/]")
        elif kind == "session.finished":
            score = p.get("score")
            c.print(f"[bold]session {sid} finished: Score {score:.1f}[/]" if score is not None else
                    f"[bold]session {sid} finished[/]")
        elif kind == "session.failed":
            c.print(f"[bold red]session {sid} failed: {escape(p['error'])}[/]")
        elif kind == "session.stopped":
            if p.get("turn") is not None:
                if (sid, p["turn"]) in self.streaming:
                    c.print()
                c.print(f"[bold yellow]session {sid} stopped by the evaluator during turn {p['turn']} "
                        f"(partial answer kept; `viva resume {sid}` asks it again)[/]")
            else:
                c.print(f"[bold yellow]session {sid} stopped by the evaluator after turn {p['after_turn']} "
                        f"(`viva resume {sid}` continues)[/]")


def rubric_score_line(p: dict[str, Any]) -> str:
    """One line for a ``rubric.scored`` event: the 0–5 score (or "cannot judge") and how it was reached."""
    label = " (offline estimate)" if p.get("offline_estimate") else ""
    if p.get("score") is None:
        problems = "; ".join(p.get("problems") or [])
        return f"rubric: cannot judge after {p.get('attempts', 0)} judge replies{label} ({problems})"
    asked = f", {p['attempts']} judge replies" if p.get("attempts", 0) > 1 else ""
    return f"rubric score {p['score']:g} / {p.get('max_score', 5):g}{label}{asked}"


def _interview_option(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Check a ``viva run`` option that is an ``interview:`` setting by the config's own rule and message."""
    from engine.api import ConfigError, check_interview_setting

    if value is None:
        return None
    try:
        return check_interview_setting(param.name or "", value)
    except ConfigError as exc:
        raise click.BadParameter(str(exc)) from None


def _console(to_stderr: bool) -> Any:
    """A console that keeps tables readable when the output is a pipe or a file (no terminal width)."""
    import sys as _sys

    from tui.cli.console import SafeConsole as Console

    stream = _sys.stderr if to_stderr else _sys.stdout
    return Console(stderr=to_stderr, width=None if stream.isatty() else 140)


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def print_target_table(console: Any, rows: list[dict[str, Any]], main: bool = True) -> None:
    """Per-target figures (``main``: the Dynamism table; a run prints :func:`print_board` instead),
    then Professionalism/Stability and the graded figures when there are any."""
    from rich.table import Table

    from tui.board import hold_cell

    table = Table(title="per target (figures over finished sessions)")
    for col in ("target", "Score", "ΔS_f", "hold (n)", "P+", "M+", "P−", "M−", "R+", "R−", "R", "finished", "failed",
                "cannot judge", "not examined", "tokens", "cost", "sessions"):
        table.add_column(col, justify="left" if col == "target" else "right")
    for r in rows:
        failed = r.get("failed") or []
        table.add_row(r["target"], _fmt(r["score"], 1), _fmt(r["delta_follow_up"]), hold_cell(r.get("hold")),
                      _fmt(r["p_plus"]),
                      _fmt(r["m_plus"]), _fmt(r["p_minus"]), _fmt(r["m_minus"]), _fmt(r["r_plus"]),
                      _fmt(r["r_minus"]), _fmt(r["r"]), f"{r.get('finished', 0)}/{len(r['sessions'])}",
                      str(len(failed)), f"{r.get('cannot_judge_turns', 0)} turns",
                      str(len(r.get("not_examined") or [])),
                      "unknown" if r.get("tokens_unknown")  # a server sent no counts
                      else str(r["tokens_in"] + r["tokens_out"]),
                      "unknown" if r.get("tokens_unknown") else f"{r['cost']:.4f}", ",".join(map(str, r["sessions"])))
    if main:
        console.print(table)
    rated = [(r["target"], r["ratings"]) for r in rows if r.get("ratings")]
    figures = ("professionalism", "accuracy", "user_satisfaction", "clarity", "stability", "coherence",
               "question_handling", "challenge_handling")
    if rated and not any(isinstance(fig.get(k), int | float) for _, fig in rated for k in figures):
        # an offline run: no conversation was rated, so one line says so instead of a table of blanks
        console.print(f"Professionalism and Stability: needs an LLM judge "
                      f"({sum(fig['not_rated'] for _, fig in rated)} conversation(s) not rated by the offline kernel)")
        rated = []
    if rated:
        p = Table(title="Professionalism and Stability (judge's 1-10 ratings of whole conversations)")
        for col in ("target", "rated", "Professionalism", "accuracy", "satisfaction", "clarity", "Stability",
                    "coherence", "questions", "challenges"):
            p.add_column(col, justify="left" if col == "target" else "right")
        for target, fig in rated:
            def show(v):
                return f"{v:.1f}" if isinstance(v, int | float) else "needs an LLM judge"
            p.add_row(target, f"{fig['rated']}/{fig['rated'] + fig['not_rated']}", show(fig["professionalism"]),
                      show(fig["accuracy"]), show(fig["user_satisfaction"]), show(fig["clarity"]),
                      show(fig["stability"]), show(fig["coherence"]), show(fig["question_handling"]),
                      show(fig["challenge_handling"]))
        console.print(p)
    graded = [(r["target"], r["graded"]) for r in rows if r.get("graded")]
    if graded:
        g = Table(title="graded (JudgeAgent): evaluation score and validation by re-answering")
        for col in ("target", "questions", "extension", "eval score", "N", "ACC1", "ACC2", "CR", "CtE", "Δ"):
            g.add_column(col, justify="left" if col == "target" else "right")
        for target, fig in graded:
            v = fig.get("validation") or {}
            g.add_row(target, str(fig["questions"]), str(fig["extension_questions"]), _fmt(fig["evaluation_score"]),
                      str(v.get("n", "-")), _fmt(v.get("acc1")), _fmt(v.get("acc2")), _fmt(v.get("cr")),
                      _fmt(v.get("cte")), _fmt(v.get("delta")))
        console.print(g)


def print_rubric_board(console: Any, entries: list[dict[str, Any]]) -> None:
    """SedarEval's leaderboard: one column per target (offline estimates labelled), one row per
    category at every level, with the overall and the mean of the level-1 figures."""
    from rich.table import Table

    if not entries:
        return
    table = Table(title="rubric leaderboard (SedarEval): Σ score × 100 / (count × 5); (n) scored, cj = cannot judge")
    table.add_column("category")
    for e in entries:
        table.add_column(e["target"] + (" (offline estimate)" if e.get("offline_estimate") else ""), justify="right")

    def cell(score: dict[str, Any] | None) -> str:
        if score is None:
            return ""
        text = f"{_fmt(score['figure'], 1)} ({score['count']})"
        return text + (f" +{score['cannot_judge']} cj" if score["cannot_judge"] else "")

    table.add_row("overall", *[cell(e["overall"]) for e in entries])
    table.add_row("mean of level-1 categories", *[_fmt(e["macro"], 1) for e in entries])
    seen: dict[tuple[str, ...], int] = {}
    by_entry: list[dict[tuple[str, ...], dict[str, Any]]] = []
    for e in entries:
        mine = {}
        for c in e["categories"]:
            path = tuple(c["category"])
            seen.setdefault(path, len(seen))
            mine[path] = c
        by_entry.append(mine)
    for path in sorted(seen, key=lambda p: tuple(seen[p[:k]] for k in range(1, len(p) + 1))):
        table.add_row("  " * (len(path) - 1) + path[-1], *[cell(m.get(path)) for m in by_entry])
    console.print(table)
    not_judged = [s for e in entries for s in e.get("not_judged") or []]
    if not_judged:
        console.print(f"[dim]rubric sessions ended before every turn was asked (not judged): "
                      f"{', '.join(map(str, not_judged))}[/]")


def print_board(console: Any, board: dict[str, Any]) -> None:
    """The scoped leaderboard: n and 95% intervals, paired comparisons, κ with its n."""
    from rich.table import Table

    from tui.board import ability_notes, agreement_line, cells, columns_for, comparison, legend, method_line

    table = Table(title=f"leaderboard, {board['scope']['label']} (figures over finished sessions, per benchmark)")
    columns = columns_for(board)
    for header, _, _ in columns:
        table.add_column(header, justify="left" if header in ("target", "bench") else "right")
    for r in board["rows"]:
        table.add_row(*cells(r, columns=columns))
    console.print(table)
    for line in legend(board):
        console.print(f"[dim]{escape(line)}[/]")
    for row in board["rows"]:
        if row.get("chance") and row["chance"]["under"]:
            console.print(escape(f"{row['target']} on {row['benchmark']}: {row['chance']['note']}"))
    for line in ability_notes(board):
        console.print(f"[dim]{escape(line)}[/]")
    for c in board["comparisons"]:
        console.print("paired: " + comparison(c))
    console.print(f"[dim]{method_line(board)}[/]")
    console.print(agreement_line(board["agreement"]))


def run_summary(run_id: int, rows: list[dict[str, Any]], failed: dict[int, str]) -> str:
    """The line a run ends with: its sessions counted by outcome and the command that lists them (not the
    ids: a run of hundreds of sessions would print hundreds)."""
    total = sum(len(r["sessions"]) for r in rows)
    finished = sum(r.get("finished", 0) for r in rows)
    not_examined = sum(len(r.get("not_examined") or []) for r in rows)
    parts = [f"{finished} finished"]
    if failed:
        parts.append(f"{len(failed)} failed")
    if not_examined:
        parts.append(f"{not_examined} not examined")
    rest = total - finished - len(failed) - not_examined
    if rest > 0:
        parts.append(f"{rest} not ended (`viva resume run:{run_id}`)")
    return (f"run {run_id}: {total} sessions of {len(rows)} target(s), {', '.join(parts)}; "
            f"list them with `viva sessions --filter run:{run_id}`")


GATE_EXIT = 3
"""``viva run``'s exit status when a target is under its threshold (``--fail-under``, ``min_score``) and no
session failed (a failed session is status 1)."""


def _report(engine, run_id: int, errors: dict[int, str | None], as_json: bool, console: Any,
            targets_as_given: list[str] | None = None, gate: bool = False, fail_under: float | None = None) -> None:
    ids = [r["id"] for r in engine.run_sessions(run_id)]
    rows = engine.target_table(ids)
    rubric = engine.rubric_leaderboard(ids)
    board = engine.board(run=run_id)
    failed = {sid: e for sid, e in errors.items() if e}
    if as_json:
        click.echo(json.dumps({"run": run_id, "targets": rows, "leaderboard": board,
                               **({"rubric": rubric} if rubric else {}),
                               "agreement": board["agreement"],
                               "failed": [{"session": s, "error": e} for s, e in failed.items()]},
                              ensure_ascii=False, indent=2))
    else:
        print_board(console, board)
        print_target_table(console, rows, main=False)
        print_rubric_board(console, rubric)
        console.print(run_summary(run_id, rows, failed))
        for sid, err in failed.items():
            console.print(f"[red]session {sid} failed: {err}[/]")
    below = engine.below_threshold(run_id, fail_under) if gate else []
    for b in below:  # one line per target under its threshold, on stderr (stdout may be JSON)
        click.echo(b["line"], err=True)
    if failed:
        sys.exit(1)
    if below:
        sys.exit(GATE_EXIT)


def _run_with_progress(engine, run_id: int, console: Any, live: bool, quiet: bool = False, as_json: bool = False,
                       workers: int | None = None):
    """Execute a run with its progress on stderr (sessions and judged turns: done/total, rate, time
    left, failures); with ``--live`` the interviews are printed instead, with ``--quiet`` nothing.
    ``workers``: processes to spread the sessions over (None: the run's own setting)."""
    from tui.cli.progress import ProgressDisplay, choose_mode

    start = engine.run_progress(run_id)
    printer = LivePrinter(console, several=start["sessions"] > 1) if live else None
    with ProgressDisplay("off" if live else choose_mode(quiet, as_json=as_json), prefix="viva: ") as progress:
        progress.add("sessions", "sessions", start["sessions"], "sessions", done=start["done"])
        progress.add("turns", "turns judged", start["turns_planned"], "turns", done=start["turns_judged"])

        def on_event(sid: int, kind: str, payload: dict[str, Any]) -> None:
            if printer is not None:
                printer(sid, kind, payload)
            if kind == "verdicts" and not payload.get("rescore"):
                progress.update("turns", advance=1)
            elif kind in ("session.finished", "session.stopped"):
                progress.update("sessions", advance=1)
            elif kind == "session.failed":
                progress.update("sessions", advance=1, failed=1)

        import asyncio  # here, not at the top: `viva sessions` and `--help` never need it

        errors = asyncio.run(engine.execute_run(run_id, on_event, workers))
        final = engine.run_progress(run_id)  # the store's count (a target that never started has no event)
        progress.tasks["sessions"].failed = final["failed"] + sum(
            1 for sid, e in errors.items() if e and sid not in _failed_sessions(engine, run_id))
        progress.update("sessions", done=final["done"])
        # the planned turns are each session's most; once every session ended, what was judged is the whole
        ended = final["done"] >= final["sessions"]
        progress.update("turns", done=final["turns_judged"], total=final["turns_judged"] if ended else None)
        return errors


def _failed_sessions(engine, run_id: int) -> set[int]:
    return {r["id"] for r in engine.run_sessions(run_id) if r["status"] == "failed"}


def _warn(console: Any, warnings: list[str]) -> None:
    err = _console(True)
    for w in warnings:
        err.print(f"[yellow]warning:[/] {escape(w)}", soft_wrap=True)


@click.command()
@click.option("--bench", "bench", required=True, help="Benchmark name (see `viva bench list`).")
@click.option("--items", default=None, help="Comma-separated item ids (default: all items), or `adaptive`: "
                                             "one item at a time, the most informative at the target's ability "
                                             "(needs `viva bench calibrate`).")
@click.option("--budget", type=int, default=None, help="--items adaptive: items per target at most (default: all).")
@click.option("--se", "se", type=float, default=None,
              help="--items adaptive: stop once the ability's standard error is at most this.")
@click.option("--common", "common", type=int, default=None,
              help="--items adaptive: every Nth item from an order shared by all targets (seeded) instead of by "
                   "information (3 ranked better from 20%% of the items on NQ301; docs/calibration.md).")
@click.option("--target", "targets", multiple=True, required=True,
              help="openai:MODEL@BASE_URL, python:module:Class, local, kb:NAME (a knowledge base's own sentences, a reference), or a name from the config. Repeatable.")
@click.option("--target-system", "target_systems", multiple=True, metavar="FILE",
              help="A system prompt (a UTF-8 text file) for every endpoint target, replacing the config's; "
                   "repeatable: each target runs under each prompt, and each pair is its own row "
                   "(the target's name gets #sys:HASH of the prompt).")
@click.option("--kernel", default=None, help="offline, config, or openai:MODEL@BASE_URL (default: config's, else offline).")
@click.option("--protocol", type=click.Choice(["adaptive", "task", "graded", "rubric"]), default=None,
              help="Default: each item's own protocol (an item whose protocol does not run in this version is "
                   "refused unless you ask for adaptive explicitly).")
@click.option("--turns", type=int, default=None, callback=_interview_option,
              help="Turns per adaptive session, the initial question included (1-1000; default 6, interview.turns).")
@click.option("--policy", default=None, help="onnx, threshold, random, always-follow-up, always-challenge.")
@click.option("--concurrency", type=int, default=None, callback=_interview_option,
              help="Sessions at once (default 8).")
@click.option("--workers", type=int, default=None, callback=_interview_option,
              help="Processes to spread the sessions over (1-64), sharing the store (default 1: this process; "
                   "interview.workers in the config). --concurrency stays the total, shared among them.")
@click.option("--seed", type=int, default=None, help="Seed for the policy's sampling (default 0).")
@click.option("--epochs", type=int, default=None, callback=_interview_option,
              help="Run each item K times per target (1-100; default 1, interview.epochs): epoch e has seed SEED+e, sent "
                   "to endpoint targets as the request's seed, cached apart; the leaderboard shows the per-item "
                   "spread and an interval over items and epochs. Set the target's temperature above 0.")
@click.option("--api-key-env", default=None, help="Name of the environment variable holding the API key.")
@click.option("--trust-eval-code", is_flag=True,
              help="Run imported eval_code even without bubblewrap isolation (like trust_remote_code).")
@click.option("--fail-under", type=click.FloatRange(0, 100), default=None, metavar="SCORE",
              help="Exit with status 3, one line per target on stderr, when a target's Score is under SCORE "
                   "(or it finished nothing); a target's min_score in the config wins. For CI.")
@click.option("--live", is_flag=True, help="Print the interviews as they happen.")
@click.option("--quiet", is_flag=True, help="No progress display (it goes to stderr otherwise).")
@click.option("--json", "as_json", is_flag=True, help="Print the per-target results as JSON.")
@click.pass_context
def run(ctx, bench, items, budget, se, common, targets, target_systems, kernel, protocol, turns, policy, concurrency,
        workers, seed, epochs, fail_under, api_key_env, trust_eval_code, live, quiet, as_json):
    """Interview every target on every item of a benchmark (or on the items chosen adaptively)."""
    from engine.api import RunRequest

    system_prompts = _read_prompts(target_systems)
    engine = get_engine(ctx)
    engine.sweep_stale_work()  # what a killed run left: work folders of ended sessions, eval folders
    item_ids = None
    console = _console(as_json)
    if epochs is not None and epochs > 1 and items == "adaptive":
        raise click.BadParameter("--epochs goes with a fixed set of items, not --items adaptive")
    if (budget is not None or se is not None or common is not None) and items != "adaptive":
        raise click.BadParameter("--budget, --se and --common go with --items adaptive")
    if items == "adaptive":
        _warn(console, engine.target_warnings(targets, api_key_env))
        request = RunRequest(bench=bench, targets=list(targets), kernel=kernel, protocol=protocol, turns=turns,
                             policy=policy, concurrency=concurrency, workers=workers, seed=seed,
                             api_key_env=api_key_env, trust_eval_code=trust_eval_code,
                             system_prompts=system_prompts)
        _run_adaptive(engine, request, budget, se, console, as_json, common)
        _refit(engine, bench)
        return
    if items:
        try:
            item_ids = [int(x) for x in items.split(",") if x.strip()]
        except ValueError:
            raise click.BadParameter(f"{items!r}: expected comma-separated item ids like 12,13") from None
    _warn(console, engine.target_warnings(targets, api_key_env))
    engine.ensure_writable()  # a read-only or damaged home says so first, before the targets are probed
    dead = engine.unreachable_targets(targets, api_key_env)
    if dead:  # before planning: no session is created for a server that is not there
        raise click.ClickException("\n".join(dead))
    try:
        run_id = engine.plan_run(RunRequest(bench=bench, targets=list(targets), items=item_ids, kernel=kernel,
                                              protocol=protocol, turns=turns, policy=policy,
                                              concurrency=concurrency, workers=workers, seed=seed,
                                              api_key_env=api_key_env,
                                              trust_eval_code=trust_eval_code, system_prompts=system_prompts,
                                              epochs=epochs))
    except Exception as exc:
        raise click.ClickException(str(exc)) from None
    _console(True).print(f"run {run_id} planned ({bench}); resume with `viva resume run:{run_id}` if interrupted",
                         style="dim")
    errors = _run_with_progress(engine, run_id, console, live, quiet, as_json)
    _refit(engine, bench)
    _report(engine, run_id, errors, as_json, console, gate=True, fail_under=fail_under)


def _read_prompts(files: tuple[str, ...]) -> list[str] | None:
    """The texts of the ``--target-system`` files (None when none is given); a file that cannot be read
    is one line naming it."""
    from engine.api import ConfigError, read_text_file

    prompts = []
    for file in files:
        try:
            text = read_text_file(file, ConfigError, "system prompt file")
        except ConfigError as exc:
            raise click.ClickException(f"--target-system {exc}") from None
        if not text.strip():
            raise click.ClickException(f"--target-system {file}: the file is empty")
        prompts.append(text)
    return prompts or None


def _refit(engine, bench: str) -> None:
    """A calibrated benchmark whose finished sessions changed says so on stderr; nothing is refitted
    silently (issue 36): the evaluator runs `viva bench calibrate NAME`."""
    from engine.api import BenchError, stale_line

    try:
        line = stale_line(engine.runtime.store, bench)
    except BenchError:
        return
    if line is not None:
        _console(True).print(escape(line), style="yellow", highlight=False)


def _run_adaptive(engine, request, budget, se, console, as_json, common=None) -> None:
    """``viva run --items adaptive``: print each step as it comes (not with --json), then the abilities."""
    import asyncio

    from engine.api import run_adaptive_items

    def step(target: str, s: dict) -> None:
        if not as_json:
            right = "error: " + s["error"] if s["error"] else f"right {s.get('right')}"
            how = " common" if s.get("chosen") == "common" else ""
            console.print(f"{escape(target)}: item {s['item']}{how} (session {s['session']}) {escape(right)} -> ability "
                          f"{s['ability']:+.2f}, SE {s['se']:.2f}", highlight=False)

    try:
        result = asyncio.run(run_adaptive_items(engine.runtime, request, budget, se, step, common))
    except Exception as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    from rich.table import Column, Table

    table = Table(Column("target", overflow="fold"), "items", "stopped", "ability", "SE", "95% interval",
                  "expected Score", title=f"{request.bench}: adaptive ({result['model']}, {result['items']} items)")
    for target, r in result["targets"].items():
        table.add_row(escape(target), str(r["asked"]), r["stopped"], f"{r['ability']:+.2f}", f"{r['se']:.2f}",
                      f"{r['low']:+.2f} to {r['high']:+.2f}",
                      "-" if r["expected_score"] is None else f"{r['expected_score']:.1f}")
    console.print(table)


@click.command()
@click.argument("what")
@click.option("--live", is_flag=True, help="Print the interviews as they happen.")
@click.option("--quiet", is_flag=True, help="No progress display (it goes to stderr otherwise).")
@click.option("--json", "as_json", is_flag=True, help="Print the per-target results as JSON.")
@click.option("--workers", type=int, default=None, callback=_interview_option,
              help="A run: processes to spread its sessions over (default: as the run was planned).")
@click.pass_context
def resume(ctx, what, live, quiet, as_json, workers):
    """Continue an interrupted session (12) or run (run:3) where it stopped."""
    from engine.api import RunError

    engine = get_engine(ctx)
    engine.sweep_stale_work()  # what a killed run left: work folders of ended sessions, eval folders
    console = _console(as_json)
    try:
        kind, ident = engine.resolve_resume(what)
    except RunError as exc:
        raise click.ClickException(str(exc)) from None
    if kind == "run":
        if not engine.run_exists(ident):
            raise click.ClickException(f"run {ident} does not exist; see `viva sessions`")
        errors = _run_with_progress(engine, ident, console, live, quiet, as_json, workers)
        _report(engine, ident, errors, as_json, console, gate=True)
        return
    if not engine.session_exists(ident):
        raise click.ClickException(f"session {ident} does not exist; see `viva sessions`")
    printer = LivePrinter(console) if live else None
    import asyncio  # here, not at the top: `viva sessions` and `--help` never need it

    errors = asyncio.run(engine.execute_sessions([ident], 1, printer))
    rows = engine.target_table([ident])
    if as_json:
        click.echo(json.dumps({"session": ident, "targets": rows, "error": errors.get(ident)}, indent=2))
    else:
        print_target_table(console, rows)
    if errors.get(ident):
        console.print(f"[red]session {ident} failed: {errors[ident]}[/]")
        sys.exit(1)


@click.command()
@click.option("--headless", is_flag=True,
              help="Print the interviews in the terminal instead of opening the app (the default when the "
                   "output is not a terminal).")
@click.option("--target", "targets", multiple=True,
              help="Target spec, repeatable (default: the reference target kb:demo, the embedded SmolLM2-135M "
                   "and the echo agent).")
@click.option("--policy", default=None, help="Policy (default: onnx if models/policy.onnx is shipped, else threshold).")
@click.option("--turns", type=int, default=None, callback=_interview_option,
              help="Turns per session (1-1000; default 4).")
@click.option("--items", "n_items", type=click.IntRange(min=1), default=None, help="How many demo items to run (default 4).")
@click.option("--quiet", is_flag=True, help="Headless: no progress display.")
@click.pass_context
def demo(ctx, headless, targets, policy, turns, n_items, quiet):
    """Run a demo on the embedded defaults: the offline kernel and the shipped policy interview the reference
    target (kb:demo, the knowledge base's own sentences), the local model and an echo agent on four items;
    the leaderboard separates them."""
    from engine.api import DEMO_TARGETS, prepare_demo

    engine = get_engine(ctx)
    console = _console(False)
    if not headless and not (sys.stdin.isatty() and sys.stdout.isatty()):
        headless = True
        console.print("not a terminal: printing the demo (the app needs one; `viva review` opens it later)",
                      style="dim")
    try:
        sizes = {k: v for k, v in (("turns", turns), ("n_items", n_items)) if v is not None}
        run_id = prepare_demo(engine.runtime, targets=list(targets) or list(DEMO_TARGETS), policy=policy,
                              log=lambda m: console.print(m, style="dim"), **sizes)
    except Exception as exc:
        raise click.ClickException(str(exc)) from None
    if headless:
        errors = _run_with_progress(engine, run_id, console, live=True, quiet=quiet)
        _report(engine, run_id, errors, False, console)
        return
    from tui.launch import open_app

    open_app(engine, screen="live", run_id=run_id)
