"""HTML read as the Markdown the rest of viva reads (knowledge-base sources ending ``.html`` or ``.htm``).

A policy, a rule book or a procedure is often published as a web page. Only its text and the structure the
chunker and the item generator use are carried over, by the standard library's tolerant parser
(:class:`html.parser.HTMLParser`: a page that is not well formed is still read); nothing is fetched or run:

- ``h1``-``h6`` become Markdown headings of their level; the page's ``<title>`` is the first heading when the body
  has no ``h1``;
- paragraphs and other blocks (``p``, ``div``, ``section``, ``blockquote``...) are paragraphs, ``br`` a line break;
- list items (``li``) become ``- `` lines (numbered ``1.`` ... in an ``ol``), a nested list indented;
- a table becomes a Markdown table (a header rule under its first row), a cell's text on one line;
- definition lists (``dt``/``dd``) become ``**Term:** definition`` lines, the way a Markdown source writes a label;
- ``script``, ``style``, ``template``, ``noscript``, ``svg`` and ``iframe`` content, comments and processing
  instructions are dropped; inline markup (``a``, ``strong``, ``em``, ``span``...) is reduced to its text, and
  character references are decoded.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_DROPPED = frozenset("script style template noscript svg iframe object math canvas select button".split())
_BLOCKS = frozenset("p div section article main aside header footer nav blockquote figure figcaption address "
                    "details summary form fieldset pre hr center".split())
_HEADINGS = {f"h{n}": n for n in range(1, 7)}


class _Reader(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []  # finished lines (blank lines between blocks)
        self.line: list[str] = []  # the text of the block being read
        self.prefix = ""  # what opens the current line: "# ", "- ", "**Term:** "
        self.skip = 0  # depth inside dropped elements
        self.title: list[str] = []
        self.in_title = False
        self.lists: list[list[int]] = []  # open lists: [numbered?, count]
        self.table: list[list[str]] | None = None
        self.row: list[str] | None = None
        self.cell: list[str] | None = None
        self.term = ""
        self.has_h1 = False

    # -- text ------------------------------------------------------------------------------------
    def handle_data(self, data: str) -> None:
        if self.skip:
            return
        if self.in_title:
            self.title.append(data)
            return
        if self.cell is not None:
            self.cell.append(data)
        else:
            self.line.append(data)

    def _flush(self, blank: bool = True) -> None:
        text = re.sub(r"[ \t\r\f\v]+", " ", "".join(self.line)).strip()
        text = re.sub(r" *\n *", "\n", text)
        if text:
            lines = [ln for ln in text.split("\n") if ln.strip()]
            self.out.append(self.prefix + lines[0])
            indent = " " * len(self.prefix) if self.prefix.startswith(("-", "1", " ")) else ""
            self.out += [indent + ln for ln in lines[1:]]
            if blank:
                self.out.append("")
        self.line, self.prefix = [], ""

    # -- tags ------------------------------------------------------------------------------------
    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _DROPPED:
            self.skip += 1
            return
        if self.skip:
            return
        if tag == "title":
            self.in_title = True
        elif tag in _HEADINGS:
            self._flush()
            self.has_h1 = self.has_h1 or tag == "h1"
            self.prefix = "#" * _HEADINGS[tag] + " "
        elif tag in ("ul", "ol"):
            self._flush(blank=not self.lists)
            self.lists.append([tag == "ol", 0])
        elif tag == "li":
            self._flush(blank=False)
            depth = max(0, len(self.lists) - 1)
            marker = "- "
            if self.lists:
                self.lists[-1][1] += 1
                if self.lists[-1][0]:
                    marker = f"{self.lists[-1][1]}. "
            self.prefix = "  " * depth + marker
        elif tag == "br":
            if self.cell is not None:
                self.cell.append(" ")
            else:
                self.line.append("\n")
        elif tag == "table":
            self._flush()
            self.table = []
        elif tag == "tr" and self.table is not None:
            self.row = []
        elif tag in ("td", "th") and self.row is not None:
            self.cell = []
        elif tag == "dt":
            self._flush()
        elif tag == "dd":
            self.term = re.sub(r"\s+", " ", "".join(self.line)).strip()
            self.line = []
            self.prefix = f"**{self.term.rstrip(':')}:** " if self.term else ""
        elif tag in _BLOCKS:
            self._flush()

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "br" and not self.skip:
            self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        if tag in _DROPPED:
            self.skip = max(0, self.skip - 1)
            return
        if self.skip:
            return
        if tag == "title":
            self.in_title = False
        elif tag in _HEADINGS or tag in _BLOCKS or tag == "dd":
            self._flush()
        elif tag == "li":
            self._flush(blank=False)
        elif tag in ("ul", "ol"):
            self._flush(blank=False)
            if self.lists:
                self.lists.pop()
            if not self.lists and self.out and self.out[-1] != "":
                self.out.append("")
        elif tag in ("td", "th") and self.row is not None and self.cell is not None:
            self.row.append(re.sub(r"\s+", " ", "".join(self.cell)).strip().replace("|", "/"))
            self.cell = None
        elif tag == "tr" and self.table is not None and self.row is not None:
            if any(self.row):
                self.table.append(self.row)
            self.row = None
        elif tag == "table" and self.table is not None:
            self._table()

    def _table(self) -> None:
        rows, self.table = self.table or [], None
        if not rows:
            return
        width = max(len(r) for r in rows)
        rows = [r + [""] * (width - len(r)) for r in rows]
        self.out.append("| " + " | ".join(rows[0]) + " |")
        self.out.append("|" + "|".join(["---"] * width) + "|")
        self.out += ["| " + " | ".join(r) + " |" for r in rows[1:]]
        self.out.append("")

    def close(self) -> None:
        super().close()
        if self.table is not None:
            self._table()
        self._flush()


def html_as_markdown(text: str) -> str:
    """The text of an HTML page as Markdown (see the module's docstring)."""
    reader = _Reader()
    reader.feed(text)
    reader.close()
    lines = reader.out
    title = re.sub(r"\s+", " ", "".join(reader.title)).strip()
    if title and not reader.has_h1:
        lines = [f"# {title}", "", *lines]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip() + "\n"
