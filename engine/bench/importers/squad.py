"""SQuAD JSON -> a knowledge base of the contexts + ``adaptive`` items ("activating static
benchmarks", TestAgent 3.5).

A paragraph's answerable questions are cut into windows of ``window`` questions (the interview's
number of turns): each window is one item, whose initial question is the window's first and whose
follow-ups (``meta.followups``) are the window's other questions, in order, so a T-turn session can
ask every question of its item. The rubric has one gold-answer criterion per question of the window
(``answers``: the accepted spans; ``asks``: the question), judged by SQuAD's normalisation, exact
match and token F1 against the reply to that question (:mod:`engine.judge.answers`); challenges
contest an answer already given. ``gold`` holds the accepted answers of the initial question.

The contexts are ingested as a knowledge base (one document per paragraph) through
:func:`engine.knowledge.kb.build_kb`; every item and criterion cites the chunk that holds its answer.
SQuAD 2.0 questions marked ``is_impossible`` (or with no answer) are skipped and counted.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.bench.importers.base import (
    ImportFormatError,
    ImportSummary,
    ItemDraft,
    Skips,
    current_progress,
    default_name,
    expected,
    load_json_line,
    read_text,
    write_benchmark,
)
from engine.bench.items import ensure_free_name
from engine.bench.model import BenchError, Criterion
from engine.config import RetrievalConfig
from engine.store import Store


@dataclass
class _Question:
    qid: str
    question: str
    answers: list[str]  # distinct accepted answers, in order
    starts: list[int]


@dataclass
class _Paragraph:
    article: str
    article_index: int
    index: int
    context: str
    questions: list[_Question] = field(default_factory=list)


def _distinct(values: list[str]) -> list[str]:
    seen: dict[str, None] = {}
    for v in values:
        seen.setdefault(v, None)
    return list(seen)


def parse_squad(file: Path, skips: Skips, warnings: list[str]) -> list[_Paragraph]:
    """Validate a SQuAD file and return its paragraphs with their answerable questions.

    Raises:
        ImportFormatError: naming the record path (``data[0].paragraphs[3].qas[1].answers``).
    """
    data = load_json_line(file, 1, read_text(file))  # depth-limited; errors name the line
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ImportFormatError(file, "", expected("data", "a list of articles (SQuAD format)",
                                                   type(data).__name__ if not isinstance(data, dict)
                                                   else data.get("data")))
    paragraphs: list[_Paragraph] = []
    for ai, article in enumerate(data["data"]):
        where = f"data[{ai}]"
        if not isinstance(article, dict):
            raise ImportFormatError(file, where, expected(where, "an article object", article))
        title = article.get("title", f"article {ai + 1}")
        if not isinstance(title, str):
            raise ImportFormatError(file, where, expected("title", "a string", title))
        paras = article.get("paragraphs")
        if not isinstance(paras, list):
            raise ImportFormatError(file, where, expected("paragraphs", "a list", paras))
        for pi, para in enumerate(paras):
            pwhere = f"{where}.paragraphs[{pi}]"
            if not isinstance(para, dict):
                raise ImportFormatError(file, pwhere, expected(pwhere, "a paragraph object", para))
            context = para.get("context")
            if not isinstance(context, str) or not context.strip():
                raise ImportFormatError(file, pwhere, expected("context", "a non-empty string", context))
            qas = para.get("qas")
            if not isinstance(qas, list):
                raise ImportFormatError(file, pwhere, expected("qas", "a list of questions", qas))
            p = _Paragraph(title.replace("_", " "), ai, pi, context)
            for qi, qa in enumerate(qas):
                qwhere = f"{pwhere}.qas[{qi}]"
                if not isinstance(qa, dict):
                    raise ImportFormatError(file, qwhere, expected(qwhere, "a question object", qa))
                question, qid = qa.get("question"), qa.get("id", f"{ai}.{pi}.{qi}")
                if not isinstance(question, str) or not question.strip():
                    raise ImportFormatError(file, qwhere, expected("question", "a non-empty string", question))
                answers = qa.get("answers", [])
                if not isinstance(answers, list):
                    raise ImportFormatError(file, qwhere, expected("answers", "a list of {text, answer_start}",
                                                                   answers))
                if qa.get("is_impossible"):
                    skips.add("unanswerable question (is_impossible)")
                    continue
                texts, starts = [], []
                for ki, ans in enumerate(answers):
                    awhere = f"{qwhere}.answers[{ki}]"
                    if not isinstance(ans, dict) or not isinstance(ans.get("text"), str) or not ans["text"].strip():
                        raise ImportFormatError(file, awhere, expected("text", "a non-empty answer string",
                                                                       ans.get("text") if isinstance(ans, dict)
                                                                       else ans))
                    start = ans.get("answer_start")
                    if start is not None and (isinstance(start, bool) or not isinstance(start, int)):
                        raise ImportFormatError(file, awhere, expected("answer_start", "an integer offset", start))
                    if isinstance(start, int) and context[start:start + len(ans["text"])] != ans["text"]:
                        warnings.append(f"{awhere}: answer {ans['text']!r} is not at offset {start} of the context")
                    texts.append(ans["text"].strip())
                    starts.append(start if isinstance(start, int) else -1)
                if not texts:
                    skips.add("question without answers")
                    continue
                p.questions.append(_Question(str(qid), question.strip(), _distinct(texts), starts))
            if p.questions:
                paragraphs.append(p)
            else:
                skips.add("paragraph without answerable questions")
    if not paragraphs:
        raise ImportFormatError(file, "", "no answerable questions found")
    return paragraphs


def build_squad_kb(store: Store, home: str | Path, kb_name: str, file: Path, config: RetrievalConfig | None = None,
                   embedder: Any = None) -> tuple[int, dict[tuple[int, int], list[dict[str, Any]]]]:
    """Ingest the SQuAD file's contexts as a knowledge base (one document per paragraph).

    Returns:
        The knowledge base id and, per (article index, paragraph index), its chunks
        (``id``, ``text``) in order.

    Raises:
        BenchError: a knowledge base with this name already holds other sources.
    """
    from engine.knowledge.kb import build_kb, find_kb

    resolved = str(file.resolve())
    existing = find_kb(store, kb_name)
    if existing is not None and existing.config.get("paths") != [resolved]:
        raise BenchError(f"knowledge base {kb_name!r} already exists with other sources "
                         f"({', '.join(existing.config.get('paths') or []) or 'unknown'}); pass --kb with another name")
    summary = build_kb(store, Path(home), kb_name, [file], config=config, embedder=embedder,
                       progress=current_progress())
    chunks: dict[tuple[int, int], list[dict[str, Any]]] = {}
    rows = store.query(
        "SELECT c.id, c.text, c.ord, d.meta FROM chunks c JOIN documents d ON d.id = c.document_id "
        "WHERE c.kb_id = ? ORDER BY d.id, c.ord", (summary.kb_id,))
    for r in rows:
        meta = json.loads(r["meta"])
        if meta.get("format") == "squad":
            chunks.setdefault((meta["article_index"], meta["paragraph"]), []).append(r)
    return summary.kb_id, chunks


def _cite(chunks: list[dict[str, Any]], answers: list[str]) -> list[int]:
    """The chunks holding an accepted answer (all of the paragraph's chunks when none does)."""
    for a in answers:
        hit = [c["id"] for c in chunks if a in c["text"]]
        if hit:
            return hit[:1]
    return [c["id"] for c in chunks]


def _criterion_text(q: _Question) -> str:
    text = f'Answers "{q.question}" with "{q.answers[0]}"'
    if len(q.answers) > 1:
        text += " (also accepted: " + ", ".join(f'"{a}"' for a in q.answers[1:]) + ")"
    return text


def import_squad(store: Store, home: str | Path, path: str | Path, name: str | None = None, *,
                 kb: str | None = None, config: RetrievalConfig | None = None, embedder: Any = None,
                 window: int = 6) -> ImportSummary:
    """Import a SQuAD JSON file as a knowledge base plus a benchmark of ``adaptive`` items.

    Args:
        store: the store.
        home: the data home (the knowledge base's index lives there).
        path: the SQuAD ``.json`` file.
        name: the benchmark name (default ``squad-<file stem>``).
        kb: the knowledge base name (default: the benchmark name); reused when it was built from
            this same file, refused when it holds other sources.
        config: retrieval settings for the knowledge base build (chunk size, embedder).
        embedder: an embedder to use instead of the configured one.
        window: questions per item (the initial one and its follow-ups); a paragraph with more
            questions becomes several items, so a T-turn session can ask every question of its item
            (default 6, the interview's default number of turns).

    Returns:
        The summary: items (contexts), questions, follow-ups, skipped questions by reason.

    Raises:
        ImportFormatError: the file is malformed (nothing is written).
        BenchError: the benchmark name is taken, or the knowledge base name holds other sources.
    """
    file = Path(path)
    name = ensure_free_name(store, name or default_name("squad", file))
    kb_name = kb or name
    skips = Skips()
    warnings: list[str] = []
    paragraphs = parse_squad(file, skips, warnings)
    kb_id, chunks = build_squad_kb(store, home, kb_name, file, config, embedder)
    drafts: list[ItemDraft] = []
    for p in paragraphs:
        pchunks = chunks.get((p.article_index, p.index), [])
        if not pchunks:
            raise ImportFormatError(file, f"data[{p.article_index}].paragraphs[{p.index}]",
                                    f"the context was not found in knowledge base {kb_name!r} after ingest")
        for start in range(0, len(p.questions), max(1, window)):
            questions = p.questions[start:start + max(1, window)]
            q0, rest = questions[0], questions[1:]
            criteria = [Criterion.new(_criterion_text(q), source_chunk_ids=_cite(pchunks, q.answers), raw=q.qid,
                                      answers=q.answers, asks=q.question)
                        for q in questions]
            followups = [{"id": q.qid, "question": q.question, "answers": q.answers, "cid": f"c{i + 2}",
                          "chunk_ids": _cite(pchunks, q.answers)} for i, q in enumerate(rest)]
            meta = {
                "article": p.article, "article_index": p.article_index, "paragraph_index": p.index,
                "context": p.context, "qid": q0.qid, "cid": "c1", "followups": followups,
                "activated_static": "squad", "window": {"first": start, "size": len(questions),
                                                        "paragraph_questions": len(p.questions)},
            }
            drafts.append(ItemDraft(
                protocol="adaptive", question=q0.question, topic=p.article, ext_id=q0.qid, reference=q0.answers[0],
                gold=q0.answers, source_chunk_ids=[c["id"] for c in pchunks], criteria=criteria, meta=meta,
                rubric_note=f"one criterion per SQuAD question of the window (questions {start + 1}-"
                            f"{start + len(questions)} of the paragraph's {len(p.questions)})",
            ).validate(file, f"data[{p.article_index}].paragraphs[{p.index}]"))
    ids = write_benchmark(store, name, "squad", drafts, kb_id=kb_id, meta={"path": str(file.resolve())})
    return ImportSummary(
        benchmark=name, source="squad", path=str(file), imported=len(ids), skipped=dict(skips), warnings=warnings,
        item_ids=ids, kb=kb_name,
        counts={
            "articles": len({p.article_index for p in paragraphs}),
            "questions": sum(len(p.questions) for p in paragraphs),
            "paragraphs": len(paragraphs),
            "follow-ups": sum(len(d.meta["followups"]) for d in drafts),
            "knowledge-base chunks": sum(len(c) for c in chunks.values()),
        },
    )
