"""Benchmark generation (TestAgent 2.1): the offline kernel, and a kernel model on the fake server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from engine.bench import offline
from engine.bench.generate import Topic, generate_benchmark, load_topics
from engine.bench.items import get_benchmark, list_items
from engine.bench.model import BenchError
from engine.bench.rubric import current_rubric
from engine.config import Config
from engine.knowledge.kb import build_kb
from engine.text.cloze import Cloze
from engine.text.sentences import plain_heading
from tests.engine.test_bench_import import HashEmbedder

FIX = Path(__file__).parent / "fixtures" / "bench"
TOPICS = load_topics(FIX / "topics.yaml")


@pytest.fixture
def kb(store, home):
    build_kb(store, home, "docs", [FIX / "docs"], chunk_chars=400, overlap=0, embedder=HashEmbedder())
    return "docs"


def chunk_texts(store):
    return {r["id"]: r["text"] for r in store.query("SELECT id, text FROM chunks")}


def test_topics_file_is_validated(tmp_path):
    assert [t.name for t in TOPICS] == ["volcanoes", "honey bees"]
    assert len(TOPICS[0].demonstrations) == 3 and TOPICS[1].demonstrations == ()
    assert TOPICS[0].demonstrations[0]["good_answer"].startswith("Description:")
    bad = tmp_path / "t.yaml"
    bad.write_text("- name: a\n  demonstrations:\n    - question: q\n      good: g\n")
    with pytest.raises(BenchError, match=r"topics\[0\].demonstrations\[0\]: field 'bad_answer'"):
        load_topics(bad)
    bad.write_text("- name: a\n- name: a\n")
    with pytest.raises(BenchError, match="duplicate topic name"):
        load_topics(bad)


async def test_offline_generation_is_grounded_and_seeded(store, home, kb):
    s = await generate_benchmark(store, home, "gen", kb, TOPICS, per_topic=2, seed=3, embedder=HashEmbedder())
    assert (s.kernel, s.items, s.per_topic) == ("offline", 4, {"volcanoes": 2, "honey bees": 2})
    chunks = chunk_texts(store)
    items = list_items(store, "gen")
    assert get_benchmark(store, "gen").kb == "docs"
    for item in items:
        assert item.protocol == "adaptive" and item.meta["generator"] == "offline"
        fact = item.meta["key_sentence"]
        assert item.source_chunk_ids and fact in " ".join(chunks[item.source_chunk_ids[0]].split())
        if item.meta["template"] == "cloze":
            assert "____" in item.question and item.gold in fact
        rv = current_rubric(store, item.id)
        assert rv.author == "kernel" and len(rv.criteria) >= 1
        # a fill-in-the-blank item's first criterion carries its parts (stored, read back), worded as its text
        first = rv.criteria[0]
        if item.meta["template"] == "cloze":
            assert first.cloze == Cloze(item.gold, fact) and first.text == first.cloze.wording()
        assert all(c.cloze is None for c in rv.criteria[item.meta["template"] == "cloze":])
        for c in rv.criteria:  # every criterion is a key fact of the chunk it cites
            assert c.source_chunk_ids and c.source_chunk_ids[0] in chunks
            sentence = c.cloze.sentence if c.cloze else c.text
            assert sentence in " ".join(chunks[c.source_chunk_ids[0]].split())
    assert any(item.meta["template"] == "cloze" for item in items)
    topics = {i.topic for i in items}
    assert topics == {"volcanoes", "honey bees"}
    again = await generate_benchmark(store, home, "gen2", kb, TOPICS, per_topic=2, seed=3, embedder=HashEmbedder())
    assert [i.question for i in list_items(store, "gen2")] == [i.question for i in items]
    assert again.items == 4


async def test_offline_generation_warns_when_the_kb_runs_short(store, home, kb):
    s = await generate_benchmark(store, home, "many", kb, [Topic("lighthouses", "lighthouse history and lenses")],
                                 per_topic=20, embedder=HashEmbedder())
    assert 0 < s.items < 20
    assert any("fewer than the 20 questions" in w for w in s.warnings)
    with pytest.raises(BenchError, match="already exists"):
        await generate_benchmark(store, home, "many", kb, TOPICS, embedder=HashEmbedder())
    with pytest.raises(Exception, match="nope"):
        await generate_benchmark(store, home, "x", "nope", TOPICS, embedder=HashEmbedder())


def _user(body):
    return body["messages"][1]["content"]


def kernel_reply(body, bad_first_for: str | None = None, always_bad: bool = False):
    """A scripted kernel: answers each generation prompt from the chunk ids it was shown."""
    system, user, last = body["messages"][0]["content"], _user(body), body["messages"][-1]["content"]
    ids = [int(x) for x in re.findall(r"\[chunk (\d+)\]", user)]
    topic = re.search(r"Topic: (.+)", user).group(1)
    retry = "could not be used" in last
    if "TASK: initial-questions" in system:
        n = int(re.search(r"Number of questions: (\d+)", user).group(1))
        wrong = always_bad or (topic == bad_first_for and not retry)
        return json.dumps({"questions": [
            {"question": f"As a keen hobbyist, what should I know about {topic}, point {i + 1}?",
             "persona": "hobbyist", "chunk_ids": [999999] if wrong else [ids[i % len(ids)]]}
            for i in range(n)]})
    if "TASK: topic-criteria" in system:
        names = ["Description", "Cause", "Example"] if "Demonstrations" in user else ["Facts", "Figures"]
        return json.dumps({"criteria": [{"name": n, "description": f"the {n.lower()}"} for n in names]})
    if "TASK: question-criteria" in system:
        names = re.findall(r"^- ([^:]+):", user, re.M)
        return json.dumps({"reference_answer": "A grounded answer.", "criteria": [
            {"criterion": name, "points": [{"text": f"{name} point from chunk {ids[k % len(ids)]}",
                                            "chunk_ids": [ids[k % len(ids)]]}]}
            for k, name in enumerate(names)]})
    raise AssertionError(f"unexpected prompt: {system[:80]}")


async def test_kernel_generation_on_the_fake_server(store, home, kb, fake_openai, endpoint):
    fake_openai.default = lambda body: kernel_reply(body, bad_first_for="volcanoes")
    config = Config(kernel=endpoint)
    s = await generate_benchmark(store, home, "llm", kb, TOPICS, per_topic=2, config=config,
                                 embedder=HashEmbedder())
    assert s.kernel == f"fake-model@{endpoint.base_url}" and s.items == 4
    assert s.topic_criteria == {"volcanoes": ["Description", "Cause", "Example"], "honey bees": ["Facts", "Figures"]}
    # the reply citing chunk 999999 was rejected and re-asked once
    asks = [r for r in fake_openai.chat_requests() if "TASK: initial-questions" in r.messages[0]["content"]]
    assert len(asks) == 3 and s.rejected_replies == 1
    complaint = [r for r in asks if "could not be used" in r.messages[-1]["content"]]
    assert len(complaint) == 1 and "999999" in complaint[0].messages[-1]["content"]
    demo = [r for r in fake_openai.chat_requests() if "TASK: topic-criteria" in r.messages[0]["content"]]
    assert any("Good answer: Description: a broad volcano" in r.text for r in demo)
    chunks = chunk_texts(store)
    for item in list_items(store, "llm"):
        assert item.meta["generator"] == "kernel" and item.reference == "A grounded answer."
        assert item.source_chunk_ids and set(item.source_chunk_ids) <= set(item.meta["retrieved_chunk_ids"])
        assert set(item.source_chunk_ids) <= set(chunks)
        rv = current_rubric(store, item.id)
        names = [c["name"] for c in item.meta["topic_criteria"]]
        assert [c.text.split(":")[0] for c in rv.criteria] == names
        for c in rv.criteria:  # stage-2 criteria cite chunks retrieved for this question
            assert set(c.source_chunk_ids) <= set(item.meta["criteria_retrieved_chunk_ids"])


async def test_a_kernel_that_keeps_citing_unknown_chunks_fails_and_writes_nothing(store, home, kb, fake_openai,
                                                                                  endpoint):
    fake_openai.default = lambda body: kernel_reply(body, always_bad=True)
    with pytest.raises(BenchError, match="the kernel .* gave no usable reply: .*999999.*nothing was written"):
        await generate_benchmark(store, home, "bad", kb, TOPICS, config=Config(kernel=endpoint),
                                 embedder=HashEmbedder())
    assert store.one("SELECT COUNT(*) AS n FROM benchmarks")["n"] == 0


def test_cli_generate_offline(home, tmp_path):
    from click.testing import CliRunner

    from tui.cli import main

    runner = CliRunner()
    r = runner.invoke(main, ["kb", "build", "docs", str(FIX / "docs")])
    if r.exit_code != 0:
        pytest.skip(f"knowledge base CLI unavailable: {r.output[-200:]}")
    r = runner.invoke(main, ["bench", "generate", "g", "--kb", "docs", "--topics", str(FIX / "topics.yaml"),
                             "--per-topic", "1", "--seed", "1", "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.output)
    assert (out["kernel"], out["items"], out["per_topic"]) == ("offline", 2, {"volcanoes": 1, "honey bees": 1})


async def test_offline_generation_stays_on_topic_merges_duplicates_and_reports_its_drops(store, home):
    """A clinician's four-document anticoagulation base (written for this test): no item of one topic is
    taken from another topic's document, no two items share a key sentence, no criterion keeps an
    opening pronoun, and the summary says what was dropped."""
    from engine.knowledge.embed import get_embedder

    docs = Path(__file__).parent / "fixtures" / "anticoag"
    build_kb(store, home, "ac", [docs])
    s = await generate_benchmark(store, home, "ac", "ac", load_topics(docs / "topics.yaml"), per_topic=2,
                                 embedder=get_embedder())
    items = list_items(store, "ac")
    titles = {r["id"]: r["title"] for r in store.query(
        "SELECT c.id, d.title FROM chunks c JOIN documents d ON d.id = c.document_id")}
    expected_doc = {"warfarin": "Warfarin", "doacs": "Direct oral anticoagulants", "heparin": "Heparin",
                    "bridging": "Bridging before surgery"}
    for item in items:
        assert titles[item.source_chunk_ids[0]] == expected_doc[item.topic], (item.topic, item.question)
        for c in current_rubric(store, item.id).criteria:
            assert not re.match(r"^(?:It|They|This|These)\b", c.cloze.sentence if c.cloze else c.text), c.text
    keys = [i.meta["key_sentence"] for i in items]
    assert len(keys) == len(set(keys))
    assert s.dropped.get("off-topic key sentence(s)", 0) > 0 and s.dropped.get("pronouns resolved", 0) > 0
    assert any(line.startswith("dropped: ") and "off-topic key sentence(s)" in line for line in s.lines())


def test_near_duplicate_items_are_merged_by_cosine_or_key_sentence():
    from engine.bench.generate import _Drops
    from engine.knowledge.embed import get_embedder

    drops = _Drops(get_embedder().embed)
    assert not drops.duplicate('Fill in the blank: "Washing takes ____ seconds."', "Washing takes 40 to 60 seconds.")
    # the same fact asked again in other words, and another question on the same key sentence
    assert drops.duplicate('Fill in the blank: "Washing hands takes ____ seconds."', "Washing hands takes 40 seconds.")
    assert drops.duplicate("How long does washing take?", "Washing takes 40 to 60 seconds.")
    assert not drops.duplicate("Which drug shortens influenza if started early?", "Oseltamivir shortens influenza.")


@pytest.mark.parametrize("folder", ["exam_kb3", "exam_kb4", "exam_kb5", "exam_kb6", "exam_kb7", "exam_kb8", "exam_kb9", "exam_kb10",
                                    "exam_kb11", "exam_kb12", "exam_kb13", "exam_kb14", "exam_kb15", "exam_kb16",
                                    "exam_kb17", "exam_kb18", "exam_kb19", "exam_kb20", "exam_kb21",
                                    "exam_kb22", "exam_kb23", "exam_kb24", "exam_kb25", "exam_kb26", "exam_kb27",
                                    "exam_kb28", "exam_kb29", "exam_kb30", "exam_kb31",
                                    "exam_kb32", "exam_kb33", "exam_kb34", "exam_kb35"])
async def test_structured_documents_give_facts_without_markup_and_questions_about_their_sections(store, home, folder):
    """The examination bench's knowledge bases with structure (Markdown sections with and without a blank
    line under the heading, lists, Setext headings, numbered clauses in plain text, bold run-in labels, a
    table): every criterion is one plain sentence (no heading, list marker, inline mark or run-in label
    in it), every item holds three facts at least, and items under a heading of their own are asked
    about it."""
    from engine.knowledge.embed import get_embedder

    docs = Path(__file__).resolve().parents[2] / "bench" / "data" / folder
    build_kb(store, home, folder, [docs])
    await generate_benchmark(store, home, folder, folder, load_topics(docs / "topics.yaml"), per_topic=6,
                             embedder=get_embedder())
    items = list_items(store, folder)
    assert len(items) >= 5
    # every item examines: the topics have passages, so no single-fact fill is kept
    assert all(len(current_rubric(store, i.id).criteria) >= 3 for i in items)
    headings = {re.sub(r"^\d+\.\s+", "", (m.group(1) or m.group(2)).strip().lower()) for p in docs.glob("*.md")
                for m in re.finditer(r"(?m)^#{2,6}\s+(.+)$|^(.+)\n-{3,}\s*$", p.read_text())}
    for p in docs.glob("*.*"):  # plain-text and numbered section headings ("WHEN A BAN APPLIES", "4. Conditions")
        lines = p.read_text().splitlines()
        headings |= {offline._SECTION_NUMBER.sub("", h).lower() for at, line in enumerate(lines[1:], 1)
                     if (h := plain_heading(line, lines[at + 1] if at + 1 < len(lines) else None))}
    for item in items:
        for c in current_rubric(store, item.id).criteria:
            text = c.text.split("missing part of: ", 1)[-1]
            # (a list marker opens the text or follows a stop or a colon; "Service + defrost check" in a cell is text)
            assert not re.search(r"(^|\s)(#{1,6}|\d\.)\s|(^|[.:;]\s)[-*+]\s|\*\*|__|`|^[A-Z]\w*:\s|={3}|-{3}", text), \
                (item.question, text)
        if item.meta.get("template") == "overview":
            assert "____" not in item.question and not re.search(r"\bwho\?|\bsuch as\?|,\s*\w+\?$", item.question)
    asked = " ".join(i.question.lower() for i in items)
    assert sum(h in asked for h in headings) >= min(3, len(headings))  # sections are asked by their names
    faq = {m.group(1).lower() for p in docs.glob("*.md") for m in re.finditer(r"(?m)^\*\*Q: (.+\?)\*\*$", p.read_text())}
    assert not faq or sum(q in asked for q in faq) >= 2  # an FAQ's passages are asked their own questions
