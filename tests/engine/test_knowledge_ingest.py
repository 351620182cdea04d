"""Reading sources and chunking: formats, bad input reported by path/line, chunk spans and caps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.knowledge.chunking import chunk_text
from engine.knowledge.ingest import read_sources

FIXTURES = Path(__file__).parent / "fixtures" / "kb"


# -- chunking ------------------------------------------------------------------------------------
def test_chunks_are_spans_of_the_document_and_respect_the_cap():
    paragraphs = [f"Paragraph {i} talks about topic {i}. " * (3 + i % 4) for i in range(12)]
    text = "\n\n".join(p.strip() for p in paragraphs)
    chunks = chunk_text(text, chunk_chars=300, overlap=60)
    assert len(chunks) > 3
    for c in chunks:
        assert c.text == text[c.start:c.end]
        assert len(c.text) <= 300
        assert c.text == c.text.strip()
    assert [c.ord for c in chunks] == list(range(len(chunks)))
    # Every character of the document is in some chunk, in order.
    covered_to = 0
    for c in chunks:
        assert c.start <= covered_to + 2  # at most the paragraph break is skipped
        covered_to = max(covered_to, c.end)
    assert covered_to == len(text)


def test_overlap_repeats_the_tail_of_the_previous_chunk_from_a_word_start():
    text = "\n\n".join(["alpha beta gamma delta epsilon zeta eta theta."] * 6)
    chunks = chunk_text(text, chunk_chars=120, overlap=30)
    for prev, cur in zip(chunks, chunks[1:], strict=False):
        assert cur.start < prev.end  # overlaps
        assert prev.end - cur.start <= 30
        assert cur.start == 0 or text[cur.start - 1].isspace()


def test_small_paragraphs_are_packed_and_a_long_one_is_split_at_sentence_ends():
    short = "Short one.\n\nShort two.\n\nShort three."
    assert [c.text for c in chunk_text(short, 200, 0)] == [short]
    sentences = [f"Sentence number {i} is here." for i in range(40)]
    long = " ".join(sentences)
    chunks = chunk_text(long, 200, 0)
    assert len(chunks) > 1
    for c in chunks:
        assert c.text.endswith(".")
        assert len(c.text) <= 200


def test_cjk_text_is_split_at_cjk_sentence_ends():
    text = "".join(f"第{i}句话讲的是长城的历史。" for i in range(40))
    chunks = chunk_text(text, 100, 0)
    assert len(chunks) > 1
    assert all(c.text.endswith("。") and len(c.text) <= 100 for c in chunks)


def test_invalid_overlap_is_rejected():
    with pytest.raises(ValueError):
        chunk_text("text", chunk_chars=100, overlap=50)


# -- formats ---------------------------------------------------------------------------------------
def test_markdown_title_and_text_documents():
    docs, report = read_sources([FIXTURES / "docs"])
    titles = {Path(d.path).name: d.title for d in docs}
    assert titles["astronomy.md"] == "The Solar System"
    assert titles["greatwall.txt"] == "greatwall"  # first line is a sentence, not a title
    assert report.files_read == 3 and not report.bad_files


def test_jsonl_malformed_line_is_reported_by_file_and_line(tmp_path):
    f = tmp_path / "notes.jsonl"
    f.write_text(
        json.dumps({"id": "a1", "title": "First", "body": "Photosynthesis makes sugar.", "n": 3}) + "\n"
        + '{"title": "broken", "body": \n'
        + "\n"
        + json.dumps({"body": "Chlorophyll absorbs light.", "tags": ["plants", "light"]}) + "\n",
        encoding="utf-8",
    )
    docs, report = read_sources([f])
    assert [d.title for d in docs] == ["First", "notes line 4"]
    assert docs[0].text == "First\n\nPhotosynthesis makes sugar."  # id-like fields and numbers skipped
    assert docs[1].text == "Chlorophyll absorbs light.\n\nplants\n\nlight"
    assert [(i.line, "malformed JSON" in i.message) for i in report.bad_records] == [(2, True)]
    assert str(report.bad_records[0]).startswith(f"{f}:2: ")


def test_text_field_selects_one_field_and_missing_field_is_reported(tmp_path):
    f = tmp_path / "qa.jsonl"
    f.write_text(json.dumps({"q": "ignored", "passage": "The passage."}) + "\n" + json.dumps({"q": "x"}) + "\n",
                 encoding="utf-8")
    docs, report = read_sources([f], text_field="passage")
    assert [d.text for d in docs] == ["The passage."]
    assert report.bad_records[0].line == 2 and "passage" in report.bad_records[0].message


def test_json_list_of_records_and_squad_are_recognised(tmp_path):
    records = tmp_path / "records.json"
    records.write_text(json.dumps([{"name": "Oxygen", "text": "Oxygen is element 8."}, {"text": "Iron rusts."}]),
                       encoding="utf-8")
    squad = tmp_path / "squad.json"
    squad.write_text(json.dumps({"version": "1.1", "data": [{"title": "Black_Death", "paragraphs": [
        {"context": "The Black Death was a plague.", "qas": [{"id": "q1", "question": "What?", "answers": []}]},
        {"context": "It killed millions.", "qas": []}]}]}), encoding="utf-8")
    docs, report = read_sources([records, squad])
    assert [d.title for d in docs] == ["Oxygen", "records #2", "Black Death ¶1", "Black Death ¶2"]
    assert docs[2].text == "The Black Death was a plague."  # only the context, not the questions
    assert docs[2].meta["article"] == "Black Death" and docs[2].meta["questions"] == 1
    assert docs[3].path.endswith("#data[0].paragraphs[1]")
    assert not report.bad_files and not report.bad_records


def test_csv_text_column_and_all_columns(tmp_path):
    f = tmp_path / "facts.csv"
    f.write_text("id,title,fact,year\n1,Helium,Helium is a noble gas.,1895\n2,Neon,Neon glows red.,1898\n",
                 encoding="utf-8")
    docs, _ = read_sources([f], text_column="fact")
    assert [(d.title, d.text) for d in docs] == [("Helium", "Helium is a noble gas."), ("Neon", "Neon glows red.")]
    docs, _ = read_sources([f])
    # the id left out; a short value read with its column's name and the row's key
    assert docs[0].text == "Helium\n\nHelium is a noble gas.\n\nThe year of Helium is 1895."
    _, report = read_sources([f], text_column="missing")
    assert report.bad_files and "no column 'missing'" in report.bad_files[0].message


def test_bad_files_are_reported_by_path_and_skipped(tmp_path):
    good = tmp_path / "good.txt"
    good.write_text("Good text about glaciers.", encoding="utf-8")
    (tmp_path / "binary.txt").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00IHDR")
    (tmp_path / "latin1.md").write_bytes("Caf\xe9 au lait\n".encode("latin-1"))
    (tmp_path / "broken.json").write_text('{"a": [1, 2,\n  3', encoding="utf-8")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    (tmp_path / ".hidden.txt").write_text("hidden", encoding="utf-8")
    docs, report = read_sources([tmp_path, tmp_path / "nope.txt", tmp_path / "image.png"])
    assert [Path(d.path).name for d in docs] == ["good.txt"]
    problems = {Path(i.path).name: i for i in report.bad_files}
    assert set(problems) == {"binary.txt", "latin1.md", "broken.json", "nope.txt", "image.png"}
    assert "binary" in problems["binary.txt"].message
    assert "not UTF-8" in problems["latin1.md"].message and "line 1" in problems["latin1.md"].message
    assert problems["broken.json"].line == 2
    assert "no such file" in problems["nope.txt"].message
    assert "unsupported file type" in problems["image.png"].message
    assert report.files_ignored == 1  # image.png inside the folder: ignored, not an error


def test_unreadable_file_is_reported(tmp_path, monkeypatch):
    f = tmp_path / "secret.txt"
    f.write_text("classified", encoding="utf-8")
    import engine.safeload

    real_read_input = engine.safeload.read_input

    def read_input(path, **kwargs):  # every file is read through it (issue 35: bounded input)
        if Path(path).name == "secret.txt":  # as root, chmod 0 would not stop the read
            raise PermissionError(13, "Permission denied")
        return real_read_input(path, **kwargs)

    monkeypatch.setattr(engine.safeload, "read_input", read_input)
    docs, report = read_sources([f])
    assert docs == []
    assert report.bad_files[0].path == str(f) and "cannot read (Permission denied)" in report.bad_files[0].message
