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
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def check(file, by, disagreements, as_json):
    """Judge every row of FILE and report agreement with the human labels.

    FILE is JSON Lines. Gold rows: question, golds (list), answer, human (true/false). Criterion rows:
    criterion, answer, human. Other fields can group the figures (--by); other true/false fields are
    read as other judges' verdicts and shown beside viva's, with exact match and substring (gold
    rows) or word overlap at its best threshold (criterion rows). Read Cohen's κ beside the base
    rate: raw accuracy alone flatters a judge that credits everything.
    """
    from engine.api import load_check_rows, render_judge_check, run_judge_check

    rows = load_check_rows(file)
    report = run_judge_check(file, rows, by=by, disagreements=disagreements)
    if as_json:
        click.echo(json.dumps(report.as_dict(), ensure_ascii=False, indent=1))
    else:
        click.echo(render_judge_check(report))
