"""LLM calls for every role: one client, retries, JSON outputs, cache, cost."""

from engine.llm.client import (
    ChatResult,
    JSONOutputError,
    JSONResult,
    LLMClient,
    LLMError,
    Usage,
    cache_key,
    extract_json,
)

__all__ = ["ChatResult", "JSONOutputError", "JSONResult", "LLMClient", "LLMError", "Usage", "cache_key",
           "extract_json"]
