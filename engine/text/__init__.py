"""The engine's text module: how every layer reads words, sentences, negation and numbers.

It sits at the bottom of the engine's layers (with config and the small helpers), so the judges, the
interview, the bench generators, the knowledge base and the reference target all read a text by the
same rules. Each rule is written once, here; a caller that needs a narrower reading names it (a named
list or parameter of the one rule), never a copy of its own.

- :mod:`engine.text.cjk`: the CJK ranges (judging's, the knowledge base's with Hangul, the generators'
  ideographs) and tests for CJK text;
- :mod:`engine.text.numbers`: number words, ordinals and Chinese numerals (the one reader, :func:`~engine.text.numbers.read_number`);
- :mod:`engine.text.lexicon`: the word lists (stop words, function words, verbs, negations, scope ends,
  abbreviations, expansions);
- :mod:`engine.text.tokens`: tokens, stems (:func:`~engine.text.tokens.stem`, the one stemmer of judging;
  :func:`~engine.text.tokens.crude_stem`, the generators'), content words, word patterns;
- :mod:`engine.text.sentences`: sentence splitting (the judges' rule with abbreviations, the
  generators' plain splits) and quotations;
- :mod:`engine.text.negation`: clauses and negation scope;
- :mod:`engine.text.subjects`: an English sentence's opening noun phrase, pronouns resolved to it;
- :mod:`engine.text.normalize`: Unicode normal forms, entity keys, content hashes;
- :mod:`engine.text.cloze`: a fill-in-the-blank criterion's parts, its wording and the one reading of
  that wording back (for texts that carry no parts).

What an answer *asserts* (supposition, refutation, attribution, withdrawal, indecision, ...) is the
judge's reading, not the text's: :mod:`engine.judge.stance`, built on this module. The gold judge's
own tokens (:mod:`engine.judge.gold_tokens`) keep capitals, separators and sentence stops for its
crediting rules and take their word lists, numbers, stems and CJK range from here.
"""
