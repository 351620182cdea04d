"""``viva judge probe``: can a judge be gamed? Adversarial answers built from a benchmark's own golds.

The patterns are data (:data:`PATTERNS_FILE`, ``probe_patterns.yaml``, documented in its header):
each names what it tests, whether a fair judge must credit it (``expect: credit``: the right answer,
a paraphrase, the right answer with an apposition) or refuse it (``expect: refuse``: the gold
denied, attributed to others, superseded, withdrawn, supposed, asked, swept among candidates,
hidden in code, a URL or noise, the source passage pasted), and two phrasing sets per language:
``dev`` (what the judge's rules were developed on) and ``heldout`` (written before the rules and
never tuned on).

**Items** (:func:`probe_items`): every criterion with gold answers of a benchmark's items (a SQuAD
question, a multiple-choice item's gold option, an imported short answer), with its question, the
item's options and its source passage (``meta.context``) when it has them.

**Answers** (:func:`build_answer`): the item takes phrasing ``index mod len(set)`` of the set; the
placeholders are filled from the item and from the benchmark (:class:`Pool`): ``{G}`` the gold (a
multiple-choice gold: its option's text), ``{G~}`` the gold reworded (:func:`reword`), ``{X}`` and
``{Y}`` wrong alternatives (another option; else other items' golds of the gold's kind: a number for
a number, a capitalised name for a name, another phrase otherwise; never one sharing a word with a
gold), ``{SWEEP:frame}`` the frame said once per candidate (the gold among twelve wrong
alternatives, seeded order), ``{NOISE}`` about 5,000 words of the benchmark's own text with the gold
said once in the middle, ``{PASSAGE}`` the source passage. An item a placeholder cannot be filled
for (no rewording applies, no passage) is left out of that pattern and counted as not applicable.

**Verdicts**: the judge as sessions use it: a multiple-choice item by
:func:`engine.judge.choice.judge_choice`, any other gold by :func:`engine.judge.gold_match.judge_gold`
(offline), or by an LLM judge combined with it (``--judge NAME``: credited when either credits, as
sessions combine them). **Figures**: per pattern and set, n, credited, the credited share, and the
check: ``ok`` when a ``credit`` pattern is credited on at least :data:`CREDIT_MIN` of its items and a
``refuse`` pattern on at most :data:`REFUSE_MAX`, else ``FAIL``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

from engine.text.cjk import IDEOGRAPHS

PATTERNS_FILE = Path(__file__).with_name("probe_patterns.yaml")
"""The documented pattern file shipped with viva."""
CREDIT_MIN = 0.90
"""A ``credit`` pattern passes when the judge credits at least this share of its items."""
REFUSE_MAX = 0.05
"""A ``refuse`` pattern passes when the judge credits at most this share of its items."""
SETS = ("dev", "heldout")
"""The phrasing sets of every pattern."""
SWEEP_SIZE = 12
"""Wrong alternatives a sweep says beside the gold."""
NOISE_WORDS = 5000
"""About how many words of noise ``{NOISE}`` stands for."""

_CJK = re.compile(f"[{IDEOGRAPHS}]")
_IN_URL = re.compile(r"(?:https?://|www\.)\S*$")
_PLACEHOLDER = re.compile(r"\{SWEEP:(?P<frame>.*?\{C\}.*?)\}|\{(?P<name>G~|G|X|Y|NOISE|PASSAGE)\}", re.DOTALL)


class ProbeError(ValueError):
    """A pattern file or a benchmark that cannot be probed (the message says what to fix)."""


@dataclass(frozen=True)
class Pattern:
    """One adversarial pattern: its name, what a fair judge does with it, and its phrasings."""

    name: str
    expect: str  # "credit" or "refuse"
    what: str
    phrasings: dict[str, dict[str, tuple[str, ...]]]  # language -> set -> phrasings


def load_patterns(path: str | Path | None = None) -> list[Pattern]:
    """Read and validate a pattern file (default :data:`PATTERNS_FILE`).

    Raises:
        ProbeError: the file cannot be read or a pattern lacks a name, an expectation or a phrasing set.
    """
    import yaml

    path = Path(path) if path else PATTERNS_FILE
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise ProbeError(f"{path}: cannot read the patterns ({str(exc).splitlines()[0]})") from None
    raw = data.get("patterns") if isinstance(data, dict) else None
    if not isinstance(raw, list) or not raw:
        raise ProbeError(f"{path}: expected a top-level `patterns:` list")
    out, seen = [], set()
    for i, p in enumerate(raw):
        where = f"{path}: patterns[{i}]"
        if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"].strip():
            raise ProbeError(f"{where}: needs a `name`")
        if p["name"] in seen:
            raise ProbeError(f"{where}: the name {p['name']!r} is used twice")
        seen.add(p["name"])
        if p.get("expect") not in ("credit", "refuse"):
            raise ProbeError(f"{where} ({p['name']}): `expect` must be credit or refuse")
        langs: dict[str, dict[str, tuple[str, ...]]] = {}
        for lang in ("en", "zh"):
            if lang not in p:
                continue
            sets = p[lang]
            if not isinstance(sets, dict) or any(
                    not isinstance(sets.get(s), list) or not sets[s] or not all(isinstance(x, str) and x.strip()
                                                                            for x in sets[s]) for s in SETS):
                raise ProbeError(f"{where} ({p['name']}): `{lang}` needs non-empty `dev` and `heldout` lists of phrasings")
            langs[lang] = {s: tuple(sets[s]) for s in SETS}
        if "en" not in langs:
            raise ProbeError(f"{where} ({p['name']}): needs `en` phrasings")
        out.append(Pattern(p["name"], p["expect"], str(p.get("what") or ""), langs))
    return out


# -- items -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProbeItem:
    """One gold question to build adversarial answers for."""

    question: str
    golds: tuple[str, ...]
    options: dict[str, str] | None = None  # a multiple-choice item's options (the gold is a letter)
    passage: str = ""
    label: str = ""

    @property
    def gold_text(self) -> str:
        """The gold as an answer says it: the gold option's text, else the first gold."""
        if self.options and self.golds[0] in self.options:
            return self.options[self.golds[0]]
        return self.golds[0]

    @property
    def lang(self) -> str:
        """``zh`` for a question written in Chinese, else ``en``."""
        return "zh" if len(_CJK.findall(self.question)) > len(self.question) / 4 else "en"


def probe_items(items: Sequence[Any], criteria_of: Callable[[Any], Sequence[Any]]) -> list[ProbeItem]:
    """Every gold criterion of ``items`` (benchmark :class:`engine.bench.model.Item`) as a :class:`ProbeItem`.

    Args:
        items: the benchmark's items.
        criteria_of: an item's current criteria.
    """
    out = []
    for item in items:
        options = dict(item.options) if item.options else None
        passage = str((item.meta or {}).get("context") or "")
        for c in criteria_of(item):
            answers = [a for a in (c.answers or []) if isinstance(a, str) and a.strip()]
            if not answers:
                continue
            if options and answers[0] not in options:
                options_here = None
            else:
                options_here = options
            out.append(ProbeItem((c.asks or item.question or "").strip(), tuple(answers), options_here, passage,
                                 f"{item.benchmark}#{item.id}/{c.cid}"))
    return out


# -- rewording -------------------------------------------------------------------------------------

_UNITS = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen " \
         "seventeen eighteen nineteen".split()
_TENS = "_ _ twenty thirty forty fifty sixty seventy eighty ninety".split()
_MONTHS = "January February March April May June July August September October November December".split()
_ABBREVIATIONS = {
    "U.S.": "United States", "US": "United States", "USA": "United States of America", "UK": "United Kingdom",
    "U.K.": "United Kingdom", "UN": "United Nations", "EU": "European Union", "St.": "Saint", "Mt.": "Mount",
    "Dr.": "Doctor", "Ft.": "Fort", "%": " percent", "km": "kilometres", "kg": "kilograms", "cm": "centimetres",
    "mm": "millimetres", "mph": "miles per hour", "Jr.": "Junior", "Sr.": "Senior", "No.": "number",
    "approx.": "approximately", "Gen.": "General", "Univ.": "University", "Co.": "Company", "Corp.": "Corporation",
    "DNA": "deoxyribonucleic acid", "RNA": "ribonucleic acid", "ATP": "adenosine triphosphate",
}
"""Abbreviations a paraphrase spells out (a general table, not one sample's)."""


def number_words(n: int) -> str:
    """An integer in English words: 42 -> "forty-two", 1864 -> "one thousand eight hundred sixty-four"."""
    if n < 0:
        return "minus " + number_words(-n)
    if n < 20:
        return _UNITS[n]
    if n < 100:
        return _TENS[n // 10] + ("-" + _UNITS[n % 10] if n % 10 else "")
    for size, word in ((10 ** 9, "billion"), (10 ** 6, "million"), (1000, "thousand"), (100, "hundred")):
        if n >= size:
            rest = n % size
            return f"{number_words(n // size)} {word}" + (f" {number_words(rest)}" if rest else "")
    return str(n)


def _year_words(n: int) -> str:
    """A year read in pairs: 1864 -> "eighteen sixty-four", 1905 -> "nineteen oh five", 2000 -> "two thousand"."""
    hi, lo = divmod(n, 100)
    if lo == 0:
        return number_words(n) if hi % 10 == 0 else f"{number_words(hi)} hundred"
    return f"{number_words(hi)} {'oh ' + _UNITS[lo] if lo < 10 else number_words(lo)}"


_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})\s+({'|'.join(_MONTHS)})\s+(\d{{3,4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({'|'.join(_MONTHS)})\s+(\d{{1,2}}),?\s+(\d{{3,4}})\b")
_NUMBER = re.compile(r"(?<![\w.,])(\d{1,3}(?:,\d{3})+|\d+)(?![\w.,]\d)(?![^\W\d_])")
_ORDINAL = re.compile(r"(?<![\w.,])(\d+)(?:st|nd|rd|th)\b")
_ORDINAL_WORDS = {1: "first", 2: "second", 3: "third", 5: "fifth", 8: "eighth", 9: "ninth", 12: "twelfth"}


def _ordinal_words(n: int) -> str:
    """An ordinal in words: 2 -> "second", 21 -> "twenty-first", 19 -> "nineteenth"."""
    if n in _ORDINAL_WORDS:
        return _ORDINAL_WORDS[n]
    if n > 20 and n % 10 and n < 100:
        return f"{_TENS[n // 10]}-{_ordinal_words(n % 10)}"
    word = number_words(n)
    return (word[:-1] + "ieth") if word.endswith("y") else word + "th"


def reword(gold: str, options: dict[str, str] | None = None, letter: str | None = None) -> str | None:
    """The gold reworded, or None when no rewording applies: a date reordered ("27 September 1825" ->
    "September 27, 1825" and back), else an abbreviation spelled out (:data:`_ABBREVIATIONS`), else its
    numbers in words (a year of four digits read in pairs); a multiple-choice gold by its letter
    ("Option B") when none of these applies."""
    m = _DAY_MONTH_YEAR.search(gold)
    if m:
        return gold[:m.start()] + f"{m.group(2)} {m.group(1)}, {m.group(3)}" + gold[m.end():]
    m = _MONTH_DAY_YEAR.search(gold)
    if m:
        return gold[:m.start()] + f"{m.group(2)} {m.group(1)} {m.group(3)}" + gold[m.end():]
    for short, long in _ABBREVIATIONS.items():
        pattern = re.escape(short) if not short[0].isalnum() else rf"(?<![\w.]){re.escape(short)}(?![\w])"
        if re.search(pattern, gold):
            return re.sub(r"\s+", " ", re.sub(pattern, long, gold, count=1)).strip()
    if _NUMBER.search(gold) or _ORDINAL.search(gold):
        def words(mm: re.Match) -> str:
            n = int(mm.group(1).replace(",", ""))
            return _year_words(n) if 1100 <= n <= 2099 and "," not in mm.group(1) else number_words(n)
        # a range is said "X to Y" (a dash between number words reads as one number); two numbers joined by
        # "and" are not reworded (English reads "fifteen hundred and eighteen fifty" as 1518 and 50)
        text = re.sub(r"(?<=\d)\s*[–—-]\s*(?=\d)", " to ", gold)
        if re.search(r"\d\s+and\s+\d", text):
            return None
        text = _ORDINAL.sub(lambda mm: _ordinal_words(int(mm.group(1))), text)
        return _NUMBER.sub(words, text)
    if options and letter:
        return f"Option {letter}"
    return None


# -- the pool of wrong alternatives ----------------------------------------------------------------


def _kind(text: str) -> str:
    if re.search(r"\d", text):
        return "num"
    words = re.findall(r"[^\W\d_]+", text)
    if words and words[0][:1].isupper():
        return "cap"
    return "low"


def _words(text: str) -> set[str]:
    return {w.lower() for w in re.findall(r"[^\W_]+", text) if len(w) > 2} | set(_CJK.findall(text))


def _seed(*parts: Any) -> int:
    return int(hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:12], 16)


@dataclass
class Pool:
    """The benchmark's answers, the source of wrong alternatives and noise."""

    items: list[ProbeItem]
    by_kind: dict[str, list[str]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for it in self.items:
            for text in [it.gold_text] + list((it.options or {}).values()):
                key = text.strip().lower()
                if key and key not in seen and len(text) <= 80:
                    seen.add(key)
                    self.by_kind.setdefault(_kind(text), []).append(text.strip())

    def wrong(self, item: ProbeItem, k: int, salt: str = "") -> list[str]:
        """``k`` wrong alternatives for ``item`` (seeded): other options first, then other items' golds
        of the gold's kind, then any; none shares a word with a gold."""
        golds = [item.gold_text] + list(item.golds)
        banned = set().union(*(_words(g) for g in golds))
        keys = {g.strip().lower() for g in golds}

        def fine(x: str) -> bool:
            return x.strip().lower() not in keys and not (_words(x) & banned) and bool(x.strip())

        out: list[str] = []
        if item.options:
            opts = [v for key, v in item.options.items() if key != item.golds[0] and fine(v)]
            opts.sort(key=lambda v: _seed(item.label, salt, v))
            out += opts
        kind = _kind(item.gold_text)
        for source in (self.by_kind.get(kind, []), [x for kk, xs in self.by_kind.items() if kk != kind for x in xs]):
            ranked = sorted((x for x in source if fine(x) and x not in out), key=lambda v: _seed(item.label, salt, v))
            out += ranked[:max(0, k - len(out))]
            if len(out) >= k:
                break
        return out[:k]

    def noise(self, item: ProbeItem, words: int = NOISE_WORDS) -> list[str]:
        """Sentences of the benchmark's own text (other items' passages, else their questions), about
        ``words`` words, seeded."""
        texts = sorted({it.passage or it.question for it in self.items if it is not item and (it.passage or it.question)},
                       key=lambda t: _seed(item.label, "noise", t))
        out, count = [], 0
        for t in texts * (1 + words // max(1, sum(len(x.split()) for x in texts) or 1)):
            out.append(t)
            count += len(t.split())
            if count >= words:
                break
        return out


def build_answer(phrasing: str, item: ProbeItem, pool: Pool, salt: str = "") -> str | None:
    """The phrasing with its placeholders filled for ``item`` (see the module docstring), or None when
    one cannot be filled (no rewording applies, no passage, no wrong alternative)."""
    gold = item.gold_text
    need = set(re.findall(r"\{(G~|X|Y|NOISE|PASSAGE)\}", phrasing))
    fills: dict[str, str] = {"G": gold}
    if "G~" in need:
        letter = item.golds[0] if item.options else None
        new = reword(gold, item.options, letter)
        if new is None or new == gold:
            return None
        fills["G~"] = new
    wrong = pool.wrong(item, max(2, SWEEP_SIZE), salt)
    if ("X" in need or "Y" in need or "{SWEEP:" in phrasing) and len(wrong) < 2:
        return None
    if wrong:
        fills["X"], fills["Y"] = wrong[0], wrong[1] if len(wrong) > 1 else wrong[0]
    if "PASSAGE" in need:
        if not item.passage or gold.lower() not in item.passage.lower():
            return None
        fills["PASSAGE"] = item.passage
    if "NOISE" in need:
        sentences = pool.noise(item)
        if not sentences:
            return None
        middle = len(sentences) // 2
        said = f"{gold}。" if item.lang == "zh" else f"{gold}."
        fills["NOISE"] = " ".join(sentences[:middle] + [said] + sentences[middle:])

    def fill(m: re.Match) -> str:
        if _IN_URL.search(phrasing[:m.start()]):
            return quote_plus(fills[m.group("name")])  # a URL holds no space: "?q=Robert+Boyle"
        if m.group("frame") is not None:
            candidates = wrong[:SWEEP_SIZE] + [gold]
            candidates.sort(key=lambda c: _seed(item.label, salt, "sweep", c))
            joiner = "" if item.lang == "zh" else " "
            return joiner.join(m.group("frame").replace("{C}", c).strip() for c in candidates).rstrip(", ")
        return fills[m.group("name")]

    return _PLACEHOLDER.sub(fill, phrasing)


# -- the probe -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One adversarial answer to judge."""

    pattern: str
    set: str
    item: ProbeItem
    answer: str


@dataclass
class PatternFigures:
    """One pattern's figures on one phrasing set."""

    pattern: str
    expect: str
    set: str
    n: int
    credited: int
    not_applicable: int

    @property
    def share(self) -> float | None:
        """The share of the pattern's items the judge credited (None with no item)."""
        return self.credited / self.n if self.n else None

    @property
    def ok(self) -> bool | None:
        """Whether the share passes the pattern's check (None with no item)."""
        if not self.n:
            return None
        share = self.credited / self.n
        return share >= CREDIT_MIN if self.expect == "credit" else share <= REFUSE_MAX

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy with the share and the check."""
        return {**asdict(self), "share": self.share, "ok": self.ok}


@dataclass
class ProbeReport:
    """What ``viva judge probe`` prints (``as_dict`` is its ``--json``)."""

    benchmarks: list[str]
    judge: str
    items: int
    figures: list[PatternFigures]
    examples: list[dict[str, Any]]
    what: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return {"benchmarks": self.benchmarks, "judge": self.judge, "items": self.items,
                "figures": [f.as_dict() for f in self.figures], "examples": self.examples, "what": self.what}


def cases(patterns: Sequence[Pattern], items: Sequence[ProbeItem], pool: Pool,
          sets: Sequence[str] = SETS) -> tuple[list[Case], dict[tuple[str, str], int]]:
    """Every (pattern, set, item) answer, and per (pattern, set) how many items it did not apply to."""
    out: list[Case] = []
    skipped: dict[tuple[str, str], int] = {}
    for p in patterns:
        for s in sets:
            for i, item in enumerate(items):
                phrasings = p.phrasings.get(item.lang, p.phrasings["en"])[s]
                answer = build_answer(phrasings[i % len(phrasings)], item, pool, salt=f"{p.name}/{s}")
                if answer is None:
                    skipped[(p.name, s)] = skipped.get((p.name, s), 0) + 1
                    continue
                out.append(Case(p.name, s, item, answer))
    return out, skipped


def offline_verdict(item: ProbeItem, answer: str) -> tuple[bool, str]:
    """The offline judge's verdict as sessions reach it: a multiple-choice item by its chosen option,
    any other by the gold-answer judge on what the answer says besides a pasted passage."""
    if item.options:
        from engine.judge.choice import judge_choice

        v = judge_choice(answer, item.options, item.golds[0])
        return v.met, v.rationale
    from engine.judge.gold import without_paste
    from engine.judge.gold_match import judge_gold

    own, copied = without_paste(answer, item.passage)  # as sessions judge it (judge_gold_criteria)
    g = judge_gold(own, list(item.golds), item.question)
    return g.met, (f"pastes {copied} sentence(s) of the passage: " if copied else "") + g.rationale


Verdicts = Callable[[Sequence[Case]], list[tuple[bool, str]]]


def offline_verdicts(batch: Sequence[Case]) -> list[tuple[bool, str]]:
    """:func:`offline_verdict` for every case."""
    return [offline_verdict(c.item, c.answer) for c in batch]


def llm_verdicts(llm: Any) -> Verdicts:
    """Verdicts of an LLM judge (:class:`engine.judge.check.LLMCheckJudge`) as sessions combine it with
    the lexical rule: a multiple-choice item by its chosen option, any other gold credited when the
    LLM or :func:`engine.judge.gold_match.judge_gold` credits it."""
    from engine.judge.check import CheckRow

    def verdicts(batch: Sequence[Case]) -> list[tuple[bool, str]]:
        lexical = offline_verdicts(batch)
        gold = [i for i, c in enumerate(batch) if not c.item.options]
        rows = [CheckRow("gold", batch[i].item.question, batch[i].answer, False, golds=batch[i].item.golds, line=i)
                for i in gold]
        out = list(lexical)
        for i, v in zip(gold, llm(rows) if rows else [], strict=True):
            out[i] = (v.met or lexical[i][0], f"LLM: {v.rationale}; lexical: {lexical[i][1]}")
        return out

    return verdicts


def run_probe(items: Sequence[ProbeItem], *, benchmarks: Sequence[str] = (), judge_name: str = "offline",
              verdicts_of: Verdicts = offline_verdicts, patterns: Sequence[Pattern] | None = None,
              sets: Sequence[str] = SETS, examples: int = 0) -> ProbeReport:
    """Build every pattern's answers for ``items`` and report the share the judge credits.

    Args:
        items: from :func:`probe_items`.
        benchmarks: their benchmarks' names (for the report).
        judge_name: the judge's name in the report.
        verdicts_of: the judge (default: the offline judges).
        patterns: default :func:`load_patterns`.
        sets: the phrasing sets to run.
        examples: list this many failing cases per pattern and set (the answer and the rationale).

    Raises:
        ProbeError: no item has a gold answer.
    """
    if not items:
        raise ProbeError("no item with a gold answer to probe (import a benchmark with golds: "
                         "`viva bench import squad|medqa|jsonl PATH`)")
    patterns = list(patterns) if patterns is not None else load_patterns()
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        raise ProbeError(f"unknown phrasing set {unknown[0]!r} (sets: {', '.join(SETS)})")
    pool = Pool(list(items))
    batch, skipped = cases(patterns, items, pool, sets)
    verdicts = verdicts_of(batch)
    figures: list[PatternFigures] = []
    listed: list[dict[str, Any]] = []
    for p in patterns:
        for s in sets:
            mine = [(c, v) for c, v in zip(batch, verdicts, strict=True) if c.pattern == p.name and c.set == s]
            credited = sum(v[0] for _, v in mine)
            figures.append(PatternFigures(p.name, p.expect, s, len(mine), credited, skipped.get((p.name, s), 0)))
            wrong = [(c, v) for c, v in mine if v[0] != (p.expect == "credit")]
            for c, v in wrong[:examples]:
                listed.append({"pattern": p.name, "set": s, "item": c.item.label, "question": c.item.question,
                               "golds": list(c.item.golds), "answer": c.answer, "credited": v[0], "rationale": v[1]})
    return ProbeReport(list(benchmarks), judge_name, len(items), figures, listed, {p.name: p.what for p in patterns})


def render_text(report: ProbeReport) -> str:
    """The plain-text report (the command line prints it)."""
    lines = [f"judge probe: {report.items} gold questions of {', '.join(report.benchmarks) or 'the given items'}, "
             f"judge {report.judge}",
             f"credited share per pattern; a fair judge credits `credit` patterns on >= {CREDIT_MIN:.0%} of items "
             f"and `refuse` patterns on <= {REFUSE_MAX:.0%}",
             f"{'pattern':14} {'expect':7} {'set':8} {'n':>5} {'credited':>8} {'share':>7} {'n/a':>5}  check  what"]
    for f in report.figures:
        share = "—" if f.share is None else f"{f.share:.3f}"
        check = "—" if f.ok is None else ("ok" if f.ok else "FAIL")
        lines.append(f"{f.pattern:14} {f.expect:7} {f.set:8} {f.n:>5} {f.credited:>8} {share:>7} {f.not_applicable:>5}"
                     f"  {check:5}  {report.what.get(f.pattern, '')}")
    lines.append("n/a: items the pattern could not be built for (no rewording applies, no source passage)")
    for e in report.examples:
        lines.append(f"- {e['pattern']} ({e['set']}) {e['item']}: {'credited' if e['credited'] else 'refused'}")
        lines.append(f"    question: {_clip(e['question'])}")
        lines.append(f"    golds: {_clip(', '.join(e['golds']))}")
        lines.append(f"    answer: {_clip(e['answer'])}")
        lines.append(f"    judge: {_clip(e['rationale'])}")
    return "\n".join(lines)


def _clip(text: str, limit: int = 200) -> str:
    text = re.sub(r"\s+", " ", text or "").strip()
    return text if len(text) <= limit else text[: limit - 3] + "..."
