"""Benchmark generation from a knowledge base (TestAgent 2.1).

For each topic of a topics file:

1. retrieve (hybrid) for the topic and have the kernel write N role-played user questions, each
   citing the chunks it used;
2. stage 1: abstract the topic's answer pattern into named criteria (from the demonstrations, or
   from the description and retrieved text when there are none);
3. stage 2: for each question, retrieve again and fill each topic criterion with concrete,
   checkable points grounded in the retrieved text, each citing chunk ids.

A kernel reply citing a chunk that was not shown to it is rejected and re-asked (a bounded number
of times, through the LLM client's validated JSON calls), so every criterion and item is traceable.
With no kernel model configured (or ``offline=True``) the offline kernel does the same from
templates and key sentences, resolving pronouns, checking each item's topic against its chunk,
merging near-duplicates and keeping only the criteria the question asks; the summary counts what was
dropped and why (see :mod:`engine.bench.offline`).

Nothing is written until every item is ready; then the benchmark, items and rubric versions are
stored in one transaction. LLM calls are cached, so re-running after a failure costs nothing for
the calls already made.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from engine.bench import prompts
from engine.bench.importers.base import ItemDraft, write_benchmark
from engine.bench.items import ensure_free_name
from engine.bench.model import BenchError, Criterion
from engine.bench.offline import document_text
from engine.config import Config, load_yaml, read_text_file
from engine.store import Store
from engine.text.cloze import Cloze

RETRIEVE_K = 8
"""Chunks retrieved per topic (questions, stage 1) and per question (stage 2)."""

OFFLINE_FACTS_PER_QUESTION = 4
"""Offline stage 2: key facts per question (the question's own fact plus related ones)."""


@dataclass(frozen=True)
class Topic:
    """A topic of interest: name, description and optional demonstrations."""

    name: str
    description: str = ""
    demonstrations: tuple[dict[str, str], ...] = ()


@dataclass
class GenerateSummary:
    """What a generation produced."""

    benchmark: str
    kb: str
    kernel: str
    prompt_version: str
    seed: int
    items: int = 0
    item_ids: list[int] = field(default_factory=list)
    per_topic: dict[str, int] = field(default_factory=dict)
    criteria: int = 0
    topic_criteria: dict[str, list[str]] = field(default_factory=dict)
    rejected_replies: int = 0
    llm_calls: int = 0
    warnings: list[str] = field(default_factory=list)
    dropped: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return asdict(self)

    def lines(self) -> list[str]:
        """A human-readable report."""
        ids = f" (ids {self.item_ids[0]}-{self.item_ids[-1]})" if self.item_ids else ""
        out = [f"generated {self.items} item(s) into benchmark {self.benchmark!r}{ids} from knowledge base "
               f"{self.kb!r} with the {self.kernel} kernel (prompts {self.prompt_version}, seed {self.seed})"]
        for name, n in self.per_topic.items():
            out.append(f"  {name}: {n} question(s); topic criteria: {', '.join(self.topic_criteria.get(name, []))}")
        out.append(f"criteria: {self.criteria}")
        if self.kernel == "offline" or self.dropped:
            d = self.dropped
            out.append(f"dropped: {d.get('near-duplicate item(s)', 0)} near-duplicate item(s) (question cosine >= "
                       f"{_duplicate_cos():g} or the same key sentence), {d.get('off-topic key sentence(s)', 0)} "
                       f"off-topic key sentence(s), {d.get('criteria off the topic', 0)} criteria off the topic, "
                       f"{d.get('criteria the question does not ask', 0)} criteria the question does not ask, "
                       f"{d.get('single-fact item(s) left out', 0)} single-fact item(s) left out (fewer than "
                       f"{_min_criteria()} facts to examine); pronouns resolved: {d.get('pronouns resolved', 0)}")
        if self.llm_calls:
            out.append(f"kernel calls: {self.llm_calls} (replies rejected and re-asked: {self.rejected_replies})")
        out.extend(f"warning: {w}" for w in self.warnings)
        return out


def _min_criteria() -> int:
    from engine.bench.offline import MIN_CRITERIA

    return MIN_CRITERIA


def _duplicate_cos() -> float:
    from engine.bench.offline import DUPLICATE_COS

    return DUPLICATE_COS


def _demo(raw: Any, where: str) -> dict[str, str]:
    if not isinstance(raw, dict):
        raise BenchError(f"{where}: expected a mapping with question, good_answer, bad_answer")
    out = {}
    for key, alias in (("question", "question"), ("good_answer", "good"), ("bad_answer", "bad")):
        value = raw.get(key, raw.get(alias))
        if not isinstance(value, str) or not value.strip():
            raise BenchError(f"{where}: field '{key}': expected a non-empty string, got {value!r}")
        out[key] = value.strip()
    return out


def load_topics(path: str | Path) -> list[Topic]:
    """Read a topics YAML file: a list (or ``{topics: [...]}``) of ``{name, description,
    demonstrations: [{question, good_answer, bad_answer}]}`` (``good``/``bad`` also accepted).

    Raises:
        BenchError: naming the file (and line: not UTF-8, binary, not YAML, a key given twice), the
            topic and the field.
    """
    file = Path(path)
    data = load_yaml(read_text_file(file, BenchError, "topics file"), file, BenchError)
    if isinstance(data, dict) and "topics" in data:
        data = data["topics"]
    if not isinstance(data, list) or not data:
        raise BenchError(f"{file}: expected a non-empty list of topics (name, description, demonstrations)")
    topics: list[Topic] = []
    for i, raw in enumerate(data):
        where = f"{file}: topics[{i}]"
        if isinstance(raw, str):
            raw = {"name": raw}
        if not isinstance(raw, dict):
            raise BenchError(f"{where}: expected a mapping with name, description, demonstrations")
        name = raw.get("name")
        if not isinstance(name, str) or not name.strip():
            raise BenchError(f"{where}: field 'name': expected a non-empty string, got {name!r}")
        desc = raw.get("description", "") or ""
        if not isinstance(desc, str):
            raise BenchError(f"{where}: field 'description': expected a string, got {desc!r}")
        demos = raw.get("demonstrations") or []
        if not isinstance(demos, list):
            raise BenchError(f"{where}: field 'demonstrations': expected a list of "
                             "{question, good_answer, bad_answer}")
        unknown = set(raw) - {"name", "description", "demonstrations"}
        if unknown:
            raise BenchError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        topics.append(Topic(name.strip(), desc.strip(),
                            tuple(_demo(d, f"{where}.demonstrations[{j}]") for j, d in enumerate(demos))))
    names = [t.name for t in topics]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise BenchError(f"{file}: duplicate topic name(s): {', '.join(dup)}")
    return topics


# -- retrieval -----------------------------------------------------------------------------------
class _Retriever:
    def __init__(self, store: Store, home: Path, kb: str, config: Config, embedder: Any):
        self.store, self.home, self.kb, self.config, self.embedder = store, home, kb, config, embedder
        self._records: dict[tuple[int, str], list[dict[str, Any]]] = {}

    def __call__(self, query: str, k: int = RETRIEVE_K) -> list[Any]:
        from engine.knowledge.retrieval import search

        return search(self.store, self.home, self.kb, query, k=k, mode=self.config.retrieval.mode,
                      config=self.config.retrieval, embedder=self.embedder)

    def document(self, document_id: int) -> tuple[str, list[tuple[int, int, int, str]]]:
        """A document's title and its chunks ``(chunk id, start, end, text)`` in order."""
        row = self.store.one("SELECT title FROM documents WHERE id = ?", (document_id,))
        chunks = [(r["id"], r["start_char"], r["end_char"], r["text"]) for r in self.store.query(
            "SELECT id, start_char, end_char, text FROM chunks WHERE document_id = ? ORDER BY ord", (document_id,))]
        return (row["title"] if row else ""), chunks

    def passage(self, document_id: int) -> tuple[list[int], str, list[tuple[int, int, int, str]], str]:
        """The passage a document belongs to: ``(its documents' ids, title, chunks, text)``.

        A record of a table or a JSON Lines file (a document whose path is ``file#L<line>`` or ``file#row<n>``) in a
        file with a section column (two records side by side share a title: "Licences", "Licences", ...) is read with
        the records around it: the file's sections in order, gathered into blocks of :data:`PASSAGE_RECORDS` records or
        more (a longer section cut into blocks of that many), each section under its title as a heading, each record a
        paragraph. A rule table of one sentence a row then has passages to examine, cut into facets as a document of
        prose is (a short section merged with the next). Any other document, or a record of a file whose records each
        have their own title (a drug's row of a formulary), is itself: ``text`` its chunks rebuilt."""
        row = self.store.one("SELECT kb_id, path, title FROM documents WHERE id = ?", (document_id,))
        title, chunks = self.document(document_id)
        alone = [document_id], title, chunks, document_text(chunks)
        if row is None or "#" not in row["path"]:
            return alone
        file = row["path"].rsplit("#", 1)[0] + "#"
        records = self._records.get((row["kb_id"], file))
        if records is None:  # a file's records read once a generation (a table's rows are hit many times)
            records = self._records[(row["kb_id"], file)] = self.store.query(
                "SELECT id, title FROM documents WHERE kb_id = ? AND substr(path, 1, ?) = ? ORDER BY id",
                (row["kb_id"], len(file), file))
        if not any(a["title"] and a["title"] == b["title"] for a, b in zip(records, records[1:], strict=False)):
            return alone
        blocks: list[list[dict[str, Any]]] = [[]]
        for k, record in enumerate(records):
            section_starts = not k or record["title"] != records[k - 1]["title"]
            if blocks[-1] and (len(blocks[-1]) >= PASSAGE_RECORDS and (section_starts or len({
                    r["title"] for r in blocks[-1]}) == 1)):
                blocks.append([])  # full: a new block at a section's start (or inside one section too long)
            blocks[-1].append(record)
        block = next(b for b in blocks if any(r["id"] == document_id for r in b))
        text, joined, heading = "", [], None
        for record in block:
            if record["title"] != heading:
                heading = record["title"]
                text += f"## {heading}\n\n"
            own = self.document(record["id"])[1]
            joined += [(cid, len(text) + a, len(text) + b, t) for cid, a, b, t in own]
            text += document_text(own) + "\n\n"
        return [r["id"] for r in block], title, joined, text


PASSAGE_RECORDS = 8
"""Records of a table read as one passage: at least this many (whole sections), at most this many of one section
(:meth:`_Retriever.passage`)."""


def _topic_query(t: Topic) -> str:
    return f"{t.name}. {t.description}".strip()


def _check_cited(ids: Sequence[int], allowed: set[int], what: str) -> str | None:
    unknown = sorted(set(ids) - allowed)
    if unknown:
        return (f"{what} cites chunk id(s) {', '.join(map(str, unknown))} that are not in the knowledge given; "
                f"cite only these ids: {', '.join(map(str, sorted(allowed)))}")
    return None


# -- LLM kernel ------------------------------------------------------------------------------------
class _KernelGenerator:
    def __init__(self, client: Any, retrieve: _Retriever, summary: GenerateSummary):
        self.client, self.retrieve, self.summary = client, retrieve, summary

    async def _json(self, messages: list[dict[str, str]], schema: type, validate: Callable[[Any], str | None]) -> Any:
        result = await self.client.json_result(messages, schema, validate=validate)
        self.summary.llm_calls += len(result.results)
        self.summary.rejected_replies += result.repairs
        return result.value

    async def _fit(self, hits: list[Any], reserve_chars: int = 4000) -> list[Any]:
        """The best-ranked retrieved chunks that fit the kernel's context (all of them when it is unknown):
        the last-ranked are dropped first, never fewer than one."""
        room = await self.client.prompt_chars(reserve_chars) if hasattr(self.client, "prompt_chars") else None
        if room is None:
            return hits
        kept, used = [], 0
        for h in hits:
            size = len(h.text) + 40
            if kept and used + size > room:
                break
            kept.append(h)
            used += size
        return kept

    async def questions(self, topic: Topic, hits: list[Any], n: int) -> list[prompts.GeneratedQuestion]:
        hits = await self._fit(hits)
        allowed = {h.chunk_id for h in hits}

        def validate(out: prompts.QuestionsOut) -> str | None:
            if len(out.questions) < n:
                return f"{n} questions were asked for, got {len(out.questions)}"
            texts = [q.question.strip().lower() for q in out.questions[:n]]
            if len(set(texts)) < len(texts):
                return "questions must all differ"
            for i, q in enumerate(out.questions[:n]):
                problem = _check_cited(q.chunk_ids, allowed, f"question {i + 1}")
                if problem:
                    return problem
            return None

        out = await self._json(prompts.initial_questions(topic.name, topic.description, hits, n),
                               prompts.QuestionsOut, validate)
        return out.questions[:n]

    async def topic_criteria(self, topic: Topic, hits: list[Any]) -> list[dict[str, str]]:
        hits = await self._fit(hits)
        def validate(out: prompts.TopicCriteriaOut) -> str | None:
            names = [c.name.strip().lower() for c in out.criteria]
            if not 2 <= len(names) <= 8:
                return f"give 2 to 8 criteria, got {len(names)}"
            if len(set(names)) < len(names):
                return "criterion names must differ"
            return None

        out = await self._json(prompts.topic_criteria(topic.name, topic.description,
                                                      list(topic.demonstrations), hits),
                               prompts.TopicCriteriaOut, validate)
        return [{"name": c.name.strip(), "description": c.description.strip()} for c in out.criteria]

    async def question_criteria(self, topic: Topic, criteria: list[dict[str, str]], question: str
                                ) -> tuple[list[Criterion], str, list[int]]:
        hits = await self._fit(self.retrieve(question))
        allowed = {h.chunk_id for h in hits}
        names = {c["name"].lower(): c["name"] for c in criteria}

        def validate(out: prompts.QuestionCriteriaOut) -> str | None:
            if not any(fc.points for fc in out.criteria):
                return "no points given: fill at least one criterion from the knowledge"
            for fc in out.criteria:
                if fc.criterion.strip().lower() not in names:
                    return (f"unknown criterion {fc.criterion!r}; use exactly these names: "
                            f"{', '.join(c['name'] for c in criteria)}")
                for j, p in enumerate(fc.points):
                    problem = _check_cited(p.chunk_ids, allowed, f"point {j + 1} of {fc.criterion!r}")
                    if problem:
                        return problem
            return None

        out = await self._json(prompts.question_criteria(topic.name, criteria, question, hits),
                               prompts.QuestionCriteriaOut, validate)
        crit = [Criterion.new(f"{names[fc.criterion.strip().lower()]}: {p.text.strip()}",
                              source_chunk_ids=sorted(set(p.chunk_ids)))
                for fc in out.criteria for p in fc.points]
        return crit, out.reference_answer.strip(), [h.chunk_id for h in hits]

    async def topic(self, topic: Topic, n: int, seed: int) -> tuple[list[ItemDraft], list[str]]:
        hits = self.retrieve(_topic_query(topic))
        if not hits:
            raise BenchError(f"topic {topic.name!r}: retrieval found nothing in knowledge base {self.retrieve.kb!r}")
        questions, criteria = await asyncio.gather(self.questions(topic, hits, n), self.topic_criteria(topic, hits))
        filled = await asyncio.gather(*(self.question_criteria(topic, criteria, q.question) for q in questions))
        drafts = []
        for q, (crit, reference, retrieved) in zip(questions, filled, strict=True):
            drafts.append(ItemDraft(
                protocol="adaptive", question=q.question.strip(), topic=topic.name, reference=reference or None,
                source_chunk_ids=sorted(set(q.chunk_ids)), criteria=list(crit),
                meta={"generator": "kernel", "prompt_version": prompts.PROMPT_VERSION, "persona": q.persona,
                      "topic_criteria": criteria, "retrieved_chunk_ids": [h.chunk_id for h in hits],
                      "criteria_retrieved_chunk_ids": retrieved, "seed": seed},
                rubric_note="generated: stage 2 question criteria (TestAgent 2.1)",
            ))
        return drafts, [c["name"] for c in criteria]


# -- offline kernel ----------------------------------------------------------------------------------
class _Drops:
    """What the offline generator dropped, and why (printed by ``bench generate``)."""

    def __init__(self, embed: Callable[[list[str]], Any]):
        self.embed = embed
        self.kept: list[tuple[str, str, Any]] = []  # (question core, key sentence, vector) of kept items
        self.counts: dict[str, int] = {}

    def add(self, why: str, n: int = 1) -> None:
        if n:
            self.counts[why] = self.counts.get(why, 0) + n

    def duplicate(self, core: str, key: str) -> bool:
        """Whether an item is a near-duplicate of a kept one (else it is kept: remembered)."""
        from engine.bench import offline

        vector = self.embed([core])[0]
        for _core, other_key, other in self.kept:
            if other_key == key or float(vector @ other) >= offline.DUPLICATE_COS:
                return True
        self.kept.append((core, key, vector))
        return False


TOPIC_CRITERIA = [{"name": "Key facts", "description": "facts stated in the retrieved text, on the topic and "
                                                   "asked by the question"}]


def _offline_topic(retrieve: _Retriever, topic: Topic, n: int, seed: int, warnings: list[str],
                   drops: _Drops, others: dict[str, str]) -> tuple[list[ItemDraft], list[str]]:
    """The offline kernel's items for a topic (TestAgent's two stages, from passages).

    Stage 1 (topic level): the documents of the chunks retrieved for the topic are read whole and cut
    into facets (:func:`engine.bench.offline.facets_of`: paragraphs, pronouns resolved, sentences off
    the topic dropped, short paragraphs merged). Stage 2 (question level): each facet becomes an
    *overview* item: an opening what/who/how question about the passage's subject
    (:func:`engine.bench.offline.opening_question`) and its key facts as criteria
    (:func:`engine.bench.offline.choose_facts`: :data:`~engine.bench.offline.MIN_CRITERIA` to
    :data:`~engine.bench.offline.MAX_CRITERIA`, each its own sentence). Facets are taken best first
    (most facts, then the mean topic score of their sentences), near-duplicates dropped. When the
    knowledge base has fewer passages than questions asked for, single-sentence items fill the rest
    (:func:`_offline_cloze_items`)."""
    from dataclasses import replace as _replace

    from engine.bench import offline

    rng = random.Random(f"{seed}:{topic.name}")
    hits = retrieve(_topic_query(topic), k=max(RETRIEVE_K, 2 * n))
    if not hits:
        raise BenchError(f"topic {topic.name!r}: retrieval found nothing in knowledge base {retrieve.kb!r}")
    topic_words = offline.words(_topic_query(topic))
    facets: list[offline.Facet] = []
    read: set[int] = set()
    for doc_id in dict.fromkeys(h.document_id for h in hits):
        if doc_id in read:
            continue  # a record read in the passage of another
        ids, title, chunks, text = retrieve.passage(doc_id)
        read.update(ids)
        if not chunks:
            continue

        def keep(sentence: str, chunk_text: str, title: str = title) -> bool:
            ok = offline.on_topic(sentence, chunk_text, topic.name, others, title, topic.description)[0]
            drops.add("off-topic key sentence(s)", int(not ok))
            return ok

        for f in offline.facets_of(text, [c[:3] for c in chunks], topic.name, topic_words, keep):
            facets.append(_replace(f, document_id=doc_id, title=title))
    order = sorted(range(len(facets)), key=lambda i: (
        -min(len(facets[i].facts), offline.MAX_CRITERIA),
        -sum(k.score for k in facets[i].facts) / len(facets[i].facts), i))
    drafts: list[ItemDraft] = []
    used: set[str] = set()
    for i in order:
        if len(drafts) == n:
            break
        facet = facets[i]
        if len(facet.facts) < offline.MIN_CRITERIA:
            continue
        q = offline.opening_question(facet, topic.name, topic_words, rng)
        if drops.duplicate(q.core, facet.lead):
            drops.add("near-duplicate item(s)")
            continue
        facts = offline.choose_facts(facet)
        if len(facts) < offline.MIN_CRITERIA:  # two of its facts alike ("The check in closes minutes of Check-in
            drops.add("items with too few distinct facts")  # are ... 30" and "Check-in closes 30 minutes ...")
            continue
        used.update(k.text for k in facts)
        drafts.append(ItemDraft(
            protocol="adaptive", question=q.question, topic=topic.name, reference=" ".join(k.text for k in facts),
            gold=None, source_chunk_ids=list(dict.fromkeys(k.chunk_id for k in facts)),
            criteria=[Criterion.new(k.text, source_chunk_ids=[k.chunk_id]) for k in facts],
            meta={"generator": "offline", "prompt_version": prompts.PROMPT_VERSION, "persona": q.persona,
                  "template": "overview", "key_sentence": facet.lead, "topic_criteria": TOPIC_CRITERIA,
                  "document_id": facet.document_id, "retrieved_chunk_ids": [h.chunk_id for h in hits],
                  "seed": seed},
            rubric_note="offline kernel: an opening question on a passage, its key facts as criteria",
        ))
    if len(drafts) < n:
        drafts += _offline_cloze_items(retrieve, topic, n - len(drafts), seed, warnings, drops, others, used,
                                       facets, examinable=bool(drafts))
    if len(drafts) < n:
        warnings.append(f"topic {topic.name!r}: the retrieved text yielded {len(drafts)} usable item(s), "
                        f"fewer than the {n} questions asked for")
    return drafts, [c["name"] for c in TOPIC_CRITERIA]


def _offline_cloze_items(retrieve: _Retriever, topic: Topic, n: int, seed: int, warnings: list[str],
                        drops: _Drops, others: dict[str, str], used: set[str], facets: Sequence[Any] = (),
                        examinable: bool = False) -> list[ItemDraft]:
    """Single-sentence items (a definition or a cloze question over one key sentence, with the related
    facts the question asks as further criteria): the offline generator's fill when the knowledge base
    has too few passages for overview items (:func:`_offline_topic`).

    ``examinable`` (the topic has overview items already): a fill item is an interview's too, so it holds
    :data:`~engine.bench.offline.MIN_CRITERIA` facts at least: the question's own, those it asks, then the
    facts of its sentence's passage (``facets``) no other item holds, in document order, as written (no
    pronoun, none resolved by the generator); a question that cannot have that many is left out
    (counted: "single-fact item(s) left out"), as a one-fact item gives the follow-ups nothing to ask. Without overview items every fill is kept, so that a topic whose
    documents hold no passage still has items."""
    from dataclasses import replace as _replace

    from engine.bench import offline

    rng = random.Random(f"{seed}:{topic.name}")
    hits = retrieve(_topic_query(topic), k=max(RETRIEVE_K, 2 * n))
    if not hits:
        raise BenchError(f"topic {topic.name!r}: retrieval found nothing in knowledge base {retrieve.kb!r}")
    topic_words = offline.words(_topic_query(topic))
    chunk_of = {h.chunk_id: h.text for h in hits}
    title_of = {h.chunk_id: getattr(h, "document_title", "") or "" for h in hits}
    # Stay on topic: use the chunks that share a word with the topic (all of the top ones if none does).
    on_topic_hits = [h for h in hits if offline.words(h.text) & topic_words] or hits[:RETRIEVE_K]
    # Stage 1 (topic level): the key sentences of the topic's chunks, pronouns resolved, on topic.
    candidates = []
    for k in offline.key_sentences(on_topic_hits, topic_words, rng):
        resolved = offline.resolve(k.text, chunk_of.get(k.chunk_id, ""), topic.name)
        drops.add("pronouns resolved", int(resolved != k.text))
        ok, _why = offline.on_topic(resolved, chunk_of.get(k.chunk_id, ""), topic.name, others,
                                    title_of.get(k.chunk_id, ""), topic.description)
        if not ok:
            drops.add("off-topic key sentence(s)")
            continue
        candidates.append(_replace(k, text=resolved))
    questions: list[offline.OfflineQuestion] = []
    candidates = [k for k in candidates if k.text not in used]
    for fact in offline.pick_facts(candidates, len(candidates)):  # one per chunk first, then the rest
        if len(questions) == (3 * n if examinable else n):  # spares for the questions left out below
            break
        q = offline.make_question(fact, topic.name, topic_words, rng)
        if q is None:
            continue
        if drops.duplicate(q.core, fact.text):
            drops.add("near-duplicate item(s)")
            continue
        questions.append(q)
    passage_of = {" ".join(k.text.split()): f for f in facets for k in f.facts}
    drafts = []
    for q in questions:
        if len(drafts) == n:
            break
        qhits = retrieve(q.core)
        qchunks = {h.chunk_id: h.text for h in qhits}
        qtitles = {h.chunk_id: getattr(h, "document_title", "") or "" for h in qhits}
        related = offline.related_facts(q.core, qhits, q.fact.text, topic_words, 3 * OFFLINE_FACTS_PER_QUESTION)
        pool = []
        for k in related:  # stage 2 (question level): resolved, on topic, asked by the question
            text = offline.resolve(k.text, qchunks.get(k.chunk_id, ""), topic.name)
            drops.add("pronouns resolved", int(text != k.text))
            if not offline.on_topic(text, qchunks.get(k.chunk_id, ""), topic.name, others,
                                    qtitles.get(k.chunk_id, ""), topic.description)[0]:
                drops.add("criteria off the topic")
                continue
            if text != q.fact.text and all(text != p.text for p in pool):
                pool.append(_replace(k, text=text))
        cosines = [float(x) for x in (drops.embed([q.core] + [k.text for k in pool]) @
                                      drops.embed([q.core])[0])[1:]] if pool else []
        kept, dropped = offline.question_filter(q.core, pool, cosines, q.fact.text)
        drops.add("criteria the question does not ask", dropped)
        if len(kept) > OFFLINE_FACTS_PER_QUESTION - 1:
            kept = kept[:OFFLINE_FACTS_PER_QUESTION - 1]
        crit = [Criterion.of_cloze(Cloze(q.answer, q.fact.text), source_chunk_ids=[q.fact.chunk_id])
                if q.template == "cloze" else Criterion.new(q.fact.text, source_chunk_ids=[q.fact.chunk_id])]
        crit += [Criterion.new(k.text, source_chunk_ids=[k.chunk_id]) for k in kept]
        if examinable and len(crit) < offline.MIN_CRITERIA:
            passage = passage_of.get(" ".join(q.fact.text.split()))
            taken = {q.fact.text, *(k.text for k in kept)}
            mates = [k for k in (passage.facts if passage else ()) if k.text not in used and k.text not in taken
                     and not k.resolved and not offline.opens_with_pronoun(k.text)]  # as written, read alone
            crit += [Criterion.new(k.text, source_chunk_ids=[k.chunk_id])
                     for k in mates[:offline.MAX_CRITERIA - len(crit)]]
            if len(crit) < offline.MIN_CRITERIA:
                drops.add("single-fact item(s) left out")
                continue
        used.update(c.text for c in crit if c.kind != "deduction")
        used.add(q.fact.text)
        drafts.append(ItemDraft(
            protocol="adaptive", question=q.question, topic=topic.name,
            reference=q.answer if q.template == "cloze" else q.fact.text,
            gold=q.answer if q.template == "cloze" else None,
            source_chunk_ids=[q.fact.chunk_id], criteria=list(crit),
            meta={"generator": "offline", "prompt_version": prompts.PROMPT_VERSION, "persona": q.persona,
                  "template": q.template, "key_sentence": q.fact.text, "topic_criteria": TOPIC_CRITERIA,
                  "retrieved_chunk_ids": [h.chunk_id for h in hits],
                  "criteria_retrieved_chunk_ids": [h.chunk_id for h in qhits], "seed": seed},
            rubric_note="offline kernel: key facts from retrieved text",
        ))
    return drafts


# -- entry point -------------------------------------------------------------------------------------
async def _with_kernel_errors(call: Any, kernel: str, topic: Topic) -> Any:
    """Await a kernel step; a failed LLM call becomes one :class:`BenchError` line saying what to do."""
    from engine.config import ConfigError
    from engine.llm import UNUSABLE, LLMError

    try:
        return await call
    except UNUSABLE as exc:  # the server answered, with something unusable: its base_url is not the problem
        raise BenchError(f"topic {topic.name!r}: the kernel {kernel} gave no usable reply: {exc}. Try a stronger "
                         "kernel model, or generate with --offline; nothing was written") from None
    except (LLMError, ConfigError) as exc:
        raise BenchError(f"topic {topic.name!r}: the kernel {kernel} failed: {exc}. Check that the kernel's "
                         "base_url is right and the server is running, or generate with --offline; "
                         "nothing was written") from None


async def generate_benchmark(store: Store, home: str | Path, name: str, kb: str, topics: Sequence[Topic], *,
                             per_topic: int = 3, seed: int = 0, config: Config | None = None,
                             offline: bool = False, use_cache: bool = True, embedder: Any = None,
                             client: Any = None, progress: Callable[[str], None] | None = None,
                             steps: Callable[[str, int, int], None] | None = None) -> GenerateSummary:
    """Generate a benchmark of ``adaptive`` items from a knowledge base.

    Args:
        store: the store.
        home: the data home (retrieval indexes).
        name: the new benchmark's name.
        kb: the knowledge base to ground questions and criteria in.
        topics: the topics (see :func:`load_topics`).
        per_topic: questions per topic.
        seed: seed for the offline kernel's choices (recorded on every item).
        config: the configuration; its ``kernel`` model is used unless ``offline`` or unset.
        offline: use the offline kernel even when a kernel model is configured.
        use_cache: answer identical kernel calls from the cache.
        embedder: an embedder to use for retrieval instead of the configured one.
        client: an LLM client to use instead of building one from ``config.kernel``.
        progress: called with a line of text as each topic is done.
        steps: called as ``steps("topics", done, total)`` before the first topic and after each one.

    Returns:
        The summary (items per topic, topic criteria, kernel calls, rejected replies, warnings).

    Raises:
        BenchError: the name is taken, the knowledge base is missing or empty for a topic, or the kernel
            failed for good (unreachable, erroring, no valid JSON): one line naming the kernel and the
            cause (nothing is written; re-running reuses the cached calls).
    """
    config = config or Config()
    if per_topic < 1:
        raise BenchError("per_topic must be at least 1")
    if not topics:
        raise BenchError("no topics given")
    ensure_free_name(store, name)
    from engine.knowledge.kb import get_kb

    kb_row = get_kb(store, kb)
    home = Path(home)
    retrieve = _Retriever(store, home, kb, config, embedder)
    use_llm = not offline and (client is not None or config.kernel is not None)
    if use_llm and client is None:
        from engine.llm import LLMClient

        # a generation step has the generation budget (without one a weak model wrote until its context was full)
        client = LLMClient(store, config.kernel, role="kernel", use_cache=use_cache,
                           max_tokens=config.max_tokens.generation)
    kernel = f"{client.endpoint.model}@{client.endpoint.base_url}" if use_llm else "offline"
    summary = GenerateSummary(benchmark=name, kb=kb, kernel=kernel, prompt_version=prompts.PROMPT_VERSION, seed=seed)
    drafts: list[ItemDraft] = []
    gen = _KernelGenerator(client, retrieve, summary) if use_llm else None
    drops = None
    if gen is None:
        from engine.knowledge.embed import get_embedder

        encoder = embedder or get_embedder(config.retrieval.embedder)
        drops = _Drops(encoder.embed)
    if steps:
        steps("topics", 0, len(topics))
    for done, topic in enumerate(topics, start=1):
        if gen is not None:
            topic_drafts, names = await _with_kernel_errors(gen.topic(topic, per_topic, seed), kernel, topic)
        else:
            others = {t.name: t.description for t in topics if t.name != topic.name}
            topic_drafts, names = _offline_topic(retrieve, topic, per_topic, seed, summary.warnings, drops, others)
        for i, d in enumerate(topic_drafts):
            d.validate(f"knowledge base {kb}", f"topic {topic.name!r}, question {i + 1}")
        drafts.extend(topic_drafts)
        summary.per_topic[topic.name] = len(topic_drafts)
        summary.topic_criteria[topic.name] = names
        if progress:
            progress(f"{topic.name}: {len(topic_drafts)} question(s)")
        if steps:
            steps("topics", done, len(topics))
    if drops is not None:
        summary.dropped = dict(drops.counts)
    if not drafts:
        why = ", ".join(f"{n} {w}" for w, n in summary.dropped.items() if w != "pronouns resolved")
        raise BenchError(f"no questions could be generated from knowledge base {kb!r} for these topics"
                         + (f" (dropped: {why}; does the knowledge base cover these topics?)" if why else ""))
    author = "kernel"
    meta = {"kb": kb, "topics": [asdict(t) for t in topics], "per_topic": per_topic, "seed": seed,
            "kernel": kernel, "prompt_version": prompts.PROMPT_VERSION, "topic_criteria": summary.topic_criteria}
    summary.item_ids = write_benchmark(store, name, "generate", drafts, kb_id=kb_row.id, meta=meta, author=author)
    summary.items = len(summary.item_ids)
    summary.criteria = sum(len(d.criteria) for d in drafts)
    return summary
