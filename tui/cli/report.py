"""``viva report``."""

from __future__ import annotations

from pathlib import Path

import click

from tui.cli.context import get_engine


@click.command()
@click.argument("session", type=int)
@click.option("--format", "fmt", type=click.Choice(["md", "json", "csv", "html"]), default="md", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False), default=None, help="Write to a file instead of standard output.")
@click.pass_context
def report(ctx, session, fmt, out):
    """Export a session report (Markdown, JSON, CSV or HTML)."""
    engine = get_engine(ctx)
    if not engine.session_exists(session):
        raise click.ClickException(f"session {session} does not exist; see `viva sessions`")
    text = engine.export_session(session, fmt)
    if out:
        Path(out).write_text(text, encoding="utf-8")
        click.echo(f"wrote {out}", err=True)
    else:
        click.echo(text)
