"""``viva bench``: list, show, import, export, generate and delete benchmarks; view and edit rubrics.

Thin: every command calls the public API of ``engine.bench``; heavy imports happen inside commands.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click


def get_runtime(ctx: click.Context) -> Any:
    """The engine runtime of the ``viva`` command."""
    from tui.cli.context import get_runtime as _get_runtime

    return _get_runtime(ctx)


@contextmanager
def _errors() -> Iterator[None]:
    """Turn engine errors into one clear CLI error line (exit code 1)."""
    from engine.api import BenchError

    try:
        from engine.api import KnowledgeBaseError
    except ImportError:  # pragma: no cover - the knowledge package is part of viva
        KnowledgeBaseError = BenchError  # type: ignore[misc,assignment]  # noqa: N806
    try:
        yield
    except (BenchError, KnowledgeBaseError) as exc:
        raise click.ClickException(str(exc)) from None


def _short(text: str | None, width: int = 70) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _echo_json(value: Any) -> None:
    click.echo(json.dumps(value, ensure_ascii=False, indent=2, default=str))


@click.group()
def bench() -> None:
    """Benchmarks: import, generate, list, show, export, calibrate; rubrics: show, history, edit, restore."""


@bench.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """List benchmarks with their item counts per protocol."""
    from engine.api import list_benchmarks

    rows = list_benchmarks(get_runtime(ctx).store)
    if as_json:
        _echo_json([{"name": b.name, "source": b.source, "kb": b.kb, "items": b.n_items, "protocols": b.protocols,
                     "created_at": b.created_at} for b in rows])
        return
    if not rows:
        click.echo("no benchmarks yet: try `viva bench import FORMAT PATH` or `viva bench generate`")
        return
    from rich.table import Column, Table

    from tui.cli.console import SafeConsole as Console

    table = Table(Column("name", no_wrap=True), "source", "items", "protocols", "knowledge base", "created")
    for b in rows:
        table.add_row(b.name, b.source, str(b.n_items), ", ".join(f"{k} {v}" for k, v in b.protocols.items()),
                      b.kb or "", b.created_at[:19])
    Console().print(table)


def _item_detail(store: Any, item_id: int) -> dict[str, Any]:
    from engine.api import current_rubric, get_item, has_rubric

    item = get_item(store, item_id)
    out = item.to_dict()
    out["rubric"] = current_rubric(store, item.id).to_dict() if has_rubric(store, item.id) else None
    return out


def _print_item(detail: dict[str, Any]) -> None:
    from rich.markup import escape
    from rich.table import Table

    from tui.cli.console import SafeConsole as Console

    console = Console()
    console.print(f"[bold]item {detail['id']}[/bold]  benchmark {detail['benchmark']}  #{detail['ord']}  "
                  f"protocol {detail['protocol']}  topic {detail['topic'] or '-'}  "
                  f"difficulty {detail['difficulty'] or '-'}  ext_id {detail['ext_id'] or '-'}")
    if detail["turns"]:
        for i, turn in enumerate(detail["turns"], start=1):
            console.print(f"[bold]Q{i}[/bold] {escape(turn)}", highlight=False)
    else:
        console.print(f"[bold]question[/bold] {escape(detail['question'])}", highlight=False)
    if detail["options"]:
        for k, v in detail["options"].items():
            console.print(f"  {k}. {escape(v)}", highlight=False)
    if detail["gold"] is not None:
        console.print(f"[bold]gold[/bold] {escape(str(detail['gold']))}", highlight=False)
    if detail["reference"]:
        console.print(f"[bold]reference[/bold] {escape(detail['reference'])}", highlight=False)
    if detail["source_chunk_ids"]:
        console.print(f"[bold]source chunks[/bold] {detail['source_chunk_ids']}")
    rubric = detail["rubric"]
    if rubric:
        console.print(f"[bold]rubric[/bold] version {rubric['version']} (id {rubric['id']}) by {rubric['author']}"
                      + (f": {escape(rubric['note'])}" if rubric["note"] else ""), highlight=False)
        table = Table("cid", "kind", "weight", "criterion", "chunks")
        for c in rubric["criteria"]:
            table.add_row(c["cid"], c["kind"], f"{c['weight']:g}", escape(c["text"]),
                          ",".join(map(str, c["source_chunk_ids"])))
        console.print(table)
        for c in rubric["criteria"]:
            if c["eval_code"]:
                console.print(f"{c['cid']} eval_code:\n{c['eval_code']}", highlight=False, markup=False)
    meta = {k: v for k, v in detail["meta"].items() if k not in ("judge_prompt", "context", "sample_answer")}
    if meta:
        console.print("[bold]meta[/bold] " + escape(_short(json.dumps(meta, ensure_ascii=False), 600)),
                      highlight=False)


@bench.command()
@click.argument("name")
@click.option("--item", "item_id", type=int, help="Show one item in full (with its current rubric).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def show(ctx: click.Context, name: str, item_id: int | None, as_json: bool) -> None:
    """Show a benchmark's items (or one item with --item ID)."""
    from engine.api import BenchError, current_rubric, get_benchmark, has_rubric, list_items

    store = get_runtime(ctx).store
    with _errors():
        bench_ = get_benchmark(store, name)
        if item_id is not None:
            detail = _item_detail(store, item_id)
            if detail["benchmark_id"] != bench_.id:
                raise BenchError(f"item {item_id} belongs to benchmark {detail['benchmark']!r}, not {name!r}")
            if as_json:
                _echo_json(detail)
            else:
                _print_item(detail)
            return
        items = list_items(store, name)
        from engine.api import get_calibration, item_difficulties, target_abilities

        calibration = get_calibration(store, name)
        fitted = item_difficulties(calibration) if calibration else {}
        rows = []
        for it in items:
            rv = current_rubric(store, it.id) if has_rubric(store, it.id) else None
            rows.append({"id": it.id, "ord": it.ord, "ext_id": it.ext_id, "protocol": it.protocol,
                         "topic": it.topic, "difficulty": it.difficulty, "turns": len(it.turns),
                         "question": it.question, "criteria": len(rv.criteria) if rv else 0,
                         "rubric_version": rv.version if rv else None, "irt_difficulty": fitted.get(it.id)})
        abilities = target_abilities(store, name) if calibration else []
    if as_json:
        _echo_json({"name": bench_.name, "source": bench_.source, "kb": bench_.kb, "meta": bench_.meta,
                    "created_at": bench_.created_at, "items": rows, "calibration": calibration,
                    "abilities": abilities})
        return
    from rich.markup import escape
    from rich.table import Table

    from tui.cli.console import SafeConsole as Console

    table = Table("id", "protocol", "topic", "diff.", *(["b"] if calibration else []), "question", "criteria",
                  "rubric v.", title=f"{bench_.name} ({bench_.source}, {bench_.n_items} items"
                  + (f", knowledge base {bench_.kb}" if bench_.kb else "") + ")")
    for r in rows:
        q = _short(r["question"], 60) + (f" [{r['turns']} turns]" if r["turns"] else "")
        b = [] if not calibration else ["" if r["irt_difficulty"] is None else f"{r['irt_difficulty']:+.2f}"]
        table.add_row(str(r["id"]), r["protocol"], escape(_short(r["topic"], 20)), r["difficulty"] or "", *b,
                      escape(q), str(r["criteria"]), str(r["rubric_version"] or ""))
    console = Console()
    console.print(table)
    if calibration:
        _print_calibration(console, name, calibration, abilities)


def _print_calibration(console: Any, name: str, calibration: dict[str, Any], abilities: list[dict[str, Any]]) -> None:
    from rich.markup import escape
    from rich.table import Column, Table

    console.print(f"calibrated ({calibration['model']}, b = item difficulty) on {calibration['n_targets']} targets, "
                  f"{len(calibration['sessions'])} sessions: {calibration['calibrated']} of "
                  f"{len(calibration['units'])} scored units, {calibration['created_at'][:19]}", highlight=False)
    from engine.api import dropped_line

    if not calibration.get("supported", True):
        console.print(f"this calibration was fitted on {calibration['n_targets']} targets, fewer than the "
                      f"{calibration.get('min_targets', 10)} an ability needs (docs/calibration-minimum.md): "
                      f"no ability is shown; refit with `viva bench calibrate {escape(name)}` once enough "
                      f"targets ran", highlight=False)
    dropped = dropped_line(calibration)
    if dropped:
        console.print(escape(dropped), highlight=False)
    if calibration["stale"]:
        console.print(f"stale: the finished sessions changed since ({len(calibration['new_sessions'])} new); "
                      f"refit with `viva bench calibrate {escape(name)}`", highlight=False)
    table = Table(Column("target", overflow="fold"), "ability", "SE", "95% interval", "expected Score", "items run",
                  title="abilities")
    for r in abilities:
        table.add_row(escape(r["target"]), f"{r['ability']:+.2f}", f"{r['se']:.2f}", f"{r['low']:+.2f} to {r['high']:+.2f}",
                      "-" if r["expected_score"] is None else f"{r['expected_score']:.1f}", f"{r['items_run']}/{r['items']}")
    console.print(table)


@bench.command()
@click.argument("name")
@click.option("--model", type=click.Choice(["auto", "rasch", "2pl"]), default="auto", show_default=True,
              help="auto: Rasch below 30 targets, 2PL from 30 (engine/metrics/irt.py).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def calibrate(ctx: click.Context, name: str, model: str, as_json: bool) -> None:
    """Fit item parameters (IRT) from the benchmark's finished sessions and store them."""
    from engine.api import calibrate_benchmark, target_abilities

    store = get_runtime(ctx).store
    with _errors():
        calibration = calibrate_benchmark(store, name, model)
        abilities = target_abilities(store, name)
    if as_json:
        _echo_json({"calibration": calibration, "abilities": abilities})
        return
    from tui.cli.console import SafeConsole as Console

    _print_calibration(Console(), name, calibration, abilities)


@bench.command("import")
@click.argument("fmt", metavar="FORMAT", type=click.Choice(["sedareval", "taskweaver", "medqa", "squad", "jsonl"]))
@click.argument("path", type=click.Path(exists=True))
@click.option("--name", help="Benchmark name (default: FORMAT-<file name>).")
@click.option("--kb", help="squad: name of the knowledge base built from the contexts (default: the benchmark name).")
@click.option("--strict", is_flag=True, help="sedareval: stop at the first bad row (default: import the valid rows "
              "and list each skipped row with its line and reason).")
@click.option("--json", "as_json", is_flag=True, help="Print the import summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress display (it goes to stderr otherwise).")
@click.pass_context
def import_cmd(ctx: click.Context, fmt: str, path: str, name: str | None, kb: str | None, strict: bool,
               as_json: bool, quiet: bool) -> None:
    """Import a benchmark: sedareval (JSONL), taskweaver (folder of cases), medqa (JSONL), squad (JSON) or
    jsonl (viva's own export format). sedareval imports the valid rows and lists each skipped row
    (--strict: all or nothing); the other formats write nothing if any record is bad."""
    from engine.api import run_import
    from tui.cli.kb import STAGE_LABELS, STAGE_UNITS
    from tui.cli.progress import ProgressDisplay, choose_mode

    rt = get_runtime(ctx)
    labels = {**STAGE_LABELS, "read": "reading lines", "write": "writing items"}
    units = {**STAGE_UNITS, "read": "lines", "write": "items"}
    with _errors(), ProgressDisplay(choose_mode(quiet, as_json=as_json), prefix="viva: ") as display:
        summary = run_import(rt.store, rt.home, fmt, path, name, config=rt.config, kb=kb, strict=strict,
                             progress=display.stage(labels, units))
    if as_json:
        _echo_json(summary.to_dict())
    else:
        click.echo("\n".join(summary.lines()))


@bench.command()
@click.argument("name")
@click.option("--format", "fmt", type=click.Choice(["jsonl"]), default="jsonl", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, writable=True), help="Write to this file (default: stdout).")
@click.pass_context
def export(ctx: click.Context, name: str, fmt: str, out: str | None) -> None:
    """Export a benchmark as JSONL: one item per line with its id and current rubric (docs/benchmark-format.md)."""
    from engine.api import export_jsonl

    store = get_runtime(ctx).store
    with _errors():
        if out is None:
            export_jsonl(store, name, sys.stdout)
            return
        tmp = Path(out).with_name(Path(out).name + ".tmp")
        with tmp.open("w", encoding="utf-8") as fh:
            n = export_jsonl(store, name, fh)
        tmp.replace(out)
    click.echo(f"wrote {n} item(s) to {out}", err=True)


@bench.command()
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def delete(ctx: click.Context, name: str, yes: bool) -> None:
    """Delete a benchmark with its items, rubrics and data files (refused while sessions use it)."""
    from engine.api import delete_benchmark, get_benchmark

    rt = get_runtime(ctx)
    with _errors():
        b = get_benchmark(rt.store, name)
        if not yes:
            click.confirm(f"delete benchmark {name!r} and its {b.n_items} item(s)?", abort=True)
        n = delete_benchmark(rt.store, name, rt.home)
    click.echo(f"deleted benchmark {name!r} ({n} item(s))")


@bench.command()
@click.argument("name")
@click.option("--kb", "kb_name", required=True, help="Knowledge base to ground the questions in.")
@click.option("--topics", "topics_file", required=True, type=click.Path(exists=True, dir_okay=False),
              help="YAML list of topics: name, description, optional demonstrations (question, good, bad).")
@click.option("--per-topic", default=3, show_default=True, type=click.IntRange(1, 100),
              help="Questions per topic.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed (offline question choice, sampling).")
@click.option("--offline", is_flag=True, help="Use the offline kernel even when a kernel model is configured.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress display (it goes to stderr otherwise).")
@click.pass_context
def generate(ctx: click.Context, name: str, kb_name: str, topics_file: str, per_topic: int, seed: int,
             offline: bool, as_json: bool, quiet: bool) -> None:
    """Generate a benchmark from a knowledge base (TestAgent 2.1): questions per topic, topic criteria,
    then question criteria grounded in retrieved chunks. Uses the configured kernel, or the offline kernel
    (template questions, key facts as criteria) when none is configured or with --offline."""
    import asyncio

    from engine.api import generate_benchmark, load_topics
    from tui.cli.progress import ProgressDisplay, choose_mode

    rt = get_runtime(ctx)
    with _errors(), ProgressDisplay(choose_mode(quiet, as_json=as_json), prefix="viva: ") as display:
        topics = load_topics(topics_file)
        summary = asyncio.run(generate_benchmark(
            rt.store, rt.home, name, kb_name, topics, per_topic=per_topic, seed=seed, config=rt.config,
            offline=offline, use_cache=rt.use_cache, progress=display.log,
            steps=display.stage({"topics": "topics"}, {"topics": "topics"})))
    if as_json:
        _echo_json(summary.to_dict())
    else:
        click.echo("\n".join(summary.lines()))


# -- rubrics -------------------------------------------------------------------------------------
@bench.group()
def rubric() -> None:
    """Show, edit, list and restore an item's rubric versions (every change is a new version)."""


def _print_version(rv: Any) -> None:
    from rich.markup import escape
    from rich.table import Table

    from tui.cli.console import SafeConsole as Console

    click.echo(f"rubric version {rv.version} (id {rv.id}) by {rv.author} at {rv.created_at[:19]}"
               + (f": {rv.note}" if rv.note else ""))
    table = Table("cid", "kind", "weight", "criterion", "chunks")
    for c in rv.criteria:
        table.add_row(c.cid, c.kind, f"{c.weight:g}", escape(c.text), ",".join(map(str, c.source_chunk_ids)))
    console = Console()
    console.print(table)
    for c in rv.criteria:
        if c.eval_code:
            console.print(f"{c.cid} eval_code:\n{c.eval_code}", highlight=False, markup=False)


@rubric.command("show")
@click.argument("item_id", type=int)
@click.option("--version", "version", type=int, help="Show this version number instead of the current one.")
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def rubric_show(ctx: click.Context, item_id: int, version: int | None, as_json: bool) -> None:
    """Show an item's current rubric (or an older version)."""
    from engine.api import BenchError, current_rubric, list_versions

    store = get_runtime(ctx).store
    with _errors():
        if version is None:
            rv = current_rubric(store, item_id)
        else:
            found = [v for v in list_versions(store, item_id) if v.version == version]
            if not found:
                raise BenchError(f"item {item_id}'s rubric has no version {version}")
            rv = found[0]
    if as_json:
        _echo_json(rv.to_dict())
    else:
        _print_version(rv)


@rubric.command("history")
@click.argument("item_id", type=int)
@click.option("--json", "as_json", is_flag=True)
@click.pass_context
def rubric_history(ctx: click.Context, item_id: int, as_json: bool) -> None:
    """List every version of an item's rubric, oldest first."""
    from engine.api import current_rubric, list_versions

    store = get_runtime(ctx).store
    with _errors():
        versions = list_versions(store, item_id)
        current = current_rubric(store, item_id).id
    if as_json:
        _echo_json([{**v.to_dict(), "current": v.id == current} for v in versions])
        return
    for v in versions:
        mark = "*" if v.id == current else " "
        parent = next((p.version for p in versions if p.id == v.parent_id), None)
        click.echo(f"{mark} v{v.version} (id {v.id}) {v.created_at[:19]} {v.author:<10} "
                   f"parent {'v' + str(parent) if parent else '-':<4} {len(v.criteria)} criteria  {v.note}")


def _author(name: str | None) -> str:
    return f"human:{name}" if name else "human"


@rubric.command("edit")
@click.argument("item_id", type=int)
@click.argument("ops")
@click.option("--note", default="", help="Why (default: a summary of the operations).")
@click.option("--author", "author_name", help="Your name (recorded as human:NAME).")
@click.pass_context
def rubric_edit(ctx: click.Context, item_id: int, ops: str, note: str, author_name: str | None) -> None:
    """Apply operations and save a new version. OPS is JSON (a list, or one operation) or a file holding it
    ('-' for stdin), e.g. '[{"op": "reweight", "cid": "c2", "weight": 2}, {"op": "add", "text": "..."}]'.
    Operations: add (text, kind, weight, eval_code, position), edit (cid, text), delete (cid),
    move (cid, position), reweight (cid, weight), set_kind (cid, kind, eval_code)."""
    from engine.api import BenchError, edit_rubric

    if ops == "-":
        text = sys.stdin.read()
    elif Path(ops).is_file():
        text = Path(ops).read_text(encoding="utf-8")
    else:
        text = ops
    with _errors():
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BenchError(f"OPS is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") from None
        if isinstance(parsed, dict):
            parsed = [parsed]
        rv = edit_rubric(get_runtime(ctx).store, item_id, parsed, _author(author_name), note)
    _print_version(rv)


@rubric.command("restore")
@click.argument("item_id", type=int)
@click.argument("version", type=int)
@click.option("--author", "author_name", help="Your name (recorded as human:NAME).")
@click.pass_context
def rubric_restore(ctx: click.Context, item_id: int, version: int, author_name: str | None) -> None:
    """Make an older version current again (saved as a new version copying it)."""
    from engine.api import BenchError, list_versions, restore_version

    store = get_runtime(ctx).store
    with _errors():
        found = [v for v in list_versions(store, item_id) if v.version == version]
        if not found:
            raise BenchError(f"item {item_id}'s rubric has no version {version}")
        rv = restore_version(store, item_id, found[0].id, _author(author_name))
    _print_version(rv)
