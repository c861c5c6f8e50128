"""What the agent-framework adapters (`scratchpad.langchain`, `scratchpad.openai_agents`)
share, free of any framework: the plugins' tool names as model APIs accept them, the injections'
texts by placement, errors as the model reads them, and host calls whose failure costs only the
plugins' contribution."""

from __future__ import annotations

import logging
import re
import threading
from typing import Any, Callable, Dict, List, Optional

from . import ToolError

_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def api_tool_name(name: str) -> str:
    """The API-safe form of a plugin's tool name: the major model APIs accept only
    `^[a-zA-Z0-9_-]{1,64}$`, so every other character becomes `_` and the name is cut at 64
    (`session.scratchpad` -> `session_scratchpad`)."""
    return _UNSAFE.sub("_", name)[:64] or "_"


class ToolNames:
    """The plugins' tools under their API-safe names: which plugin tool a name the model used
    stands for, and the injected texts with each tool named as the model is offered it. Two
    tools mapping to one API name: the first one registered keeps it (a warning is logged)."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger
        self._lock = threading.Lock()
        self._specs: Dict[str, Any] = {}  # API-safe name -> the plugins' ToolSpec

    def register(self, spec: Any) -> Optional[str]:
        """Remembers the API-safe name of a plugin tool; None when it collides with another's."""
        name = api_tool_name(spec.name)
        with self._lock:
            known = self._specs.get(name)
            if known is not None and known.name != spec.name:
                self._logger.warning(
                    "scratchpad: tools %r and %r both map to the API name %r; only %r is offered",
                    known.name, spec.name, name, known.name,
                )
                return None
            self._specs[name] = spec
        return name

    def spec(self, name: str) -> Optional[Any]:
        """The plugin tool registered as `name`, if any."""
        with self._lock:
            return self._specs.get(name)

    def in_text(self, text: str) -> str:
        """`text` with each plugin tool's name as the model is offered it (`session.scratchpad`
        as `session_scratchpad`): a whole-word mention only, one pass."""
        with self._lock:
            renamed = {spec.name: name for name, spec in self._specs.items() if spec.name != name}
        if not renamed:
            return text
        names = sorted(renamed, key=len, reverse=True)
        pattern = re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])(?!\.\w)")
        return pattern.sub(lambda m: renamed[m.group(1)], text)


def describe(error: BaseException) -> str:
    """An error as the model should read it: a tool's refusal is its message."""
    if isinstance(error, ToolError):
        return getattr(error, "message", None) or str(error)
    return str(error) or type(error).__name__


def join(parts: List[str]) -> str:
    """Texts joined as `Prompt.render` joins them: by blank lines, empty ones left out."""
    return "\n\n".join(p for p in parts if p)


def placed(injections: list, placement: str) -> str:
    """The texts of one placement, joined as `Prompt.text` joins them."""
    return join([i.text for i in injections if i.placement == placement and i.text])


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
