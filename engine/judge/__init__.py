"""Judges: who marks a target's answers, and the scoring aids they use.

One module decides: :mod:`engine.judge.decide` holds the table of which judge serves which criterion, item
kind and configuration (``JUDGES``) and the entry points every caller uses (protocols, ``viva judge
check``); nothing else chooses a judge. The rest:

- ``base``: what judges exchange with the interview (the turn as a judge sees it, verdicts, judgements)
  and the ``Judge`` protocol (everything ``decide`` uses of a judge);
- ``gold``: gold-answer criteria judged against the reply to the question that carries them;
- ``gold_match``: the lexical gold rule (is a gold answer the reply's answer);
- ``choice``: a multiple-choice reply read as an option; ``answers``: SQuAD normalisation, exact
  match, token F1 and the option prompt;
- ``gold_llm``: an LLM judge's gold verdicts, the lexical one kept beside each;
- ``freetext``: the offline judge of criteria that state facts (negation, keyword lists, deductions);
- ``text``: the stance rules (what an answer asserts, supposes, attributes, refutes or withdraws);
- ``offline``: the deterministic judge (no LLM, explainable): the running summary and its verdicts;
- ``llm``: the LLM judge, any OpenAI-compatible model marking answers against the rubric;
- ``prompts``: the LLM judge's versioned prompts;
- ``ratings``: Professionalism and Stability, 1–10 ratings of a whole conversation;
- ``feedback``: the graded protocol's per-batch feedback and its no-giveaway check;
- ``rubric_judge``: SedarEval's 0–5 rubric judge (prompt, delimited answer, final-score parser) and the
  offline estimate;
- ``sandbox`` (with ``cgroup``): runs a scoring point's ``eval_code`` in a contained Python process;
- ``check``: ``viva judge check``, agreement with human labels (through ``decide``);
- ``probe``: ``viva judge probe``, what the judge credits per phrasing pattern.
"""
