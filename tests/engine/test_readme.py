"""The README is a front door (issue 37): every file it names is in the repository, every `viva` command
it shows is a command of the CLI with options that command takes, and its "Two commands" block holds
exactly the two commands CI runs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import click
import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")

USER_FILES = {
    "viva.yaml": "the user's own config (the README shows its contents)",
    "prompts/support.txt": "a system prompt file of the config example",
    "my_agent.py": "the user's own adapter (the README shows its code)",
    "topics.yaml": "the user's own topics file (engine/demo/topics.yaml is the shipped example)",
    "./.viva": "the default data home, made on first use",
    "exports/": "a folder of the data home",
    "HOME/run/": "a folder of the data home (HOME stands for it)",
    "HOME/logs/viva.log": "a file of the data home",
    ".venv/bin/activate": "made by the first of the two commands",
}
"""Paths the README names that are the user's or the data home's, not the repository's."""

_PATH = re.compile(r"^(?:\.{0,2}/)?[\w.-]+(?:/[\w.-]*)+$|^[\w.-]+\.(?:md|py|yaml|yml|json|jsonl|onnx|txt|toml|tcss|csv)$")


def _code_spans(text: str) -> list[str]:
    blocks = re.findall(r"```[a-z]*\n(.*?)```", text, flags=re.S)
    inline = re.findall(r"`([^`\n]+)`", re.sub(r"```.*?```", "", text, flags=re.S))
    return inline + [line for b in blocks for line in b.replace("\\\n", " ").splitlines()]


def named_paths(text: str) -> set[str]:
    """The repository paths a text names in code spans (words with a / or a file extension)."""
    out = set()
    for span in _code_spans(text):
        for word in span.split():
            word = word.strip("(),;:\"'")
            if _PATH.match(word) and not word.startswith(("http", "-", "/")) and "@" not in word:  # "/v1/models": a URL path
                out.add(word)
    return out


def test_every_file_the_readme_names_exists():
    missing = sorted(p for p in named_paths(README) if p not in USER_FILES and not (ROOT / p).exists())
    assert missing == [], f"the README names files a clone lacks: {missing}"
    assert not (ROOT / "live100.txt").exists(), "no stray terminal capture at the root"


def test_the_check_itself_finds_a_missing_file():
    assert named_paths("see `DESIGN.md` and `docs/architecture.md`, run `python bench/nope.py`") == {
        "DESIGN.md", "docs/architecture.md", "bench/nope.py"}


def _viva_commands(text: str) -> list[list[str]]:
    out = []
    for span in _code_spans(text):
        span = span.replace("\\|", "/")  # a table cell's escaped | separates alternatives, not commands
        for part in re.split(r"\s*(?:&&|\||;|->)\s*", span):
            part = part.strip()
            if part.startswith("viva ") or part == "viva":
                try:
                    out.append(shlex.split(part.split("  #")[0])[1:])
                except ValueError:
                    out.append(part.split()[1:])
    return out


def _resolve(words: list[str]) -> tuple[click.Command, list[str], list[str]]:
    """(the command the words name, the chain of names, the options given)."""
    from tui.cli import main

    cmd: click.Command = main
    chain: list[str] = []
    options: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w.startswith("--") and "/--" in w:  # "--json/--tsv": alternatives, each an option
            options += w.split("/")
            i += 1
            continue
        if w.startswith("--") or (w.startswith("-") and len(w) == 2):
            name = w.split("=")[0]
            options.append(name)
            param = next((p for p in cmd.params if name in getattr(p, "opts", [])), None)
            takes_value = param is not None and not getattr(param, "is_flag", False) and "=" not in w
            i += 2 if takes_value and param.nargs == 1 else 1
            continue
        if isinstance(cmd, click.Group) and w in cmd.commands:
            cmd = cmd.commands[w]
            chain.append(w)
        elif isinstance(cmd, click.Group) and not w.isupper() and "|" not in w and not w.startswith("["):
            raise AssertionError(f"viva {' '.join(chain + [w])}: no such command")
        i += 1
    return cmd, chain, options


def test_every_viva_command_the_readme_shows_exists_with_its_options():
    commands = _viva_commands(README)
    assert len(commands) > 20
    for words in commands:
        words = [w.strip("[]") for w in words if w.strip("[]")]  # "[--epochs K]": an optional option, checked too
        cmd, chain, options = _resolve(words)
        from tui.cli import main

        known = {o for p in cmd.params for o in getattr(p, "opts", [])} | {
            o for p in main.params for o in getattr(p, "opts", [])} | {"--help", "-h", "--version"}
        unknown = [o for o in options if o not in known]
        assert not unknown, f"viva {' '.join(words)}: {' '.join(chain)} takes no {unknown}"


def test_the_check_itself_finds_a_missing_command_and_option():
    with pytest.raises(AssertionError, match="no such command"):
        _resolve(["nonesuch", "x"])
    [words] = _viva_commands("`viva run --bench b [--nonsense K]`")
    cmd, chain, options = _resolve([w.strip("[]") for w in words])
    assert chain == ["run"] and "--nonsense" in options and "--nonsense" not in {
        o for p in cmd.params for o in getattr(p, "opts", [])}


def test_two_commands_block_has_the_two_commands_ci_runs():
    section = README.split("## Two commands", 1)[1]
    block = section.split("```bash", 1)[1].split("```", 1)[0]
    commands = [line for line in block.splitlines() if line.strip() and not line.startswith("#")]
    assert len(commands) == 2 and commands[0].endswith("viva demo") and commands[1].endswith("pytest -q")
