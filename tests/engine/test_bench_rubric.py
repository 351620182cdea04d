"""Items and versioned rubrics: create, edit (every op), list, restore, conflicts, errors."""

from __future__ import annotations

import pytest

from engine.bench.items import (
    add_item,
    create_benchmark,
    delete_benchmark,
    get_benchmark,
    get_item,
    get_items,
    list_benchmarks,
    list_items,
)
from engine.bench.model import BenchError, Criterion
from engine.bench.rubric import (
    Add,
    Delete,
    Edit,
    Move,
    Reweight,
    SetKind,
    create_rubric,
    current_rubric,
    edit_rubric,
    get_version,
    list_versions,
    replace_criteria,
    restore_version,
)

CRITERIA = [
    {"text": "Names the causative organism", "weight": 2},
    Criterion.new("States the first-line treatment"),
    {"text": "Recommends antibiotics for a viral infection", "kind": "deduction", "weight": 1},
]


@pytest.fixture
def item(store):
    with store.transaction():
        bid = create_benchmark(store, "b", "test", meta={"k": 1})
        item_id = add_item(store, bid, 0, protocol="adaptive", question="What causes pneumonia?", topic="lungs",
                           options=None, gold=["bacteria", "viruses"], source_chunk_ids=[3, 4], meta={"x": [1]})
        create_rubric(store, item_id, CRITERIA, author="importer", note="v1")
    return item_id


def cids(rv):
    return [c.cid for c in rv.criteria]


def test_item_round_trips_through_the_store(store, item):
    it = get_item(store, item)
    assert (it.benchmark, it.ord, it.protocol, it.topic, it.gold, it.source_chunk_ids, it.meta, it.turns) == \
        ("b", 0, "adaptive", "lungs", ["bacteria", "viruses"], [3, 4], {"x": [1]}, [])
    assert [i.id for i in list_items(store, "b")] == [item]
    assert get_items(store, [item])[0] == it
    bench = get_benchmark(store, "b")
    assert (bench.n_items, bench.protocols, bench.meta) == (1, {"adaptive": 1}, {"k": 1})
    assert [b.name for b in list_benchmarks(store)] == ["b"]


def test_missing_things_give_actionable_errors(store, item):
    with pytest.raises(BenchError, match="no benchmark named 'nope'; existing benchmarks: b"):
        get_benchmark(store, "nope")
    with pytest.raises(BenchError, match="no item with id 999"):
        get_item(store, 999)
    with pytest.raises(BenchError, match="no items with ids 998, 999"):
        get_items(store, [item, 998, 999])
    with pytest.raises(BenchError, match="already exists"):
        create_benchmark(store, "b", "test")
    with pytest.raises(BenchError, match="invalid benchmark name"):
        create_benchmark(store, "../x", "test")
    with pytest.raises(BenchError, match="protocol: expected one of"):
        add_item(store, get_benchmark(store, "b").id, 1, protocol="quiz", question="q")
    with pytest.raises(BenchError, match="difficulty"):
        add_item(store, get_benchmark(store, "b").id, 1, protocol="graded", question="q", difficulty="extreme")


def test_create_assigns_cids_in_order(store, item):
    rv = current_rubric(store, item)
    assert (rv.version, rv.parent_id, rv.author, rv.note) == (1, None, "importer", "v1")
    assert cids(rv) == ["c1", "c2", "c3"]
    assert [(c.kind, c.weight) for c in rv.criteria] == [("point", 2.0), ("point", 1.0), ("deduction", 1.0)]
    assert rv.total_points == 3.0
    with pytest.raises(BenchError, match="already has a rubric"):
        create_rubric(store, item, CRITERIA, author="importer")


def test_one_edit_call_applies_every_op_and_writes_one_version(store, item):
    v1 = current_rubric(store, item)
    v2 = edit_rubric(store, item, [
        Add("Mentions vaccination", weight=0.5, source_chunk_ids=[7], position=0),
        Edit("c2", "States the first-line antibiotic"),
        Reweight("c1", 3),
        SetKind("c2", "code", eval_code="assert 'amoxicillin' in chat_history[-1].content"),
        Move("c3", 0),
        Delete("c1"),
    ], author="human:ana", note="review")
    assert (v2.version, v2.parent_id, v2.author, v2.note) == (2, v1.id, "human:ana", "review")
    assert cids(v2) == ["c3", "c4", "c2"]
    c3, c4, c2 = v2.criteria
    assert (c4.text, c4.weight, c4.source_chunk_ids) == ("Mentions vaccination", 0.5, [7])
    assert (c2.text, c2.kind) == ("States the first-line antibiotic", "code")
    assert c2.eval_code.startswith("assert")
    assert [c.ord for c in v2.criteria] == [0, 1, 2]
    # the old version is untouched and still readable
    assert get_version(store, v1.id) == v1
    assert [v.version for v in list_versions(store, item)] == [1, 2]


def test_new_criteria_never_reuse_a_cid(store, item):
    edit_rubric(store, item, [Delete("c3")], author="human")
    v3 = edit_rubric(store, item, [Add("Something new")], author="human")
    assert cids(v3) == ["c1", "c2", "c4"]
    restored = restore_version(store, item, list_versions(store, item)[0].id, author="human")
    assert cids(restored) == ["c1", "c2", "c3"]
    v5 = edit_rubric(store, item, [Add("And another")], author="kernel")
    assert cids(v5)[-1] == "c5"


def test_restore_writes_a_new_version_copying_the_old(store, item):
    v1 = current_rubric(store, item)
    v2 = edit_rubric(store, item, [Reweight("c1", 5), Delete("c2")], author="human")
    v3 = restore_version(store, item, v1.id, author="human")
    assert (v3.version, v3.parent_id, v3.note) == (3, v2.id, "restored version 1")
    assert [(c.cid, c.text, c.kind, c.weight) for c in v3.criteria] == \
        [(c.cid, c.text, c.kind, c.weight) for c in v1.criteria]
    assert current_rubric(store, item).id == v3.id
    assert get_version(store, v2.id).criteria[0].weight == 5.0


def test_a_bad_op_writes_nothing(store, item):
    cases = [
        ([Reweight("c1", 2), Delete("c99")], "operation 2.*no criterion 'c99'"),
        ([Reweight("c1", -1)], "weight must be a number > 0"),
        ([SetKind("c1", "code")], "needs non-empty Python code"),
        ([SetKind("c1", "code", eval_code="assert (")], "not valid Python"),
        ([SetKind("c1", "bonus")], "kind must be one of"),
        ([Edit("c1", "  ")], "text must be a non-empty string"),
        ([Delete("c1"), Delete("c2"), Delete("c3")], "at least one criterion"),
        ([Delete("c1"), Delete("c2")], "at least one scoring point"),
        ([], "nothing to save"),
        ([{"op": "rename", "cid": "c1"}], "unknown rubric operation 'rename'"),
        ([{"op": "reweight", "cid": "c1"}], "rubric operation 'reweight'"),
    ]
    for ops, message in cases:
        with pytest.raises(BenchError, match=message):
            edit_rubric(store, item, ops, author="human")
    assert len(list_versions(store, item)) == 1
    with pytest.raises(BenchError, match="author"):
        edit_rubric(store, item, [Reweight("c1", 2)], author="robot")


def test_dict_ops_and_stale_base_version(store, item):
    v1 = current_rubric(store, item)
    v2 = edit_rubric(store, item, [{"op": "reweight", "cid": "c2", "weight": 4},
                                   {"op": "add", "text": "Explains when to see a doctor"}],
                     author="human", base_version_id=v1.id)
    assert v2.note == "reweight c2 1->4; add c4"
    with pytest.raises(BenchError, match="changed since you opened it"):
        edit_rubric(store, item, [Delete("c1")], author="human", base_version_id=v1.id)
    assert current_rubric(store, item).id == v2.id


def test_replace_criteria_keeps_known_cids_and_numbers_new_ones(store, item):
    v1 = current_rubric(store, item)
    v2 = replace_criteria(store, item, [v1.criteria[2], {"text": "Brand new", "weight": 2}, v1.criteria[0]],
                          author="human")
    assert cids(v2) == ["c3", "c4", "c1"]
    with pytest.raises(BenchError, match="never used by this rubric"):
        replace_criteria(store, item, [{"cid": "c9", "text": "x"}], author="human")


def test_rubric_errors_for_unknown_items(store, item):
    with pytest.raises(BenchError, match="no item with id 4242"):
        current_rubric(store, 4242)
    with store.transaction():
        other = add_item(store, get_benchmark(store, "b").id, 1, protocol="graded", question="2+2?")
    with pytest.raises(BenchError, match="has no rubric yet"):
        list_versions(store, other)
    create_rubric(store, other, [{"text": "Says 4"}], author="importer")
    with pytest.raises(BenchError, match="belongs to another item"):
        restore_version(store, other, current_rubric(store, item).id, author="human")


def test_delete_benchmark_cascades_and_is_refused_while_sessions_use_it(store, item, home):
    (home / "benchmarks" / "b").mkdir(parents=True)
    store.insert("sessions", {"item_id": item, "protocol": "adaptive", "target": "t", "kernel": "k",
                              "created_at": "now", "updated_at": "now"})
    with pytest.raises(BenchError, match="1 interview session"):
        delete_benchmark(store, "b", home)
    store.conn.execute("DELETE FROM sessions")
    edit_rubric(store, item, [Delete("c2")], author="human")
    assert delete_benchmark(store, "b", home) == 1
    for table in ("benchmarks", "items", "rubrics", "rubric_versions", "criteria"):
        assert store.one(f"SELECT COUNT(*) AS n FROM {table}")["n"] == 0
    assert not (home / "benchmarks" / "b").exists()
