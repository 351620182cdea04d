"""Kill a run mid-session, resume it, and compare with an uninterrupted run; CLI smoke tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from engine.interview.queries import list_sessions
from engine.store import Store
from tests.engine.interview_fixtures import make_bench, script_target_only

ROOT = Path(__file__).resolve().parents[2]


def viva(home: Path, *args: str, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui", "--home", str(home), *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300, **kw)


def run_args(fake) -> list[str]:
    return ["run", "--bench", "oxy", "--target", f"openai:fake-target@{fake.base_url}", "--kernel", "offline",
            "--policy", "threshold", "--turns", "6", "--concurrency", "1", "--seed", "7", "--json"]


def figures(home: Path) -> list[tuple]:
    store = Store(home / "viva.db")
    rows = store.query("SELECT t.idx, t.action, t.question, t.answer, ROUND(t.score, 6) AS s, "
                       "ROUND(COALESCE(t.cos, 9), 5) AS c FROM turns t JOIN sessions s ON s.id = t.session_id "
                       "ORDER BY s.item_id, t.idx")
    store.close()
    return [tuple(r.values()) for r in rows]


def test_kill_mid_run_then_resume_equals_uninterrupted(tmp_path, fake_openai):
    script_target_only(fake_openai, delay=0.3)
    homes = [tmp_path / "killed", tmp_path / "clean"]
    for h in homes:
        h.mkdir()
        store = Store(h / "viva.db")
        make_bench(store, n_items=2)
        store.close()

    proc = subprocess.Popen([sys.executable, "-m", "tui", "--home", str(homes[0]), *run_args(fake_openai)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    store = Store(homes[0] / "viva.db")
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        n = store.one("SELECT COUNT(*) AS n FROM turns WHERE answer IS NOT NULL")["n"] if \
            store.one("SELECT name FROM sqlite_master WHERE name = 'turns'") else 0
        if n >= 3:
            break
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    killed_at = store.one("SELECT COUNT(*) AS n FROM turns")["n"]
    assert 3 <= killed_at < 12
    assert list_sessions(store)[-1]["status"] == "interrupted"
    requests_before = fake_openai.count()

    resumed = viva(homes[0], "resume", "run:1", "--json")
    assert resumed.returncode == 0, resumed.stderr
    # finished turns were not redone: only the missing answers were asked
    answered_before = killed_at - 1 if killed_at else 0
    assert fake_openai.count() - requests_before <= 12 - answered_before
    dupes = store.query("SELECT session_id, idx, COUNT(*) AS n FROM turns GROUP BY session_id, idx HAVING n > 1")
    assert dupes == []
    assert all(r["status"] == "finished" for r in list_sessions(store))
    store.close()

    clean = viva(homes[1], *run_args(fake_openai))
    assert clean.returncode == 0, clean.stderr
    assert figures(homes[0]) == figures(homes[1])
    out_resumed, out_clean = json.loads(resumed.stdout), json.loads(clean.stdout)
    assert out_resumed["targets"][0]["score"] == out_clean["targets"][0]["score"]


def test_run_json_and_sessions_and_report(tmp_path, fake_openai):
    script_target_only(fake_openai)
    home = tmp_path / "h"
    home.mkdir()
    store = Store(home / "viva.db")
    make_bench(store)
    store.close()
    result = viva(home, *run_args(fake_openai))
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    row = out["targets"][0]
    assert row["target"] == f"openai:fake-target@{fake_openai.base_url}" and 0 <= row["score"] <= 100
    sessions = json.loads(viva(home, "sessions", "--json").stdout)
    assert sessions[0]["status"] == "finished" and sessions[0]["turns"] == 6
    assert sessions[0]["id"] in row["sessions"]
    md = viva(home, "report", str(sessions[0]["id"]))
    assert md.returncode == 0 and "## Turns" in md.stdout and "### Turn 5" in md.stdout
    js = json.loads(viva(home, "report", str(sessions[0]["id"]), "--format", "json").stdout)
    assert js["format"] == "viva-session" and len(js["turns"]) == 6


def test_bad_target_and_config_errors(tmp_path):
    home = tmp_path / "h"
    home.mkdir()
    store = Store(home / "viva.db")
    make_bench(store)
    store.close()
    bad = viva(home, "run", "--bench", "oxy", "--target", "nonsense", "--kernel", "offline")
    assert bad.returncode != 0 and "unknown target 'nonsense'" in bad.stderr
    cfg = tmp_path / "viva.yaml"
    cfg.write_text("interview:\n  turns: -1\n")
    res = subprocess.run([sys.executable, "-m", "tui", "--home", str(home), "--config", str(cfg), "sessions"],
                         cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 2 and "interview.turns" in res.stderr and str(cfg) in res.stderr


def test_python_adapter_target_with_llm_kernel_from_cli(tmp_path, fake_openai):
    from tests.engine.interview_fixtures import script_llm_kernel

    script_llm_kernel(fake_openai)
    home = tmp_path / "h"
    home.mkdir()
    store = Store(home / "viva.db")
    make_bench(store)
    store.close()
    result = viva(home, "run", "--bench", "oxy", "--target", "python:tests.engine.agents:OxygenAgent",
                  "--kernel", f"openai:fake-kernel@{fake_openai.base_url}", "--policy", "threshold",
                  "--turns", "3", "--json")
    assert result.returncode == 0, result.stderr
    row = json.loads(result.stdout)["targets"][0]
    assert row["target"] == "python:tests.engine.agents:OxygenAgent" and row["score"] == 75.0
    # the adapter answered locally: only kernel and judge calls reached the server
    assert all(not r.body.get("stream") for r in fake_openai.chat_requests())
    assert {r.body["model"] for r in fake_openai.chat_requests()} == {"fake-kernel"}
    bad = viva(home, "run", "--bench", "oxy", "--target", "python:tests.engine.agents:Nope", "--kernel", "offline")
    assert bad.returncode != 0 and "has no attribute 'Nope'" in bad.stderr
