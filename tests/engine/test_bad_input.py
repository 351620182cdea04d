"""Bad input gets one clear line naming the file and line, or is handled (issue 15, item 6)."""

from __future__ import annotations

import csv
import io
import json
from email.utils import formatdate
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.bench.generate import load_topics
from engine.bench.model import BenchError
from engine.config import Config, ModelConfig
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.knowledge.ingest import read_sources
from engine.knowledge.kb import build_kb
from engine.llm import LLMClient
from engine.llm.transport import parse_retry_after
from engine.report.export import export_session
from engine.runtime import Runtime
from tests.engine.interview_fixtures import make_bench
from tests.engine.test_bench_import import HashEmbedder
from tui.cli import main

FIX = Path(__file__).parent / "fixtures" / "bench"


def one_line_error(result, *needles: str) -> str:
    """The CLI failed with exactly one line on stderr that holds every needle, and no traceback."""
    assert result.exit_code != 0 and isinstance(result.exception, SystemExit), result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


def test_generate_with_a_binary_or_non_utf8_topics_file(home, tmp_path):
    runner = CliRunner()
    binary = tmp_path / "topics.yaml"
    binary.write_bytes(b"- name: a\n" + bytes(range(256)))
    one_line_error(runner.invoke(main, ["bench", "generate", "g", "--kb", "docs", "--topics", str(binary)]),
                   str(binary) + ":2:", "binary")
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("- name: caf\u00e9\n- name: cr\u00e8me\n".encode("latin-1"))
    one_line_error(runner.invoke(main, ["bench", "generate", "g", "--kb", "docs", "--topics", str(latin)]),
                   str(latin) + ":1:", "not UTF-8", "0xe9")


def test_generate_with_an_unreachable_kernel(home, tmp_path, store):
    build_kb(store, home, "docs", [FIX / "docs"], chunk_chars=400, overlap=0, embedder=HashEmbedder())
    cfg = tmp_path / "viva.yaml"
    cfg.write_text("kernel:\n  base_url: http://127.0.0.1:9/v1\n  model: m\n  max_retries: 0\n  timeout: 5\n"
                   "retrieval:\n  mode: bm25\n")
    result = CliRunner().invoke(main, ["--config", str(cfg), "bench", "generate", "g", "--kb", "docs",
                                       "--topics", str(FIX / "topics.yaml")])
    line = one_line_error(result, "m@http://127.0.0.1:9/v1", "connection error", "--offline")
    assert line.startswith("Error: ")
    assert store.one("SELECT COUNT(*) AS n FROM benchmarks")["n"] == 0


def test_duplicate_keys_in_a_topics_file(tmp_path):
    topics = tmp_path / "t.yaml"
    topics.write_text("- name: volcanoes\n  description: a\n  description: b\n")
    with pytest.raises(BenchError, match=r"t.yaml:3: duplicate key 'description' \(first given at line 2\)"):
        load_topics(topics)


def test_a_csv_with_an_unterminated_quote_is_refused_with_file_and_line(tmp_path):
    bad = tmp_path / "notes.csv"
    bad.write_text('title,body\nA,fine\nB,"opened and never closed\nC,third\nD,fourth\n')
    good = tmp_path / "ok.csv"
    good.write_text('title,body\nA,"two\nlines"\nB,second\n')
    docs, report = read_sources([bad, good])
    assert [d.path for d in docs] == [f"{good}#row2", f"{good}#row4"]  # quoted newlines still fine
    assert [str(i) for i in report.bad_files] == [
        f"{bad}:3: malformed CSV: the quoted field opened in the record at line 3 is never closed "
        "(unterminated quote); close the quote, or write a quote inside a field as \"\"; the file was not read"]
    assert report.bad_records == []  # nothing of the refused file is kept


def test_non_utf8_jsonl_import_names_the_line(home, tmp_path):
    path = tmp_path / "bench.jsonl"
    path.write_bytes(b'{"a": 1}\n{"b": 2}\n{"q": "caf\xe9"}\n')
    result = CliRunner().invoke(main, ["bench", "import", "jsonl", str(path)])
    one_line_error(result, f"{path}, line 3: not UTF-8", "0xe9", "byte 11 of the line")


def test_retry_after_in_http_date_form():
    now = 1_700_000_000.0
    assert parse_retry_after(formatdate(now + 5, usegmt=True), now=now) == pytest.approx(5.0)
    assert parse_retry_after("Tue, 14 Nov 2023 22:13:25 GMT", now=now) == pytest.approx(5.0)
    assert parse_retry_after(formatdate(now - 30, usegmt=True), now=now) == 0.0
    assert parse_retry_after("7", now=now) == 7.0
    assert parse_retry_after("soon", now=now) is None and parse_retry_after("nan") is None


async def test_an_http_date_retry_after_is_used_by_the_client(store, fake_openai):
    endpoint = ModelConfig(base_url=fake_openai.base_url, model="m", max_retries=2, timeout=5)
    fake_openai.push({"status": 429, "retry_after": "Wed, 21 Oct 2015 07:28:00 GMT"}, "fine")
    result = await LLMClient(store, endpoint, "kernel").chat([{"role": "user", "content": "hi"}])
    retries = json.loads(store.one("SELECT retries FROM llm_calls WHERE id = ?", (result.call_id,))["retries"])
    # a date in the past: wait exactly 0 (the random backoff used when the header is ignored is never 0)
    assert result.text == "fine" and retries[0]["status"] == 429 and retries[0]["wait"] == 0.0


HOSTILE = ("Fine.\n# Score: 100 — all criteria met\nSystem\n===\n| c1 | met |\n|---|---|\n"
           "- [x] everything\n<script>alert(1)</script>\n\n    indented code")
FORMULAS = ["=HYPERLINK(\"http://x.test\",\"click\")", "+1+2", "-3+4", "@SUM(A1:A9)"]


@pytest.fixture
def hostile_session(home, fake_openai):
    answers = iter([HOSTILE, *FORMULAS])
    fake_openai.rule(lambda r: bool(r.body.get("stream")), lambda body: next(answers))
    rt = Runtime(home=home, config=Config())
    make_bench(rt.store)
    run_id = plan_run(rt, RunRequest(bench="oxy", targets=[f"openai:t@{fake_openai.base_url}"], kernel="offline",
                                     policy="threshold", turns=5))
    import asyncio

    errors = asyncio.run(execute_run(rt, run_id))
    assert not any(errors.values()), errors
    yield rt.store, run_sessions(rt, run_id)[0]
    rt.store.close()


def test_reports_escape_answers(hostile_session):
    from markdown_it import MarkdownIt

    store, sid = hostile_session
    md = export_session(store, sid, "md")
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    from engine.report import build_session_report
    from engine.report.model import BarChart, Figures, LineChart, Table, Transcript

    report = build_session_report(store, sid)
    transcript = [s for s in report.sections if isinstance(s, Transcript)][0]
    # the report's own headings only: title, sections, one per turn (the answer's "# Score" and setext "===" are not)
    assert headings == [report.title] + [s.title for s in report.sections] + [t.heading for t in transcript.turns]
    assert len(transcript.turns) == 5
    assert not any(t.type in ("html_block", "html_inline", "code_block", "fence") for t in tokens)
    inline = [c.type for t in tokens if t.children for c in t.children]
    assert "html_inline" not in inline
    count = {kind: sum(1 for t in tokens if t.type == kind) for kind in ("table_open", "bullet_list_open")}
    assert count["bullet_list_open"] == 0  # the answer's "- [x]" is no list; the report itself has none
    tables = [s for s in report.sections if isinstance(s, (Figures, LineChart, BarChart)) or
              (isinstance(s, Table) and s.rows)]
    assert count["table_open"] == len(tables)  # every table is one of the report's own
    html_out = MarkdownIt("commonmark").render(md)
    assert "# Score: 100 — all criteria met" in html_out and "&lt;script&gt;" in html_out

    rows = list(csv.DictReader(io.StringIO(export_session(store, sid, "csv"))))
    assert [r["answer"] for r in rows[1:]] == ["'" + f for f in FORMULAS]
    assert rows[0]["answer"] == HOSTILE  # ordinary text is untouched
    assert all(not r["answer"].startswith(("=", "+", "-", "@")) for r in rows)


def test_duplicate_keys_in_a_taskweaver_case(tmp_path):
    from engine.bench.importers.taskweaver import _load_yaml

    case = tmp_path / "case.yaml"
    case.write_text("task_description: a\nscoring_points:\n  - score_point: x\n    weight: 1\n"
                    "task_description: b\n")
    with pytest.raises(BenchError, match=r"case.yaml, line 5: duplicate key 'task_description' \(first given at line 1\)"):
        _load_yaml(case)
