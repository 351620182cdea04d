"""Versioned rubrics: every change writes a new immutable version; nothing is overwritten.

An item has at most one rubric; a rubric has versions 1, 2, 3...; each version holds a full copy of
its criteria. ``rubrics.current_version_id`` points at the version in force. Criteria keep their
``cid`` (``c1``, ``c2``...) from version to version; a new criterion gets a fresh cid that no version
of the rubric has used, so verdicts recorded against any version stay unambiguous.

Edits go through :func:`edit_rubric` with a list of operations::

    edit_rubric(store, item_id, [
        Add("Names the causative organism", weight=2),
        Edit("c3", "States the first-line treatment"),
        Reweight("c1", 0.5),
        SetKind("c4", "deduction"),
        Move("c2", 0),
        Delete("c5"),
    ], author="human", note="tightened after review")

Operations may also be given as dicts (``{"op": "reweight", "cid": "c1", "weight": 0.5}``), which is
what the JSON-speaking callers (CLI, app) use.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from engine.bench.model import AUTHORS, KINDS, BenchError, Criterion, RubricVersion
from engine.store import Store
from engine.store.db import dumps, loads, now_iso
from engine.text.cloze import Cloze, parse_cloze

_CID_RE = re.compile(r"^c([1-9][0-9]*)$")


# -- operations --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Add:
    """Add a criterion (at ``position``, default the end); it gets a fresh cid."""

    text: str
    kind: str = "point"
    weight: float = 1.0
    eval_code: str | None = None
    source_chunk_ids: tuple[int, ...] | list[int] = ()
    raw: str | None = None
    position: int | None = None
    op: str = field(default="add", init=False)


@dataclass(frozen=True)
class Edit:
    """Change a criterion's text (optionally also its source chunk ids). A cloze criterion keeps its
    parts while its text is unchanged; new words carry the parts their wording states (none, unless
    they keep the cloze wording: :func:`engine.text.cloze.parse_cloze`)."""

    cid: str
    text: str
    source_chunk_ids: tuple[int, ...] | list[int] | None = None
    op: str = field(default="edit", init=False)


@dataclass(frozen=True)
class Delete:
    """Remove a criterion (its cid is never reused)."""

    cid: str
    op: str = field(default="delete", init=False)


@dataclass(frozen=True)
class Move:
    """Move a criterion to ``position`` (0-based, in the list after the move; clamped)."""

    cid: str
    position: int
    op: str = field(default="move", init=False)


@dataclass(frozen=True)
class Reweight:
    """Set a criterion's weight (points for a point/code criterion, size for a deduction)."""

    cid: str
    weight: float
    op: str = field(default="reweight", init=False)


@dataclass(frozen=True)
class SetKind:
    """Change a criterion's kind; ``eval_code`` is required for ``code`` and dropped otherwise."""

    cid: str
    kind: str
    eval_code: str | None = None
    op: str = field(default="set_kind", init=False)


Op = Add | Edit | Delete | Move | Reweight | SetKind
"""One rubric edit operation."""

_OPS: dict[str, type] = {"add": Add, "edit": Edit, "delete": Delete, "move": Move,
                         "reweight": Reweight, "set_kind": SetKind}


def op_from_dict(data: dict[str, Any]) -> Op:
    """Build an operation from a dict with an ``op`` key (``add``, ``edit``, ``delete``, ``move``,
    ``reweight``, ``set_kind``) and that operation's fields.

    Raises:
        BenchError: unknown op or wrong fields.
    """
    if not isinstance(data, dict) or "op" not in data:
        raise BenchError(f"a rubric operation must be an object with an 'op' key, got {data!r}")
    kind = data["op"]
    cls = _OPS.get(kind)
    if cls is None:
        raise BenchError(f"unknown rubric operation {kind!r}; expected one of {', '.join(_OPS)}")
    args = {k: v for k, v in data.items() if k != "op"}
    try:
        return cls(**args)
    except TypeError as exc:
        raise BenchError(f"rubric operation {kind!r}: {exc}") from None


# -- validation --------------------------------------------------------------------------------
def check_author(author: str) -> str:
    """Validate an author: ``kernel``, ``importer``, ``human`` or ``human:NAME``."""
    base = (author or "").split(":", 1)[0]
    if base not in AUTHORS:
        raise BenchError(f"author: expected one of {', '.join(AUTHORS)} (or human:NAME), got {author!r}")
    return author


def check_eval_code(code: str | None, where: str = "eval_code") -> str:
    """Check that ``code`` is non-empty Python that compiles.

    Raises:
        BenchError: empty or a syntax error (with its line).
    """
    if not isinstance(code, str) or not code.strip():
        raise BenchError(f"{where}: a criterion of kind 'code' needs non-empty Python code")
    try:
        compile(code, "<eval_code>", "exec")
    except SyntaxError as exc:
        raise BenchError(f"{where}: not valid Python (line {exc.lineno}: {exc.msg})") from None
    return code


def _check_criterion(c: Criterion, where: str) -> Criterion:
    if not isinstance(c.text, str) or not c.text.strip():
        raise BenchError(f"{where}: text must be a non-empty string")
    if c.kind not in KINDS:
        raise BenchError(f"{where}: kind must be one of {', '.join(KINDS)}, got {c.kind!r}")
    if isinstance(c.weight, bool) or not isinstance(c.weight, int | float) or not math.isfinite(c.weight) \
            or c.weight <= 0:
        raise BenchError(f"{where}: weight must be a number > 0 (a deduction's weight is its size), "
                         f"got {c.weight!r}")
    if c.kind == "code":
        check_eval_code(c.eval_code, f"{where}: eval_code")
    elif c.eval_code is not None:
        raise BenchError(f"{where}: eval_code is only allowed on criteria of kind 'code' (kind is {c.kind!r})")
    ids = c.source_chunk_ids
    if not isinstance(ids, list | tuple) or not all(isinstance(i, int) and not isinstance(i, bool) for i in ids):
        raise BenchError(f"{where}: source_chunk_ids must be a list of integers, got {ids!r}")
    if c.raw is not None and not isinstance(c.raw, str):
        raise BenchError(f"{where}: raw must be a string or null")
    if c.answers is not None and (not isinstance(c.answers, list | tuple) or not c.answers
                                  or not all(isinstance(a, str) and a.strip() for a in c.answers)):
        raise BenchError(f"{where}: answers must be a non-empty list of non-empty strings, got {c.answers!r}")
    if c.answers is not None and c.kind != "point":
        raise BenchError(f"{where}: gold answers are only allowed on criteria of kind 'point' (kind is {c.kind!r})")
    if c.asks is not None and (not isinstance(c.asks, str) or not c.asks.strip()):
        raise BenchError(f"{where}: asks must be the question's text or null")
    if c.cloze is not None and not isinstance(c.cloze, Cloze):
        raise BenchError(f"{where}: cloze must be a Cloze (answer, sentence) or null, got {c.cloze!r}")
    return c


def _check_rubric(criteria: Sequence[Criterion]) -> None:
    if not criteria:
        raise BenchError("a rubric needs at least one criterion")
    if all(c.kind == "deduction" for c in criteria):
        raise BenchError("a rubric needs at least one scoring point (kind 'point' or 'code'), "
                         "not only deductions")
    seen: set[str] = set()
    for c in criteria:
        if c.cid in seen:
            raise BenchError(f"duplicate criterion id {c.cid!r}")
        seen.add(c.cid)


def as_criterion(value: Criterion | dict[str, Any], where: str = "criterion") -> Criterion:
    """Accept a :class:`Criterion` or a dict with ``text`` and optional ``cid``, ``kind``, ``weight``,
    ``eval_code``, ``source_chunk_ids``, ``raw``, ``answers``, ``asks``, ``cloze``.

    A dict without ``cloze`` (a file or an editor that gives only the text) gets the parts its text's
    wording states (:func:`engine.text.cloze.parse_cloze`); ``"cloze": null`` says it has none.

    Raises:
        BenchError: a field is missing or of the wrong type.
    """
    if isinstance(value, Criterion):
        c = value
    elif isinstance(value, dict):
        unknown = set(value) - {"cid", "ord", "text", "kind", "weight", "eval_code", "source_chunk_ids", "raw",
                                "answers", "asks", "cloze"}
        if unknown:
            raise BenchError(f"{where}: unknown field(s) {', '.join(sorted(unknown))}")
        if "text" not in value:
            raise BenchError(f"{where}: missing field 'text'")
        try:
            cloze = Cloze.from_dict(value["cloze"]) if "cloze" in value else \
                parse_cloze(value["text"]) if isinstance(value["text"], str) else None
        except ValueError as exc:
            raise BenchError(f"{where}: {exc}") from None
        c = Criterion(cid=value.get("cid") or "", ord=0, text=value["text"], kind=value.get("kind", "point"),
                      weight=value.get("weight", 1.0), eval_code=value.get("eval_code"),
                      source_chunk_ids=value.get("source_chunk_ids") or [], raw=value.get("raw"),
                      answers=value.get("answers") or None, asks=value.get("asks"), cloze=cloze)
    else:
        raise BenchError(f"{where}: expected a criterion object, got {type(value).__name__}")
    c = replace(c, source_chunk_ids=list(c.source_chunk_ids or []),
                weight=float(c.weight) if isinstance(c.weight, int | float) and not isinstance(c.weight, bool)
                else c.weight)
    if c.cid and not _CID_RE.match(c.cid):
        raise BenchError(f"{where}: cid must look like c1, c2, ... (got {c.cid!r})")
    return _check_criterion(c, where)


# -- reading -----------------------------------------------------------------------------------
def _load_version(store: Store, row: dict[str, Any]) -> RubricVersion:
    crit = [
        Criterion(cid=r["cid"], ord=r["ord"], text=r["text"], kind=r["kind"], weight=r["weight"],
                  eval_code=r["eval_code"], source_chunk_ids=loads(r["source_chunk_ids"], []), raw=r["raw"],
                  answers=loads(r.get("answers"), None), asks=r.get("asks"),
                  cloze=Cloze.from_dict(loads(r.get("cloze"), None)))
        for r in store.query("SELECT * FROM criteria WHERE rubric_version_id = ? ORDER BY ord", (row["id"],))
    ]
    return RubricVersion(id=row["id"], rubric_id=row["rubric_id"], version=row["version"],
                         parent_id=row["parent_id"], author=row["author"], note=row["note"],
                         created_at=row["created_at"], criteria=crit)


def _rubric_row(store: Store, item_id: int) -> dict[str, Any] | None:
    return store.one("SELECT * FROM rubrics WHERE item_id = ?", (int(item_id),))


def _require_rubric(store: Store, item_id: int) -> dict[str, Any]:
    row = _rubric_row(store, item_id)
    if row is None:
        if store.one("SELECT id FROM items WHERE id = ?", (int(item_id),)) is None:
            raise BenchError(f"no item with id {item_id}; list item ids with `viva bench show NAME`")
        raise BenchError(f"item {item_id} has no rubric yet; create one with create_rubric")
    return row


def has_rubric(store: Store, item_id: int) -> bool:
    """True when the item has a rubric."""
    return _rubric_row(store, item_id) is not None


def get_version(store: Store, version_id: int) -> RubricVersion:
    """A rubric version by its id.

    Raises:
        BenchError: no such version.
    """
    row = store.one("SELECT * FROM rubric_versions WHERE id = ?", (int(version_id),))
    if row is None:
        raise BenchError(f"no rubric version with id {version_id}")
    return _load_version(store, row)


def current_rubric(store: Store, item_id: int) -> RubricVersion:
    """The rubric version in force for an item.

    Raises:
        BenchError: the item does not exist or has no rubric.
    """
    row = _require_rubric(store, item_id)
    return get_version(store, row["current_version_id"])


def list_versions(store: Store, item_id: int) -> list[RubricVersion]:
    """All versions of an item's rubric, oldest first (each with its criteria).

    Raises:
        BenchError: the item does not exist or has no rubric.
    """
    row = _require_rubric(store, item_id)
    rows = store.query("SELECT * FROM rubric_versions WHERE rubric_id = ? ORDER BY version", (row["id"],))
    return [_load_version(store, r) for r in rows]


# -- writing -----------------------------------------------------------------------------------
def _next_cid_number(store: Store, rubric_id: int | None) -> int:
    if rubric_id is None:
        return 1
    rows = store.query(
        "SELECT DISTINCT c.cid FROM criteria c JOIN rubric_versions v ON v.id = c.rubric_version_id "
        "WHERE v.rubric_id = ?", (rubric_id,),
    )
    numbers = [int(m.group(1)) for r in rows if (m := _CID_RE.match(r["cid"]))]
    return max(numbers, default=0) + 1


def _write_version(store: Store, rubric_id: int, criteria: Sequence[Criterion], author: str, note: str,
                   parent_id: int | None) -> RubricVersion:
    _check_rubric(criteria)
    with store.transaction() as db:
        last = store.one("SELECT COALESCE(MAX(version), 0) AS v FROM rubric_versions WHERE rubric_id = ?",
                         (rubric_id,))
        created = now_iso()
        version = int(last["v"]) + 1 if last else 1
        vid = db["rubric_versions"].insert({
            "rubric_id": rubric_id, "version": version, "parent_id": parent_id, "author": author,
            "note": note or "", "created_at": created,
        }).last_pk
        db["criteria"].insert_all([
            {"rubric_version_id": vid, "cid": c.cid, "ord": i, "text": c.text, "kind": c.kind,
             "weight": float(c.weight), "eval_code": c.eval_code, "source_chunk_ids": dumps(list(c.source_chunk_ids)),
             "raw": c.raw, "answers": dumps(list(c.answers)) if c.answers else None, "asks": c.asks,
             "cloze": dumps(c.cloze.to_dict()) if c.cloze else None}
            for i, c in enumerate(criteria)
        ])
        store.conn.execute("UPDATE rubrics SET current_version_id = ? WHERE id = ?", (vid, rubric_id))
    return get_version(store, vid)  # type: ignore[arg-type]


def _assign_cids(criteria: Iterable[Criterion | dict[str, Any]], next_number: int) -> list[Criterion]:
    out: list[Criterion] = []
    for i, value in enumerate(criteria):
        c = as_criterion(value, f"criterion {i + 1}")
        if not c.cid:
            c = replace(c, cid=f"c{next_number}")
            next_number += 1
        out.append(replace(c, ord=i))
    taken = [int(_CID_RE.match(c.cid).group(1)) for c in out]  # type: ignore[union-attr]
    if len(set(taken)) != len(taken):
        dup = sorted({c.cid for c in out if [d.cid for d in out].count(c.cid) > 1})
        raise BenchError(f"duplicate criterion id(s) {', '.join(dup)}")
    return out


def create_rubric(store: Store, item_id: int, criteria: Iterable[Criterion | dict[str, Any]], author: str,
                  note: str = "") -> RubricVersion:
    """Create an item's rubric with its first version.

    Criteria without a cid get ``c1``, ``c2``... in order; criteria that carry a cid (a lossless
    re-import) keep it. Joins the caller's transaction.

    Args:
        store: the store.
        item_id: the item.
        criteria: :class:`Criterion` objects or dicts (see :func:`as_criterion`).
        author: ``kernel``, ``importer`` or ``human`` (``human:NAME``).
        note: what this version is.

    Returns:
        Version 1.

    Raises:
        BenchError: the item does not exist, already has a rubric, or a criterion is invalid.
    """
    check_author(author)
    with store.transaction() as db:
        if store.one("SELECT id FROM items WHERE id = ?", (int(item_id),)) is None:
            raise BenchError(f"no item with id {item_id}")
        if _rubric_row(store, item_id) is not None:
            raise BenchError(f"item {item_id} already has a rubric; change it with edit_rubric "
                             "(every change makes a new version)")
        crit = _assign_cids(criteria, 1)
        _check_rubric(crit)
        rid = db["rubrics"].insert({"item_id": int(item_id), "current_version_id": None}).last_pk
        return _write_version(store, rid, crit, author, note, None)  # type: ignore[arg-type]


def _check_base(current: RubricVersion, base_version_id: int | None) -> None:
    if base_version_id is not None and base_version_id != current.id:
        raise BenchError(
            f"the rubric changed since you opened it (you edited version id {base_version_id}, "
            f"the current one is version {current.version}, id {current.id}); reload and edit again"
        )


def _find(criteria: list[Criterion], cid: str, i: int) -> int:
    for j, c in enumerate(criteria):
        if c.cid == cid:
            return j
    known = ", ".join(c.cid for c in criteria) or "none"
    raise BenchError(f"operation {i + 1}: no criterion {cid!r} in the rubric (criteria: {known})")


def apply_ops(criteria: Sequence[Criterion], ops: Sequence[Op | dict[str, Any]], next_number: int
              ) -> tuple[list[Criterion], list[str]]:
    """Apply operations to a list of criteria without touching the store.

    Args:
        criteria: the criteria of the version being edited.
        ops: the operations, in order.
        next_number: the number of the next fresh cid.

    Returns:
        The new criteria (re-numbered ``ord``) and a short description of each operation.

    Raises:
        BenchError: an operation names an unknown cid or sets an invalid value (the message says
            which operation, counted from 1).
    """
    out = list(criteria)
    log: list[str] = []
    for i, raw_op in enumerate(ops):
        op = op_from_dict(raw_op) if isinstance(raw_op, dict) else raw_op
        where = f"operation {i + 1} ({op.op})"
        if isinstance(op, Add):
            c = as_criterion({"text": op.text, "kind": op.kind, "weight": op.weight, "eval_code": op.eval_code,
                              "source_chunk_ids": list(op.source_chunk_ids), "raw": op.raw}, where)
            c = replace(c, cid=f"c{next_number}")
            next_number += 1
            pos = len(out) if op.position is None else max(0, min(int(op.position), len(out)))
            out.insert(pos, c)
            log.append(f"add {c.cid}")
        elif isinstance(op, Edit):
            j = _find(out, op.cid, i)
            ids = out[j].source_chunk_ids if op.source_chunk_ids is None else list(op.source_chunk_ids)
            # new words: the cloze parts are what they state (none unless they keep the cloze wording)
            cloze = out[j].cloze if op.text == out[j].text else parse_cloze(op.text) if isinstance(op.text, str) \
                else None
            out[j] = _check_criterion(replace(out[j], text=op.text, source_chunk_ids=ids, cloze=cloze), where)
            log.append(f"edit {op.cid}")
        elif isinstance(op, Delete):
            j = _find(out, op.cid, i)
            del out[j]
            log.append(f"delete {op.cid}")
        elif isinstance(op, Move):
            j = _find(out, op.cid, i)
            c = out.pop(j)
            pos = max(0, min(int(op.position), len(out)))
            out.insert(pos, c)
            log.append(f"move {op.cid} to {pos + 1}")
        elif isinstance(op, Reweight):
            j = _find(out, op.cid, i)
            old = out[j].weight
            w = op.weight
            out[j] = _check_criterion(replace(out[j], weight=float(w) if isinstance(w, int | float)
                                              and not isinstance(w, bool) else w), where)
            log.append(f"reweight {op.cid} {old:g}->{out[j].weight:g}")
        elif isinstance(op, SetKind):
            j = _find(out, op.cid, i)
            code = op.eval_code if op.kind == "code" else None
            if op.kind == "code" and code is None:
                code = out[j].eval_code
            out[j] = _check_criterion(replace(out[j], kind=op.kind, eval_code=code), where)
            log.append(f"set_kind {op.cid} {op.kind}")
        else:
            raise BenchError(f"operation {i + 1}: not a rubric operation: {raw_op!r}")
    return [replace(c, ord=k) for k, c in enumerate(out)], log


def edit_rubric(store: Store, item_id: int, ops: Sequence[Op | dict[str, Any]], author: str, note: str = "",
                base_version_id: int | None = None) -> RubricVersion:
    """Apply operations to the current rubric and save the result as a new version.

    All operations apply in order to the current version; the result is written as one new version
    (parent = the current one) in one transaction, or nothing is written.

    Args:
        store: the store.
        item_id: the item whose rubric is edited.
        ops: :data:`Op` objects or dicts (see :func:`op_from_dict`).
        author: ``kernel``, ``importer`` or ``human`` (``human:NAME``).
        note: why; when empty a summary of the operations is used.
        base_version_id: the version the editor started from; if given and no longer current,
            the edit is refused (someone else saved in between).

    Returns:
        The new current version.

    Raises:
        BenchError: no rubric, an invalid operation, a stale base version, an empty rubric, or no
            operations at all.
    """
    check_author(author)
    if not ops:
        raise BenchError("no rubric operations given; nothing to save")
    with store.transaction():
        row = _require_rubric(store, item_id)
        current = get_version(store, row["current_version_id"])
        _check_base(current, base_version_id)
        crit, log = apply_ops(current.criteria, ops, _next_cid_number(store, row["id"]))
        return _write_version(store, row["id"], crit, author, note or "; ".join(log), current.id)


def replace_criteria(store: Store, item_id: int, criteria: Iterable[Criterion | dict[str, Any]], author: str,
                     note: str = "", base_version_id: int | None = None) -> RubricVersion:
    """Save a whole new list of criteria as a new version (an editor's "save").

    Criteria carrying a cid used by this rubric keep it; criteria without one get fresh cids.

    Raises:
        BenchError: see :func:`edit_rubric`; also a cid this rubric never used.
    """
    check_author(author)
    with store.transaction():
        row = _require_rubric(store, item_id)
        current = get_version(store, row["current_version_id"])
        _check_base(current, base_version_id)
        items = list(criteria)
        nxt = _next_cid_number(store, row["id"])
        for i, value in enumerate(items):
            cid = value.cid if isinstance(value, Criterion) else (value.get("cid") if isinstance(value, dict) else "")
            m = _CID_RE.match(cid or "")
            if cid and (not m or int(m.group(1)) >= nxt):
                raise BenchError(f"criterion {i + 1}: cid {cid!r} was never used by this rubric; "
                                 "leave cid empty for a new criterion")
        crit = _assign_cids(items, nxt)
        return _write_version(store, row["id"], crit, author, note or "replaced criteria", current.id)


def restore_version(store: Store, item_id: int, version_id: int, author: str, note: str = "") -> RubricVersion:
    """Make an old version current again by writing a new version that copies it.

    Returns:
        The new current version (its parent is the version that was current before).

    Raises:
        BenchError: no rubric, or the version belongs to another item's rubric.
    """
    check_author(author)
    with store.transaction():
        row = _require_rubric(store, item_id)
        old = get_version(store, version_id)
        if old.rubric_id != row["id"]:
            raise BenchError(f"rubric version id {version_id} belongs to another item, not item {item_id}")
        return _write_version(store, row["id"], old.criteria, author,
                              note or f"restored version {old.version}", row["current_version_id"])
