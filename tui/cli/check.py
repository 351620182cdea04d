"""``viva check ENDPOINT|NAME``: what an endpoint supports, before a run (``engine.llm.check``)."""

from __future__ import annotations

import json

import click

from tui.cli.context import get_runtime


@click.command()
@click.argument("endpoint")
@click.option("--api-key-env", metavar="VAR", help="Environment variable holding the endpoint's API key.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of lines.")
@click.pass_context
def check(ctx: click.Context, endpoint: str, api_key_env: str | None, as_json: bool) -> None:
    """Send an endpoint a few small requests and report what it supports: reachable, models, structured
    output dialect (response_format), usage, streaming, context size.

    ENDPOINT is any target `viva run` takes (a name from targets:, openai:MODEL@BASE_URL, local,
    python:module:Class, kb:NAME), kernel or judge (the config's), or a base URL. `local` starts the
    embedded model's server for the check and stops it; python: and kb: are loaded, not probed.
    """
    import asyncio

    from engine.api import TargetError, check_target

    runtime = get_runtime(ctx)
    try:
        report = asyncio.run(check_target(runtime.store, runtime.config, runtime.home, endpoint, api_key_env))
    except TargetError as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        click.echo(json.dumps(report.as_dict(), indent=2))
    else:
        for line in report.lines():
            click.echo(line)
    if not report.reachable:
        ctx.exit(1)
