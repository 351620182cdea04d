"""Benchmarks: items, versioned rubrics, importers, export and generation.

Public API (import from the submodules; this package imports nothing heavy):

- ``engine.bench.model``: ``Benchmark``, ``Item``, ``Criterion``, ``RubricVersion``, ``BenchError``.
- ``engine.bench.items``: ``get_item``, ``get_items``, ``list_items``, ``get_benchmark``,
  ``list_benchmarks``, ``create_benchmark``, ``add_item``, ``delete_benchmark``, ``item_data_dir``.
- ``engine.bench.rubric``: ``create_rubric``, ``current_rubric``, ``get_version``, ``list_versions``,
  ``edit_rubric`` (ops ``Add``, ``Edit``, ``Delete``, ``Move``, ``Reweight``, ``SetKind``),
  ``replace_criteria``, ``restore_version``.
- ``engine.bench.importers``: ``run_import`` (sedareval, taskweaver, medqa, squad, jsonl).
- ``engine.bench.export``: ``export_jsonl`` (docs/benchmark-format.md).
- ``engine.bench.generate``: ``generate_benchmark``, ``load_topics`` (TestAgent 2.1).
"""
