"""The ``viva`` command line (click). Thin: every command calls the engine's facade (``engine.api``).

The command line lives in ``tui/`` beside the Textual app: both are user interfaces over the same
facade, and the engine stays a library that imports neither click nor textual (an import-linter
contract in ``pyproject.toml`` checks it). The console script ``viva`` names :func:`main`.
Heavy imports happen inside the commands, so ``viva --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click

from engine import __version__
from tui.cli.app import review, tui
from tui.cli.bench import bench
from tui.cli.check import check
from tui.cli.context import get_engine, get_runtime
from tui.cli.judge import judge
from tui.cli.kb import kb
from tui.cli.policy import policy
from tui.cli.report import report
from tui.cli.rescore import rescore
from tui.cli.run import demo, resume, run


class VivaGroup(click.Group):
    """Turns the engine's user errors into one clear line (exit code 2 for configuration and store
    errors, 1 for the others), and routes standard output and error through the engine's redaction
    (:func:`engine.redact.redacted_std_streams`) for the whole command, so no key is ever printed,
    and through :func:`engine.termsafe.terminal_std_streams`, so no control sequence from a target,
    an endpoint or a benchmark is ever emitted (the Rich consoles write their own colours past it,
    their text made safe: ``tui.cli.console.SafeConsole``)."""

    def main(self, *args, **kwargs):  # noqa: D102
        from engine.redact import redacted_std_streams
        from engine.termsafe import terminal_std_streams

        with redacted_std_streams(), terminal_std_streams():
            return super().main(*args, **kwargs)

    def invoke(self, ctx: click.Context):  # noqa: D102
        try:
            return super().invoke(ctx)
        except Exception as exc:
            # The engine's error classes are looked up only now: building USER_ERRORS imports the
            # modules that define them, which a command that succeeds never needs.
            from engine.api import USER_ERRORS, ConfigError, StoreError
            from engine.redact import redact

            if not isinstance(exc, USER_ERRORS):
                line = _home_fault(ctx, exc)  # a damaged, full or read-only home: one line, no traceback
                if line is None:
                    raise
                click.echo(f"Error: {redact(line)}", err=True)
                sys.exit(2)
            click.echo(f"Error: {redact(str(exc))}", err=True)
            sys.exit(2 if isinstance(exc, (ConfigError, StoreError)) else 1)


def _home_fault(ctx: click.Context, exc: BaseException) -> str | None:
    """The one-line message for an error of a damaged, full or read-only data home, else None."""
    import os

    from engine.api import describe_home_fault as describe

    root = ctx.find_root()
    home = getattr(root.obj, "home", None) or root.params.get("home") or os.environ.get("VIVA_HOME") or ".viva"
    return describe(exc, home)


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
    from engine.api import make_non_dumpable

    make_non_dumpable()  # same-user processes (e.g. imported eval_code) cannot read viva's environment
    if ctx.invoked_subcommand is None:
        from tui.launch import open_app

        open_app(get_engine(ctx), screen="home")


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON (a list of the page's rows) instead of a table.")
@click.option("--tsv", "as_tsv", is_flag=True,
              help="Print tab-separated values (a header line, then one line per session) instead of a table.")
@click.option("--limit", type=click.IntRange(min=1, max=2**63 - 1, clamp=True), default=50, show_default=True, help="Sessions per page.")
@click.option("--offset", type=click.IntRange(min=0, max=2**63 - 1, clamp=True), default=0, show_default=True,
              help="Skip this many (newest) sessions first.")
@click.option("--all", "every", is_flag=True, help="Every session (no page).")
@click.option("--filter", "query", default="", metavar="TEXT",
              help="Words and field:value terms, all must match: target:, bench:, item:, status:, protocol:, "
                   "policy:, kernel:, date:, id:, run:, score>N (as Home's filter). Statuses: created, running, "
                   "paused, finished, not-examined, failed, interrupted, stopped.")
@click.pass_context
def sessions(ctx: click.Context, as_json: bool, as_tsv: bool, limit: int, offset: int, every: bool,
             query: str) -> None:
    """List interview sessions, newest first, a page at a time (id, status, target, item, turns, score).
    Piped, the table is printed whole (no cell is cut); --tsv and --json print data for other programs."""
    from engine.api import SessionFilterError

    if as_json and as_tsv:
        raise click.BadParameter("give --json or --tsv, not both", param_hint="--tsv")
    engine = get_engine(ctx)
    try:
        rows = engine.list_sessions(limit=None if every else limit, offset=offset, query=query)
        total = len(rows) + offset if every else engine.count_sessions(query)
    except SessionFilterError as exc:
        raise click.BadParameter(str(exc), param_hint="--filter") from None
    if as_json:
        click.echo(json.dumps(rows, ensure_ascii=False, indent=2))
    elif as_tsv:
        from engine.termsafe import termsafe

        def cell(value: Any) -> str:  # a tab or line break inside a value would break the columns
            return " ".join(termsafe("" if value is None else str(value)).split())

        click.echo("\t".join(("id", "status", "protocol", "target", "item", "turns", "score", "created")))
        for r in rows:
            score = "" if r["score"] is None else f"{r['score']:.1f}"
            click.echo("\t".join(cell(v) for v in (r["id"], r["status"], r["protocol"], r["target"], r["item"],
                                                    r["turns"], score, r["created_at"])))
    else:
        from rich.table import Table

        from tui.cli.console import SafeConsole as Console

        table = Table("id", "status", "protocol", "target", "item", "turns", "score", "created")
        for r in rows:
            score = "" if r["score"] is None else f"{r['score']:.1f}"
            table.add_row(str(r["id"]), r["status"].replace("_", " "), r["protocol"], r["target"], str(r["item"] or ""),
                          str(r["turns"]), score, r["created_at"][:19])
        Console().print(table)
    if not every and (offset or offset + len(rows) < total):
        more = f"; --offset {offset + len(rows)} for the next page" if offset + len(rows) < total else ""
        first = offset + 1 if rows else offset
        click.echo(f"sessions {first}-{offset + len(rows)} of {total}{more}, --all for every one", err=True)


for _command in (demo, tui, kb, bench, run, resume, rescore, review, report, policy, judge, check):
    main.add_command(_command)

__all__ = ["main", "get_engine", "get_runtime"]
