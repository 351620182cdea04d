"""Run numpy's BLAS on one thread while training.

The policy's networks are tiny (64 hidden units, minibatches of a few hundred rows): a multi-threaded
BLAS only adds synchronisation, and on a busy 2-core machine it made PPO about eight times slower
(measured: 2.8 s with one thread, 21.6 s with two, for the same 50 000 steps). ``OPENBLAS_NUM_THREADS``
only works before numpy is imported, which the CLI cannot guarantee, so this module asks the loaded
OpenBLAS library directly (what ``threadpoolctl`` does, without the extra dependency). With another
BLAS (MKL, Accelerate) nothing is changed. Results are the same either way: one thread only changes
the speed (checked bit for bit on this machine).
"""

from __future__ import annotations

import ctypes
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy  # noqa: F401  (loads the BLAS library this module controls)

_SETTERS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
            "openblas_set_num_threads64_", "openblas_set_num_threads")
_GETTERS = ("scipy_openblas_get_num_threads64_", "scipy_openblas_get_num_threads",
            "openblas_get_num_threads64_", "openblas_get_num_threads")


def _openblas_libraries() -> list[str]:
    paths: set[str] = set()
    maps = Path("/proc/self/maps")
    if maps.is_file():
        for line in maps.read_text(errors="replace").splitlines():
            parts = line.split()
            if len(parts) >= 6 and "openblas" in Path(parts[-1]).name.lower():
                paths.add(parts[-1])
    return sorted(paths)


def _controls() -> list[tuple[object, object]]:
    found = []
    for path in _openblas_libraries():
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        setter = next((getattr(lib, n) for n in _SETTERS if hasattr(lib, n)), None)
        getter = next((getattr(lib, n) for n in _GETTERS if hasattr(lib, n)), None)
        if setter is not None and getter is not None:
            found.append((setter, getter))
    return found


@contextmanager
def single_thread_blas() -> Iterator[None]:
    """Limit OpenBLAS to one thread inside the block and restore the previous setting after."""
    controls = _controls()
    previous = [int(getter()) for _, getter in controls]
    for setter, _ in controls:
        setter(1)
    try:
        yield
    finally:
        for (setter, _), count in zip(controls, previous, strict=True):
            setter(count)
