"""The knowledge-base reading of the tenth held-out round (exam_kb28: YAML limits; exam_kb29: a reStructuredText
procedure, a JSON runbook): YAML and reStructuredText sources, and JSON numbers that are data. Each on a file of
its own, through the real reader and the real command line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.knowledge.ingest import ReadReport, fields_text, read_file, read_sources
from engine.knowledge.rst import rst_as_markdown

ROOT = Path(__file__).resolve().parents[2]

RST = """\
==========================
Cold Room Access Procedure
==========================

:Version: 2.1
:Owner: Facilities Manager

.. note::
   Applies to rooms 4A and 4B only.

1. Entry
========

Supervisor
   Signs every entry in the log and checks the door alarm weekly.

* Wear gloves rated to -30 °C.
* No lone working for more than 20 minutes.

1.1 Alarms
----------

The door alarm sounds after 60 seconds open::

    ALARM-60

.. image:: door.png

.. this comment is not read

#. Close the door.
#. Reset the panel.
"""


def test_restructuredtext_reads_as_markdown():
    md = rst_as_markdown(RST)
    assert md.startswith("# Cold Room Access Procedure\n")
    assert "\n## 1. Entry\n" in md and "\n### 1.1 Alarms\n" in md  # levels in order of first appearance
    assert "Version: 2.1" in md and "Owner: Facilities Manager" in md  # a field list
    assert "**Note:** Applies to rooms 4A and 4B only." in md  # an admonition as a bold label line
    assert "The Supervisor signs every entry in the log and checks the door alarm weekly." in md  # a definition
    assert "The door alarm sounds after 60 seconds open:" in md  # "::" ends a paragraph as ":"
    assert "door.png" not in md and "comment" not in md  # an image and a comment carry no text
    assert "1. Close the door." in md and "2. Reset the panel." in md  # auto-numbered items numbered
    assert "=====" not in md and "-----" not in md


def test_a_restructuredtext_source_is_one_document_titled_by_its_title(tmp_path):
    path = tmp_path / "cold_room.rst"
    path.write_text(RST, encoding="utf-8")
    report = ReadReport()
    docs = read_file(path, report)
    assert [d.title for d in docs] == ["Cold Room Access Procedure"] and not report.bad_files
    assert docs[0].meta["format"] == "rst"


YAML = """\
# Depot limits
document:
  title: Depot Fuel Limits
  revision: C
  effective_from: 2024-04-15
tank_limits:
  max_fill_percent: 95
  min_fill_percent: 20
  inspection_interval_months: 6
  relief_valve: "1.5 bar otherwise"
  tank_count: 12
loading:
  max_rate_lpm: 800
  supervisor: Loading Supervisor
"""


def test_a_yaml_source_reads_as_the_json_it_holds(tmp_path):
    path = tmp_path / "depot.yaml"
    path.write_text(YAML, encoding="utf-8")
    report = ReadReport()
    docs = read_file(path, report)
    assert not report.bad_files and {d.meta["format"] for d in docs} == {"yaml"}
    text = "\n".join(d.text for d in docs)
    # each object a record of its own, its fields in their order; a date read as its ISO text
    assert "The maximum fill of Tank limits is 95%. The minimum fill of Tank limits is 20%." in text
    assert "The inspection interval of Tank limits is 6 months." in text
    assert "2024-04-15" in text
    assert "tank count" not in text.lower()  # a bare count is metadata, as in JSON


@pytest.mark.parametrize("text, why", [
    ("a: [1, 2\n", "malformed YAML"),
    ("a: &x [1]\nb: *x\n" + "".join(f"c{i}: *x\n" for i in range(2)), None),  # a few aliases are fine
])
def test_bad_yaml_is_named_by_file_and_line(tmp_path, text, why):
    path = tmp_path / "bad.yml"
    path.write_text(text, encoding="utf-8")
    report = ReadReport()
    read_file(path, report)
    if why is None:
        assert not report.bad_files
    else:
        assert report.bad_files and why in report.bad_files[0].message and report.bad_files[0].line == 2


def test_a_yaml_alias_bomb_is_refused_not_expanded(tmp_path):
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]
    path = tmp_path / "bomb.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    docs, report = read_sources([path])
    assert not docs and report.bad_files and "alias" in report.bad_files[0].message


def test_json_numbers_under_a_field_naming_a_unit_or_a_limit_are_data():
    text = fields_text({"name": "Line 4", "max_speed_kmh": 80, "min_brake_percentage": 85, "review_interval_months": 24,
                        "processing_time_working_days": 5, "wagon_count": 30, "rank": 2})
    assert "is 24 months" in text and "is 5 working days" in text and "85" in text and "80" in text
    assert "30" not in text and "rank" not in text  # a count or a rank stays metadata


def test_kb_build_takes_yaml_and_restructuredtext(tmp_path):
    (tmp_path / "depot.yaml").write_text(YAML, encoding="utf-8")
    (tmp_path / "cold.rst").write_text(RST, encoding="utf-8")
    env = {**os.environ, "VIVA_HOME": str(tmp_path / "home"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", "from tui.cli import main; main()", "kb", "build", "t", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "2 files read" in done.stdout and "0 files skipped" in done.stdout


def test_a_folder_s_viva_files_are_not_sources(tmp_path):
    (tmp_path / "depot.yaml").write_text(YAML, encoding="utf-8")
    (tmp_path / "viva.yaml").write_text("targets:\n  local:\n    api_key_env: OPENAI_API_KEY\n", encoding="utf-8")
    (tmp_path / "topics.yaml").write_text("- name: Depot\n  description: Fuel limits.\n", encoding="utf-8")
    docs, report = read_sources([tmp_path])
    assert {Path(d.meta["file"]).name for d in docs} == {"depot.yaml"} and report.files_ignored == 2
    docs, _ = read_sources([tmp_path / "topics.yaml"])  # named explicitly: read
    assert docs
