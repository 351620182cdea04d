"""``viva judge check FILE``: measure a judge against human labels before trusting its scores."""

from __future__ import annotations

import json

import click


@click.group()
def judge():
    """Check a judge against human-labelled answers."""


@judge.command()
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--by", "by", default=None, metavar="FIELD", help="Also report the figures per value of FIELD (e.g. model).")
@click.option("--disagreements", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="List N rows where the judge and people disagree, with the judge's rationale.")
@click.option("--judge", "judge_name", default="offline", show_default=True, metavar="offline|NAME",
              help="The judge: offline, or a configured endpoint (judge, kernel, or a target's name in viva.yaml).")
@click.option("--repeat", type=click.IntRange(min=1), default=1, show_default=True, metavar="K",
              help="Judge K times (an LLM judge) and report test-retest agreement.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True,
              help="LLM judge calls at once.")
@click.option("--either", is_flag=True,
              help="Gold rows: also show each of the file's other judges combined with the lexical rule "
                   "(credited when either credits), as sessions combine an LLM judge with it.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def check(ctx, file, by, disagreements, judge_name, repeat, concurrency, either, as_json):
    """Judge every row of FILE and report agreement with the human labels.

    FILE is JSON Lines. Gold rows: question, golds (list), answer, human (true/false). Criterion rows:
    criterion, answer, human. Other fields can group the figures (--by); other true/false fields are
    read as other judges' verdicts and shown beside viva's, with exact match and substring (gold
    rows) or word overlap at its best threshold (criterion rows). Read Cohen's κ beside the base
    rate: raw accuracy alone flatters a judge that credits everything. With an LLM judge, calls are
    cached in the data home and tokens and cost are shown; --repeat K measures test-retest agreement.
    """
    from engine.api import render_judge_check
    from tui.cli.context import get_engine

    report = get_engine(ctx).judge_check(file, judge=judge_name, by=by, disagreements=disagreements,
                                         repeat=repeat, concurrency=concurrency, either=either)
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False, indent=1))
    else:
        click.echo(render_judge_check(report))


@judge.command()
@click.option("--bench", "bench", default=None, metavar="NAME",
              help="The benchmark whose golds build the answers (default: every benchmark with gold answers).")
@click.option("--judge", "judge_name", default="offline", show_default=True, metavar="offline|NAME",
              help="The judge: offline, or a configured endpoint (combined with the lexical rule as sessions do).")
@click.option("--set", "sets", type=click.Choice(["dev", "heldout", "both"]), default="both", show_default=True,
              help="The phrasing set(s): dev (rules developed on it) and heldout (never tuned on).")
@click.option("--patterns", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Another pattern file (default: the documented engine/judge/probe_patterns.yaml).")
@click.option("--examples", type=click.IntRange(min=0), default=0, show_default=True, metavar="N",
              help="List N failing answers per pattern and set, with the judge's rationale.")
@click.option("--concurrency", type=click.IntRange(min=1), default=4, show_default=True, help="LLM judge calls at once.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
def probe(ctx, bench, judge_name, sets, patterns, examples, concurrency, as_json):
    """Can the judge be gamed? Build adversarial answers from a benchmark's own golds and report, per pattern,
    the share the judge credits.

    Patterns (the gold denied, attributed to others, superseded, withdrawn, supposed, asked, swept among
    candidates, hidden in code, a URL or noise, the source pasted) should be credited on at most 5% of
    items; the right answer, a paraphrase and the answer with an apposition on at least 90%.
    """
    from engine.api import render_judge_probe
    from tui.cli.context import get_engine

    chosen = ("dev", "heldout") if sets == "both" else (sets,)
    report = get_engine(ctx).judge_probe(bench, judge=judge_name, sets=chosen, examples=examples,
                                         patterns=patterns, concurrency=concurrency)
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False, indent=1))
    else:
        click.echo(render_judge_probe(report))
