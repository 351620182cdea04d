"""A run spread over worker processes that share the store (``viva run --workers N``, issue 17 item 2).

Real worker processes (``python -m engine.interview.workers``), real SQLite, the real openai client
against the fake server. Three properties: the same verdicts, scores and questions per session as in
one process; a worker killed mid-session loses no work (its session is handed to the other worker,
which resumes it); Ctrl-C stops every worker, leaves the sessions interrupted, and the run resumes.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from engine.config import Config, ModelConfig
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.interview.workers import worker_config
from engine.runtime import Runtime
from engine.store import Store
from engine.store.lease import pid_alive
from tests.engine.interview_fixtures import is_target, make_bench, script_llm_kernel, target_reply

ROOT = Path(__file__).resolve().parents[2]


def _runtime(home: Path, base_url: str) -> Runtime:
    endpoint = ModelConfig(base_url=base_url, model="fake-model", timeout=30, max_retries=1, max_concurrency=4)
    return Runtime(home=home, config=Config(kernel=endpoint, targets={"t": endpoint}))


def _plan(runtime: Runtime, n_items: int, workers: int) -> int:
    make_bench(runtime.store, n_items=n_items)
    return plan_run(runtime, RunRequest(bench="oxy", targets=["t"], kernel="config", policy="onnx", turns=3,
                                        concurrency=2, workers=workers, seed=11))


def _outcome(store: Store, run_id: int) -> list[dict]:
    """Per session, in order: item, status, score, and per turn the question, answer and verdicts."""
    out = []
    for s in store.query("SELECT * FROM sessions WHERE run_id = ? ORDER BY id", (run_id,)):
        turns = []
        for t in store.query("SELECT * FROM turns WHERE session_id = ? ORDER BY idx", (s["id"],)):
            verdicts = sorted((v["cid"], v["met"]) for v in store.query(
                "SELECT cid, met FROM verdicts WHERE turn_id = ?", (t["id"],)))
            turns.append((t["idx"], t["action"], t["question"], t["answer"], verdicts))
        out.append({"item": s["item_id"], "status": s["status"], "score": s["score"], "turns": turns})
    return out


def test_two_workers_give_the_same_results_as_one_process(tmp_path, fake_openai):
    script_llm_kernel(fake_openai)
    results, pids, seen = {}, {}, {}
    for workers in (1, 2):
        runtime = _runtime(tmp_path / f"home{workers}", fake_openai.base_url)
        run_id = _plan(runtime, 4, workers)
        events: list[tuple[int, str]] = []
        errors = asyncio.run(execute_run(runtime, run_id, lambda sid, kind, p, ev=events: ev.append((sid, kind))))
        assert errors == {sid: None for sid in run_sessions(runtime, run_id)}
        results[workers] = _outcome(runtime.store, run_id)
        pids[workers] = {r["pid"] for r in runtime.store.query("SELECT pid FROM sessions")}
        seen[workers] = events
        assert runtime.store.query("SELECT * FROM leases") == []
        assert runtime.store.one("SELECT status FROM runs WHERE id = ?", (run_id,))["status"] == "finished"
        runtime.close()
    assert all(s["status"] == "finished" and s["turns"] for s in results[1])
    assert results[2] == results[1]
    assert pids[1] == {os.getpid()} and os.getpid() not in pids[2]  # the second run ran in workers
    for workers in (1, 2):  # the progress display's inputs arrive either way (from the store with workers)
        kinds = [k for _, k in seen[workers]]
        assert kinds.count("session.finished") == 4 and kinds.count("verdicts") == 12


def test_worker_config_divides_endpoint_limits_and_carries_no_key(monkeypatch):
    monkeypatch.setenv("WORKER_TEST_KEY", "sk-test-0123456789abcdef0123456789")
    endpoint = ModelConfig(base_url="http://127.0.0.1:9/v1", api_key_env="WORKER_TEST_KEY", max_concurrency=5)
    data = worker_config(Config(kernel=endpoint, judge=endpoint, targets={"a": endpoint}), 2)
    assert data["kernel"]["max_concurrency"] == 3 and data["targets"]["a"]["max_concurrency"] == 3
    assert "sk-test" not in json.dumps(data) and data["kernel"]["api_key_env"] == "WORKER_TEST_KEY"
    assert Config.model_validate(data).judge.max_concurrency == 3


def test_a_killed_worker_loses_no_work(tmp_path, fake_openai):
    """The target's first answer for item 0 is held until the test has killed the worker running it."""
    held, opened = threading.Event(), threading.Event()
    calls = {"n": 0}

    def gated(body: dict) -> str:
        calls["n"] += 1
        if calls["n"] == 1:
            held.set()
            opened.wait(60)
        return target_reply(body)

    fake_openai.rule(lambda r: is_target(r) and "(item 0)" in r.text, gated)
    script_llm_kernel(fake_openai)
    home = tmp_path / "home"
    runtime = _runtime(home, fake_openai.base_url)
    run_id = _plan(runtime, 3, 2)
    first = run_sessions(runtime, run_id)[0]
    out: dict = {}

    def drive() -> None:
        rt = _runtime(home, fake_openai.base_url)
        try:
            out["errors"] = asyncio.run(execute_run(rt, run_id))
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            out["exc"] = exc
        finally:
            rt.close()

    thread = threading.Thread(target=drive)
    thread.start()
    try:
        assert held.wait(60), "the first session never asked the target"
        row = runtime.store.one("SELECT status, pid FROM sessions WHERE id = ?", (first,))
        assert row["status"] == "running" and row["pid"] not in (None, os.getpid())
        victim = row["pid"]
        os.kill(victim, signal.SIGKILL)
    finally:
        opened.set()
        thread.join(120)
    assert not thread.is_alive() and "exc" not in out, out.get("exc")
    assert out["errors"] == {sid: None for sid in run_sessions(runtime, run_id)}
    rows = runtime.store.query("SELECT id, status, pid FROM sessions ORDER BY id")
    assert [r["status"] for r in rows] == ["finished"] * 3
    assert rows[0]["pid"] != victim  # resumed by the surviving worker
    kinds = [r["kind"] for r in runtime.store.query(
        "SELECT kind FROM events WHERE session_id = ? ORDER BY seq", (first,))]
    assert "session.resumed" in kinds and kinds[-1] in ("session.finished", "session.rated", "metrics")
    assert runtime.store.query("SELECT * FROM leases") == []
    runtime.close()


def _interruptible() -> None:
    """Ctrl-C as a terminal delivers it: a shell that starts a job in the background without job control
    (as CI may run the suite) leaves SIGINT ignored, and an ignored signal is inherited across exec."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _viva(home: Path, *args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tui", "--home", str(home), *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_interruptible, **kw)


def test_ctrl_c_stops_every_worker_and_the_run_resumes(tmp_path, fake_openai):
    permits = threading.Semaphore(0)

    def gated(body: dict) -> object:
        if not permits.acquire(timeout=120):
            return {"status": 400, "message": "test gate never opened"}
        return target_reply(body)

    fake_openai.rule(is_target, gated)
    home = tmp_path / "home"
    home.mkdir()
    store = Store(home / "viva.db")
    make_bench(store, n_items=4)
    args = ["run", "--bench", "oxy", "--target", f"openai:fake-target@{fake_openai.base_url}", "--kernel",
            "offline", "--policy", "threshold", "--turns", "2", "--concurrency", "4", "--workers", "2", "--seed", "3"]
    parent = _viva(home, *args)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # every session waits for the target's first answer
            rows = store.query("SELECT status, pid FROM sessions")
            if len(rows) == 4 and all(r["status"] == "running" for r in rows):
                break
            assert parent.poll() is None, parent.stderr.read()
            time.sleep(0.05)
        workers = {r["pid"] for r in store.query("SELECT pid FROM sessions")}
        assert len(workers) == 2 and parent.pid not in workers
        parent.send_signal(signal.SIGINT)
        parent.wait(60)
    finally:
        permits.release(1000)
        if parent.poll() is None:
            parent.kill()
    assert parent.returncode != 0
    assert not any(pid_alive(pid) for pid in workers)
    assert [r["status"] for r in store.query("SELECT status FROM sessions")] == ["interrupted"] * 4
    assert store.query("SELECT * FROM leases") == []

    resumed = _viva(home, "resume", "run:1", "--workers", "2", "--json")
    out, err = resumed.communicate(timeout=180)
    assert resumed.returncode == 0, err
    assert json.loads(out)["failed"] == []
    assert [r["status"] for r in store.query("SELECT status FROM sessions")] == ["finished"] * 4
    store.close()


def test_workers_come_from_the_option_or_the_config_and_are_documented(home):
    from click.testing import CliRunner

    from engine.interview.workers import execute_on_workers  # noqa: F401 - the module imports cleanly
    from engine.store import loads
    from tui.cli import main

    runtime = Runtime(home=home, config=Config.model_validate({"interview": {"workers": 3}}))
    make_bench(runtime.store, n_items=1)
    planned = plan_run(runtime, RunRequest(bench="oxy", targets=["openai:m@http://127.0.0.1:9/v1"], kernel="offline", policy="threshold"))
    given = plan_run(runtime, RunRequest(bench="oxy", targets=["openai:m@http://127.0.0.1:9/v1"], kernel="offline", policy="threshold",
                                         workers=2))
    configs = {r["id"]: loads(r["config"]) for r in runtime.store.query("SELECT id, config FROM runs")}
    assert configs[planned]["workers"] == 3 and configs[given]["workers"] == 2
    runtime.close()
    text = CliRunner().invoke(main, ["run", "--help"]).output
    assert "--workers" in text and "Processes to spread the sessions over" in text
    bad = CliRunner().invoke(main, ["--home", str(home), "run", "--bench", "oxy", "--target", "t", "--workers", "0"])
    assert bad.exit_code == 2 and "--workers" in bad.output
