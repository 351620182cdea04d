"""The validity benchmark (bench/validity.py): its targets behave as specified, and a small real run
through the ``viva`` command line keeps the orderings of issue 12 (oracle above mute in every
session, Score non-decreasing in knowledge k on average). Orderings only, never absolute figures.

The real run uses a small SQuAD-format file written here (our own paragraphs and questions), so
it needs no ../shared/data; the offline kernel, the shipped ONNX policy and embedder,
SQLite and the ``viva`` console script are real.
"""

from __future__ import annotations

import json
import statistics

import pytest

from bench import validity
from bench.validity import vt


def _key() -> vt.Key:
    items = [
        {"id": 1, "question": "What is the second most abundant element?", "topic": "Oxygen", "gold": ["helium"],
         "meta": {"context": "p1", "followups": [{"question": "How many atoms form dioxygen?",
                                                   "answers": ["two atoms", "two"]}]},
         "rubric": [{"cid": "c1", "text": "x", "answers": ["helium"], "asks": None},
                    {"cid": "c2", "text": "y", "answers": ["two atoms", "two"],
                     "asks": "How many atoms form dioxygen?"}]},
        {"id": 2, "question": "Who discovered oxygen in 1774?", "topic": "Oxygen", "gold": ["Joseph Priestley"],
         "meta": {"context": "p2"}, "rubric": []},
        {"id": 3, "question": "Which cell makes insulin? Choose one.", "topic": "Biology", "gold": "B",
         "options": {"A": "alpha cell", "B": "beta cell", "C": "liver cell"}, "meta": {}, "rubric": []},
        {"id": 4, "question": 'Fill in the blank: "Wearing ____ does not replace hand hygiene."', "topic": "hands",
         "gold": "gloves", "meta": {},
         "rubric": [{"cid": "c1", "text": 'Gives "gloves" as the missing part of: Wearing gloves ...'},
                    {"cid": "c2", "text": "Germs are carried on the hands of health workers."}]},
        {"id": 5, "question": "How long does a hand rub take?", "topic": "hands", "gold": "20 to 30 seconds",
         "meta": {}, "rubric": [{"cid": "c1", "text": "A rub takes 20 to 30 seconds."},
                                {"cid": "c2", "text": "Soap and water are needed when hands are visibly dirty."}]},
    ]
    entries, questions = validity.build_key(items, seed=0)
    return vt.Key(0, entries, questions)


def test_key_has_a_wrong_answer_of_the_same_source_for_every_question():
    key = _key()
    by_q = {e.question or e.gold: e for e in key.entries}
    assert by_q["What is the second most abundant element?"].gold == "helium"
    assert by_q["How many atoms form dioxygen?"].gold == "two atoms"
    choice = by_q["Which cell makes insulin? Choose one."]
    assert (choice.kind, choice.gold) == ("choice", "(B) beta cell")
    assert choice.wrong in ("(A) alpha cell", "(C) liver cell")
    facts = [e for e in key.entries if e.kind == "fact"]
    # the cloze criterion belongs to item 4's own question; its other criterion is a fact
    assert {e.gold for e in facts} == {"Germs are carried on the hands of health workers.",
                                       "Soap and water are needed when hands are visibly dirty."}
    for e in key.entries:
        assert e.wrong and validity.token_f1(e.wrong, e.gold) < 0.5
        if e.kind == "short":
            assert validity.token_f1(e.wrong, e.gold) == 0.0


def _ask(target, key, *questions):
    messages, answers = [], []
    for q in questions:
        messages.append({"role": "user", "content": q})
        answers.append(target.reply(messages))
        messages.append({"role": "assistant", "content": answers[-1]})
    return answers


def test_targets_answer_by_knowledge_style_and_instability():
    key = _key()
    helium = "What is the second most abundant element?"
    atoms = "How many atoms form dioxygen?"
    oracle = getattr(vt, "k1.00_u0.00_terse")(key)
    assert _ask(oracle, key, helium, atoms) == ["helium", "two atoms"]
    # options appended to a multiple-choice question still match its key entry
    assert _ask(oracle, key, "Which cell makes insulin? Choose one.\nA. alpha cell\nB. beta cell") == ["(B) beta cell"]
    know_nothing = getattr(vt, "k0.00_u0.00_terse")(key)
    wrong = next(e.wrong for e in key.entries if e.question == helium)
    assert _ask(know_nothing, key, helium) == [wrong]
    sentence = _ask(getattr(vt, "k1.00_u0.00_sentence")(key), key, helium)[0]
    assert sentence in [t.format(a="helium") for t in vt.SENTENCE_TEMPLATES]
    verbose = _ask(getattr(vt, "k1.00_u0.00_verbose")(key), key, helium)[0]
    assert verbose.startswith(sentence + " ")
    assert sum(e in verbose for e in vt.ELABORATION) == 2
    assert _ask(getattr(vt, "k1.00_u0.00_echo")(key), key, helium) == [f"{helium} helium"]
    challenge = 'I am not convinced by this: "helium" Are you sure that is correct?'
    assert _ask(oracle, key, helium, challenge)[1] == "Yes, I am sure. helium"
    gives_way = getattr(vt, "k1.00_u1.00_terse")(key)
    assert _ask(gives_way, key, helium, challenge, challenge)[1:] == [
        f"You are right, I was wrong. The answer is {wrong}.", f"Yes, I am sure. {wrong}"]
    assert _ask(vt.MuteTarget(), key, helium) == ["I don't know."]
    # a kernel's own follow-up reaches the item's fact that shares its words, not yet asked first
    assert _ask(oracle, key, "How long does a hand rub take?",
                "What can you tell me about soap, in relation to hands?")[1] == \
        "Soap and water are needed when hands are visibly dirty."


def test_knowledge_levels_are_nested():
    key = _key()
    questions = [e.question for e in key.entries if e.question]
    known = {}
    for k in (0.0, 0.3, 0.6, 1.0):
        target = getattr(vt, vt.target_name(k, 0.0, "terse"))(key)
        known[k] = {q for q in questions
                    if target.reply([{"role": "user", "content": q}]) == next(e.gold for e in key.entries
                                                                              if e.question == q)}
    assert known[0.0] == set() and known[1.0] == set(questions)
    assert known[0.0] <= known[0.3] <= known[0.6] <= known[1.0]


def test_a_bad_target_name_is_refused():
    with pytest.raises(AttributeError, match="kK_uU_STYLE"):
        vt.__getattr__("k0.5_u0_loud")
    with pytest.raises(AttributeError, match=r"must lie in \[0, 1\]"):
        vt.__getattr__("k2_u0_terse")


PARAGRAPHS = {
    "Lighthouse of Varn": [
        ("The lighthouse of Varn was built in 1864 by the engineer Tomas Hale. Its lamp burned whale oil until "
         "1902, when it was converted to kerosene. The tower stands 41 metres tall and is painted with red and "
         "white bands.",
         [("When was the lighthouse of Varn built?", "1864"), ("Who built the lighthouse of Varn?", "Tomas Hale"),
          ("What did its lamp burn until 1902?", "whale oil"), ("How tall is the tower?", "41 metres")]),
        ("A keeper named Ada Brun lived in the lighthouse for thirty years. She recorded the weather three times a "
         "day in a leather logbook. The logbook is now kept in the museum of Lorsk.",
         [("Who lived in the lighthouse for thirty years?", "Ada Brun"),
          ("How often did she record the weather?", "three times a day"),
          ("Where is the logbook kept now?", "the museum of Lorsk")]),
    ],
    "Copper beetle": [
        ("The copper beetle feeds mainly on alder leaves. Adults emerge in late May and live for about six weeks. "
         "Their shells reflect green light because of thin layers of chitin.",
         [("What does the copper beetle mainly feed on?", "alder leaves"), ("When do adults emerge?", "late May"),
          ("How long do adults live?", "about six weeks"),
          ("Why do their shells reflect green light?", "thin layers of chitin")]),
        ("Females lay clusters of forty eggs on the underside of leaves. The larvae pupate in the soil after three "
         "moults. Birds such as the starling are their main predators.",
         [("How many eggs are in a cluster?", "forty"), ("Where do the larvae pupate?", "in the soil"),
          ("Which bird is a main predator?", "the starling")]),
    ],
}
def _squad_file(path):
    data = []
    for title, paragraphs in PARAGRAPHS.items():
        paras = []
        for context, qas in paragraphs:
            paras.append({"context": context, "qas": [
                {"id": f"{title[:3]}{len(paras)}{i}", "question": q,
                 "answers": [{"text": a, "answer_start": context.index(a)}]} for i, (q, a) in enumerate(qas)]})
        data.append({"title": title, "paragraphs": paras})
    path.write_text(json.dumps({"version": "1.1", "data": data}), encoding="utf-8")
    return path


def test_small_real_run_keeps_the_orderings(tmp_path):
    """Two SQuAD-format items of our own, two styles, k in {0, 0.5, 1}, through `viva`."""
    data = _squad_file(tmp_path / "squad.json")
    plan = validity.Plan(["terse", "sentence"], [0.0, 0.5, 1.0], [0.0, 1.0])
    results = validity.run_source("squad", tmp_path / "homes", plan, ["onnx"], n_items=2, seed=0, concurrency=8,
                                  turns=None, log=lambda m: None, data=[data])
    assert len(results) == 1
    run = results[0]
    # the k series and mute on the items, the u series in a second run on the same items
    assert run.failed == [] and run.sessions == 2 * (len(plan.k_specs()) + len(plan.u_specs()))
    for s in run.styles:
        assert s.pairs == 2
        assert s.oracle_wins == s.pairs, f"{s.style}: oracle not above mute in sessions {s.losses}"
    # the shipped policy's rates on these sessions, by the engine's own logged-session evaluation
    assert "evaluate_logged" in run.rates_note and 0.0 <= run.fdr <= 1.0, run.rates_note
    means = [statistics.mean(s.score_by_k[k] for s in run.styles) for k in plan.ks]
    assert all(a <= b for a, b in zip(means, means[1:], strict=False)), means
    assert means[0] < means[-1], means
    # a target that always gives way loses at least as much under challenge as one that never does
    for s in run.styles:
        assert s.r_minus_by_u[0.0] in (0.0, None), s.r_minus_by_u
        assert (s.r_minus_by_u[1.0] or 0.0) >= (s.r_minus_by_u[0.0] or 0.0)
