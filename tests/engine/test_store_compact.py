"""Constant storage per turn (schema 7): texts and messages stored once, events carrying what changed.

Real SQLite, the real fake OpenAI server through the real openai client, the real ONNX embedder. The
fixture ``fixtures/store_v6`` was written by the engine at schema 6 (``record.py`` there says how).
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import sqlite3
from pathlib import Path

import pytest

from engine.delta import apply_delta, compact, delta_if_smaller, make_delta
from engine.events.encode import decode_summary, encode_summary
from engine.llm import cache_key
from engine.store import Store
from engine.store.schema import SCHEMA_VERSION
from engine.store.texts import get_messages, get_text, put_messages, put_text, request_of, response_of
from tests.engine.fixtures.store_v6.record import TURNS, VOLATILE, record, shown, without
from tests.engine.interview_fixtures import script_llm_kernel
from tests.floats import assert_same

FIXTURE = Path(__file__).parent / "fixtures" / "store_v6"


# -- deltas ---------------------------------------------------------------------------------------

def test_a_delta_always_gives_back_the_text():
    rng = random.Random(7)
    words = ["alpha ", "beta", "\n", "gamma.", "c0ffee12deadbeef", "\n\n", "x", "氧气", "<<<A 1234567890abcdef>>>\n"]
    for _ in range(2000):
        base = "".join(rng.choice(words) for _ in range(rng.randint(0, 40)))
        new = list(base)
        for _ in range(rng.randint(0, 5)):
            k = rng.randint(0, len(new))
            roll = rng.random()
            if roll < 0.4:
                new.insert(k, rng.choice(words))
            elif roll < 0.7 and new:
                del new[min(k, len(new) - 1)]
            else:
                new[k:k + 3] = list(rng.choice(words))
        text = "".join(new)
        assert apply_delta(base, make_delta(base, text)) == text


def test_a_delta_costs_what_changed():
    summary = "\n".join(f"Sentence {i} the candidate said about oxygen." for i in range(300))
    grown = summary + "\nLiquid oxygen is pale blue."
    assert make_delta(summary, grown) == [[0, len(summary)], "\nLiquid oxygen is pale blue."]
    retracted = summary[:summary.rfind("\n")] + "\nI was wrong about that."
    assert len(compact(make_delta(summary, retracted))) < 60
    # a nonce renamed in every quote marker costs one rename, not one edit per marker
    old = "".join(f"<<<ANSWER 0123456789abcdef>>>\nanswer {i}\n<<<END ANSWER 0123456789abcdef>>>\n" for i in range(100))
    new = old.replace("0123456789abcdef", "fedcba9876543210") + "<<<ANSWER fedcba9876543210>>>\nnew\n"
    ops = delta_if_smaller(old, new)
    assert ops is not None and ops[0] == {"rename": [["0123456789abcdef", "fedcba9876543210"]]}
    assert len(compact(ops)) < 120 and apply_delta(old, ops) == new
    assert delta_if_smaller("short", "entirely different") is None  # not smaller: the text is kept whole


def test_a_summary_event_decodes_from_the_view_or_is_unknown():
    base = "Oxygen is abundant.\nPlants release it."
    edit = encode_summary(base + "\nIt is pale blue.", 3, base)
    assert edit is not None and edit["summary_base"] == 3
    assert decode_summary(None, edit["summary_base"], edit["summary_delta"], {3: base}.get) == base + "\nIt is pale blue."
    assert decode_summary(None, 3, edit["summary_delta"], {}.get) is None  # a reader without the base
    assert decode_summary("whole", None, None, {}.get) == "whole"  # a payload written before schema 7
    assert encode_summary("anything", -1, None) is None


# -- texts and messages ---------------------------------------------------------------------------

def test_a_conversation_adds_two_messages_per_turn_and_shares_its_system_prompt(store):
    system = {"role": "system", "content": "You are examined. " * 50}
    convos = {s: [system, {"role": "user", "content": f"Question 0 of session {s}"}] for s in (1, 2)}
    previous: dict[int, list] = {1: None, 2: None}
    nodes = []
    for turn in range(12):
        for s, convo in convos.items():
            last, previous[s] = put_messages(store, convo, previous[s])
            assert get_messages(store, last) == convo
            convo += [{"role": "assistant", "content": f"Answer {turn}"},
                      {"role": "user", "content": f"Question {turn + 1} of session {s}"}]
        nodes.append(store.one("SELECT COUNT(*) AS n FROM llm_messages")["n"])
    assert [b - a for a, b in zip(nodes, nodes[1:], strict=False)] == [4] * 11  # 2 new messages x 2 sessions
    assert store.one("SELECT COUNT(*) AS n FROM llm_messages WHERE role = 'system'")["n"] == 1
    # the same request again stores nothing new
    before = store.one("SELECT COUNT(*) AS n FROM texts")["n"]
    put_messages(store, convos[1][:-2], None)
    assert store.one("SELECT COUNT(*) AS n FROM texts")["n"] == before


def test_texts_are_stored_once_and_a_rollback_forgets_their_ids(store):
    first = "one text that is long enough to be worth an edit " * 4
    a = put_text(store, first)
    assert put_text(store, first) == a and get_text(store, a) == first
    b = put_text(store, first + "grown by a few words", a, first)
    assert store.one("SELECT base_id FROM texts WHERE id = ?", (b,))["base_id"] == a
    with pytest.raises(RuntimeError), store.transaction():
        lost = put_text(store, "a text rolled back")
        raise RuntimeError
    assert store.one("SELECT 1 AS x FROM texts WHERE id = ?", (lost,)) is None
    again = put_text(store, "a text rolled back")
    assert get_text(store, again) == "a text rolled back"
    other = Store(store.path)  # another connection reads the deltas back with no memo
    assert get_text(other, b) == first + "grown by a few words"
    other.close()


# -- a database at schema 6 -----------------------------------------------------------------------

def _load_fixture(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.executescript((FIXTURE / "store.sql").read_text(encoding="utf-8"))
    assert conn.execute("PRAGMA user_version").fetchone()[0] == 6
    conn.close()


def _logical_bytes(path: Path) -> int:
    conn = sqlite3.connect(path)
    total = 0
    for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        if columns:
            total += conn.execute(f"SELECT COALESCE(SUM({' + '.join(f'COALESCE(length({c}), 0)' for c in columns)}), 0) "
                                  f"FROM {table}").fetchone()[0]
    conn.close()
    return total


def test_a_schema_6_database_migrates_and_replays_identically(tmp_path):
    expected = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))
    assert expected["schema"] == 6
    path = tmp_path / "viva.db"
    _load_fixture(path)
    before = _logical_bytes(path)
    store = Store(path)
    assert store.schema_version == SCHEMA_VERSION >= 7
    columns = {r["name"] for r in store.query("PRAGMA table_info(llm_calls)")}
    assert {"messages_id", "params", "response_id", "finish_reason"} <= columns and "request" not in columns
    assert store.one("SELECT COUNT(*) AS n FROM turns WHERE summary IS NOT NULL")["n"] == 0
    for sid, seen in expected["sessions"].items():
        # exact, floats too: the fold of the stored events replays stored values, nothing recomputed here
        # the fold, the session document and the Markdown report, up to what issue 36 added on purpose
        assert _before_issue_36(shown(store, int(sid))) == seen
    # every request reads back as it was stored, and is the request its cache key was made of
    calls = store.query("SELECT id, cache_key, base_url, model, params FROM llm_calls ORDER BY id")
    assert sorted(str(c["id"]) for c in calls) == sorted(expected["requests"])
    for c in calls:
        request = request_of(store, c["id"])
        assert request == expected["requests"][str(c["id"])]
        assert cache_key(c["base_url"], c["model"], request["messages"], request["params"]) == c["cache_key"]
    # events carry what changed: the summary as an edit of the turn before's, metrics without the score list
    events = store.events(0)
    assert any("summary_delta" in e.payload for e in events if e.kind == "verdicts")
    assert not any("scores" in e.payload for e in events if e.kind == "metrics")
    store.close()
    assert Store(path).schema_version == SCHEMA_VERSION  # opening again migrates nothing
    after = _logical_bytes(path)
    assert after < 0.7 * before


def test_a_migrated_database_resumes_its_conversation_from_the_cache(tmp_path):
    """The answers stored before the migration are what the cache gives back after it."""
    path = tmp_path / "viva.db"
    _load_fixture(path)
    raw = sqlite3.connect(path)
    answers = {r[0]: json.loads(r[1]) for r in raw.execute("SELECT id, response FROM llm_calls WHERE response IS NOT NULL")}
    raw.close()
    store = Store(path)
    for call_id, answer in answers.items():
        assert response_of(store, call_id) == answer
    store.close()


# -- the same sessions recorded now ---------------------------------------------------------------

def _normalised(value, base_url: str):
    """What two recordings of the same session share: no timings, clock times, server address or event
    count (``last_seq``: a streamed answer is coalesced into as many ``answer.delta`` events as time gives)."""
    return json.loads(json.dumps(without(value, VOLATILE | {"at", "last_seq"})).replace(base_url, "<fake>"))


_OFFLINE_RATIONALE = re.compile(r'"offline: (?:[^"\\]|\\.)*"')


def _recorded(value, base_url: str):
    """:func:`_normalised`, with the offline judge's rationales masked: the fixture was recorded before the
    offline judge took each sentence in the context of its own question (issue 12), which moved the cosines
    and the sentence its rationale quotes (not one verdict). The migration test above compares everything.

    Also recorded before the offline kernel wrote its questions from the criteria (issue 24): in a session
    of the offline kernel the policy's questions, and the target's input token counts that follow from
    them, are masked (the floats are compared with tests/floats.py's tolerance by the caller)."""
    text = _OFFLINE_RATIONALE.sub('"offline: <rationale>"', json.dumps(_normalised(value, base_url)))
    offline = '"kernel": "offline"' in text

    def mask(v):
        if isinstance(v, dict):
            out = {k: mask(x) for k, x in v.items()}
            if offline and out.get("actor") == "policy" and "question" in out:
                out["question"] = "<offline question>"
            if offline and "tokens_in" in out:
                out["tokens_in"] = "<tokens>"
            return out
        if isinstance(v, list):
            return [mask(x) for x in v]
        return v

    return mask(json.loads(text))


_NUMBERED = re.compile(r" \(\d+\)(?=\")")


def _since_issue_23(value, base_url: str):
    """:func:`_recorded`, without what issue 23 changed on purpose: the scripted kernel numbers its questions
    (a question asked before is now refused), the prompts are longer (``interview-3``: valid JSON examples),
    so prompt and reply token counts moved, and the embedder's batches hold other texts, which moves the
    summaries' cosines in the seventh decimal (compared within tests/floats.py's tolerance); the turns,
    actions, answers, verdicts, summaries and scores must still be the same. Issue 36 added the document's
    ``chance`` (None for these items, which are not multiple choice), masked with the counts; issue 39 the
    document's ``notes`` (the session's ``session.note`` events; checked apart by the caller)."""
    if isinstance(value, dict) and value.get("format") == "viva-session":
        value = {k: v for k, v in value.items() if k != "notes"}
    masked = without(_recorded(value, base_url), {"tokens_in", "tokens_out", "cost", "chance"})
    return json.loads(_NUMBERED.sub("", json.dumps(masked)))


def _before_issue_36(shown_session: dict) -> dict:
    """A session as shown, without what issue 36 added on purpose: the document's ``chance`` (None: these
    items are not multiple choice) and the "too few to read" notes of the agreement rows (under 50
    reviewed verdicts)."""
    document = dict(shown_session["document"])
    assert document.pop("chance") is None
    markdown = re.sub(r"; too few to read( \(n = \d+ verdict\(s\) \\< 50\))?", "", shown_session["markdown"])
    return {**shown_session, "document": document, "markdown": markdown}


def _before_issue_33(shown_session: dict) -> dict:
    """An offline-kernel session as shown, up to its first challenge: issue 33 changed on purpose what the
    offline kernel's challenges contest (a claim the target earned credit for, with a wrong alternative),
    so the turns from the first challenge on, and the figures made from them, differ from the recording,
    and its follow-ups are worded as real questions; every turn before it (the answers, verdicts,
    summaries, scores) must still be the same."""
    out = {}
    for part in ("view", "document"):
        value = dict(shown_session[part])
        turns = value["turns"]
        first = next((i for i, t in enumerate(turns) if t.get("action") == "challenge"), len(turns))
        # and the follow-ups' wording (a real question for the fact, issue 33): asked where they were asked
        value["turns"] = [{k: v for k, v in t.items() if not (k == "question" and t.get("action") == "follow-up")}
                          for t in turns[:first]]
        for key in ("metrics", "decision", "last_seq", "session", "overrides", "agreement", "notes", "info", "ended",
                    "criteria"):
            value.pop(key, None)
        out[part] = value
    return out


ROUND_12_TURN = 4
"""Session A's first turn the twelfth held-out round changed on purpose: its turn-3 reply to "Are you sure about
that?", "Liquid oxygen is pale blue." (another fact, none of the contested claim's words but "oxygen"), now reads as
talking around the claim (``engine.judge.offline.talks_around``): given up, so the examiner presses another claim
on turn 4 (``press-again``), and the session runs otherwise from there."""


def _before_round_12(value):
    """A view or document of session A without what the twelfth round changed on purpose (:data:`ROUND_12_TURN`): its
    turns before that turn, and none of the session's figures (metrics, decision, score), which follow from them all."""
    keep = {"turns", "criteria", "criteria_by_version", "rubric", "rubric_version_id", "item", "format", "version", "info"}
    out = {k: v for k, v in value.items() if k in keep}
    out["turns"] = [t for t in value.get("turns") or [] if t.get("idx", 0) < ROUND_12_TURN]
    return out


def _cos_masked(value):
    """A view or document without the cosines issue 39 changed on purpose: ``cos_t`` is the cosine of the
    summaries' sentence sums (:mod:`engine.knowledge.summary_vector`), no longer of the encoder's vector
    of each whole summary; each turn's ``cos`` and the decision state's (index 2) are masked. What the
    recording computes now is checked against that rule by :func:`_cos_follow_the_rule`."""
    out = json.loads(json.dumps(value))
    for holder in [*(out.get("turns") or []), out.get("decision")]:
        if not isinstance(holder, dict):
            continue
        if holder.get("cos") is not None:
            holder["cos"] = "masked"
        if isinstance(holder.get("state"), list) and len(holder["state"]) > 2:
            holder["state"][2] = "masked"
    return out


def _cos_follow_the_rule(value) -> int:
    """Every turn's ``cos`` of a view is the rule's (engine.knowledge.summary_vector) between its summary and
    the last judged turn's before it, recomputed here from the stored summaries with the real encoder, and
    each decision's state holds the cosine of the turn it followed; returns how many were checked."""
    from engine.knowledge.embed import get_embedder
    from engine.knowledge.summary_vector import summaries_cosine, summary_vector

    embed = get_embedder().embed
    checked, prev = 0, None
    for turn in value["turns"]:
        if turn.get("summary") is None:
            continue
        if prev is not None and turn.get("cos") is not None:
            want = summaries_cosine(summary_vector(turn["summary"], embed), summary_vector(prev, embed))
            assert abs(turn["cos"] - want) < 1e-5, (turn["idx"], turn["cos"], want)
            checked += 1
        prev = turn["summary"]
    by_idx = {t["idx"]: t for t in value["turns"]}
    for holder, chose in [*((t, t["idx"]) for t in value["turns"]), (value.get("decision") or {}, None)]:
        if holder.get("state"):  # a decision's state: after the turn before the one it chose
            before = by_idx[(holder["turn"] if chose is None else chose) - 1]
            assert abs(holder["state"][2] - (1.0 if before.get("cos") is None else before["cos"])) < 1e-5
            checked += 1
    return checked


async def test_the_same_sessions_recorded_now_fold_to_the_same_view(tmp_path, fake_openai):
    """Recorded again on this machine: what the cosines and policy states computed by the ONNX embedder
    hold may differ in their last bits from the recording CPU's (issue 27), nothing else may."""
    expected = json.loads((FIXTURE / "expected.json").read_text(encoding="utf-8"))
    script_llm_kernel(fake_openai)
    runtime, ids = await record(tmp_path, fake_openai.base_url)
    for sid in ids:
        now = shown(runtime.store, sid)
        then = expected["sessions"][str(sid)]
        if sid == ids[1]:  # the offline kernel's session: what issue 33 changed on purpose is left out
            now, then = _before_issue_33(now), _before_issue_33(then)
        # recomputed on this CPU: the policy states within tests/floats.py's tolerance, the rest (texts,
        # actions, verdicts, counts) exactly, without what issues 23 and 39 changed on purpose (the
        # cosines: checked against their rule instead)
        assert _cos_follow_the_rule(now["view"]) >= 2
        for part in ("view", "document"):
            a, b = _cos_masked(_since_issue_23(now[part], fake_openai.base_url)), \
                _cos_masked(_since_issue_23(then[part], expected["base_url"]))
            if sid == ids[0]:  # what the twelfth round changed on purpose, from turn 4 on
                a, b = _before_round_12(a), _before_round_12(b)
            assert_same(a, b)
        # the document's notes (issues 39 and the twelfth round; not in the recording): session A's examiner presses
        # another claim once turn 3's reply talked around the contested one
        assert [(n["turn"], n["what"]) for n in now["document"].get("notes", [])] == (
            [(ROUND_12_TURN, "press-again")] if sid == ids[0] else [])
        if sid == ids[0]:
            turn = now["view"]["turns"][ROUND_12_TURN]
            assert (turn["action"], turn["actor"]) == ("challenge", "kernel")
    calls = fake_openai.count()
    # a cached re-run of session B (offline kernel) makes no network call and stores no new text
    from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions

    texts = runtime.store.one("SELECT COUNT(*) AS n FROM texts")["n"]
    again = plan_run(runtime, RunRequest(bench="oxy", targets=[f"openai:fake-target@{fake_openai.base_url}"],
                                         kernel="offline", policy="threshold", turns=TURNS, seed=3))
    assert not any((await execute_run(runtime, again)).values())
    assert fake_openai.count() == calls
    assert runtime.store.one("SELECT COUNT(*) AS n FROM texts")["n"] == texts
    b, b2 = (shown(runtime.store, s)["view"] for s in (ids[1], run_sessions(runtime, again)[0]))
    assert [t["summary"] for t in b["turns"]] == [t["summary"] for t in b2["turns"]]
    runtime.store.close()


# -- bytes per turn -------------------------------------------------------------------------------

def test_bytes_stored_per_turn_stay_flat(tmp_path, fake_openai):
    """A long session (LLM kernel and judge on the fake server, whose judge's summary keeps every
    answer): the bytes a turn adds at turn ~100 are no more than at turn ~10 plus a small margin."""
    from bench.store_bytes import measure, per_turn

    script_llm_kernel(fake_openai)
    rows = per_turn(asyncio.run(measure(tmp_path, fake_openai, 104)))
    window = 8  # the scripted target cycles through 8 answers: compare whole cycles (turns 9-16, 97-104)

    def mean(start: int, group: str) -> float:
        return sum(r[group] for r in rows[start:start + window]) / window

    for group in ("requests", "events", "turns"):
        early, late = mean(8, group), mean(96, group)
        assert late <= 1.25 * early + 200, (group, early, late)
    # before schema 7 the same session stored ~4.8x more request bytes per turn at turn 100 than at 10
