"""LLM calls for every role: one client, retries, JSON outputs, cache, cost."""

from engine.llm.client import (
    UNUSABLE,
    ChatResult,
    ContextOverflowError,
    JSONOutputError,
    JSONResult,
    LLMClient,
    LLMError,
    Usage,
    cache_key,
    context_in_message,
    extract_json,
    extract_json_all,
    spent,
)

__all__ = ["UNUSABLE", "spent", "ChatResult", "ContextOverflowError", "extract_json_all", "JSONOutputError", "JSONResult", "LLMClient", "LLMError", "Usage", "cache_key",
           "context_in_message", "extract_json"]
