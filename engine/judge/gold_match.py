"""The gold-answer judge: does a reply give one of the accepted answers?

Developed and measured on human judgements (NQ301: 3,574 answers of 12 QA systems, each judged
correct or not by people; the README's "Checking a judge" has the figures, and ``viva judge check``
measures any judge on any labelled file). The rules are general, about how answers are written, never about
one sample's phrases.

**Reading a text.** Mojibake is repaired (``ftfy``), then Unicode NFKC; dashes become "-"; "1,000"
is 1000 (thousands separators of exactly three digits), "11.3" keeps its decimal point; number words
of any size are digits ("one hundred sixty-three" is 163, "fifteenth" is 15) and ordinals are their
number ("21st" is 21); "B.C.", "BCE" are BC, "CE" is AD; "%" is "percent". Words are lower-cased,
articles dropped, apostrophes removed ("don't" -> "dont", "Kobol's" -> "kobol"), hyphens and dots
split words ("s-block" = "s - block", "B.R." = "B. R.") except a word spelt out letter by letter
("P-A-D-A-W-A-N" = "Padawan", three letters or more); a dash that breaks a sentence (spaced, an em
dash or "--", not between numbers) reads as a comma ("Not 1970 — it was 1969"), and words are compared by the stem of
:func:`engine.text.tokens.stem`, the one stemmer of judging ("rocks"/"rock", "Confederates"/"Confederate").
Its function words (:data:`engine.text.lexicon.FILLER`) are narrower than :data:`engine.text.lexicon.STOPWORDS`: "up", "down",
"more", "same" and the like can be answers. Sentences end at . ! ? and line breaks, but not after
an initial ("J. R. R.") or a common abbreviation ("Dr.", "U.S.", "No.", "St.").

**Crediting** (``met``), against each gold answer in turn, over every sentence of the reply:

1. *Containment*: the gold's content words (no function words; words the question already holds
   are no evidence and are dropped from both sides, unless the gold has nothing else) appear in a
   sentence as one contiguous run, each word equal after stemming, numbers equal by value, an
   initial matching a capitalised word it begins ("B. R. Ambedkar" = "Bhimrao Ramji Ambedkar"), stems
   that differ only by a doubled final consonant ("sharecroppers" = "sharecropping"), or the run
   spelled with or without spaces ("Abid Ali" = "Abidali", "Steam Ship" = "Steamship"). The gold's
   *core* may stand for it:
   the gold without honorific titles ("General George Washington" -> "George Washington") and
   quantity/time qualifiers ("the late 6th century" -> "6th century", "median 10-12 years"), and for
   a person's name (two or more capitalised words, no comma) the surname; the year of a gold date
   ("in 1977" for "September 19, 1977"); a gold's named part without its generic words ("the ARPANET"
   for "the ARPANET project": the kept words hold a name written in capitals, a number or a capitalised
   word after the first, they make an F1 of at least 0.6 with the gold, and no other word stands
   beside them where the dropped words were). A number inside a gold range counts for the range
   ("11.3 years" for "10-12 years"); a gold made only of numbers counts when all of them are in one
   sentence in the same order ("started in 1881 and completed in 1885" for "between 1881 and 1885").
2. *A less specific answer*: a sentence whose own content words (after the question's and filler
   words are dropped) all belong to the gold, with what is missing only titles, qualifiers,
   initials, the day and month of a gold date whose year is given ("1965" for "1 August 1965"), or
   the given names of a person whose surname is given.
3. A candidate is refused when (a) the gold's words lie in a negation's scope (not, never, no,
   n't, wrong, false, ...; the scope runs to the end of the clause chain, and ends at "but",
   "rather", "however", "except", "other than", a ";", at the comma that closes a subordinate or
   relative clause the negation sits in ("While there is no single answer, X ..."; "Unlike Y, who
   never ..., X ...") and at a comma that opens a new clause ("..., it was X"; "..., so X")), where
   negation words that the question or the gold itself contains, "No." before a number, "not only",
   "not many", "no doubt" and words inside quotation marks do not count;
   (b) the gold is offered as one alternative ("A or B", "either", two hedges) and the other side is
   not also a gold; (c) the gold is one item of a list of several candidates of its kind (three or
   more items, two joined by and / & / "/", or two bare numbers; a stretch with its own "is"/"was" is
   a clause, not an item) and some other item is not a gold
   (another name holding the gold's surname is not a gold: a capitalised word before it, or any word
   in a reply written without capitals; "most sources credit Röntgen" names no one else); (d) for a
   person's name, the run is flanked by another capitalised name word ("John Quincy Adams" is not
   "John Adams"); (e) a gold given entirely by the question occurs only inside a phrase copied from
   the question (an echo); (f) the sentence dates it otherwise: another month in a gold date's year,
   or another day in a gold date's month ("18-20 January" holds the 18th).

``em`` is SQuAD's exact match of the whole reply; ``f1`` is SQuAD-style token F1 of the crediting
sentence's content words against the gold's (0 when nothing matched). What this judge cannot
credit: aliases and nicknames ("Dave" for "David"), paraphrases with other words, answers right but
not in the gold list (world knowledge). An LLM judge is the answer there.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from engine.judge.gold_forms import (
    GOLD_F1_THRESHOLD,
    QUALIFIERS,
    TITLES,
    Gold,
    GoldForm,
    content_toks,
    date_part_indexes,
    dates_of,
    days_of,
    find_form,
    range_at,
    read_gold,
)
from engine.judge.gold_tokens import Tok, is_initial, mark_scope, name_variant, same_word, sentences, tokens
from engine.judge.stance import SWEEP_MIN_MATES, asserted_text, claims, frame_mates
from engine.text.cjk import CJK
from engine.text.lexicon import FILLER, FINITE, GOLD_SCOPE_END, NEGATIONS_PLAIN, VERBS
from engine.text.quantities import restate
from engine.text.sentences import split_sentences

_ALTERNATIVE_WORDS = frozenset({"or", "either"})
_HEDGES = frozenset({"maybe", "perhaps", "possibly"})
"""Hedges: two of them in a sentence offer alternatives; with their additions, the words of doubt (:data:`_DOUBT`)."""

# -- the verdict -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class GoldVerdict:
    """The verdict on a reply against gold answers.

    Attributes:
        met: the reply is credited (see the module docstring for the rule).
        em: SQuAD exact match of the whole reply against the best gold answer (0.0 or 1.0).
        f1: token F1 of the crediting (or best) sentence's content words against the gold's.
        best_gold: the gold answer behind the verdict (the first gold when nothing matched).
        rationale: one line explaining the verdict.
        span: the sentence behind the verdict ("" when none).
    """

    met: bool
    em: float
    f1: float
    best_gold: str
    rationale: str
    span: str = ""


def _f1(pred: Sequence[Tok], gold: Sequence[Tok]) -> float:
    if not pred or not gold:
        return 0.0
    common = Counter(t.stem for t in pred) & Counter(t.stem for t in gold)
    same = sum(common.values())
    if same == 0:
        return 0.0
    p, r = same / len(pred), same / len(gold)
    return 2 * p * r / (p + r)


def _text(toks: Sequence[Tok]) -> str:
    """Tokens joined for a rationale: words spaced, separators attached ("a, b (c)")."""
    out, glue, open_quote = "", True, False
    for t in toks:
        opener = t.text in "(“" or (t.text == '"' and not open_quote)
        if t.text == '"':
            open_quote = not open_quote
        if t.kind in ("sep", "quote") and not opener:
            out += t.text
            glue = False
        else:
            out += ("" if glue or not out else " ") + t.text
            glue = opener
    return out


def _short(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def normalize_answer(text: str) -> str:
    """SQuAD's official answer normalisation, Unicode-aware (lower case, no punctuation, no articles)."""
    text = unicodedata.normalize("NFKC", text or "").lower()
    text = "".join(ch for ch in text if not (unicodedata.category(ch).startswith("P") or ch in "$+<=>^`|~"))
    text = re.sub(r"\b(a|an|the)\b", " ", text)
    text = re.sub(f"([{CJK}])", r" \1 ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> float:
    """SQuAD exact match: 1.0 when the normalised strings are equal, else 0.0."""
    return float(normalize_answer(prediction) == normalize_answer(gold))


class _Judge:
    def __init__(self, reply: str, golds: list[str], question: str):
        self.q_toks = tokens(question)
        self.q_words = {t.text for t in self.q_toks}
        q_content = content_toks(self.q_toks)
        self.q_stems = {t.stem for t in q_content}
        self.q_bigrams = {(a.stem, b.stem) for a, b in zip(q_content, q_content[1:], strict=False)}
        self.golds = [read_gold(g, self.q_stems) for g in golds]
        self.all_gold_words = set().union(*(g.words for g in self.golds))
        self.gold_dates = set().union(*(g.dates for g in self.golds))
        self.gold_days = set().union(*(days_of(g.all) for g in self.golds))
        self.several = asks_for_several(self.q_toks)
        self.sentences = sentences(tokens(reply))
        # a reply written with capitals shows names by them: a lower-case word before a surname is no
        # given name ("most sources credit Röntgen"); in a reply without any, every word may be one
        self.cased = any(t.cap for s in self.sentences for t in s if t.kind == "word" and t.pos > 0)
        for s in self.sentences:
            mark_scope(s, self.q_words, self.all_gold_words)

    def credits(self, sentence: list[Tok]) -> bool:
        """Whether this one sentence gives a gold (the rules of :meth:`judge`)."""
        return self.judge([sentence])[0]

    def judge(self, only: list[list[Tok]] | None = None) -> tuple[bool, str, str, str, float]:
        """(met, gold, sentence, rationale, f1), over every sentence or those ``only``."""
        refused: tuple[str, str, str, float] | None = None
        best_f1: tuple[float, str, str] = (0.0, self.golds[0].text, "")
        for gold in self.golds:
            for sentence in (self.sentences if only is None else only):
                kept_filler = {t.text for t in gold.all if t.text in FILLER}  # a gold of function words ("itself")
                content = [t for t in sentence if t.kind in ("word", "num")
                           and (t.text not in FILLER or t.text == "i" or t.upper or t.text in kept_filler)]
                own = [t for t in content if t.stem not in self.q_stems]  # what the reply adds to the question
                f1 = _f1(own if not gold.given else content, gold.all)
                if f1 > best_f1[0]:
                    best_f1 = (f1, gold.text, _text(sentence))
                for form in gold.forms:
                    ranged = {i for i in range(len(form.toks)) if range_at(form.toks, i)}
                    for start, end in find_form(form.toks, content, ranged, form.approx):
                        around = (content[start - 1] if start > 0 else None, content[end] if end < len(content) else None)
                        reason = self._refusal(content[start:end], sentence, gold, form, around)
                        if reason:
                            if refused is None:
                                refused = (gold.text, _text(sentence), reason, f1)
                            continue
                        return True, gold.text, _text(sentence), f"{form.how} in", f1
                nums = [t.num for t in gold.all if t.num is not None]
                if len(nums) >= 2 and len(nums) == len([t for t in gold.all if t.text not in QUALIFIERS]):
                    # a gold made of numbers ("between 1881 and 1885"): all of them, in order, in one sentence
                    seen = [t.num for t in content if t.num in nums]
                    it = iter(seen)
                    if all(n in it for n in nums):
                        at = [t for t in content if t.num in nums]
                        reason = self._refusal(at, sentence, gold, None)
                        if not reason:
                            return True, gold.text, _text(sentence), "the gold's numbers in order in", f1
                subset = self._subset(own, gold)
                if subset:
                    reason = self._refusal(own, sentence, gold, None)
                    if reason:
                        if refused is None:
                            refused = (gold.text, _text(sentence), reason, f1)
                        continue
                    return True, gold.text, _text(sentence), subset, f1
        if refused is not None:
            g, s, reason, f1 = refused
            return False, g, s, f'gold "{g}": not credited, {reason}', f1
        f1, g, s = best_f1
        if f1 > 0:
            return False, g, s, f'gold "{g}" not given (content-word F1 {f1:.2f})', f1
        return False, self.golds[0].text, "", "no gold word given", 0.0

    def _subset(self, own: list[Tok], gold: Gold) -> str:
        """Why ``own`` (a sentence's words beyond the question's) is a shorter form of the gold ("" if not)."""
        if gold.given or not own or all(is_initial(t) for t in own):
            return ""  # initials alone are no answer ("G." is not "Grisha")
        matched: set[int] = set()
        for t in own:
            hit = next((i for i, g in enumerate(gold.all) if i not in matched and same_word(g, t)), None)
            if hit is None:
                return ""
            matched.add(hit)
        missing = [g for i, g in enumerate(gold.all) if i not in matched]
        if not missing:
            return "the gold's words in"
        kept = [g for i, g in enumerate(gold.all) if i in matched]
        if all(t.text in NEGATIONS_PLAIN for t in kept) and any(
                t.text not in NEGATIONS_PLAIN and t.text not in QUALIFIERS for t in gold.all):
            return ""  # "not" alone is not "not guilty"
        surname = gold.person and (len(gold.all) - 1) in matched
        f1 = 2 * len(kept) / (len(kept) + len(gold.all))
        date_parts = date_part_indexes(gold.all) if any(
            t.num is not None and 1000 <= t.num <= 2100 for t in kept) else set()
        for i, g in enumerate(gold.all):
            if i in matched:
                continue
            if i in date_parts:
                continue  # the day and month of a gold date whose year is given ("1965" for "1 August 1965")
            if (g.text in TITLES and g.pos not in gold.heads) or g.text in QUALIFIERS or (len(g.text) == 1 and g.cap) \
                    or (surname and g.cap):
                continue
            if g.stem in self.q_stems:
                continue  # the question gives it ("substitute" for "substitute good" when asked for a good)
            if g.kind == "word" and not g.cap and g.pos not in gold.heads and f1 >= GOLD_F1_THRESHOLD and (
                    len(kept) >= 2 or kept[0].cap or kept[0].num is not None):
                # a generic word of the gold left out ("the ARPANET" for "the ARPANET project", "chicken
                # patty" for "breaded chicken patty"), but one common word is not the gold ("flora" for
                # "commensal flora")
                continue
            return ""
        return "a shorter form of the gold in"

    def _refusal(self, span: list[Tok], sentence: list[Tok], gold: Gold, form: GoldForm | None,
                 around: tuple[Tok | None, Tok | None] = (None, None)) -> str:
        if any(t.negated for t in span):
            return "the gold answer is negated"
        if sum(t.text in _HEDGES for t in sentence) >= 2:
            return "the sentence offers alternatives"
        pos = {t.pos: k for k, t in enumerate(sentence)}
        a, b = pos[span[0].pos], pos[span[-1].pos]
        if form is not None and form.how == "the surname":
            while a > 0 and sentence[a - 1].kind == "word" and sentence[a - 1].text in gold.words:
                a -= 1  # the whole name, given names included, is what an alternative or a list holds
        before = sentence[a - 1] if a > 0 else None
        after = sentence[b + 1] if b + 1 < len(sentence) else None
        if (before is not None and before.text in _ALTERNATIVE_WORDS) or (after is not None and after.text == "or"):
            if not self._other_side_is_gold(sentence, a, b):
                return "the sentence offers alternatives"
        if form is not None and form.how == "the surname" and before is not None and before.kind in ("word", "num") \
                and (before.cap or before.num is not None or not self.cased) and before.text not in FILLER and before.text not in TITLES and before.text not in gold.words \
                and not any(name_variant(before.text, g.text) for g in gold.all[:-1]):
            return f'"{before.text} {span[0].text}" is another name'
        if form is not None and form.how == "the gold's bracketed form" and before is not None and before.text == "(":
            # the reply brackets it too: it annotates the name before the bracket, which must be the gold's
            outside = next((f for f in gold.forms if f.how == "the gold without its bracket"), None)
            lead = [t for t in sentence[:a - 1] if t.kind in ("word", "num") and t.text not in FILLER]
            if lead and (outside is None or not any(e == len(lead) for _, e in find_form(outside.toks, lead, set()))):
                return f'the bracket annotates "{_text(lead[-3:])}"'
        if form is not None and form.how == "the gold's named part":
            for k, step in ((a - 1, -1), (b + 1, 1)):
                while 0 <= k < len(sentence) and sentence[k].text in FILLER and sentence[k].text in gold.words:
                    k += step  # the gold's own function words ("of" in "the king of France")
                side = sentence[k] if 0 <= k < len(sentence) else None
                if side is not None and side.kind in ("word", "num") and side.text not in FILLER:
                    return f'"{side.text}" stands where the gold has other words'
        if gold.given and form is not None:
            left, right = around  # the content words beside it (separators and function words skipped)
            if (left is not None and (left.stem, span[0].stem) in self.q_bigrams) or (
                    right is not None and (span[-1].stem, right.stem) in self.q_bigrams):
                return "it only echoes the question"
        stated = dates_of([t for t in sentence if t.kind in ("word", "num")])
        other = {d for d in stated - self.gold_dates if any(d[1] == y for _, y in self.gold_dates)}
        if other:
            month, year = sorted(other)[0]
            return f"it dates it otherwise (month {month} of {year:g})"
        days = days_of([t for t in sentence if t.kind in ("word", "num")])
        for _, month, year in sorted(self.gold_days):
            said = {d for d, m, y in days if (m, y) == (month, year)}
            if said and not said & {d for d, m, y in self.gold_days if (m, y) == (month, year)}:
                return f"it dates it otherwise (day {min(said):g} of month {month} of {year:g})"
        for offered, why in ((True, "the sentence offers it among alternatives"), (False, "it is one of several candidates")):
            others = self._list_candidates(sentence, a, b, gold, offered=offered)
            if others:
                return f'{why} ({", ".join(others[:3])})'
        return ""

    def _list_candidates(self, sentence: list[Tok], a: int, b: int, gold: Gold, *, offered: bool) -> list[str]:
        """The other candidates of a list the gold (``sentence[a:b + 1]``) is an item of: the list rule.

        The sentence's items are the stretches between list separators (:func:`_items`); the gold's item
        has a kind (a number, a capitalised name or lower-case words), and the list is *marked* when
        items are split by ";", "|", "/" or offered with "or" (then they are a list whatever their kind).
        Read two ways:

        - ``offered=True``, alternatives offered: the sentence offers the gold as one possibility among
          several ("It could be A, B or C.", "Possibly A; B; C.", "Either A or B, I'm not sure which.",
          "Candidates: A / B / C"). It holds a word of doubt (:data:`_DOUBT`, "not sure") and the
          gold's item (whatever separators it holds) has other items that are not golds, not negated, and
          marked (outside the gold's item) or of its kind. Without a word of doubt, an item that is a
          variant of the gold (it shares at least half of the gold's content words and has at most two
          more: "the king of France, the plague of France") is offered beside it, unless the question
          plainly asks for several answers (:func:`asks_for_several` with ``plainly``).
        - ``offered=False``, a list of candidates: the gold is a whole item (a gold with separators of its
          own, "coughing and sneezing", is one) of a run of neighbouring items of its kind (or of a
          marked list, or of a sentence that is nothing but three or more short items), each at most
          four content words (eight in a marked list), none a clause; three items or more, two joined by
          and / & / "/" / ";" / "|", or two bare numbers. A lead-in ("X played for A, B and C") stands
          before a list's first item only. The other items that are not golds are returned, unless the
          question asks for several answers and most of the items are golds.

        [] when the gold is in no such list, or every other item is a gold.
        """
        if offered:
            words = [t.text for t in sentence]
            doubt = bool(_DOUBT & set(words) or any(x == "not" and y == "sure" for x, y in zip(words, words[1:], strict=False)))
            if not doubt and asks_for_several(self.q_toks, plainly=True):
                return []
        items = _items(sentence)
        spanned = [k for k, (s, e) in enumerate(items) if s <= b and e >= a]
        if not spanned:
            return []
        if offered or (len(spanned) > 1 and gold.words & _JOINS):
            # the gold is one item: whatever it holds when offered, else when it has separators of its own
            items = items[:spanned[0]] + [(items[spanned[0]][0], items[spanned[-1]][1])] + items[spanned[-1] + 1:]
        here = spanned[0]
        s, e = items[here]
        if not offered and not (s <= a and b <= e):
            return []
        span = sentence[a:b + 1]
        kind = "num" if any(t.num is not None for t in span) else (
            "cap" if all(t.cap for t in span if t.kind == "word") else "low")
        # items split by ; | / or offered with "or" are a list whatever their kind ("the Seine | a river in
        # France", "the Ramones, a corporation or 1990"); offered, the gold's own separators mark nothing
        marked = any((t.kind == "sep" and t.text in ";|/") or t.text == "or"
                     for t in (sentence[:s] + sentence[e + 1:] if offered else sentence))
        if offered:
            own = {t.stem for t in span if t.kind in ("word", "num") and t.text not in FILLER}
            out = []
            for k, (ks, ke) in enumerate(items):
                if k == here:
                    continue
                part = sentence[ks:ke + 1]
                content = [t for t in part if t.kind in ("word", "num") and t.text not in FILLER
                           and t.text not in _DOUBT and t.text not in _CLAUSE_STARTS and t.text != "sure"]
                if not content or any(t.negated for t in part) or self._is_gold(part):
                    continue
                if doubt and (marked or _same_kind(content, kind)):
                    out.append(_text(part))
                elif len({t.stem for t in content} & own) * 2 >= len(own) > 0 and len(content) <= len(own) + 2:
                    out.append(_text(part))  # a variant of the gold beside it, of its size ("two waves, one waves")
            return out
        after = [t for t in sentence[b + 1:e + 1] if t.kind in ("word", "num") and t.text not in FILLER]
        before = [t for t in sentence[s:a] if t.kind in ("word", "num") and t.text not in FILLER]
        if after:
            return []  # the gold sits in a longer phrase, not a list item

        def short(ks: int, ke: int, limit: int) -> bool:
            words = [t for t in sentence[ks:ke + 1] if t.kind in ("word", "num")]
            first = next((t for t in sentence[ks:ke + 1] if t.kind in ("word", "num")), None)
            return bool(words) and len(words) <= limit and not (
                first is not None and (first.text in _CLAUSE_STARTS or first.text in GOLD_SCOPE_END))

        # a sentence that is nothing but three or more short items is a list whatever their kinds
        # ("Louis Pasteur, Robert Pasteur, antigens")
        bare = len(items) >= 3 and all(short(ks, ke, 4) for k, (ks, ke) in enumerate(items) if k != here)
        siblings: list[tuple[int, int]] = []
        for step in (-1, 1):
            k = here + step
            while 0 <= k < len(items):
                ks, ke = items[k]
                words = [t for t in sentence[ks:ke + 1] if t.kind in ("word", "num") and t.text not in FILLER] or [
                    t for t in sentence[ks:ke + 1] if t.kind in ("word", "num")]  # "other", "itself" are items too
                first = next((t for t in sentence[ks:ke + 1] if t.kind in ("word", "num")), None)
                if not words or len(words) > (8 if marked else 4) or not (marked or bare or _same_kind(words, kind)) \
                        or (first is not None and first.text in _CLAUSE_STARTS) \
                        or any(t.text in FINITE for t in sentence[ks + 1:ke + 1]):
                    break  # not an item of the same list (a clause: "Paris; it hosted the games")
                siblings.append(items[k])
                k += step
        if not siblings:
            return []
        later = [x for x in siblings if items.index(x) > here]
        if len(before) > 1 and (len(later) < 2 or len(later) < len(siblings)):
            return []  # a lead-in ("X played for A, B and C") is allowed before a list's first item only
        lo = min([here] + [items.index(x) for x in siblings])
        hi = max([here] + [items.index(x) for x in siblings])
        joiners = {t.text for t in sentence[items[lo][1] + 1:items[hi][0]]}
        bare_numbers = kind == "num" and all(
            len([t for t in sentence[ks:ke + 1] if t.kind in ("word", "num")]) == 1
            and sentence[ks].num is not None for ks, ke in siblings)
        if len(siblings) + 1 < 3 and not joiners & {"and", "&", "/", ";", "|"} and not bare_numbers:
            return []  # "Paris, France" is a place, not a list (but "1825, 1832" is two years)
        bad = [_text(sentence[ks:ke + 1]) for ks, ke in siblings if not self._is_gold(sentence[ks:ke + 1])]
        if self.several and 2 * len(bad) < len(siblings) + 1:
            return []  # asked for several, and most of the items are accepted answers
        return bad

    def _other_side_is_gold(self, sentence: list[Tok], a: int, b: int) -> bool:
        items = _items(sentence)
        here = next((k for k, (s, e) in enumerate(items) if s <= a <= e), None)
        if here is None:
            return False
        others = [items[k] for k in (here - 1, here + 1) if 0 <= k < len(items)]
        return any(self._is_gold(sentence[s:e + 1]) for s, e in others)

    def _is_gold(self, toks: list[Tok]) -> bool:
        content = [t for t in toks if t.kind in ("word", "num") and t.text not in FILLER]
        if not content:
            return False
        # a surname stands for a gold only alone ("Hale"), not inside another name ("Tomas Lorsk Hale")
        return any(find_form(form.toks, content, set()) for g in self.golds for form in g.forms
                   if form.how != "the surname" or len(content) == 1)


_DOUBT = _HEDGES | frozenset("either could might candidates candidate torn unsure".split())
"""Words of doubt: with them, a list offers candidates (:meth:`_Judge._list_candidates`, ``offered``)."""
_CLAUSE_STARTS = frozenset("""it he she they we i you this that these those which who there here its his her their
is was are were has had have will would""".split())
"""Words that open a clause, not a list item."""

_SEVERAL = frozenset("are were some list examples several many name".split())
"""Words by which a question asks for several answers (:func:`asks_for_several`)."""
_JOINS = frozenset({",", ";", "/", "|", "&", "and", "or", "nor"})
"""Separators that make a gold holding them one list item ("coughing and sneezing")."""


def asks_for_several(q: list[Tok], *, plainly: bool = False) -> bool:
    """The question asks for several answers, read from its first five words.

    Either way a word of :data:`_SEVERAL` ("what are some...", "list of...", "name...") counts. Then:

    - broadly (``plainly=False``, the default): a number above one in its first two words ("3 ...") or any
      inflected word after the first, longer than three letters ("what teams...": the stem differs);
    - ``plainly=True``: a number above one anywhere among them, or a plural noun right after
      "what"/"which" (a word ending in "s", not "ss", that is not a verb: "what teams", not "what is",
      "what was", "what does"), not any inflected word. The list rule reads it so for the
      variants of the gold beside it (:meth:`_Judge._list_candidates`); the broad reading decides
      whether a list of mostly golds is accepted.
    """
    words = [t for t in q if t.kind in ("word", "num")][:5]
    if any(t.text in _SEVERAL for t in words):
        return True
    if plainly:
        return any(t.num is not None and t.num > 1 for t in words) or any(
            w.text in ("what", "which") and n.kind == "word" and n.text.endswith("s") and not n.text.endswith("ss")
            and n.text not in VERBS  # "what is", "what was", "what does": a verb, not a plural noun
            for w, n in zip(words, words[1:], strict=False))
    return any((t.num is not None and t.num > 1 and t.pos < 2) or (
        t.kind == "word" and len(t.text) > 3 and t.stem != t.text and t.pos > 0) for t in words)


def _same_kind(words: list[Tok], kind: str) -> bool:
    if kind == "num":
        return any(t.num is not None for t in words)
    if kind == "cap":
        return all(t.cap for t in words if t.kind == "word")
    return all(not t.cap for t in words)


def _items(sentence: list[Tok]) -> list[tuple[int, int]]:
    """(start, end) index pairs of the stretches between list separators (, ; / & and or nor)."""
    items, start = [], 0
    for i, t in enumerate(sentence):
        if (t.kind == "sep" and t.text in ",;/|&") or t.text in ("and", "or", "nor"):
            if i > start:
                items.append((start, i - 1))
            start = i + 1
    if start < len(sentence):
        items.append((start, len(sentence) - 1))
    return items


LONG_REPLY = 3
"""Sentences from which a reply must single its answer out (:func:`_search`), when it also has
:data:`LONG_REPLY_WORDS` words or more."""
LONG_REPLY_WORDS = 40
"""Words (tokens) from which a reply of :data:`LONG_REPLY` sentences must single its answer out."""
SHORT_SENTENCE = 12
"""Content words (besides the gold's) of a sentence short enough to single an answer out by its place
(first or last)."""
REPLY_SENTENCES = 10
"""Sentences up to which a text is a reply, where an answer in a frame of its own singles itself out wherever
it stands (:func:`_search`); a longer text is a document (a pasted source, noise), where only a first or
last sentence or an answer cue does."""
_CUE = re.compile(r"\b(?:(?:the|my|final)\s+answer|in\s+short|in\s+summary|to\s+sum\s+up|i(?:'d|\s+would)\s+say|"
                  r"my\s+(?:guess|bet|pick)|i(?:'m|\s+am)\s+going\s+with)\b|答案|所以", re.IGNORECASE)


def _search(said: str, gold: str, judge: _Judge) -> str:
    """Why a credited reply is a search rather than one answer ("" when it is one answer).

    - a *sweep*: the gold's unit has :data:`engine.judge.stance.SWEEP_MIN_MATES` frame mates or more
      (:func:`engine.judge.stance.frame_mates`: "It is 0. It is 1. ... It is 100.") that are not golds;
    - a *passage*: a reply of :data:`LONG_REPLY` sentences and :data:`LONG_REPLY_WORDS` words or more
      (a pasted source, an answer buried in noise) where no sentence that gives the gold singles it out: none is among the first two sentences
      or is the last with at most :data:`SHORT_SENTENCE` content words, or has at most twice that and
      an answer cue ("the answer", "so", "therefore", "in short", "which means", "I'd say", "is called",
      答案, 所以), or, in a reply of at most :data:`REPLY_SENTENCES` sentences, wherever it stands, has at
      most :data:`SHORT_SENTENCE` content words besides the
      gold's, none of them a word of the question, and at least one word besides the gold (an answer
      in a frame of its own: "That points to oxides.", "It's 8, at least as far as I know."). A pasted
      passage's sentence that holds the gold holds the question's words too (questions are written
      from passages); a bare gold buried in noise has no frame.
    """
    for g in [gold] + [x.text for x in judge.golds if x.text != gold]:
        mates = [m for m in frame_mates(said, g) if not judge._is_gold(content_toks(tokens(m)))]
        if len(mates) >= SWEEP_MIN_MATES:
            return f"one of {len(mates) + 1} candidates offered one per sentence or clause (a sweep: {', '.join(mates[:3])}, ...)"
    sentences = judge.sentences
    if len(sentences) < LONG_REPLY or sum(len(x) for x in sentences) < LONG_REPLY_WORDS:
        return ""
    raw = split_sentences(said)

    def content_of(sentence: list[Tok]) -> list[Tok]:
        return [t for t in sentence if t.kind in ("word", "num") and t.text not in FILLER]

    credits = [judge.credits(sentence) for sentence in sentences]
    # an opener or a closer of a few words ("Good question!", "Hope that helps!") has no place of its own
    placed = [k for k, sentence in enumerate(sentences) if credits[k] or len(content_of(sentence)) > 3]
    for k, sentence in enumerate(sentences):
        if not credits[k]:
            continue
        content = [t for t in content_of(sentence) if t.text not in judge.all_gold_words]  # the gold's own words aside
        text = raw[k] if k < len(raw) and len(raw) == len(sentences) else _text(sentence)
        if len(content) <= SHORT_SENTENCE and k in (placed[0], placed[-1]):
            return ""  # a short first sentence answers; a short last one concludes
        if len(content) <= 2 * SHORT_SENTENCE and _CUE.search(text):
            return ""  # "so the answer is ...", "which means ..."
        if len(sentences) <= REPLY_SENTENCES and len(content) <= SHORT_SENTENCE and _framed(sentence, judge) and not any(
                t.stem in judge.q_stems for t in content):
            return ""  # an answer in a frame of its own ("So: 8.", "That points to oxides.", "It's 8, at least
            # as far as I know."): a passage's sentence that holds the gold holds the question's words too
    return f"a reply of {len(sentences)} sentences that does not single its answer out (a passage, not an answer)"


def _framed(sentence: list[Tok], judge: _Judge) -> bool:
    """The sentence says more than the gold: at least one word that is not the gold's (a bare "Paris."
    buried in a long text is no answer's frame)."""
    return any(t.kind in ("word", "num") and t.text not in judge.all_gold_words for t in sentence)


def judge_gold(reply: str, golds: Sequence[str] | str, question: str = "",
               threshold: float = GOLD_F1_THRESHOLD) -> GoldVerdict:
    """Judge a reply against gold answers (the module docstring states the rule).

    Args:
        reply: the target's reply to the question that carries the criterion.
        golds: the accepted answers (one string or several).
        question: the question asked; words copied from it earn nothing.
        threshold: unused by the crediting rule; kept for callers' signatures.

    Returns:
        A :class:`GoldVerdict`.

    Raises:
        ValueError: no non-empty gold answer was given.
    """
    del threshold
    if isinstance(golds, str):
        golds = [golds]
    golds = [g for g in golds if g and normalize_answer(g)]
    if not golds:
        raise ValueError("judge_gold needs at least one non-empty gold answer")
    em = max(exact_match(reply or "", g) for g in golds)
    if not (reply or "").strip():
        return GoldVerdict(False, em, 0.0, golds[0], "no reply to judge")
    # stance before match: only what the reply asserts can give the gold (a gold that holds a negation,
    # "not guilty", keeps the denials: the negation scope rule below reads them)
    negative_gold = any(t.text in NEGATIONS_PLAIN for g in golds for t in tokens(g))
    said = asserted_text(reply, keep_negated=negative_gold)
    if not said.strip():
        kinds = sorted({c.stance for c in claims(reply) if not c.asserted})
        return GoldVerdict(False, em, 0.0, golds[0], f"nothing asserted ({', '.join(kinds)})")
    said, restated = restate(said, golds)  # "a fortnight" read as a gold's "14 days"
    judge = _Judge(said, golds, question)
    if not judge.sentences:
        return GoldVerdict(False, em, 0.0, golds[0], "no reply to judge")
    met, gold, span, why, f1 = judge.judge()
    if met:
        search = _search(said, gold, judge)
        if search:
            return GoldVerdict(False, em, round(f1, 4), gold, f'gold "{gold}": not credited, {search}', span)
    if met:
        rationale = f'gold "{gold}": {why} "{_short(span)}"'
    else:
        rationale = why + (f' (in "{_short(span)}")' if span else "")
    read = [f'"{a}" as "{b}"' for a, b in dict.fromkeys(restated) if b in span]
    if read:
        rationale += f"; read {', '.join(read)}"
    return GoldVerdict(met, em, round(f1, 4), gold, rationale, span)
