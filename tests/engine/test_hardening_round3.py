"""Issue 35 (hardening, round 3): each attack, run for real through ``viva`` or the engine, and its outcome.

1. terminal control sequences from a target, an endpoint or a benchmark never reach the terminal
   (``run --live`` under ``script``, ``report --format md``, ``check``, ``bench show``), while the
   database keeps what was said;
2. bounded input: a device, a FIFO, a 50 GB sparse file, a file or a line over the limits end in one
   line, with the process's peak memory measured (``wait4``), as root and as a normal user;
3. eval_code bounded as a whole: eight children together over the item's memory cap, 249,000 small
   files, 1.8 GB in 30 files, the work folder and what a ``kill -9`` leaves;
4. names and ids: hostile knowledge-base names, ids beyond SQLite's range, ``report --out``.

No wall-clock time is asserted; ``timeout=`` arguments only guard against a hang (a FIFO that blocks).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.judge import sandbox
from engine.judge.cgroup import find_parent
from engine.judge.sandbox import Limits, memory_plan, run_eval_code, sweep_stale
from engine.store import Store
from engine.termsafe import TABLE, termsafe, termsafe_value
from tests.engine.agents import HOSTILE
from tests.engine.interview_fixtures import make_bench
from tests.engine.test_hardening_round2_cli import SETPRIV, USER, _reach_python, env_for, needs_user, user_dir

ROOT = Path(__file__).resolve().parents[2]
HOSTILE_TARGET = "python:tests.engine.agents:HostileAgent"
HISTORY = [{"role": "agent", "content": "done"}]
needs_bwrap = pytest.mark.skipif(not sandbox.sandbox_available(), reason=f"no sandbox: {sandbox.sandbox_problem()}")
needs_script = pytest.mark.skipif(shutil.which("script") is None, reason="needs script(1) to record a terminal")
C1 = re.compile(rb"\xc2[\x80-\x9f]")  # a C1 control, UTF-8 encoded
RAW_HOSTILE = [b"\x1b]52;", b"\x1b]0;owned", b"\x1b]8;;https://evil", b"\x1b[1A", b"\x1b[2K", b"\x1b[32mScore",
               b"\x1bc", b"\xe2\x80\xae", b"\xe2\x81\xa6", b"\xe2\x80\x8b", b"\xf3\xa0\x81\x81"]


def viva(home: Path, *args: str, cwd: Path, env: dict[str, str] | None = None, as_user: bool = False,
         stdin: int | None = subprocess.DEVNULL) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "tui", "--home", str(home), *args]
    if as_user:
        argv = ["bwrap", "--dev-bind", "/", "/", *_reach_python(), "--", *SETPRIV, *argv]
    return subprocess.run(argv, env=env or env_for(cwd), cwd=cwd, capture_output=True, text=True, timeout=600,
                          stdin=stdin)


def one_line(proc: subprocess.CompletedProcess, *words: str) -> str:
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip() and not ln.startswith("viva: ")]
    assert proc.returncode != 0 and len(lines) == 1, (proc.returncode, proc.stderr)
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def hostile_home(tmp_path: Path) -> Path:
    """A home with one finished session of the hostile target (run through the real ``viva run``)."""
    home = tmp_path / "home"
    store = Store(home / "viva.db")
    make_bench(store)
    store.close()
    ran = viva(home, "run", "--bench", "oxy", "--target", HOSTILE_TARGET, "--kernel", "offline", "--turns", "2",
               "--quiet", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr[-2000:]
    return home


# -- 1. one terminal-safe text path ------------------------------------------------------------------
def test_termsafe_makes_every_sequence_visible():
    shown = termsafe(HOSTILE)
    assert not [c for c in shown if ord(c) in TABLE], "something invisible or controlling is left"
    for marker in ("␛]52;c;", "␛]0;owned", "␛]8;;https://evil.example/", "␛[1A␛[2K␛[32mScore 100.0", "␛c",
                   "\\u009b31m", "\\u009d0;", "␇␈␋␌␍␡", "\\u202eevil\\u202c", "\\u2066iso\\u2069",
                   "zero\\u200bwidth\\u200d\\ufeff\\u2060", "tag\\udb40\\udc41"):
        assert marker in shown, marker
    assert termsafe("line\n\tend\r\nover\rwrite") == "line\n\tend\r\nover␍write"  # newline, tab, CR LF kept
    assert termsafe_value({"a": [HOSTILE], "\x1b": 1}) == {"a": [shown], "␛": 1}
    # the \\u form is JSON's own escape: JSON printed with ensure_ascii=False stays exact through it
    doc = json.dumps({"answer": HOSTILE}, ensure_ascii=False)
    assert json.loads(termsafe(doc))["answer"].replace("\u2421", "\x7f") == HOSTILE


def _typescript(tmp_path: Path, home: Path, colour: bool) -> bytes:
    log = tmp_path / f"typescript-{colour}"
    env = env_for(tmp_path)
    env.pop("NO_COLOR", None)
    env.pop("FORCE_COLOR", None)
    env["TERM"] = "xterm-256color"
    if not colour:
        env["NO_COLOR"] = "1"
    command = (f"{sys.executable} -m tui --home {home} run --bench oxy --target {HOSTILE_TARGET} --kernel offline "
               "--turns 2 --live")
    proc = subprocess.run(["script", "-qfec", command, str(log)], env=env, cwd=tmp_path, capture_output=True,
                          timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout[-2000:]
    data = log.read_bytes()
    return data[data.index(b"\n") + 1:]  # script's own header line aside


@needs_script
def test_run_live_emits_no_escape_and_no_c1_with_no_color(tmp_path):
    home = tmp_path / "home"
    store = Store(home / "viva.db")
    make_bench(store)
    store.close()
    raw = _typescript(tmp_path, home, colour=False)
    body = raw[:raw.rfind(b"Script done")] if b"Script done" in raw else raw
    assert b"\x1b" not in body and not C1.search(body), body[:3000]
    text = body.decode("utf-8")
    assert text.count("␛]52;c;ZWNobyBwd25lZA==") == 2 and "\\u202eevil" in text and "\\u009b31m" in text
    # the database keeps what was said
    with sqlite3.connect(home / "viva.db") as db:
        answers = [r[0] for r in db.execute("SELECT answer FROM turns ORDER BY idx")]
    assert answers == [HOSTILE, HOSTILE]


@needs_script
def test_run_live_with_colour_no_escape_comes_from_the_target(tmp_path):
    home = tmp_path / "home"
    store = Store(home / "viva.db")
    make_bench(store)
    store.close()
    raw = _typescript(tmp_path, home, colour=True)
    assert re.search(rb"\x1b\[[0-9;]*m", raw), "viva's own colours are on"
    rest = re.sub(rb"\x1b\[[0-9;]*m", b"", raw)  # viva's SGR sequences removed: nothing else may be left
    assert b"\x1b" not in rest and not C1.search(rest)
    assert b"\xe2\x90\x9b[32mScore" in rest  # the forged green score is shown as text


def test_report_md_to_stdout_and_json(tmp_path):
    home = hostile_home(tmp_path)
    md = subprocess.run([sys.executable, "-m", "tui", "--home", str(home), "report", "1", "--format", "md"],
                        env=env_for(tmp_path), cwd=tmp_path, capture_output=True, timeout=600)
    assert md.returncode == 0, md.stderr[-2000:]
    for seq in RAW_HOSTILE:
        assert seq not in md.stdout, seq
    assert b"\x1b" not in md.stdout and not C1.search(md.stdout)
    assert "␛c".encode() in md.stdout and b"\\u009b31m" in md.stdout
    js = subprocess.run([sys.executable, "-m", "tui", "--home", str(home), "report", "1", "--format", "json"],
                        env=env_for(tmp_path), cwd=tmp_path, capture_output=True, timeout=600)
    assert b"\x1b" not in js.stdout and not C1.search(js.stdout)
    def strings(v):
        if isinstance(v, dict):
            v = list(v.values())
        if isinstance(v, list):
            return [s for x in v for s in strings(x)]
        return [v] if isinstance(v, str) else []

    # JSON escapes C0 itself and the \u form of the rest is JSON's own: the answer decodes as said
    # (DEL, which JSON leaves raw, is the one character shown as ␡)
    assert HOSTILE.replace("\x7f", "\u2421") in strings(json.loads(js.stdout))
    out = tmp_path / "report.md"  # a file is not a terminal: written verbatim
    assert viva(home, "report", "1", "--out", str(out), cwd=tmp_path).returncode == 0
    assert "\x1b" in out.read_text(encoding="utf-8") and "\x9b" in out.read_text(encoding="utf-8")


def test_check_shows_an_endpoints_message_safe(tmp_path, fake_openai):
    message = "model not found \x1b]52;c;ZXZpbA==\x07\x1b]0;owned\x07 \x9b2J \u202edesu"
    fake_openai.rule(lambda r: True, {"status": 400, "message": message})
    proc = subprocess.run([sys.executable, "-m", "tui", "--home", str(tmp_path / "home"), "check",
                           fake_openai.base_url], env=env_for(tmp_path), cwd=tmp_path, capture_output=True,
                          timeout=600)
    out = proc.stdout + proc.stderr
    assert b"answered HTTP 400" in out
    assert b"\x1b" not in out and not C1.search(out) and b"\xe2\x80\xae" not in out
    assert "␛]52;c;ZXZpbA==␇".encode() in out and b"\\u202edesu" in out


def test_bench_show_shows_a_benchmarks_fields_safe(tmp_path):
    from engine.bench.items import add_item, create_benchmark
    from engine.bench.rubric import create_rubric

    home = tmp_path / "home"
    store = Store(home / "viva.db")  # what an importer stores: the fields as they were in the file
    with store.transaction():
        bid = create_benchmark(store, "evil", "jsonl")
        item = add_item(store, bid, 0, protocol="adaptive", topic="t\x1b]0;owned\x07opic",
                        question="Q\x1b[2J\x1bc\u202eevil?", reference="r")
        create_rubric(store, item, [{"text": "c\x9b31m"}], author="human")
    store.close()
    for args in (["bench", "show", "evil"], ["bench", "list"]):
        proc = subprocess.run([sys.executable, "-m", "tui", "--home", str(home), *args], env=env_for(tmp_path),
                              cwd=tmp_path, capture_output=True, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert b"\x1b" not in proc.stdout and not C1.search(proc.stdout) and b"\xe2\x80\xae" not in proc.stdout
    assert "␛]0;owned".encode() in subprocess.run(
        [sys.executable, "-m", "tui", "--home", str(home), "bench", "show", "evil"], env=env_for(tmp_path),
        cwd=tmp_path, capture_output=True, timeout=600).stdout


# -- 2. bounded input ---------------------------------------------------------------------------------
PEAK = r"""
import os, sys
pid = os.fork()
if pid == 0:
    os.dup2(os.open(os.devnull, os.O_RDWR), 0)
    os.dup2(os.open(os.devnull, os.O_RDWR), 1)
    os.execv(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(os.waitstatus_to_exitcode(status), usage.ru_maxrss)
"""


def _peak(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[int, str, int]:
    """(exit status, stderr, peak resident memory in KB) of a command, measured with ``wait4`` by a
    small parent (a child forked from pytest itself would count pytest's pages as its own)."""
    proc = subprocess.run([sys.executable, "-c", PEAK, *argv], cwd=cwd, env=env or env_for(cwd),
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    rc, peak = proc.stdout.split()
    return int(rc), proc.stderr, int(peak)


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "pipe.jsonl"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("fmt", ["jsonl", "squad", "medqa", "sedareval"])
@pytest.mark.parametrize("source", ["/dev/zero", "fifo"])
def test_an_import_of_a_device_or_fifo_is_one_line_in_little_memory(tmp_path, fifo, fmt, source):
    path = "/dev/zero" if source == "/dev/zero" else str(fifo)
    rc, err, peak_kb = _peak([sys.executable, "-m", "tui", "--home", str(tmp_path / "h"), "bench", "import", fmt,
                              path], tmp_path)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert rc == 1 and len(lines) == 1, err
    assert ("a character device" if source == "/dev/zero" else "a FIFO (named pipe)") in lines[0]
    assert "not a regular file" in lines[0] and path in lines[0]
    assert peak_kb < 200 * 1024, peak_kb


@needs_user
@pytest.mark.parametrize("source", ["/dev/zero", "fifo"])
def test_an_import_of_a_device_or_fifo_as_a_normal_user(source):
    work = user_dir()
    try:
        path = "/dev/zero" if source == "/dev/zero" else str(work / "p.jsonl")
        if source == "fifo":
            os.mkfifo(path)
            os.chown(path, USER, USER)
        proc = viva(work / "home", "bench", "import", "jsonl", path, cwd=work, as_user=True)
        one_line(proc, "not a regular file", path)
    finally:
        shutil.rmtree(work)


def test_other_readers_refuse_a_device_or_fifo(tmp_path, fifo):
    home = tmp_path / "home"
    for args, words in [(["kb", "build", "k1", "/dev/zero"], ["/dev/zero"]),
                        (["kb", "build", "k1", str(fifo)], ["a FIFO (named pipe)"]),
                        (["judge", "check", "/dev/zero"], ["a character device"]),
                        (["judge", "check", str(fifo)], ["a FIFO (named pipe)"]),
                        (["bench", "generate", "g", "--topics", str(fifo), "--kb", "x"], ["a FIFO"])]:
        one_line(viva(home, *args, cwd=tmp_path), *words)
    proc = subprocess.run([sys.executable, "-m", "tui", "--home", str(home), "--config", str(fifo), "sessions"],
                          env=env_for(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    one_line(proc, "a FIFO (named pipe)", str(fifo))


def test_size_and_line_limits(tmp_path):
    sparse = tmp_path / "huge.jsonl"
    with open(sparse, "wb") as f:
        f.truncate(50 * 1024**3)  # 50 GB that takes no disk: refused before a byte is read
    one_line(viva(tmp_path / "h", "bench", "import", "jsonl", str(sparse), cwd=tmp_path),
             "51,200.0 MB, over viva's input limit of 1,024.0 MB", "VIVA_MAX_INPUT_MB")
    small = tmp_path / "two.jsonl"
    small.write_text(json.dumps({"question": "q", "reference": "r"}) + "\n" + "x" * 40_000 + "\n")
    env = {**env_for(tmp_path), "VIVA_MAX_LINE_MB": "0.01"}
    one_line(viva(tmp_path / "h", "bench", "import", "jsonl", str(small), cwd=tmp_path, env=env),
             "line 2", "over viva's line limit", "VIVA_MAX_LINE_MB")
    env = {**env_for(tmp_path), "VIVA_MAX_INPUT_MB": "0.01"}
    one_line(viva(tmp_path / "h", "bench", "import", "jsonl", str(small), cwd=tmp_path, env=env),
             "over viva's input limit of 10,485 bytes")
    one_line(viva(tmp_path / "h", "judge", "check", str(small), cwd=tmp_path, env=env), "over viva's input limit")
    config = tmp_path / "viva.yaml"
    config.write_text("# " + "x" * 20_000 + "\n")
    proc = subprocess.run([sys.executable, "-m", "tui", "--home", str(tmp_path / "h"), "--config", str(config),
                           "sessions"], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    one_line(proc, str(config), "over viva's input limit")


# -- 3. eval_code bounded as a whole --------------------------------------------------------------------
MEMORY_ATTACK = r'''
import os, time
kids = []
for i in range(8):
    pid = os.fork()
    if pid == 0:
        b = bytearray(100 * 1024 * 1024)
        for j in range(0, len(b), 4096):
            b[j] = 1
        time.sleep(3)
        os._exit(0)
    kids.append(pid)
for k in kids:
    _, st = os.waitpid(k, 0)
    assert st == 0, f"a child ended with status {st}"
'''
FILES_ATTACK = "for i in range(249000):\n    open(f'f{i}', 'w').close()\n"
DISK_ATTACK = ("chunk = b'x' * (1024 * 1024)\nfor i in range(30):\n    with open(f'big{i}', 'wb') as f:\n"
               "        for _ in range(60):\n            f.write(chunk)\n")


@needs_bwrap
@pytest.mark.skipif(find_parent() is None, reason="no memory cgroup can be created here (the fallback is tested)")
def test_eight_children_share_one_memory_cap(tmp_path):
    r = run_eval_code(MEMORY_ATTACK, HISTORY, workdir=tmp_path, timeout=60,
                      limits=Limits(memory_mb=512, total_memory_mb=256))
    assert not r.hit and r.reason.startswith("memory limit: the item's processes together reached 256 MB"), r
    ok = run_eval_code(MEMORY_ATTACK.replace("100 * 1024", "10 * 1024"), HISTORY, workdir=tmp_path, timeout=60,
                       limits=Limits(memory_mb=512, total_memory_mb=256))
    assert ok.hit, ok.reason  # 8 x 10 MB fits: the cap is on the sum, not on each
    parent = find_parent()
    assert not [n for n in os.listdir(parent.path) if n.startswith(f"viva-eval-{os.getpid()}-")]


def test_without_a_cgroup_the_process_limit_bounds_the_total():
    limits, parent = memory_plan(Limits(memory_mb=512, total_memory_mb=1024, max_processes=64), use_cgroup=False)
    assert parent is None and limits.max_processes == 2 and limits.memory_mb == 512
    limits, _ = memory_plan(Limits(memory_mb=0, total_memory_mb=300), use_cgroup=False)
    assert (limits.memory_mb, limits.max_processes) == (300, 1)


@needs_bwrap
@needs_user
def test_as_a_normal_user_the_fallback_holds_the_children():
    """uid 65534 cannot create a cgroup here: 8 forked children of 100 MB meet the process limit
    (total 256 MB / 128 MB per process = 2 processes) and the run says so."""
    work = user_dir()
    try:
        code = ("import json, sys\nfrom engine.judge.sandbox import run_eval_code, Limits\nfrom engine.judge.cgroup "
                "import find_parent\nr = run_eval_code(sys.argv[1], [{'role': 'agent', 'content': 'x'}], "
                "workdir=sys.argv[2], timeout=60, limits=Limits(memory_mb=128, total_memory_mb=256))\n"
                "print(json.dumps({'hit': r.hit, 'reason': r.reason, 'cgroup': find_parent() is not None}))\n")
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYTHONPATH": str(ROOT), "LANG": "C.UTF-8", "HOME": str(work)}
        proc = subprocess.run([*SETPRIV, "/usr/bin/python3", "-c", code, MEMORY_ATTACK, str(work)], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        r = json.loads(proc.stdout.strip().splitlines()[-1])
        assert not r["cgroup"] and not r["hit"], r
        assert "Resource temporarily unavailable" in r["reason"] or "MemoryError" in r["reason"], r
    finally:
        shutil.rmtree(work)


@needs_bwrap
def test_many_small_files_meet_the_file_cap(tmp_path):
    (tmp_path / "agent.txt").write_text("the agent's file")
    r = run_eval_code(FILES_ATTACK, HISTORY, workdir=tmp_path, timeout=60, limits=Limits(max_files=500))
    assert not r.hit and r.reason == "file limit: more than 500 files in the work folder", r
    assert sorted(os.listdir(tmp_path)) == ["agent.txt"]  # nothing reached the host


@needs_bwrap
def test_big_files_meet_the_work_folders_disk_cap(tmp_path):
    r = run_eval_code(DISK_ATTACK, HISTORY, workdir=tmp_path, timeout=60, limits=Limits(work_mb=32))
    assert not r.hit and r.reason.startswith("disk limit: the work folder reached its 32 MB"), r
    assert "No space left on device" in r.reason and os.listdir(tmp_path) == []
    (tmp_path / "agent.txt").write_text("kept")
    seen = run_eval_code("import os\nassert open('agent.txt').read() == 'kept', os.listdir('.')", HISTORY,
                         workdir=tmp_path, timeout=60, limits=Limits(work_mb=32))
    assert seen.hit, seen  # the code sees the agent's files (in its copy)


@needs_bwrap
def test_agent_files_over_the_cap_are_one_reason(tmp_path):
    (tmp_path / "big.bin").write_bytes(b"x" * (3 * 1024 * 1024))
    r = run_eval_code("pass", HISTORY, workdir=tmp_path, timeout=60, limits=Limits(work_mb=1))
    assert not r.hit and r.reason.startswith("disk limit: the agent's files do not fit in the work folder"), r


@needs_bwrap
def test_a_killed_run_leaves_no_code_and_is_swept(tmp_path):
    code = ("from engine.judge.sandbox import run_eval_code\n"
            "run_eval_code('import time\\ntime.sleep(60)', [{'role': 'agent', 'content': 'SECRET-TRANSCRIPT'}], "
            "timeout=120)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], env={**os.environ, "PYTHONPATH": str(ROOT)})
    tmp = Path(os.environ.get("TMPDIR", "/tmp"))
    pattern = f"viva-eval-{proc.pid}-"
    deadline = time.monotonic() + 60  # hang guard
    left: list[Path] = []
    while time.monotonic() < deadline and not (left and (left[0] / "io" / "stderr").exists()):
        left = [tmp / n for n in os.listdir(tmp) if n.startswith(pattern)]
        time.sleep(0.05)
    assert left, "the run never started"
    time.sleep(0.5)
    proc.kill()  # kill -9
    proc.wait()
    files = [p for p in left[0].rglob("*") if p.is_file()]
    assert not any(b"SECRET-TRANSCRIPT" in p.read_bytes() for p in files), files
    assert not any(p.name == "stdin.json" for p in files)
    assert sweep_stale(force=True) >= 1
    assert not left[0].exists()
    parent = find_parent()
    if parent is not None:
        assert not [n for n in os.listdir(parent.path) if n.startswith(pattern)]


@needs_bwrap
def test_a_task_sessions_work_folder_goes_when_it_finishes_and_stale_ones_at_the_next_run(tmp_path):
    from tests.engine.test_hardening_round2_cli import _task_home

    home = _task_home(tmp_path)
    (tmp_path / "echo_agent.py").write_text(
        "class Agent:\n    def reply(self, messages):\n        return 'Hello World'\n    def close(self):\n        pass\n")
    stale = home / "work" / "session-99-abcdef12" / "work"  # a killed run's folder, its session gone
    stale.mkdir(parents=True)
    (stale / "left.txt").write_text("x")
    ran = viva(home, "run", "--bench", "echo", "--target", "python:echo_agent:Agent", "--kernel", "offline",
               "--quiet", cwd=tmp_path, env={**env_for(tmp_path), "PYTHONPATH": f"{ROOT}:{tmp_path}"})
    assert ran.returncode == 0, ran.stderr[-2000:]
    with sqlite3.connect(home / "viva.db") as db:
        assert [r[0] for r in db.execute("SELECT status FROM sessions")] == ["finished"]
    assert os.listdir(home / "work") == []  # its own folder removed at the end, the stale one at the start


# -- 4. names and ids ---------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["bad\nname", "esc\x1bname", "bel\x07", "star*", "q?", "<x>", "a|b", "x" * 5000,
                                  "good\n"])
def test_hostile_kb_names_are_refused_before_anything_is_written(tmp_path, name):
    from engine.knowledge.kb import KnowledgeBaseError, build_kb, list_kbs

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Some text about lighthouses and their keepers.")
    store = Store(tmp_path / "viva.db")
    try:
        with pytest.raises(KnowledgeBaseError, match="invalid knowledge base name") as err:
            build_kb(store, tmp_path, name, [docs])
        assert "\x1b" not in str(err.value) and "\x07" not in str(err.value) and len(str(err.value)) < 300
        assert store.query("SELECT name FROM knowledge_bases") == [] and list_kbs(store) == []
    finally:
        store.close()


def test_a_hostile_kb_name_on_the_command_line(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Some text.")
    home = tmp_path / "home"
    one_line(viva(home, "kb", "build", "x" * 5000, str(docs), cwd=tmp_path), "invalid knowledge base name")
    assert viva(home, "kb", "list", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("args", [["report", "N"], ["report", "run:N"], ["resume", "N"], ["resume", "run:N"],
                                  ["rescore", "N"], ["sessions", "--limit", "N"], ["sessions", "--offset", "N"]])
def test_ids_beyond_sqlites_range(tmp_path, args):
    home = hostile_home(tmp_path) if args[0] == "sessions" else tmp_path / "home"
    proc = viva(home, *[a.replace("N", "99999999999999999999999") for a in args], cwd=tmp_path)
    assert "Traceback" not in proc.stderr and "OverflowError" not in proc.stderr, proc.stderr
    if args[0] == "sessions":
        assert proc.returncode == 0, proc.stderr
    else:
        one_line(proc, "99999999999999999999999 does not exist")


def test_report_out_refuses_links_needs_force_and_names_the_file(tmp_path):
    home = hostile_home(tmp_path)
    victim = tmp_path / "victim"
    victim.write_text("the host's own")
    link = tmp_path / "link.md"
    link.symlink_to(victim)
    one_line(viva(home, "report", "1", "--out", str(link), cwd=tmp_path), str(link), "symbolic link")
    one_line(viva(home, "report", "1", "--out", str(link), "--force", cwd=tmp_path), "symbolic link")
    assert victim.read_text() == "the host's own" and link.is_symlink()
    out = tmp_path / "r.md"
    assert viva(home, "report", "1", "--out", str(out), cwd=tmp_path).returncode == 0
    first = out.read_text()
    out.write_text("edited by hand")
    one_line(viva(home, "report", "1", "--out", str(out), cwd=tmp_path), str(out), "exists; pass --force")
    assert out.read_text() == "edited by hand"
    assert viva(home, "report", "1", "--out", str(out), "--force", cwd=tmp_path).returncode == 0
    assert out.read_text() == first
    one_line(viva(home, "report", "1", "--out", "/dev/full", "--force", cwd=tmp_path), "/dev/full",
             "not a regular file")
    one_line(viva(home, "report", "1", "--out", str(victim / "sub.md"), cwd=tmp_path), str(victim / "sub.md"))


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap to mount a tiny tmpfs")
def test_report_out_on_a_full_disk_names_the_file(tmp_path):
    home = hostile_home(tmp_path)
    full = tmp_path / "full"
    full.mkdir()
    argv = ["bwrap", "--dev-bind", "/", "/", "--size", "4096", "--tmpfs", str(full), "--", sys.executable, "-m",
            "tui", "--home", str(home), "report", "1", "--format", "html", "--out", str(full / "r.html")]
    proc = subprocess.run(argv, env=env_for(tmp_path), cwd=tmp_path, capture_output=True, text=True, timeout=600)
    line = one_line(proc, str(full / "r.html"), "No space left on device")
    assert "viva.db" not in line and "HOME" not in line
