"""How tests compare numbers that ONNX or numpy computed in floating point (issue 27).

onnxruntime picks its kernels by the CPU's features (the int8 encoder takes VNNI kernels where the CPU
has them, and the optimised graph saved under a data home is keyed by them), and with graph optimisations
off it runs yet other kernels (``VIVA_ORT_OPTIMIZE=0``, which ``.ci/run`` sets for a second run of the
float-sensitive tests). So the last bits of an embedding differ from one machine or path to the next: seen
so far, up to 1.2e-7 in a cosine or a policy state. A test that compares such a number with one recorded
elsewhere, or computed by another path, compares it within :data:`FLOAT_ABS`; texts, ids, counts, flags and
verdicts are compared exactly.

The tolerance, and why it still catches what these tests exist for:

- :data:`FLOAT_ABS` = 1e-5 for an unrounded value: 80 times the largest difference seen between two CPUs
  or paths, while a real change (another text embedded, another model, another rule) moves a cosine by
  1e-3 or more and a score by at least one criterion's weight (>= 1e-2).
- The engine rounds some values to 4 decimals before storing them (the offline judge's ``score`` and
  ``support``, :mod:`engine.judge.freetext`): a difference of 1e-7 before rounding can move such a value
  by one unit of the 4th decimal. Two values that both have at most 4 decimals may therefore differ by
  :data:`ROUNDED_ABS` = 1e-4 (plus a float's rounding slack).
"""

from __future__ import annotations

from typing import Any

FLOAT_ABS = 1e-5
"""Largest difference allowed between two unrounded floats (see the module docstring)."""
ROUNDED_ABS = 1e-4 + 1e-9
"""Largest difference allowed between two floats that both have at most 4 decimals."""


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _four_decimals(x: float) -> bool:
    return abs(round(x, 4) - x) < 1e-12


def floats_close(a: float, b: float) -> bool:
    """Whether two floats are equal within the documented tolerance (:data:`FLOAT_ABS`, or
    :data:`ROUNDED_ABS` when both have at most 4 decimals)."""
    if a == b:
        return True
    limit = ROUNDED_ABS if _four_decimals(a) and _four_decimals(b) else FLOAT_ABS
    return abs(a - b) <= limit


def differences(now: Any, then: Any, path: str = "$", tol: float | None = None) -> list[str]:
    """Where two JSON-like values differ: floats beyond the tolerance (:func:`floats_close`, or ``tol``
    when given), anything else (texts, ints, bools, None, keys, list lengths) at all. Returns one line
    per difference."""
    if _is_number(now) and _is_number(then) and (isinstance(now, float) or isinstance(then, float)):
        close = floats_close(float(now), float(then)) if tol is None else abs(float(now) - float(then)) <= tol
        return [] if close else [f"{path}: {now!r} != {then!r}"]
    if isinstance(now, dict) and isinstance(then, dict):
        out = [f"{path}: key {k!r} only in {'now' if k in now else 'then'}" for k in sorted(set(now) ^ set(then), key=str)]
        for k in now:
            if k in then:
                out += differences(now[k], then[k], f"{path}.{k}", tol)
        return out
    if isinstance(now, list | tuple) and isinstance(then, list | tuple):
        if len(now) != len(then):
            return [f"{path}: {len(now)} items != {len(then)}"]
        out = []
        for i, (a, b) in enumerate(zip(now, then, strict=True)):
            out += differences(a, b, f"{path}[{i}]", tol)
        return out
    if type(now) is not type(then) or now != then:  # bool vs int, str vs None: exact
        return [f"{path}: {now!r} != {then!r}"]
    return []


def assert_same(now: Any, then: Any, tol: float | None = None) -> None:
    """Assert two JSON-like values are the same: floats within the tolerance (or ``tol``), the rest
    exactly."""
    found = differences(now, then, tol=tol)
    assert not found, "\n".join(found[:20]) + (f"\n... and {len(found) - 20} more" if len(found) > 20 else "")
