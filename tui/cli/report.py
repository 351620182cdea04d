"""``viva report SESSION|run:N``: a session's or a run's report in Markdown, JSON, CSV or HTML."""

from __future__ import annotations

import click

from tui.cli.context import get_engine

FORMAT_CHOICES = ["md", "json", "csv", "html", "junit"]


def parse_subject(text: str) -> tuple[str, int]:
    """``12`` -> ("session", 12); ``run:3`` (or ``r3``) -> ("run", 3); anything else is a usage error."""
    value = text.strip().lower()
    for prefix in ("run:", "r"):
        if value.startswith(prefix) and value[len(prefix):].isdigit():
            return "run", int(value[len(prefix):])
    if value.isdigit():
        return "session", int(value)
    raise click.BadParameter(f"{text!r}: give a session id (12) or a run (run:3); see `viva sessions`")


def check_subject(engine, kind: str, ident: int) -> None:
    """A clear error when the session or run does not exist."""
    exists = engine.session_exists(ident) if kind == "session" else engine.run_exists(ident)
    if not exists:
        raise click.ClickException(f"{kind} {ident} does not exist; see `viva sessions`")


@click.command()
@click.argument("what", metavar="SESSION|run:N")
@click.option("--format", "fmt", type=click.Choice(FORMAT_CHOICES), default="md", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None,
              help="Write to this file instead of standard output.")
@click.option("--force", is_flag=True, help="Overwrite the file given with --out if it exists.")
@click.option("--save", is_flag=True, help="Write to the data home's exports/ folder (viva-session-12.html...).")
@click.option("--fail-under", type=click.FloatRange(0, 100), default=None, metavar="SCORE",
              help="junit: the Score a target must reach (a target's min_score in the config wins); items and "
                   "rows under it are <failure>s.")
@click.pass_context
def report(ctx, what, fmt, out, force, save, fail_under):
    """Export a session's report, or a run's (leaderboard across targets), as Markdown, JSON, CSV,
    a self-contained HTML page with charts, or (a run) JUnit XML for CI test reports: one test case
    per item and target, and one for each target's Score."""
    kind, ident = parse_subject(what)
    if fmt == "junit" and kind != "run":
        raise click.BadParameter("--format junit is a run's report: give run:N", param_hint="--format")
    if fail_under is not None and fmt != "junit":
        raise click.BadParameter("--fail-under goes with --format junit (viva run --fail-under gates a run)",
                                 param_hint="--fail-under")
    engine = get_engine(ctx)
    check_subject(engine, kind, ident)
    if out or save:
        path = engine.write_report(kind, ident, fmt, out, force=force, fail_under=fail_under)
        click.echo(f"wrote {path}", err=True)
        return
    if fmt == "junit":
        text = engine.export_junit(ident, fail_under)
    else:
        text = engine.export_session(ident, fmt) if kind == "session" else engine.export_run(ident, fmt)
    click.echo(text, nl=not text.endswith("\n"))
