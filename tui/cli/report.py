"""``viva report SESSION|run:N``: a session's or a run's report in Markdown, JSON, CSV or HTML."""

from __future__ import annotations

import click

from tui.cli.context import get_engine

FORMAT_CHOICES = ["md", "json", "csv", "html"]


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
@click.pass_context
def report(ctx, what, fmt, out, force, save):
    """Export a session's report, or a run's (leaderboard across targets), as Markdown, JSON, CSV or
    a self-contained HTML page with charts."""
    kind, ident = parse_subject(what)
    engine = get_engine(ctx)
    check_subject(engine, kind, ident)
    if out or save:
        path = engine.write_report(kind, ident, fmt, out, force=force)
        click.echo(f"wrote {path}", err=True)
        return
    text = engine.export_session(ident, fmt) if kind == "session" else engine.export_run(ident, fmt)
    click.echo(text, nl=not text.endswith("\n"))
