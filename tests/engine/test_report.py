"""Reports from a real run: one model, four renderings (Markdown, JSON, CSV, HTML) that show the
engine's figures, overrides with who and when, the rubric's history and agreement; candidate text is
escaped in every format."""

from __future__ import annotations

import csv
import io
import json
import struct
import subprocess
import zlib
from html.parser import HTMLParser

import pytest

from engine.bench.rubric import get_version
from engine.interview.queries import session_detail
from engine.metrics.breakdown import criterion_rates, run_totals, topic_table
from engine.metrics.sessions import agreement, ratings_table, session_metrics, target_table
from engine.report import build_run_report, build_session_report, export_run, export_session, render
from engine.report.escape import csv_text_cell, escape_markdown
from engine.report.model import BarChart, Figures, LineChart, Row, Table, Transcript
from tests.engine.report_fixtures import AT_FORMULA, FORMULAS, HOSTILE, TURNS, make_reported_run

V1_KEYS = ["format", "version", "session", "item", "rubric", "turns", "metrics"]


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    from tests.fakes.openai_server import FakeOpenAI

    home = tmp_path_factory.mktemp("home")
    with FakeOpenAI() as fake:
        run = make_reported_run(home, fake)
    yield run
    run.runtime.close()


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text."""

    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def having(self, tag: str, cls: str | None = None) -> list[dict[str, str]]:
        return [a for t, a in self.tags if t == tag and (cls is None or cls in (a.get("class") or "").split())]


def parse_html(text: str) -> Tags:
    parser = Tags()
    parser.feed(text)
    return parser


def test_session_json_is_version_2_with_history_overrides_and_engine_figures(reported):
    store, sid = reported.runtime.store, reported.sessions[0]
    doc = json.loads(export_session(store, sid, "json"))
    assert list(doc)[:7] == V1_KEYS and (doc["format"], doc["version"]) == ("viva-session", 2)
    assert list(doc)[7:] == ["rubric_history", "overrides", "criteria", "agreement", "ratings", "chance", "figures"]
    v1, v2 = reported.versions
    assert [(v["version"], v["current"], v["note"]) for v in doc["rubric_history"]] == [
        (1, False, ""), (2, True, "photosynthesis matters more")]
    assert doc["rubric"]["version"] == 2 and {t["rubric_version_id"] for t in doc["turns"]} == {v2.id}
    # overrides: in order, with who, when and the note as typed
    assert [(o["turn"], o["cid"], o["met"], o["by"]) for o in doc["overrides"]] == [(1, "c1", False, "human"),
                                                                                  (2, "c3", True, "ana")]
    assert doc["overrides"][0]["note"].startswith("not <b>really</b>") and doc["overrides"][1]["at"].endswith("+00:00")
    [c3] = [v for v in doc["turns"][2]["verdicts"] if v["cid"] == "c3"]
    assert (c3["source"], c3["by"], c3["met"]) == ("human", "ana", True) and "original_met" in c3 and c3["at"]
    # the figures are the engine's, not recomputed
    assert doc["metrics"] == session_metrics(store, sid)
    assert doc["criteria"] == criterion_rates(store, sid, lambda v: get_version(store, v).criteria)
    assert doc["agreement"] == agreement(store, [sid]) and doc["agreement"]["reviewed"] == 2
    detail = session_detail(store, sid)
    assert [t["score"] for t in doc["turns"]] == [t["score"] for t in detail["turns"]]
    summary = {r["label"]: r["value"] for r in doc["figures"]["summary"]}
    assert summary["Score"] == detail["session"]["score"] and summary["tokens in"] == doc["metrics"]["tokens_in"]
    dyn = {r["label"]: r["value"] for r in doc["figures"]["dynamism"]}
    assert dyn["R"] == doc["metrics"]["r"] and dyn["P+"] == doc["metrics"]["p_plus"]
    kappa = doc["figures"]["agreement"][2]
    assert doc["agreement"]["overall"]["kappa_too_few"] and kappa["value"] is None  # κ from 1-2 verdicts is noise
    assert "too few" in kappa["note"]
    # Professionalism and Stability: the judge rated the conversation (the engine's per-target figures)
    assert doc["ratings"] == ratings_table(store, [sid])[doc["session"]["target"]] and doc["ratings"]["rated"] == 1
    ratings = {r["label"]: r["value"] for r in doc["figures"]["ratings"]}
    assert ratings["Professionalism"] == doc["ratings"]["professionalism"] and ratings["clarity"] == 9


def test_session_model_sections_are_the_documents_numbers(reported):
    store, sid = reported.runtime.store, reported.sessions[0]
    report = build_session_report(store, sid)
    line = report.section("score-per-turn")
    assert isinstance(line, LineChart) and [p.y for p in line.points] == [t["score"] for t in report.data["turns"]]
    assert [p.category for p in line.points][0] == "initial" and "challenge" in {p.category for p in line.points}
    bars = report.section("criteria")
    assert isinstance(bars, BarChart) and [v[0] for v in bars.values] == [c["rate"] for c in report.data["criteria"]]
    history = report.section("rubric-history")
    assert isinstance(history, Table) and [r[0] for r in history.rows] == [1, 2]
    assert history.rows[1][6] == "current, used here" and history.rows[0][6] == ""
    verdicts = report.section("verdicts")
    ana = [r for r in verdicts.rows if r[5] == "ana"]
    assert len(ana) == 1 and ana[0][:4] == [2, "c3", True, "human"] and ana[0][6]  # who and when
    assert isinstance(report.section("transcript"), Transcript)
    assert len(report.section("overrides").rows) == 2


def test_markdown_escapes_answers_and_notes(reported):
    from markdown_it import MarkdownIt

    store, sid = reported.runtime.store, reported.sessions[0]
    report = build_session_report(store, sid)
    md = render(report, "md")
    assert md.endswith("\n") and not md.endswith("\n\n")
    tokens = MarkdownIt("commonmark").enable("table").parse(md)
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    expected = [report.title] + [s.title for s in report.sections] + [t.heading for t in
                                                                     report.section("transcript").turns]
    assert headings == expected  # the answer's "# Score" and "===" and the note's "# fake heading" are not headings
    assert not any(t.type in ("html_block", "html_inline", "code_block", "fence", "bullet_list_open") for t in tokens)
    assert "html_inline" not in [c.type for t in tokens if t.children for c in t.children]
    tables = sum(1 for t in tokens if t.type == "table_open")
    assert tables == sum(1 for s in report.sections if isinstance(s, (Figures, LineChart, BarChart))
                         or (isinstance(s, Table) and s.rows))
    rendered = MarkdownIt("commonmark").enable("table").render(md)
    assert "# Score: 100<br" in rendered and "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "<script>" not in rendered and "not &lt;b&gt;really&lt;/b&gt; | said # fake heading" in rendered


def test_csv_quotes_formulas_and_has_no_blank_row(reported):
    store, sid = reported.runtime.store, reported.sessions[0]
    text = export_session(store, sid, "csv")
    assert text.endswith("\r\n") and not text.endswith("\r\n\r\n")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert all(rows) and len(rows) == 1 + TURNS
    header = rows[0]
    assert header[:2] == ["session", "turn"] and header[-2:] == ["question", "answer"]
    answers = [r[header.index("answer")] for r in rows[1:]]
    assert answers[0] == HOSTILE  # ordinary text is kept as it is
    assert answers[1:] == ["'" + f for f in FORMULAS]
    assert all(not cell.startswith(("=", "+", "-", "@")) or _number(cell) for r in rows for cell in r)
    overridden = [r[header.index("overridden")] for r in rows[1:]]
    assert overridden[2] == "c3"
    others = [r for s in reported.sessions[1:]
              for r in csv.DictReader(io.StringIO(export_session(store, s, "csv"), newline=""))]
    assert "'" + AT_FORMULA in [r["answer"] for r in others]
    assert csv_text_cell(-0.25) == -0.25 and csv_text_cell("-x") == "'-x" and csv_text_cell("\tx") == "'\tx"


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_html_is_self_contained_escaped_and_has_the_charts(reported):
    store, sid = reported.runtime.store, reported.sessions[0]
    report = build_session_report(store, sid)
    page = render(report, "html")
    parsed = parse_html(page)
    tags = {t for t, _ in parsed.tags}
    assert not tags & {"script", "iframe", "img", "link", "object", "embed", "base"}
    for _, attrs in parsed.tags:  # nothing is loaded from anywhere; links only within the page
        assert "src" not in attrs and all(not k.startswith("on") for k in attrs)
        assert attrs.get("href", "#").startswith("#")
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    [line] = parsed.having("svg", "chart-line")
    assert line["role"] == "img"
    judged = [t for t in report.data["turns"] if t["score"] is not None]
    assert len(parsed.having("circle", "point")) == len(judged)
    assert len(parsed.having("polyline", "series")) == 1
    assert len(parsed.having("rect", "bar")) == len(report.data["criteria"])
    assert {a.get("id") for a in parsed.having("section")} >= {"summary", "score-per-turn", "criteria", "dynamism",
                                                               "turns", "verdicts", "overrides", "rubric-history",
                                                               "agreement", "transcript"}
    text = "".join(parsed.text)
    assert HOSTILE.splitlines()[1] in text and "ana" in text


def test_run_report_leaderboard_topics_and_totals(reported):
    store, run_id = reported.runtime.store, reported.run_id
    report = build_run_report(store, run_id)
    doc = json.loads(export_run(store, run_id, "json"))
    assert (doc["format"], doc["version"]) == ("viva-run", 1) and len(doc["sessions"]) == 4
    ids = [s["id"] for s in doc["sessions"]]
    assert doc["leaderboard"] == sorted(target_table(store, ids), key=lambda r: -(r["score"] or 0.0))
    assert doc["topics"] == topic_table(store, ids) and doc["totals"] == run_totals(store, ids)
    assert doc["agreement"] == agreement(store, ids)
    assert [r["used"] for r in doc["rubrics"]] == [[2, 1], [1]] or [r["used"] for r in doc["rubrics"]] == [[1, 2], [1]]
    chart = report.section("leaderboard-chart")
    assert chart.groups == [r["target"] for r in doc["leaderboard"]]
    assert [v[0] for v in chart.values] == [r["score"] for r in doc["leaderboard"]]
    topics = report.section("topics")
    assert topics.groups == ["oxygen", "ozone"] and topics.series == chart.groups
    text = export_run(store, run_id, "csv")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert len(rows) == 1 + 2 and [r[1] for r in rows[1:]] == chart.groups and text.endswith("\r\n")
    page = parse_html(export_run(store, run_id, "html"))
    assert len(page.having("rect", "bar")) == 2 + sum(v is not None for row in topics.values for v in row)
    md = export_run(store, run_id, "md")
    assert "## Leaderboard" in md and "fake-a" in md and "## Professionalism and Stability" in md
    ratings = report.section("ratings")
    assert [(r[0], r[2]) for r in ratings.rows] == [(r["target"], r["ratings"]["professionalism"])
                                                    for r in doc["leaderboard"]]


def test_a_new_figure_is_one_more_row(reported):
    store, sid = reported.runtime.store, reported.sessions[0]
    report = build_session_report(store, sid)
    report.section("summary").rows.append(Row("my new figure", 0.4242, "what it means <here>", ".2f"))
    assert "| my new figure | 0.42 | what it means \\<here\\> |" in render(report, "md")
    assert {"label": "my new figure", "value": 0.4242, "note": "what it means <here>"} in \
        json.loads(render(report, "json"))["figures"]["summary"]
    assert "<td>my new figure</td><td class='num'>0.42</td><td class='note-cell'>what it means &lt;here&gt;</td>" \
        in render(report, "html")


def test_escape_markdown_rules():
    assert escape_markdown("# h\n\n1. x\n- y\n> q\n<b>") == "\\# h\\\n1\\. x\\\n\\- y\\\n\\> q\\\n\\<b\\>"
    assert escape_markdown(None) == "" and escape_markdown("a|b") == "a\\|b"


def test_unknown_format_and_missing_subjects(reported):
    store = reported.runtime.store
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        export_session(store, reported.sessions[0], "pdf")
    with pytest.raises(KeyError):
        build_run_report(store, 999)


# -- the HTML page in a real browser -------------------------------------------------------------------
def chromium() -> str | None:
    """Debian's Chromium (or another Chromium build on the PATH), if installed."""
    import os
    import shutil

    for name in (os.environ.get("VIVA_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"):
        if name and shutil.which(name):
            return shutil.which(name)
    return None


def headless(browser: str, profile, *args: str) -> subprocess.CompletedProcess:
    """Run headless Chromium with no network, GPU or sandbox (a guard timeout, not a timing check)."""
    return subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                           "--no-first-run", "--hide-scrollbars", f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=180)


def decode_png(data: bytes):
    """An 8-bit RGB or RGBA, non-interlaced PNG (what Chromium writes) as an array (height, width, channels)."""
    import numpy as np

    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    pos, idat, header = 8, [], None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
    width, height, depth, colour, _, _, interlace = header
    assert depth == 8 and colour in (2, 6) and interlace == 0, header
    bpp = 3 if colour == 2 else 4
    stride = width * bpp
    raw = np.frombuffer(zlib.decompress(b"".join(idat)), dtype=np.uint8).reshape(height, stride + 1)
    out = np.zeros((height, stride), dtype=np.uint8)
    prev = np.zeros(stride, dtype=np.int64)
    for y in range(height):  # undo each row's filter (PNG spec, section 9)
        kind, line = raw[y, 0], raw[y, 1:].astype(np.int64)
        if kind == 0:
            cur = line
        elif kind == 1:
            cur = np.cumsum(line.reshape(width, bpp), axis=0).reshape(-1) % 256
        elif kind == 2:
            cur = (line + prev) % 256
        else:
            cur, up = line.tolist(), prev.tolist()
            for i in range(stride):
                a = cur[i - bpp] if i >= bpp else 0
                if kind == 3:
                    cur[i] = (cur[i] + ((a + up[i]) >> 1)) & 255
                else:
                    b, c = up[i], (up[i - bpp] if i >= bpp else 0)
                    p = a + b - c
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                    cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
            cur = np.array(cur, dtype=np.int64)
        out[y] = cur
        prev = cur
    return out.reshape(height, width, bpp)[:, :, :3]


def test_html_report_renders_in_headless_chromium(reported, tmp_path):
    import numpy as np

    from engine.report.svg import ACTION_COLOURS, PALETTE

    browser = chromium()
    if browser is None:
        pytest.skip("Chromium is not installed (Debian: apt-get install chromium); the browser check is skipped")
    store = reported.runtime.store
    page = tmp_path / "session.html"
    page.write_text(export_session(store, reported.sessions[0], "html"), encoding="utf-8")
    shot = tmp_path / "session.png"
    done = headless(browser, tmp_path / "profile", "--window-size=1100,1400", f"--screenshot={shot}", page.as_uri())
    assert shot.exists(), done.stderr[-2000:]
    pixels = decode_png(shot.read_bytes())
    assert pixels.shape == (1400, 1100, 3)
    colours = np.unique(pixels.reshape(-1, 3), axis=0)
    assert len(colours) > 50, "the screenshot is blank (one colour or nearly)"

    def painted(hex_colour: str) -> int:
        rgb = [int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)]
        return int(np.all(pixels == rgb, axis=-1).sum())

    assert painted(PALETTE[0]) > 500, "the criteria bars were not painted"
    assert painted(ACTION_COLOURS["challenge"]) > 10, "the challenge points of the score line were not painted"

    dom = headless(browser, tmp_path / "profile", "--dump-dom", page.as_uri())
    assert dom.returncode == 0, dom.stderr[-2000:]
    parsed = parse_html(dom.stdout)
    report = build_session_report(store, reported.sessions[0])
    assert len(parsed.having("svg", "chart-line")) == 1 and len(parsed.having("svg", "chart-bars")) == 1
    assert len(parsed.having("circle", "point")) == sum(t["score"] is not None for t in report.data["turns"])
    assert len(parsed.having("rect", "bar")) == len(report.data["criteria"])
    assert len(parsed.having("table", "figures")) == sum(isinstance(s, Figures) for s in report.sections) == 4
    assert len(parsed.having("article", "turn")) == TURNS
    assert not parsed.having("script"), "the answer's <script> became an element"


def test_graded_session_and_run_reports(home, fake_openai):
    """A JudgeAgent (graded) run: its figures (evaluation score, ACC1/ACC2/CR/CtE/Δ, the difficulty
    track) are in the session report, and the run report's graded table is the engine's."""
    import asyncio

    from engine.bench.items import add_item, create_benchmark
    from engine.bench.rubric import create_rubric
    from engine.config import Config
    from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
    from engine.runtime import Runtime

    rt = Runtime(home=home, config=Config())
    options = {"A": "Iron", "B": "Oxygen", "C": "Silicon", "D": "Aluminium"}
    with rt.store.transaction():
        bid = create_benchmark(rt.store, "mc", "medqa")
        for i in range(3):
            item = add_item(rt.store, bid, i, protocol="graded", topic="geo", question=f"Question {i}: which element?",
                            options=options, gold="B", reference="Oxygen")
            create_rubric(rt.store, item, [{"text": "Chooses option B: Oxygen", "answers": ["B"]}], author="importer")
    fake_openai.rule(lambda r: bool(r.body.get("stream")), "B")
    run_id = plan_run(rt, RunRequest(bench="mc", targets=[f"openai:right@{fake_openai.base_url}"], kernel="offline"))
    assert not any(asyncio.run(execute_run(rt, run_id)).values())
    [sid] = run_sessions(rt, run_id)
    graded = session_metrics(rt.store, sid)["graded"]
    report = build_session_report(rt.store, sid)
    rows = {r.label: r.value for r in report.section("graded").rows}
    assert rows["evaluation score"] == graded["evaluation_score"] and rows["questions graded"] == graded["questions"]
    assert rows["ACC1"] == (graded["validation"] or {}).get("acc1")
    assert [r[1:4] for r in report.section("graded-track").rows] == [[t["phase"], t["asked"], t["right"]]
                                                                     for t in graded["track"]]
    for fmt in ("md", "json", "csv", "html"):
        assert export_session(rt.store, sid, fmt).endswith("\n")
    run = build_run_report(rt.store, run_id)
    [row] = run.section("graded").rows
    [target] = target_table(rt.store, [sid])
    assert row[0] == target["target"] and row[4] == target["graded"]["evaluation_score"]
    assert "## Graded (JudgeAgent)" in render(run, "md")
    rt.close()


def test_an_offline_run_says_needs_an_llm_judge_once(home):
    """No conversation rated (the offline kernel does not rate): every report says "needs an LLM judge"
    once, in one row, instead of eight rating rows (or columns) that each say "not rated"."""
    import asyncio

    from engine.config import Config
    from engine.demo import prepare_demo
    from engine.demo.echo import SPEC
    from engine.interview.run import execute_run, run_sessions
    from engine.runtime import Runtime

    runtime = Runtime(home=home, config=Config())
    try:
        run_id = prepare_demo(runtime, targets=["kb:demo", SPEC], policy="threshold", turns=2, n_items=1,
                              log=lambda m: None)
        assert set(asyncio.run(execute_run(runtime, run_id)).values()) == {None}
        store, sid = runtime.store, run_sessions(runtime, run_id)[0]
        one = ("Professionalism and Stability", "needs an LLM judge",
               "2 conversation(s) not rated: the offline kernel does not rate")
        for report, n in ((build_run_report(store, run_id), 2), (build_session_report(store, sid), 1)):
            section = report.section("ratings")
            assert isinstance(section, Figures) and len(section.rows) == 1, section
            assert (section.rows[0].label, section.rows[0].value) == one[:2]
            assert section.rows[0].note == one[2].replace("2", str(n), 1)
        for export, subject in ((export_run, run_id), (export_session, sid)):
            md = export(store, subject, "md")
            assert md.count("needs an LLM judge") == 1 and "| accuracy |" not in md and "not rated: needs" not in md
            html = export(store, subject, "html")
            assert html.count("needs an LLM judge") == 1 and "user satisfaction" not in html
            figures = json.loads(export(store, subject, "json"))["figures"]["ratings"]
            assert [(f["label"], f["value"]) for f in figures] == [one[:2]]
    finally:
        runtime.store.close()
