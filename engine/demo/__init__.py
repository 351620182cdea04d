"""The demo: its documents, topics and the preparation of a demo run; see :mod:`engine.demo.prepare`."""

from engine.demo.prepare import DEMO_BENCH, DEMO_DIR, DEMO_KB, DEMO_TARGETS, default_policy, prepare_demo

__all__ = ["DEMO_BENCH", "DEMO_DIR", "DEMO_KB", "DEMO_TARGETS", "default_policy", "prepare_demo"]
