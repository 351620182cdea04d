"""Judging: gold answers and multiple choice (answers), offline free-text facts (freetext), eval_code (sandbox)."""
