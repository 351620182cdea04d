"""Open the app from the command line (``viva``, ``viva tui``, ``viva demo``, ``viva review``)."""

from __future__ import annotations

from engine.api import Engine

SCREENS = ("home", "live", "review")


def build_app(engine: Engine, screen: str = "home", run_id: int | None = None, session_id: int | None = None,
              execute: bool = True):
    """The app as the CLI would start it (tests and benchmarks use the same factory).

    Args:
        engine: the engine facade (data home, config, connection).
        screen: ``home``, ``live`` or ``review``.
        run_id: with ``live``: a planned run to execute and follow.
        session_id: with ``live``: a session to follow; with ``review``: the session to replay.
        execute: with ``run_id``: execute the run in the app (False: only watch it).
    """
    if screen not in SCREENS:
        raise ValueError(f"screen must be one of {', '.join(SCREENS)}, got {screen!r}")
    from tui.app import VivaApp

    return VivaApp(engine, start=screen, run_id=run_id, session_id=session_id, execute=execute)


def open_app(engine: Engine, screen: str = "home", run_id: int | None = None,
             session_id: int | None = None) -> None:
    """Run the app in the terminal until the user quits (a bad ``keys:`` remapping stops the start
    with a message naming the key and the ids)."""
    import click

    from tui.keys import KeymapError

    try:
        app = build_app(engine, screen, run_id, session_id)
    except KeymapError as exc:
        raise click.ClickException(f"the configuration's keys: remapping: {exc}") from None
    # a damaged or unreadable home says so in one line before the app starts (a read-only one opens: the
    # app reads it and refuses writes), instead of a panel that waits for rows that never come
    engine.count_sessions("")
    app.run()
