"""TaskWeaver auto-eval cases -> ``task`` items.

A case is a folder holding exactly one ``*.yaml`` with ``task_description`` and
``scoring_points: [{score_point, weight, eval_code?}]``, plus optional ``version``, ``app_dir``,
``config_var``, ``dependencies``, ``data_files``, ``pre_command``, ``verbose`` and ``max_rounds``.
The importer takes a folder of case folders (or one case folder). A scoring point with
``eval_code`` becomes a criterion of kind ``code``; data files are copied to
``HOME/benchmarks/<name>/<case>/``: ``meta.case_dir`` names the case sub-folder and
``meta.data_dir`` is that folder relative to the data home (absent when the case has no files).

In upstream TaskWeaver, ``eval_code`` runs with ``chat_history`` bound to a list of langchain
messages: ``SystemMessage`` (the examiner's instructions), ``HumanMessage`` (messages the examiner
received: the kick-off and the agent's replies) and ``AIMessage`` (the examiner's messages). The
free names each snippet uses are recorded in ``meta.eval_code_names`` so that the sandbox can
check it provides them.
"""

from __future__ import annotations

import ast
import builtins
import shutil
from pathlib import Path
from typing import Any

import yaml

from engine.bench.importers.base import (
    ImportFormatError,
    ImportSummary,
    ItemDraft,
    check_regular_file,
    copy_regular_file,
    default_name,
    expected,
    read_text,
    write_benchmark,
)
from engine.bench.items import benchmark_dir, data_dir_of, ensure_free_name
from engine.bench.model import Criterion
from engine.bench.rubric import check_eval_code
from engine.store import Store

DEFAULT_MAX_ROUNDS = 15
"""TaskWeaver's ``virtual_user.max_rounds`` default, used when a case does not set ``max_rounds``."""

_KNOWN = {"version", "app_dir", "config_var", "dependencies", "data_files", "pre_command", "verbose",
          "task_description", "scoring_points", "max_rounds"}
_LANGCHAIN_NAMES = {"HumanMessage", "AIMessage", "SystemMessage"}


def free_names(code: str) -> list[str]:
    """Names a snippet reads but never binds (and that are not builtins), sorted."""
    tree = ast.parse(code)
    bound: set[str] = set()
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (used if isinstance(node.ctx, ast.Load) else bound).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return sorted(used - bound - set(dir(builtins)))


def _case_files(root: Path) -> list[tuple[str, Path]]:
    """(case name, yaml path) for a folder of cases or a single case folder."""
    if not root.exists():
        raise ImportFormatError(root, "", "folder not found")
    if not root.is_dir():
        raise ImportFormatError(root, "", "expected a folder of TaskWeaver case folders (or one case folder)")

    def yamls(folder: Path) -> list[Path]:
        return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix in (".yaml", ".yml"))

    own = yamls(root)
    if own:
        if len(own) > 1:
            raise ImportFormatError(root, "", f"a case folder must hold exactly one *.yaml case file, found "
                                              f"{len(own)}: {', '.join(p.name for p in own)}")
        return [(root.name, own[0])]
    cases = []
    for folder in sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
        found = yamls(folder)
        if len(found) != 1:
            raise ImportFormatError(folder, "", f"a case folder must hold exactly one *.yaml case file, found "
                                                f"{len(found)}" + (f": {', '.join(p.name for p in found)}"
                                                                   if found else ""))
        cases.append((folder.name, found[0]))
    if not cases:
        raise ImportFormatError(root, "", "no case folders found (each needs one *.yaml file)")
    return cases


def _load_yaml(file: Path) -> dict[str, Any]:
    from engine.config import DuplicateKeyError, StrictLoader
    from engine.safeload import load_yaml

    text = read_text(file)
    try:
        data = load_yaml(text, StrictLoader)  # depth and alias expansion capped
    except DuplicateKeyError as exc:
        raise ImportFormatError(file, f"line {exc.line}", str(exc)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else ""
        raise ImportFormatError(file, where, f"not valid YAML ({getattr(exc, 'problem', exc)})") from None
    if not isinstance(data, dict):
        raise ImportFormatError(file, "", f"expected a mapping of case fields, got {type(data).__name__}")
    return data


def parse_case(case: str, file: Path, default_max_rounds: int = DEFAULT_MAX_ROUNDS) -> tuple[ItemDraft, list[str]]:
    """Validate one case file and turn it into an item draft.

    Returns:
        The draft and the data files it lists that are missing from the case folder.

    Raises:
        ImportFormatError: naming the file and the field (``scoring_points[1].weight``).
    """
    data = _load_yaml(file)
    task = data.get("task_description")
    if not isinstance(task, str) or not task.strip():
        raise ImportFormatError(file, "", expected("task_description", "a non-empty string", task))
    points = data.get("scoring_points")
    if not isinstance(points, list) or not points:
        raise ImportFormatError(file, "", expected("scoring_points", "a non-empty list of "
                                                   "{score_point, weight, eval_code?}", points))
    criteria: list[Criterion] = []
    code_names: dict[str, list[str]] = {}
    for i, sp in enumerate(points):
        f = f"scoring_points[{i}]"
        if not isinstance(sp, dict):
            raise ImportFormatError(file, "", expected(f, "a mapping with score_point and weight", sp))
        text = sp.get("score_point")
        if not isinstance(text, str) or not text.strip():
            raise ImportFormatError(file, "", expected(f"{f}.score_point", "a non-empty string", text))
        weight = sp.get("weight", 1)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight <= 0:
            raise ImportFormatError(file, "", expected(f"{f}.weight", "a number > 0", weight))
        code = sp.get("eval_code")
        if code is not None:
            if not isinstance(code, str):
                raise ImportFormatError(file, "", expected(f"{f}.eval_code", "Python code or null", code))
            try:
                check_eval_code(code, f"field '{f}.eval_code'")
            except Exception as exc:
                raise ImportFormatError(file, "", str(exc)) from None
            code_names[str(i)] = free_names(code)
        unknown = set(sp) - {"score_point", "weight", "eval_code"}
        if unknown:
            raise ImportFormatError(file, "", f"field '{f}': unknown key(s) {', '.join(sorted(unknown))} "
                                              "(expected score_point, weight, eval_code)")
        criteria.append(Criterion.new(text.strip(), kind="code" if code else "point", weight=float(weight),
                                      eval_code=code or None))
    max_rounds = data.get("max_rounds")
    if max_rounds is not None and (isinstance(max_rounds, bool) or not isinstance(max_rounds, int) or max_rounds < 1):
        raise ImportFormatError(file, "", expected("max_rounds", "a positive integer", max_rounds))
    config_var = data.get("config_var")
    if config_var is not None and not isinstance(config_var, dict):
        raise ImportFormatError(file, "", expected("config_var", "a mapping of config keys to values", config_var))
    deps = data.get("dependencies") or []
    if not isinstance(deps, list) or not all(isinstance(d, str) for d in deps):
        raise ImportFormatError(file, "", expected("dependencies", "a list of package names", deps))
    data_files = data.get("data_files") or []
    if not isinstance(data_files, list) or not all(isinstance(d, str) and d.strip() for d in data_files):
        raise ImportFormatError(file, "", expected("data_files", "a list of file names", data_files))
    for d in data_files:
        if Path(d).is_absolute() or ".." in Path(d).parts:
            raise ImportFormatError(file, "", expected("data_files", "paths inside the case folder", d))
    missing = [d for d in data_files if not (file.parent / d).is_file()]
    meta: dict[str, Any] = {
        "case": case,
        "case_file": file.name,
        "case_dir": case,
        "version": data.get("version"),
        "app_dir": data.get("app_dir"),
        "config_var": config_var or {},
        "dependencies": deps,
        "data_files": data_files,
        "missing_data_files": missing,
        "pre_command": data.get("pre_command"),
        "verbose": data.get("verbose"),
        "max_rounds": max_rounds or default_max_rounds,
        "max_rounds_source": "case" if max_rounds else "default",
    }
    if code_names:
        meta["eval_code_names"] = code_names
        meta["eval_code_langchain_names"] = sorted(
            {n for names in code_names.values() for n in names} & _LANGCHAIN_NAMES)
    extra = {k: v for k, v in data.items() if k not in _KNOWN}
    if extra:
        meta["extra"] = extra
    draft = ItemDraft(protocol="task", question=task.strip(), criteria=list(criteria), ext_id=case, meta=meta,
                      rubric_note="TaskWeaver scoring_points")
    return draft.validate(file, ""), missing


def import_taskweaver(store: Store, home: str | Path, path: str | Path, name: str | None = None,
                      default_max_rounds: int = DEFAULT_MAX_ROUNDS) -> ImportSummary:
    """Import TaskWeaver case folders as a benchmark of ``task`` items.

    Args:
        store: the store.
        home: the data home; data files are copied under ``home/benchmarks/<name>/<case>/``.
        path: a folder of case folders, or one case folder.
        name: the benchmark name (default ``taskweaver-<folder name>``).
        default_max_rounds: rounds allowed when a case sets no ``max_rounds``.

    Returns:
        The summary (missing data files and eval_code that needs langchain names are warnings).

    Raises:
        ImportFormatError: a case is malformed (nothing is written or copied).
        BenchError: the name is taken.
    """
    root = Path(path)
    name = ensure_free_name(store, name or default_name("taskweaver", root))
    drafts: list[ItemDraft] = []
    warnings: list[str] = []
    copies: list[tuple[Path, Path]] = []
    dest_root = benchmark_dir(home, name)
    for case, file in _case_files(root):
        draft, missing = parse_case(case, file, default_max_rounds)
        for m in missing:
            warnings.append(f"{case}: data file {m!r} listed in {file.name} is not in {file.parent}; "
                            "the task will run without it")
        if draft.meta.get("eval_code_langchain_names"):
            warnings.append(f"{case}: eval_code uses langchain's {', '.join(draft.meta['eval_code_langchain_names'])}"
                            " (upstream's chat_history objects); the eval_code sandbox must provide equivalents")
        present = [d for d in draft.meta["data_files"] if d not in missing]
        for d in present:
            check_regular_file(file.parent, d, file)
            copies.append((file.parent / d, dest_root / case / d))
        if present:
            draft.meta["data_dir"] = data_dir_of(name, case)
        drafts.append(draft)
    if dest_root.exists() and any(dest_root.iterdir()):
        raise ImportFormatError(dest_root, "", "the benchmark's data folder already exists and is not empty; "
                                               "choose another --name or remove it")
    try:
        for src, dst in copies:
            dst.parent.mkdir(parents=True, exist_ok=True)
            copy_regular_file(src, dst)
        ids = write_benchmark(store, name, "taskweaver", drafts,
                              meta={"path": str(root.resolve()), "default_max_rounds": default_max_rounds})
    except BaseException:
        shutil.rmtree(dest_root, ignore_errors=True)
        raise
    return ImportSummary(
        benchmark=name, source="taskweaver", path=str(root), imported=len(ids), warnings=warnings, item_ids=ids,
        counts={
            "scoring points": sum(len(d.criteria) for d in drafts),
            "eval_code points": sum(1 for d in drafts for c in d.criteria if c.kind == "code"),
            "data files copied": len(copies),
            "data files missing": sum(len(d.meta["missing_data_files"]) for d in drafts),
            "data folder": str(dest_root) if copies else "(none)",
        },
    )
