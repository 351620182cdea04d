"""Judges: who marks a target's answers, and the scoring aids they use.

- ``base``: what judges exchange with the interview (the turn as a judge sees it, verdicts, judgements);
- ``gold``: gold-answer criteria judged against the reply to the question that carries them;
- ``answers``: SQuAD normalisation, exact match, token F1 and multiple-choice extraction;
- ``freetext``: the offline judge of criteria that state facts (negation, keyword lists, deductions);
- ``offline``: the deterministic judge (no LLM, explainable);
- ``llm``: the LLM judge, any OpenAI-compatible model marking answers against the rubric;
- ``prompts``: the LLM judge's versioned prompts;
- ``ratings``: Professionalism and Stability, 1–10 ratings of a whole conversation;
- ``feedback``: the graded protocol's per-batch feedback and its no-giveaway check;
- ``rubric_judge``: SedarEval's 0–5 rubric judge (prompt, delimited answer, final-score parser);
- ``sandbox``: runs a scoring point's ``eval_code`` in a contained Python process.
"""
