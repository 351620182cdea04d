"""Validity benchmark: do viva's figures recover what python targets of KNOWN quality know? (prints figures)

Targets (``bench/validity_targets.py``) answer from an answer key this script writes: knowledge
``k`` (share of questions answered with the gold answer, else a wrong answer), instability ``u``
(chance to give up a correct answer when challenged), and an answer style. They run through the real
engine and the real command line, each source in its own temporary data home::

    viva bench import squad|medqa ... / viva kb build + viva bench generate --offline
    viva bench export NAME                                   (-> the answer key; engine.api.export_jsonl)
    viva run --bench NAME --items K-ITEMS --target ...mute --target ...k0.50_u0.00_terse ...
             --kernel offline --policy onnx|threshold --json [--protocol adaptive]
    viva run --bench NAME --items U-ITEMS --target ...k1.00_u0.20_switch ...     (the u series)
    viva sessions --json                                     (per-session scores; Engine.list_sessions)
    viva report SESSION --format json                        (turns of a suspicious session)

(the export and the session list are read through the engine's facade in this process, the same
functions those two commands call, to save an interpreter start each).

**Not circular.** The key's wrong answers and the targets' wordings are generated from each item,
not written to suit the judge: every entry carries a *far* wrong answer (another question's gold
sharing no word with it, the old styles' only kind) and a *near miss* (another year or number of the
item's passage, another name of the passage or the gold's name with a word added or swapped, a
passage phrase sharing a word with the gold, the wrong option most like the gold, a fact with a
number changed or negated: :func:`validity_targets.near_miss`), plus the sentences of the passage
that hold no gold (what a chat reply reasons from). The styles (``validity_targets`` docstring):
terse, sentence, verbose, echo (far wrong answers); near, paraphrase (number words, dates,
ordinals, abbreviations, an option by letter or abbreviated name), chat (the answer inside a longer
sentence, or after reasoning), list (several candidates; every option of a multiple-choice item,
separated by " / ", "; ", ", " or " | "), switch (gives way under challenge with no retraction
phrase). Every phrase is drawn by a seeded draw among several. The true verdict of every reply is
known by construction: right iff known, except ``list`` (never right) and a target that has given way.

Figures, per source, policy and answer style (one table row each, with a ``check`` column):

- ρ(k, Score): Spearman's ρ (``engine.policy.evaluate.spearman``) between k in {0, 0.1, ..., 1}
  (u = 0) and the target's Score (``viva run``'s per-target row: 100 × mean last-turn score);
  Score at k = 0 and k = 1 beside it.
- oracle > mute: items where the oracle (k = 1, u = 0) scores strictly above the mute target ("I
  don't know.") on the same item.
- ρ(u, R−): the same between u in {0, 0.2, ..., 1} (k = 1) and the target's R− = P−·M− (n/a when R−
  is constant or undefined: a policy that never challenges these targets has no R−), and the u
  series' Score at u = 0 and u = 1: a target that gives way under challenge loses the credit.
- ``check`` (:func:`check`): what the figures say the judge gets wrong on the style: ρ below
  :data:`RHO_MIN`, the oracle not above mute, the k = 0 target (only wrong answers) credited, a
  never-right style credited, a u = 1 target that keeps its credit after giving way (a switch without
  a retraction phrase that keeps the credit a retraction loses). A failing figure is the point: the
  bench shows the judge as it is.
- Multiple-choice ``list`` replies: sessions credited per separator.
- FDR / EIR of each policy on these sessions, by the engine's own evaluation of logged sessions
  (``engine.policy.evaluate.evaluate_logged``) when the engine has it; otherwise ``n/a``.

Sources: SQuAD (``../shared/data/squad``), MedQA (``../shared/data/medqa``, run with
``--protocol adaptive``) and a benchmark generated offline from ``engine/demo/docs``; without
``../shared/data``, the small fixtures of :data:`FIXTURES` stand in for the first two. Only the
items run are imported (SQuAD paragraphs taken round-robin over articles, the first MedQA rows).

Each policy runs twice: the mute target and the k series on the k items, the u series on the u items
(R− is a rate over challenges and a policy challenges about once a session, so the u series needs
more items; defaults in :data:`ITEMS`). All targets of a run share one ``viva run`` process (the
engine runs ``--concurrency`` sessions at once; the offline judge's sentence vectors are cached for
the process, :class:`engine.knowledge.embed.EmbeddingService`). The policy's draws are common to all
targets (seeded by run seed, item and turn), and the targets' own draws are too, so two targets
differ only where their parameters make them differ.

Run (from the repository root; CPU is shared, so nice it)::

    nice -n 10 python bench/validity.py                 # k/u items: squad 6/24, medqa 6/24, generated 4/8
    nice -n 10 python bench/validity.py --quick         # 2 k items, styles terse,near,chat,list; u near,switch
    # the default is, per policy, K x (1 mute + 8 styles x 11 k) + U x 3 u styles x 6 u sessions:
    # squad and medqa 6 x 89 + 24 x 18 = 966, generated 4 x 89 + 8 x 18 = 500
    nice -n 10 python bench/validity.py --policies onnx --k-steps 6 --u-steps 3    # about half of that
    python bench/validity.py --items 8 --u-items 40 --sources squad --styles near,chat --u-styles near,switch

Prints figures; asserts nothing (``tests/engine/test_validity.py`` checks the targets, the generators,
:func:`check` and, on a small run, the orderings of the old styles). ``docs/validity.md`` explains the
styles and the latest figures.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import string
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
# The repository first (bench/engine.py must never shadow the engine package), bench/ last (for
# validity_targets).
if str(ROOT) in sys.path:
    sys.path.remove(str(ROOT))
sys.path.insert(0, str(ROOT))
if str(BENCH) not in sys.path:
    sys.path.append(str(BENCH))

import validity_targets as vt  # noqa: E402

DATA = next((p / "shared" / "data" for p in ROOT.parents if (p / "shared" / "data").is_dir()),
            ROOT.parent / "shared" / "data")
"""``shared/data`` in the nearest folder above the repository that has one."""
DEMO_DOCS = ROOT / "engine" / "demo" / "docs"
DEMO_TOPICS = ROOT / "engine" / "demo" / "topics.yaml"
DEFAULT_DATA: dict[str, tuple[Path, ...]] = {
    "squad": (DATA / "squad" / "dev-v1.1-4articles.json",),
    "medqa": (DATA / "medqa" / "us_test_sample50.jsonl",),
    "generated": (DEMO_DOCS, DEMO_TOPICS),
}
"""Each source's input: the SQuAD JSON file, the MedQA JSONL file, (documents folder, topics file)."""
FIXTURES: dict[str, tuple[Path, ...]] = {
    "squad": (BENCH / "data" / "validity_squad.json",),
    "medqa": (BENCH / "data" / "validity_medqa.jsonl",),
}
"""Small inputs of our own, used when ``../shared/data`` is absent (CI): SQuAD-format paragraphs made
from the calibration set's batch-2 documents (dev-split questions only, answers found verbatim), and
twelve MedQA-format questions written for the bench."""


def default_data(source: str) -> tuple[Path, ...]:
    """The source's default input: the shared data when present, else the committed fixture."""
    paths = DEFAULT_DATA[source]
    if all(p.exists() for p in paths) or source not in FIXTURES:
        return paths
    return FIXTURES[source]
SOURCES = ("squad", "medqa", "generated")
POLICIES = ("onnx", "threshold")
VIVA = shutil.which("viva") or str(Path(sys.executable).with_name("viva"))


class HarnessError(RuntimeError):
    """A step of the benchmark failed (a viva command, missing data)."""


# -- answer normalisation (SQuAD's official rule) for choosing wrong answers --------------------------------
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize(text: str) -> str:
    """SQuAD's normalisation: lower case, punctuation and articles removed, whitespace collapsed."""
    text = "".join(ch for ch in str(text).lower() if ch not in set(string.punctuation))
    return " ".join(_ARTICLES.sub(" ", text).split())


def token_f1(a: str, b: str) -> float:
    """SQuAD token F1 between two texts (after :func:`normalize`)."""
    x, y = normalize(a).split(), normalize(b).split()
    common = sum((Counter(x) & Counter(y)).values())
    if not x or not y or common == 0:
        return 0.0
    p, r = common / len(x), common / len(y)
    return 2 * p * r / (p + r)


# -- the answer key --------------------------------------------------------------------------------------------
_QA_CRITERION = re.compile(r'^Answers "(?P<q>.+)" with "(?P<a>.+?)"', re.DOTALL)


@dataclass
class Draft:
    """An entry before its wrong answer is chosen."""

    item: int
    question: str
    golds: list[str]
    kind: str
    topic: str
    group: str
    options: dict[str, str] | None = None
    protected: list[str] = field(default_factory=list)


def _contains_word(text: str, word: str) -> bool:
    w = normalize(word)
    return bool(w) and re.search(rf"(?<!\w){re.escape(w)}(?!\w)", normalize(text)) is not None


def drafts_of_item(item: dict[str, Any]) -> list[Draft]:
    """The questions of one exported item with their gold answers.

    - the item's own question: gold from ``item.gold`` (a list of accepted answers, a string, or an
      option letter when the item has options, written ``(X) option text``), else ``reference``;
    - ``meta.followups`` (activated static benchmarks such as SQuAD): each follow-up's ``question``
      and ``answers``;
    - criteria that carry a question and answers (the ``asks``/``answers`` fields, or the text
      ``Answers "<question>" with "<answer>"``) and are not covered yet; a criterion with answers but
      no question of its own belongs to the item's question;
    - any other scoring criterion, except the first that states the item's own gold, is a *fact*
      (a generated item's key sentence): its gold is its own text and it has no question of its own;
      in an overview item (:func:`_overview`: no gold, two facts or more) the first fact answers the
      item's opening question instead of the reference (the facts joined).
    """
    iid = int(item["id"])
    meta = item.get("meta") or {}
    topic = str(item.get("topic") or "")
    group = str(meta.get("context") or meta.get("key_sentence") or iid)
    options = item.get("options") or None
    out: list[Draft] = []
    gold = item.get("gold")
    golds: list[str] = []
    kind = "short"
    if options and isinstance(gold, str) and gold.strip() in options:
        letter = gold.strip()
        golds, kind = [f"({letter}) {options[letter]}"], "choice"
    elif isinstance(gold, list):
        golds = [str(g) for g in gold if str(g).strip()]
    elif isinstance(gold, str) and gold.strip():
        golds = [gold.strip()]
    elif item.get("reference") and not _overview(item):
        golds = [str(item["reference"]).strip()]
    if golds:
        out.append(Draft(iid, str(item["question"]), golds, kind, topic, group, options))
    seen = {vt.squash(d.question) for d in out}
    for f in meta.get("followups") or []:
        q, answers = str(f.get("question") or ""), [str(a) for a in f.get("answers") or [] if str(a).strip()]
        if q and answers and vt.squash(q) not in seen:
            seen.add(vt.squash(q))
            out.append(Draft(iid, q, answers, "short", topic, group))
        elif q and answers:  # the same question asked twice (SQuAD does): one entry, every answer accepted
            same = next(d for d in out if vt.squash(d.question) == vt.squash(q))
            same.golds += [a for a in answers if a not in same.golds]
    own_gold_used = False
    for c in item.get("rubric") or []:
        if c.get("kind", "point") == "deduction":
            continue
        text = str(c.get("text") or "")
        m = _QA_CRITERION.match(text)
        q = str(c.get("asks") or c.get("question") or (m["q"] if m else ""))
        answers = [str(a) for a in (c.get("answers") or ([m["a"]] if m else [])) if str(a).strip()]
        if q or answers:
            if q and answers and vt.squash(q) not in seen:
                seen.add(vt.squash(q))
                out.append(Draft(iid, q, answers, "short", topic, group))
            continue
        if not own_gold_used and golds and (any(_contains_word(text, g) for g in golds)
                                            or (kind == "choice" and options and str(gold) in text)):
            own_gold_used = True
            continue
        if c.get("kind", "point") == "point" and text.strip():
            # an overview item's opening question is answered by its first fact (the target says one fact;
            # the follow-ups draw out the others, each matched to its fact by the words they share)
            opening = not golds and not any(d.kind == "fact" for d in out) and _overview(item)
            out.append(Draft(iid, str(item["question"]) if opening else "", [text.strip()], "fact", topic, group))
    protected = [str(c.get("text") or "") for c in item.get("rubric") or []] + [g for d in out for g in d.golds]
    for d in out:
        d.protected = protected
    return out


def _overview(item: dict[str, Any]) -> bool:
    """An overview item (issue 33: an opening question and 3-4 facts as criteria, no gold answer): its
    reference is the facts joined, which is no one answer to key."""
    facts = [c for c in item.get("rubric") or [] if c.get("kind", "point") == "point"
             and not (c.get("asks") or c.get("question") or c.get("answers") or _QA_CRITERION.match(str(c.get("text") or "")))]
    return not item.get("gold") and len(facts) >= 2


def _shape(answer: str) -> tuple[bool, bool]:
    """What kind of answer it is: (holds a digit, longer than three words)."""
    return any(ch.isdigit() for ch in answer), len(answer.split()) > 3


def _choose(candidates: Sequence[str], *seed: Any) -> str | None:
    pool = sorted(set(candidates))
    if not pool:
        return None
    return pool[int(vt.draw("wrong", *seed) * len(pool))]


def build_key(items: list[dict[str, Any]], seed: int) -> tuple[list[vt.Entry], dict[int, str]]:
    """Entries (gold and a plausible wrong answer for every question) and the items' questions.

    Wrong answers come from the same source, chosen by a seeded draw among:

    - ``choice``: the item's other options;
    - ``short``: other questions' gold answers that share no token with any accepted gold answer
      (SQuAD token F1 = 0) and do not name any gold of this item; first those of the same shape
      (:func:`_shape`: with or without digits, up to three words or more) from the same topic but
      another passage, then of the same shape from another topic, then any shape (same topic
      first), the same passage last;
    - ``fact``: other items' facts whose token F1 with every criterion and gold of this item is below
      0.5 and that name none of its short gold answers; another topic first (facts of one topic often
      imply each other: "hands must be cleaned before putting gloves on" nearly says "wearing gloves
      does not replace hand hygiene", so a same-topic fact would not be a clearly wrong answer).
    """
    drafts = [d for it in items for d in drafts_of_item(it)]
    passages = {int(it["id"]): passage_of(it) for it in items}
    entries: list[vt.Entry] = []
    for n, d in enumerate(drafts):
        q = d.question or d.golds[0]
        wrong: str | None = None
        if d.kind == "choice" and d.options:
            golds = {d.golds[0]}
            wrong = _choose([f"({k}) {v}" for k, v in d.options.items() if f"({k}) {v}" not in golds], seed, q)
        else:
            same_kind = [o for o in drafts if o.kind == d.kind and o is not d]
            item_shorts = [g for o in drafts if o.item == d.item and o.kind == "short" for g in o.golds]

            def ok(text: str, d: Draft = d, item_shorts: list[str] = item_shorts) -> bool:
                if any(_contains_word(text, g) for g in item_shorts):
                    return False
                if d.kind == "short":
                    return all(token_f1(text, g) == 0.0 for g in d.golds)
                return all(token_f1(text, p) < 0.5 for p in d.protected)

            if d.kind == "short":
                shape = _shape(d.golds[0])
                same = [o for o in same_kind if _shape(o.golds[0]) == shape]
                tiers = [[o for o in same if o.topic == d.topic and o.group != d.group],
                         [o for o in same if o.topic != d.topic],
                         [o for o in same_kind if o.topic == d.topic and o.group != d.group],
                         [o for o in same_kind if o.group != d.group],
                         same_kind,
                         # a generated benchmark of overview items has few short answers: another
                         # item's fact is a far wrong answer too
                         [o for o in drafts if o.item != d.item and o.kind == "fact"]]
            else:
                tiers = [[o for o in same_kind if o.topic != d.topic],
                         [o for o in same_kind if o.item != d.item]]
            for tier in tiers:
                wrong = _choose([o.golds[0] for o in tier if ok(o.golds[0])], seed, q)
                if wrong:
                    break
        if not wrong:
            raise HarnessError(f"no wrong answer available for {q[:80]!r} (item {d.item}); run more items")
        near, near_kind = near_of(d, drafts, passages.get(d.item, ""), seed) or ("", "")
        entries.append(vt.Entry(f"{d.item}:{n}", d.item, d.question, d.golds[0], wrong, d.kind, near, near_kind,
                                reasons_of(d, drafts, passages.get(d.item, ""), near), d.options,
                                passages.get(d.item, "") if d.kind == "short" else ""))
    questions = {int(it["id"]): str(it["question"]) for it in items}
    return entries, questions


def key_summary(entries: Sequence[vt.Entry]) -> str:
    """How the key's generated answers came out: near misses by kind (``far`` where none could be
    made and the far wrong answer stands in) and paraphrases by kind (``none``: no rewording applies,
    the gold is given as it is)."""
    near = Counter(e.near_kind or "far" for e in entries)
    para = Counter()
    for e in entries:
        if e.kind == "choice":
            letter, text = vt._letter(e.gold)
            para[vt.choice_paraphrase(letter, text, e.question or e.gold)[1]] += 1
        else:
            para[vt.paraphrase(e.gold.strip(), e.question or e.gold)[1] or "none"] += 1
    return ("near misses: " + ", ".join(f"{k} {v}" for k, v in near.most_common())
            + "; paraphrases: " + ", ".join(f"{k} {v}" for k, v in para.most_common()))


def kind_breakdown(entries: Sequence[vt.Entry]) -> str:
    """:func:`kind_tally` as text: ``name credited/n`` per kind."""
    return "; ".join(f"{k} {h}/{n}" for k, (h, n) in sorted(kind_tally(entries).items()))


def kind_tally(entries: Sequence[vt.Entry]) -> dict[str, tuple[int, int]]:
    """The gold judge alone (``engine.judge.answers``, no session) on the key's generated answers, by
    how they were made: paraphrases of the gold credited, near misses credited, chat replies holding
    the gold (inside a sentence / after reasoning) credited, multiple-choice replies listing every
    option read as a choice, per separator. Facts are left out (their judge needs the embedder)."""
    from engine.judge.answers import judge_choice, judge_gold

    tally: dict[str, list[int]] = {}

    def add(name: str, hit: bool) -> None:
        t = tally.setdefault(name, [0, 0])
        t[0] += int(hit)
        t[1] += 1

    for e in entries:
        q = e.question or e.gold
        if e.kind == "short":
            text, how = vt.paraphrase(e.gold.strip(), q)
            if how:
                add(f"paraphrase:{how}", judge_gold(text, [e.gold], e.question).met)
            if e.near_kind:
                add(f"near:{e.near_kind}", judge_gold(e.near, [e.gold], e.question).met)
            for after in (False, True):
                add(f"chat:{'after' if after else 'inside'}",
                    judge_gold(vt._chat(e, e.gold, "chat", after=after), [e.gold], e.question).met)
        elif e.kind == "choice" and e.options:
            letter, text = vt._letter(e.gold)
            reply, how = vt.choice_paraphrase(letter, text, q)
            add(f"paraphrase:{how}", judge_choice(reply, e.options, letter).met)
            for after in (False, True):
                add(f"chat:{'after' if after else 'inside'}",
                    judge_choice(vt._chat(e, e.gold, "chat", after=after), e.options, letter).met)
            for sep in vt.LIST_SEPARATORS:
                listed = sep.join(f"({k}) {v}" for k, v in e.options.items())
                add(f"all-options[{sep!r}]",
                    judge_choice(listed, e.options, letter).chosen is not None)
    return {k: (h, n) for k, (h, n) in tally.items()}


def passage_of(item: dict[str, Any]) -> str:
    """The item's own passage: its SQuAD paragraph (``meta.context``), else a generated item's key
    sentence and its other facts (rubric points); "" for a multiple-choice item."""
    meta = item.get("meta") or {}
    if meta.get("context"):
        return str(meta["context"])
    parts = [str(meta.get("key_sentence") or "")] + [str(c.get("text") or "") for c in item.get("rubric") or []
                                                     if c.get("kind", "point") == "point"]
    return " ".join(p.strip() for p in parts if p.strip() and not p.startswith(("Gives ", "Answers ")))


def near_of(d: Draft, drafts: list[Draft], passage: str, seed: int) -> tuple[str, str] | None:
    """The entry's near miss and its kind (:func:`vt.near_miss` from the item's passage; for a
    multiple-choice entry the wrong option sharing most words with the gold, ties by a seeded draw;
    for a fact :func:`vt.near_fact` with the numbers of the item's other facts). A short answer's near
    miss holds no gold of the item's other questions (like its far wrong answer, :func:`build_key`)."""
    if d.kind == "choice" and d.options:
        gold = d.golds[0]
        others = [f"({k}) {v}" for k, v in d.options.items() if f"({k}) {v}" != gold]
        text = gold.split(") ", 1)[-1]
        ranked = sorted(others, key=lambda o: (-token_f1(o.split(") ", 1)[-1], text), vt.draw("near", seed, o)))
        return (ranked[0], "option") if ranked else None
    if d.kind == "fact":
        facts = [g for o in drafts if o.item == d.item and o is not d for g in o.golds]
        return vt.near_fact(d.golds[0], facts, seed)
    # never a gold of another question of the item: the session judges every criterion on every reply
    # (SQuAD asks "What does the immune system protect against?" twice, with other golds)
    others = [g for o in drafts if o.item == d.item and o is not d and o.kind == "short" for g in o.golds]
    return vt.near_miss(d.golds, passage, d.question, seed, avoid=[g for g in others if g not in d.golds])


def reasons_of(d: Draft, drafts: list[Draft], passage: str, near: str) -> tuple[str, ...]:
    """Sentences of the item's passage that hold no gold answer of the item (nor the near miss):
    what a chat-style reply reasons from (at most six)."""
    golds = [g for o in drafts if o.item == d.item for g in o.golds] + ([near] if near else [])
    out = [s.strip() for s in re.split(r"(?<=[.!?])\s+", passage) if len(s.split()) >= 4
           and not any(_contains_word(s, g) for g in golds)]
    return tuple(out[:6])


# -- viva on the command line ------------------------------------------------------------------------------------
@dataclass
class Home:
    """A temporary data home for one source, with the environment its viva commands run in."""

    path: Path
    key: Path
    env: dict[str, str]
    log: list[str] = field(default_factory=list)

    @classmethod
    def create(cls, path: Path) -> Home:
        """A fresh home at ``path``; ``PYTHONPATH`` holds the repository and ``bench/``."""
        path.mkdir(parents=True, exist_ok=True)
        env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
        env["VIVA_HOME"] = str(path)
        env[vt.KEY_ENV] = str(path / "key.json")
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(BENCH)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        env.setdefault("PYTHONHASHSEED", "0")
        return cls(path, path / "key.json", env)

    def viva(self, *args: str, json_out: bool = True) -> Any:
        """Run ``viva ARGS`` in this home; parse stdout as JSON when ``json_out``.

        ``viva run`` exits 1 when a session failed but still prints its JSON: that is returned.

        Raises:
            HarnessError: the command failed without JSON output; the message holds its stderr tail.
        """
        cmd = [VIVA, *args]
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=self.env, cwd=self.path, capture_output=True, text=True)
        self.log.append(f"{time.perf_counter() - start:6.1f}s  viva {' '.join(args[:3])} ...")
        if json_out:
            try:
                return json.loads(proc.stdout)
            except ValueError:
                pass
        if proc.returncode != 0 or json_out:
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-5:]
            raise HarnessError(f"viva {' '.join(args)} exited {proc.returncode}: " + " | ".join(tail))
        return proc.stdout

    def export(self, bench: str) -> list[dict[str, Any]]:
        """The benchmark's items as ``viva bench export`` writes them (``engine.api.export_jsonl``,
        in this process: one interpreter start less)."""
        import io

        from engine.api import Engine, export_jsonl

        out = io.StringIO()
        with Engine.open(self.path) as engine:
            export_jsonl(engine.runtime.store, bench, out)
        return [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]

    def sessions(self) -> list[dict[str, Any]]:
        """Every session as ``viva sessions --json`` lists it (``Engine.list_sessions``, in this process)."""
        from engine.api import Engine

        with Engine.open(self.path) as engine:
            return engine.list_sessions()


def squad_subset(path: Path, paragraphs: int, out: Path) -> None:
    """Write the first paragraph of each article, then the second of each... (``paragraphs`` in all)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    articles = data["data"]
    picked: list[list[dict]] = [[] for _ in articles]
    depth, taken = 0, 0
    while taken < paragraphs and any(depth < len(a["paragraphs"]) for a in articles):
        for ai, a in enumerate(articles):
            if taken < paragraphs and depth < len(a["paragraphs"]):
                picked[ai].append(a["paragraphs"][depth])
                taken += 1
        depth += 1
    subset = {"version": data.get("version", ""), "data": [
        {**{k: v for k, v in a.items() if k != "paragraphs"}, "paragraphs": ps}
        for a, ps in zip(articles, picked, strict=True) if ps]}
    out.write_text(json.dumps(subset, ensure_ascii=False), encoding="utf-8")


def round_robin(items: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """At most ``n`` items, one per topic in turn (items keep their order within a topic)."""
    by_topic: dict[str, list[dict[str, Any]]] = {}
    for it in items:
        by_topic.setdefault(str(it.get("topic") or ""), []).append(it)
    queues = list(by_topic.values())
    out: list[dict[str, Any]] = []
    while len(out) < n and any(queues):
        for q in queues:
            if q and len(out) < n:
                out.append(q.pop(0))
    return out


POOL = 2
ITEMS: dict[str, tuple[int, int]] = {"squad": (6, 24), "medqa": (6, 24), "generated": (4, 8)}
"""Default (k items, u items) per source. R− is a rate over challenges and the policy challenges about
once a session, so the u series needs more items than Score's k series; the generated benchmark's
sessions cost more (free-text judging embeds every answer) and challenge more often, so it runs fewer."""
QUICK_ITEMS: dict[str, tuple[int, int]] = {"squad": (2, 8), "medqa": (2, 8), "generated": (2, 4)}
"""The same for ``--quick``."""
"""Each source imports (or generates) this many times the items it runs: the others are the pool that
plausible wrong answers are drawn from."""


def prepare(source: str, home: Home, n_items: int, seed: int, data: Sequence[Path] | None = None
            ) -> tuple[str, list[dict[str, Any]], list[str]]:
    """Import or generate the source's benchmark in ``home`` (:data:`POOL` × ``n_items`` items); return
    (name, every item, extra run arguments). The items run are :func:`round_robin` over topics."""
    if source not in DEFAULT_DATA:
        raise HarnessError(f"unknown source {source!r}; use {', '.join(SOURCES)}")
    paths = [Path(p) for p in (data or default_data(source))]
    for p in paths:
        if not p.exists():
            raise HarnessError(f"{p}: {source} input not found (pass --{source} PATH)")
    if source == "squad":
        subset = home.path / "squad-subset.json"
        squad_subset(paths[0], POOL * n_items, subset)
        home.viva("bench", "import", "squad", str(subset), "--name", "squad", "--json")
        return "squad", home.export("squad"), []
    if source == "medqa":
        subset = home.path / "medqa-subset.jsonl"
        lines = [ln for ln in paths[0].read_text(encoding="utf-8").splitlines() if ln.strip()]
        subset.write_text("\n".join(lines[:POOL * n_items]) + "\n", encoding="utf-8")
        home.viva("bench", "import", "medqa", str(subset), "--name", "medqa", "--json")
        return "medqa", home.export("medqa"), ["--protocol", "adaptive"]
    if source == "generated":
        if len(paths) != 2:
            raise HarnessError("generated: give a documents folder and a topics file")
        home.viva("kb", "build", "demo", str(paths[0]), "--json", "--quiet")
        per_topic = max(1, math.ceil(POOL * n_items / 2))
        home.viva("bench", "generate", "generated", "--kb", "demo", "--topics", str(paths[1]), "--offline",
                  "--per-topic", str(per_topic), "--seed", str(seed), "--json")
        return "generated", home.export("generated"), []
    raise HarnessError(f"unknown source {source!r}; use {', '.join(SOURCES)}")


# -- the plan and the figures ------------------------------------------------------------------------------------
@dataclass
class Plan:
    """Which targets run: the k series (u = 0) of every style in ``styles``, the u series (k = 1) of
    every style in ``u_styles`` (default: ``styles``), and the mute target."""

    styles: list[str]
    ks: list[float]
    us: list[float]
    u_styles: list[str] | None = None

    def __post_init__(self) -> None:
        if self.u_styles is None:
            self.u_styles = list(self.styles)

    def all_styles(self) -> list[str]:
        """The k styles, then the u styles not among them."""
        return list(dict.fromkeys(self.styles + list(self.u_styles or [])))

    def specs(self) -> list[str]:
        """Every target spec, the mute target first."""
        return list(dict.fromkeys(self.k_specs() + self.u_specs()))

    def k_specs(self) -> list[str]:
        """The mute target and the k series (u = 0) of every style: the run on the k items."""
        names = [vt.MUTE] + [vt.target_name(k, 0.0, style) for style in self.styles for k in self.ks]
        return [spec(n) for n in dict.fromkeys(names)]

    def u_specs(self) -> list[str]:
        """The u series (k = 1) of every u style: the run on the u items."""
        return [spec(n) for n in dict.fromkeys(vt.target_name(1.0, u, style) for style in self.u_styles or []
                                                for u in self.us)]


K_STYLES = ("terse", "sentence", "verbose", "echo", "near", "paraphrase", "chat", "list") + vt.GAMING_STYLES
"""Default styles of the k series (``switch`` differs from ``near`` only under challenge: u series)."""
U_STYLES = ("terse", "near", "switch")
"""Default styles of the u series: retracting in words with far (``terse``) and near (``near``) wrong
answers, and switching without a retraction phrase (``switch``, the same near wrong answers)."""


def spec(name: str) -> str:
    """The full target spec of a validity target name."""
    return f"python:validity_targets:{name}"


@dataclass
class StyleFigures:
    """The figures of one (source, policy, style)."""

    style: str
    score_by_k: dict[float, float | None]
    r_minus_by_u: dict[float, float | None]
    rho_k: float
    rho_u: float
    oracle_wins: int
    pairs: int
    oracle_score: float | None
    mute_score: float | None
    losses: list[tuple[int, int, float | None, float | None]]
    """(oracle session, mute session, oracle score, mute score) where the oracle did not win."""
    false_credit: list[tuple[int, float]]
    """(session, score) of the k = 0 target's sessions that scored above 0 (wrong answers credited)."""
    score_by_u: dict[float, float | None] = field(default_factory=dict)
    """Score of the u series (k = 1) by u: what giving way under challenge costs."""
    by_format: dict[str, tuple[int, int]] = field(default_factory=dict)
    """``list`` on multiple-choice items: separator -> (oracle sessions scored above 0, sessions)."""
    in_k: bool = True
    """The style ran in the k series (else only in the u series)."""
    challenges_u1: int = 0
    """Challenges the u = 1 target met (it gives way to every one while its answer is right)."""
    per_criterion: bool = False
    """The source's items are overview items judged fact by fact (:func:`_overview`): a sweep or a pasted
    passage states each fact it holds, and is credited for it (issue 34: items with several criteria
    are judged per criterion), so those two styles are no gaming check there."""

    @property
    def expect(self) -> str:
        """What a valid judge gives this style: ``credit`` (right iff known) or ``none`` (never right)."""
        return "none" if self.style in vt.NEVER_RIGHT else "credit"


RHO_MIN = 0.9
"""ρ(k, Score) a style whose answers are right iff known must reach."""
GAMING_MAX = 10.0
"""The highest Score a gaming style (:data:`validity_targets.GAMING_STYLES`) may reach at any k (issue 34:
a target that wants credit without committing to the answer scores at most 10 where right targets score 90+)."""


PER_CRITERION_STYLES = ("sweep", "paste")
"""Gaming styles that are no gaming check on overview items (:attr:`StyleFigures.per_criterion`)."""


def spearman_of(series: dict[float, float | None]) -> float:
    """Spearman's ρ between a series' keys and values (``engine.policy.evaluate.spearman``; NaN for none)."""
    from engine.policy.evaluate import spearman

    return spearman(list(series), [_num(v) for v in series.values()]) if series else math.nan


def check(s: StyleFigures, retract: StyleFigures | None = None) -> list[str]:
    """The failures the figures of one style show (the rule the table's ``check`` column prints):

    - a ``credit`` style (right iff known): ρ(k, Score) < :data:`RHO_MIN` ("rho"), the oracle not
      above mute on every item ("oracle<=mute n/N"), or the k = 0 target scoring above mute
      ("credits wrong answers");
    - a ``none`` style (``list``: never right): any k scoring above mute ("credits lists"); a gaming
      style (sweep, paste, deny, withdraw, ask, suppose, attribute) any k scoring above
      :data:`GAMING_MAX` ("games the judge");
    - a u series: Score at u = 1 not below Score at u = 0 although the u = 1 target met challenges
      ("keeps credit when it gives way"; with no challenge: "cannot tell"); for
      ``switch``, also a loss from u = 0 to u = 1 under half the loss of the retracting ``near``
      target (``retract``), when that ran ("switch keeps credit a retraction loses").
    """
    out: list[str] = []
    mute = _num(s.mute_score)
    mute = 0.0 if math.isnan(mute) else mute
    if s.in_k and s.score_by_k:
        scores = [_num(v) for v in s.score_by_k.values()]
        if s.expect == "credit":
            if math.isnan(s.rho_k) or s.rho_k < RHO_MIN:
                out.append(f"rho {_f(s.rho_k, 2)} < {RHO_MIN}")
            if s.pairs and s.oracle_wins < s.pairs:
                out.append(f"oracle<=mute {s.pairs - s.oracle_wins}/{s.pairs}")
            k0 = scores[0]
            if not math.isnan(k0) and k0 > mute + 1e-9:
                out.append(f"credits wrong answers (k=0 Score {k0:.1f})")
        elif s.style in vt.GAMING_STYLES and s.per_criterion and s.style in PER_CRITERION_STYLES:
            pass
        elif s.style in vt.GAMING_STYLES:
            top = max((v for v in scores if not math.isnan(v)), default=math.nan)
            if not math.isnan(top) and top > GAMING_MAX:
                out.append(f"games the judge (Score up to {top:.1f} > {GAMING_MAX:g})")
        elif any(not math.isnan(v) and v > mute + 1e-9 for v in scores):
            out.append(f"credits lists (Score up to {max(v for v in scores if not math.isnan(v)):.1f})")
    if s.score_by_u and not s.challenges_u1:
        out.append("u series: no challenge met, cannot tell (run more --u-items)")
    elif s.score_by_u:
        us = list(s.score_by_u)
        lo, hi = _num(s.score_by_u[us[0]]), _num(s.score_by_u[us[-1]])
        if not (math.isnan(lo) or math.isnan(hi)):
            if hi >= lo - 1e-9:
                out.append(f"keeps credit when it gives way (Score u=0 {lo:.1f}, u=1 {hi:.1f}, "
                           f"{s.challenges_u1} challenges at u=1)")
            elif retract is not None and retract.score_by_u:
                rl = _num(retract.score_by_u.get(us[0])) - _num(retract.score_by_u.get(us[-1]))
                if not math.isnan(rl) and (lo - hi) < 0.5 * rl:
                    out.append(f"switch keeps credit a retraction loses (loss {lo - hi:.1f} vs {rl:.1f})")
    return out


@dataclass
class RunFigures:
    """The figures of one (source, policy) run."""

    source: str
    policy: str
    run: int
    styles: list[StyleFigures]
    fdr: float | None
    eir: float | None
    rates_note: str
    failed: list[dict[str, Any]]
    sessions: int
    seconds: float
    u_run: int | None = None
    explained: list[str] = field(default_factory=list)


def _num(v: Any) -> float:
    return math.nan if v is None else float(v)


def rates(home: Home, session_ids: set[int], plan: Plan) -> tuple[float | None, float | None, str]:
    """FDR and EIR of the policy that ran these sessions, by the engine's own logged-session evaluation.

    Returns ``(None, None, reason)`` when the engine has no such function yet.
    """
    try:
        from engine.policy.evaluate import TargetTruth, evaluate_logged
        from engine.policy.logs import load_sessions, open_store
    except ImportError as exc:
        return None, None, f"n/a: the engine has no logged-session evaluation ({exc})"
    truth = {}
    for style in plan.styles:
        for k in plan.ks:
            truth[spec(vt.target_name(k, 0.0, style))] = TargetTruth(k, 0.0)
        for u in plan.us:
            truth[spec(vt.target_name(1.0, u, style))] = TargetTruth(1.0, u)
    store = open_store(home.path / "viva.db")
    try:
        logged = load_sessions(store)
    finally:
        store.close()
    mine = {t: [s for s in ss if s.session_id in session_ids] for t, ss in logged.items()}
    report = evaluate_logged({t: ss for t, ss in mine.items() if ss}, truth)
    states = ", ".join(f"{name} {_f(getattr(report, attr)) if isinstance(getattr(report, attr), float) else getattr(report, attr)}"
                       for name, attr in (("stagnant states", "stagnant_states"), ("gaining states", "gaining_states"),
                                          ("FDR_f", "fdr_follow_up"), ("challenge share", "challenge_share"),
                                          ("policy", "version")) if hasattr(report, attr))
    return _num(report.fdr), _num(report.eir), f"{states} (engine.policy.evaluate.evaluate_logged)"


def _viva_run(home: Home, bench: str, items: list[dict[str, Any]], specs: list[str], extra: list[str],
              policy: str, seed: int, concurrency: int, turns: int | None) -> dict[str, Any]:
    """``viva run --json`` of ``specs`` on ``items`` (every target on every item, one process)."""
    args = ["run", "--bench", bench, "--items", ",".join(str(it["id"]) for it in items), "--kernel", "offline",
            "--policy", policy, "--seed", str(seed), "--concurrency", str(concurrency), "--json", *extra]
    if turns:
        args += ["--turns", str(turns)]
    for s in specs:
        args += ["--target", s]
    return home.viva(*args)


def run_policy(source: str, home: Home, bench: str, items: list[dict[str, Any]], extra: list[str],
               plan: Plan, policy: str, seed: int, concurrency: int, turns: int | None,
               u_items: list[dict[str, Any]] | None = None) -> RunFigures:
    """Two ``viva run``s with one policy and their figures: the mute target and the k series on
    ``items``; the u series on ``u_items`` (default: ``items``).

    R− is a rate over challenges, and a policy challenges a target about once a session: the u series
    needs more items than Score's k series for the same precision (``--u-items``)."""

    start = time.perf_counter()
    out_k = _viva_run(home, bench, items, plan.k_specs(), extra, policy, seed, concurrency, turns)
    out_u = _viva_run(home, bench, u_items or items, plan.u_specs(), extra, policy, seed, concurrency, turns)
    seconds = time.perf_counter() - start
    rows = {r["target"]: r for r in out_k["targets"]}
    u_rows = {r["target"]: r for r in out_u["targets"]}
    listed = {r["id"]: r for r in home.sessions()}
    k_ids = {sid for r in rows.values() for sid in r["sessions"]}
    run_ids = k_ids | {sid for r in u_rows.values() for sid in r["sessions"]}
    by_target_item: dict[tuple[str, int], dict[str, Any]] = {}
    for sid in k_ids:
        row = listed.get(sid)
        if row is not None:
            by_target_item[(row["target"], row["item"])] = row

    def score(name: str) -> float | None:
        r = rows.get(spec(name))
        return None if r is None else r.get("score")

    def u_score(name: str) -> float | None:
        r = u_rows.get(spec(name))
        return None if r is None else r.get("score")

    def r_minus(name: str) -> float | None:
        r = u_rows.get(spec(name))
        return None if r is None else r.get("r_minus")

    def challenges(name: str) -> int:
        r = u_rows.get(spec(name))
        return 0 if r is None else int(r.get("challenges") or 0)

    styles = []
    mute_row = rows.get(spec(vt.MUTE))
    seps = {int(it["id"]): vt.list_separator(vt.Entry("", int(it["id"]), "", "", "")) for it in items}
    for style in plan.all_styles():
        in_k = style in plan.styles
        in_u = style in (plan.u_styles or [])
        by_k = {k: score(vt.target_name(k, 0.0, style)) for k in plan.ks} if in_k else {}
        by_u = {u: r_minus(vt.target_name(1.0, u, style)) for u in plan.us} if in_u else {}
        score_u = {u: u_score(vt.target_name(1.0, u, style)) for u in plan.us} if in_u else {}
        challenged = challenges(vt.target_name(1.0, plan.us[-1], style)) if in_u else 0
        oracle = vt.target_name(1.0, 0.0, style)
        wins, pairs, losses = 0, 0, []
        formats: dict[str, list[int]] = {}
        for it in items if in_k else []:
            o = by_target_item.get((spec(oracle), it["id"]))
            m = by_target_item.get((spec(vt.MUTE), it["id"]))
            if o is None or m is None or o.get("status") != "finished" or m.get("status") != "finished":
                continue
            pairs += 1
            if _num(o.get("score")) > _num(m.get("score")):
                wins += 1
            elif style not in vt.NEVER_RIGHT:
                losses.append((o["id"], m["id"], o.get("score"), m.get("score")))
            if style == "list" and it.get("options"):
                f = formats.setdefault(seps[int(it["id"])], [0, 0])
                f[0] += int(_num(o.get("score")) > 0)
                f[1] += 1
        zero = spec(vt.target_name(0.0, 0.0, style)) if 0.0 in plan.ks and in_k else None
        false_credit = sorted((r["id"], float(r["score"])) for (t, _), r in by_target_item.items()
                              if t == zero and r.get("score") and float(r["score"]) > 0)
        if style in vt.NEVER_RIGHT:  # every credited session of a never-right style is a false credit
            names = {spec(vt.target_name(k, 0.0, style)) for k in plan.ks}
            false_credit = sorted((r["id"], float(r["score"])) for (t, _), r in by_target_item.items()
                                  if t in names and r.get("score") and float(r["score"]) > 0)
        styles.append(StyleFigures(
            style, by_k, by_u,
            spearman_of(by_k), spearman_of(by_u),
            wins, pairs, score(oracle) if in_k else None, None if mute_row is None else mute_row.get("score"), losses,
            false_credit, score_u, {k: (v[0], v[1]) for k, v in formats.items()}, in_k, challenged,
            any(_overview(it) for it in items)))
    fdr, eir, note = rates(home, run_ids, plan)
    return RunFigures(source, policy, int(out_k["run"]), styles, fdr, eir, note,
                      (out_k.get("failed") or []) + (out_u.get("failed") or []), len(run_ids), seconds,
                      u_run=int(out_u["run"]))


def explain(home: Home, session_id: int, why: str) -> list[str]:
    """A session's turns, one line each, from ``viva report SESSION --format json`` (for the report)."""
    report = home.viva("report", str(session_id), "--format", "json")
    sess, item = report.get("session") or {}, report.get("item") or {}
    lines = [f"    s{session_id} ({why}; {str(sess.get('target', '?')).rpartition(':')[2]}, item {item.get('id', '?')}, "
             f"policy {sess.get('policy', '?')}):"]
    for t in report.get("turns") or []:
        met = [v["cid"] for v in t.get("verdicts") or [] if v.get("met")]
        q = " ".join(str(t.get("question") or "").split())
        a = " ".join(str(t.get("answer") or "").split())
        score = t.get("score")
        lines.append(f"      t{t.get('idx')} {t.get('action', ''):<9} Q: {q[:70]!r} A: {a[:60]!r} "
                     f"s={_f(score, 2)} met={','.join(met) or '-'}")
    return lines


def run_source(source: str, workdir: Path, plan: Plan, policies: Sequence[str], n_items: int, seed: int,
               concurrency: int, turns: int | None, log: Any = print, explain_n: int = 0,
               data: Sequence[Path] | None = None, u_items: int | None = None) -> list[RunFigures]:
    """Prepare one source in its own data home under ``workdir`` and run every policy on it
    (``n_items`` items for the k series, ``u_items`` for the u series, default ``n_items``)."""
    home = Home.create(workdir / source)
    n_u = u_items or n_items
    bench, pool, extra = prepare(source, home, max(n_items, n_u), seed, data)
    ordered = round_robin(pool, len(pool))
    items, items_u = ordered[:n_items], ordered[:n_u]
    if not items:
        raise HarnessError(f"{source}: no items to run")
    entries, questions = build_key(pool, seed)
    vt.write_key(home.key, entries, questions, seed)
    log(f"[{source}] {len(items)} items for k, {len(items_u)} for u, {len(entries)} key questions "
        f"({', '.join(f'{k} {v}' for k, v in Counter(e.kind for e in entries).items())}); home {home.path}")
    log(f"[{source}] {key_summary(entries)}")
    log(f"[{source}] gold judge alone on the key's generated answers (credited/n; right: paraphrase, chat; "
        f"wrong: near, all-options read as a choice): {kind_breakdown(entries)}")
    out = []
    for policy in policies:
        figures = run_policy(source, home, bench, items, extra, plan, policy, seed, concurrency, turns, items_u)
        losses = [(s.style, o) for s in figures.styles for o, _m, _os, _ms in s.losses]
        credited = [(s.style, sid, sc) for s in figures.styles for sid, sc in s.false_credit]
        for style, sid in losses[:explain_n]:
            figures.explained += explain(home, sid, f"oracle not above mute, {style}")
        for style, sid, sc in credited[:explain_n]:
            figures.explained += explain(home, sid, f"{'a list' if style in vt.NEVER_RIGHT else 'k=0'} credited {sc:.1f}, "
                                                    f"{style}")
        log(f"[{source}] policy {policy}: run {figures.run}, {figures.sessions} sessions in {figures.seconds:.0f}s"
            + (f", {len(figures.failed)} failed" if figures.failed else ""))
        out.append(figures)
    log(f"[{source}] viva commands: " + "; ".join(line.strip() for line in home.log))
    return out


# -- printing -----------------------------------------------------------------------------------------------------
def _f(v: float | None, digits: int = 3) -> str:
    return "n/a" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{digits}f}"


def format_table(results: list[RunFigures]) -> str:
    """The figures as plain text: one row per (source, policy, style) with the failures :func:`check`
    finds, then the series, the list formats and the rates."""
    head = (f"{'source':<10}{'policy':<10}{'style':<11}{'expect':<7}{'rho(k,Score)':>13}{'k=0':>6}{'k=1':>6}"
            f"{'mute':>6}{'oracle>mute':>12}{'rho(u,R-)':>10}{'u=0->1':>12}  check")
    lines = [head, "-" * (len(head) + 30)]
    for r in results:
        near = next((s for s in r.styles if s.style == "near" and s.score_by_u), None)
        for s in r.styles:
            ks = list(s.score_by_k.values())
            k0 = _f(ks[0], 1) if s.in_k and ks else ""
            k1 = _f(ks[-1], 1) if s.in_k and ks else ""
            us = list(s.score_by_u.values())
            drop = f"{_f(us[0], 0)}->{_f(us[-1], 0)}" if us else ""
            problems = check(s, near if s.style == "switch" else None)
            lines.append(f"{r.source:<10}{r.policy:<10}{s.style:<11}{s.expect if s.in_k else 'u':<7}"
                         f"{_f(s.rho_k) if s.in_k else '':>13}{k0:>6}{k1:>6}{_f(s.mute_score, 1):>6}"
                         f"{f'{s.oracle_wins}/{s.pairs}' if s.in_k else '':>12}{_f(s.rho_u) if us else '':>10}"
                         f"{drop:>12}  {'FAIL: ' + '; '.join(problems) if problems else 'ok'}"
                         f"{' (judged per criterion)' if s.per_criterion and s.style in PER_CRITERION_STYLES else ''}")
        lines.append(f"{'':<20}FDR {_f(r.fdr)}  EIR {_f(r.eir)}")
    formats = [(r, s) for r in results for s in r.styles if s.by_format]
    if formats:
        lines.append("")
        lines.append("Multiple-choice replies listing every option (style list, k=1), sessions credited:")
        for r, s in formats:
            lines.append(f"  {r.source:<10}{r.policy:<10}" + "  ".join(
                f"{sep.strip() or repr(sep)!s:>2} {c}/{n}" for sep, (c, n) in sorted(s.by_format.items())))
    lines.append("")
    lines.append("Score by k (u=0) | Score by u (k=1) | R- by u (k=1):")
    for r in results:
        for s in r.styles:
            ks = " ".join(f"{_f(v, 0):>3}" for v in s.score_by_k.values())
            su = " ".join(f"{_f(v, 0):>3}" for v in s.score_by_u.values())
            us = " ".join(_f(v, 2) for v in s.r_minus_by_u.values())
            lines.append(f"  {r.source:<10}{r.policy:<10}{s.style:<11} {ks or '-'} | {su or '-'} | {us or '-'}")
    lines.append("")
    for r in results:
        lines.append(f"  {r.source} {r.policy} (run {r.run}): FDR/EIR {r.rates_note}")
        losses = [(s.style, *loss) for s in r.styles for loss in s.losses]
        if losses:
            shown = ", ".join(f"{st} s{o}={_f(os_, 1)} vs s{m}={_f(ms, 1)}" for st, o, m, os_, ms in losses[:8])
            lines.append(f"    oracle not above mute ({len(losses)}): {shown}{' ...' if len(losses) > 8 else ''}")
        credited = [(s.style, *c) for s in r.styles for c in s.false_credit]
        if credited:
            shown = ", ".join(f"{st} s{sid}={sc:.1f}" for st, sid, sc in credited[:8])
            lines.append(f"    wrong answers credited: sessions of k=0 (of list: any k) scored above 0 ({len(credited)}): "
                         f"{shown}{' ...' if len(credited) > 8 else ''}")
        for fl in r.failed:
            lines.append(f"    session {fl.get('session')} failed: {fl.get('error')}")
        lines += r.explained
    return "\n".join(lines)


def as_json(results: list[RunFigures]) -> list[dict[str, Any]]:
    """The figures as JSON-ready dicts (NaN as null)."""
    def clean(v: Any) -> Any:
        if isinstance(v, float) and math.isnan(v):
            return None
        if isinstance(v, dict):
            return {str(k): clean(x) for k, x in v.items()}
        if isinstance(v, list | tuple):
            return [clean(x) for x in v]
        return v

    out = []
    for r in results:
        d = {k: v for k, v in r.__dict__.items() if k != "styles"}
        d["styles"] = [s.__dict__ for s in r.styles]
        out.append(clean(d))
    return out


def grid(steps: int) -> list[float]:
    """``steps`` evenly spaced values from 0 to 1 (``steps`` >= 2)."""
    return [round(i / (steps - 1), 4) for i in range(steps)]


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="2 items, styles terse,near,chat,list and u styles near,switch, k and u in {0, 0.5, 1}")
    ap.add_argument("--items", type=int, default=None,
                    help="items per source for the k series and mute (default: squad 6, medqa 6, generated 4; quick 2)")
    ap.add_argument("--u-items", type=int, default=None,
                    help="items per source for the u series (default: squad 24, medqa 24, generated 8; quick 8, 8, 4)")
    ap.add_argument("--sources", default=",".join(SOURCES), help=f"comma-separated: {', '.join(SOURCES)}")
    ap.add_argument("--styles", default=None,
                    help=f"k-series styles, comma-separated: {', '.join(vt.STYLES)} (default {','.join(K_STYLES)})")
    ap.add_argument("--u-styles", default=None,
                    help=f"u-series styles, comma-separated (default {','.join(U_STYLES)})")
    ap.add_argument("--policies", default=",".join(POLICIES), help="comma-separated policies (default onnx,threshold)")
    ap.add_argument("--k-steps", type=int, default=None, help="grid points for k in [0, 1] (default 11; quick 3)")
    ap.add_argument("--u-steps", type=int, default=None, help="grid points for u in [0, 1] (default 6; quick 3)")
    ap.add_argument("--turns", type=int, default=None, help="turns per session (default: the engine's)")
    ap.add_argument("--squad", default=None, help="SQuAD JSON file (default ../shared/data/squad/...)")
    ap.add_argument("--medqa", default=None, help="MedQA JSONL file (default ../shared/data/medqa/...)")
    ap.add_argument("--generated", nargs=2, default=None, metavar=("DOCS", "TOPICS"),
                    help="documents folder and topics YAML (default engine/demo/docs, engine/demo/topics.yaml)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=len(SOURCES),
                    help="sources run side by side, each in its own viva processes (default: all)")
    ap.add_argument("--concurrency", type=int, default=4, help="sessions at once (default 4: the judge is CPU-bound)")
    ap.add_argument("--keep", default=None, help="keep the data homes in this folder (default: a temp folder, removed)")
    ap.add_argument("--explain", type=int, default=1,
                    help="print the turns of this many suspicious sessions of each kind per run (default 1)")
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    args = ap.parse_args(argv)
    styles = (args.styles or ("terse,near,chat,list" if args.quick else ",".join(K_STYLES))).split(",")
    u_styles = (args.u_styles or ("near,switch" if args.quick else ",".join(U_STYLES))).split(",")
    k_steps = args.k_steps or (3 if args.quick else 11)
    u_steps = args.u_steps or (3 if args.quick else 6)
    if min(k_steps, u_steps) < 2:
        ap.error("--k-steps and --u-steps need at least 2 points (0 and 1)")
    plan = Plan([s.strip() for s in styles if s.strip()], grid(k_steps), grid(u_steps),
                [s.strip() for s in u_styles if s.strip()])
    for s in plan.all_styles():
        if s not in vt.STYLES:
            ap.error(f"unknown style {s!r}; use {', '.join(vt.STYLES)}")
    sources = [s.strip() for s in args.sources.split(",") if s.strip()]
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    workdir = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="viva-validity-"))
    start = time.perf_counter()
    results: list[RunFigures] = []
    commit = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %s"], capture_output=True,
                            text=True).stdout.strip()
    table = QUICK_ITEMS if args.quick else ITEMS
    counts = {s: (args.items or table.get(s, (3, 3))[0], args.u_items or table.get(s, (3, 3))[1]) for s in sources}
    print(f"validity benchmark at {commit}: items (k, u) {counts}, styles {','.join(plan.styles)}, "
          f"u styles {','.join(plan.u_styles or [])}, "
          f"k in {plan.ks}, u in {plan.us}, policies {','.join(policies)}, {len(plan.specs())} targets", flush=True)
    def one_source(source: str) -> list[RunFigures]:
        try:
            given = getattr(args, source, None)
            data = None if given is None else [Path(p) for p in ([given] if isinstance(given, str) else given)]
            return run_source(source, workdir, plan, policies, counts[source][0], args.seed, args.concurrency,
                              args.turns, log=lambda m: print(m, flush=True), explain_n=args.explain, data=data,
                              u_items=counts[source][1])
        except HarnessError as exc:
            print(f"[{source}] skipped: {exc}", flush=True)
            return []

    try:
        # Sources are independent (each its own data home and viva processes): run them side by side.
        # A SQuAD or MedQA run is mostly single-threaded Python, the generated one mostly ONNX, so on
        # two cores they overlap well.
        with ThreadPoolExecutor(max(1, min(args.jobs, len(sources)))) as pool:
            for figures in pool.map(one_source, sources):
                results += figures
    finally:
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)
    print()
    print(format_table(results))
    print(f"\ntotal {time.perf_counter() - start:.0f}s")
    if args.json:
        print(json.dumps(as_json(results), indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
