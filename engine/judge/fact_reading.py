"""The free-text judge's reading of a criterion and a reply: the claim a criterion states, and the reply's
candidate statements (sentences, clauses with their negation scope, keyword lists, an opening yes/no).

:func:`claim_of` strips a criterion's scaffolding ("States that ...", a rubric's question about the
answer, a points annotation), reads the SQuAD criterion form (``Answers "Q" with "A"``) and takes a
fill-in-the-blank criterion's parts from its cloze field (:class:`engine.text.cloze.Cloze`, never from
its wording); :func:`candidates` cuts a reply into what it asserts
(:func:`engine.judge.stance.judged_text`), its sentences, the pairs of adjacent sentences and the
whole reply. The scoring is :mod:`engine.judge.freetext`'s.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache

from engine.judge.stance import judged_text, refutes
from engine.text.cjk import CJK
from engine.text.cloze import Cloze
from engine.text.lexicon import NEGATION_CJK, STOPWORDS, is_negation
from engine.text.negation import clause_parts, scoped_clauses
from engine.text.quantities import UNITS
from engine.text.sentences import split_sentences
from engine.text.tokens import content_stems, content_words, stem, tokens

LIST_MIN_ITEMS = 4
"""Items a bare list needs before it counts as a keyword list (three short items may be an answer)."""

_SCAFFOLD = re.compile(
    r"^\s*(?:(?:the\s+)?(?:answer|response|reply|target|model|candidate|agent)\s+)?"
    r"(?:(?:should|must|will|has\s+to|needs\s+to)\s+)?"
    r"(?:(?:correctly|incorrectly|wrongly|falsely|mistakenly|explicitly|clearly|accurately)\s+)?"
    r"(?:states?|says?|mentions?|notes?|explains?|claims?|asserts?|argues?|suggests?|indicates?|"
    r"identifies|identify|points?\s+out|recogni[sz]es?|describes?|reports?|shows?|includes?|"
    r"gives?|answers?|names?|specifies|specify|tells?|believes?|thinks?)\b"
    r"(?:\s+that\b)?[\s:,]*"
    r"|^\s*(?:声称|指出|提到|说明|认为|回答|表示|说出|说|答出)(?:了)?[：:，,]?", re.IGNORECASE)
_RESPONDENT = r"(?:the\s+|this\s+|its\s+)?(?:answer|response|reply|target|model|candidate|agent|assistant|output|summary|text|student|it|they)"
_SAYS = (r"(?:correctly\s+|explicitly\s+|clearly\s+|accurately\s+)?(?:state|say|mention|note|explain|claim|assert|"
         r"suggest|indicate|identify|point\s+out|recogni[sz]e|describe|report|show|include|give|answer|name|specify|"
         r"tell|acknowledge|address|discuss|convey|cover|emphasi[sz]e|highlight|recommend|advise|warn)(?:s|es|ed)?")
_LIST_MARK = re.compile(r"^\s*(?:[-*•·]|\(?\d{1,2}[.)]|\(?[a-z][.)]|\[\s*[ x]?\s*\])\s+", re.IGNORECASE)
_ASKED = re.compile(
    rf"^\s*(?:(?:does|do|did|will|would|should|can|could)\s+{_RESPONDENT}\s+{_SAYS}|"
    rf"(?:is|was|are|were)\s+(?:it|there\s+(?:a|any)\s+(?:mention|statement|note)\s+(?:of|that))\s*"
    rf"(?:(?:mentioned|stated|noted|explained|said|made\s+clear|clear|true)\s+)?|"
    rf"whether\s+(?:or\s+not\s+)?{_RESPONDENT}\s+{_SAYS})\b(?:\s*that\b)?[\s:,]*", re.IGNORECASE)
_POINTS = re.compile(r"\s*[(\[]\s*[+-]?\d+(?:\.\d+)?\s*(?:points?|pts?|marks?|p)?\s*[)\]]\s*$", re.IGNORECASE)
_FACT_THAT = re.compile(r"^\s*(?:the\s+fact|the\s+idea|the\s+point)\s+that\s+", re.IGNORECASE)
_SQUAD = re.compile(r'^Answers\s+"(?P<q>.+?)"\s+with\s+"(?P<a>.+?)"', re.DOTALL)
_LIST_SPLIT = re.compile(r"[,;/|•·\n、，；]+")
LINKING = frozenset("""is are was were be been being am has have had do does did can could will would shall should
may might must not no never because since so that which who whom whose when where while if than then by to into
causes cause caused makes make made gives give gave means mean meant helps help helped uses use used lets let
produces produce produced leads lead led becomes become became
是 有 在 会 能 被 把 让 使 为 不 没""".split())
_SENTENCE_PUNCT = re.compile(r"[.!?。！？]\s*$")


def _raw_tokens(text: str) -> list[str]:
    return tokens(text)


def _negated(text: str) -> bool:
    return any(is_negation(t) for t in tokens(text)) or bool(NEGATION_CJK.search(text or ""))


def is_number_stem(stem: str) -> bool:
    """A digit token (a number or a digit ordinal)."""
    return stem[:1].isdigit()


def bound_numbers(text: str, reach: int = 1) -> list[tuple[str, tuple[str, ...]]]:
    """The numbers of a text, each with the stems of the content words after it (the thing it counts).

    At most ``reach`` content words are taken, up to the next number or function word: "10 points" ->
    (10, (point,)), "a seven-point lead" -> (7, (point,)), "10-man Inverness" -> (10, (man,)), "up to
    2,000 a day" -> (2000, ()), "300 helmets and bicycles" -> (300, (helmet,)); never past a comma, a colon,
    a semicolon, a bracket or a dash (:data:`_BOUND_END`). A claim's number counts its first word (``reach`` 1); a reply's
    counts any of its first three ("nine job listings" counts listings). The number 1 is left out: it
    is mostly the article ("one of them"), but before a unit ("1 mg per kg").
    """
    out = []
    for part in _BOUND_END.split(text or ""):
        toks = tokens(part)
        for i, t in enumerate(toks):
            if not is_number_stem(t) or (t in ("1", "1st") and not (i + 1 < len(toks) and toks[i + 1] in UNITS)):
                continue  # ("1 mg per kg" is a dose: one before a unit is a number)
            counted: list[str] = []
            after = toks[i + 1:]
            if after[:1] == ["per"] and len(after) > 1:
                after = after[1:]  # "6.02214076e23 per mole" counts moles ("mol⁻¹")
            for nxt in after:
                if is_number_stem(nxt) or is_negation(nxt) or nxt in STOPWORDS or len(counted) >= reach:
                    break
                counted.append(stem(nxt))
            out.append((t, tuple(counted)))
    return out


_BOUND_END = re.compile(r"[,;:](?=\s)|[()]|\s[-–—]\s")
"""Where a number's thing ends: a comma, semicolon or colon before a space, a bracket or a dash ("signed in
1648, ended the war": 1648 counts nothing; "1,648" is one number)."""


def _blanked(sentence: str, answer: str) -> str:
    """A cloze's sentence with its missing part shown as a blank (the question the target was asked).

    The criterion's sentence is the completed one; as context it must not hold the answer, or the
    answer's words would count as words the reply copied from the question.
    """
    at = sentence.lower().find(answer.lower()) if answer else -1
    return sentence if at < 0 else f"{sentence[:at]}____{sentence[at + len(answer):]}"


def claim_of(criterion: str, cloze: Cloze | None = None) -> tuple[str, str]:
    """(claim, extra question context) of a criterion: scaffolding removed.

    A cloze criterion (its parts in ``cloze``: X missing from S) -> ("X", S with X blanked as ``____``),
    whatever its text; ``Answers "Q" with "A"`` -> ("A", "Q");
    "States that liquid oxygen is pale blue" -> ("liquid oxygen is pale blue", "").
    """
    if cloze is not None:
        answer = cloze.answer.strip()
        return answer, _blanked(cloze.sentence.strip(), answer)
    text = (criterion or "").strip()
    m = _SQUAD.match(text)
    if m:
        return m.group("a").strip(), m.group("q").strip()
    # a rubric's own wording around the fact: a list mark, a question about the answer ("Does the
    # response mention that X?", "Is it stated that X?", "Whether the answer says X"), the scaffolding
    # verbs ("States that X"), "the fact that", a points annotation ("(2 points)")
    stripped = _POINTS.sub("", _LIST_MARK.sub("", text, count=1)).strip()
    asked = _ASKED.sub("", stripped, count=1)
    if asked != stripped:
        stripped = asked.strip().rstrip("?").strip()
    stripped = _FACT_THAT.sub("", _SCAFFOLD.sub("", stripped, count=1)).strip()
    return (stripped or text), ""



@dataclass(frozen=True)
class ScopedClause:
    """A clause of a candidate with its negation scope, content stems and subject."""

    text: str
    stems: frozenset[str]
    negated: bool
    subject: frozenset[str]  # content stems before the clause's first verb
    head: frozenset[str] = frozenset()  # stems before the clause's own negation word: outside its scope
    numbers: frozenset[tuple[str, tuple[str, ...]]] = frozenset()  # (number, the stems after it)
    words: frozenset[str] = frozenset()  # the content words as written (lower case), numbers left out
    echoed: frozenset[tuple[str, tuple[str, ...]]] = frozenset()  # numbers masked as the examiner's (they earn
    # nothing, but a claim's number said as the examiner's other value is still another number: "section 8" after
    # "I have read that it was 8, not 6")


@dataclass
class Candidate:
    """One statement of the reply a claim is matched against: a sentence, two adjacent sentences or the whole reply."""

    text: str
    clauses: tuple[ScopedClause, ...]
    keyword_list: tuple[str, ...] | None  # the list's items when the candidate is a bare list
    answer_word: str | None  # "yes"/"no" when the candidate opens with a bare yes or no
    asked: str = ""  # the question the candidate's sentences answered (the context of its cosine)
    key: tuple = ()  # what its clauses, list and yes/no follow from: its sentences and their refutations
    asks: tuple[str, ...] = ()  # per sentence, the question it answered
    epoch: int = 0  # the turn of its earliest sentence (a summary of several turns; else 0)
    mask: tuple = ()  # per sentence, the stems the examiner gave after ``epoch`` and by the turn the sentence
    # was said, masked out of its clauses (:func:`reply_candidates`); () when nothing is masked


@dataclass
class FactClaim:
    """A criterion read as a claim: its text, the question context, its stems, numbers and polarity."""

    text: str
    context: str
    extra: str  # the criterion's own question context (a SQuAD question, a cloze's blanked sentence)
    stems: list[str]  # all content stems of the claim, unique, in order
    facts: list[str]  # the fact words: stems not in the question (or all when none is left)
    given: bool  # every claim word is in the question (yes/no style)
    negated: bool
    predicate: set[str]  # the claim's stems after its subject
    neutral: frozenset[str] = frozenset()  # a negated claim's stems outside its negation's scope
    numbers: tuple[tuple[str, str], ...] = ()  # the fact numbers with the stem each counts ("" when none)
    weights: tuple[float, ...] = ()  # per fact word (in the order of ``facts``): :func:`word_weight`
    surface: tuple[tuple[str, str], ...] = ()  # (fact stem, the word as written) of the fact words a
    # reply may say in other words (no numbers; none when the claim has fewer than SOFT_MIN_FACTS)
    names: frozenset[str] = frozenset()  # the surface words written capitalised inside the claim (names)
    positive: frozenset[str] = frozenset()  # a negated claim's stems of clauses no negation reaches: said
    # negated, they contradict it ("Hands must be washed ..., because alcohol does not kill spores")
    asked: frozenset[str] = frozenset()  # the claim's stems the examiner's questions gave (discounted): a
    # candidate must say one of them or answer a question that holds one (it is about this claim)
    context_stems: frozenset[str] | None = field(default=None, compare=False, repr=False)  # stem_set(context),
    # when the caller had it folded (the offline judge's every question asked: freetext.Joined); else None
    seen: dict = field(default_factory=dict, compare=False, repr=False)  # what the judge worked out for
    # this claim, kept while it lives (a turn): its known words and each candidate's one-clause share
    given_numbers: tuple[tuple[str, str], ...] = ()  # the claim's numbers the question gave, each with the unit it
    # counts: they earn nothing, but another number of their kind in their place contradicts the claim


def _keyword_items(sentence: str) -> tuple[str, ...] | None:
    """The items of a bare keyword list, or None when the text makes a claim."""
    items = [i.strip(" .!?。！？\t") for i in _LIST_SPLIT.split(sentence)]
    items = [i for i in items if i]
    if len(items) < LIST_MIN_ITEMS:
        return None
    for item in items:
        words = _raw_tokens(item)
        if not words or len([w for w in words if not re.fullmatch(f"[{CJK}]", w)]) > 3 or len(item) > 24:
            return None
        if LINKING.intersection(words) or any(ch in LINKING for ch in item if re.fullmatch(f"[{CJK}]", ch)):
            return None
    return tuple(items)


_YES = re.compile(r"^\W*(?:yes|yeah|yep|correct|true|indeed|是的|是|对|对的)\W*$", re.IGNORECASE)
_NO = re.compile(r"^\W*(?:no|nope|nah|false|不|不是|不对|没有)\W*$", re.IGNORECASE)


Reply = str | Sequence[tuple[str, str]]
"""A reply to judge: one text, or (question, answer) pieces (a running summary of several turns)."""


@lru_cache(maxsize=1 << 14)
def _split(text: str) -> tuple[str, ...]:
    # Memoised (pure): a running summary brings back every earlier answer each turn. Stance before
    # match: only what the reply asserts (denials kept, a verdict's as a plain negation: the polarity rules
    # below read them; stance.judged_text).
    return tuple(split_sentences(judged_text(text)))


@lru_cache(maxsize=1 << 14)
def _sentence_facts(sentence: str) -> tuple[tuple[ScopedClause, ...], tuple[str, ...] | None, str | None, bool]:
    """(clauses, keyword-list items, opening yes/no, refutes the sentence before) of one sentence.

    A pure function of the sentence, memoised: a summary's earlier sentences are analysed once.
    """
    clauses = tuple(ScopedClause(c.text, frozenset(content_stems(c.text)), c.negated,
                            frozenset(content_stems(clause_subject(c.text))), frozenset(content_stems(c.head)),
                            frozenset(bound_numbers(c.text, 3)), frozenset(soft_words(c.text)))
                    for c in scoped_clauses(sentence))
    parts = clause_parts(sentence)
    first = parts[0][0] if parts else sentence
    answer_word = "yes" if _YES.match(first) else "no" if _NO.match(first) else None
    return clauses, _keyword_items(sentence), answer_word, refutes(sentence)


def reply_candidates(reply: Reply, question: str = "", said: Sequence[int] | None = None,
                     given: Sequence[frozenset[str]] | None = None) -> list[Candidate]:
    """The reply's candidate statements (the module docstring): what it asserts, sentence by sentence, in pairs and whole.

    For a summary of several turns, ``said`` gives the turn each (question, answer) piece was said in and
    ``given`` the stems the examiner had given by each turn (its questions' words, cumulative). A candidate's
    ``epoch`` is then the turn of its earliest sentence, and a word the examiner gave after that turn counts
    in a later sentence only when that sentence was said before the word was given: it is masked out of the
    clauses of a sentence said at or after the question that gave it (an echo proves nothing), and stays in
    the sentences said before. Without ``said`` every candidate is of epoch 0 and nothing is masked.
    """
    segments = [(question, reply)] if isinstance(reply, str) else list(reply)
    sentences: list[str] = []
    asked: list[str] = []
    turns: list[int] = []
    for k, (q, text) in enumerate(segments):
        q = (q or "").strip()
        for s in _split(text or ""):
            sentences.append(s)
            asked.append(q)
            turns.append(said[k] if said is not None else 0)
    if not sentences:
        return []
    facts = [_sentence_facts(s) for s in sentences]
    scoped = [f[0] for f in facts]
    for i, f in enumerate(facts):  # "That is false." refutes the sentence before it
        if i and f[3]:
            scoped[i - 1] = tuple(replace(c, negated=True, head=frozenset()) for c in scoped[i - 1])
    refuted = [i + 1 < len(facts) and facts[i + 1][3] for i in range(len(facts))]

    def spanning(idx: range) -> tuple[tuple[ScopedClause, ...], int, tuple]:
        # the clauses of these sentences, each sentence's masked by what was given after the earliest's turn
        epoch = min(turns[i] for i in idx)
        if given is None or all(turns[i] == epoch for i in idx):
            return tuple(c for i in idx for c in scoped[i]), epoch, ()
        mask = tuple(given[turns[i]] - given[epoch] for i in idx)
        if not any(mask):
            return tuple(c for i in idx for c in scoped[i]), epoch, ()
        return tuple(_masked(c, m) for i, m in zip(idx, mask, strict=True) for c in scoped[i]), epoch, mask

    out = [Candidate(s, scoped[i], facts[i][1], facts[i][2], asked[i], (s, refuted[i]), (asked[i],), turns[i])
           for i, s in enumerate(sentences)]
    for i in range(len(sentences) - 1):
        pair_list = None
        if out[i].keyword_list and out[i + 1].keyword_list:
            pair_list = out[i].keyword_list + out[i + 1].keyword_list
        pair_asked = asked[i] if asked[i] == asked[i + 1] else " ".join(p for p in (asked[i], asked[i + 1]) if p)
        clauses, epoch, mask = spanning(range(i, i + 2))
        out.append(Candidate(f"{sentences[i]} {sentences[i + 1]}", clauses, pair_list,
                             out[i].answer_word, pair_asked,
                             (sentences[i], refuted[i], sentences[i + 1], refuted[i + 1]), (asked[i], asked[i + 1]),
                             epoch, mask))
    # the whole reply: a fact told across sentences ("... She cares for 45 children."); over a summary of
    # several turns, each question's whole (its answer and the replies to its challenges, consecutive in the
    # summary) rather than the session's, whose text outgrows the encoder's window and whose words, said
    # over many questions, state no one fact
    runs = [range(len(sentences))] if said is None else _runs(asked)
    for run in runs:
        if len(run) > 2:
            whole_asked = " ".join(unique([asked[i] for i in run if asked[i]]))
            clauses, epoch, mask = spanning(run)
            out.append(Candidate(" ".join(sentences[i] for i in run), clauses, None, out[run[0]].answer_word,
                                 whole_asked, tuple(x for i in run for x in (sentences[i], refuted[i])),
                                 tuple(asked[i] for i in run), epoch, mask))
    return out


def _runs(asked: list[str]) -> list[range]:
    """The runs of consecutive positions with the same question."""
    runs: list[range] = []
    start = 0
    for i in range(1, len(asked) + 1):
        if i == len(asked) or asked[i] != asked[start]:
            runs.append(range(start, i))
            start = i
    return runs


def _masked(clause: ScopedClause, mask: frozenset[str]) -> ScopedClause:
    """A clause without the stems in ``mask`` (words the examiner had given before it was said): its stems,
    its words as written and its numbers; its subject and negation head stay, as they place the scope."""
    if not mask or not (clause.stems & mask):
        return clause
    return replace(clause, stems=clause.stems - mask,
                   numbers=frozenset(n for n in clause.numbers if n[0] not in mask),
                   words=frozenset(w for w in clause.words if stem(w) not in mask),
                   echoed=clause.echoed | frozenset(n for n in clause.numbers if n[0] in mask))


def unique(items: list[str]) -> list[str]:
    """The items without repeats, in order."""
    return list(dict.fromkeys(items))


LIGHT_VERBS = frozenset(stem(w) for w in """use used uses make made makes get got gets take took takes cause caused causes
give gave gives keep kept keeps put puts help helped helps let lets go goes went come came comes show showed shows
become became becomes seem seemed seems need needed needs mean meant means""".split())
VERBISH = frozenset("""is are was were has have had can could may might will would should must does do did
causes cause caused makes make made becomes become became contains contain includes include produces produce
lies lie consists consist releases release takes take spreads spread occurs occur shows show leads lead reduces
reduce increases increase requires require affects affect helps help gives give means mean uses use used
carry carries carried holds hold held closes close closed opens open opened pushed pushes push""".split())
_CJKVERBISH = re.compile("是|有|会|不|没|在|能|被|把|以|为|要|吃|住|生活")


def clause_subject(clause: str) -> str:
    """The words of a clause before its first verb, as written ("" when none is recognised).

    Verbs are a closed list of common ones plus, after the first word, any word ending in -ed.
    """
    if re.search(f"[{CJK}]", clause):
        m = _CJKVERBISH.search(clause)
        return clause[: m.start()] if m else ""
    for k, m in enumerate(re.finditer(r"[\w'’-]+", clause)):
        word = m.group().lower()
        if word in VERBISH or (k and len(word) > 4 and word.endswith("ed") and not word.endswith("eed")):
            return clause[: m.start()].strip()
    return ""


def soft_words(text: str) -> list[str]:
    """A clause's content words as written (lower case) that a fact word may match in other words: no numbers."""
    return [w for w in content_words(text) if not is_number_stem(w)]
