"""reStructuredText read as the Markdown the rest of viva reads (knowledge-base sources ending ``.rst``).

Only the structure the item generator and the chunker use is carried over; nothing is executed and no
directive's content is fetched (``include``, ``raw``, ``image`` are dropped):

- a section title underlined (and optionally overlined) by a run of one punctuation character at least as
  long as the title becomes a Markdown heading, its level the order in which each style first appears
  (the reStructuredText rule);
- a field list line (``:Version: 5.0``) becomes ``Version: 5.0``;
- an admonition (``.. note::``, ``.. warning::`` ...) becomes a bold label line with its content after it
  (``**Note:** This procedure applies ...``), the way Markdown sources write one;
- a definition list item (a term, then its definition indented under it) becomes ``**Term:** definition``, or one
  sentence when the definition opens with what the term does ("Keeps the register" -> "The Supervisor keeps ...");
- a comment (``.. anything`` without ``::``) and the directives that carry no text are dropped; ``::``
  ending a paragraph is ``:``; inline markup is reduced to its text (````code````, ``:role:`text```,
  ```text <url>`_``).
"""

from __future__ import annotations

import re

_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:._])\1{2,}\s*$")
_FIELD = re.compile(r"^:([^:\s][^:]*):\s*(.*)$")
_DIRECTIVE = re.compile(r"^\.\.\s+([\w-]+)::\s*(.*)$")
_COMMENT = re.compile(r"^\.\.(?:\s|$)")
_ACTS = re.compile(r"[A-Z][a-z]{2,}s")
_NOT_VERBS = frozenset("This Thus Unless Always Sometimes Perhaps Its Hers Ours Theirs Yours Whereas Was Has Is As "
                       "Less Plus Minus Class Glass Gas Process Access Address Status Campus Basis Bus Series Species "
                       "Analysis Diagnosis".split())
"""A definition that opens with a verb in the third person ("Keeps the cabinet register ...") says what its term does:
read as one sentence ("The Biological Safety Officer keeps ..."); one opening otherwise stays a label line."""
_DROPPED = frozenset("image figure include raw contents sectnum toctree meta target-notes".split())
_INLINE = (
    (re.compile(r"`([^`<]+?)\s*<[^`>]*>`__?"), r"\1"),  # `text <url>`_
    (re.compile(r":[\w:+-]+:`([^`]*)`"), r"\1"),  # :role:`text`
    (re.compile(r"``([^`]+)``"), r"\1"),  # ``literal``
    (re.compile(r"`([^`]+)`_{0,2}"), r"\1"),  # `interpreted` or a reference
    (re.compile(r"\|([\w -]+)\|"), r"\1"),  # |substitution|
)


def _inline(line: str) -> str:
    for pattern, repl in _INLINE:
        line = pattern.sub(repl, line)
    return line


def _indented(lines: list[str], i: int) -> tuple[list[str], int]:
    """The indented block starting at ``lines[i]`` (blank lines inside it kept), dedented, and where it ends."""
    block: list[str] = []
    while i < len(lines) and (not lines[i].strip() or lines[i][:1].isspace()):
        block.append(lines[i].strip())
        i += 1
    while block and not block[-1]:
        block.pop()
    return block, i


def rst_as_markdown(text: str) -> str:
    """``text``, a reStructuredText document, written as Markdown (see the module docstring)."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    styles: list[tuple[str, bool]] = []
    out: list[str] = []
    i = counter = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        over = _ADORNMENT.match(line)
        # a title: an overline, the title, an underline of the same character; or the title and its underline
        if over and i + 2 < len(lines) and lines[i + 1].strip() and _ADORNMENT.match(lines[i + 2]) \
                and lines[i + 2].strip()[0] == stripped[0]:
            title, style, i = lines[i + 1].strip(), (stripped[0], True), i + 3
        elif stripped and not over and not line[:1].isspace() and i + 1 < len(lines) \
                and (under := _ADORNMENT.match(lines[i + 1])) and len(lines[i + 1].strip()) >= len(stripped):
            title, style, i = stripped, (under.group(1), False), i + 2
        else:
            title = ""
        if title:
            if style not in styles:
                styles.append(style)
            out += [f"{'#' * min(6, styles.index(style) + 1)} {_inline(title)}", ""]
            continue
        if over:  # a transition (a line of punctuation alone)
            out.append("")
            i += 1
            continue
        if (directive := _DIRECTIVE.match(stripped)) and not line[:1].isspace():
            name, argument = directive.group(1).lower(), directive.group(2).strip()
            block, i = _indented(lines, i + 1)
            block = [b for b in block if not _FIELD.match(b)]  # the directive's options
            if name in _DROPPED:
                continue
            label = f"**{name.replace('-', ' ').capitalize()}:** " if name not in (
                "code", "code-block", "sourcecode", "highlight", "container", "rubric", "topic") else ""
            body = " ".join(b for b in [argument, *block] if b) if label else "\n".join([argument, *block]).strip()
            out += [f"{label}{_inline(body)}", ""]
            continue
        if _COMMENT.match(stripped) and not line[:1].isspace():
            _block, i = _indented(lines, i + 1)  # a comment, and the block indented under it
            continue
        if (field := _FIELD.match(line)) is not None:
            out.append(f"{field.group(1).strip()}: {_inline(field.group(2).strip())}")
            i += 1
            continue
        if stripped == "::":
            i += 1
            continue
        if stripped and not line[:1].isspace() and (not out or not out[-1].strip()) and i + 1 < len(lines) \
                and lines[i + 1][:1].isspace() and lines[i + 1].strip() and not re.match(r"^(?:[*+-]|\d+[.)]|#\.)\s", stripped):
            block, i = _indented(lines, i + 1)  # a definition list item: the term, its definition under it
            term, definition = _inline(stripped), _inline(" ".join(b for b in block if b))
            first = definition.split(" ", 1)[0]
            if _ACTS.fullmatch(first) and first not in _NOT_VERBS:  # "Keeps the register ...": the term does it
                out += [f"The {term} {definition[:1].lower()}{definition[1:]}", ""]
            else:
                out += [f"**{term}:** {definition}", ""]
            continue
        if stripped.endswith("::"):
            line = line.rstrip()[:-2].rstrip() + ":"
        if (auto := re.match(r"^(\s*)#\.(?=\s)", line)) is not None:  # an auto-numbered list item, numbered
            counter = counter + 1 if out and re.match(r"^\s*\d+\.\s", out[-1]) else 1
            line = f"{auto.group(1)}{counter}.{line[auto.end():]}"
        out.append(_inline(line))
        i += 1
    return re.sub(r"\n{3,}", "\n\n", "\n".join(out)).strip() + "\n"
