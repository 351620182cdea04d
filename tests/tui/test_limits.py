"""One set of limits (issue 37): the config file and ``viva run``'s options share one validation (the
config's pydantic model: same bounds, same message), and key remappings are checked against the key
names Textual knows when the app starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.config import MAX_TURNS, ConfigError, load_config
from tui.cli import main
from tui.keys import KeymapError, check_keymap, key_problem


def invoke(home: Path, *args: str):
    return CliRunner().invoke(main, ["--home", str(home), *args], catch_exceptions=False)


def test_turns_up_to_1000_in_the_config_and_on_the_command_line_alike(home, tmp_path):
    ok = tmp_path / "ok.yaml"
    ok.write_text("interview: {turns: 500, epochs: 3}\n", encoding="utf-8")
    assert load_config(ok).interview.turns == 500 and MAX_TURNS == 1000
    bad = tmp_path / "bad.yaml"
    bad.write_text("interview: {turns: 2000}\n", encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_config(bad)
    message = "interview.turns: Input should be less than or equal to 1000 (got 2000)"
    assert str(err.value) == f"{bad}: {message}"
    cli = invoke(home, "run", "--bench", "none", "--target", "local", "--turns", "2000")
    assert cli.exit_code == 2 and f"Invalid value for '--turns': {message}" in cli.output
    for option, value, bound in (("--epochs", "0", "greater than or equal to 1"),
                                 ("--workers", "65", "less than or equal to 64"),
                                 ("--concurrency", "0", "greater than 0")):
        out = invoke(home, "run", "--bench", "none", "--target", "local", option, value)
        assert out.exit_code == 2 and f"interview.{option[2:]}: Input should be {bound} (got {value})" in out.output


@pytest.mark.parametrize("key", ["ctrl+p", "f5", "escape", "question_mark", "a", "shift+tab", "ctrl+shift+up",
                                 "slash", "plus", "space", "pageup", "?"])
def test_keys_textual_knows(key):
    assert key_problem(key) is None


@pytest.mark.parametrize(("key", "why"), [("ctrl+nonsense+", "'nonsense' is not a modifier"),
                                          ("ctrl+", "nothing after the last +"),
                                          ("ctrl+nonsense", "'nonsense' is not a key name Textual knows"),
                                          ("f99", "'f99' is not a key name")])
def test_keys_textual_does_not_know(key, why):
    assert why in (key_problem(key) or "")


def test_a_keymap_with_an_unknown_key_stops_the_start():
    with pytest.raises(KeymapError) as err:
        check_keymap({"pause_resume": "ctrl+nonsense+"})
    assert str(err.value).startswith("keys: pause_resume: 'ctrl+nonsense+'")
    with pytest.raises(KeymapError, match="no key given"):
        check_keymap({"pause_resume": " , "})
    check_keymap({"pause_resume": "ctrl+p"})
