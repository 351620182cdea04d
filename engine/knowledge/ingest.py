"""Reading source files into documents, reporting bad input by path (and line) instead of failing.

Supported: ``.txt``, ``.md``, ``.rst``, ``.html``/``.htm`` (one document per file; reStructuredText and HTML read as
Markdown: :mod:`engine.knowledge.rst`, :mod:`engine.knowledge.html`), ``.json`` or
``.yaml``/``.yml`` (read as the JSON they hold) (a list of records, one record,
or SQuAD-style ``data[].paragraphs[].context`` with one document per context), ``.jsonl``
(one document per line) and ``.csv`` (one document per row; "#" lines above the header are a preamble, not
rows, and a row's line number counts them). A record's text is every string
field (nested ones too, id-like fields skipped) or the one field named by ``text_field`` /
``text_column``; a record of fields with a key and short values (a table's row) is read as sentences
naming each column and the key (:func:`fields_text`: "The adult dose of Corvalenne is 25 mg orally.").
"""

from __future__ import annotations

import codecs
import csv
import io
import itertools
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.knowledge.html import html_as_markdown
from engine.knowledge.rst import rst_as_markdown
from engine.safeload import JSONDepthError, loads_json
from engine.text.normalize import normalize_text

SUPPORTED_SUFFIXES = (".txt", ".md", ".rst", ".html", ".htm", ".json", ".jsonl", ".csv", ".yaml", ".yml")
_ID_KEY = re.compile(r"(?:^|_)(?:id|ids|uuid|url|urls|href)$", re.IGNORECASE)
_TITLE_KEYS = ("title", "name", "heading", "subject")
_SECTION_KEYS = ("section", "topic", "chapter", "part")
"""A record's section in words ("section": "Swell limits"): what its fields are about when no title names it (a
section's number, "section": "4.2", is no key: :data:`_NUMBERING`)."""
_SOURCE_KEY = re.compile(r"^(?:source[_ ]?)?(?:document|doc)(?:[_ ]?(?:title|name))?$", re.IGNORECASE)
"""A field naming the document a record belongs to ("document": "Ferry handbook v4", the same on every record):
where it stands, like its number, not what it says."""
_TYPE_KEY = re.compile(r"^(?:record|doc|document|entry|item|row)?[_ ]?(?:type|kind)$", re.IGNORECASE)
"""A field that tags a record's kind for a program ("record_type": "limit", "type": "site"): no key, no fact."""
_NUMBERING_KEY = re.compile(r"^(?:clause|section|article|paragraph|para|rule|regulation|item|no|number)$", re.IGNORECASE)
_NUMBERING = re.compile(r"[A-Za-z]?\d{1,3}(?:\.\d{1,3}){0,3}(?:\s?\([a-z0-9]{1,3}\))?[A-Za-z]?")
"""A record's own number in its document ("clause": "4.3", "section": "12(a)"): where it stands, not what it says."""
_SNIFF_BYTES = 8192


@dataclass(frozen=True)
class SourceDocument:
    """A document read from a source file, before chunking.

    Attributes:
        path: unique key of the document in its knowledge base: the resolved file path, plus
            ``#...`` naming the record for JSON/JSONL/CSV sources.
        title: a human-readable title (a heading, the record's title field, the file name).
        text: the normalised text.
        meta: where it came from (format, file, line or row, SQuAD article and paragraph index).
    """

    path: str
    title: str
    text: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class InputIssue:
    """Bad input that was skipped: a file (``line`` None) or one record of a file."""

    path: str
    message: str
    line: int | None = None

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


@dataclass
class ReadReport:
    """Files read, files skipped with a reason, and records skipped inside readable files."""

    files_read: int = 0
    files_ignored: int = 0
    bad_files: list[InputIssue] = field(default_factory=list)
    bad_records: list[InputIssue] = field(default_factory=list)


VIVA_FILES = frozenset({"viva.yaml", "viva.yml", "topics.yaml", "topics.yml"})
"""viva's own files (its configuration, a bench's topic list), which a folder of sources may hold beside its documents:
ignored when a folder is read (read when named explicitly)."""


def iter_source_files(paths: Iterable[str | Path], report: ReadReport) -> Iterator[Path]:
    """Expand files and folders (recursively, hidden entries skipped) into supported files.

    A file named explicitly with an unsupported suffix, or a path that does not exist, is a bad
    file; unsupported files found inside folders are only counted as ignored, as are viva's own files there
    (:data:`VIVA_FILES`: viva.yaml, topics.yaml).
    """
    seen: set[Path] = set()
    for raw in paths:
        path = Path(raw).expanduser()
        if not path.exists():
            report.bad_files.append(InputIssue(str(raw), "no such file or folder"))
            continue
        if path.is_dir():
            candidates = sorted(
                p for p in path.rglob("*")
                if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
            )
            for p in candidates:
                if p.name.lower() in VIVA_FILES:
                    report.files_ignored += 1  # viva's own configuration or topic list, not a source
                    continue
                if p.suffix.lower() in SUPPORTED_SUFFIXES:
                    resolved = p.resolve()
                    if resolved not in seen:
                        seen.add(resolved)
                        yield resolved
                else:
                    report.files_ignored += 1
        elif path.suffix.lower() in SUPPORTED_SUFFIXES:
            resolved = path.resolve()
            if resolved not in seen:
                seen.add(resolved)
                yield resolved
        else:
            report.bad_files.append(InputIssue(
                str(path), f"unsupported file type {path.suffix or '(none)'!r}; "
                f"expected one of {', '.join(SUPPORTED_SUFFIXES)}"))


def _read_utf8(path: Path, report: ReadReport) -> str | None:
    from engine.safeload import InputError, read_input

    try:
        data = read_input(path)  # a regular file only, at most VIVA_MAX_INPUT_MB
    except InputError as exc:
        report.bad_files.append(InputIssue(str(path), exc.reason))
        return None
    except OSError as exc:
        report.bad_files.append(InputIssue(str(path), f"cannot read ({exc.strerror or exc})"))
        return None
    if b"\x00" in data[:_SNIFF_BYTES]:
        report.bad_files.append(InputIssue(str(path), "binary file (NUL bytes), not text"))
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        report.bad_files.append(InputIssue(
            str(path), f"not UTF-8 (invalid byte 0x{data[exc.start]:02x} at line {line}, "
            f"byte {exc.start}); convert it to UTF-8"))
        return None
    return normalize_text(text)


def _strings(value: Any, key: str | None = None) -> Iterator[str]:
    """Every non-empty string inside a JSON value, depth first, skipping id-like keys."""
    if key is not None and _ID_KEY.search(key):
        return
    if isinstance(value, str):
        if value.strip():
            yield value.strip()
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, str(k))
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, None)


def _record_title(record: Any) -> str | None:
    if isinstance(record, dict):
        for key in _TITLE_KEYS:
            value = record.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:200]
        for key in _SECTION_KEYS:  # "section": "Swell limits" (not "section": "4.2")
            value = record.get(key)
            if isinstance(value, str) and value.strip() and not _NUMBERING.fullmatch(value.strip()) \
                    and _is_value(value) and len(value.split()) <= 8:
                return value.strip()[:200]
    return None


def _record_text(record: Any, text_field: str | None) -> str | None:
    """The text of a record, or None when it has none (missing field, no strings); a record of fields
    with a key and short values is read as sentences (:func:`fields_text`)."""
    if text_field is not None:
        if not isinstance(record, dict) or text_field not in record:
            return None
        parts = list(_strings(record[text_field]))
    else:
        if isinstance(record, dict) and (faq := _question_answer(record)) is not None:
            return faq
        if isinstance(record, dict) and (glossary := _glossary_text(record)) is not None:
            return glossary
        fields = fields_text(record) if isinstance(record, dict) else None
        if fields is not None:
            return fields
        parts = list(_strings(record))
    text = normalize_text("\n\n".join(parts)).strip()
    return text or None


_QUESTION_KEYS = ("question", "q", "query")
_ANSWER_KEYS = ("answer", "a", "response", "reply")


def _question_answer(record: dict[Any, Any]) -> str | None:
    """An FAQ's record ({"question": ..., "answer": ..., "category": ...}) as a question and its answer ("Q: Who can
    volunteer ...? A: Anyone aged 16 ..."): the question is what the answer is about (a label, as an FAQ written in
    Markdown gives it), not a sentence of fact; None when the record has no question and answer of text."""
    keys = {str(k).strip().lower(): k for k in record}
    q = next((record[keys[k]] for k in _QUESTION_KEYS if k in keys), None)
    a = next((record[keys[k]] for k in _ANSWER_KEYS if k in keys), None)
    if not isinstance(q, str) or not isinstance(a, str) or not q.strip() or not a.strip():
        return None
    q = " ".join(q.split())
    return normalize_text(f"Q: {q if q.endswith('?') else q + '?'} A: {' '.join(a.split())}").strip()


def _glossary_text(record: dict[Any, Any]) -> str | None:
    """A JSON object that maps terms to their definitions ({"DMA": "District metered area: ...", "Make-up water":
    "Treated water added ..."}: three entries or more, every key a short term and every value a sentence) as a
    glossary, a paragraph a term, each said of its term ("Make-up water is treated water added ...", "Heat
    Interface Unit (HIU) is the wall-mounted unit ..." for an abbreviation spelled out before a colon; a definition
    that opens a sentence of its own stays "Term: Definition ..."). Before, its values were read without their
    terms. None for any other object."""
    if len(record) < 3:
        return None
    entries = []
    for k, v in record.items():
        if not isinstance(k, str) or not isinstance(v, str) or _ID_KEY.search(k) or len(k.split()) > 6 or _is_value(v):
            return None
        term, rest = " ".join(k.split()), " ".join(v.split())
        spelled = re.match(r"^([^:.]{2,60}):\s+(\S.*)$", rest)
        if spelled and re.fullmatch(r"[A-Z][A-Z0-9&-]{1,7}s?", term):  # "HIU": "Heat Interface Unit: the unit ..."
            term, rest = f"{spelled.group(1).strip()} ({term})", spelled.group(2)
        if re.match(r"(?:A|An|The)\s|[A-Z][a-z]+\s+[a-z]", rest):
            rest = rest[0].lower() + rest[1:]  # "Make-up water is treated water ...", "... is the temperature of ..."
        last = term.split("(")[0].split()[-1].lower()
        verb = "are" if last.endswith("s") and not last.endswith(("ss", "us", "is")) and last.isalpha() else "is"
        entries.append(f"{term} {verb} {rest}" if rest[:1].islower() else f"{term}: {rest}")
    return normalize_text("\n\n".join(entries)).strip()


def _text_title(path: Path, text: str) -> str:
    if path.suffix.lower() in (".md", ".rst", ".html", ".htm"):  # (.rst, .html: read as Markdown)
        m = re.search(r"^#{1,6}\s+(.+?)\s*#*\s*$", text, re.MULTILINE)
        if m:
            return m.group(1).strip()
    first = text.strip().split("\n", 1)[0].strip()
    if first and len(first) <= 80 and not first.endswith((".", "。", ":", ",")):
        return first.lstrip("# ").strip()
    return path.stem


def _is_squad(data: Any) -> bool:
    return (
        isinstance(data, dict)
        and isinstance(data.get("data"), list)
        and any(isinstance(a, dict) and isinstance(a.get("paragraphs"), list) for a in data["data"])
    )


def _read_squad(path: Path, data: dict, report: ReadReport) -> Iterator[SourceDocument]:
    for ai, article in enumerate(data["data"]):
        if not isinstance(article, dict):
            continue
        title = str(article.get("title") or f"article {ai + 1}").replace("_", " ")
        for pi, paragraph in enumerate(article.get("paragraphs") or []):
            context = paragraph.get("context") if isinstance(paragraph, dict) else None
            if not isinstance(context, str) or not context.strip():
                report.bad_records.append(InputIssue(
                    str(path), f"data[{ai}].paragraphs[{pi}] has no context string"))
                continue
            yield SourceDocument(
                path=f"{path}#data[{ai}].paragraphs[{pi}]",
                title=f"{title} ¶{pi + 1}",
                text=normalize_text(context).strip(),
                meta={"format": "squad", "file": str(path), "article": title, "article_index": ai,
                      "paragraph": pi, "questions": len(paragraph.get("qas") or [])},
            )


def _read_json(path: Path, text: str, text_field: str | None, report: ReadReport) -> Iterator[SourceDocument]:
    try:
        data = loads_json(text)  # nesting depth limited (engine.safeload)
    except JSONDepthError as exc:
        report.bad_files.append(InputIssue(str(path), str(exc), line=exc.line))
        return
    except json.JSONDecodeError as exc:
        report.bad_files.append(InputIssue(str(path), f"malformed JSON: {exc.msg} (column {exc.colno})",
                                           line=exc.lineno))
        return
    yield from _read_data(path, data, text_field, report, "json")


def _plain(value: Any) -> Any:
    """A YAML value as JSON would hold it: a date or time as its ISO text, a key as text (iteratively: YAML
    nesting is capped, but no recursion is needed)."""
    root: list[Any] = [value]
    stack: list[tuple[Any, Any, Any]] = [(root, 0, value)]
    while stack:
        parent, key, v = stack.pop()
        if isinstance(v, dict):
            new: Any = {}
            parent[key] = new
            for k in v:
                new[str(k) if not isinstance(k, str) else k] = None  # the keys in their order
            stack.extend((new, str(k) if not isinstance(k, str) else k, item) for k, item in v.items())
        elif isinstance(v, list):
            new = [None] * len(v)
            parent[key] = new
            stack.extend((new, j, item) for j, item in enumerate(v))
        elif hasattr(v, "isoformat"):
            parent[key] = v.isoformat()
        elif isinstance(v, bytes):
            parent[key] = None  # binary scalars carry no text to examine
        else:
            parent[key] = v
    return root[0]


def _read_yaml(path: Path, text: str, text_field: str | None, report: ReadReport) -> Iterator[SourceDocument]:
    """A YAML file read as its JSON equivalent (one document; aliases, depth and size capped by
    :func:`engine.safeload.load_yaml`)."""
    import yaml

    from engine.safeload import load_yaml

    try:
        data = load_yaml(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        report.bad_files.append(InputIssue(str(path), f"malformed YAML: {problem}",
                                           line=mark.line + 1 if mark is not None else None))
        return
    if data is None or isinstance(data, str | int | float | bool):
        body = "" if data is None else str(data).strip()
        if body:
            yield SourceDocument(str(path), path.stem, body, {"format": "yaml", "file": str(path)})
        else:
            report.bad_records.append(InputIssue(str(path), "empty YAML document"))
        return
    yield from _read_data(path, _plain(data), text_field, report, "yaml")


def _read_data(path: Path, data: Any, text_field: str | None, report: ReadReport, fmt: str) -> Iterator[SourceDocument]:
    """The documents of a parsed JSON (or YAML) value."""
    if text_field is None and _is_squad(data):
        yield from _read_squad(path, data, report)
        return
    inner = _records_field(data) if text_field is None else None
    if inner is not None:  # {"council": ..., "rules": [{...}, {...}]}: the object's fields, then each record
        head = {k: v for k, v in data.items() if k != inner}
        if len(head) == 1 and isinstance(next(iter(head.values())), dict):
            head = next(iter(head.values()))  # {"scheme": {...}, "rules": [...]}: the scheme's own fields
        parts = _head_records(head)
        if parts is not None:  # {"metadata": {...}, "fees": {...}, "boats": [...]}: each a record
            for at, (field, title, body) in enumerate(parts):
                yield SourceDocument(str(path) if at == 0 else f"{path}#{field}", title or path.stem, body,
                                     {"format": fmt, "file": str(path), "field": field})
        body = _record_text(head, None) if head and parts is None else None
        if body is not None:
            yield SourceDocument(str(path), _record_title(head) or path.stem, body, {"format": fmt, "file": str(path)})
        for i, record in enumerate(data[inner]):
            body = _record_text(record, None)
            if body is None:
                report.bad_records.append(InputIssue(str(path), f"record {inner}[{i}]: no text in any string field"))
                continue
            yield SourceDocument(f"{path}#{inner}[{i}]", _record_title(record) or f"{path.stem} {inner} #{i + 1}", body,
                                 {"format": fmt, "file": str(path), "record": i, "field": inner})
        return
    parts = _head_records(data) if text_field is None and isinstance(data, dict) else None
    if parts is not None:  # {"document": {...}, "general_limits": {...}, "tank_wagons": {...}}: each object a record
        for at, (field, title, body) in enumerate(parts):
            yield SourceDocument(str(path) if at == 0 else f"{path}#{field}", title or path.stem, body,
                                 {"format": fmt, "file": str(path), "field": field})
        return
    records = data if isinstance(data, list) else [data]
    for i, record in enumerate(records):
        body = _record_text(record, text_field)
        if body is None:
            why = f"no field {text_field!r}" if text_field else "no text in any string field"
            report.bad_records.append(InputIssue(str(path), f"record [{i}]: {why}"))
            continue
        key = f"{path}#{i}" if isinstance(data, list) else str(path)
        yield SourceDocument(key, _record_title(record) or f"{path.stem} #{i + 1}", body,
                             {"format": fmt, "file": str(path), "record": i})


_GENERIC_PART_NAMES = frozenset("metadata meta info information details header general document about".split())


def _head_records(head: dict[Any, Any]) -> list[tuple[str, str, str]] | None:
    """The fields beside a JSON object's records when they are several objects that cannot be read as one record
    ({"metadata": {"title": ..., "licence_order": ..., "notes": [...]}, "fees": {...}}): each object a record of
    its own, keyed by its title or else by its field's name ("Fees"; a generic name,
    "metadata", by the title of the first object that has one), the plain values beside them one more:
    [(its field, its title, its text)]. None when ``head`` reads as one record, or holds fewer than two objects."""
    if not isinstance(head, dict) or fields_text(head) is not None:
        return None
    objects = [(k, v) for k, v in head.items() if isinstance(k, str) and isinstance(v, dict) and v]
    if len(objects) < 2:
        return None
    title = next((t for _, v in objects if (t := _record_title(v))), None)
    out: list[tuple[str, str, str]] = []
    own = {k: v for k, v in head.items() if not (isinstance(v, dict) and v)}
    for k, v in ([("", own)] if own else []) + objects:
        name = _field_words(k) if k else ""
        name = title if (not name or name.lower() in _GENERIC_PART_NAMES) and title else name
        name = name[:1].upper() + name[1:]
        body = fields_text(v, name=name) if name else None
        if body is None:
            body = _record_text(v, None)
        if body:
            out.append((k or "fields", _record_title(v) or name, body))
    return out or None


def _records_field(data: Any) -> str | None:
    """The field of a JSON object that holds its records, when it has exactly one list of two or more objects
    (a council's rules under "rules", a catalogue's "items"; its other fields plain values or objects: a
    scheme's metadata under "scheme"): those records are read one by one, as a top-level list is, and the
    object's own fields as a record of their own (a lone metadata object's fields). None for any other shape
    (read whole, as before)."""
    if not isinstance(data, dict):
        return None
    lists = [k for k, v in data.items() if isinstance(v, list)]
    if len(lists) != 1:
        return None
    items = data[lists[0]]
    if len(items) < 2 or not all(isinstance(r, dict) for r in items):
        return None
    return lists[0]


def _read_jsonl(path: Path, lines: Iterable[str], text_field: str | None, report: ReadReport
                ) -> Iterator[SourceDocument]:
    for lineno, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = loads_json(line)
        except JSONDepthError as exc:
            report.bad_records.append(InputIssue(str(path), str(exc), line=lineno))
            continue
        except json.JSONDecodeError as exc:
            report.bad_records.append(InputIssue(
                str(path), f"malformed JSON line: {exc.msg} (column {exc.colno})", line=lineno))
            continue
        body = _record_text(record, text_field)
        if body is None:
            why = f"no field {text_field!r}" if text_field else "no text in any string field"
            report.bad_records.append(InputIssue(str(path), why, line=lineno))
            continue
        yield SourceDocument(f"{path}#L{lineno}", _record_title(record) or f"{path.stem} line {lineno}", body,
                             {"format": "jsonl", "file": str(path), "line": lineno})


def _is_value(text: str) -> bool:
    """A field's value that is no sentence of its own ("beta blocker", "25 mg orally", "every 12 hours", "Oak
    case with mahogany crossbanding; painted iron dial; brass eight-day movement"): at most sixteen words, not
    closed by a sentence's stop, or under three words."""
    n = len(text.split())
    return n < 3 or (n <= 16 and not text.rstrip().endswith((".", "!", "?", "。")))


_PARTICIPLE_LED = re.compile(r"^[A-Z][a-z]+ed\s+(?:by|from|at|to|in|on|for|with|under|after)\b")
"""A record's sentence without a subject, opening with a participle ("Donated by Hollis & Sons ...",
"Transferred from Helmsby Town Council in 1979"): it is said of the record's key."""

_LEADING_WORDS = frozenset("""every each once twice all no none any some only up at about approximately around between
from within until before after not daily weekly monthly yearly annually hourly nightly weekdays weekends""".split())
"""Words that open a value but no name ("Every 20 minutes", "Once daily"): lowered inside a sentence."""


def _field_words(name: str) -> str:
    """A column's name as words: "max_daily_dose" -> "max daily dose", "Adult Dose" -> "adult dose",
    "delayMinutes" -> "delay minutes"; an abbreviation keeps its capitals ("QTc", "BMI")."""
    out = []
    name = re.sub(r"(?<=[a-z])(?=[A-Z][a-z])", " ", name)  # camelCase: "percentOfSingleFare" -> "percent of single fare"
    for w in re.sub(r"[_\-]+", " ", name).split():
        out.append(w if (len(w) > 1 and any(ch.isupper() for ch in w[1:])) else w.lower())
    return " ".join(out)


def fields_text(record: dict[Any, Any], name: str | None = None) -> str | None:
    """A record of fields (a CSV row, a flat JSON object) as text a reader can examine, or None when it is
    not one: its key (a title, name, heading or subject field, else its first field when that is a short
    value), then each other field, in order: a sentence ("... is a noble gas.") as it is, in a paragraph of
    its own, a short value as a sentence naming its field and the key ("The adult dose of Corvalenne is 25 mg
    orally."), consecutive ones in one paragraph. Id-like fields and JSON's numbers and flags are left out
    (a CSV cell is text: its numbers are kept), but a number under a field that names its unit or a limit
    (:func:`_measured_field`: "max_speed_kmh": 100, "review_interval_months": 24). A cell's value without its
    column's name says nothing (a formulary's "100 mg" of which dose?), so the name is kept. None (read as
    before: every string) when the record has no key, no short value besides it, or a nested value. A record
    without a title field is keyed by its section in words ("section": "Swell limits"), else by ``name`` when
    given (the field an object stands under: "Fees"), else by its first field; a field naming the
    document it belongs to ("document": ...) is no key and no fact. A list of objects is said object by
    object under its field ("Limits of Swell limits: swell 1.6-2.5 metres, action Sail with ...") when one of
    them holds a clause or all of them together would make a long sentence."""
    cells: list[tuple[str, str]] = []
    listed: list[tuple[str, list[str]]] = []  # a field holding a list of sentences, each said under the field
    amount = _quantity(record)  # the record's own value and unit ("value": 180, "unit": "litres")
    amounts: list[tuple[str, str]] = []  # a field holding a value and its unit ("reduced_rate": {...})
    pairs = _unit_pairs(record)  # "retention_value": 7 beside "retention_unit": "days": "retention", "7 days"
    keyed = any(isinstance(k, str) and isinstance(v, str) and v.strip() and (k.strip().lower() in _TITLE_KEYS or (
        k.strip().lower() in _SECTION_KEYS and not _NUMBERING.fullmatch(v.strip()))) for k, v in record.items())
    for k, v in record.items():
        if amount and k in amount[1]:
            continue
        if k in pairs:
            if pairs[k]:
                cells.append(pairs[k])
            continue
        if keyed and isinstance(k, str) and _SOURCE_KEY.match(k) and isinstance(v, str):
            continue  # the document a titled record belongs to ("document": "Ferry handbook v4"): no key, no fact
        if isinstance(v, list) and isinstance(k, str) and not _ID_KEY.search(k) and (each := _objects_words(v)):
            listed.append((k, each))  # "limits": [{"swell_metres": "1.6-2.5", "action": "Sail with ..."}, ...]
            continue
        if isinstance(v, dict) and isinstance(k, str) and (inner := _quantity(v)):
            amounts.append((k, _quantity_words(v, inner)))
            continue
        if isinstance(v, dict | list) and isinstance(k, str) and not _ID_KEY.search(k) and (said := _nested_words(v)):
            amounts.append((k, said))  # "dimensions": {"height_cm": 221.0, ...}; "exhibitions": [{...}, ...]
            continue
        if isinstance(v, dict | list) and not v:
            continue  # an empty list or object ("conditions": []) says nothing
        if isinstance(v, list) and isinstance(k, str) and not _ID_KEY.search(k) and \
                all(isinstance(x, str) for x in v) and any(x.strip() for x in v):
            listed.append((k, [" ".join(x.split()) for x in v if x.strip()]))  # "conditions": ["Passenger held ...", ...]
            continue
        if isinstance(v, dict | list):
            return None
        if isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) and not _ID_KEY.search(k) \
                and _measured_field(k, v):
            cells.append((k, _number_text(v)))  # "max_train_length_m": 740 is a limit, not a count
            continue
        if not isinstance(k, str) or _ID_KEY.search(k) or not isinstance(v, str):
            continue  # a JSON number or flag is the record's metadata (a count, a rank), as before, unless its field
            # names its unit or a limit (above); a CSV cell is always a string: a table's numbers are its data
        if _TYPE_KEY.match(k) or (_NUMBERING_KEY.match(k) and _NUMBERING.fullmatch(v.strip())):
            continue  # the kind of record ("record_type": "limit") and its number ("clause": "4.3") name no fact
        text = " ".join(str(v).split())
        if text:
            cells.append((k, text))
    if not cells and not (name and (amount or amounts or listed)):
        return None
    named = next((i for i, (k, _) in enumerate(cells) if k.strip().lower() in _TITLE_KEYS), None)
    if named is None:  # "section": "Swell limits" names what the record's fields are about
        named = next((i for i, (k, v) in enumerate(cells) if k.strip().lower() in _SECTION_KEYS
                      and _is_value(v) and len(v.split()) <= 8), None)
    if named is None and name:  # an object under a field of its document's ("fees": {...})
        cells.insert(0, ("", name))
        named = 0
    at = named if named is not None else 0
    key = cells[at][1]
    when = _date_phrase(cells[at][0], key)
    if not _is_value(key) or (_looks_numeric(key) and when is None) or (named is None and len(key.split()) > 6):
        return None
    rest = cells[:at] + cells[at + 1:]
    if not any(_is_value(v) for _, v in rest) and not amount and not amounts and not listed:
        return None
    if when is not None:  # a timeline's row: its sentences said with their date, its other fields of that date
        key = when[1]
    paragraphs: list[list[str]] = []
    if amount:  # what the record measures, said of its key: "The figure for General waste bin is 180 litres."
        named = amount[1][0]
        what = "figure for" if named.lower() in _GENERIC_VALUE_KEYS else f"{_field_words(named)} of"
        paragraphs.append([f"The {what} {key} is {amount[0]} {' '.join(str(record[amount[1][1]]).split())}."])
    for k, said in amounts:
        field = _field_phrase(_field_words(k))
        paragraphs.append([f"The {field} of {key} {'are' if _plural(field) else 'is'} {said}."])
    run = False
    for k, v in rest:
        if not _is_value(v):
            if when is not None:  # "In 1893, construction began on the North Mole ..."
                first = v.split(" ", 2)
                lower = first[0] in ("The", "A", "An") or (len(first) > 1 and first[0][1:].islower()
                                                           and not first[1][:1].isupper())
                v = f"{when[0]}, {v[0].lower() + v[1:] if lower else v}"
            elif _PARTICIPLE_LED.match(v):  # "Bequeathed by Miss Edith Carrow in 1987." said of the record's key
                v = f"{key} was {v[0].lower()}{v[1:]}"
            paragraphs.append([v])
            run = False
            continue
        field = _field_words(k)
        field, v = _unit_from_field(field, v)
        field = _field_phrase(field)
        verb = "are" if _plural(field) else "is"
        first, _, more = v.partition(" ")
        if first.lower() in _LEADING_WORDS and first[1:].islower():  # "Every 20 minutes" inside a sentence
            v = f"{first.lower()} {more}".strip()
        sentence = (f"The {field} of {key} {verb} {v.rstrip(' ,;:')}." if when is None
                    else f"The {field} {when[2]} {key} {verb} {v.rstrip(' ,;:')}.")
        if run:
            paragraphs[-1].append(sentence)
        else:
            paragraphs.append([sentence])
        run = True
    for k, items in listed:  # "Conditions of Who can claim: Passenger held a valid ticket ..."
        field = _field_phrase(_field_words(k))
        said = f"{field[:1].upper()}{field[1:]} of {key}"
        if len(said.split()) <= 3:  # "The conditions of Boarding: ...": not a run-in title of three words, dropped
            said = f"The {field} of {key}"
        for item in items:
            paragraphs.append([f"{said}: {item if item[-1:] in '.!?' else item + '.'}"])
    return normalize_text("\n\n".join([key] + [" ".join(p) for p in paragraphs])).strip()


_MONTH_NAMES = ("January February March April May June July August September October November December").split()
_DATE_FIELDS = frozenset({"date", "year", "when", "day", "period"})


_LIMIT_WORDS = frozenset("max min maximum minimum limit threshold interval level rate dose cap ceiling floor "
                         "percent percentage pct ratio".split())


def _measured_field(field: str, value: int | float) -> bool:
    """A JSON number that is data, not metadata: its field names its unit ("max_train_length_m", "reference_temperature_c",
    "review_interval_months") or a limit ("min_brake_percentage", "max_dangerous_goods_wagons_per_train")."""
    words = _field_words(field).lower().split()
    if any(w in _LIMIT_WORDS for w in words):
        return True
    number = _number_text(value)
    return _unit_from_field(_field_words(field), number) != (_field_words(field), number)


def _number_text(value: int | float) -> str:
    """A JSON number as a reader writes it ("22.5", "740", "1e-05" as "0.00001")."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = repr(value)
    return f"{value:f}".rstrip("0").rstrip(".") if "e" in text.lower() else text


def _date_phrase(field: str, value: str) -> tuple[str, str, str] | None:
    """A record's key that is a date (a field named date, year, when ..., or a value "1887-05-14", "1902",
    "March 1911", "14 May 1887"): (the phrase that opens a sentence of that date, "On 14 May 1887" / "In 1902",
    the date as words, the preposition before it), or None."""
    v = " ".join(value.split())
    iso = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2})", v)
    if iso and 1 <= int(iso.group(2)) <= 12 and 1 <= int(iso.group(3)) <= 31:
        words = f"{int(iso.group(3))} {_MONTH_NAMES[int(iso.group(2)) - 1]} {iso.group(1)}"
        return f"On {words}", words, "on"
    if re.fullmatch(r"\d{1,2}(?:st|nd|rd|th)?\s+(?:" + "|".join(_MONTH_NAMES) + r")\s+\d{4}", v):
        return f"On {v}", v, "on"
    if re.fullmatch(r"(?:(?:" + "|".join(_MONTH_NAMES) + r")\s+)?\d{4}s?", v) and (
            field.strip().lower() in _DATE_FIELDS or not v.isdigit() or 1000 <= int(v[:4]) <= 2100):
        return f"In {v}", v, "in"
    return None


_FIELD_UNITS = {"pct": "%", "percent": "%", "gbp": "GBP", "usd": "USD", "eur": "EUR", "c": "°C", "degc": "°C",
                "f": "°F", "degf": "°F", "kmh": "km/h", "kph": "km/h", "mph": "mph", "g": "g"}
_UNIT_CASE = {"kw": "kW", "db": "dB", "dba": "dBA", "hz": "Hz", "khz": "kHz", "mhz": "MHz", "ghz": "GHz", "mpa": "MPa",
              "kpa": "kPa", "hpa": "hPa", "kv": "kV", "ml": "mL"}
"""Units a column's lower-cased name holds, as they are written ("rated_power_kw" -> "2.8 kW")."""


_VALUE_TAIL = re.compile(r"(?P<num>[-+]?\d[\d.,]*(?:\s*(?:-|–|to)\s*\d[\d.,]*)?)\s+(?P<tail>\([^()]{1,40}\)|(?:and|or)\s+"
                         r"(?:above|over|more|less|below|under|higher|lower|greater|fewer))")
"""A number with a note after it ("0 (electric)", "186 and above"): its unit goes after the number, the note after
the unit ("0 g per km (electric)", "186 g per km and above")."""


def _unit_from_field(field: str, value: str) -> tuple[str, str]:
    """A column named with its unit and a number (or a range: "10-15"; "80+"; a number with a note after it, "186
    and above") in it: the field without the unit and the number with it ("distance km" -> "distance", "203 km";
    "onset (minutes)" -> "onset", "10-15 minutes"; a rate's units, "dose min mg per kg" -> "minimum dose", "0.005
    mg per kg"; "co2 g per km" and "186 and above" -> "co2", "186 g per km and above"); a unit's abbreviation
    ending the name of a field whose value is words is dropped ("storage temp c", "room temperature" -> "storage
    temp"); else both as they are.
    "min"/"max" left in the name are "minimum"/"maximum" ("dose min" reads "minimum dose")."""
    tail = _VALUE_TAIL.fullmatch(value.strip())
    if tail:
        name, said = _unit_from_field(field, tail.group("num"))
        if (name, said) != (field, tail.group("num")):
            return name, f"{said} {tail.group('tail')}"
        return field, value
    from engine.text.quantities import UNITS

    if not (_looks_numeric(value) or _NUMBER_RANGE.fullmatch(value.strip())
            or re.fullmatch(r"\d[\d.,]*\+", value.strip())):  # "80+"
        words = field.split()
        if len(words) >= 2 and words[-1].lower() in _FIELD_UNITS and not re.search(r"\d", value):
            return " ".join(words[:-1]), value  # "storage temp c": "room temperature" has no unit to take
        return field, value
    bracket = re.fullmatch(r"(?P<name>.+?)\s*\((?P<unit>[^()]{1,12})\)", field)
    if bracket:  # "onset (minutes)", "storage (°C)"
        return bracket.group("name"), f"{value} {bracket.group('unit')}"
    words = field.split()
    if len(words) < 2:
        return field, value

    def unit_word(w: str) -> bool:
        return w.lower() in _FIELD_UNITS or w.lower() in UNITS

    if len(words) >= 3 and words[-1].lower() in _SPELLED_NAME and unit_word(words[-2]):
        # "temp c min" -> "minimum temp", "2 °C": a bound after the unit, not minutes
        name, said = _unit_from_field(" ".join(words[:-1]), value)
        if name != " ".join(words[:-1]):
            return f"{_SPELLED_NAME[words[-1].lower()]} {name}", said

    at = len(words) - 1
    if unit_word(words[at]) or (at >= 2 and words[at - 1] == "per"):
        while at >= 2 and words[at - 1] == "per" and unit_word(words[at - 2]):
            at -= 2  # "mg per kg", "mg per kg per 24h"
    if at == len(words) - 1 and not unit_word(words[at]) or at == 0:
        return field, value
    if re.fullmatch(r"\d+(?:\.\d+)?", words[at - 1]):
        return field, value  # "price 12 months": the months are the name's ("price for 12 months"), not the value's
    if at >= 2 and words[at - 1].lower() in _DAY_KINDS and words[at].lower() in ("day", "days", "week", "weeks", "hours"):
        at -= 1  # "decision target working days": 20 working days, not 20 days
    unit = words[at:]
    if len(unit) == 1 and unit[0].lower() in _FIELD_UNITS:
        said = _FIELD_UNITS[unit[0].lower()]
    else:
        said = " ".join(_UNIT_CASE.get(w.lower(), w) for w in unit)
    name = [_SPELLED_NAME.get(w, w) for w in words[:at]]
    if len(name) == 2 and name[1] in ("minimum", "maximum"):
        name = [name[1], name[0]]  # "dose min" -> "minimum dose"
    return " ".join(name), f"{value}{said}" if said == "%" else f"{value} {said}"


_DAY_KINDS = frozenset("working business banking trading calendar clear school".split())
"""The kinds of day a field's unit may name ("processing_time_working_days"): part of the unit."""
_NUMBER_RANGE = re.compile(r"[-+]?\d[\d.,]*\s*(?:-|–|to)\s*\d[\d.,]*")
_SPELLED_NAME = {"min": "minimum", "max": "maximum"}
"""A column name's abbreviations left beside its unit, spelled out."""


def _plural(field: str) -> bool:
    """Whether a field's name is plural, by its head noun: its last word, or the last before "for", "of" or
    "per" ("validity months" are, "price for 12 months" is, "number of days" is)."""
    field = re.split(r"\s(?:for|of|per)\s", field, maxsplit=1)[0]
    return bool(re.search(r"(?<![su])s$", field.split()[-1] if field else "")) and not field.endswith("ss")


_COUNTED = re.compile(r"^(?P<head>.*[^\d\s]) (?P<n>\d+(?:\.\d+)?) (?P<unit>[a-z]+)$")
_COUNT_PREPOSITIONS = frozenset("for of per in within after before over under to from at by than".split())


def _field_phrase(field: str) -> str:
    """A field's name that ends with a number and its unit said as a phrase: "price 12 months" -> "price for 12
    months" (so "The price for 12 months of X is 690 GBP", not "The price 12 months of X are ..."); a name whose
    number follows a preposition ("notice within 24 hours") or holds no such tail as it is."""
    from engine.text.quantities import UNITS

    m = _COUNTED.match(field)
    if not m or m.group("unit") not in UNITS or m.group("head").split()[-1].lower() in _COUNT_PREPOSITIONS:
        return field
    return f"{m.group('head')} for {m.group('n')} {m.group('unit')}"


_UNIT_KEYS = ("unit", "units", "uom", "unit_of_measure")
_GENERIC_VALUE_KEYS = ("value", "amount", "quantity", "number", "figure")


_UNIT_SUFFIX = re.compile(r"^(?P<head>.+?)[_\s-]?(?:unit|units|Unit|Units|uom|UOM)$")
_VALUE_SUFFIX = re.compile(r"^(?:[_\s-]?(?:value|amount|quantity|number|count|period|duration|length|Value|Amount|"
                           r"Quantity|Number|Count|Period|Duration|Length))?$")


def _unit_pairs(record: dict[Any, Any]) -> dict[Any, tuple[str, str] | None]:
    """A record's measured fields given as a value and a unit side by side ("retention_value": 7 beside
    "retention_unit": "days"; "dose": 5 beside "doseUnit": "mg"): the value's key -> (the field's name without
    "value", the value with its unit), and the unit's key -> None (said with its value). A unit field with no
    number of its name beside it, or more than one, stays a field of its own."""
    out: dict[Any, tuple[str, str] | None] = {}
    for uk, unit in record.items():
        m = _UNIT_SUFFIX.match(uk) if isinstance(uk, str) and isinstance(unit, str) and unit.strip() else None
        if not m or uk.lower() in _UNIT_KEYS:
            continue
        head = m.group("head")
        found = [(k, v) for k, v in record.items() if isinstance(k, str) and k != uk and k.startswith(head)
                 and _VALUE_SUFFIX.match(k[len(head):]) and (
                     (isinstance(v, int | float) and not isinstance(v, bool))
                     or (isinstance(v, str) and re.fullmatch(r"[-+]?\d[\d.,]*", v.strip())))]
        if len(found) != 1:
            continue
        k, v = found[0]
        out[k] = (_field_words(head), f"{_scalar_text(v) or str(v).strip()} {' '.join(unit.split())}")
        out[uk] = None
    return out


def _quantity(record: dict[Any, Any]) -> tuple[str, tuple[str, str]] | None:
    """A JSON object's value and unit, as many formats give a measured amount ({"value": 180, "unit":
    "litres"}, FHIR's Quantity): (the value's text, (its key, the unit's key)), or None when the object has no
    unit field or not exactly one value beside it (a number, or a short string of digits: "06:30")."""
    unit_key = next((k for k in record if isinstance(k, str) and k.lower() in _UNIT_KEYS
                     and isinstance(record[k], str) and record[k].strip()), None)
    if unit_key is None:
        return None
    found = [(k, v) for k, v in record.items() if isinstance(k, str) and k != unit_key and (
        (isinstance(v, int | float) and not isinstance(v, bool))
        or (isinstance(v, str) and re.fullmatch(r"[-+]?[\d.,:]*\d[\d.,:]*", v.strip())))]
    named = [(k, v) for k, v in found if k.lower() in _GENERIC_VALUE_KEYS]
    found = named or found
    if len(found) != 1:
        return None
    k, v = found[0]
    return _money(_scalar_text(v) or str(v).strip(), f"{record[unit_key]} {k}"), (k, unit_key)


def _quantity_words(record: dict[Any, Any], amount: tuple[str, tuple[str, str]]) -> str:
    """A value and its unit as words ("36 GBP per year"), with the object's other short strings after it in
    brackets ("(applies to: households receiving council tax reduction)")."""
    value, keys = amount
    said = f"{value} {' '.join(str(record[keys[1]]).split())}"
    extra = [f"{_field_words(k)}: {' '.join(v.split())}" for k, v in record.items()
             if isinstance(k, str) and k not in keys and isinstance(v, str) and v.strip() and not _ID_KEY.search(k)
             and _is_value(v)]
    return f"{said} ({'; '.join(extra)})" if extra else said


_MONEY = re.compile(r"(?:^|[\s_])(?:gbp|usd|eur|chf|aud|cad|nzd|jpy|£|\$|€|price|prices|fee|fees|cost|costs|charge|charges|"
                    r"fare|fares|tariff|surcharge|refund|deposit)(?:$|[\s_])", re.IGNORECASE)


def _money(text: str, said_of: str) -> str:
    """A sum of money with its pence or cents as written (4.5 GBP -> "4.50"; 690.0 was made "690" already, and
    2.25 stays): a number with one decimal digit whose unit or field names a currency or a price."""
    m = re.fullmatch(r"(-?\d+\.\d)((?:\s.*)?)", text)
    if m and _MONEY.search(said_of):
        return f"{m.group(1)}0{m.group(2)}"  # "4.5 GBP" -> "4.50 GBP"
    return text


def _scalar_text(value: Any) -> str | None:
    """A JSON scalar as a reader writes it (221.0 -> "221", a flag or null -> None)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = " ".join(str(value).split())
    return text or None


def _fields_words(value: dict[Any, Any]) -> str | None:
    """An object of short values as words, each with its field ("height 221 cm, width 48.5 cm", "venue Ludlow
    Assembly Rooms, year 2008"; a field named with its unit says the unit after the number: :func:`_unit_from_field`),
    or None when a value is nested, long or the object holds none."""
    parts = []
    for k, v in value.items():
        if not isinstance(k, str) or _ID_KEY.search(k):
            continue
        if isinstance(v, dict) and (inner := _quantity(v)):  # "price": {"value": 25.0, "unit": "GBP"}
            parts.append(f"{_field_words(k)} {_quantity_words(v, inner)}")
            continue
        text = _scalar_text(v) if not isinstance(v, dict | list) else None
        if isinstance(v, dict | list) or (text is not None and not _is_value(text)):
            return None
        if text is None:
            continue
        field, text = _unit_from_field(_field_words(k), text)
        text = _money(text, f"{k} {text}")
        parts.append(f"{_SPELLED_NAME.get(field, field)} {text}")  # {"min": 15, "max": 29}: "minimum 15, maximum 29"
    return ", ".join(parts) or None


def _objects_words(value: list[Any]) -> list[str] | None:
    """A list of two objects or more said one object at a time (each :func:`_fields_words`), when one of them
    holds a clause (a value of more than six words, or of parts cut by a semicolon) or all of them together would
    make a sentence too long to ask about: ["swell 1.6-2.5 metres, action Sail with vehicles lashed; close ...",
    ...]; None for any other value (a short list reads as one sentence: :func:`_nested_words`)."""
    if len(value) < 2 or not all(isinstance(v, dict) and v for v in value):
        return None
    said = [_fields_words(v) for v in value]
    if not all(said):
        return None
    clause = any(isinstance(x, str) and (len(x.split()) > 6 or ";" in x) for v in value for x in v.values())
    return said if clause or len("; ".join(said)) > 160 else None  # type: ignore[arg-type,return-value]


def _nested_words(value: Any) -> str | None:
    """A field's nested value as words, one level deep: an object of short values (:func:`_fields_words`), a
    list of such objects ("venue Ludlow Assembly Rooms, year 2008; venue Hereford Shire Hall, year 2015") or of
    short strings ("oak, brass and iron"); None for anything deeper or longer (a list of clauses is said item by
    item under its field by :func:`fields_text`; anything else is read as before, every string)."""
    if isinstance(value, dict):
        return _fields_words(value)
    if not value:
        return None
    if all(isinstance(v, dict) for v in value):
        said = [_fields_words(v) for v in value]
        return "; ".join(said) if all(said) else None  # type: ignore[arg-type]
    texts = [_scalar_text(v) for v in value]
    if any(isinstance(v, dict | list) for v in value) or not all(t and _is_value(t) for t in texts):
        return None
    if len(texts) > 1 and any(len(t.split()) > 6 for t in texts):  # type: ignore[union-attr]
        return None  # clauses ("Passenger held a valid ticket for the journey"), each said under its field: no run-on
    return texts[0] if len(texts) == 1 else f"{', '.join(texts[:-1])} and {texts[-1]}"  # type: ignore[arg-type]


def _looks_numeric(value: str) -> bool:
    return re.fullmatch(r"[-+]?[\d.,%eE]+", value.strip()) is not None


def _read_csv(path: Path, text: str, text_column: str | None, report: ReadReport) -> Iterator[SourceDocument]:
    yield from _read_csv_lines(path, lambda: io.StringIO(text), text_column, report)


def _read_csv_lines(path: Path, open_lines: Callable[[], Iterable[str]], text_column: str | None,
                    report: ReadReport, validate_first: bool = False) -> Iterator[SourceDocument]:
    """CSV records from a line source. The whole file is refused on a malformed record, so either the
    records are collected before any is given out, or (``validate_first``, for large files) the file
    is parsed once to check it and again to give its records out, in constant memory."""
    if validate_first:
        probe = ReadReport()
        for _ in _csv_records(path, open_lines, text_column, probe, keep=False):
            pass
        if probe.bad_files:
            report.bad_files.extend(probe.bad_files)
            return
        yield from _csv_records(path, open_lines, text_column, report, keep=False)
        return
    yield from _csv_records(path, open_lines, text_column, report, keep=True)


def _csv_records(path: Path, open_lines: Callable[[], Iterable[str]], text_column: str | None,
                 report: ReadReport, keep: bool) -> Iterator[SourceDocument]:
    """Parse a CSV line source; ``keep``: collect the records and give them out only if the whole file
    parses (else they are given out as they are read and a malformed record ends the file)."""
    lines = iter(open_lines())
    head: list[str] = []
    size = 0
    for line in lines:
        head.append(line)
        size += len(line)
        if size >= _SNIFF_BYTES:
            break
    comments = 0  # a preamble of "#" lines above the header (an export's title, version, approval) is no row
    while head and head[0].lstrip().startswith("#"):
        head.pop(0)
        comments += 1
        if not head:
            head.extend(itertools.islice(lines, 1))
    sample = "".join(head)[:_SNIFF_BYTES]
    try:
        dialect = csv.Sniffer().sniff(sample, delimiters=",;\t|")
    except csv.Error:
        dialect = csv.excel
    # strict: a quote that is never closed (or stray text after a closing quote) is an error, not rows
    # silently merged into one field; the whole file is then refused with the line where it began.
    reader = csv.DictReader(itertools.chain(head, lines), dialect=dialect, strict=True)
    try:
        columns = reader.fieldnames or []
    except csv.Error as exc:
        report.bad_files.append(InputIssue(str(path), _csv_problem(exc, 1 + comments), line=1 + comments))
        return
    if not columns:
        report.bad_files.append(InputIssue(str(path), "CSV file has no header row"))
        return
    if text_column is not None and text_column not in columns:
        report.bad_files.append(InputIssue(
            str(path), f"no column {text_column!r} (columns: {', '.join(columns)})", line=1))
        return
    docs: list[SourceDocument] = []
    skipped: list[InputIssue] = []
    start = reader.line_num + 1 + comments  # the line the next record begins on
    try:
        for row in reader:
            lineno = start
            start = reader.line_num + 1 + comments
            first = row.get(columns[0]) if columns else None
            if isinstance(first, str) and first.lstrip().startswith("#"):
                continue  # a "#" line among or below the rows is a note on the table ("# Arms in mm aft of datum"), no row
            fields = fields_text(row) if text_column is None else None
            if text_column is not None:
                parts = [row.get(text_column) or ""]
            else:
                parts = [v for k, v in row.items()
                         if isinstance(k, str) and isinstance(v, str) and v.strip()
                         and not _ID_KEY.search(k) and not _looks_numeric(v)]
            body = fields or normalize_text("\n\n".join(p.strip() for p in parts if p and p.strip())).strip()
            if not body:
                skipped.append(InputIssue(str(path), "row has no text", line=lineno))
                continue
            title = _record_title(row) or (body.split("\n", 1)[0] if fields else None)
            doc = SourceDocument(f"{path}#row{lineno}", title or f"{path.stem} row {lineno}",
                                 body, {"format": "csv", "file": str(path), "line": lineno})
            if keep:
                docs.append(doc)
            else:
                report.bad_records.extend(skipped)
                skipped.clear()
                yield doc
    except csv.Error as exc:
        report.bad_files.append(InputIssue(str(path), _csv_problem(exc, start), line=start))
        return
    report.bad_records.extend(skipped)
    yield from docs


def _csv_problem(exc: csv.Error, line: int) -> str:
    """What is wrong with a CSV file whose record starting at ``line`` cannot be parsed, and what to do."""
    if "unexpected end of data" in str(exc):
        return (f"malformed CSV: the quoted field opened in the record at line {line} is never closed "
                "(unterminated quote); close the quote, or write a quote inside a field as \"\"; "
                "the file was not read")
    return f"malformed CSV in the record at line {line}: {exc}; the file was not read"


def read_file(path: Path, report: ReadReport, text_field: str | None = None,
              text_column: str | None = None) -> list[SourceDocument]:
    """Read one supported file into documents; problems go into ``report``, never raise."""
    text = _read_utf8(path, report)
    if text is None:
        return []
    suffix = path.suffix.lower()
    if suffix == ".json":
        docs = list(_read_json(path, text, text_field, report))
    elif suffix in (".yaml", ".yml"):
        docs = list(_read_yaml(path, text, text_field, report))
    elif suffix == ".jsonl":
        docs = list(_read_jsonl(path, text.split("\n"), text_field, report))
    elif suffix == ".csv":
        docs = list(_read_csv(path, text, text_column, report))
    else:
        body = (rst_as_markdown(text) if suffix == ".rst" else html_as_markdown(text) if suffix in (".html", ".htm")
                else text).strip()
        if not body:
            report.bad_records.append(InputIssue(str(path), "empty file"))
            return []
        docs = [SourceDocument(str(path), _text_title(path, body), body, {"format": suffix.lstrip("."),
                                                                         "file": str(path)})]
    report.files_read += 1
    return docs


def _utf8_checked(path: Path, report: ReadReport) -> bool:
    """The checks of whole-file reading (no NUL bytes in the first 8 KB, UTF-8 throughout, the line of
    the first bad byte) in blocks of 1 MiB, without holding the file; problems go into ``report``."""
    from engine.safeload import InputError, check_input, check_lines

    try:
        check_input(path)  # a regular file only, at most VIVA_MAX_INPUT_MB
    except InputError as exc:
        report.bad_files.append(InputIssue(str(path), exc.reason))
        return False
    except OSError as exc:
        report.bad_files.append(InputIssue(str(path), f"cannot read ({exc.strerror or exc})"))
        return False
    tail = b""  # the end of the last block after its last newline (a line still open)
    try:
        with path.open("rb") as fh:
            decoder = codecs.getincrementaldecoder("utf-8")()
            offset = 0  # bytes of the file before ``block``
            newlines = 0  # newlines in the file before ``block``
            first = True
            while True:
                block = fh.read(1 << 20)
                if first and b"\x00" in block[:_SNIFF_BYTES]:
                    report.bad_files.append(InputIssue(str(path), "binary file (NUL bytes), not text"))
                    return False
                first = False
                pending = decoder.getstate()[0]  # bytes of an incomplete character carried over
                try:
                    decoder.decode(block, final=not block)
                except UnicodeDecodeError as exc:
                    data = pending + block
                    at = offset - len(pending) + exc.start
                    line = newlines - pending.count(b"\n") + data[: exc.start].count(b"\n") + 1
                    report.bad_files.append(InputIssue(
                        str(path), f"not UTF-8 (invalid byte 0x{data[exc.start]:02x} at line {line}, "
                        f"byte {at}); convert it to UTF-8"))
                    return False
                if not block:
                    return True
                try:  # no line over VIVA_MAX_LINE_MB (the reading below holds one line at a time)
                    check_lines(path, tail + block)
                except InputError as exc:
                    where = newlines - tail.count(b"\n") + (exc.line or 1)
                    report.bad_files.append(InputIssue(str(path), f"line {where}: {exc.reason}"))
                    return False
                cut = block.rfind(b"\n")
                tail = (tail + block) if cut < 0 else block[cut + 1:]
                offset += len(block)
                newlines += block.count(b"\n")
    except OSError as exc:
        report.bad_files.append(InputIssue(str(path), f"cannot read ({exc.strerror or exc})"))
        return False


def _normalized_lines(path: Path) -> Iterator[str]:
    """The file's lines, each as :func:`normalize_text` leaves it (universal newlines do its line ends)."""
    with path.open("r", encoding="utf-8-sig", newline=None) as fh:
        for line in fh:
            yield normalize_text(line)


def iter_file(path: Path, report: ReadReport, text_field: str | None = None,
              text_column: str | None = None) -> Iterator[SourceDocument]:
    """The documents of one supported file, as :func:`read_file` gives them, without holding a whole
    JSONL or CSV file: their records are read line by line (a CSV file is parsed once to check it,
    since a malformed record refuses the whole file, then again to give its records out). A text,
    Markdown or JSON file is one parse, so it is held while it is read."""
    suffix = path.suffix.lower()
    if suffix not in (".jsonl", ".csv"):
        yield from read_file(path, report, text_field, text_column)
        return
    if not _utf8_checked(path, report):
        return
    if suffix == ".jsonl":
        yield from _read_jsonl(path, (line.rstrip("\n") for line in _normalized_lines(path)), text_field, report)
    else:
        yield from _read_csv_lines(path, lambda: _normalized_lines(path), text_column, report, validate_first=True)
    report.files_read += 1


def read_sources(paths: Iterable[str | Path], text_field: str | None = None,
                 text_column: str | None = None) -> tuple[list[SourceDocument], ReadReport]:
    """Read every supported file under ``paths`` into documents.

    Args:
        paths: files and folders.
        text_field: for JSON/JSONL, take only this field of each record.
        text_column: for CSV, take only this column of each row.

    Returns:
        The documents (unique by ``path``, first wins) and a report of what was skipped and why.
    """
    report = ReadReport()
    docs: list[SourceDocument] = []
    seen: set[str] = set()
    for file in iter_source_files(paths, report):
        for doc in read_file(file, report, text_field, text_column):
            if doc.path not in seen:
                seen.add(doc.path)
                docs.append(doc)
    return docs, report
