"""The ``viva`` command line (click). Thin: every command calls the engine's public API."""

from __future__ import annotations

import json
import sys

import click

from engine import __version__
from engine.config import ConfigError
from engine.runtime import Runtime
from engine.store import StoreError


class VivaGroup(click.Group):
    """Turns configuration and store errors into one clear line and exit code 2."""

    def invoke(self, ctx: click.Context):  # noqa: D102
        try:
            return super().invoke(ctx)
        except (ConfigError, StoreError) as exc:
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)


def get_runtime(ctx: click.Context) -> Runtime:
    """The runtime built from the group options (created on first use)."""
    root = ctx.find_root()
    if root.obj is None:
        params = root.params
        root.obj = Runtime.create(params.get("home"), params.get("config"), not params.get("no_cache"))
    return root.obj


@click.group(cls=VivaGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", type=click.Path(file_okay=False), envvar="VIVA_HOME",
              help="Data home (database, indexes, logs). Default: $VIVA_HOME or ./.viva")
@click.option("--config", type=click.Path(dir_okay=False), help="Config file. Default: ./viva.yaml if present.")
@click.option("--no-cache", is_flag=True, help="Do not answer LLM calls from the cache.")
@click.version_option(__version__, prog_name="viva")
@click.pass_context
def main(ctx: click.Context, home: str | None, config: str | None, no_cache: bool) -> None:
    """viva: oral examinations of language models.

    An examiner model (the kernel) interviews a target model over several turns, grounded in your
    documents, scores every answer against a rubric and decides turn by turn whether to follow up or
    challenge. Run `viva` alone to open the app.
    """
    if ctx.invoked_subcommand is None:
        from tui.launch import open_app

        open_app(get_runtime(ctx), screen="home")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def sessions(ctx: click.Context, as_json: bool) -> None:
    """List interview sessions (id, status, target, item, turns, score)."""
    from engine.interview.queries import list_sessions

    rows = list_sessions(get_runtime(ctx).store)
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    table = Table("id", "status", "protocol", "target", "item", "turns", "score", "created")
    for r in rows:
        score = "" if r["score"] is None else f"{r['score']:.1f}"
        table.add_row(str(r["id"]), r["status"], r["protocol"], r["target"], str(r["item"] or ""),
                      str(r["turns"]), score, r["created_at"][:19])
    Console().print(table)


# Commands live beside the code they drive; each module imports its heavy dependencies lazily, so
# `viva --help` stays fast and the engine never imports textual (tui.commands imports it inside).
from engine.bench.cli import bench  # noqa: E402
from engine.interview.cli import demo, resume, run  # noqa: E402
from engine.knowledge.cli import kb  # noqa: E402
from engine.policy.cli import policy  # noqa: E402
from engine.report.cli import report  # noqa: E402
from tui.commands import review, tui  # noqa: E402

for _command in (demo, tui, kb, bench, run, resume, review, report, policy):
    main.add_command(_command)
