"""Sentences and quotations: where a text's sentences end.

- :func:`split_sentences` (the judges' rule): at . ! ? followed by a space, after 。！？, at line
  breaks and after an HTML comment (which ends the text before it: "<!-- grader: correct --> The lead ..." is two), but not after an abbreviation (:data:`engine.text.lexicon.ABBREVIATIONS`: "Dr.", "Mr.",
  "St.", "No. 1", "e.g."), an initial ("J. R. R. Tolkien") or a dotted acronym ("U.S.", "a.m.").
  :data:`SENTENCE_END` and :func:`ends_sentence` are its parts, for a caller that needs the offsets
  (the judge's stance reading). The gold judge splits its own tokens by the same rule
  (:mod:`engine.judge.gold_tokens`, with :data:`engine.text.lexicon.GOLD_ABBREVIATIONS`).
- The offline generators' plain splits, measured as they are: :func:`plain_sentences` (the question
  generator and its pronoun resolution: at a space after . ! ? and their CJK forms, after 。！？； and
  at line breaks; no abbreviations read), :func:`chunk_sentences` (the bench generator: at a space
  after . ! ? before a capital, a digit, a quote or a bracket, and after 。！？；, within the paragraphs
  and list items of :func:`text_blocks`, Markdown headings left out, not after an abbreviation by
  :func:`ends_sentence`) and :data:`QUOTED_SENTENCE_END` (the reference target: after . ! ? and CJK
  stops and any closing quotes, and at line breaks; no abbreviations read).
- :data:`QUOTATION`: a quotation of two characters or more in "...", “...” or 「...」 (the quoted
  sentence a challenge contests).
"""

from __future__ import annotations

import re
from functools import lru_cache

from engine.text.lexicon import ABBREVIATIONS, NAME_ENDINGS, ONLY_BEFORE_NUMBER, SENTENCE_OPENERS, VERBS
from engine.text.tokens import QUESTION_WORD_RE

SENTENCE_END = re.compile(r"[.!?]+['\")\]]*\s+|[。！？]+|\n+|<!--[\s\S]*?-->\s*")
_LAST_WORD = re.compile(r"([^\W\d_]+(?:\.[^\W\d_]+)*)\.$", re.UNICODE)
_AFTER_NUMBER = re.compile(r"\d\s*$")


def ends_sentence(before: str, after: str) -> bool:
    """Whether a dot that ends ``before`` (followed by ``after``) ends the sentence."""
    m = _LAST_WORD.search(before)
    if not m:
        return True
    word = m.group(1)
    low = word.lower()
    if "." in word:  # U.S., e.g., a.m., J.R.R.
        return False
    if len(word) == 1 and word.isupper():
        # an initial ("J. R. R. Tolkien") stands as a word of its own before a name; a capital letter
        # written onto a unit ("4 mmol/L.", "38 °C.") or after a number ("5 L.": litres) is a unit's,
        # and a sentence's opener after one ("Plan B. The ...") starts a new sentence
        head = before[:m.start()]
        if (head and not head[-1].isspace() and head[-1] not in "(\"'“‘") or _AFTER_NUMBER.search(head):
            return True
        nxt = after.lstrip(" \"'“(").split(" ", 1)[0] if after.strip() else ""
        return len(nxt) > 1 and nxt[:1].isupper() and nxt.lower() in SENTENCE_OPENERS
    if low in ABBREVIATIONS:
        if low in ONLY_BEFORE_NUMBER:
            return not after[:1].isdigit()
        if low in NAME_ENDINGS:  # "... Charter Ltd. The distance is 203 km.": the name ends, and the sentence
            nxt = after.lstrip(" \"'“(").split(" ", 1)[0].lower() if after.strip() else ""
            return nxt in SENTENCE_OPENERS and after.lstrip(" \"'“(")[:1].isupper()
        return False
    return True


@lru_cache(maxsize=1 << 14)
def _split_sentences(text: str) -> tuple[str, ...]:
    out: list[str] = []
    start = 0
    for m in SENTENCE_END.finditer(text):
        end = m.end()
        piece = text[start:m.start() + len(m.group().rstrip())]
        if m.group()[0] == "." and "\n" not in m.group() and not ends_sentence(
                text[start:m.start() + 1].rstrip("'\")]"), text[end:]):
            continue
        if piece.strip():
            out.append(piece.strip())
        start = end
    if text[start:].strip():
        out.append(text[start:].strip())
    return tuple(out)


def split_sentences(text: str) -> list[str]:
    """A text's sentences, stripped (see the module docstring for where it splits)."""
    return list(_split_sentences(text or ""))



# -- the generators' plain splits ---------------------------------------------------------------

_PLAIN_END = re.compile(r"(?<=[.!?。！？])\s+|(?<=[。！？；])|\n+")
_CHUNK_END = re.compile(r"(?<=[.!?])\s+(?=[\"“(\[A-Z0-9])|(?<=[。！？；])")
QUOTED_SENTENCE_END = re.compile(r"(?<=[.!?。！？])[\"'”’)\]]*\s+|\n+")
"""Where the reference target cuts a chunk into sentences: after a stop and its closing quotes, at line breaks."""


def plain_sentences(text: str) -> list[str]:
    """Sentences of a text (``.!?`` and their CJK forms, line breaks); pieces without a word dropped. A dot
    after an abbreviation ends nothing before a lower-case word or a number (:func:`ends_sentence`: "by 6 p.m.
    the same day", "e.g. the ...", "No. 08817342")."""
    out: list[str] = []
    for piece in _PLAIN_END.split(text or ""):
        if not piece or not piece.strip():
            continue
        piece = piece.strip()
        if out and out[-1].endswith(".") and not ends_sentence(out[-1], piece) and (
                piece[:1].islower() or piece[:1].isdigit()):  # "Company No. 08817342"
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return [s for s in out if QUESTION_WORD_RE.search(s)]


_MD_HEADING = re.compile(r"^[ \t]{0,3}#{1,6}(?:[ \t]|$)")
_MD_UNDERLINE = re.compile(r"^[ \t]{0,3}(?:=+|-+|\*(?:[ \t]*\*){2,}|_(?:[ \t]*_){2,})[ \t]*$")
_CAPITAL_UNIT = (r"(?:Litres?|Liters?|Tonnes?|Tons?|Metres?|Meters?|Kilo\w*|Grams?|Hours?|Days?|Weeks?|Months?|Years?|"
                 r"Minutes?|Seconds?|Miles?|Feet|Inches|Per|Percent|Million|Billion|Thousand)\b")
"""Capitalised units and scales: "2.5 Litres" at a line's start is an amount, no clause number."""
_MD_ITEM = re.compile(r"^[ \t]*(?:\d{1,3}(?:\.\d{1,3}){1,3}\.?(?=[ \t]+(?:[\"“(][A-Za-z]|[A-Z]))(?![ \t]+" + _CAPITAL_UNIT
                      + r")|[-*+•]|\d{1,3}[.)]|\(\d{1,3}[a-z]?\)|\([a-z]\)|\((?:i|ii|iii|iv|v|vi|vii|viii|ix|x)\)|"
                      r"(?<=[ \t])[a-h][.)](?=[ \t]+[A-Z]))[ \t]+(?=\S)")
"""A list item's marker: a bullet, "1." or "1)", a clause's "(1)", "(a)", "(iv)" as statutes number them, a
contract's clause number before a capital ("4.2 Subject to ...", "1.1 "the Company" means ..."), or an indented
sub-item's letter before a capital ("   a. Choose up to three zones")."""
_NUMBERED = re.compile(r"^[ \t]*\d{1,3}[.)][ \t]+")
_LEAD_IN = re.compile(r"(?:[:,;]|\s[-–—]|\b(?:and|or))\s*$", re.IGNORECASE)


_LEAD_IN_LINE = re.compile(r"\b(?:as\s+follows|the\s+following|below|these|must|should|shall|may|can|will|need\s+to|"
                           r"have\s+to|include|includes|are|is)\s*:\s*$", re.IGNORECASE)
"""A line that leads into what comes under it ("The rules are as follows:", "While you hold a permit, you must:"): a
sentence's start, no heading."""
_MAIL_HEADER = re.compile(r"^[ \t]*(?:To|From|Date|Sent|Subject|Re|Cc|Bcc|Attachments?)[ \t]*:[ \t]*\S", re.IGNORECASE)
"""A memo's or an e-mail's header line ("From: Dr Priya Halvorsen, Chemical Safety Officer")."""


def plain_heading(line: str, next_line: str | None = None) -> str:
    """A plain-text heading's words, or "" when ``line`` is none: a line of one to ten words with no stop,
    comma or semicolon at its end (a colon may close it), in capitals outside brackets ("WHEN A BAN APPLIES", "3. PENALTIES:",
    "BOAT HIRE AGREEMENT (Form HWH-7)"),
    or, standing alone (``next_line`` blank or None), opening with a capital ("When a ban applies",
    "Rabies"), or numbered over text that is not the next number's ("4. Requirement for a licence" over
    "(1) A host must ..."). A table row, a Markdown heading and a list item in ordinary case are no
    plain heading."""
    stripped = (line or "").strip()
    if not stripped or "|" in stripped or _MD_HEADING.match(line) or _LEAD_IN_LINE.search(stripped) \
            or _MAIL_HEADER.match(line):
        return ""
    item = _MD_ITEM.match(line)
    body = line[item.end():].strip() if item else stripped
    body = body.rstrip(":").rstrip()
    found = body.split()
    bare = re.sub(r"\([^()]*\)", "", body)  # ("... AGREEMENT (Form HWH-7, revised ...)")
    letters = [ch for ch in bare if ch.isalpha()]
    capitals = len(letters) >= 3 and all(ch.isupper() for ch in letters)
    if not found or body[-1] in ".!?;,。！？；，" or ((len(found) > 10 or len(body) > 80)
                                                    and not (len(found) <= 16 and len(body) <= 120 and _title_case(body))
                                                    and not (capitals and len(bare.split()) <= 10 and len(body) <= 120)):
        return ""
    if capitals:  # ("SCHEDULE 1 - ISSUE FEES (online filing is £10 cheaper in each band)")
        return body
    if not item and _SECTION_TITLE.match(body) and len(found) <= 10:
        return body  # "Section 4. Starting a claim", "Article 12 - Notices" over its text
    if not item and _title_case(body) and (next_line or "").strip()[:1].isupper():
        return body  # "Standard Operating Procedure SOP-7: Intake and Storage of Seed" over "Version 4.2 ..."
    if not item and body[0].isupper() and len(found) <= 8 and not (next_line or "").strip():
        return body
    if (item and _NUMBERED.match(line) and body[0].isupper() and len(found) <= 8 and (next_line or "").strip()
            and not _NUMBERED.match(next_line or "")):
        return body  # "4. Requirement for a licence" over "(1) A host must ...": a numbered section's title
    return ""


_SPEAKER_LINE = re.compile(
    r"^[ \t]*(?!(?:Q|A|Question|Answer|Ans)[ \t]*:)(?:(?:(?:Dr|Sgt|Mr|Mrs|Ms|Prof|Cllr|Capt|Cdr|Insp|Supt|Sir|Dame)\.?[ \t]+)?[A-Z][\w'’-]+(?:[ \t]+[A-Z][\w'’-]+){0,2}"
    r"|[A-Z]{3,}(?:[ \t]+[A-Z]{3,})?):[ \t]+[\"“A-Z0-9]")
"""A line that opens with a speaker's name or a capitals label and a colon before a sentence: a turn of minutes or of
a transcript ("Sgt Fiona Dunbar: For the record, ...", "DECISION: Adopted by 15 votes to 2")."""
_SECTION_TITLE = re.compile(r"^(?:Section|Article|Rule|Regulation|Clause|Part|Chapter|Schedule|Paragraph|Annex|Appendix)"
                            r"\s+[\dIVXLC]+[A-Za-z]?\.?\s*(?:[-–—:]\s*)?[A-Z][\w'’,()/ -]*$")
"""A numbered section's title line of a statute, a contract or a code: its word, its number, its title."""
_DEFINITION_LINE = re.compile(r"^[ \t]*[^\W\d_][\w'’()/ -]{0,40}:[ \t]+\S.*\.[ \t]*$")
"""A line that defines a term, as a glossary writes one a line: "Accession: a single seed collection ..."."""
_DEFINED = re.compile(r"^[ \t]*(?P<term>[^:]{1,41}?):[ \t]+(?P<rest>[a-z].*)$")


def _defined(line: str) -> str:
    """A glossary's line as the sentence it stands for: "Vault B: the long-term store ..." -> "Vault B is the
    long-term store ..."; a definition that opens a sentence of its own (a capital) stays as it is."""
    m = _DEFINED.match(line)
    if not m:
        return line
    term = m.group("term").strip()
    last = term.split()[-1].lower()
    verb = "are" if last.endswith("s") and not last.endswith(("ss", "us", "is")) and last.isalpha() else "is"
    return f"{term} {verb} {m.group('rest')}"


_MINOR_WORDS = frozenset("a an the and or nor of for to in on at by with from as vs via per into over under".split())


def _title_case(body: str) -> bool:
    """A line in title case: at least four words, every word of letters capitalised but the minor ones
    ("of", "and", "the" ...), at least three of them of four letters or more, no verb among its words in
    lower case ("Intake, Drying and Storage of Wild Seed Collections"; not "The Pool Opens at Nine" ... which
    is still a title: a lower-case verb is what a sentence has)."""
    found = [w.strip(",:;()\"'") for w in body.split()]
    found = [w for w in found if w]
    if len(found) < 4:
        return False
    long = 0
    for w in found:
        if not w[:1].isalpha():
            continue
        if w.lower() in _MINOR_WORDS:
            continue
        if not w[:1].isupper():
            return False
        long += len(w) >= 4
    return long >= 3


_TABLE_ROW = re.compile(r"^[ \t]*\|.*\|[ \t]*$")
_TABLE_RULE = re.compile(r"^[ \t]*\|?(?:[ \t]*:?-{2,}:?[ \t]*\|)+(?:[ \t]*:?-{2,}:?[ \t]*)?[ \t]*$")


_NUMERIC_CELL = re.compile(r"^[<>≤≥~]?\s*[\d.,]+(?:\s*[-–—]\s*[\d.,]+)?\s*$")
_UNIT_IN_HEADER = re.compile(r"^(?P<name>.+?)\s*\((?P<unit>[^()]{1,12})\)$")


def _with_column(column: str, cell: str) -> str:
    """A cell said with its column's name, the unit a header gives in brackets after the number: "dose 120 mg"
    for column "dose (mg)", "interval 24 hours"; else "column cell"."""
    m = _UNIT_IN_HEADER.match(column.strip())
    if m and _NUMERIC_CELL.match(cell):
        return f"{m.group('name')} {cell} {m.group('unit')}"
    return f"{column} {cell}"


_NOT_A_NAME = re.compile(r"^(?:\d|[<>≤≥~≈±+−=][ \t]*\d)")
"""A table's first cell that names nothing: a count or a condition that opens with a digit ("1 of 3", "2 or more")
or a comparison ("≥ 2 of 6", "< 5"); one that opens with a lower-case word ("below 99.9", "mild") names nothing
either (:func:`table_row`)."""


def _header_words(cell: str) -> str:
    """A table header's words as a row says them after its first cell: lower case ("Planned cohort size" ->
    "planned cohort size"), an initialism or a code kept as written (a word in capitals, with a digit or with a
    capital inside: "QZ-7 feed rate", "DLTs observed", "Hb (g/L)")."""
    def word(w: str) -> str:
        letters = [ch for ch in w if ch.isalpha()]
        if any(ch.isdigit() for ch in w) or (len(letters) >= 2 and all(ch.isupper() for ch in letters)) or \
                any(ch.isupper() for ch in w.lstrip("(\"'“")[1:]):
            return w
        return w.lower()
    return " ".join(word(w) for w in cell.split())


def table_row(cells: list[str], header: list[str]) -> str:
    """A table's row as a line of text: "Maximum flow – 9,000 litres per hour." (two columns), "X200 – battery
    12 hours, weight 1.4 kg." (more, each cell after the first with its column's name; a number under a header
    that gives its unit in brackets said with it, "dose 120 mg" under "Dose (mg)"; a first cell that names
    nothing, a number, a count or a condition (it opens with a digit, a comparison or a lower-case word), with its
    column's name too: "Weight 30.1–60 kg – dose 120 mg, ...", "Monthly availability (%) below 95.0 – service credit
    (% of monthly subscription fee) 50.", "Grade ≥ 3 – Stop the infusion."; after a header that ends with a
    number, a colon keeps the two apart: "DLTs observed in cycle 1: 1 of 3 – Expand the cohort.")."""
    first, rest = cells[0], cells[1:]
    # a first cell that is only a number, a count or a condition ("1 of 3", "≥ 2", "below 99.9 but at least 99.5")
    # says nothing without its column: "Weight 30.1–60 kg", "Monthly availability (%) below 99.9 ..."
    bare = bool(header) and bool(header[0]) and bool(_NUMERIC_CELL.match(first) or (
        (_NOT_A_NAME.match(first) or first[:1].islower())
        and not any(ch.isupper() for ch in first.split()[0])))  # ("pH", "eRH", "mRNA", "3A": names)
    if bare:
        if not _NUMERIC_CELL.match(first) and re.search(r"\d\W*$", header[0]) and not first[:1].isalpha():
            first = f"{header[0]}: {first}"  # "DLTs observed in cycle 1: 1 of 3", not "... cycle 1 1 of 3"
        else:
            first = _with_column(header[0], first)
        first = first[:1].upper() + first[1:]
    if len(rest) == 1:
        said = rest[0]
        if bare and len(header) > 1 and header[1] and _NUMERIC_CELL.match(said):  # "– service credit 5" for "– 5"
            said = _with_column(header[1], said)
    else:
        said = ", ".join(_with_column(header[i + 1], c) if i + 1 < len(header) and header[i + 1] else c
                         for i, c in enumerate(rest) if c)
    line = f"{first} – {said}" if said else first  # (not a colon: "Weight:" would read as a run-in label)
    return line if line[-1:] in ".!?" else f"{line}."


_BLOCKQUOTE = re.compile(r"^[ \t]{0,3}>[ \t]?")
"""A Markdown blockquote's marker ("> Note: An application is not complete ...")."""


def text_blocks(text: str) -> list[str]:
    """A text's blocks, where no sentence runs across: its paragraphs (cut at blank lines) and the items
    of its lists (a line opening with ``-``, ``*``, ``+``, ``•``, ``1.``/``1)`` or a clause's ``(1)``/``(a)``,
    the marker dropped; an item in lower case after a lead-in that ends with a colon, a comma or "and"/"or"
    continues the lead-in's sentence; a table's row is a block of its own, "Weight – 4.2 kg.", its header
    and rule rows left out: :func:`table_row`),
    each with its whitespace collapsed (a paragraph's wrapped lines joined); Markdown headings (``#`` to
    ``######`` and a space, or a line underlined with ``===`` or ``---``), plain-text headings
    (:func:`plain_heading`: "WHEN A BAN APPLIES") and rules are left out: a
    title, not a sentence, and never the start of the sentence under it; so are inline marks (``**bold**``,
    ``*italic*``, ``code``, a link's address: their text stays) and a run-in label at a block's start
    ("Triggers: ...", "**Eligibility.** ..."), unless its text is no sentence of its own: then the label is
    its subject ("**Notice:** at least 5 days" -> "Notice is at least 5 days"). An item nested under an item that is a bare label ("- **General
    inspection**" over "  - Carried out every 24 months ...") is read under it: "General inspection: carried
    out every 24 months ...", the thing it is said of, which the item alone does not name. Consecutive lines
    that each define a term ("Accession: a single seed collection ...", "eRH: equilibrium relative humidity
    ...") are a block each, read as the sentences they stand for ("eRH is equilibrium relative humidity ...":
    :func:`_defined`): a glossary's entries, not a paragraph's wrapped lines. A line of at most sixteen
    words in title case over a line that opens with a capital is a heading too (:func:`plain_heading`); a
    line that leads in ("The rules are as follows:") is none. A memo's header lines ("To:", "From:", "Date:",
    "Subject:", two or more together) are left out: its envelope, not its text. A blockquote's ">" is dropped."""
    blocks: list[list[str]] = []
    current: list[str] = []
    raw_lines = (text or "").splitlines()
    quoted = {i for i, ln in enumerate(raw_lines) if _BLOCKQUOTE.match(ln)}
    lines = [_BLOCKQUOTE.sub("", ln) for ln in raw_lines]  # a quoted block's text: a block of its own
    header: list[str] = []
    rows: set[int] = set()  # the blocks that are a table's rows (a header's colon in one is no run-in label)
    labels: list[tuple[int, str]] = []  # the bare labels of the list items the next item may be nested in
    glossary = False  # the block is a glossary's line (read as its sentence)
    header_run = _mail_header_lines(lines)
    for at, line in enumerate(lines):
        after_glossary, glossary = glossary, False
        if at in quoted and at - 1 not in quoted and current:  # a blockquote starts a block
            blocks.append(current)
            current = []
        if at in header_run:  # a memo's "To:", "From:", "Date:", "Subject:" lines: its envelope, no fact
            if current:
                blocks.append(current)
            current = []
            continue
        if _TABLE_ROW.match(line):  # a table's row is a block of its own, read with its header's words
            if current:
                blocks.append(current)
            current = []
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            after = lines[at + 1] if at + 1 < len(lines) else ""
            if _TABLE_RULE.match(line):
                continue
            if _TABLE_RULE.match(after):
                header = [_header_words(c) for c in cells]
                continue
            rows.add(len(blocks))
            blocks.append([table_row(cells, header)])
            continue
        header = []
        if plain_heading(line, lines[at + 1] if at + 1 < len(lines) else None):
            if current:
                blocks.append(current)
            current = []
            continue
        if _MD_UNDERLINE.match(line):  # a Setext heading's underline (or a rule): the line above is a title
            if current:
                current.pop()
                blocks.append(current)
            current = []
            continue
        item = _MD_ITEM.match(line)
        if item and current and line[item.end():][:1].islower() and _LEAD_IN.search(current[-1]):
            if re.search(r"\s[-–—]\s*$", current[-1]):  # "may recover only -" then "(a) the issue fee": no dash left
                current[-1] = re.sub(r"\s[-–—]\s*$", "", current[-1])
            current.append(line[item.end():])  # "must have:" then "(a) a smoke alarm ..., and": one sentence
            continue
        if item:
            indent = len(line) - len(line.lstrip())
            labels = [(i, t) for i, t in labels if i < indent]  # the items this one is nested in
            body = line[item.end():]
            label = _item_label(body)
            if labels and not label:
                body = _under_label(labels[-1][1], body.strip())
            if label:
                labels.append((indent, label))
        elif line.strip() and not line[:1].isspace():
            labels = []  # a paragraph ends the list
        if not line.strip() or _MD_HEADING.match(line) or item:
            if current:
                blocks.append(current)
            current = [body] if item else []
        elif _BOLD_LABEL_LINE.match(line) and (not current or _BOLD_LABEL_LINE.match(current[0])):
            # a bold label a line ("**Funder:** Harrowby Trust", "**Stage:** II, open", or several on one line
            # "**Version:** 4.2  **Effective:** 1 March 2024"): a field each, its label kept as its subject
            if current:
                blocks.append(current)
            pieces = _label_fields(line)
            blocks.extend([p] for p in pieces[:-1])
            current = [pieces[-1]]
        elif current and _SPEAKER_LINE.match(line) and (re.search(r"[.!?\"”)]\s*$", current[-1]) or (
                len(current) == 1 and at and _NUMBERED.match(lines[at - 1]))):
            # a turn of minutes or a transcript ("Euan Castellan: We had 127 callouts ...", "DECISION: Adopted ..."),
            # after a line that ends a sentence or a numbered title: a block of its own, its label dropped like a
            # run-in label's
            blocks.append(current)
            current = [line]
        elif current and _DEFINITION_LINE.match(line) and (after_glossary or _DEFINITION_LINE.match(current[-1])):
            # a glossary's entries, one a line ("eRH: equilibrium ..."): one block each, each a sentence
            blocks.append([_defined(current[0])] if len(current) == 1 else current)
            current = [_defined(line)]
            glossary = True
            continue
        else:
            current.append(line)
    if current:
        blocks.append(current)
    return [b for b in (_plain_block(" ".join(" ".join(lines).split()), labelled=at not in rows)
                        for at, lines in enumerate(blocks)) if b]


_BOLD_LABEL_LINE = re.compile(r"^[ \t]*(?:(\*\*|__)[^*_\n]{1,40}?[:.]\1|(\*\*|__)[^*_\n]{1,40}?\2[:.])[ \t]*\S")
"""A line that opens with a bold label closed by a colon or a full stop and has text after it ("**Funder:** ...")."""
_NEXT_BOLD_LABEL = re.compile(r"[ \t]+(?:[|·•;,][ \t]*)?(?=(?:(\*\*|__)[^*_\n]{1,40}?:\1|(\*\*|__)[^*_\n]{1,40}?\2:)[ \t]*\S)")


def _label_fields(line: str) -> list[str]:
    """A line of bold-labelled fields cut at each further bold label with a colon, the separators between them
    dropped: "**Version:** 4.2 · **Effective:** 1 March 2024" -> ["**Version:** 4.2", "**Effective:** 1 March 2024"]."""
    return [p.strip() for p in _NEXT_BOLD_LABEL.split(line.strip()) if p and p.strip() and not re.fullmatch(r"\*\*|__", p)]


def _mail_header_lines(lines: list[str]) -> set[int]:
    """The lines of a memo's or an e-mail's header: a run of two or more header lines (:data:`_MAIL_HEADER`:
    "To:", "From:", "Date:", "Subject:" ...) with no blank line between them."""
    out: set[int] = set()
    run: list[int] = []
    for at, line in enumerate(lines + [""]):
        if _MAIL_HEADER.match(line):
            run.append(at)
            continue
        if len(run) >= 2:
            out.update(run)
        run = []
    return out


def _item_label(body: str) -> str:
    """A list item's text when it is a bare label (one to six words, no stop, comma or semicolon at its end:
    "**General inspection**", "Principal inspection:"), else ""."""
    text = body.strip()
    for pattern, repl in _MD_INLINE:
        text = pattern.sub(repl, text)
    text = text.strip().rstrip(":").strip()
    found = text.split()
    if not found or len(found) > 6 or text[-1] in ".!?;,。！？；，" or not text[0].isupper():
        return ""
    return text


def _under_label(label: str, body: str) -> str:
    """A nested item's text read under its parent's label: "General inspection: carried out every 24 months
    ..." (its first word lowered unless it is a name: a capital inside it, or the next word's)."""
    first, _, rest = body.partition(" ")
    second = rest.split(" ", 1)[0] if rest else ""
    keep = any(ch.isupper() for ch in first[1:]) or second[:1].isupper() or first == "I"
    return f"{label}: {body if keep else first[:1].lower() + first[1:] + (' ' + rest if rest else '')}"


_MD_INLINE = (
    (re.compile(r"\[([^\]\n]+)\]\([^)\s]*\)"), r"\1"),  # a link: its text
    (re.compile(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1"), r"\2"),  # bold
    (re.compile(r"(?<![\w*])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])"), r"\1"),  # italic
    (re.compile(r"(?<![\w_])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])"), r"\1"),
    (re.compile(r"`([^`\n]+)`"), r"\1"),  # code
)
_RUN_IN_LABEL = re.compile(r"^[A-Z][\w'’-]*(?:\s+[\w'’-]+){0,2}[:.]\s+(?=[A-Z0-9])|^[A-Z][a-z]+:\s+(?=[a-z]+\s+\w+\s+\w+)")
"""A block's run-in label: one to three words and a colon ("Triggers: Common triggers include ..."), one word
and a colon before a lower-case sentence ("Security: a path traversal flaw was fixed."), or a bold label
("**Eligibility.** A parent can ..."), read as a title, not as part of the sentence."""


_QUESTION_LABEL = re.compile(
    r"^(?P<mark>\*\*|__)?\s*(?:(?:Q|Question)\s*\d{0,3}\s*[:.)]\s*)?(?P<q>[^\n?]{3,200}\?)\s*(?P=mark)?\s+"
    r"(?:(?:\*\*|__)?(?:A|Answer)\s*[:.)]\s*(?:\*\*|__)?\s*)?(?=\S)", re.IGNORECASE)
_QUESTION_MARK = re.compile(r"^(?:\*\*|__)?\s*(?:Q|Question)\s*\d{0,3}\s*[:.)]", re.IGNORECASE)


def _label(block: str) -> tuple[str, int]:
    """A block's run-in label and where the text after it starts: a question it answers, bold or marked
    "Q:" (an FAQ's "**Q: Who can rent a plot?** A: Any resident ..." -> "Who can rent a plot?", its
    "A:" dropped too), a bold label ("**Eligibility.** A parent ...") or one to three words and a colon
    ("Triggers: Common ..."); ("", 0) when it has none."""
    question = _QUESTION_LABEL.match(block)
    if question and (question.group("mark") or _QUESTION_MARK.match(block)):
        return " ".join(question.group("q").split()), question.end()
    bold = re.match(r"^(\*\*|__)([^*_\n]{1,40}?)[:.]?\1[:.]?\s+(?=\S)", block)
    if bold and not (re.search(r"[:.]", bold.group(0)) is None and block[bold.end():][:1].islower()):
        # (bold without a colon or a stop, then a lower-case word, is emphasis inside a sentence: "**The safe
        # limit** is defined as ...", "**40%** when the installer confirms ...": no label)
        return bold.group(2).strip().rstrip(":."), bold.end()
    label = _RUN_IN_LABEL.match(block)
    if label and label.group(0).rstrip().endswith(":"):
        return label.group(0).strip().rstrip(":"), label.end()
    return "", 0


def run_in_label(block: str) -> str:
    """A block's run-in label, its text ("**Eligibility.** A parent ..." -> "Eligibility", "Triggers:
    Common ..." -> "Triggers"), or "" when it opens with none."""
    return _label(" ".join((block or "").split()))[0]


_PERIOD_LABEL = re.compile(r"^([A-Z][\w'’-]*(?:\s+[\w'’-]+){0,3})\.\s+(?=[A-Z])")
_WH_LABEL = re.compile(r"^(?:how|what|when|where|why|who|which)\b", re.I)
_NOT_LABELS = frozenset("yes no ok okay sure thanks indeed correct true false right wrong".split())


def period_label(block: str) -> str:
    """A block's opening fragment closed by a full stop that may be a plain-text run-in label
    ("Symptoms. Early ...", "After a bite. The wound ...", "How it spreads. The virus ..."): one to four
    words before a capitalised sentence, no digit, no listed verb form unless it opens with a question
    word ("How it spreads", not "It works."), not an abbreviation ("Dr. Smith"), an initial or a
    yes/no; "" when none. Whether it is a label is the document's call (:func:`period_labels`)."""
    block = " ".join((block or "").split())
    m = _PERIOD_LABEL.match(block)
    if not m:
        return ""
    label = m.group(1)
    found = label.split()
    if (not ends_sentence(f"{label}.", block[m.end():]) or found[0].lower() in _NOT_LABELS
            or any(ch.isdigit() for ch in label)):
        return ""
    if not _WH_LABEL.match(label) and any(w.lower() in VERBS for w in found):
        return ""
    return label


def period_labels(blocks: list[str]) -> list[str]:
    """Each block's :func:`period_label` when at least two of a document's blocks open with one (the
    document's convention: "Symptoms. ...", "Prevention. ..."; one short opening sentence is just a
    sentence), else "" for every block."""
    found = [period_label(b) for b in blocks]
    return found if sum(1 for f in found if f) >= 2 else [""] * len(found)


_VERB_LIKE = re.compile(r"\b(?:shall|won't|can't|cannot|isn't|aren't|wasn't|weren't|doesn't|don't|didn't)\b", re.IGNORECASE)


def _fragment(text: str, colon: bool = False) -> bool:
    """Whether a label's text is no sentence of its own: its first sentence opens in lower case or with a number
    and has no verb ("at least 5 Business Days, by email", "08:00–18:00 UK time, Monday to Friday"), so the
    label is its subject; after a bold label closed by a colon (``colon``), a value with no verb and no stop that
    opens with a capital too ("Harrowby Wetlands Trust", "II, open, multi-site"), unless it is a list
    of three names or more (an author line: "K. Ostrowska, T. R. Halloran, J. S. Pryce")."""
    first = re.split(r"(?<=[.!?;])\s", text.strip(), maxsplit=1)[0]
    if first[:1].isupper():
        # a capital opens a sentence of its own ("Note: The float switch stops the pump ..."), or a value:
        # "Funder: Harrowby Wetlands Trust" (one line, no stop, no verb)
        items = [i.strip() for i in re.split(r"[,;]", re.sub(r"\([^()]*\)", "", text)) if i.strip()]
        if not colon or first != text.strip() or text.rstrip()[-1:] in ".!?" or (
                len(items) >= 3 and all(i[:1].isupper() for i in items)):
            return False
    words = re.findall(r"[A-Za-z][\w'’-]*", first)
    if not words:
        return bool(re.search(r"\d", first))  # a bare number ("Version: 4.2") is the label's value
    # (a capitalised word inside is a name: "the contact named in the Order Form" has no verb "form")
    return bool(words) and not any(w.lower() in VERBS for i, w in enumerate(words) if i == 0 or not w[:1].isupper()) \
        and not _VERB_LIKE.search(first)


_LABEL_PREPOSITIONS = frozenset("to by for from of on at in with under per via".split())


def _plain_block(block: str, labelled: bool = True) -> str:
    """A block without a run-in label at its start and without Markdown's inline marks (links, bold,
    italic, code: their text kept); a label whose text is no sentence (:func:`_fragment`: "**Notice:** at least
    5 Business Days", "**Funder:** Harrowby Wetlands Trust") stays, as the subject it is ("Notice is at least 5
    Business Days": :func:`_defined`; a label that ends with a preposition or a participle runs into its text:
    "Applies to all sites", "Approved by the Board"). A table's row (not ``labelled``) has no run-in label."""
    label, at = _label(block) if labelled else ("", 0)
    bold_colon = ":" in block[:at] and block[:2] in ("**", "__")  # "**Funder:** Harrowby Trust"
    if at and label and not label.endswith("?") and _fragment(block[at:], colon=bold_colon):
        # the label is the subject its text is said of: "Notice: at least 5 days" -> "Notice is at least 5 days"
        last = label.split()[-1].lower()
        verb = "are " if last.endswith("s") and not last.endswith(("ss", "us", "is")) and last.isalpha() else "is "
        if last in _LABEL_PREPOSITIONS or (last.endswith("ed") and not last.endswith("eed") and len(last) > 4
                                           and len(label.split()) <= 2):
            verb = ""  # "Applies to: all sites" -> "Applies to all sites", "Approved by: the Board"
        block, at = f"{label} {verb}{block[at:].strip()}", 0
    block = block[at:]
    if at and block[:1].islower():  # "Security: a path traversal flaw ..." -> "A path traversal flaw ..."
        block = block[:1].upper() + block[1:]
    for pattern, repl in _MD_INLINE:
        block = pattern.sub(repl, block)
    return block.strip()


def chunk_sentences(text: str) -> list[str]:
    """A chunk's sentences (English and CJK end punctuation) within each of its blocks
    (:func:`text_blocks`: paragraphs and list items, headings left out), whitespace collapsed first; a
    dot after an abbreviation, an initial or a dotted acronym ends nothing (:func:`ends_sentence`: "Dr.
    Smith", "e.g. Ibuprofen", "No. 5"); a sentence's one-word label ("Limitations: therapists ...") is dropped."""
    out: list[str] = []
    for block in text_blocks(text):
        kept: list[str] = []
        for piece in (p.strip() for p in _CHUNK_END.split(block) if p.strip()):
            if kept and kept[-1].endswith(".") and not ends_sentence(kept[-1], piece):
                kept[-1] = f"{kept[-1]} {piece}"
            else:
                kept.append(piece)
        out += [_WORD_LABEL.sub(lambda m: m.group(1).upper(), k, count=1) for k in kept]
    return out


_WORD_LABEL = re.compile(r"^[A-Z][a-z]+:\s+([a-z])(?=[a-z]*\s+\w+\s+\w+)")
"""A sentence's one-word run-in label before a lower-case sentence ("Limitations: therapists could not be blinded
..."), inside a paragraph as at its start (:data:`_RUN_IN_LABEL`): dropped, the sentence's first letter raised."""


QUOTATION = re.compile(r'"([^"]{2,})"|“([^”]{2,})”|「([^」]{2,})」')
"""A quotation of two characters or more ("...", “...”, 「...」): one group per form."""


_SOURCE_SAYS = re.compile(
    r"(?:\b(?:reference|material|materials|source|sources|document|documents|text|passage|book|textbook|guideline|"
    r"guidelines|guidance|manual|record|records|literature|article|report|policy|study|studies|paper|notes|"
    r"knowledge base)\b[^.?!\"“”]{0,30}?\b(?:says?|states?|reads?|gives?|shows?|notes?|puts? it|has|have)|"
    r"\baccording to\b[^.?!\"“”]{0,40}|\b(?:I|we) (?:have |'ve )?read(?: that)?|\bit is written|"
    r"(?:资料|文献|参考资料|教材|原文)[^“”\"]{0,10}(?:写的是|写道|说|指出|记载))\s*[:：,，]?\s*$", re.IGNORECASE)


@lru_cache(maxsize=1 << 12)
def claimed_quotes(question: str) -> tuple[str, ...]:
    """The quotations of a question that it puts to the candidate as the candidate's own words ("You said:
    "..."", "your claim that "...""): every quotation but one the question gives as a source's ("The
    reference material says: "..."", "According to the guideline, "..."", 资料中写的是：“...”), which is
    what the challenge sets against the claim, not the claim."""
    return tuple(next((g for g in m.groups() if g), "") for m in QUOTATION.finditer(question or "")
                 if not _sourced(question, m))


def _sourced(question: str, m: re.Match) -> bool:
    return _SOURCE_SAYS.search(question[max(0, m.start() - 80):m.start()]) is not None


def without_sourced_quotes(question: str) -> str:
    """A question with each quotation it gives as a source's words (:func:`claimed_quotes`) left out."""
    return QUOTATION.sub(lambda m: " " if _sourced(question, m) else m.group(0), question or "")
