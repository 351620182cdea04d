"""``viva tui`` and ``viva review``. Textual is imported only when a command runs, so importing
the CLI (which the engine's hygiene test does) never imports it."""

from __future__ import annotations

import click


@click.command("tui")
@click.pass_context
def tui(ctx: click.Context) -> None:
    """Open the app on Home: sessions, benchmarks, new interview (same as `viva` alone)."""
    from tui.cli.context import get_engine
    from tui.launch import open_app

    open_app(get_engine(ctx), screen="home")


@click.command("review")
@click.argument("session", type=int, required=False)
@click.pass_context
def review(ctx: click.Context, session: int | None) -> None:
    """Replay a saved session in the app: step through turns, compare, export (SESSION: id from `viva sessions`)."""
    from tui.cli.context import get_engine
    from tui.launch import open_app

    engine = get_engine(ctx)
    if session is not None and not engine.session_exists(session):
        raise click.ClickException(f"session {session} does not exist; see `viva sessions`")
    open_app(engine, screen="review", session_id=session)
