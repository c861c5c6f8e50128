"""What the agent-framework adapters (`scratchpad.langchain`, `scratchpad.openai_agents`)
share, free of any framework: errors as the model reads them, and host calls whose failure
costs only the plugins' contribution. Tool names and the prompt's texts are the host's
(`Host.tool_names`, `Prompt`), decided in Rust once for every runtime."""

from __future__ import annotations

import logging
from typing import Any, Callable

from . import ToolError


def describe(error: BaseException) -> str:
    """An error as the model should read it: a tool's refusal is its message."""
    if isinstance(error, ToolError):
        return getattr(error, "message", None) or str(error)
    return str(error) or type(error).__name__


def quietly(
    logger: logging.Logger, strict: bool, hook: str, method: Callable[..., Any], *args: Any, default: Any = None
) -> Any:
    """A host call whose failure is logged (raised when `strict`): the turn goes on without the
    plugins' contribution."""
    try:
        return method(*args)
    except Exception:
        if strict:
            raise
        logger.exception("scratchpad: %s failed", hook)
        return default
