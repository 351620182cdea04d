"""The knowledge-base reading rules of the ninth held-out round (exam_kb26, exam_kb27), each on records of its own."""

from __future__ import annotations

from engine.knowledge.ingest import fields_text


def test_a_value_and_its_unit_side_by_side_are_one_field():
    text = fields_text({"item": "Cord blood", "hold_value": 21, "hold_unit": "days", "site": "Freezer 3"})
    assert "The hold of Cord blood is 21 days." in text
    assert "unit" not in text
    # camelCase, and a string of digits
    assert "The dose of Zenta is 2.5 mg." in fields_text({"drug": "Zenta", "dose": "2.5", "doseUnit": "mg"})
    # a unit field with no number of its name beside it stays a field
    text = fields_text({"item": "Cord blood", "hold_unit": "days", "site": "Freezer 3"})
    assert "The hold unit of Cord blood is days." in text


def test_a_unit_ending_a_field_of_words_is_dropped():
    text = fields_text({"item": "Slides", "storage_temp_c": "room temperature", "keeper": "Lab lead"})
    assert "The storage temp of Slides is room temperature." in text
    text = fields_text({"item": "Plasma", "storage_temp_c": "-20", "keeper": "Lab lead"})
    assert "The storage temp of Plasma is -20 °C." in text
