"""Unbounded input refused before anything is created (issue 25, defect 9)."""

from __future__ import annotations

import socket

import pytest

from engine.interview.run import MAX_TURNS, RunError, RunRequest, plan_run
from engine.interview.targets import TargetError
from tests.tui.conftest import make_benchmark, make_runtime


@pytest.fixture
def runtime(home, fake_openai):
    rt = make_runtime(home, fake_openai)
    make_benchmark(rt)
    yield rt
    rt.store.close()


def _sessions(rt) -> int:
    return rt.store.one("SELECT COUNT(*) AS n FROM sessions")["n"]


def test_turns_are_bounded(runtime):
    with pytest.raises(RunError, match=rf"interview.turns: Input should be less than or equal to {MAX_TURNS} \(got 99999999999\)"):
        plan_run(runtime, RunRequest(bench="flu", targets=["fake-a"], kernel="offline", turns=99999999999))
    assert _sessions(runtime) == 0


@pytest.mark.parametrize("spec, message", [("openai:@http://x", "model name before @ is empty"),
                                           ("openai:m@x", "base URL after @ must be http")])
def test_a_target_spec_with_an_empty_part_is_refused(runtime, spec, message):
    with pytest.raises(TargetError, match=message):
        plan_run(runtime, RunRequest(bench="flu", targets=[spec], kernel="offline", turns=2))
    assert _sessions(runtime) == 0


def test_a_dead_port_on_this_machine_is_found_before_the_session_exists(runtime, tmp_path):
    from click.testing import CliRunner

    from engine.api import Engine
    from tui.cli import main

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = f"openai:m@http://127.0.0.1:{port}/v1"
    [message] = Engine(runtime).unreachable_targets([spec, "fake-a", "kb:flu"])
    assert f"nothing listens at 127.0.0.1:{port}" in message
    result = CliRunner().invoke(main, ["--home", str(runtime.home), "run", "--bench", "flu", "--target", spec,
                                       "--kernel", "offline", "--turns", "2"])
    assert result.exit_code != 0 and f"nothing listens at 127.0.0.1:{port}" in result.output
    assert _sessions(runtime) == 0
    result = CliRunner().invoke(main, ["--home", str(runtime.home), "run", "--bench", "flu", "--target", "fake-a",
                                       "--turns", "99999999999"])
    assert result.exit_code != 0 and "interview.turns: Input should be less than or equal to 1000" in result.output
