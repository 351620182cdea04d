"""Run a scoring point's ``eval_code`` in a contained Python process.

Benchmarks come from third parties, so their ``eval_code`` is hostile until shown otherwise. Where
bubblewrap (``bwrap``) works, the code runs inside it (see docs/sandbox.md):

- a fresh mount namespace holding read-only views of ``/usr`` (and the ``/bin``, ``/lib*`` links),
  the loader cache, the Python interpreter's prefix and the site-packages of viva's environment;
  the working directory is the only writable host path; ``/tmp`` and ``/dev/shm`` are fresh,
  size-limited tmpfs mounts; the data home, the database and viva's own files are not mounted;
- new network (only an unconfigured loopback: no TCP to the host), pid (the parent's ``/proc`` is
  invisible, ``getppid()`` is the sandbox's own init), IPC, UTS, cgroup and user namespaces, all
  capabilities dropped, no further user namespaces, a new session, killed when viva dies;
- a clean environment (no API keys, no ``VIVA_HOME``, no path to the data home), also for ``bwrap``
  itself so ``/proc/1/environ`` inside holds nothing either;
- rlimits set in the child before the code runs: CPU seconds, address space, processes, file size,
  open files, no core files. Linux never applies ``RLIMIT_NPROC`` to uid 0, so when viva runs as
  root a watchdog counts the processes in the sandbox's pid namespace and kills it over the limit;
- a wall-clock timeout that kills the sandbox's init, which makes the kernel kill every process in
  its pid namespace (forked, ``setsid`` or not); the same happens when the code's main process ends.

Where bubblewrap is missing or cannot create namespaces, the code does not run:
:class:`SandboxUnavailableError` says how to install it or to pass ``--trust-eval-code``
(``trust=True``). Trusted code runs without isolation but still with the rlimits, the clean
environment, its own process group (killed at the end and on timeout) and a parent-death signal.

Inside, ``chat_history`` is the transcript as objects with ``.role`` and ``.content``. For
TaskWeaver's cases, which were written against langchain messages, the agent's messages are
``HumanMessage`` and the examiner's are ``AIMessage`` (the examiner is the LLM in upstream's
VirtualUser), and both classes are importable names in the code's namespace. The code runs with the
working directory as its current directory: the agent's own (``workdir``), so files the agent's
tools wrote can be checked, or else a fresh directory holding copies of the case's data files.

Exit status 0 means the point is hit; otherwise stderr (last line, usually the assertion) is the
reason. A timeout is a miss with reason "timed out".
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import shutil
import signal
import site
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from engine.judge.cgroup import ItemCgroup, Parent, enter_command, find_parent
from engine.judge.cgroup import sweep as sweep_cgroups
from engine.store.lease import pid_alive

HARNESS = r'''
import json, os, sys
payload = json.loads(sys.stdin.buffer.read().decode("utf-8"))
_null = os.open(os.devnull, os.O_RDONLY)
os.dup2(_null, 0)
os.close(_null)
if payload.get("drop") is not None and payload.get("copy_from"):
    os.chown(".", *payload["drop"])  # the work tmpfs is the code's own folder (CAP_CHOWN, dropped below)
if payload.get("drop") is not None:
    # viva is root: bubblewrap ran without a user namespace and left this process CAP_SETUID,
    # CAP_SETGID and CAP_SETPCAP only. Become the unprivileged uid/gid for good before any code runs.
    import ctypes
    _libc = ctypes.CDLL(None, use_errno=True)
    for _cap in range(64):
        _libc.prctl(24, _cap, 0, 0, 0)  # PR_CAPBSET_DROP (EINVAL past the last capability)
    _libc.prctl(8, 0, 0, 0, 0)  # PR_SET_KEEPCAPS off: setuid below clears every capability
    _uid, _gid = payload["drop"]
    os.setgroups([])
    os.setresgid(_gid, _gid, _gid)
    os.setresuid(_uid, _uid, _uid)
    class _Hdr(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]
    class _Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32),
                    ("inheritable", ctypes.c_uint32)]
    _libc.capset(ctypes.byref(_Hdr(0x20080522, 0)), (_Data * 2)())  # inheritable too
    with open("/proc/self/status", encoding="ascii") as _f:
        _status = dict(_l.split(":", 1) for _l in _f.read().splitlines() if ":" in _l)
    _caps = [int(_status[k].strip(), 16) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")]
    if (os.getresuid() != (_uid,) * 3 or os.getresgid() != (_gid,) * 3 or os.getgroups()
            or any(_caps) or _status.get("NoNewPrivs", "").strip() != "1"):
        sys.stderr.write("sandbox: could not drop privileges\n")
        os._exit(71)
try:
    import resource
except ImportError:
    resource = None
if resource is not None:
    def _limit(name, soft, hard=None):
        if soft is None or not hasattr(resource, name):
            return
        which = getattr(resource, name)
        hard = soft if hard is None else hard
        cur_hard = resource.getrlimit(which)[1]
        if cur_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, cur_hard), min(hard, cur_hard)
        resource.setrlimit(which, (soft, hard))
    lim = payload["limits"]
    _limit("RLIMIT_CORE", 0)
    _limit("RLIMIT_CPU", lim["cpu"], lim["cpu"] + 1)
    _limit("RLIMIT_AS", lim["as"])
    _limit("RLIMIT_NPROC", lim["nproc"])
    _limit("RLIMIT_FSIZE", lim["fsize"])
    _limit("RLIMIT_NOFILE", lim["nofile"])
if payload.get("copy_from"):
    # The work folder is a fresh, size-limited tmpfs: copy the agent's files in (read-only source,
    # links copied as links, nothing else but files and folders), as the code's own user.
    import stat as _stat
    _src = payload["copy_from"]
    _skip = set(payload.get("skip") or ())  # hidden paths: bubblewrap mounted them empty and read-only
    try:
        for _root, _dirs, _files in os.walk(_src):
            _rel = os.path.relpath(_root, _src)
            _dst = "." if _rel == "." else _rel
            _dirs[:] = [d for d in _dirs if os.path.normpath(os.path.join(_rel, d)) not in _skip]
            for _n in list(_dirs) + list(_files):
                _p = os.path.join(_root, _n)
                _q = os.path.join(_dst, _n)
                if os.path.normpath(_q) in _skip:
                    continue
                _st = os.lstat(_p)
                if _stat.S_ISLNK(_st.st_mode):
                    os.symlink(os.readlink(_p), _q)
                elif _stat.S_ISDIR(_st.st_mode):
                    os.mkdir(_q, 0o755)
                elif _stat.S_ISREG(_st.st_mode):
                    with open(_p, "rb") as _a, open(_q, "wb") as _b:
                        while _chunk := _a.read(1 << 20):
                            _b.write(_chunk)
                    os.chmod(_q, _stat.S_IMODE(_st.st_mode) & 0o755 | 0o600)
            _dirs[:] = [d for d in _dirs if not os.path.islink(os.path.join(_root, d))]
    except OSError as _e:
        sys.stderr.write(f"disk limit: the agent's files do not fit in the work folder ({_e.strerror})\n")
        os._exit(72)
if sys.platform.startswith("linux"):
    import ctypes, signal
    try:
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except Exception:
        pass
    if payload["parent"] is not None and os.getppid() != payload["parent"]:
        os._exit(70)  # viva ended before the death signal was set
import site
for _d in payload["site"]:
    site.addsitedir(_d)

class Message:
    role = "message"
    def __init__(self, content, role=None):
        self.content = content
        if role is not None:
            self.role = role
    @property
    def type(self):
        return self.role
    def __repr__(self):
        return f"{type(self).__name__}(content={self.content!r})"
    __str__ = __repr__

class HumanMessage(Message):
    """A message of the agent under test (upstream's examiner sees the agent as the human)."""
    role = "agent"

class AIMessage(Message):
    """A message of the examiner."""
    role = "examiner"

class SystemMessage(Message):
    role = "system"

chat_history = []
for m in payload["chat_history"]:
    cls = HumanMessage if m["role"] in ("agent", "assistant", "target") else (
        SystemMessage if m["role"] == "system" else AIMessage)
    chat_history.append(cls(m["content"], role=m["role"]))
namespace = {"chat_history": chat_history, "HumanMessage": HumanMessage, "AIMessage": AIMessage,
             "SystemMessage": SystemMessage, "__name__": "__eval_code__"}
code = payload["code"]
exec(compile(code, "eval_code", "exec"), namespace)
'''

SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin"
SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_ETC = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime",
              "/etc/alternatives")
SOURCE = "/viva-source"
"""Where the working directory is mounted read-only inside the sandbox (the code works in a copy)."""
THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
INSTALL_HINT = ("install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`, Fedora: "
                "`sudo dnf install bubblewrap`) or pass --trust-eval-code to run the benchmark's code "
                "without isolation (only for code you trust)")


class SandboxUnavailableError(RuntimeError):
    """eval_code would have to run without isolation and the caller did not trust it."""


@dataclass(frozen=True)
class Limits:
    """Resource limits for one eval_code run (applied as rlimits in the child).

    Attributes:
        memory_mb: address-space limit (``RLIMIT_AS``); 0 disables it.
        max_processes: processes and threads the code may add (``RLIMIT_NPROC``; a watchdog as root).
        max_file_mb: largest file the code may write (``RLIMIT_FSIZE``; also caps stdout/stderr).
        max_open_files: open file descriptors (``RLIMIT_NOFILE``).
        tmp_mb: size of the sandbox's fresh ``/tmp`` and ``/dev/shm`` (bubblewrap only).
        cpu_seconds: CPU time (``RLIMIT_CPU``); None means the wall-clock timeout rounded up, plus 1.
        total_memory_mb: memory of all the item's processes together (one cgroup; without one, the
            processes are capped at ``total_memory_mb // memory_mb``, see :func:`memory_plan`).
        work_mb: size of the tmpfs the code works in (bubblewrap; a watchdog otherwise).
        max_files: files and folders the code may have in its work folder (a watchdog).
    """

    memory_mb: int = 512
    max_processes: int = 64
    max_file_mb: int = 64
    max_open_files: int = 256
    tmp_mb: int = 64
    cpu_seconds: int | None = None
    total_memory_mb: int = 1024
    work_mb: int = 256
    max_files: int = 10_000

    @classmethod
    def from_env(cls, memory_mb: int = 512) -> Limits:
        """The limits with the ``VIVA_EVAL_*`` environment variables applied (docs/sandbox.md):
        ``VIVA_EVAL_MEMORY_MB`` (per process), ``VIVA_EVAL_TOTAL_MEMORY_MB`` (all of an item's
        processes), ``VIVA_EVAL_PROCESSES``, ``VIVA_EVAL_FILE_MB``, ``VIVA_EVAL_WORK_MB`` (the work
        folder's tmpfs), ``VIVA_EVAL_FILES`` (files in it), ``VIVA_EVAL_TMP_MB``. A value that is not a
        positive integer is ignored."""
        names = {"memory_mb": "VIVA_EVAL_MEMORY_MB", "total_memory_mb": "VIVA_EVAL_TOTAL_MEMORY_MB",
                 "max_processes": "VIVA_EVAL_PROCESSES", "max_file_mb": "VIVA_EVAL_FILE_MB",
                 "work_mb": "VIVA_EVAL_WORK_MB", "max_files": "VIVA_EVAL_FILES", "tmp_mb": "VIVA_EVAL_TMP_MB"}
        values: dict[str, int] = {"memory_mb": memory_mb}
        for field_name, env in names.items():
            raw = os.environ.get(env, "").strip()
            if raw.isdigit() and int(raw) > 0:
                values[field_name] = int(raw)
        return cls(**values)


@dataclass(frozen=True)
class CodeResult:
    """Outcome of one eval_code run (``isolated``: it ran under bubblewrap)."""

    hit: bool
    reason: str
    timed_out: bool = False
    isolated: bool = False


# -- probing --------------------------------------------------------------------------------------
def find_bwrap() -> str | None:
    """Path of the ``bwrap`` executable on PATH, or None."""
    return shutil.which("bwrap")


AS_NOBODY = "as-nobody"
"""Pseudo flag of :func:`_probe`'s answer: viva is root and bubblewrap runs without a user namespace;
the harness then becomes :func:`sandbox_ids` before the code runs (never passed to bwrap)."""
NAMESPACES = ("--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try")
ROOT_CAPS = ("CAP_SETUID", "CAP_SETGID", "CAP_SETPCAP", "CAP_CHOWN")  # what the harness needs to drop to
# nobody, and to give it the work tmpfs (every capability is dropped before the code runs)


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def sandbox_ids() -> tuple[int, int]:
    """The unprivileged uid and gid eval_code runs as when viva is root: ``nobody`` and its group
    (65534 where the system has no such user)."""
    try:
        import pwd

        entry = pwd.getpwnam("nobody")
        uid, gid = entry.pw_uid, entry.pw_gid
    except (ImportError, KeyError):
        uid, gid = 65534, 65534
    return (uid, gid) if uid != 0 and gid != 0 else (65534, 65534)


@functools.lru_cache(maxsize=8)
def _probe(bwrap: str, root: bool = False) -> tuple[str | None, tuple[str, ...]]:
    """Try bubblewrap once; (problem or None, the namespace flags that worked).

    As root only one configuration is accepted: no user namespace (root may create the other
    namespaces itself) and the code dropped to :func:`sandbox_ids`, so it is no host root at all. A
    user namespace would map the sandbox's uid to host uid 0, which the kernel's permission checks
    on ``/proc`` and on the files the code leaves treat as root.
    """
    try:
        helptext = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bubblewrap at {bwrap} cannot be run ({exc})", ()
    problem = "bubblewrap found no usable configuration"
    size = ("--size",) if "--size" in helptext else ()
    if root:
        variants: list[tuple[str, ...]] = [(AS_NOBODY,)]
    else:
        variants = [("--unshare-user", "--disable-userns"), ("--unshare-user",), ()]
    for userns in variants:
        if "--disable-userns" in userns and "--disable-userns" not in helptext:
            continue
        flags = (*userns, *size)
        drop = "import os; os.setgroups([]); os.setresgid({1}, {1}, {1}); os.setresuid({0}, {0}, {0}); "
        check = (drop.format(*sandbox_ids()) if root else "") + "import os; os.getcwd()"
        with tempfile.TemporaryDirectory(prefix="viva-probe-") as tmp:
            args = _bwrap_args(Path(tmp).resolve(), flags, Limits(), {"PATH": SANDBOX_PATH})
            try:
                proc = _spawn_bwrap(bwrap, args, [_interpreter(), "-I", "-c", check],
                                    {"PATH": SANDBOX_PATH}, subprocess.DEVNULL, subprocess.DEVNULL,
                                    subprocess.PIPE)
                _, err = proc.communicate(timeout=30)
            except (OSError, subprocess.SubprocessError) as exc:
                problem = f"bubblewrap at {bwrap} cannot be run ({exc})"
                continue
        if proc.returncode == 0:
            return None, flags
        detail = err.decode("utf-8", "replace").strip().splitlines()
        problem = (f"bubblewrap at {bwrap} cannot create a sandbox here"
                   f" ({detail[-1] if detail else f'exit status {proc.returncode}'})")
        if root:
            problem += ("; as root viva runs eval_code only without a user namespace and as an "
                        "unprivileged uid, which needs root's capabilities (CAP_SYS_ADMIN) here")
    return problem, ()


def sandbox_problem() -> str | None:
    """Why eval_code cannot be isolated on this machine, or None when bubblewrap works."""
    if not sys.platform.startswith("linux"):
        return f"bubblewrap runs on Linux only (this is {sys.platform})"
    bwrap = find_bwrap()
    if bwrap is None:
        return "bubblewrap (bwrap) is not on PATH"
    return _probe(bwrap, _is_root())[0]


def sandbox_available() -> bool:
    """True when eval_code can run under bubblewrap here (probed once per bwrap path)."""
    return sandbox_problem() is None


def require_sandbox(trust: bool = False) -> bool:
    """Check before a run that eval_code may run; True when it will be isolated.

    Raises:
        SandboxUnavailableError: no working bubblewrap and ``trust`` is False; the message says how to
            install bubblewrap or that ``--trust-eval-code`` runs the code unisolated.
    """
    problem = sandbox_problem()
    if problem is None:
        return True
    if trust:
        return False
    raise SandboxUnavailableError(f"eval_code not run: {problem}; {INSTALL_HINT}")


# -- the bubblewrap command line -----------------------------------------------------------------
def _interpreter() -> str:
    """The real interpreter binary (a venv's ``bin/python`` is a link to it)."""
    return os.path.realpath(sys.executable)


def _site_dirs() -> list[str]:
    """site-packages of viva's environment, made importable (read-only) inside the sandbox."""
    dirs: list[str] = []
    for d in [*site.getsitepackages(), sysconfig.get_paths().get("purelib", ""),
              sysconfig.get_paths().get("platlib", "")]:
        if d and os.path.isdir(d):
            real = os.path.realpath(d)
            if real not in dirs:
                dirs.append(real)
    return dirs


def _covered(path: str, roots: list[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _bwrap_args(workdir: Path, flags: tuple[str, ...], limits: Limits, env: dict[str, str],
                hide: tuple[Path, ...] = ()) -> list[str]:
    """bubblewrap's options (read through ``--args`` so they stay off the sandbox's /proc/1/cmdline).

    ``hide``: paths inside ``workdir`` covered by an empty read-only directory (or /dev/null for a file).
    """
    if AS_NOBODY in flags:  # viva is root: the harness drops to nobody (see _probe)
        caps = [a for c in ROOT_CAPS for a in ("--cap-add", c)]
        args = [*NAMESPACES, "--cap-drop", "ALL", *caps]
    else:
        args = ["--unshare-all", *[f for f in flags if f != "--size"], "--cap-drop", "ALL"]
    args += ["--new-session", "--die-with-parent", "--hostname", "viva-sandbox", "--clearenv"]
    for k, v in env.items():
        args += ["--setenv", k, v]
    # The sandbox's own /dev, /proc and /tmp come first: a later mount covers an earlier one, and the
    # interpreter, its site-packages or the work directory may live under /tmp (a checkout in /tmp).
    size = ["--size", str(limits.tmp_mb * 1024 * 1024)] if "--size" in flags else []
    args += ["--dev", "/dev", *size, "--tmpfs", "/dev/shm", "--proc", "/proc", *size, "--tmpfs", "/tmp"]
    roots: list[str] = []
    for d in SYSTEM_DIRS:
        if os.path.islink(d):
            args += ["--symlink", os.readlink(d), d]
        elif os.path.isdir(d):
            args += ["--ro-bind", d, d]
            roots.append(d)
    for f in SYSTEM_ETC:
        args += ["--ro-bind-try", f, f]
    exe = _interpreter()
    for d in [os.path.realpath(sys.base_prefix), os.path.realpath(sys.base_exec_prefix),
              os.path.dirname(exe), *_site_dirs()]:
        if os.path.isdir(d) and not _covered(d, roots):
            args += ["--ro-bind", d, d]
            roots.append(d)
    # The sandbox's own /proc still holds the host's sysctls (core_pattern, drop_caches...) and
    # sysrq-trigger: cover them read-only (bubblewrap itself covers only what it finds writable).
    args += ["--ro-bind", "/proc/sys", "/proc/sys", "--ro-bind-try", "/proc/sysrq-trigger", "/proc/sysrq-trigger"]
    if "--size" in flags:
        # The code works in a fresh tmpfs of limits.work_mb at the working directory's path; the
        # directory itself is mounted read-only at SOURCE and copied in by the harness. Nothing the
        # code writes reaches the host, and the tmpfs goes with the sandbox.
        args += ["--ro-bind", str(workdir), SOURCE]
        for h in hide:
            inside = SOURCE + "/" + str(h.relative_to(workdir))
            if h.is_dir():
                args += ["--tmpfs", inside, "--remount-ro", inside]
            elif h.exists():
                args += ["--ro-bind", "/dev/null", inside]
        args += ["--size", str(limits.work_mb * 1024 * 1024), "--tmpfs", str(workdir)]
        for h in hide:  # and the same paths in the copy: empty and read-only
            if h.is_dir():
                args += ["--tmpfs", str(h), "--remount-ro", str(h)]
            elif h.exists():
                args += ["--ro-bind", "/dev/null", str(h)]
    else:
        args += ["--bind", str(workdir), str(workdir)]
        for h in hide:
            if h.is_dir():
                args += ["--tmpfs", str(h), "--remount-ro", str(h)]
            elif h.exists():
                args += ["--ro-bind", "/dev/null", str(h)]
    # Folders bubblewrap made on the way to a mount point (/root for a Python under /root/.pyenv) are
    # mode 0700 when viva is root; the code, an unprivileged uid then, must pass through them.
    dests = [args[i + 2] for i, a in enumerate(args) if a in ("--bind", "--ro-bind")] + [str(workdir)]
    between = {str(q) for d in dests for q in Path(d).parents if str(q) != "/"}
    for d in sorted(b for b in between if not _covered(b, dests)) if AS_NOBODY in flags else ():
        args += ["--chmod", "0755", d]
    if AS_NOBODY in flags:  # writable for the unprivileged uid, as on any system
        args += ["--chmod", "1777", "/tmp", "--chmod", "1777", "/dev/shm"]
    args += ["--remount-ro", "/", "--chdir", str(workdir)]
    return args


def _spawn_bwrap(bwrap: str, args: list[str], command: list[str], env: dict[str, str], stdin, stdout, stderr,
                 info_fd: int | None = None, prefix: list[str] | None = None) -> subprocess.Popen:
    """Start bwrap with ``args`` fed through a pipe (``--args``) and ``command`` after them (``prefix``:
    a command that runs bwrap, :func:`engine.judge.cgroup.enter_command`)."""
    if info_fd is not None:
        args = [*args, "--info-fd", str(info_fd)]
    data = b"".join(a.encode() + b"\0" for a in args)
    r, w = os.pipe()
    try:
        if len(data) > 60_000:
            raise OSError("bubblewrap arguments too long")
        os.write(w, data)
        os.close(w)
        w = -1
        pass_fds = (r,) if info_fd is None else (r, info_fd)
        return subprocess.Popen([*(prefix or []), bwrap, "--args", str(r), *command], stdin=stdin, stdout=stdout,
                                stderr=stderr, env=env, pass_fds=pass_fds, start_new_session=True)
    finally:
        os.close(r)
        if w != -1:
            os.close(w)


# -- processes ------------------------------------------------------------------------------------
def _user_tasks(uid: int) -> int:
    """Tasks (processes and threads) of real uid ``uid``: what RLIMIT_NPROC counts outside a sandbox."""
    count = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/status", encoding="ascii", errors="replace") as f:
                text = f.read()
        except OSError:
            continue
        m_uid = re.search(r"^Uid:\s+(\d+)", text, re.M)
        m_thr = re.search(r"^Threads:\s+(\d+)", text, re.M)
        if m_uid and int(m_uid.group(1)) == uid:
            count += int(m_thr.group(1)) if m_thr else 1
    return count


def _sandbox_processes(init_pid: int) -> int | None:
    """Processes below the sandbox's init (its descendants; orphans are re-parented to that init)."""
    seen: set[int] = set()
    todo = [init_pid]
    while todo:
        pid = todo.pop()
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/children", encoding="ascii") as f:
                    kids = [int(k) for k in f.read().split()]
            except (OSError, ValueError):
                if pid == init_pid:
                    return None  # no /proc/<pid>/task/<tid>/children on this kernel
                continue
            for k in kids:
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
    return len(seen)


def _exited(proc: subprocess.Popen) -> bool:
    """Whether ``proc`` has ended, without reaping it where possible (its group stays addressable)."""
    if not hasattr(os, "waitid"):  # macOS, Windows
        return proc.poll() is not None
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill(pid: int, group: bool) -> None:
    """SIGKILL a process or its process group; gone already is fine."""
    if not hasattr(os, "killpg"):  # Windows: only the process itself
        if not group:
            return
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
        return
    try:
        (os.killpg if group else os.kill)(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int) -> bool:
    """Whether a live (not zombie) process is still in process group ``pgid``."""
    try:
        entries = os.listdir("/proc")
    except OSError:
        return False
    for e in entries:
        if e.isdigit():
            try:
                with open(f"/proc/{e}/stat", encoding="ascii", errors="replace") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != "Z" and int(fields[2]) == pgid:
                return True
    return False


def _ns_of(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _init_alive(init_pid: int, ns: str | None) -> bool:
    """Whether the sandbox's init still runs (not yet a zombie, so its namespace is not yet empty)."""
    try:
        with open(f"/proc/{init_pid}/stat", encoding="ascii", errors="replace") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X") and (ns is None or _ns_of(init_pid) == ns)


def _read_info(fd: int, buf: bytearray) -> int | None:
    """Accumulate bwrap's ``--info-fd`` JSON from non-blocking ``fd``; the sandbox init's pid once known."""
    try:
        while chunk := os.read(fd, 4096):
            buf += chunk
    except BlockingIOError:
        pass
    except OSError:
        return None
    m = re.search(rb'"child-pid"\s*:\s*(\d+)', buf)
    return int(m.group(1)) if m else None


def _tail(path: Path, limit: int = 65536) -> str:
    with open(path, "rb") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        f.seek(max(0, size - limit))
        return f.read().decode("utf-8", "replace")


def _signal_hint(sig: int) -> str:
    hints = {"SIGXCPU": "SIGXCPU: CPU time limit", "SIGXFSZ": "SIGXFSZ: file size limit",
             "SIGKILL": "SIGKILL: a hard limit or killed", "SIGSEGV": "SIGSEGV: memory limit?"}
    try:
        name = signal.Signals(sig).name
    except ValueError:
        return "resource limit?"
    return hints.get(name, name)


class WorkDirError(RuntimeError):
    """A working directory or a case's data that viva refuses to use (a symbolic link, another
    owner, too deep); the message names the path."""


WORK_DIRNAME = "work"
"""The data home's folder of private working directories (mode 0700)."""
MAX_TREE_DEPTH = 64
"""Deepest folder level viva copies into, or tidies in, a working directory."""
_OPEN_DIR = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN_FILE = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NONBLOCK", 0)


def _open_dir(path: Path | str | int, name: str | None = None) -> int:
    """Open a directory without following a symbolic link (``name`` relative to the fd ``path``)."""
    if name is None:
        return os.open(path, _OPEN_DIR)  # type: ignore[arg-type]
    return os.open(name, _OPEN_DIR, dir_fd=path)  # type: ignore[arg-type]


def copy_case_data(data_dir: Path | str | None, dest: Path | str) -> None:
    """Copy a case's data files (the files and folders of ``data_dir``) into the fresh folder ``dest``.

    Only regular files and folders are copied, never through a symbolic link: every path is opened
    relative to its folder's descriptor with ``O_NOFOLLOW``, and a file is created with ``O_EXCL``
    (so a name that already exists in ``dest``, link or not, is an error, never overwritten).

    Raises:
        WorkDirError: ``data_dir`` or something in it is a symbolic link or another kind of special
            file, or it is more than :data:`MAX_TREE_DEPTH` folders deep; the message names the path.
    """
    if data_dir is None or not os.path.lexists(data_dir):
        return
    if os.path.islink(data_dir):
        raise WorkDirError(f"{data_dir}: the case's data folder is a symbolic link; viva copies only "
                           "regular files and folders (re-import the benchmark)")
    if not os.path.isdir(data_dir):
        return
    src = _open_dir(Path(data_dir))
    try:
        dst = _open_dir(Path(dest))
        try:
            _copy_tree(src, dst, Path(data_dir), 0)
        finally:
            os.close(dst)
    finally:
        os.close(src)


def _copy_tree(src: int, dst: int, where: Path, depth: int) -> None:
    import stat

    if depth > MAX_TREE_DEPTH:
        raise WorkDirError(f"{where}: more than {MAX_TREE_DEPTH} folders deep; viva does not copy it")
    for name in sorted(os.listdir(src)):
        st = os.stat(name, dir_fd=src, follow_symlinks=False)
        if stat.S_ISDIR(st.st_mode):
            os.mkdir(name, 0o700, dir_fd=dst)
            s2, d2 = _open_dir(src, name), _open_dir(dst, name)
            try:
                _copy_tree(s2, d2, where / name, depth + 1)
            finally:
                os.close(s2)
                os.close(d2)
        elif stat.S_ISREG(st.st_mode):
            fi = os.open(name, _OPEN_FILE, dir_fd=src)
            try:
                if not stat.S_ISREG(os.fstat(fi).st_mode):
                    raise WorkDirError(f"{where / name}: changed while being copied; try again")
                flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
                fo = os.open(name, flags, 0o600 | (st.st_mode & 0o755), dir_fd=dst)
                try:
                    while chunk := os.read(fi, 1 << 20):
                        os.write(fo, chunk)
                    os.utime(fo, ns=(st.st_atime_ns, st.st_mtime_ns))
                finally:
                    os.close(fo)
            finally:
                os.close(fi)
        else:
            kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "not a regular file"
            raise WorkDirError(f"{where / name}: {kind}; viva copies only regular files and folders of a "
                               "case (re-import the benchmark)")


def private_dir(parent: Path | str, name: str) -> Path:
    """``parent/name`` as a folder only viva's user can enter (mode 0700, created if missing).

    Raises:
        WorkDirError: it exists as a symbolic link, as something other than a folder, or owned by
            another user.
    """
    import stat

    path = Path(parent) / name
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise WorkDirError(f"{path}: expected viva's private folder, found "
                           f"{'a symbolic link' if stat.S_ISLNK(st.st_mode) else 'something else'}; remove it")
    if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
        raise WorkDirError(f"{path}: owned by uid {st.st_uid}, not by viva's user; remove it")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)
    return path


def prepare_work_dir(data_dir: Path | str | None, data_home: Path | str, session_id: int,
                     fresh: bool = False) -> Path:
    """The working directory of a task session's agent, made once and kept across resumes.

    It is ``HOME/work/session-N-XXXXXXXX/work``: the random part comes from ``mkdtemp`` and every
    level is mode 0700 and owned by viva's user, so no other local user can predict, pre-create or
    enter it. The case's data files are copied in (:func:`copy_case_data`), then a ``ready`` marker
    is written *beside* ``work`` (out of eval_code's reach). A session's directory without its
    marker, or any when ``fresh``, is replaced by a new one (made fresh, never patched); the old ones
    are removed without following links.
    """
    import re as _re
    import stat

    root = private_dir(data_home, WORK_DIRNAME)
    pattern = _re.compile(rf"session-{int(session_id)}-[A-Za-z0-9_]+")
    found = [n for n in sorted(os.listdir(root)) if pattern.fullmatch(n)]
    if not fresh:
        for name in found:
            try:
                base, ready, work = (os.lstat(root / name), os.lstat(root / name / "ready"),
                                     os.lstat(root / name / "work"))
            except OSError:
                continue
            if stat.S_ISDIR(base.st_mode) and stat.S_ISREG(ready.st_mode) and stat.S_ISDIR(work.st_mode):
                return root / name / "work"
    for name in found:
        _remove(root / name)
    base = Path(tempfile.mkdtemp(prefix=f"session-{int(session_id)}-", dir=root))
    work = base / "work"
    os.mkdir(work, 0o700)
    copy_case_data(data_dir, work)
    fd = os.open(base / "ready", os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("the case's data files were copied into work/\n")
    return work


def remove_work_dir(workdir: Path | str | None) -> None:
    """Remove a session's working directory (``HOME/work/session-N-…``, the folder around ``work``)
    once the session has ended for good; links are never followed, a missing folder is fine."""
    if workdir is None:
        return
    base = Path(workdir).parent
    if re.fullmatch(r"session-\d+-[A-Za-z0-9_]+", base.name) and base.parent.name == WORK_DIRNAME:
        try:
            _remove(base)
        except OSError:
            pass


def sweep_work_dirs(data_home: Path | str, keep: Callable[[int], bool]) -> int:
    """Remove the working directories in ``HOME/work`` of sessions for which ``keep(session id)`` is
    False (finished, or no longer stored: a run killed before it could remove them); returns how many."""
    root = Path(data_home) / WORK_DIRNAME
    try:
        names = os.listdir(root)
    except OSError:
        return 0
    removed = 0
    for name in names:
        m = re.fullmatch(r"session-(\d+)-[A-Za-z0-9_]+", name)
        if m and not keep(int(m.group(1))):
            try:
                _remove(root / name)
                removed += 1
            except OSError:
                continue
    return removed


def _remove(path: Path) -> None:
    """Delete a folder tree without following symbolic links (``shutil.rmtree`` works on descriptors)."""
    if os.path.islink(path) or not os.path.isdir(path):
        os.unlink(path)
    else:
        _walk(path, lambda fd, st: _fd_do(os.chmod, os.fchmod, fd, 0o700))  # folders eval_code locked
        shutil.rmtree(path)


def _walk(top: Path, fix: Callable[[int, os.stat_result | None], None], skip: Iterable[Path] = ()) -> None:
    """Call ``fix(fd, stat)`` on ``top`` and every folder and regular file below it, opened without
    following links (symbolic links are left alone); stops :data:`MAX_TREE_DEPTH` levels down and
    leaves the paths in ``skip`` (the hidden data home) and everything in them alone."""
    import stat

    skipped = set()
    for q in skip:
        try:
            st = os.lstat(q)
            skipped.add((st.st_dev, st.st_ino))
        except OSError:
            pass

    def visit(fd: int, depth: int) -> None:
        st = os.fstat(fd)
        if (st.st_dev, st.st_ino) in skipped:
            return
        fix(fd, st)
        if depth >= MAX_TREE_DEPTH:
            return
        try:
            names = os.listdir(fd)
        except OSError:
            return
        for name in names:
            try:
                st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                if stat.S_ISDIR(st.st_mode):
                    child = _open_dir(fd, name)
                    try:
                        visit(child, depth + 1)
                    finally:
                        os.close(child)
                elif stat.S_ISREG(st.st_mode):
                    # O_PATH: also a file its owner cannot read (mode 4111) is reached
                    child = os.open(name, getattr(os, "O_PATH", _OPEN_FILE) | _OPEN_FILE, dir_fd=fd)
                    try:
                        cst = os.fstat(child)
                        if (cst.st_dev, cst.st_ino) not in skipped:
                            fix(child, cst)
                    finally:
                        os.close(child)
            except OSError:
                continue

    try:
        top_fd = _open_dir(top)
    except OSError:
        return
    try:
        visit(top_fd, 0)
    finally:
        os.close(top_fd)


def _fd_do(by_path: Callable[..., None], by_fd: Callable[..., None], fd: int, *args: int) -> None:
    """chmod/chown what ``fd`` refers to: through ``/proc/self/fd`` (works for ``O_PATH`` descriptors,
    and reaches the file itself, never a link) on Linux, else the ``f*`` call."""
    if sys.platform.startswith("linux"):
        by_path(f"/proc/self/fd/{fd}", *args)
    else:
        by_fd(fd, *args)


def _hand_over(work: Path, ids: tuple[int, int], skip: Iterable[Path] = ()) -> None:
    """Give the working directory's tree to the sandbox's uid/gid (viva is root), so the code, which
    runs as that unprivileged user, can write where the agent could."""
    def give(fd: int, st: os.stat_result | None) -> None:
        if st is not None and (st.st_uid, st.st_gid) != ids:
            _fd_do(os.chown, os.fchown, fd, *ids)

    _walk(work, give, skip)
    os.chmod(work, 0o755)  # bubblewrap, root without CAP_DAC_OVERRIDE, enters it before the drop


def sanitize_tree(work: Path, skip: Iterable[Path] = ()) -> None:
    """After eval_code ran: strip setuid, setgid and sticky bits from every file and folder it left
    (a setuid copy of a binary must not run with viva's uid for anyone), give the tree back to viva's
    user when viva is root, and make the directory itself mode 0700 again (eval_code may have
    opened it to everyone). Symbolic links are never followed."""
    import stat

    owner = (os.geteuid(), os.getegid()) if _is_root() else None

    def fix(fd: int, st: os.stat_result | None) -> None:
        if st is None:
            return
        if owner is not None and (st.st_uid, st.st_gid) != owner:
            _fd_do(os.chown, os.fchown, fd, *owner)
        mode = stat.S_IMODE(st.st_mode)
        clean = mode & ~(stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX)
        if clean != mode:
            _fd_do(os.chmod, os.fchmod, fd, clean)

    _walk(work, fix, skip)
    try:
        if not os.path.islink(work):
            os.chmod(work, 0o700)
    except OSError:
        pass


EVAL_PREFIX = "viva-eval-"
"""Prefix of an eval_code run's private folder in the system's temporary folder (``viva-eval-<pid>-…``)."""


def memory_plan(limits: Limits, use_cgroup: bool = True) -> tuple[Limits, Parent | None]:
    """How all of an item's processes are held to ``limits.total_memory_mb``: the limits to apply and
    the cgroup parent to create the item's cgroup in.

    With a cgroup (:func:`engine.judge.cgroup.find_parent`) the limits stay as they are. Without one
    the total is bounded by the per-process cap times the process limit: the process limit becomes
    ``total_memory_mb // memory_mb`` (at least 1) when that is lower, and a per-process cap of 0
    (none) becomes the total with one process.
    """
    if use_cgroup:
        parent = find_parent()
        if parent is not None:
            return limits, parent
    per = limits.memory_mb if limits.memory_mb > 0 else limits.total_memory_mb
    per = min(per, limits.total_memory_mb)
    procs = max(1, min(limits.max_processes, limits.total_memory_mb // max(1, per)))
    return replace(limits, memory_mb=per, max_processes=procs), None


_swept = False


def sweep_stale(force: bool = False) -> int:
    """Remove what a killed viva left (once per process unless ``force``): its ``viva-eval-<pid>-…``
    folders in the temporary folder (the item's code and transcript) and its cgroups, for pids that
    are gone; only folders of viva's own user. Returns how many were removed."""
    global _swept
    if _swept and not force:
        return 0
    _swept = True
    removed = 0
    tmp = Path(tempfile.gettempdir())
    try:
        names = os.listdir(tmp)
    except OSError:
        names = []
    for name in names:
        m = re.fullmatch(rf"{EVAL_PREFIX}(\d+)-\w+", name)
        if not m or pid_alive(int(m.group(1))):
            continue
        try:
            st = os.lstat(tmp / name)
            if hasattr(os, "geteuid") and st.st_uid != os.geteuid():
                continue
            _remove(tmp / name)
            removed += 1
        except OSError:
            continue
    return removed + sweep_cgroups()


def run_eval_code(
    code: str,
    chat_history: list[dict[str, str]],
    data_dir: Path | None = None,
    timeout: float = 10.0,
    memory_mb: int = 512,
    *,
    workdir: Path | str | None = None,
    trust: bool = False,
    limits: Limits | None = None,
    hide: Iterable[Path | str] = (),
) -> CodeResult:
    """Run ``code`` against a transcript, contained (see the module docstring).

    Args:
        code: the scoring point's Python code (assertions; exit 0 = hit).
        chat_history: transcript as ``{"role", "content"}`` dicts; roles ``examiner`` and ``agent``.
        data_dir: the case's data files, copied into a fresh working directory (unused with ``workdir``).
        timeout: wall-clock limit in seconds (the CPU limit is one second more, rounded up).
        memory_mb: address-space limit; 0 disables it (ignored when ``limits`` is given).
        workdir: the agent's working directory; the code runs there (the only writable host path)
            instead of in a fresh copy of ``data_dir``, so it sees what the agent's tools wrote.
        trust: run without isolation when bubblewrap is unusable (``--trust-eval-code``).
        limits: all resource limits (default: ``Limits(memory_mb=memory_mb)``).
        hide: paths the code must not see even if they lie inside ``workdir``, above all the data
            home (pass it always); inside the sandbox they are empty and read-only. Not enforceable
            without bubblewrap.

    Returns:
        hit or miss with its reason (stderr's last line, "timed out", or the limit that ended it).

    Raises:
        SandboxUnavailableError: bubblewrap is unusable and ``trust`` is False (nothing was run).
        FileNotFoundError: ``workdir`` is given but is not a directory.
        ValueError: ``workdir`` is ``/`` or is (or lies inside) a path in ``hide``.
    """
    isolated = require_sandbox(trust)
    limits = limits or Limits.from_env(memory_mb)
    sweep_stale()
    hidden: list[Path] = []
    if workdir is not None:
        if not Path(workdir).is_dir():
            raise FileNotFoundError(f"eval_code working directory {workdir} does not exist; "
                                    "create the agent's working directory before scoring")
        wd = Path(workdir).resolve()
        if wd == Path(wd.anchor):
            raise ValueError(f"eval_code working directory {workdir} is the file-system root; "
                             "give the agent a directory of its own")
        if Path(workdir).is_symlink():
            raise ValueError(f"eval_code working directory {workdir} is a symbolic link; give the agent "
                             "a real directory (see engine.judge.sandbox.prepare_work_dir)")
        for h in hide:
            hp = Path(h).resolve()
            if hp == wd:
                raise ValueError(f"eval_code working directory {workdir} is {h}, which eval_code "
                                 "must not reach; give the agent a directory of its own")
            if wd in hp.parents:
                hidden.append(hp)
            # A workdir inside a hidden path (the data home's private ``work/``) is fine: only the
            # workdir itself is mounted in the sandbox, nothing else of the path around it.
    with tempfile.TemporaryDirectory(prefix=f"{EVAL_PREFIX}{os.getpid()}-") as tmp:
        private = Path(tmp) / "io"  # stdin/stdout/stderr files, never mounted in the sandbox
        private.mkdir(mode=0o700)
        if workdir is None:
            work = Path(tmp) / "work"
            work.mkdir()
            copy_case_data(data_dir, work)
        else:
            work = Path(workdir)
        return _run(code, chat_history, work.resolve(), private, timeout, limits, isolated, tuple(hidden))


def _run(code: str, chat_history: list[dict[str, str]], work: Path, private: Path, timeout: float,
         limits: Limits, isolated: bool, hidden: tuple[Path, ...]) -> CodeResult:
    cpu = limits.cpu_seconds or math.ceil(timeout) + 1  # the wall clock ends a busy loop first
    is_root = _is_root()
    flags: tuple[str, ...] = ()
    bwrap = None
    if isolated:
        bwrap = find_bwrap()
        if bwrap is None:
            raise SandboxUnavailableError(f"eval_code not run: bubblewrap (bwrap) left PATH; {INSTALL_HINT}")
        flags = _probe(bwrap, is_root)[1]
    group = None
    limits, parent = memory_plan(limits)
    if parent is not None:
        try:
            group = ItemCgroup(parent, limits.total_memory_mb)
        except OSError:
            limits, _ = memory_plan(limits, use_cgroup=False)
    drop = sandbox_ids() if AS_NOBODY in flags else None
    if drop is not None:
        # RLIMIT_NPROC counts every task of the uid on the host: allow for nobody's other processes.
        nproc = _user_tasks(drop[0]) + limits.max_processes + 2
        _hand_over(work, drop, hidden)
    elif isolated:
        nproc = limits.max_processes + 2  # the sandbox's init and the harness count too
    else:
        nproc = (_user_tasks(os.getuid()) if hasattr(os, "getuid") else 0) + limits.max_processes + 1
    try:
        return _run_contained(code, chat_history, work, private, timeout, limits, isolated, hidden, cpu,
                              nproc, drop, bwrap, flags, is_root, group)
    finally:
        if group is not None:
            group.remove()
        sanitize_tree(work, hidden)


def _run_contained(code: str, chat_history: list[dict[str, str]], work: Path, private: Path, timeout: float,
                   limits: Limits, isolated: bool, hidden: tuple[Path, ...], cpu: int, nproc: int,
                   drop: tuple[int, int] | None, bwrap: str | None, flags: tuple[str, ...],
                   is_root: bool, group: ItemCgroup | None = None) -> CodeResult:
    tmpfs = isolated and "--size" in flags  # the code works in a tmpfs copy of ``work``
    payload = {
        "code": code, "chat_history": chat_history, "isolated": isolated, "drop": drop,
        "parent": None if isolated else os.getpid(),
        "site": _site_dirs() if isolated else [],
        "copy_from": SOURCE if tmpfs else None,
        "skip": [str(h.relative_to(work)) for h in hidden],
        "limits": {"cpu": cpu, "as": limits.memory_mb * 1024 * 1024 if limits.memory_mb > 0 else None,
                   "nproc": nproc, "fsize": limits.max_file_mb * 1024 * 1024,
                   "nofile": limits.max_open_files},
    }
    (private / "stdin.json").write_text(json.dumps(payload, ensure_ascii=False), encoding="utf-8")
    prefix = enter_command(group.procs) if group is not None else []
    info_r = info_w = -1
    with open(private / "stdin.json", "rb") as fin, open(private / "stdout", "wb") as fout, \
            open(private / "stderr", "wb") as ferr:
        if isolated:
            assert bwrap is not None
            env = {"PATH": SANDBOX_PATH, "LANG": os.environ.get("LANG", "C.UTF-8"), "HOME": "/tmp",
                   "TMPDIR": "/tmp", **THREAD_ENV}
            if "TZ" in os.environ:
                env["TZ"] = os.environ["TZ"]
            info_r, info_w = os.pipe()
            os.set_blocking(info_r, False)
            try:
                proc = _spawn_bwrap(bwrap, _bwrap_args(work, flags, limits, env, hidden),
                                    [_interpreter(), "-I", "-B", "-X", "utf8", "-c", HARNESS],
                                    env, fin, fout, ferr, info_fd=info_w, prefix=prefix)
            except BaseException:
                os.close(info_r)
                raise
            finally:
                os.close(info_w)
        else:
            env = {k: os.environ[k] for k in SAFE_ENV_KEYS if k in os.environ}
            env.update(THREAD_ENV)
            proc = subprocess.Popen([*prefix, sys.executable, "-I", "-B", "-X", "utf8", "-c", HARNESS], cwd=work,
                                    env=env, stdin=fin, stdout=fout, stderr=ferr, start_new_session=True)
    # The code and the transcript are on disk only until the process has them open: a viva killed
    # now leaves neither behind (its folder is removed at the next start, sweep_stale).
    try:
        os.unlink(private / "stdin.json")
    except OSError:
        pass
    info = bytearray()
    init_pid: int | None = None
    init_ns: str | None = None
    deadline = time.monotonic() + timeout
    killed_for: str | None = None
    disk_full = False
    next_walk = 0.0
    step = 0.002
    try:
        while not _exited(proc):
            if isolated and init_pid is None:
                init_pid = _read_info(info_r, info)
                init_ns = _ns_of(init_pid) if init_pid is not None else None
            if time.monotonic() >= deadline:
                killed_for = "timed out"
                break
            if isolated and is_root and init_pid is not None:
                # Linux exempts uid 0 from RLIMIT_NPROC: count the sandbox's processes instead.
                n = _sandbox_processes(init_pid)  # the harness and what it started
                if n is not None and n - 1 > limits.max_processes:
                    killed_for = f"process limit: more than {limits.max_processes} processes"
                    break
            if tmpfs and init_pid is not None:
                usage = _tmpfs_usage(init_pid, work, limits.work_mb)
                if usage is not None:
                    files, free = usage
                    disk_full = disk_full or free < 64 * 1024
                    if files > limits.max_files:
                        killed_for = f"file limit: more than {limits.max_files:,} files in the work folder"
                        break
            elif not isolated and time.monotonic() >= next_walk:
                # without bubblewrap there is no tmpfs: walk the folder (stopping past the limits)
                files, size = _walk_usage(work, limits.max_files)
                if files > limits.max_files:
                    killed_for = f"file limit: more than {limits.max_files:,} files in the work folder"
                    break
                if size > limits.work_mb * 1024 * 1024:
                    killed_for = f"disk limit: the work folder holds more than {limits.work_mb} MB"
                    break
                next_walk = time.monotonic() + 0.1
            time.sleep(step)
            step = min(step * 2, 0.02)
    finally:
        if isolated and init_pid is None:
            init_pid = _read_info(info_r, info)
        if init_pid is not None and not _exited(proc):
            _kill(init_pid, group=False)  # the kernel then kills the whole pid namespace
        _kill(proc.pid, group=True)  # the rest of the process group (bwrap, or the trusted code's)
        if not isolated and sys.platform.startswith("linux"):
            until = time.monotonic() + 2.0  # SIGKILL is delivered asynchronously
            while _group_alive(proc.pid) and time.monotonic() < until:
                time.sleep(0.01)
        proc.wait()
        if init_pid is not None:
            # bwrap reports the code's exit before its init has finished killing the namespace:
            # wait until the init is a zombie, i.e. the kernel has reaped every process in it.
            until = time.monotonic() + 5.0
            while _init_alive(init_pid, init_ns) and time.monotonic() < until:
                time.sleep(0.005)
        if info_r != -1:
            os.close(info_r)
    if killed_for == "timed out":
        return CodeResult(False, "timed out", True, isolated)
    if killed_for is not None:
        return CodeResult(False, killed_for, False, isolated)
    rc = proc.returncode
    if rc == 0:
        return CodeResult(True, "eval_code passed", False, isolated)
    lines = [ln for ln in _tail(private / "stderr").strip().splitlines() if ln.strip()]
    reason = lines[-1] if lines else f"exit status {rc}"
    if group is not None and group.oom_killed():
        return CodeResult(False, f"memory limit: the item's processes together reached {limits.total_memory_mb} MB "
                          "(one cgroup for the item)" + (f": {reason}" if lines else ""), False, isolated)
    if tmpfs and (disk_full or "No space left on device" in reason) and not reason.startswith("disk limit"):
        return CodeResult(False, f"disk limit: the work folder reached its {limits.work_mb} MB: {reason}"[:500],
                          False, isolated)
    sig = -rc if rc < 0 else (rc - 128 if isolated and 128 < rc < 128 + 65 else None)
    if sig is not None:
        reason = f"killed by signal {sig} ({_signal_hint(sig)})" + (f": {reason}" if lines else "")
    return CodeResult(False, reason[:500], False, isolated)


def _tmpfs_usage(init_pid: int, work: Path, size_mb: int) -> tuple[int, int] | None:
    """(files and folders, free bytes) of the sandbox's work tmpfs, seen through ``/proc/<init>/root``;
    None until it is mounted (a file system of another size is not it) or where it cannot be seen."""
    try:
        st = os.statvfs(f"/proc/{init_pid}/root{work}")
    except OSError:
        return None
    if abs(st.f_blocks * st.f_frsize - size_mb * 1024 * 1024) > 64 * 1024:
        return None
    return st.f_files - st.f_ffree - 1, st.f_bavail * st.f_frsize


def _walk_usage(top: Path, max_files: int) -> tuple[int, int]:
    """(entries, bytes of regular files) below ``top``, without following links; stops counting past
    ``max_files`` entries, so a folder of millions costs no more than the limit."""
    files = size = 0
    todo = [str(top)]
    while todo and files <= max_files:
        try:
            with os.scandir(todo.pop()) as it:
                for e in it:
                    files += 1
                    try:
                        if e.is_dir(follow_symlinks=False):
                            todo.append(e.path)
                        elif e.is_file(follow_symlinks=False):
                            size += e.stat(follow_symlinks=False).st_size
                    except OSError:
                        continue
                    if files > max_files:
                        break
        except OSError:
            continue
    return files, size
