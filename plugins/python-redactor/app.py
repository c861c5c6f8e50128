"""A scratchpad plugin in Python: a secrets redactor for tool arguments.

Before any tool runs (`before-tool-call`, for every plugin's tools and the runtime's own), it
looks through the call's JSON arguments for API keys, tokens and private keys, and either
rewrites each one to a placeholder (`mode = "redact"`, the default) or blocks the call with a
message for the model (`mode = "block"`). It keeps per-session counts in the host's storage,
offers the tool `redactor.stats` to read them, and refuses arguments over a token budget
counted with the host's tokenizer.

Every hook runs in a fresh instance with the host's deadline and memory cap, so this module
keeps nothing in globals between calls: what it remembers lives in `storage`. What the module
sets up at its top level (the compiled patterns) is part of the component's pre-initialised
snapshot, ready in every call for free.

Configuration (the plugin's `[plugin.config]` table; unknown keys and wrong types refuse the
load with one message naming every offender):

| key | default | meaning |
| --- | --- | --- |
| `mode` | `"redact"` | `"redact"` rewrites secrets; `"block"` refuses the call |
| `placeholder` | `"[REDACTED:{kind}]"` | what a secret becomes; `{kind}` is the pattern's name |
| `extraPatterns` | `{}` | more secrets: `{"kind": "regex"}` (Python `re` syntax); the placeholder may use the pattern's groups (`\\1`) |
| `skipTools` | `[]` | tools whose arguments are never inspected |
| `maxArgumentTokens` | `0` (off) | block calls whose arguments exceed this many tokens |
"""

import json
import re

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports.lifecycle import Manifest
from wit_world.exports.view import Content_Items, Section
from wit_world.imports import config, log, storage, tokens
from wit_world.imports.types import (
    Injection,
    Placement,
    SessionSetup,
    ToolError_Failed,
    ToolError_InvalidArguments,
    ToolError_Rejected,
    ToolError_UnknownTool,
    ToolOutput,
    ToolSpec,
)

# Well-known secret shapes, by kind. Anchored on distinctive prefixes so ordinary text is left
# alone; the generic `assignment` pattern catches `api_key=...`-style pairs inside strings.
BUILTIN_PATTERNS = {
    "private-key": r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    "anthropic-key": r"\bsk-ant-[A-Za-z0-9_\-]{20,}",
    "openai-key": r"\bsk-(?:proj-)?[A-Za-z0-9_\-]{20,}",
    "aws-access-key": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    "github-token": r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
    "slack-token": r"\bxox[abprs]-[A-Za-z0-9\-]{10,}",
    "bearer-token": r"(?i)\bbearer\s+[A-Za-z0-9\-._~+/]{20,}=*",
    "assignment": r"(?i)\b(?:api[_-]?key|secret|token|password|passwd)\b\s*[:=]\s*['\"]?[^\s'\"]{8,}",
}

# Compiled here, at module level: componentize-py runs the module's top level once at build
# time and snapshots the initialised interpreter into the component, so every call starts with
# these ready. Compiling them inside a hook would redo it on every call (each call is a fresh
# instance) and cost tens of milliseconds per call; from the snapshot the whole hook takes
# 3.8 ms (p50, third_party_bench).
BUILTIN = {kind: (re.compile(pattern), True) for kind, pattern in BUILTIN_PATTERNS.items()}

STATS_TOOL = "redactor.stats"
DEFAULTS = {
    "mode": "redact",
    "placeholder": "[REDACTED:{kind}]",
    "extraPatterns": {},
    "skipTools": [],
    "maxArgumentTokens": 0,
}


def settings():
    """The configuration with defaults applied; `ValueError` naming every offending key."""
    raw = json.loads(config.get())
    problems = [f"unknown key `{key}`" for key in raw if key not in DEFAULTS]
    merged = {**DEFAULTS, **raw}
    if merged["mode"] not in ("redact", "block"):
        problems.append('`mode` must be "redact" or "block"')
    if not isinstance(merged["placeholder"], str):
        problems.append("`placeholder` must be a string")
    extra = merged["extraPatterns"]
    if not isinstance(extra, dict):
        problems.append("`extraPatterns` must be a table of kind = regex")
        extra = {}
    for kind, pattern in extra.items():
        try:
            re.compile(pattern)
        except (TypeError, re.error) as error:
            problems.append(f"`extraPatterns.{kind}` is not a regex: {error}")
    skip = merged["skipTools"]
    if not isinstance(skip, list) or not all(isinstance(name, str) for name in skip):
        problems.append("`skipTools` must be a list of tool names")
    budget = merged["maxArgumentTokens"]
    if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
        problems.append("`maxArgumentTokens` must be a non-negative integer")
    if problems:
        raise ValueError("python-redactor config: " + "; ".join(problems))
    return merged


def count_key(kind):
    return f"count/{kind}"


def record(kind):
    """Adds one to this session's count of `kind`."""
    key = count_key(kind)
    previous = storage.get(key)
    storage.set(key, str(int(previous or b"0") + 1).encode())


def redact_text(text, patterns, placeholder, found):
    """`text` with every secret replaced; appends each secret's kind to `found`."""
    for kind, (regex, builtin) in patterns.items():
        def replace(match, kind=kind, builtin=builtin):
            found.append(kind)
            if builtin:
                return placeholder.replace("{kind}", kind)
            # A configured pattern's placeholder may refer to its groups, as in `re.sub`.
            return match.expand(placeholder.replace("{kind}", kind))

        text = regex.sub(replace, text)
    return text


def redact_value(value, patterns, placeholder, found):
    """`value` (parsed JSON) with every string, key or value, redacted."""
    if isinstance(value, str):
        return redact_text(value, patterns, placeholder, found)
    if isinstance(value, list):
        return [redact_value(item, patterns, placeholder, found) for item in value]
    if isinstance(value, dict):
        return {
            redact_text(key, patterns, placeholder, found): redact_value(item, patterns, placeholder, found)
            for key, item in value.items()
        }
    return value


class Permissions(exports.Permissions):
    def requested(self):
        """The powers it asks for: its guidance, reading every tool's arguments, rewriting or
        blocking the call, its counts in storage, and the tokenizer, log and configuration."""
        return [
            "guidance",
            "read-tool-traffic",
            "rewrite-tool-calls",
            "block-tool-calls",
            "storage",
            "tokens",
            "log",
            "config",
        ]


class View(exports.View):
    def describe(self):
        """What it has redacted in this session, by kind (the host's viewer shows it); nothing
        is written. No section before the first redaction."""
        counts = [(key.removeprefix("count/"), int(storage.get(key) or b"0")) for key in storage.keys("count/")]
        if not counts:
            return []
        items = [f"{kind}: {count}" for kind, count in counts]
        total = sum(count for _, count in counts)
        return [Section("Secrets redacted", "redactions", Content_Items(items), f"{total} redacted")]


class Lifecycle(exports.Lifecycle):
    def load(self):
        try:
            settings()
        except ValueError as error:
            raise Err(str(error))
        parameters = {"type": "object", "properties": {}, "additionalProperties": False}
        description = "How many secrets were redacted from tool arguments in this session, by kind."
        return Manifest(tools=[ToolSpec(STATS_TOOL, description, json.dumps(parameters))])


class Hooks(exports.Hooks):
    def before_session_create(self, session):
        guidance = (
            "[Redactor] Secrets (API keys, tokens, private keys) in tool arguments are replaced "
            "with placeholders before the tool runs. Refer to credentials by name, never by value."
        )
        return SessionSetup([Injection(Placement.APPEND_SYSTEM, guidance)], False)

    def before_query(self, turn, message):
        return []

    def after_response(self, turn, text):
        pass

    def before_tool_call(self, turn, call):
        conf = settings()
        if call.name in conf["skipTools"]:
            return None
        budget = conf["maxArgumentTokens"]
        if budget and tokens.count(call.arguments) > budget:
            used = tokens.count(call.arguments)
            message = f"The arguments of `{call.name}` are {used} tokens, over the redactor's limit of {budget}."
            raise Err(ToolError_Rejected(message))
        try:
            arguments = json.loads(call.arguments)
        except ValueError:
            return None  # not JSON: the tool itself will refuse it
        placeholder = conf["placeholder"]

        # Built-in patterns first, counted as found: the counts are this plugin's state.
        found = []
        arguments = redact_value(arguments, BUILTIN, placeholder, found)
        for kind in found:
            record(kind)
        # Then the configured ones, which are the operator's regexes and replacement
        # templates: a catastrophic regex runs into the host's deadline, an exploding
        # replacement into its memory cap, a bad group reference raises; in each case the
        # host discards this call's writes (the counts above) and reports the failure.
        extra = {kind: (re.compile(p), False) for kind, p in conf["extraPatterns"].items()}
        extra_found = []
        arguments = redact_value(arguments, extra, placeholder, extra_found)
        for kind in extra_found:
            record(kind)
        found += extra_found

        if not found:
            return None
        kinds = ", ".join(sorted(set(found)))
        log.log(log.Level.INFO, f"{len(found)} secret(s) in `{call.name}` arguments: {kinds}")
        if conf["mode"] == "block":
            message = (
                f"Blocked: the arguments of `{call.name}` contain secrets ({kinds}). "
                "Pass a reference to the credential (an environment variable's name) instead."
            )
            raise Err(ToolError_Rejected(message))
        return json.dumps(arguments)

    def after_tool_result(self, turn, call, observation):
        return None

    def before_compaction(self, turn):
        return None

    def after_compaction(self, turn):
        pass


class Tools(exports.Tools):
    def list_tools(self, turn):
        return Lifecycle().load().tools

    def call_tool(self, turn, name, arguments):
        if name != STATS_TOOL:
            raise Err(ToolError_UnknownTool(f"python-redactor has no tool `{name}`"))
        try:
            parsed = json.loads(arguments or "{}")
        except ValueError as error:
            raise Err(ToolError_InvalidArguments(f"arguments are not JSON: {error}"))
        if not isinstance(parsed, dict) or parsed:
            raise Err(ToolError_InvalidArguments("`redactor.stats` takes no arguments: pass {}"))
        counts = {}
        for key in storage.keys("count/"):
            value = storage.get(key)
            if value is None:
                raise Err(ToolError_Failed(f"`{key}` vanished while reading"))
            counts[key.removeprefix("count/")] = int(value)
        total = sum(counts.values())
        return ToolOutput(json.dumps({"total": total, "byKind": counts, "encoding": tokens.encoding()}))
