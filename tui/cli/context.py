"""What every command shares: the engine facade built from the group options (``--home``,
``--config``, ``--no-cache``), created on first use and kept on the root click context."""

from __future__ import annotations

from typing import Any

import click


def get_engine(ctx: click.Context) -> Any:
    """The :class:`engine.api.Engine` of this invocation."""
    from engine.api import Engine

    root = ctx.find_root()
    if root.obj is None:
        params = root.params
        root.obj = Engine.open(params.get("home"), params.get("config"), not params.get("no_cache"))
    return root.obj


def get_runtime(ctx: click.Context) -> Any:
    """The engine's runtime (home, config, store) for the administrative commands."""
    return get_engine(ctx).runtime
