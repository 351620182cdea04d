"""A target's figures are over its finished sessions; failed ones are counted and listed, not averaged in."""

from __future__ import annotations

import asyncio
import json

from click.testing import CliRunner

from engine.config import Config
from engine.interview.run import RunRequest, execute_run, plan_run, run_sessions
from engine.metrics.sessions import target_table
from engine.runtime import Runtime
from tests.engine.interview_fixtures import ANSWERS, make_bench


def test_failed_sessions_are_listed_not_averaged(home, fake_openai):
    runtime = Runtime(home=home, config=Config())
    make_bench(runtime.store, n_items=2)
    # item 1's first question is answered with a permanent server error: that session fails
    fake_openai.rule(r"\(item 1\)", {"status": 500, "message": "boom"})
    fake_openai.default = lambda body: ANSWERS[0]
    target = f"openai:t@{fake_openai.base_url}"
    run_id = plan_run(runtime, RunRequest(bench="oxy", targets=[target], kernel="offline", policy="threshold",
                                          turns=2))
    errors = asyncio.run(execute_run(runtime, run_id))
    ok, bad = run_sessions(runtime, run_id)
    assert errors[ok] is None and errors[bad]
    [row] = target_table(runtime.store, [ok, bad])
    alone = target_table(runtime.store, [ok])[0]
    assert row["failed"] == [bad] and row["finished"] == 1 and row["sessions"] == [ok, bad]
    assert row["score"] == alone["score"] and row["conversations"] == 1  # the failed one is not averaged in

    from tui.cli import main

    result = CliRunner().invoke(main, ["--home", str(home), "resume", f"run:{run_id}", "--json"])
    assert result.exit_code == 1
    out = json.loads(result.output)
    assert out["targets"][0]["failed"] == [bad] and out["failed"][0]["session"] == bad
    runtime.close()
