"""Targets as deployed (issue 37): a system prompt per endpoint (config text or file, or
``--target-system FILE``) that is part of the target's identity, extra HTTP headers whose secret values
come from the environment, and ``viva check`` for every target form ``viva run`` takes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.config import ConfigError, load_config
from engine.interview.targets import prompt_hash, split_label, target_label
from engine.store import Store
from tests.engine.interview_fixtures import is_target, make_bench, target_reply
from tui.cli import main


def invoke(home: Path, *args: str):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


@pytest.fixture
def bench_home(home):
    store = Store(home / "viva.db")
    make_bench(store, n_items=2)
    store.close()
    return home


def test_label_is_the_spec_and_the_prompts_hash():
    assert target_label("prod", None) == "prod"
    label = target_label("openai:m@http://h/v1", "Be terse.")
    assert label == "openai:m@http://h/v1#sys:" + prompt_hash("Be terse.")
    assert len(prompt_hash("Be terse.")) == 8 and prompt_hash("Be terse.") != prompt_hash("Be kind.")
    assert split_label(label) == ("openai:m@http://h/v1", prompt_hash("Be terse."))
    assert split_label("prod") == ("prod", None)


def test_config_system_prompt_file_is_read_relative_to_the_config(tmp_path):
    (tmp_path / "prompts").mkdir()
    (tmp_path / "prompts" / "terse.txt").write_text("Answer in one sentence.\n", encoding="utf-8")
    cfg = tmp_path / "viva.yaml"
    cfg.write_text("targets:\n  a:\n    model: m\n    system_prompt_file: prompts/terse.txt\n"
                   "  b:\n    model: m\n    system_prompt: Be kind.\n", encoding="utf-8")
    config = load_config(cfg)
    assert config.targets["a"].system_prompt == "Answer in one sentence.\n"
    assert config.targets["b"].system_prompt == "Be kind."


@pytest.mark.parametrize(("yaml_text", "expected"), [
    ("targets:\n  a:\n    system_prompt: x\n    system_prompt_file: y.txt\n", "not both"),
    ("targets:\n  a:\n    system_prompt_file: missing.txt\n", "missing.txt: system prompt file"),
    ("kernel:\n  system_prompt: x\n", "system_prompt is a target's setting"),
    ("targets:\n  a:\n    headers: {'Bad Name': v}\n", "not a valid HTTP header name"),
    ("targets:\n  a:\n    headers: {X-Org: 'env:1x'}\n", "give the name of an environment variable"),
    ("targets:\n  a:\n    headers: {Content-Type: text/plain}\n", "set by the HTTP client itself"),
])
def test_bad_prompt_and_header_settings_are_one_clear_error(tmp_path, yaml_text, expected):
    cfg = tmp_path / "viva.yaml"
    cfg.write_text(yaml_text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert expected in str(err.value) and "\n" not in str(err.value).strip()


def test_a_secret_header_given_in_the_file_is_refused_and_never_shown(tmp_path):
    cfg = tmp_path / "viva.yaml"
    cfg.write_text("targets:\n  a:\n    headers: {Authorization: Bearer hunter2-gateway-secret}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(cfg)
    assert "carries a secret" in str(err.value) and "env:VAR" in str(err.value)
    assert "hunter2" not in str(err.value)


def test_two_system_prompts_are_two_targets_sent_first_and_ranked_apart(bench_home, fake_openai, tmp_path):
    fake_openai.rule(is_target, target_reply)
    terse, kind = tmp_path / "terse.txt", tmp_path / "kind.txt"
    terse.write_text("Answer in one sentence.", encoding="utf-8")
    kind.write_text("Answer kindly and at length.", encoding="utf-8")
    spec = f"openai:fake-target@{fake_openai.base_url}"
    result = invoke(bench_home, "run", "--bench", "oxy", "--target", spec, "--target-system", str(terse),
                    "--target-system", str(kind), "--kernel", "offline", "--policy", "threshold", "--turns", "2",
                    "--json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)["targets"]
    labels = sorted(r["target"] for r in rows)
    assert labels == sorted([target_label(spec, "Answer in one sentence."),
                             target_label(spec, "Answer kindly and at length.")])
    systems = [r.messages[0] for r in fake_openai.chat_requests()]
    assert all(m["role"] == "system" for m in systems)
    assert {m["content"] for m in systems} == {"Answer in one sentence.", "Answer kindly and at length."}
    # 2 items x 2 prompts, each session keeps its prompt for resume
    db = sqlite3.connect(bench_home / "viva.db")
    stored = db.execute("SELECT target, config FROM sessions ORDER BY id").fetchall()
    assert len(stored) == 4
    for target, config in stored:
        assert split_label(target)[1] == prompt_hash(json.loads(config)["system_prompt"])


def test_headers_reach_the_server_and_their_secret_is_never_stored(bench_home, fake_openai, tmp_path, monkeypatch):
    fake_openai.rule(is_target, target_reply)
    monkeypatch.setenv("GW_TOKEN", "gw-very-secret-value-123")
    cfg = tmp_path / "viva.yaml"
    cfg.write_text(f"targets:\n  gw:\n    base_url: {fake_openai.base_url}\n    model: fake-target\n"
                   "    system_prompt: You are the support bot.\n"
                   "    headers: {X-Org: acme, api-version: '2024-10-21', X-Gateway-Token: 'env:GW_TOKEN'}\n",
                   encoding="utf-8")
    result = invoke(bench_home, "--config", str(cfg), "run", "--bench", "oxy", "--target", "gw", "--kernel",
                    "offline", "--policy", "threshold", "--turns", "1", "--json")
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)["targets"]
    assert row["target"] == target_label("gw", "You are the support bot.")
    req = fake_openai.chat_requests()[0]
    assert req.headers["x-org"] == "acme" and req.headers["api-version"] == "2024-10-21"
    assert req.headers["x-gateway-token"] == "gw-very-secret-value-123"
    assert b"gw-very-secret-value-123" not in (bench_home / "viva.db").read_bytes()
    checked = invoke(bench_home, "--config", str(cfg), "check", "gw")
    assert checked.exit_code == 0 and "reachable: yes" in checked.output
    assert fake_openai.requests[-1].headers["x-gateway-token"] == "gw-very-secret-value-123"


def test_check_takes_every_target_form(bench_home, tmp_path, monkeypatch):
    nokb = invoke(bench_home, "check", "kb:nokb")
    assert nokb.exit_code == 1
    assert "usable: no" in nokb.output and nokb.output.count("viva kb build") == 1, "one message per cause"
    (tmp_path / "chk_agent.py").write_text("class Agent:\n    def reply(self, messages):\n        return 'hi'\n")
    monkeypatch.chdir(tmp_path)
    adapter = invoke(bench_home, "check", "python:chk_agent:Agent")
    assert adapter.exit_code == 0 and "usable: yes" in adapter.output
    local = invoke(bench_home, "check", "local")
    assert "unknown target" not in local.output  # either checked, or the one line saying what local needs
    assert local.exit_code == 1 or "reachable: yes" in local.output
    unknown = invoke(bench_home, "check", "nonesuch")
    assert unknown.exit_code == 1 and "local, python:module:Class or kb:NAME" in unknown.output
