"""A cloze criterion carries its parts (engine.text.cloze): the one wording and its one reading back, the
store's migration 12 filling old rows, rubric versions, edits, export and import carrying the field, and
the offline kernel reading it (the judges' reading: test_judge_freetext.py, test_judge_offline_summary.py)."""

from __future__ import annotations

import io
import json
import sqlite3

import pytest

import engine.store.db as store_db
from engine.bench.export import export_jsonl
from engine.bench.importers.jsonl import import_jsonl
from engine.bench.items import add_item, create_benchmark, list_items
from engine.bench.model import BenchError, Criterion
from engine.bench.rubric import Add, Edit, Reweight, as_criterion, create_rubric, current_rubric, edit_rubric
from engine.interview.offline_questions import criterion_statement, follow_up_candidates, follow_up_question
from engine.store import Store
from engine.store.schema import SCHEMA_VERSION
from engine.text.cloze import Cloze, cloze_of, criterion_text, parse_cloze

PARTS = Cloze("48", "Antivirals work best within 48 hours of the first symptoms.")
WORDING = 'Gives "48" as the missing part of: Antivirals work best within 48 hours of the first symptoms.'


def test_the_wording_and_its_one_reading_back():
    assert PARTS.wording() == WORDING
    assert parse_cloze(WORDING) == PARTS
    assert parse_cloze(f"  {WORDING}\n") == PARTS  # read stripped
    assert parse_cloze('Gives  "Marie Curie"\nas the missing part of:   The first winner was Marie Curie.') == \
        Cloze("Marie Curie", "The first winner was Marie Curie.")
    for text in ("Antivirals work best within 48 hours.", 'Answers "Q?" with "A"', "", None):
        assert parse_cloze(text) is None
    assert Cloze.from_dict(PARTS.to_dict()) == PARTS and Cloze.from_dict(None) is None
    for bad in ({"answer": "48"}, {"answer": "", "sentence": "S"}, {"answer": 48, "sentence": "S"}, "48"):
        with pytest.raises(ValueError, match="cloze must be"):
            Cloze.from_dict(bad)


def test_a_reader_takes_an_objects_field_and_reads_back_only_a_plain_text():
    assert cloze_of(WORDING) == PARTS and criterion_text(WORDING) == WORDING
    assert cloze_of(Criterion.new("Knows when antivirals work", cloze=PARTS)) == PARTS
    assert cloze_of(Criterion.new(WORDING)) is None  # an object's text is never parsed
    assert Criterion.of_cloze(PARTS, [7]) == Criterion.new(WORDING, source_chunk_ids=[7], cloze=PARTS)


# -- the store -------------------------------------------------------------------------------------

def test_migration_12_fills_the_parts_from_old_rows(tmp_path, monkeypatch):
    """A database written before the field: its cloze criteria get the parts their text states (one
    reading), the others none; the rubric then reads them as the generator writes them now."""
    path = tmp_path / "viva.db"
    with monkeypatch.context() as m:
        m.setattr(store_db, "SCHEMA_VERSION", 11)
        Store(path).close()
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA user_version").fetchone()[0] == 11
    db.execute("INSERT INTO benchmarks (name, source, created_at) VALUES ('old', 'generated', 'x')")
    db.execute("INSERT INTO items (benchmark_id, ord, protocol, question) VALUES (1, 0, 'adaptive', 'q')")
    db.execute("INSERT INTO rubrics (item_id, current_version_id) VALUES (1, 1)")
    db.execute("INSERT INTO rubric_versions (rubric_id, version, author, created_at) VALUES (1, 1, 'kernel', 'x')")
    texts = [WORDING, "Antivirals shorten the illness.", 'Answers "Who?" with "Curie"', "Mentions a missing part of: it"]
    for i, text in enumerate(texts):
        db.execute("INSERT INTO criteria (rubric_version_id, cid, ord, text, kind) VALUES (1, ?, ?, ?, 'point')",
                   (f"c{i + 1}", i, text))
    db.commit()
    db.close()
    store = Store(path)
    assert store.schema_version == SCHEMA_VERSION >= 12
    rv = current_rubric(store, 1)
    assert [c.cloze for c in rv.criteria] == [PARTS, None, None, None]
    assert [c.text for c in rv.criteria] == texts  # the words stay
    assert store.one("SELECT cloze FROM criteria WHERE cid = 'c1'")["cloze"] == \
        json.dumps(PARTS.to_dict(), sort_keys=True)
    store.close()
    assert Store(path).schema_version == SCHEMA_VERSION  # opening again migrates nothing


@pytest.fixture
def item(store):
    with store.transaction():
        bid = create_benchmark(store, "b", "generated")
        item_id = add_item(store, bid, 0, protocol="adaptive", question='Fill in the blank: "... ____ hours ..."')
        create_rubric(store, item_id, [Criterion.of_cloze(PARTS), Criterion.new("Antivirals shorten the illness.")],
                      author="kernel")
    return item_id


def test_rubric_versions_and_edits_carry_the_parts(store, item):
    assert [c.cloze for c in current_rubric(store, item).criteria] == [PARTS, None]
    rv = edit_rubric(store, item, [Reweight("c1", 2)], author="human")  # a new version copies the field
    assert rv.criteria[0].cloze == PARTS and rv.version == 2
    # new words state new parts only in the cloze wording; other words make a plain criterion
    moved = Cloze("72", "Antivirals work best within 72 hours of the first symptoms.")
    assert edit_rubric(store, item, [Edit("c1", moved.wording())], author="human").criteria[0].cloze == moved
    assert edit_rubric(store, item, [Edit("c1", "Says when antivirals work")], author="human").criteria[0].cloze is None
    added = edit_rubric(store, item, [Add(WORDING)], author="human").criteria[-1]  # a text alone: read back
    assert added.cloze == PARTS
    # a dict (a file, an editor) gives the field, null for none, or leaves it to the text's wording
    assert as_criterion({"text": "Knows it", "cloze": PARTS.to_dict()}).cloze == PARTS
    assert as_criterion({"text": WORDING, "cloze": None}).cloze is None
    assert as_criterion({"text": WORDING}).cloze == PARTS
    with pytest.raises(BenchError, match="criterion: cloze must be"):
        as_criterion({"text": "Knows it", "cloze": {"answer": "48"}})


def _export(store, name):
    buf = io.StringIO()
    export_jsonl(store, name, buf)
    return [json.loads(line) for line in buf.getvalue().splitlines()]


def test_export_writes_the_field_and_import_reads_old_and_new_files(store, home, tmp_path, item):
    records = _export(store, "b")
    rubric = records[0]["rubric"]
    assert rubric[0]["cloze"] == PARTS.to_dict() and "cloze" not in rubric[1]  # written only where set
    path = tmp_path / "new.jsonl"
    path.write_text(json.dumps(records[0]) + "\n")
    import_jsonl(store, home, path, "b2")
    again = _export(store, "b2")
    assert again[0]["rubric"] == rubric
    # a file written before the field: the criterion's wording gives the parts
    old = dict(records[0], rubric=[{k: v for k, v in c.items() if k != "cloze"} for c in rubric])
    path.write_text(json.dumps(old) + "\n")
    import_jsonl(store, home, path, "b3")
    assert [c.cloze for c in current_rubric(store, list_items(store, "b3")[0].id).criteria] == [PARTS, None]


# -- the offline kernel ----------------------------------------------------------------------------

def test_the_offline_kernel_reads_the_field_not_the_text():
    """A criterion worded otherwise but carrying the parts is asked about as the cloze it is."""
    carried = Criterion("c1", 0, "Knows when antivirals work best", cloze=PARTS)
    worded = Criterion("c1", 0, WORDING, cloze=PARTS)
    assert criterion_statement(carried, "influenza") == criterion_statement(worded, "influenza") == \
        criterion_statement(WORDING, "influenza") == PARTS.sentence
    assert follow_up_candidates(carried, "influenza") == follow_up_candidates(worded, "influenza") == \
        follow_up_candidates(WORDING, "influenza")
    assert dict(follow_up_candidates(carried, "influenza"))["cloze"].count("____") == 1
    # another criterion's follow-up never names a cloze's answer: the field says which
    drug = Cloze("oseltamivir", "Antivirals such as oseltamivir work best when started early.")
    other = Criterion("c2", 1, "Oseltamivir is an antiviral drug that shortens the illness of influenza.")
    for first, asked in ((Criterion("c1", 0, "Knows an antiviral", cloze=drug), "Is there anything important"),
                         (Criterion("c1", 0, "Knows an antiviral"), "What is oseltamivir?")):
        assert follow_up_question("influenza", [first, other], {"c1": True}, []).startswith(asked)
