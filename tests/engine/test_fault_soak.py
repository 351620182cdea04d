"""A fault soak (issue 15): sessions through the fake server with a quarter of the requests faulty.

Every kind of fault: 429 with Retry-After, 500 (its body echoing the API key), timeouts, cut streams
(target) and malformed JSON (kernel, judge, ratings; echoing the key). Which request is faulty is a
rule, not chance: a hash of (seed, request body, how often that body was seen) below 25%, so a run is
reproducible and a retried request gets a roll of its own. The same sessions are then run without
faults in another home. Each faulty-run session must equal its fault-free twin (questions, answers,
actions, scores) or have failed loudly: status ``failed``, a named error in the row, a
``session.failed`` event and a line in the command's output, with every turn it did judge equal to the
twin's. No file under the home, and nothing printed, holds any 10-character piece of the key.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from engine.store import Store
from tests.engine.interview_fixtures import RATINGS, judge_reply, make_bench, target_reply

ROOT = Path(__file__).resolve().parents[2]
KEY = "Pv7Lq2Xs9Dk4Wj8Hn3Rb6Tf1Gc5Mz0Ay"
ENV = "VIVA_SOAK_KEY"
PIECES = [KEY[i:i + 10] for i in range(len(KEY) - 9)]
RATE = 0.25
TIMEOUT = 2.0
STREAM_KINDS = ("429", "500", "timeout", "cut")
JSON_KINDS = ("429", "500", "timeout", "malformed")


def honest(body: dict[str, Any]) -> str:
    """The fault-free reply: target, judge (also to a repair re-ask), kernel question or ratings."""
    if body.get("stream"):
        return target_reply(body)
    messages = body["messages"]
    text = "\n".join(str(m.get("content", "")) for m in messages)
    if "judge of an oral examination" in text:
        first_user = next(i for i, m in enumerate(messages) if m["role"] == "user")
        return judge_reply({"messages": messages[: first_user + 1]})  # a repair re-ask gets the same verdict
    if "You rate an oral examination" in text:
        return json.dumps(RATINGS)
    # each question differs from those asked before (a repeated question is refused as degenerate)
    n = next(m for m in messages if m["role"] == "user")["content"].count("[turn ")
    if "a CHALLENGE" in text:
        return json.dumps({"question": f"Are you sure about that? ({n})"})
    return json.dumps({"question": f"What else do you know about oxygen? ({n})"})


class Faults:
    """The fault rule of the module docstring, with a count of what it injected."""

    def __init__(self, seed: int, rate: float = RATE):
        self.seed, self.rate, self.on = seed, rate, True
        self.seen: Counter[str] = Counter()
        self.injected: Counter[str] = Counter()
        self.lock = threading.Lock()

    def __call__(self, body: dict[str, Any]) -> Any:
        reply = honest(body)
        if not self.on:
            return reply
        digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
        with self.lock:
            n = self.seen[digest]
            self.seen[digest] += 1
        roll = int(hashlib.sha256(f"{self.seed}|{digest}|{n}".encode()).hexdigest(), 16)
        if roll % 10_000 >= self.rate * 10_000:
            return reply
        kinds = STREAM_KINDS if body.get("stream") else JSON_KINDS
        kind = kinds[(roll // 10_000) % len(kinds)]
        with self.lock:
            self.injected[kind] += 1
        if kind == "429":
            return {"status": 429, "retry_after": 1, "message": "rate limited"}
        if kind == "500":
            return {"status": 500, "message": f"upstream failure for key {KEY}; try again"}
        if kind == "timeout":
            return {"content": reply, "delay": TIMEOUT + 1.0}
        if kind == "cut":
            return {"content": reply, "truncate": True, "token_delay": 0.01}
        return f"Here is my verdict, key {KEY}: {{\"verdicts\": [oops"


def leaks(data: bytes | str) -> list[str]:
    blob = data.encode("utf-8", "replace") if isinstance(data, str) else data
    return [p for p in PIECES if p.encode() in blob]


def viva(home: Path, cfg: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui", "--home", str(home), "--config", str(cfg), *args],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def record(store: Store) -> dict[str, dict[str, Any]]:
    """Item question -> the session's status, error and turns (idx, action, question, answer, score)."""
    out = {}
    for s in store.query("SELECT s.id, s.status, s.error, s.score, i.question FROM sessions s "
                         "JOIN items i ON i.id = s.item_id ORDER BY s.id"):
        turns = store.query("SELECT idx, action, question, answer, score FROM turns WHERE session_id = ? "
                            "ORDER BY idx", (s["id"],))
        out[s["question"]] = {**s, "turns": [(t["idx"], t["action"], t["question"], t["answer"],
                                              None if t["score"] is None else round(t["score"], 9)) for t in turns]}
    return out


def test_sessions_under_a_quarter_of_faulty_requests_equal_the_clean_run_or_fail_loudly(tmp_path, fake_openai):
    faults = Faults(seed=17)  # a seed that injects every kind of fault (the request bodies decide)
    fake_openai.rule(lambda r: True, faults)
    # one retry per call: with a quarter of the requests faulty, some calls fail for good (about 1 in 16),
    # so both outcomes, "equal to the clean run" and "failed loudly", are exercised
    endpoint = {"base_url": fake_openai.base_url, "api_key_env": ENV, "max_retries": 1, "timeout": TIMEOUT}
    cfg = tmp_path / "viva.yaml"  # JSON is YAML
    cfg.write_text(json.dumps({"kernel": {**endpoint, "model": "fake-kernel"},
                               "judge": {**endpoint, "model": "fake-judge"},
                               "targets": {"flaky": {**endpoint, "model": "fake-target"}},
                               "interview": {"judge_repairs": 2}}))
    env = {**os.environ, ENV: KEY, "PYTHONPATH": str(ROOT)}
    env.pop("VIVA_HOME", None)
    args = ["run", "--bench", "oxy", "--target", "flaky", "--kernel", "config", "--policy", "threshold",
            "--turns", "3", "--concurrency", "4", "--seed", "5", "--json"]
    homes = {"faulty": tmp_path / "faulty", "clean": tmp_path / "clean"}
    stores = {}
    for name, home in homes.items():
        home.mkdir()
        stores[name] = Store(home / "viva.db")  # held open, so the WAL file stays to be scanned
        make_bench(stores[name], n_items=8)

    soaked = viva(homes["faulty"], cfg, env, *args)
    faults.on = False
    clean = viva(homes["clean"], cfg, env, *args)
    assert clean.returncode == 0, clean.stderr[-3000:]

    assert set(faults.injected) == {"429", "500", "timeout", "cut", "malformed"}, faults.injected
    injected = sum(faults.injected.values())
    requests = sum(faults.seen.values())
    assert 0.15 <= injected / requests <= 0.35, (injected, requests)

    got, want = record(stores["faulty"]), record(stores["clean"])
    assert set(got) == set(want) and len(got) == 8
    assert all(w["status"] == "finished" and len(w["turns"]) == 3 for w in want.values())
    failed = []
    for question, session in got.items():
        twin = want[question]
        if session["status"] == "finished":
            assert session["turns"] == twin["turns"] and session["score"] == twin["score"], question
            assert session["error"] is None
            continue
        assert session["status"] == "failed", (question, session["status"])
        assert re.match(r"^[A-Z]\w*(Error|Exception): \S", session["error"] or ""), session["error"]
        event = stores["faulty"].one("SELECT payload FROM events WHERE session_id = ? AND kind = 'session.failed'",
                                     (session["id"],))
        assert event and json.loads(event["payload"])["error"] == session["error"]
        judged = [t for t in session["turns"] if t[4] is not None]
        assert judged == twin["turns"][: len(judged)]  # nothing judged differently before the failure
        failed.append(session["id"])
    out = json.loads(soaked.stdout)
    assert sorted(f["session"] for f in out["failed"]) == sorted(failed)
    assert soaked.returncode == (1 if failed else 0), soaked.stderr[-3000:]

    for name, home in homes.items():
        files = [p for p in home.rglob("*") if p.is_file()]
        assert {"viva.db", "viva.log"} <= {p.name for p in files}
        found = {str(p.relative_to(home)): leaks(p.read_bytes()) for p in files}
        assert {f: w for f, w in found.items() if w} == {}, name
    for text in (soaked.stdout, soaked.stderr, clean.stdout, clean.stderr):
        assert leaks(text) == []
    assert "[REDACTED]" in (homes["faulty"] / "logs" / "viva.log").read_text()  # the echoed key was logged, redacted
    for s in stores.values():
        s.close()
