"""``viva kb``: build, search, list and delete knowledge bases; build context graphs; sample paths.

Heavy imports (numpy, onnxruntime, whoosh) happen inside the commands so ``viva --help`` stays fast.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import click


def _runtime(ctx: click.Context):
    from tui.cli.context import get_runtime

    return get_runtime(ctx)


def _echo_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2))


STAGE_LABELS = {"ingest": "reading + embedding", "chunks": "chunks staged", "read": "reading files",
                "chunk": "chunking", "embed": "embedding", "index": "BM25 index", "extract": "extracting entities"}
STAGE_UNITS = {"ingest": "bytes", "chunks": "chunks", "read": "files", "chunk": "docs", "embed": "chunks",
               "index": "chunks", "extract": "chunks"}


def _progress(quiet: bool, as_json: bool = False):
    """The progress display on stderr (rich on a terminal, plain lines when piped, none with --quiet;
    with --json only on a terminal)."""
    from tui.cli.progress import ProgressDisplay, choose_mode

    return ProgressDisplay(choose_mode(quiet, as_json=as_json), prefix="viva: ")


@click.group("kb")
def kb() -> None:
    """Knowledge bases: ingest documents, search them, build the context graph, sample paths."""


@kb.command("build")
@click.argument("name")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--chunk-chars", type=click.IntRange(min=51), default=None,
              help="Chunk size cap in characters (default: the KB's previous value, else config: 1200).")
@click.option("--overlap", type=click.IntRange(min=0), default=None,
              help="Characters a chunk repeats from the previous one (default: previous, else config: 150).")
@click.option("--text-field", default=None, help="JSON/JSONL: index only this field of each record.")
@click.option("--text-column", default=None, help="CSV: index only this column of each row.")
@click.option("--prune", is_flag=True,
              help="Remove the documents of an existing NAME that are not under PATHS without asking.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.option("--quiet", is_flag=True, help="No progress display (it goes to stderr otherwise).")
@click.pass_context
def build(ctx: click.Context, name: str, paths: tuple[str, ...], chunk_chars: int | None, overlap: int | None,
          text_field: str | None, text_column: str | None, prune: bool, as_json: bool, quiet: bool) -> None:
    """Create or update knowledge base NAME from files and folders (.txt .md .rst .html .json .jsonl .csv .yaml).

    Unchanged documents are skipped (content hash); changed ones are re-chunked and re-embedded;
    documents no longer found under PATHS are removed (asked first when NAME has documents outside
    PATHS: answer, or pass --prune; without a terminal the build stops). Bad files are reported and skipped. Files are
    read and written in batches (memory stays bounded), and a build that was killed continues where
    it stopped when run again with the same settings.
    """
    from engine.api import EmbedderError, KnowledgeBaseError, build_kb, documents_outside

    rt = _runtime(ctx)
    outside = documents_outside(rt.store, name, paths)
    if outside and not prune:
        sample = ", ".join(outside[:3]) + (f" and {len(outside) - 3} more" if len(outside) > 3 else "")
        what = (f"knowledge base {name!r} has {len(outside)} document(s) not under the paths given ({sample}); "
                "this build would remove them")
        if not (sys.stdin.isatty() and click.confirm(f"{what}. Remove them?", default=False, err=True)):
            raise click.ClickException(f"{what}. Give every path to keep them, or pass --prune to remove them.")
    try:
        with _progress(quiet, as_json) as display:
            summary = build_kb(rt.store, rt.home, name, list(paths), chunk_chars=chunk_chars, overlap=overlap,
                               text_field=text_field, text_column=text_column, config=rt.config.retrieval,
                               progress=display.stage(STAGE_LABELS, STAGE_UNITS))
    except (KnowledgeBaseError, EmbedderError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        _echo_json(summary.to_dict())
        return
    for issue in summary.bad_files:
        click.echo(f"skipped file: {issue}", err=True)
    for issue in summary.bad_records:
        click.echo(f"skipped record: {issue}", err=True)
    s = summary
    resumed = f", {s.resumed} already staged by an interrupted build" if s.resumed else ""
    click.echo(
        f"{s.name}: {s.documents} documents ({s.added} added, {s.updated} updated, {s.unchanged} unchanged, "
        f"{s.removed} removed{resumed}), {s.chunks} chunks; embedded {s.embedded} (cached {s.embeddings_cached}); "
        f"indexed {s.indexed}{' (index rebuilt)' if s.index_rebuilt else ''}; {s.files_read} files read "
        f"({s.bytes_read / 1e6:,.1f} MB in {sum(s.seconds.values()):,.1f} s), "
        f"{len(s.bad_files)} files skipped, {len(s.bad_records)} records skipped, {s.files_ignored} ignored")
    if s.graph_cleared:
        click.echo(f"the context graph was cleared because the content changed: run `viva kb graph {s.name}`")


@kb.command("search")
@click.argument("name")
@click.argument("query")
@click.option("--k", "k", type=click.IntRange(min=1), default=None, help="How many hits (default: config, 5).")
@click.option("--mode", type=click.Choice(["bm25", "dense", "hybrid"]), default=None,
              help="Ranker (default: config, hybrid).")
@click.option("--json", "as_json", is_flag=True, help="Print hits as JSON.")
@click.pass_context
def search_cmd(ctx: click.Context, name: str, query: str, k: int | None, mode: str | None, as_json: bool) -> None:
    """Search knowledge base NAME for QUERY."""
    from engine.api import EmbedderError, KnowledgeBaseError, search

    rt = _runtime(ctx)
    cfg = rt.config.retrieval
    try:
        hits = search(rt.store, rt.home, name, query, k=k or cfg.k, mode=mode or cfg.mode, config=cfg)
    except (KnowledgeBaseError, EmbedderError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        _echo_json([h.to_dict() for h in hits])
        return
    if not hits:
        click.echo("no hits")
        return
    for h in hits:
        scores = ", ".join(f"{key} {value:.4f}" for key, value in h.scores.items())
        preview = " ".join(h.text.split())
        click.echo(f"{h.rank}. [chunk {h.chunk_id}] {h.document_title}  ({scores})")
        click.echo(f"   {preview[:240]}{'...' if len(preview) > 240 else ''}")


@kb.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.pass_context
def list_cmd(ctx: click.Context, as_json: bool) -> None:
    """List knowledge bases with their document, chunk and entity counts."""
    from engine.api import list_kbs

    rows = list_kbs(_runtime(ctx).store)
    if as_json:
        _echo_json(rows)
        return
    from rich.table import Table

    from tui.cli.console import SafeConsole as Console

    table = Table("name", "documents", "chunks", "entities", "version", "embedder", "built")
    for r in rows:
        table.add_row(r["name"], str(r["documents"]), str(r["chunks"]), str(r["entities"]), str(r["version"]),
                      str(r["embedder"] or ""), str(r["built_at"] or "")[:19])
    Console().print(table)


@kb.command("delete")
@click.argument("name")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_context
def delete_cmd(ctx: click.Context, name: str, yes: bool) -> None:
    """Delete knowledge base NAME (documents, chunks, graph and index)."""
    from engine.api import KnowledgeBaseError, delete_kb, get_kb

    rt = _runtime(ctx)
    try:
        get_kb(rt.store, name)
        if not yes:
            click.confirm(f"Delete knowledge base {name!r}?", abort=True)
        delete_kb(rt.store, rt.home, name)
    except KnowledgeBaseError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"deleted {name}")


@kb.command("graph")
@click.argument("name")
@click.option("--offline", is_flag=True, help="Use the offline extractor even when a kernel LLM is configured.")
@click.option("--batch-size", type=click.IntRange(min=1), default=10, show_default=True,
              help="Chunks per LLM call.")
@click.option("--area", default=None, help="Domain hint for the LLM extractor (e.g. medicine).")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@click.option("--quiet", is_flag=True, help="No progress display (it goes to stderr otherwise).")
@click.pass_context
def graph_cmd(ctx: click.Context, name: str, offline: bool, batch_size: int, area: str | None, as_json: bool,
              quiet: bool) -> None:
    """Build the context graph of NAME and report its counts.

    Entities come from the kernel LLM when one is configured, else from the offline extractor.
    """
    from engine.api import (
        EmbedderError,
        KnowledgeBaseError,
        LLMEntityExtractor,
        OfflineEntityExtractor,
        build_graph,
    )

    rt = _runtime(ctx)
    kernel = rt.config.kernel
    if kernel is not None and not offline:
        from engine.api import LLMClient, LLMError

        extractor = LLMEntityExtractor(LLMClient(rt.store, kernel, role="kernel", use_cache=rt.use_cache),
                                       batch_size=batch_size, area=area)
        errors: tuple[type[Exception], ...] = (KnowledgeBaseError, EmbedderError, LLMError)
    else:
        extractor = OfflineEntityExtractor()
        errors = (KnowledgeBaseError, EmbedderError)
    try:
        with _progress(quiet, as_json) as display:
            stats = build_graph(rt.store, name, extractor=extractor, config=rt.config.retrieval,
                                progress=display.stage(STAGE_LABELS, STAGE_UNITS))
    except errors as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        _echo_json(stats.to_dict())
        return
    click.echo(
        f"{stats.kb}: {stats.entities} entities, {stats.edges} edges ({stats.chunk_edges} chunk, "
        f"{stats.document_edges} document), mean degree {stats.mean_degree:.2f}, largest component "
        f"{stats.largest_component} of {stats.components} components ({stats.isolated} isolated); "
        f"extractor {stats.extractor}; {stats.chunks_with_entities}/{stats.chunks} chunks have entities")


@kb.command("path")
@click.argument("name")
@click.argument("question")
@click.option("--hops", type=click.IntRange(min=1), default=2, show_default=True, help="Hops per round.")
@click.option("--rounds", type=click.IntRange(min=1), default=1, show_default=True,
              help="Extension rounds (the path has hops + rounds - 1 hops).")
@click.option("--seed", type=int, default=0, show_default=True, help="RNG seed.")
@click.option("--json", "as_json", is_flag=True, help="Print the path as JSON.")
@click.pass_context
def path_cmd(ctx: click.Context, name: str, question: str, hops: int, rounds: int, seed: int, as_json: bool) -> None:
    """Sample a knowledge path on NAME's context graph for a seed QUESTION."""
    from engine.api import EmbedderError, KnowledgeBaseError, sample_path

    rt = _runtime(ctx)
    try:
        path = sample_path(rt.store, rt.home, name, question, hops=hops, rounds=rounds, seed=seed,
                           config=rt.config.retrieval)
    except (KnowledgeBaseError, EmbedderError) as exc:
        raise click.ClickException(str(exc)) from None
    if as_json:
        _echo_json(path.to_dict())
        return
    click.echo(f"question entities: {', '.join(path.seed_entities[:8]) or '(none)'}; matched {path.matched!r}")
    for i, hop in enumerate(path.hops, start=1):
        preview = " ".join(hop.text.split())
        click.echo(f"{i}. {hop.entity}  [chunk {hop.chunk_id}, {hop.document_title}, via {hop.via}, "
                   f"question sim {hop.question_similarity:.3f}]")
        click.echo(f"   {preview[:200]}{'...' if len(preview) > 200 else ''}")
    windows = path.windows()
    if len(windows) > 1:
        spans = ", ".join(f"round {i + 1}: hops {path.hops.index(w[0]) + 1}-{path.hops.index(w[-1]) + 1}"
                          for i, w in enumerate(windows))
        click.echo(f"windows: {spans}")
