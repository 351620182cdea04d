"""``viva rescore SESSION|run:N [--rubric-version V]``: re-score stored answers with a rubric version
(after ``viva bench rubric edit``) without asking the target again."""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from tui.cli.context import get_engine
from tui.cli.report import check_subject, parse_subject


def plan_rescore(engine: Any, session_ids: list[int], version: int | None) -> list[dict[str, Any]]:
    """For each session: its item, the rubric version to score with (``version`` of its item's
    rubric, default the current one) and the version it scores with now. Raises a usage error
    naming the item when a session has no rubric or its rubric has no such version."""
    plan = []
    for sid in session_ids:
        row = engine.session_row(sid)
        item = row.get("item_id")
        if item is None:
            raise click.ClickException(f"session {sid} has no item, so no rubric to re-score with")
        versions = engine.list_versions(item)
        if not versions:
            raise click.ClickException(f"item {item} (session {sid}) has no rubric; see `viva bench show`")
        if version is None:
            chosen = engine.current_rubric(item)
        else:
            chosen = next((v for v in versions if v.version == version), None)
            if chosen is None:
                have = ", ".join(str(v.version) for v in versions)
                raise click.ClickException(f"item {item}'s rubric has no version {version} (it has {have}); "
                                           f"see `viva bench rubric history {item}`")
        labels = {v.id: v.version for v in versions}
        plan.append({"session": sid, "item": item, "version": chosen.version, "version_id": chosen.id,
                     "was": labels.get(row.get("rubric_version_id")), "score_before": row.get("score"),
                     "status": row.get("status")})
    return plan


@click.command()
@click.argument("what", metavar="SESSION|run:N")
@click.option("--rubric-version", "version", type=click.IntRange(min=1), default=None,
              help="The rubric version number to score with (default: each item's current version).")
@click.option("--force", is_flag=True, help="Re-judge sessions that already score with that version.")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
@click.option("--trust-eval-code", is_flag=True,
              help="Where bubblewrap is unusable, run the rubric's eval_code without isolation (only for code "
                   "you trust; see docs/sandbox.md).")
@click.pass_context
def rescore(ctx, what, version, force, as_json, trust_eval_code):
    """Re-score a session (12) or every session of a run (run:3) with a rubric version, from the
    stored answers: the target is never asked again. A session that is running takes the new
    version at its next step (queued for its runner)."""
    import asyncio  # here, not at the top: `viva sessions` and `--help` never need it

    from engine.api import USER_ERRORS

    kind, ident = parse_subject(what)
    engine = get_engine(ctx)
    check_subject(engine, kind, ident)
    ids = [ident] if kind == "session" else [s["id"] for s in engine.run_sessions(ident)]
    results, failed = [], False
    for step in plan_rescore(engine, ids, version):
        sid, label = step["session"], f"v{step['version']}"
        if step["was"] == step["version"] and not force:
            results.append({**step, "done": "unchanged", "score": step["score_before"]})
            if not as_json:
                click.echo(f"session {sid}: already scores with rubric {label} (Score "
                           f"{_score(step['score_before'])}); --force re-judges it")
            continue
        try:
            out = asyncio.run(engine.apply_rubric(sid, step["version_id"], trust_eval_code=trust_eval_code))
        except USER_ERRORS as exc:
            failed = True
            results.append({**step, "done": "failed", "error": str(exc)})
            click.echo(f"session {sid}: not re-scored: {exc}", err=True)
            continue
        if out["queued"]:
            results.append({**step, "done": "queued", "control_seq": out["control_seq"]})
            if not as_json:
                click.echo(f"session {sid} is running: rubric {label} queued for its runner (applied at its next step)")
            continue
        after = engine.session_row(sid).get("score")
        results.append({**step, "done": "rescored", "score": after, "metrics": out["metrics"]})
        if not as_json:
            was = "" if step["was"] is None else f"v{step['was']} → "
            click.echo(f"session {sid}: rubric {was}{label}; Score {_score(step['score_before'])} → {_score(after)}")
    if as_json:
        click.echo(json.dumps({kind: ident, "sessions": results}, ensure_ascii=False, indent=2))
    if failed:
        sys.exit(1)


def _score(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"
