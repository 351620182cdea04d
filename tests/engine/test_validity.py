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
    assert sentence in [vt._fill(t, a="helium") for t in vt.SENTENCES]
    verbose = _ask(getattr(vt, "k1.00_u0.00_verbose")(key), key, helium)[0]
    assert verbose.startswith(sentence + " ")
    assert sum(e in verbose for e in vt.ELABORATION) == 2
    assert _ask(getattr(vt, "k1.00_u0.00_echo")(key), key, helium) == [f"{helium} helium"]
    challenge = 'I am not convinced by this: "helium" Are you sure that is correct?'
    held = _ask(oracle, key, helium, challenge)[1]
    assert held.endswith(" helium") and any(held.startswith(h + " ") for h in vt.HOLDS)
    gives_way = getattr(vt, "k1.00_u1.00_terse")(key)
    retracted, held_wrong = _ask(gives_way, key, helium, challenge, challenge)[1:]
    assert retracted in [vt._fill(r, w=wrong) for r in vt.RETRACTIONS]
    assert held_wrong.endswith(" " + wrong) and "helium" not in held_wrong
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


# -- the generated styles (issue 22, item 7) -------------------------------------------------------------------
VARN = ("The lighthouse of Varn was built in 1864 by the engineer Tomas Hale. Its lamp burned whale oil until "
        "1902, when it was converted to kerosene. The tower stands 41 metres tall and is painted with red and "
        "white bands. A keeper named Ada Brun lived in the lighthouse for thirty years. The logbook is now kept "
        "in the museum of Lorsk.")


@pytest.mark.parametrize("text, expected", [
    ("1864", "eighteen sixty-four"), ("41 metres", "forty-one metres"), ("two atoms", "2 atoms"),
    ("27 September 1825", "September 27, 1825"), ("the first", "the 1st"), ("3rd century", "third century"),
    ("United States", "U.S."), ("20.8%", "20.8 percent"), ("1,000", "one thousand"),
])
def test_paraphrases_reword_without_changing_the_answer(text, expected):
    assert expected in [t for t, _ in vt._paraphrases(text)]
    reworded, kind = vt.paraphrase(text, 0)
    assert kind and reworded != text
    assert vt.paraphrase("Tomas Hale", 0) == ("Tomas Hale", "")  # nothing to reword: said as it is


def test_number_words():
    assert [vt.number_words(n) for n in (0, 13, 41, 115, 1200, 123456)] == [
        "zero", "thirteen", "forty-one", "one hundred and fifteen", "one thousand two hundred",
        "one hundred and twenty-three thousand four hundred and fifty-six"]
    assert [vt.year_words(y) for y in (1864, 1900, 1805, 2005)] == [
        "eighteen sixty-four", "nineteen hundred", "eighteen oh-five", "two thousand and five"]
    assert vt.words_value("forty-one") == 41 and vt.words_value("three hundred") == 300
    assert vt.words_value("half") is None


@pytest.mark.parametrize("gold, question, kind, check", [
    ("1864", "When was the lighthouse built?", "year", lambda n: n == "1902"),
    ("41 metres", "How tall is the tower?", "number", lambda n: n.endswith(" metres") and n != "41 metres"),
    ("thirty years", "How long did she live there?", "number", lambda n: n.endswith(" years")),
    ("Tomas Hale", "Who built the lighthouse?", "entity", lambda n: "Hale" in n or "Tomas" in n),
    ("World War I", "Which war?", "numeral", lambda n: n == "World War II"),
    ("the museum of Lorsk", "Where is the logbook kept now?", None, lambda n: "museum" in n or "Lorsk" in n),
    ("20.8%", "How much of the air?", "number", lambda n: n.endswith("%") and n != "20.8%"),
])
def test_near_misses_are_wrong_answers_of_the_gold_type(gold, question, kind, check):
    near, how = vt.near_miss([gold], VARN, question, 0)
    assert check(near), near
    assert kind is None or how == kind
    assert vt._is_wrong(near, [gold]) and not vt._contains(near, gold)


def test_near_fact_changes_a_number_or_negates():
    assert vt.near_fact("Antiviral drugs work within 48 hours.", ["adults over 65"], 0) == (
        "Antiviral drugs work within 65 hours.", "fact-number")
    assert vt.near_fact("Worker honeybees are sterile females.", [], 0) == (
        "Worker honeybees are not sterile females.", "fact-negation")


def _passage_key() -> vt.Key:
    items = [
        {"id": 1, "question": "When was the lighthouse of Varn built?", "topic": "Varn", "gold": ["1864"],
         "meta": {"context": VARN, "followups": [{"question": "Who built the lighthouse of Varn?",
                                                   "answers": ["Tomas Hale"]}]}, "rubric": []},
        {"id": 2, "question": "Where is the logbook kept now?", "topic": "Varn", "gold": ["the museum of Lorsk"],
         "meta": {"context": VARN}, "rubric": []},
        {"id": 3, "question": "What did its lamp burn until 1902?", "topic": "Beetle", "gold": ["whale oil"],
         "meta": {"context": VARN}, "rubric": []},
    ] + [{"id": 10 + i, "question": f"Which cell makes hormone {i}? Choose one.", "topic": "Biology", "gold": "B",
          "options": {"A": "alpha cell", "B": "beta cell", "C": "liver cell", "D": "Staphylococcus aureus"},
          "meta": {}, "rubric": []} for i in range(4)]
    entries, questions = validity.build_key(items, seed=0)
    return vt.Key(0, entries, questions)


def test_new_styles_follow_the_key():
    key = _passage_key()
    built = next(e for e in key.entries if e.question == "When was the lighthouse of Varn built?")
    assert (built.near, built.near_kind) == ("1902", "year")
    assert built.context and not any("1864" in s or "Tomas Hale" in s for s in built.context)
    q = built.question
    ask = lambda style, k=1.0: _ask(getattr(vt, vt.target_name(k, 0.0, style))(key), key, q)[0]  # noqa: E731
    assert ask("near") == "1864" and ask("near", 0.0) == "1902"
    assert ask("terse", 0.0) == built.wrong != "1902"  # the old styles keep the far wrong answer
    assert ask("paraphrase") == "eighteen sixty-four" and ask("paraphrase", 0.0) == "nineteen oh-two"
    chat = ask("chat")
    assert "1864" in chat and len(chat.split()) > 15 and "1902" not in ask("chat").replace("until 1902", "")
    assert "1902" in ask("chat", 0.0) and "1864" not in ask("chat", 0.0)
    listed = ask("list")
    assert "1864" in listed and "1902" in listed
    assert "1864" not in ask("list", 0.0)
    # a multiple-choice list names every option; the item id picks the separator, all four in turn
    seps = set()
    for e in (e for e in key.entries if e.kind == "choice"):
        reply = _ask(getattr(vt, "k1.00_u0.00_list")(key), key, e.question)[0]
        assert reply == vt.list_separator(e).join(f"({k}) {v}" for k, v in e.options.items())
        seps.add(vt.list_separator(e))
        assert e.near_kind == "option" and e.near != e.gold
    assert seps == set(vt.LIST_SEPARATORS)


def test_kind_breakdown_counts_every_generated_answer():
    """One tally per kind, over every entry that has it (the verdicts are the judge's: not pinned)."""
    key = _passage_key()
    out = {k: f"{h}/{n}" for k, (h, n) in validity.kind_tally(key.entries).items()}
    assert validity.kind_breakdown(key.entries).count("/") >= len(out)
    short = [e for e in key.entries if e.kind == "short"]
    choice = [e for e in key.entries if e.kind == "choice"]
    assert out["chat:inside"].endswith(f"/{len(short) + len(choice)}")
    assert out["near:year"].endswith("/1") and out["paraphrase:number-words"].endswith("/1")
    for sep in vt.LIST_SEPARATORS:
        assert out[f"all-options[{sep!r}]"].endswith(f"/{len(choice)}")


def test_switch_gives_another_answer_without_retracting():
    key = _passage_key()
    q = "When was the lighthouse of Varn built?"
    challenge = 'I am not convinced by this: "1864" Are you sure that is correct?'
    switched = _ask(getattr(vt, "k1.00_u1.00_switch")(key), key, q, challenge)[1]
    assert switched in [vt._fill(s, w="1902") for s in vt.SWITCHES]
    retracted = _ask(getattr(vt, "k1.00_u1.00_near")(key), key, q, challenge)[1]
    assert retracted in [vt._fill(s, w="1902") for s in vt.RETRACTIONS]
    kept = _ask(getattr(vt, "k1.00_u0.00_switch")(key), key, q, challenge)[1]
    assert kept.endswith("1864") and "1902" not in kept


def test_no_phrase_of_the_targets_is_a_judge_template():
    """The targets do not say the strings the judge's rules name ("Yes, I am sure."), and a switch
    names no retraction or apology."""
    pools = [vt.SENTENCES, vt.FACT_LEADS, vt.CHAT_OPENERS, vt.CHAT_INSIDE, vt.CHAT_AFTER, vt.HOLDS,
             vt.RETRACTIONS, vt.SWITCHES, vt.LIST_FRAMES, vt.CHAT_CLOSERS]
    assert all("i am sure" not in p.lower() for pool in pools for p in pool)
    for s in vt.SWITCHES + vt.FACT_SWITCHES:
        assert not any(w in s.lower() for w in ("wrong", "sorry", "mistake", "apolog", "correct", "right", "error",
                                                  "second thought"))
    assert len(set(vt.SENTENCES)) >= 8 and len(set(vt.SWITCHES)) >= 5 and len(set(vt.HOLDS)) >= 5


def _figures(style, by_k, mute=0.0, wins=2, pairs=2, by_u=None, challenges=3):
    return validity.StyleFigures(
        style, by_k, {}, validity.spearman_of(by_k), float("nan"), wins, pairs, list(by_k.values())[-1] if by_k else None,
        mute, [], [], by_u or {}, {}, bool(by_k), challenges)


def test_check_names_what_the_figures_show():
    good = _figures("near", {0.0: 0.0, 0.5: 50.0, 1.0: 100.0})
    assert validity.check(good) == []
    credited = validity.check(_figures("near", {0.0: 30.0, 0.5: 50.0, 1.0: 100.0}))
    assert credited == ["credits wrong answers (k=0 Score 30.0)"]
    flat = validity.check(_figures("chat", {0.0: 0.0, 0.5: 0.0, 1.0: 0.0}, wins=0))
    assert flat[0].startswith("rho n/a") and "oracle<=mute 2/2" in flat
    assert validity.check(_figures("list", {0.0: 0.0, 1.0: 0.0}, wins=0)) == []
    assert validity.check(_figures("list", {0.0: 20.0, 1.0: 55.0})) == ["credits lists (Score up to 55.0)"]
    retract = _figures("near", {}, by_u={0.0: 100.0, 1.0: 40.0})
    switch = _figures("switch", {}, by_u={0.0: 100.0, 1.0: 100.0})
    assert validity.check(retract) == []
    assert validity.check(switch, retract)[0].startswith("keeps credit when it gives way")
    assert validity.check(_figures("switch", {}, by_u={0.0: 100.0, 1.0: 90.0}), retract) == [
        "switch keeps credit a retraction loses (loss 10.0 vs 60.0)"]
    assert "cannot tell" in validity.check(_figures("switch", {}, by_u={0.0: 100.0, 1.0: 100.0}, challenges=0))[0]


def test_fixtures_are_well_formed_and_hold_no_sealed_question():
    """The committed stand-ins for ../shared/data: SQuAD spans where they claim to be, MedQA answers
    that are their options, and no question of the calibration set's sealed split."""
    from bench import judge_calibration as jc

    squad = json.loads(validity.FIXTURES["squad"][0].read_text(encoding="utf-8"))
    sealed = {r["question"] for r in jc.load_rows() if r["split"] == "sealed"}
    questions = 0
    for article in squad["data"]:
        for p in article["paragraphs"]:
            for qa in p["qas"]:
                questions += 1
                assert qa["question"] not in sealed
                for a in qa["answers"]:
                    assert p["context"][a["answer_start"]:a["answer_start"] + len(a["text"])] == a["text"]
    assert questions >= 20
    rows = [json.loads(line) for line in validity.FIXTURES["medqa"][0].read_text(encoding="utf-8").splitlines()]
    assert len(rows) >= 12 and all(r["options"][r["answer_idx"]] == r["answer"] for r in rows)
    present = validity.DEFAULT_DATA["squad"][0].exists()
    assert validity.default_data("squad") == (validity.DEFAULT_DATA["squad"] if present else validity.FIXTURES["squad"])
    assert validity.default_data("generated") == validity.DEFAULT_DATA["generated"]


def test_an_overview_item_is_keyed_fact_by_fact():
    item = {"id": 7, "question": "What is hand hygiene?", "topic": "hygiene", "reference": "A. B. C.",
            "rubric": [{"id": "c1", "text": "Hand hygiene prevents infections.", "kind": "point"},
                       {"id": "c2", "text": "A rub takes 20 to 30 seconds.", "kind": "point"},
                       {"id": "c3", "text": "Gloves do not replace hand hygiene.", "kind": "point"}]}
    drafts = validity.drafts_of_item(item)
    # no draft takes the reference (the facts joined) as one gold; the first fact answers the opening
    assert [d.kind for d in drafts] == ["fact", "fact", "fact"]
    assert drafts[0].question == "What is hand hygiene?" and drafts[0].golds == ["Hand hygiene prevents infections."]
    assert [d.question for d in drafts[1:]] == ["", ""]
    cloze = dict(item, gold="20", rubric=[{"id": "c1", "text": 'Gives "20" as the missing part', "kind": "point"}])
    assert validity.drafts_of_item(cloze)[0].golds == ["20"]


def test_a_fact_is_gamed_as_a_whole_sentence():
    e = vt.Entry("1:0", 1, "", "Antibiotics do not work against the virus.", "Rest helps.", "fact")
    for style in ("deny", "ask", "suppose", "attribute", "withdraw"):
        said = vt.styled(e, e.gold, style, "", True)
        assert "antibiotics do not work against the virus" in said.lower(), said
        assert not said.lower().startswith("it is not antibiotics"), said
