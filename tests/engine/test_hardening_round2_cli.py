"""Issue 26 (hardening, round 2), the rest of "every command": through the real ``viva`` command line.

- ``viva rescore`` without bubblewrap: one line, unless ``--trust-eval-code``;
- a disk that fills up in the middle of ``viva run`` (another process takes the last byte while a
  target answers): the sessions end ``interrupted``, one line says to free space and
  ``viva resume run:N``, and once space is freed ``viva resume`` finishes the run, identical to a run
  that was never interrupted;
- ``viva resume`` after a ``python:`` target's module stops importing: one line naming the module;
- a read-only home made with ``chmod`` (as a normal user: root ignores mode bits);
- a YAML bomb in a topics file (``viva bench generate --topics``);
- ``viva bench import jsonl`` records whose data files are links, or name paths outside the home.

Tiny and read-only homes are made with bubblewrap mounts (a size-limited tmpfs), as in
tests/engine/test_hardening_round2.py. "As a normal user" runs viva as uid 65534 with ``setpriv``,
inside a bubblewrap view where the venv's interpreter (under ``/root``, mode 0700 here) is reachable.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from engine.store import Store
from tests.engine.interview_fixtures import make_bench

ROOT = Path(__file__).resolve().parents[2]
IS_ROOT = os.geteuid() == 0
USER = 65534
HAS_BWRAP = shutil.which("bwrap") is not None
needs_bwrap = pytest.mark.skipif(not HAS_BWRAP, reason="needs bubblewrap to mount a tiny or a private view")


def _reach_python() -> list[str]:
    """bubblewrap arguments that let another uid run this interpreter: each folder on the way to the
    interpreter's prefixes that others cannot enter is replaced by an empty tmpfs holding only a
    read-only bind of the prefix (nothing else of that folder is visible)."""
    prefixes = sorted({os.path.realpath(sys.base_prefix), os.path.realpath(sys.prefix)})
    tops: dict[str, list[str]] = {}
    for p in prefixes:
        closed = [a for a in reversed(Path(p).parents) if str(a) != "/" and not os.stat(a).st_mode & stat.S_IXOTH]
        if closed:
            tops.setdefault(str(closed[0]), []).append(p)
    args: list[str] = []
    for top, inner in tops.items():
        args += ["--tmpfs", top]
        for p in inner:
            args += ["--ro-bind", p, p]
    return args


def _user_possible() -> str | None:
    if not IS_ROOT:
        return "not root: this run is already a normal user's"
    if shutil.which("setpriv") is None or not HAS_BWRAP:
        return "needs setpriv and bubblewrap to become a normal user"
    if not all(os.stat(a).st_mode & stat.S_IXOTH for a in [ROOT, *ROOT.parents] if str(a) != "/"):
        return f"{ROOT} cannot be entered by another user"
    return None


needs_user = pytest.mark.skipif(_user_possible() is not None, reason=str(_user_possible()))
SETPRIV = ["setpriv", f"--reuid={USER}", f"--regid={USER}", "--clear-groups"]


def user_dir() -> Path:
    """A fresh folder the normal user owns (mode 0700), outside pytest's root-only tmp_path."""
    d = Path(tempfile.mkdtemp(prefix="viva-h2-"))
    os.chown(d, USER, USER)
    return d


def chown_tree(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        os.chown(p, USER, USER, follow_symlinks=False)


def env_for(cwd: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("VIVA_HOME",)}
    env.update({"PYTHONPATH": str(ROOT), "HOME": str(cwd), "LANG": "C.UTF-8"})
    return env


def viva(home: Path, *args: str, cwd: Path, wrap: list[str] | None = None, as_user: bool = False,
         env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """``viva --home HOME ARGS`` in a new process (cwd ``cwd``), optionally inside a bubblewrap view
    (``wrap``: bwrap's arguments) and as the normal user."""
    argv = [sys.executable, "-m", "tui", "--home", str(home), *args]
    if as_user:
        argv = SETPRIV + argv
    if wrap is not None or as_user:
        argv = ["bwrap", "--dev-bind", "/", "/", *(_reach_python() if as_user else []), *(wrap or []), "--", *argv]
    return subprocess.run(argv, env=env or env_for(cwd), cwd=cwd, capture_output=True, text=True, timeout=600)


def one_line_error(proc: subprocess.CompletedProcess, *words: str) -> str:
    """The command failed with exactly one line on stderr (progress lines aside), holding ``words``."""
    assert "Traceback" not in proc.stderr and "Logging error" not in proc.stderr, proc.stderr[-2000:]
    lines = [ln for ln in proc.stderr.splitlines()  # progress lines and `viva run`'s "run N planned" aside
             if ln.strip() and not ln.startswith("viva: ") and not (ln.startswith("run ") and " planned (" in ln)]
    assert proc.returncode != 0 and len(lines) == 1, proc.stderr
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


# -- viva rescore without bubblewrap ----------------------------------------------------------------
ECHO_AGENT = 'class Agent:\n    def reply(self, messages):\n        return "Hello World"\n'


def _task_home(tmp_path: Path) -> Path:
    """A home with a task item the offline kernel can run (an opening message) and an eval_code point."""
    from engine.bench.items import add_item, create_benchmark
    from engine.bench.rubric import create_rubric

    home = tmp_path / "home"
    store = Store(home / "viva.db")
    bid = create_benchmark(store, "echo", "test")
    item = add_item(store, bid, 0, protocol="task", topic="echo", question="Ask the agent to say Hello World.",
                    meta={"max_rounds": 1, "opening": "Please say Hello World."})
    create_rubric(store, item, [
        {"text": "The agent's last message is exactly Hello World", "kind": "code", "weight": 1,
         "eval_code": 'last = chat_history[-1]\nassert last.content == "Hello World", f"got {last.content!r}"'},
        {"text": "The agent says Hello World", "kind": "point", "weight": 1}], author="human")
    store.close()
    (tmp_path / "echo_agent.py").write_text(ECHO_AGENT)
    return home


def _code_verdicts(home: Path) -> list[tuple[int, str]]:
    conn = sqlite3.connect(home / "viva.db")
    try:
        return conn.execute("SELECT met, rationale FROM verdicts WHERE source = 'code' ORDER BY id").fetchall()
    finally:
        conn.close()


def test_rescore_refuses_without_bubblewrap_unless_trusted(tmp_path):
    home = _task_home(tmp_path)
    ran = viva(home, "run", "--bench", "echo", "--target", "python:echo_agent:Agent", "--kernel", "offline",
               "--trust-eval-code", "--quiet", "--json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert _code_verdicts(home) == [(1, "eval_code passed")]
    no_bwrap = tmp_path / "no-bwrap-bin"
    no_bwrap.mkdir()
    env = {**env_for(tmp_path), "PATH": str(no_bwrap)}

    refused = viva(home, "rescore", "1", "--force", cwd=tmp_path, env=env)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr[-2000:]
    lines = [ln for ln in refused.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, refused.stderr
    assert lines[0].startswith("session 1: not re-scored: eval_code not run: bubblewrap (bwrap) is not on PATH")
    assert "--trust-eval-code" in lines[0]
    assert _code_verdicts(home) == [(1, "eval_code passed")]  # nothing judged, nothing written

    trusted = viva(home, "rescore", "1", "--force", "--trust-eval-code", cwd=tmp_path, env=env)
    assert trusted.returncode == 0, trusted.stderr[-2000:]
    assert "session 1: rubric v1 → v1; Score 100.0 → 100.0" in trusted.stdout
    assert _code_verdicts(home) == [(1, "eval_code passed")] * 2  # the code ran again, unisolated


# -- a disk that fills up in the middle of viva run ------------------------------------------------
FILLING_AGENT = r'''
import os
import sqlite3
import time

ANSWER = "Oxygen is the most abundant element in the Earth's crust."


def wait_for_running(n):
    """Until ``n`` sessions are running (so that another worker has one in flight), at most 60 s."""
    end = time.monotonic() + 60
    while n and time.monotonic() < end:
        conn = sqlite3.connect(os.path.join(os.path.dirname(os.environ["FILLER"]), "viva.db"), timeout=10)
        try:
            if conn.execute("SELECT COUNT(*) FROM sessions WHERE status = 'running'").fetchone()[0] >= n:
                return
        finally:
            conn.close()
        time.sleep(0.05)


def wait_for_none_running():
    """Until no session is running (each was interrupted), at most 60 s."""
    end = time.monotonic() + 60
    while time.monotonic() < end:
        conn = sqlite3.connect(os.path.join(os.path.dirname(os.environ["FILLER"]), "viva.db"), timeout=10)
        try:
            if conn.execute("SELECT COUNT(*) FROM sessions WHERE status = 'running'").fetchone()[0] == 0:
                return
        finally:
            conn.close()
        time.sleep(0.05)


class Agent:
    """Answers; at its second answer, once (while FILL_FLAG exists), another process's worth of data
    takes every free byte of the home's file system (FILLER), as a log or a download would.
    With FILL_WHEN_RUNNING, an answer asked for after the disk filled waits until every session was
    interrupted: a session whose writes still find room (SQLite reuses its WAL's pages) cannot finish
    before its worker hears of the fault, so the outcome does not depend on which worker is quicker."""

    def reply(self, messages):
        t = sum(1 for m in messages if m["role"] == "user")
        flag = os.environ["FILL_FLAG"]
        if (os.environ.get("FILL_WHEN_RUNNING") and not os.path.exists(flag)
                and os.path.exists(os.environ["FILLER"])):
            wait_for_none_running()
            return ANSWER
        if t == 2 and os.path.exists(flag):
            try:  # claimed by one session only: two sessions at their second answer race for the flag
                os.unlink(flag)
            except FileNotFoundError:
                return ANSWER
            wait_for_running(int(os.environ.get("FILL_WHEN_RUNNING", "0")))
            fd = os.open(os.environ["FILLER"], os.O_WRONLY | os.O_CREAT, 0o600)
            try:
                while True:
                    os.write(fd, b"\0" * 65536)
            except OSError:
                pass
            finally:
                os.close(fd)
        return ANSWER
'''

DRIVER = r'''
import json, os, shutil, sqlite3, subprocess, sys

spec = json.loads(sys.argv[1])
home, cwd = spec["home"], spec["cwd"]
env = {**os.environ, "FILL_FLAG": spec["flag"], "FILLER": os.path.join(home, "filler.bin"), **spec.get("env", {})}


def viva(*args):
    p = subprocess.run([*spec["prefix"], sys.executable, "-m", "tui", "--home", home, *args], cwd=cwd, env=env,
                       capture_output=True, text=True, timeout=600)
    return {"rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr}


def sessions():
    conn = sqlite3.connect(os.path.join(home, "viva.db"))
    try:
        return [list(r) for r in conn.execute("SELECT id, status FROM sessions ORDER BY id")]
    finally:
        conn.close()


shutil.copy2(spec["seed"], os.path.join(home, "viva.db"))
if spec["uid"] is not None:
    for p in (home, os.path.join(home, "viva.db")):
        os.chown(p, spec["uid"], spec["uid"])
out = {"run": viva("run", "--bench", "oxy", "--target", "python:filling_agent:Agent", "--kernel", "offline",
                   "--policy", "threshold", "--turns", "4", "--concurrency", "2", "--seed", "7",
                   *spec.get("run_args", []))}
out["stored_after_run"] = sessions()
_c = sqlite3.connect(os.path.join(home, "viva.db"))
out["errors"] = [list(r) for r in _c.execute("SELECT id, error FROM sessions")]
_c.close()
out["listed_after_run"] = viva("sessions", "--json")
out["filled"] = os.path.exists(os.path.join(home, "filler.bin"))
os.unlink(os.path.join(home, "filler.bin"))  # the user frees space
out["resume"] = viva("resume", "run:1", "--json", "--quiet")
out["stored_after_resume"] = sessions()
conn = sqlite3.connect(os.path.join(home, "viva.db"))
out["turns"] = [list(r) for r in conn.execute(
    "SELECT s.item_id, t.idx, t.action, t.question, t.answer, ROUND(t.score, 6) FROM turns t "
    "JOIN sessions s ON s.id = t.session_id ORDER BY s.item_id, t.idx")]
conn.close()
with open(spec["out"], "w") as f:
    json.dump(out, f)
'''


@pytest.fixture(scope="module")
def embed_cache(tmp_path_factory) -> Path:
    """The embedder's optimised graph (about 90 MB), built once and bind-mounted read-only into every
    tiny home, so that the small tmpfs holds only what a run writes."""
    cache = Path(tempfile.mkdtemp(prefix="viva-h2-cache-"))
    os.chmod(cache, 0o755)
    code = (f"from engine.knowledge.embed import set_cache_dir, get_embedder; set_cache_dir({str(cache)!r}); "
            "get_embedder()")
    subprocess.run([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True,
                   timeout=600)
    for p in cache.iterdir():
        os.chmod(p, 0o644)
    yield cache
    shutil.rmtree(cache, ignore_errors=True)


def _full_disk_mid_run(work: Path, cache: Path, as_user: bool, run_args: tuple[str, ...] = (),
                       env: dict[str, str] | None = None) -> dict:
    """Seed a home (3 adaptive items), then inside one bubblewrap view where the home is an 8 MB tmpfs:
    ``viva run [RUN_ARGS]`` (the disk fills at a second answer), read the sessions, free the space,
    ``viva resume``."""
    seed = work / "seed.db"
    store = Store(seed)
    make_bench(store, n_items=3)
    store.close()
    (work / "filling_agent.py").write_text(FILLING_AGENT)
    flag = work / "fill.flag"
    flag.write_text("fill once")
    home = work / "home"
    home.mkdir()
    if as_user:
        chown_tree(work)
    out = work / "out.json"
    spec = {"home": str(home), "cwd": str(work), "flag": str(flag), "seed": str(seed), "out": str(out),
            "prefix": SETPRIV if as_user else [], "uid": USER if as_user else None, "run_args": list(run_args),
            "env": env or {}}
    argv = ["bwrap", "--dev-bind", "/", "/", *(_reach_python() if as_user else []),
            "--size", str(8 * 1024 * 1024), "--tmpfs", str(home), "--ro-bind", str(cache), str(home / "cache"),
            "--", sys.executable, "-c", DRIVER, json.dumps(spec)]
    proc = subprocess.run(argv, env=env_for(work), cwd=work, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(out.read_text())


def _check_full_disk(result: dict) -> None:
    assert result["filled"], "the filler never ran"
    run = subprocess.CompletedProcess([], result["run"]["rc"], result["run"]["stdout"], result["run"]["stderr"])
    one_line_error(run, "disk full", "free some space", "`viva resume run:1`")
    stored = dict(result["stored_after_run"])
    assert "running" not in stored.values(), stored  # stored so, not only read so
    assert "interrupted" in stored.values() and "failed" not in stored.values(), (stored, result.get("errors"))
    assert set(stored.values()) <= {"interrupted", "created", "finished"}, stored
    listed = json.loads(result["listed_after_run"]["stdout"])
    assert {r["id"]: r["status"] for r in listed} == stored
    assert result["resume"]["rc"] == 0, result["resume"]["stderr"][-2000:]
    assert [s for _, s in result["stored_after_resume"]] == ["finished"] * 3


@needs_bwrap
def test_a_full_disk_mid_run_interrupts_then_resumes(tmp_path, embed_cache):
    result = _full_disk_mid_run(tmp_path, embed_cache, as_user=False)
    _check_full_disk(result)
    # the same run, never interrupted, on a roomy home: the resumed run is identical
    clean = tmp_path / "clean"
    store = Store(clean / "viva.db")
    make_bench(store, n_items=3)
    store.close()
    env = {**env_for(tmp_path), "FILL_FLAG": str(tmp_path / "no-flag"), "FILLER": str(tmp_path / "unused")}
    ran = viva(clean, "run", "--bench", "oxy", "--target", "python:filling_agent:Agent", "--kernel", "offline",
               "--policy", "threshold", "--turns", "4", "--concurrency", "2", "--seed", "7", "--quiet",
               cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr[-2000:]
    conn = sqlite3.connect(clean / "viva.db")
    turns = [list(r) for r in conn.execute(
        "SELECT s.item_id, t.idx, t.action, t.question, t.answer, ROUND(t.score, 6) FROM turns t "
        "JOIN sessions s ON s.id = t.session_id ORDER BY s.item_id, t.idx")]
    conn.close()
    assert result["turns"] == turns and len(turns) == 12


@needs_bwrap
def test_a_full_disk_mid_run_with_two_workers(tmp_path, embed_cache):
    """``viva run --workers 2``: the worker whose session meets the full disk interrupts its sessions
    and reports the fault; the parent hands out nothing more, the other worker interrupts what it runs,
    and the run ends in the same one line (no session ``running`` or ``failed``), then resumes."""
    result = _full_disk_mid_run(tmp_path, embed_cache, as_user=False, run_args=("--workers", "2"),
                                env={"FILL_WHEN_RUNNING": "2"})  # the disk fills while both workers run one
    _check_full_disk(result)
    assert sorted(s for _, s in result["stored_after_run"]) == ["created", "interrupted", "interrupted"], result


@needs_user
def test_a_full_disk_mid_run_as_a_normal_user(embed_cache):
    work = user_dir()
    try:
        _check_full_disk(_full_disk_mid_run(work, embed_cache, as_user=True))
    finally:
        shutil.rmtree(work, ignore_errors=True)


def test_the_reserve_is_made_once_and_released_for_the_last_write(tmp_path):
    from engine.store.faults import (
        RESERVE_BYTES,
        RESERVE_NAME,
        despite_full,
        release_reserve,
        reserve_space,
    )

    assert reserve_space(tmp_path) and os.lstat(tmp_path / RESERVE_NAME).st_blocks * 512 >= RESERVE_BYTES
    assert reserve_space(tmp_path)  # already there
    calls = []

    def write():
        calls.append(1)
        if len(calls) == 1:
            raise sqlite3.OperationalError("database or disk is full")
        return "written"

    assert despite_full(tmp_path, write) == "written" and len(calls) == 2
    assert not (tmp_path / RESERVE_NAME).exists()
    calls.clear()
    with pytest.raises(sqlite3.OperationalError):  # no reserve left to release: the error stands
        despite_full(tmp_path, write)
    assert not release_reserve(tmp_path)
    (tmp_path / "elsewhere").write_text("x")
    (tmp_path / RESERVE_NAME).symlink_to(tmp_path / "elsewhere")
    assert not reserve_space(tmp_path)  # a link in its place is never followed
    assert (tmp_path / "elsewhere").read_text() == "x"


EACH_DRIVER = r"""
import json, os, shutil, sqlite3, subprocess, sys

spec = json.loads(sys.argv[1])
home = spec["home"]
shutil.copy2(spec["seed"], os.path.join(home, "viva.db"))
fd = os.open(os.path.join(home, "filler.bin"), os.O_WRONLY | os.O_CREAT, 0o600)
try:
    while True:
        os.write(fd, b"\0" * 65536)
except OSError:
    pass
finally:
    os.close(fd)
out = {"free": os.statvfs(home).f_bavail, "commands": []}
for args in spec["commands"]:
    p = subprocess.run([sys.executable, "-m", "tui", "--home", home, *args], cwd=spec["cwd"], capture_output=True,
                       text=True, timeout=600, stdin=subprocess.DEVNULL)
    out["commands"].append({"args": args, "rc": p.returncode, "stdout": p.stdout, "stderr": p.stderr})
os.unlink(os.path.join(home, "filler.bin"))
conn = sqlite3.connect(os.path.join(home, "viva.db"))
out["integrity"] = conn.execute("PRAGMA integrity_check").fetchone()[0]
out["sessions"] = [list(r) for r in conn.execute("SELECT id, status, score FROM sessions ORDER BY id")]
out["benchmarks"] = [r[0] for r in conn.execute("SELECT name FROM benchmarks ORDER BY id")]
conn.close()
with open(spec["out"], "w") as f:
    json.dump(out, f)
"""

EVERY_COMMAND = [["sessions"], ["bench", "list"], ["kb", "list"], ["report", "1"], ["bench", "export", "oxy"],
                 ["rescore", "1", "--force"], ["resume", "run:1"],
                 ["run", "--bench", "oxy", "--target", "python:tests.engine.agents:OxygenAgent", "--kernel", "offline",
                  "--policy", "threshold", "--turns", "2"],
                 ["kb", "build", "k", "src"], ["bench", "import", "jsonl", "q.jsonl", "--name", "n"],
                 ["bench", "delete", "oxy", "--yes"]]


@pytest.fixture(scope="module")
def finished_home(tmp_path_factory) -> Path:
    """A folder with ``seed/`` (a home: benchmark oxy, run 1 with session 1 finished), ``src/`` (a
    document) and ``q.jsonl`` (an item): what the every-command tests run their commands with."""
    work = tmp_path_factory.mktemp("finished")
    seed_home = work / "seed"
    store = Store(seed_home / "viva.db")
    make_bench(store)
    store.close()
    ran = viva(seed_home, "run", "--bench", "oxy", "--target", "python:tests.engine.agents:OxygenAgent", "--kernel",
               "offline", "--policy", "threshold", "--turns", "2", "--quiet", cwd=work)
    assert ran.returncode == 0, ran.stderr[-2000:]
    (work / "src").mkdir()
    (work / "src" / "a.txt").write_text("Oxygen is the most abundant element in the Earth's crust.")
    (work / "q.jsonl").write_text(json.dumps(ITEM) + "\n")
    return work


def _sessions_of(db: Path) -> list[list]:
    conn = sqlite3.connect(db)
    try:
        return [list(r) for r in conn.execute("SELECT id, status, score FROM sessions ORDER BY id")]
    finally:
        conn.close()


@needs_bwrap
def test_every_command_on_a_full_disk_is_one_line(tmp_path, embed_cache, finished_home):
    """Every command on a home whose file system has no byte left (after viva closed it cleanly, so
    even SQLite's shared-memory file cannot be made): one line, no traceback; nothing is damaged."""
    seed_home = finished_home / "seed"
    home = tmp_path / "home"
    home.mkdir()
    out = tmp_path / "out.json"
    spec = {"home": str(home), "cwd": str(finished_home), "seed": str(seed_home / "viva.db"), "out": str(out),
            "commands": EVERY_COMMAND}
    argv = ["bwrap", "--dev-bind", "/", "/", "--size", str(2 * 1024 * 1024), "--tmpfs", str(home),
            "--ro-bind", str(embed_cache), str(home / "cache"), "--", sys.executable, "-c", EACH_DRIVER, json.dumps(spec)]
    proc = subprocess.run(argv, env=env_for(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["free"] == 0
    for c in result["commands"]:
        done = subprocess.CompletedProcess(c["args"], c["rc"], c["stdout"], c["stderr"])
        one_line_error(done, "disk full", "free some space")
    assert result["integrity"] == "ok"
    before = _sessions_of(seed_home / "viva.db")
    assert result["sessions"] == before and before[0][1] == "finished"  # nothing lost or changed
    assert result["benchmarks"] == ["oxy"]


READERS = [["sessions"], ["bench", "list"], ["kb", "list"], ["report", "1"], ["report", "run:1"],
           ["bench", "export", "oxy"], ["bench", "rubric", "show", "1"]]


@needs_bwrap
def test_every_command_on_a_read_only_mount(tmp_path, finished_home):
    """A home mounted read-only (what root meets; mode bits do not stop root): the commands that only
    read work, every command that writes says so in one line, and the home is unchanged."""
    home = tmp_path / "home"
    shutil.copytree(finished_home / "seed", home)
    _sessions_of(home / "viva.db")  # opened and closed once, as after any use
    before = sorted((p.name, p.stat().st_size) for p in home.rglob("*") if p.is_file())
    ro = ["--ro-bind", str(home), str(home)]
    for args in READERS:
        proc = viva(home, *args, cwd=finished_home, wrap=ro)
        assert proc.returncode == 0 and "Traceback" not in proc.stderr, (args, proc.stderr[-2000:])
        assert proc.stdout.strip(), args
    for args in EVERY_COMMAND:
        if args in READERS:
            continue
        proc = viva(home, *args, cwd=finished_home, wrap=ro)
        one_line_error(proc, "read-only", "viva can read this home but not write")
    assert sorted((p.name, p.stat().st_size) for p in home.rglob("*") if p.is_file()) == before


# -- viva resume after a python: target's module stops importing -----------------------------------
FLAKY_AGENT = '''
import os


class Agent:
    def reply(self, messages):
        if os.path.exists("crash.flag"):
            raise RuntimeError("the agent crashed")
        return "Oxygen is the most abundant element in the Earth's crust."
'''


def test_resume_after_a_python_target_stops_importing(tmp_path):
    home = tmp_path / "home"
    store = Store(home / "viva.db")
    make_bench(store, n_items=2)
    store.close()
    (tmp_path / "my_agent.py").write_text(FLAKY_AGENT)
    (tmp_path / "crash.flag").write_text("")
    failed = viva(home, "run", "--bench", "oxy", "--target", "python:my_agent:Agent", "--kernel", "offline",
                  "--policy", "threshold", "--turns", "2", "--quiet", cwd=tmp_path)
    assert failed.returncode == 1 and "the agent crashed" in failed.stdout
    (tmp_path / "crash.flag").unlink()

    def statuses():
        conn = sqlite3.connect(home / "viva.db")
        try:
            return conn.execute("SELECT status, error IS NOT NULL FROM sessions ORDER BY id").fetchall()
        finally:
            conn.close()

    before = statuses()
    (tmp_path / "my_agent.py").rename(tmp_path / "moved.py")
    shutil.rmtree(tmp_path / "__pycache__", ignore_errors=True)
    for what in ("run:1", "1"):
        proc = viva(home, "resume", what, "--quiet", cwd=tmp_path)
        one_line_error(proc, "cannot resume", "cannot import module 'my_agent'", "PYTHONPATH")
    (tmp_path / "my_agent.py").write_text("class Agent:\n    def reply(self, messages)\n        return 'x'\n")
    proc = viva(home, "resume", "run:1", "--quiet", cwd=tmp_path)
    one_line_error(proc, "module 'my_agent' fails to import (SyntaxError at line 2", "fix it")
    (tmp_path / "my_agent.py").write_text("import a_package_nobody_installed\n")
    proc = viva(home, "resume", "run:1", "--quiet", cwd=tmp_path)
    one_line_error(proc, "imports 'a_package_nobody_installed', which is not installed")
    assert statuses() == before  # refused before anything was started or written

    (tmp_path / "moved.py").replace(tmp_path / "my_agent.py")
    shutil.rmtree(tmp_path / "__pycache__", ignore_errors=True)
    resumed = viva(home, "resume", "run:1", "--quiet", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert statuses() == [("finished", 0), ("finished", 0)]


# -- a read-only home made with chmod ----------------------------------------------------------------
ITEM = {"format": "viva.item/1", "protocol": "rubric", "question": "What is 2+2?",
        "rubric": [{"cid": "c1", "text": "says 4", "kind": "point", "weight": 1}]}


def _chmod_read_only_home(work: Path) -> Path:
    home = work / "home"
    store = Store(home / "viva.db")
    make_bench(store)
    store.close()
    (work / "q.jsonl").write_text(json.dumps(ITEM) + "\n")
    if IS_ROOT:
        chown_tree(work)
    for p in home.rglob("*"):
        if p.is_file():
            os.chmod(p, 0o444)
        else:
            os.chmod(p, 0o555)
    os.chmod(home, 0o555)
    return home


@pytest.mark.skipif(IS_ROOT and _user_possible() is not None, reason=str(_user_possible()))
def test_a_chmod_read_only_home_as_a_normal_user():
    """As root, mode bits restrict nothing (CAP_DAC_OVERRIDE): the read-only case for root is a
    read-only mount (test_hardening_round2.py::test_a_read_only_home_reads_and_refuses_writes)."""
    work = user_dir() if IS_ROOT else Path(tempfile.mkdtemp(prefix="viva-h2-"))
    try:
        home = _chmod_read_only_home(work)
        listed = viva(home, "bench", "list", cwd=work, as_user=IS_ROOT)
        assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr[-2000:]
        assert "oxy" in listed.stdout
        sessions = viva(home, "sessions", cwd=work, as_user=IS_ROOT)
        assert sessions.returncode == 0 and "Traceback" not in sessions.stderr, sessions.stderr[-2000:]
        imported = viva(home, "bench", "import", "jsonl", str(work / "q.jsonl"), "--name", "new", cwd=work,
                        as_user=IS_ROOT)
        one_line_error(imported, "read-only", "viva can read this home but not write")
        ran = viva(home, "run", "--bench", "oxy", "--target", "openai:m@http://127.0.0.1:9/v1", "--kernel",
                   "offline", "--policy", "threshold", cwd=work, as_user=IS_ROOT)
        one_line_error(ran, "read-only", "viva can read this home but not write")
        assert not (home / "logs").exists() or not any((home / "logs").iterdir())
    finally:
        for p in [work, *work.rglob("*")]:
            if p.is_dir():
                os.chmod(p, 0o755)
        shutil.rmtree(work, ignore_errors=True)


@needs_user
def test_a_truncated_database_as_a_normal_user():
    from engine.bench.items import create_benchmark

    work = user_dir()
    try:
        home = work / "home"
        store = Store(home / "viva.db")
        create_benchmark(store, "b", "manual")
        store.close()
        db = home / "viva.db"
        data = db.read_bytes()
        db.write_bytes(data[: len(data) // 3])
        for extra in ("viva.db-wal", "viva.db-shm"):
            (home / extra).unlink(missing_ok=True)
        chown_tree(work)
        for command in (("sessions",), ("bench", "list"), ("resume", "run:1"),
                        ("run", "--bench", "b", "--target", "openai:m@http://127.0.0.1:9/v1", "--kernel", "offline")):
            proc = viva(home, *command, cwd=work, as_user=True)
            one_line_error(proc, str(db), "damaged", "integrity_check", "restore it from a copy")
    finally:
        shutil.rmtree(work, ignore_errors=True)


# -- a YAML bomb in a topics file -----------------------------------------------------------------
BOMB = "a: &a [x,x,x,x,x,x,x,x,x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [" + ",".join([f"*{chr(97 + i)}"] * 9) + "]\n" for i in range(8))


def test_yaml_limits_hold_for_a_topics_file(tmp_path):
    home = tmp_path / "home"
    (tmp_path / "bomb.yaml").write_text(BOMB)
    (tmp_path / "deep.yaml").write_text("[" * 5000 + "]" * 5000)
    proc = viva(home, "bench", "generate", "g", "--kb", "k", "--topics", str(tmp_path / "bomb.yaml"), cwd=tmp_path)
    one_line_error(proc, "bomb.yaml:7", "aliases are expanded", "viva refuses it")
    proc = viva(home, "bench", "generate", "g", "--kb", "k", "--topics", str(tmp_path / "deep.yaml"), cwd=tmp_path)
    one_line_error(proc, "deep.yaml:1", "nested more than 100 levels deep")


# -- importers and files on disk ---------------------------------------------------------------------
TASK_RECORD = {"format": "viva.item/1", "benchmark": "src", "protocol": "task", "question": "Sum the column.",
               "rubric": [{"cid": "c1", "text": "gives the sum", "kind": "point", "weight": 1}]}


def _jsonl(tmp_path: Path, meta: dict) -> Path:
    f = tmp_path / "items.jsonl"
    f.write_text(json.dumps({**TASK_RECORD, "meta": meta}) + "\n")
    return f


def test_jsonl_import_copies_only_regular_files_inside_the_home(tmp_path):
    """``bench import jsonl`` is the one importer besides TaskWeaver that copies data files (from a
    benchmark of the same home, named by the record); medqa, sedareval and squad read only the file
    they are given and copy nothing (tests/engine/test_bench_import.py)."""
    from engine.bench.importers import run_import
    from engine.bench.importers.base import ImportFormatError

    home = tmp_path / "home"
    store = Store(home / "viva.db")
    case = home / "benchmarks" / "src" / "case1"
    case.mkdir(parents=True)
    (case / "data.csv").write_text("1\n2\n")
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$hash")
    (case / "leak.csv").symlink_to(secret)
    victim = tmp_path / "victim"
    victim.mkdir()

    def refused(meta: dict, *words: str) -> None:
        with pytest.raises(ImportFormatError) as info:
            run_import(store, home, "jsonl", _jsonl(tmp_path, meta), name="copy")
        for w in words:
            assert w in str(info.value), str(info.value)
        assert store.one("SELECT COUNT(*) AS n FROM benchmarks")["n"] == 0
        assert not (home / "benchmarks" / "copy").exists()

    refused({"case_dir": "case1", "data_files": ["leak.csv"]}, "line 1", "symbolic link", "copy the file itself")
    refused({"case_dir": "/etc", "data_files": ["passwd"]}, "line 1", "meta.case_dir", "relative path")
    refused({"case_dir": "../../../victim", "data_files": ["x"]}, "meta.case_dir", "no ..")
    refused({"case_dir": "case1", "data_files": ["/etc/passwd"]}, "meta.data_files[0]")
    refused({"data_dir": "/root/.ssh"}, "meta.data_dir")
    refused({"data_dir": "benchmarks/../../x"}, "meta.data_dir")
    assert list(victim.iterdir()) == []

    summary = run_import(store, home, "jsonl", _jsonl(tmp_path, {"case_dir": "case1", "data_files": ["data.csv"]}),
                         name="copy")
    copied = home / "benchmarks" / "copy" / "case1" / "data.csv"
    assert summary.counts["data files copied"] == 1 and copied.read_text() == "1\n2\n"
    assert not copied.is_symlink()
    assert [p.name for p in (home / "benchmarks" / "copy").rglob("*")] == ["case1", "data.csv"]
