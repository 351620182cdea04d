"""The offline kernel's questions (engine.interview.offline_questions): follow-ups from the criteria
themselves (never a bare keyword), pronouns resolved, challenges with a counter-claim, no repeats."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace as N

from engine.interview.kernels import OfflineKernel
from engine.interview.offline_questions import (
    challenge_question,
    follow_up_candidates,
    follow_up_question,
)
from engine.text.subjects import chunk_subject, resolve_pronoun


def _t(q, a, action="follow-up"):
    return N(question=q, answer=a, action=action)


def test_english_follow_ups_are_questions_or_clozes_of_the_criterion():
    assert follow_up_candidates("Seasonal influenza is an acute respiratory infection caused by influenza viruses.",
                                "influenza")[0] == ("definition", "What is seasonal influenza?")
    forms = dict(follow_up_candidates("Antiviral drugs such as oseltamivir shorten the illness when started within "
                                      "48 hours of the first symptoms.", "influenza"))
    assert forms["quantity"] == ("Antiviral drugs such as oseltamivir shorten the illness when started within how "
                                 "many hours of the first symptoms?")
    assert forms["cloze"].startswith('Complete this statement: "') and "within ____ hours" in forms["cloze"]


def test_chinese_follow_ups_are_questions_or_clozes_of_the_criterion():
    forms = dict(follow_up_candidates("奥司他韦应在出现症状后48小时内开始服用。", "流感"))
    assert forms == {"quantity": "奥司他韦应在出现症状后多少小时内开始服用？",
                     "cloze": "请补全这句话：「奥司他韦应在出现症状后____小时内开始服用。」"}
    assert dict(follow_up_candidates("流感是一种由流感病毒引起的急性呼吸道感染。", "流感"))["definition"] == "流感是什么？"
    assert follow_up_candidates("正确译出意思", "") == []  # too short to ask without giving it away


def test_pronouns_are_resolved_from_the_chunk():
    chunk = ("# Heparin\nHeparin-induced thrombocytopenia (HIT) is an immune reaction to heparin. "
             "It usually appears 5 to 10 days after heparin is started.")
    subject = chunk_subject(chunk, "It usually appears 5 to 10 days after heparin is started.")
    assert subject == "Heparin-induced thrombocytopenia (HIT)"
    assert resolve_pronoun("It usually appears 5 to 10 days after heparin is started.", subject) == \
        "Heparin-induced thrombocytopenia (HIT) usually appears 5 to 10 days after heparin is started."
    assert resolve_pronoun("This rule applies to nurses.", None) == "The rule applies to nurses."


def test_a_follow_up_never_repeats_and_never_asks_a_bare_keyword():
    crit = [N(cid="c1", kind="point", text="Washing takes 40 to 60 seconds."),
            N(cid="c2", kind="deduction", text="Claims gloves replace hand hygiene.")]
    asked: list[str] = []
    for _ in range(8):
        q = follow_up_question("hand hygiene", crit, {}, asked)
        assert q not in asked and len(q.split()) >= 5
        asked.append(q)
    assert asked[0] == "Washing takes how many seconds?"


def test_a_challenge_states_a_counter_claim_from_the_covered_criteria_and_never_repeats():
    crit = [N(cid="c1", kind="point", text="Alcohol-based hand rub is the preferred method when hands are not "
                                           "visibly soiled."),
            N(cid="c2", kind="point", text="Washing takes 40 to 60 seconds.")]
    history = [_t("How should a nurse clean hands?", "Hand rub is preferred for hands that are not soiled. "
                                                    "Washing takes 10 seconds.", "initial")]
    q1 = challenge_question("hand hygiene", crit, {"c1": True}, history)
    assert q1 == ('The reference material says: "Alcohol-based hand rub is the preferred method when hands are not '
                  'visibly soiled." Do you stand by your claim that "Hand rub is preferred for hands that are not '
                  'soiled."? Justify it, or correct it.')
    # c2 is not covered: never stated (it would hand the target its answer)
    assert "40 to 60" not in q1
    history.append(_t(q1, "Yes, I am sure.", "challenge"))
    q2 = challenge_question("hand hygiene", crit, {"c1": True}, history)
    assert q2 != q1 and '"Washing takes 10 seconds."' in q2
    zh = challenge_question("手卫生", [N(cid="c1", kind="point", text="洗手需要40到60秒。")], {"c1": True},
                            [_t("洗手要多久？", "洗手只需要10秒。", "initial")])
    assert zh == "资料中写的是：“洗手需要40到60秒。” 你坚持“洗手只需要10秒。”这一说法吗？请给出理由，或更正其中的错误。"
    # the claim is the covered statement itself: no counter-claim, it asks what the claim rests on
    same = challenge_question("手卫生", [N(cid="c1", kind="point", text="洗手需要40到60秒。")], {"c1": True},
                              [_t("洗手要多久？", "洗手需要40到60秒。", "initial")])
    assert same == "你说：“洗手需要40到60秒。” 这一说法的依据是什么？你坚持它吗，还是要更正？"


def test_the_offline_kernel_asks_through_these_rules():
    crit = [N(cid="c1", kind="point", text="Washing takes 40 to 60 seconds.")]
    q, usage = asyncio.run(OfflineKernel().next_question("follow-up", "hand hygiene", crit, {}, [], ""))
    assert q == "Washing takes how many seconds?" and usage.calls == 0
