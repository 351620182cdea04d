"""Entity extraction for the context graph: a deterministic offline extractor and an LLM one.

Offline (the default, and what the offline kernel uses): candidates are

- *names*: runs of capitalised words (``Black Death``, ``Joseph Priestley``, ``DNA``), with
  inner connectors such as ``of``/``de`` (``Bank of England``); a capitalised word that starts a
  sentence counts as a name only if the corpus also capitalises it mid-sentence;
- *terms*: runs of lower-case content words (stop words and punctuation end a run) and their
  1- to 3-word sub-phrases (``chemical element``, ``photosynthesis``), plurals folded onto a
  singular seen in the corpus;
- *CJK terms*: 2- to 4-character runs of CJK text between function characters and punctuation.

Frequency filtering over the whole corpus: names are kept as soon as they occur; a term (or CJK
term) must occur in at least ``min_df`` chunks, must not occur in more than ``max_df_ratio`` of
them (once the corpus has ``min_chunks_for_max_df`` chunks), and is dropped when a kept longer term
containing it has the same chunk frequency (it never occurs on its own). Each chunk keeps at most
``max_per_chunk`` entities: names first, then longer terms, then rarer ones.

LLM (when a kernel endpoint is configured): JudgeAgent's entity-labelling prompt, several chunks
per call (upstream's batch of 10), answered as JSON and validated.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from engine.text.cjk import CJK_RUN_RE
from engine.text.lexicon import FUNCTION_WORDS, GENERIC_WORDS
from engine.text.normalize import normalize_entity
from engine.text.tokens import WORD_RE

# Function words (never an entity, stripped from the start of a capitalised run) and generic words
# (never a domain term on their own): engine.text.lexicon.
STOP_WORDS = FUNCTION_WORDS | GENERIC_WORDS

# Lower-case words that may join capitalised words inside one name.
NAME_CONNECTORS = frozenset({"of", "de", "da", "del", "der", "van", "von", "la", "le", "du", "di", "y", "bin"})

# CJK function characters that end a CJK term (particles, copulas, pronouns, common prepositions).
CJK_BREAKS = frozenset("的了是在和与及或也都而并被把从对为以于等这那其之我你他她它们就还又很所着过得吗呢吧啊")
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?。！？；])\s*|\n+")
_NUMERIC = re.compile(r"^[\d.,\-]+$")
_POSSESSIVE = re.compile(r"['’]s$")


@dataclass(frozen=True)
class Candidate:
    """One mention of a possible entity in a text."""

    surface: str
    norm: str
    kind: str  # "name", "term" or "cjk"
    words: int


def _is_capitalised(word: str) -> bool:
    return word[:1].isupper() or (len(word) > 1 and word.isupper())


def _fold_plural(word: str, vocabulary: set[str] | None) -> str:
    if vocabulary is None or len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith(("ss", "us", "is", "ous")):
        return word
    if word.endswith("ies") and word[:-3] + "y" in vocabulary:
        return word[:-3] + "y"
    if word.endswith("es") and word[:-2] in vocabulary:
        return word[:-2]
    if word[:-1] in vocabulary:
        return word[:-1]
    return word


class OfflineEntityExtractor:
    """The deterministic extractor (see the module docstring for the rules).

    Args:
        min_df: a term must occur in at least this many chunks.
        max_df_ratio: a term in more than this share of chunks is too common to be an entity.
        min_chunks_for_max_df: the share rule applies only to corpora of at least this many chunks.
        max_per_chunk: at most this many entities per chunk.
    """

    name = "offline"

    def __init__(self, min_df: int = 2, max_df_ratio: float = 0.5, min_chunks_for_max_df: int = 20,
                 max_per_chunk: int = 15):
        self.min_df = min_df
        self.max_df_ratio = max_df_ratio
        self.min_chunks_for_max_df = min_chunks_for_max_df
        self.max_per_chunk = max_per_chunk

    # -- candidates ---------------------------------------------------------------------------
    def _sentence_candidates(self, sentence: str, mid_caps: set[str] | None,
                             vocabulary: set[str] | None) -> list[Candidate]:
        out: list[Candidate] = []
        # Possessives are not part of a name: "Earth's" -> "Earth".
        words = [(_POSSESSIVE.sub("", m.group()), m.start(), m.end()) for m in WORD_RE.finditer(sentence)]
        # A run is broken by any punctuation between two words (a space or a hyphen is not).
        breaks = [i > 0 and sentence[words[i - 1][2]:words[i][1]].strip() not in ("", "-")
                  for i in range(len(words))]

        # Names: runs of capitalised words with inner connectors.
        i = 0
        while i < len(words):
            w = words[i][0]
            if not _is_capitalised(w) or _NUMERIC.match(w):
                i += 1
                continue
            j = i + 1
            while j < len(words) and not breaks[j]:
                nxt = words[j][0]
                if _is_capitalised(nxt) and not _NUMERIC.match(nxt):
                    j += 1
                elif (nxt in NAME_CONNECTORS and j + 1 < len(words) and not breaks[j + 1]
                      and _is_capitalised(words[j + 1][0])):
                    j += 2
                else:
                    break
            run = [words[k][0] for k in range(i, j)]
            start = i
            # Drop leading stop words ("The Black Death" -> "Black Death", "However Priestley").
            while run and run[0].lower() in FUNCTION_WORDS:
                run = run[1:]
                start += 1
            if run:
                sentence_initial = start == 0
                if len(run) == 1 and sentence_initial:
                    lower = run[0].lower()
                    if mid_caps is not None and run[0] in mid_caps and lower not in STOP_WORDS:
                        out.append(Candidate(run[0], normalize_entity(run[0]), "name", 1))
                    elif lower not in STOP_WORDS and len(lower) >= 3 and not _NUMERIC.match(lower):
                        folded = _fold_plural(lower, vocabulary)
                        out.append(Candidate(folded, normalize_entity(folded), "term", 1))
                elif len(run) > 1 or (len(run[0]) > 1 and run[0].lower() not in GENERIC_WORDS):
                    # A lone capital letter or a capitalised generic word ("Great") is not a name.
                    surface = " ".join(run)
                    out.append(Candidate(surface, normalize_entity(surface), "name", len(run)))
            i = j

        # Terms: runs of lower-case content words and their 1- to 3-word sub-phrases.
        run: list[str] = []

        def flush() -> None:
            for n in range(1, min(3, len(run)) + 1):
                for s in range(0, len(run) - n + 1):
                    gram = run[s: s + n]
                    if n == 1 and len(gram[0]) > 4 and gram[0].endswith("ed"):
                        continue  # a lone past participle ("affected") is not a term
                    gram[-1] = _fold_plural(gram[-1], vocabulary)
                    surface = " ".join(gram)
                    out.append(Candidate(surface, normalize_entity(surface), "term", n))
            run.clear()

        for k, (w, _s, _e) in enumerate(words):
            lower = w.lower()
            if breaks[k]:
                flush()
            is_content = (w.islower() and lower not in STOP_WORDS and len(lower) >= 3
                          and not _NUMERIC.match(lower) and any(ch.isalpha() for ch in lower)
                          and not (len(lower) > 4 and lower.endswith("ly")))  # adverbs end a term
            if is_content:
                run.append(lower)
            else:
                flush()
        flush()

        # CJK terms: 2-4 character pieces between function characters.
        for m in CJK_RUN_RE.finditer(sentence):
            for piece in re.split(f"[{''.join(CJK_BREAKS)}]", m.group()):
                for n in range(2, min(4, len(piece)) + 1):
                    for s in range(0, len(piece) - n + 1):
                        gram = piece[s: s + n]
                        out.append(Candidate(gram, gram, "cjk", n))
        return out

    def candidates(self, text: str, mid_caps: set[str] | None = None,
                   vocabulary: set[str] | None = None) -> list[Candidate]:
        """Every candidate mention in a text, before any frequency filtering."""
        out: list[Candidate] = []
        for sentence in _SENTENCE_SPLIT.split(text):
            if sentence.strip():
                out.extend(self._sentence_candidates(sentence, mid_caps, vocabulary))
        return out

    @staticmethod
    def _corpus_context(texts: Sequence[str]) -> tuple[set[str], set[str]]:
        mid_caps: set[str] = set()
        vocabulary: set[str] = set()
        for text in texts:
            for sentence in _SENTENCE_SPLIT.split(text):
                words = WORD_RE.findall(sentence)
                for k, w in enumerate(words):
                    if k > 0 and _is_capitalised(w):
                        mid_caps.add(w)
                    if w.islower():
                        vocabulary.add(w)
        return mid_caps, vocabulary

    # -- corpus extraction --------------------------------------------------------------------
    def extract(self, texts: Sequence[str]) -> list[list[str]]:
        """Entities of each text, filtered by frequency over all of them.

        Args:
            texts: the chunks of one knowledge base (the corpus for the frequency rules).

        Returns:
            For each text, its entity names (the most frequent surface form of each), in a fixed
            order: names, then longer terms, each by mentions in the text, then by spread.
        """
        mid_caps, vocabulary = self._corpus_context(texts)
        per_text: list[list[Candidate]] = [self.candidates(t, mid_caps, vocabulary) for t in texts]
        df: Counter[str] = Counter()
        total: Counter[str] = Counter()
        kinds: dict[str, str] = {}
        words: dict[str, int] = {}
        surfaces: dict[str, Counter[str]] = defaultdict(Counter)
        for cands in per_text:
            seen = set()
            for c in cands:
                if not c.norm:
                    continue
                total[c.norm] += 1
                surfaces[c.norm][c.surface] += 1
                # A string seen as a name anywhere is a name.
                if kinds.get(c.norm) != "name":
                    kinds[c.norm] = c.kind
                words[c.norm] = c.words
                if c.norm not in seen:
                    seen.add(c.norm)
                    df[c.norm] += 1
        n = len(texts)
        max_df = n * self.max_df_ratio if n >= self.min_chunks_for_max_df else math.inf
        kept: set[str] = set()
        for norm, kind in kinds.items():
            if kind == "name":
                kept.add(norm)
            elif kind == "term":
                if self.min_df <= df[norm] <= max_df:
                    kept.add(norm)
            elif kind == "cjk" and total[norm] >= self.min_df and df[norm] <= max_df:
                kept.add(norm)
        kept = self._drop_subsumed(kept, kinds, df, total)
        result: list[list[str]] = []
        for cands in per_text:
            tf = Counter(c.norm for c in cands if c.norm in kept)
            norms = list(tf)
            # Names first, then longer terms; within each, the more mentioned, then the more widespread.
            norms.sort(key=lambda x: (kinds[x] != "name", 0 if kinds[x] == "name" else -words[x], -tf[x], -df[x], x))
            result.append([surfaces[x].most_common(1)[0][0] for x in norms[: self.max_per_chunk]])
        return result

    @staticmethod
    def _drop_subsumed(kept: set[str], kinds: dict[str, str], df: Counter[str], total: Counter[str]) -> set[str]:
        """Drop a term that never occurs outside a kept longer term or name containing it."""

        def count(norm: str) -> int:
            return total[norm] if kinds[norm] == "cjk" else df[norm]

        drop: set[str] = set()
        for other in kept:
            if kinds[other] == "cjk":
                parts = {other[s: e] for s in range(len(other)) for e in range(s + 2, len(other) + 1)}
            else:
                tokens = other.split(" ")
                parts = {" ".join(tokens[s: e]) for s in range(len(tokens)) for e in range(s + 1, len(tokens) + 1)}
            parts.discard(other)
            for sub in parts:
                if sub in kept and kinds[sub] != "name" and count(other) >= count(sub):
                    drop.add(sub)
        return kept - drop

    def extract_query(self, text: str) -> list[str]:
        """Candidate entities of a single question (no corpus, so no frequency filtering).

        Names and multi-word terms come first, then single words, then CJK terms, longest first.
        """
        cands = self.candidates(text, mid_caps=None, vocabulary=None)
        order = {"name": 0, "term": 1, "cjk": 2}
        uniq: dict[str, Candidate] = {}
        for c in cands:
            if c.norm and c.norm not in uniq:
                uniq[c.norm] = c
        ranked = sorted(uniq.values(), key=lambda c: (order[c.kind], -c.words, -len(c.surface)))
        return [c.surface for c in ranked]


# -- LLM extraction -----------------------------------------------------------------------------
LABEL_SYSTEM = (
    "You are an intelligent Named Entity Recognition system. Please extract all entities that are "
    "important for solving the text.\nDon't include the whole article as a sentence in the return json format."
)
LABEL_PROMPT = """Please identify and label the entities in the following numbered texts, and return the entity \
labeling results for each text.
The results for each text should be independent. Entities are the proper nouns and the domain concepts a \
reader must know to understand the text (people, places, organisations, substances, diseases, methods, \
events, technical terms); not whole sentences, not numbers on their own.{area}

Return a JSON object with only one key "labeled_data"; its value is a list with one element per text, in \
order, each a dictionary with the text's number and its entity list:
{{"labeled_data": [{{"index": 1, "entity_list": [{{"entity_text": "...", "entity_type": "..."}}]}}, \
{{"index": 2, "entity_list": [...]}}]}}

Text list:
{texts}"""


class LabeledEntity(BaseModel):
    """One entity in the LLM's answer."""

    entity_text: str
    entity_type: str = ""


class LabeledText(BaseModel):
    """The entities of one numbered text in the LLM's answer."""

    index: int
    entity_list: list[LabeledEntity] = Field(default_factory=list)


class LabeledData(BaseModel):
    """The LLM's whole answer for one batch."""

    labeled_data: list[LabeledText]


class LLMEntityExtractor:
    """Entities labelled by the kernel LLM, ``batch_size`` chunks per call (JudgeAgent's prompt).

    Args:
        client: an ``engine.llm.LLMClient`` for the kernel.
        batch_size: chunks per call (upstream: 10).
        area: optional domain hint added to the prompt (e.g. "medicine").
        max_chars: a chunk longer than this is cut for the prompt.
    """

    def __init__(self, client, batch_size: int = 10, area: str | None = None, max_chars: int = 2000):
        self.client = client
        self.batch_size = max(1, batch_size)
        self.area = area
        self.max_chars = max_chars
        self.name = f"llm:{client.endpoint.model}"

    def _messages(self, texts: Sequence[str]) -> list[dict[str, str]]:
        numbered = "\n\n".join(f"Text {i + 1}: {t[: self.max_chars]}" for i, t in enumerate(texts))
        area = f"\nLabel the named entities and concepts used in the {self.area} field." if self.area else ""
        system = LABEL_SYSTEM + (f"\nArea: {self.area}" if self.area else "")
        return [{"role": "system", "content": system},
                {"role": "user", "content": LABEL_PROMPT.format(area=area, texts=numbered)}]

    async def _batch(self, texts: Sequence[str]) -> list[list[str]]:
        def check(value: LabeledData) -> str | None:
            indexes = {item.index for item in value.labeled_data}
            missing = [i for i in range(1, len(texts) + 1) if i not in indexes]
            if missing:
                return f"labeled_data has no element for text(s) {missing}; give one element per text"
            return None

        answer = await self.client.json(self._messages(texts), LabeledData, validate=check)
        by_index: dict[int, list[str]] = defaultdict(list)
        for item in answer.labeled_data:
            for ent in item.entity_list:
                name = re.sub(r"\s+", " ", ent.entity_text).strip()
                if name and len(name) <= 120 and normalize_entity(name) and name not in by_index[item.index]:
                    by_index[item.index].append(name)
        return [by_index.get(i + 1, []) for i in range(len(texts))]

    async def extract(self, texts: Sequence[str]) -> list[list[str]]:
        """Entities of each text, one LLM call per batch, batches run concurrently.

        Raises:
            engine.llm.LLMError: a call failed for good (after the client's retries and repairs).
        """
        batches = [texts[i: i + self.batch_size] for i in range(0, len(texts), self.batch_size)]
        results = await asyncio.gather(*(self._batch(b) for b in batches))
        return [ents for batch in results for ents in batch]
