"""Run a scoring point's ``eval_code`` in a separate, limited Python process.

The code runs with:

- a wall-clock timeout (default 10 s) and CPU-time and address-space limits (``resource``);
- a fresh temporary working directory holding copies of the case's data files;
- an environment with no API keys or secrets (only PATH, LANG and a few harmless variables);
- ``chat_history``: the transcript as objects with ``.role`` and ``.content``. For TaskWeaver's
  cases, which were written against langchain messages, the agent's messages are ``HumanMessage``
  and the examiner's are ``AIMessage`` (the examiner is the LLM in upstream's VirtualUser), and
  both classes are importable names in the code's namespace.

Exit status 0 means the point is hit; otherwise stderr (last line, usually the assertion) is the
reason. A timeout is a miss with reason "timed out".
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HARNESS = r'''
import json, sys, resource
cpu, mem = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu))
if mem > 0:
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))

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

payload = json.load(open("__viva_transcript.json", encoding="utf-8"))
chat_history = []
for m in payload:
    cls = HumanMessage if m["role"] in ("agent", "assistant", "target") else (
        SystemMessage if m["role"] == "system" else AIMessage)
    chat_history.append(cls(m["content"], role=m["role"]))
namespace = {"chat_history": chat_history, "HumanMessage": HumanMessage, "AIMessage": AIMessage,
             "SystemMessage": SystemMessage, "__name__": "__eval_code__"}
code = open("__viva_eval_code.py", encoding="utf-8").read()
exec(compile(code, "eval_code", "exec"), namespace)
'''

SAFE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")


@dataclass(frozen=True)
class CodeResult:
    """Outcome of one eval_code run."""

    hit: bool
    reason: str
    timed_out: bool = False


def run_eval_code(
    code: str,
    chat_history: list[dict[str, str]],
    data_dir: Path | None = None,
    timeout: float = 10.0,
    memory_mb: int = 512,
) -> CodeResult:
    """Run ``code`` against a transcript in a sandboxed subprocess.

    Args:
        code: the scoring point's Python code (assertions; exit 0 = hit).
        chat_history: transcript as ``{"role", "content"}`` dicts; roles ``examiner`` and ``agent``.
        data_dir: the case's data files, copied into the fresh working directory.
        timeout: wall-clock limit in seconds (the CPU limit is the same, rounded up).
        memory_mb: address-space limit; 0 disables it.

    Returns:
        hit or miss with its reason (stderr's last line, or "timed out").
    """
    env = {k: os.environ[k] for k in SAFE_ENV_KEYS if k in os.environ}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    with tempfile.TemporaryDirectory(prefix="viva-eval-") as tmp:
        work = Path(tmp)
        if data_dir is not None and Path(data_dir).is_dir():
            for entry in Path(data_dir).iterdir():
                if entry.is_file():
                    shutil.copy2(entry, work / entry.name)
                elif entry.is_dir():
                    shutil.copytree(entry, work / entry.name)
        (work / "__viva_transcript.json").write_text(json.dumps(chat_history, ensure_ascii=False), encoding="utf-8")
        (work / "__viva_eval_code.py").write_text(code, encoding="utf-8")
        cpu = max(1, int(timeout + 0.999))
        try:
            proc = subprocess.run(
                [sys.executable, "-I", "-c", HARNESS, str(cpu), str(memory_mb * 1024 * 1024)],
                cwd=work, env=env, capture_output=True, text=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            return CodeResult(False, "timed out", True)
    if proc.returncode == 0:
        return CodeResult(True, "eval_code passed")
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.strip()]
    reason = lines[-1] if lines else f"exit status {proc.returncode}"
    if proc.returncode < 0:
        reason = f"killed by signal {-proc.returncode} (resource limit?)" + (f": {reason}" if lines else "")
    return CodeResult(False, reason[:500])
