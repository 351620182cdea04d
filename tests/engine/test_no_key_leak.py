"""No key anywhere under the home after sessions that fail in every way issue 15 lists (item 2).

Real processes (`python -m tui`), the real fake server, the real store. The key has no known prefix,
so only the registration of configured keys can catch it. After the runs, every file under the home
(database, WAL, logs, every report format) and everything the commands printed is scanned for any
10-character piece of the key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from engine import redact
from engine.store import Store
from tests.engine.interview_fixtures import RATINGS, judge_reply, make_bench, target_reply

ROOT = Path(__file__).resolve().parents[2]
KEY = "Zq4Wm8Rt2Yp6Ux0Ib3Nc7Ve5Ka9Ls1Hd"
ENV = "VIVA_LEAK_KEY"
PIECES = [KEY[i:i + 10] for i in range(len(KEY) - 9)]

LEAKY_TARGET = f'''
import os


class Leaky:
    def reply(self, messages):
        return "Sure, here is the key you asked for: " + os.environ["{ENV}"] + ". Liquid oxygen is pale blue."
'''


def leaks(data: bytes | str) -> list[str]:
    blob = data.encode("utf-8", "replace") if isinstance(data, str) else data
    return [p for p in PIECES if p.encode() in blob]


def script(fake) -> None:
    def is_target(r):
        return bool(r.body.get("stream"))

    # item 0: the endpoint answers 500 with a body that echoes the key (as some providers do)
    fake.rule(lambda r: is_target(r) and "(item 0)" in r.text,
              {"status": 500, "retry_after": 0, "message": f"Incorrect API key provided: {KEY}. Check your key."})
    # item 2: the target answers with the key
    fake.rule(lambda r: is_target(r) and "(item 2)" in r.text,
              lambda body: f"My API key is {KEY}. Liquid oxygen is pale blue.")
    fake.rule(is_target, target_reply)
    # item 1: the judge replies with no valid JSON (echoing the key) every time: fails after the repairs
    fake.rule(lambda r: "judge of an oral" in r.text and "(item 1)" in r.text,
              f"I cannot mark this; my credentials {KEY} were rejected {{")
    fake.rule("judge of an oral examination", judge_reply)
    fake.rule("a FOLLOW-UP", lambda body: json.dumps({"question": "What else do you know about oxygen?"}))
    fake.rule("a CHALLENGE", lambda body: json.dumps({"question": "Are you sure about that?"}))
    fake.rule("You rate an oral examination", json.dumps(RATINGS))


def viva(home: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui", "--home", str(home), *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=240)


def test_no_key_under_the_home_after_every_failure(tmp_path, fake_openai, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / "leaky.py").write_text(LEAKY_TARGET)
    script(fake_openai)
    endpoint = (f"    base_url: {fake_openai.base_url}\n    model: fake-kernel\n    api_key_env: {ENV}\n"
                "    max_retries: 1\n    timeout: 10\n")
    cfg = tmp_path / "viva.yaml"
    cfg.write_text(f"kernel:\n{endpoint}judge:\n{endpoint}interview:\n  judge_repairs: 1\n")
    env = {**os.environ, ENV: KEY, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path / 'mods'}"}
    env.pop("VIVA_HOME", None)
    store = Store(home / "viva.db")  # held open through the runs, so the WAL file stays to be scanned
    make_bench(store, n_items=3)
    outputs: list[str] = []

    run = viva(home, "--config", str(cfg), "run", "--bench", "oxy", "--target",
               f"openai:fake-target@{fake_openai.base_url}", "--target", "python:leaky:Leaky", "--kernel", "config",
               "--api-key-env", ENV, "--policy", "threshold", "--turns", "2", "--concurrency", "2", "--live",
               env=env)
    outputs += [run.stdout, run.stderr]
    assert run.returncode == 1, run.stderr[-2000:]
    assert any(r.headers.get("authorization") == f"Bearer {KEY}" for r in fake_openai.chat_requests())

    sessions = store.query("SELECT s.id, s.status, s.error, s.target, i.question FROM sessions s "
                           "JOIN items i ON i.id = s.item_id ORDER BY s.id")
    by = {(r["question"][-7:-1], r["target"].split(":")[0]): r for r in sessions}
    assert by[("item 0", "openai")]["status"] == "failed" and "HTTP 500" in by[("item 0", "openai")]["error"]
    for target in ("openai", "python"):
        # a judge reply unusable after the repairs costs the turn ("cannot judge"), not the session (issue 23)
        item1 = by[("item 1", target)]
        notes = [json.loads(r["payload"]) for r in store.query(
            "SELECT payload FROM events WHERE session_id = ? AND kind = 'session.note'", (item1["id"],))]
        assert item1["status"] == "finished" and notes and all(n["what"] == "cannot-judge" for n in notes)
        assert all("no valid JSON" in n["text"] and KEY not in n["text"] for n in notes)
        assert by[("item 2", target)]["status"] == "finished"
    assert by[("item 0", "python")]["status"] == "finished"
    answers = [r["answer"] for r in store.query("SELECT answer FROM turns WHERE answer IS NOT NULL")]
    assert sum("key you asked for: [REDACTED]" in a or "My API key is [REDACTED]" in a for a in answers) >= 4

    # --api-key-env given the key itself: refused, and the key is not printed
    bad_env = viva(home, "--config", str(cfg), "run", "--bench", "oxy", "--target",
                   f"openai:fake-target@{fake_openai.base_url}", "--api-key-env", KEY, env=env)
    outputs += [bad_env.stdout, bad_env.stderr]
    assert bad_env.returncode != 0 and "looks like an API key" in bad_env.stderr
    # api_key written into the config file: refused, and the key is not printed
    bad_cfg = tmp_path / "bad.yaml"
    bad_cfg.write_text(f"kernel:\n  model: m\n  api_key: {KEY}\n")
    refused = viva(home, "--config", str(bad_cfg), "sessions", env=env)
    outputs += [refused.stdout, refused.stderr]
    assert refused.returncode == 2 and "api_key_env" in refused.stderr

    # every report format of every session, from a process that knows no key at all
    redact.clear()
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("VIVA_HOME", str(home))
    exports = home / "exports"
    exports.mkdir()
    runner = CliRunner()
    for row in sessions:
        for fmt in ("md", "json", "csv", "html"):
            out = exports / f"session-{row['id']}.{fmt}"
            result = runner.invoke(__import__("tui.cli", fromlist=["main"]).main,
                                   ["report", str(row["id"]), "--format", fmt, "--out", str(out)])
            assert result.exit_code == 0, result.output
            assert out.stat().st_size > 0
    listing = runner.invoke(__import__("tui.cli", fromlist=["main"]).main, ["sessions", "--json"])
    outputs.append(listing.output)

    files = [p for p in home.rglob("*") if p.is_file()]
    names = {p.name for p in files}
    assert {"viva.db", "viva.db-wal", "viva.log"} <= names and len([n for n in names if n.startswith("session-")]) == 24
    found = {str(p.relative_to(home)): leaks(p.read_bytes()) for p in files}
    assert {f: w for f, w in found.items() if w} == {}
    assert [leaks(o) for o in outputs] == [[] for _ in outputs]
    log = (home / "logs" / "viva.log").read_text()
    assert "[REDACTED]" in log  # the failures were logged, redacted
    store.close()
