"""The newcomer's command line: progress by default (plain lines when piped, none with --quiet),
``python:`` targets from the working directory, a warning for a remote endpoint without a key,
"Error:" for configuration errors, and ``viva demo`` without a terminal."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.store import Store
from tests.engine.interview_fixtures import make_bench, script_target_only
from tui.cli import main
from tui.cli.progress import ProgressDisplay, choose_mode, fmt_duration

FIXTURES = Path(__file__).resolve().parents[1] / "engine" / "fixtures"


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def invoke(home: Path, *args: str):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


# -- the display itself -------------------------------------------------------------------------------


def test_plain_lines_show_done_rate_eta_and_failures_at_most_every_interval():
    out, clock = io.StringIO(), Clock()
    with ProgressDisplay("plain", stream=out, interval=10, clock=clock) as progress:
        progress.add("s", "sessions", 10, "sessions")
        clock.now = 4
        progress.update("s", advance=2)  # 4 s after the start: not yet due
        clock.now = 10
        progress.update("s", advance=1, failed=1)
        clock.now = 12
        progress.update("s", advance=1)  # due again at 20
        clock.now = 20
        progress.update("s", done=10)  # complete: always printed
    lines = out.getvalue().splitlines()
    assert lines == [
        "sessions 3/10 (30%) · 0.30 sessions/s · ETA 23s · 1 failed",
        "sessions 10/10 (100%) · 0.50 sessions/s · ETA 0s (done in 20s) · 1 failed",
    ]


def test_a_command_that_fails_at_once_prints_no_progress():
    out, clock = io.StringIO(), Clock()
    try:
        with ProgressDisplay("plain", stream=out, interval=10, clock=clock) as progress:
            progress.add("t", "topics", 2, "topics")
            progress.update("t", done=0)
            raise RuntimeError("the kernel is unreachable")
    except RuntimeError:
        pass
    assert out.getvalue() == ""


def test_work_done_before_the_start_does_not_count_in_the_rate():
    out, clock = io.StringIO(), Clock()
    with ProgressDisplay("plain", stream=out, interval=0, clock=clock) as progress:
        progress.add("t", "turns", 12, "turns", done=6)  # a resumed run: 6 turns were judged before
        clock.now = 3
        progress.update("t", advance=3)
    assert out.getvalue().splitlines()[-1] == "turns 9/12 (75%) · 1.00 turns/s · ETA 3s"


def test_bytes_show_as_megabytes_and_unknown_totals_as_counts():
    out, clock = io.StringIO(), Clock()
    with ProgressDisplay("plain", stream=out, interval=1, clock=clock) as progress:
        stage = progress.stage({"ingest": "reading + embedding"}, {"ingest": "bytes"})
        stage("ingest", 0, 0)  # the engine does not know the total yet
        clock.now = 2
        stage("ingest", 3_000_000, 0)
        clock.now = 4
        stage("ingest", 8_000_000, 8_000_000)
    assert out.getvalue().splitlines() == ["reading + embedding 3.0 MB · 1.50 MB/s",
                                           "reading + embedding 8.0 MB/8.0 MB (100%) · 2.00 MB/s · ETA 0s (done in 4s)"]


def test_modes_and_durations():
    assert choose_mode(True) == "off"
    assert choose_mode(False, io.StringIO()) == "plain"
    assert [fmt_duration(s) for s in (None, 5, 65, 3700)] == ["?", "5s", "1m05s", "1h01m"]
    out = io.StringIO()
    with ProgressDisplay("off", stream=out) as progress:
        progress.add("x", "x", 1)
        progress.update("x", advance=1)
        progress.log("hello")
    assert out.getvalue() == ""


# -- the commands -------------------------------------------------------------------------------------


@pytest.fixture
def bench_home(home):
    store = Store(home / "viva.db")
    make_bench(store, n_items=2)
    store.close()
    return home


def test_run_shows_progress_when_piped_and_not_with_quiet(bench_home, fake_openai):
    script_target_only(fake_openai)
    args = ["run", "--bench", "oxy", "--target", f"openai:fake-target@{fake_openai.base_url}", "--kernel",
            "offline", "--policy", "threshold", "--turns", "2"]
    result = invoke(bench_home, *args)
    assert result.exit_code == 0, result.output
    assert "viva: sessions 2/2 (100%)" in result.stderr
    assert "viva: turns judged 4/4 (100%)" in result.stderr
    assert "viva:" not in result.stdout, "progress goes to stderr"
    for quiet in ("--quiet", "--json"):  # a pipeline that asked for JSON gets JSON only
        other = invoke(bench_home, *args, quiet)
        assert other.exit_code == 0 and "viva:" not in other.stderr, quiet


def test_kb_build_import_and_generate_show_progress(home):
    built = invoke(home, "kb", "build", "docs", str(FIXTURES / "kb" / "docs"))
    assert built.exit_code == 0, built.output
    assert re.search(r"viva: reading \+ embedding ([\d.]+ kB)/\1 \(100%\) · [\d.]+ [kM]B/s · ETA 0s \(done", built.stderr)
    assert re.search(r"viva: BM25 index (\d+)/\1 \(100%\)", built.stderr)
    assert "viva:" not in invoke(home, "kb", "build", "docs2", str(FIXTURES / "kb" / "docs"), "--quiet").stderr

    imported = invoke(home, "bench", "import", "medqa", str(FIXTURES / "bench" / "medqa.jsonl"))
    assert imported.exit_code == 0, imported.output
    assert re.search(r"viva: reading lines (\d+)/\1 \(100%\)", imported.stderr)
    assert re.search(r"viva: writing items (\d+)/\1 \(100%\)", imported.stderr)

    # the topics are volcanoes and honey bees: generated from the documents about them (a knowledge base
    # without them yields no on-topic question)
    assert invoke(home, "kb", "build", "bees", str(FIXTURES / "bench" / "docs"), "--quiet").exit_code == 0
    generated = invoke(home, "bench", "generate", "gen", "--kb", "bees", "--topics",
                       str(FIXTURES / "bench" / "topics.yaml"), "--offline", "--per-topic", "1")
    assert generated.exit_code == 0, generated.output
    assert re.search(r"viva: topics (\d+)/\1 \(100%\)", generated.stderr)
    assert "question(s)" in generated.stderr, "each topic's line is still printed"


def test_python_target_from_the_working_directory(bench_home, tmp_path, monkeypatch):
    agent_dir = tmp_path / "agent"
    agent_dir.mkdir()
    (agent_dir / "my_readme_agent.py").write_text(
        "class Agent:\n"
        "    def reply(self, messages):\n"
        "        return 'Oxygen is the most abundant element in the Earth\\'s crust.'\n"
        "    def close(self):\n"
        "        pass\n")
    monkeypatch.chdir(agent_dir)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    result = invoke(bench_home, "run", "--bench", "oxy", "--items", "1", "--target", "python:my_readme_agent:Agent",
                    "--kernel", "offline", "--policy", "threshold", "--turns", "1", "--quiet")
    assert result.exit_code == 0, result.output
    assert "python:my_readme_agent:Agent" in result.stdout


def test_remote_endpoint_without_a_key_warns(bench_home, fake_openai):
    from engine.config import Config, ModelConfig
    from engine.interview.targets import target_warnings

    config = Config(targets={"remote": ModelConfig(base_url="http://10.1.2.3:8000/v1"),
                             "keyed": ModelConfig(base_url="https://api.example.invalid/v1", api_key_env="X_KEY")})
    assert target_warnings("remote", config) and not target_warnings("keyed", config)
    assert target_warnings("openai:m@https://api.example.invalid/v1", config, api_key_env="X_KEY") == []
    for quiet in ("openai:m@http://localhost:8080/v1", "openai:m@http://127.0.0.2/v1", "openai:m@http://[::1]:9/v1",
                  "local", "kb:demo", "python:mod:Agent"):
        assert target_warnings(quiet, config) == [], quiet
    # The command prints it before planning (the unknown benchmark then stops it: nothing is contacted).
    remote = invoke(bench_home, "run", "--bench", "no-such-bench", "--target",
                    "openai:gpt-x@https://api.example.invalid/v1", "--kernel", "offline", "--quiet")
    assert remote.exit_code == 1
    assert ("warning: target openai:gpt-x@https://api.example.invalid/v1: https://api.example.invalid/v1 is not on "
            "this machine and no API key is configured") in remote.stderr
    script_target_only(fake_openai)
    local = invoke(bench_home, "run", "--bench", "oxy", "--items", "1", "--target",
                   f"openai:fake-target@{fake_openai.base_url}", "--kernel", "offline", "--turns", "1", "--quiet")
    assert local.exit_code == 0 and "warning" not in local.stderr, "a loopback server needs no key"


def test_config_errors_print_error_like_every_other_error(home, tmp_path):
    bad = tmp_path / "viva.yaml"
    bad.write_text("interview: {turns: zero}\n")
    result = CliRunner().invoke(main, ["--home", str(home), "--config", str(bad), "sessions"])
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: ") and "interview.turns" in result.stderr
    other = CliRunner().invoke(main, ["--home", str(home), "review", "999"])
    assert other.stderr.startswith("Error: "), "the same prefix as click's own errors"


def test_demo_without_a_terminal_prints_the_interviews(home):
    result = invoke(home, "demo", "--target", "kb:demo", "--turns", "2", "--quiet")
    assert result.exit_code == 0, result.output
    assert "not a terminal: printing the demo" in result.stdout
    assert "Q0 [initial" in result.stdout and "Q1 [" in result.stdout
    assert re.search(r"kb:demo\s+│\s+demo\s+│\s+4\*?\s+│\s+\d+\.\d", result.stdout), "the leaderboard names the reference target (4 demo items)"
