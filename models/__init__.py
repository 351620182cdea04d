"""Files shipped with viva: the trained policy (policy.onnx + policy.json) and model cards."""

from pathlib import Path

MODELS_DIR = Path(__file__).resolve().parent


def model_file(name: str) -> Path:
    """Path of a file shipped in the ``models`` package (it may not exist yet)."""
    return MODELS_DIR / name
