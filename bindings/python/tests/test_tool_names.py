"""Tool names as model APIs accept them, from the host's one implementation in Rust: the shared
vectors (`tests/embed/vectors/tool_names.json`, also answered by the Rust host and the Node
package) through `scratchpad.api_tool_name` and `scratchpad.ToolNames`, and the host's own
names (`Host.tool_names`, `ToolSpec.api_name`, calls by the API name, `Prompt.naming`)."""

import json
import pathlib

import pytest

from scratchpad import Prompt, ToolNames, Turn, api_tool_name

VECTORS = json.loads(
    (pathlib.Path(__file__).resolve().parents[3] / "tests/embed/vectors/tool_names.json").read_text("utf-8")
)


@pytest.mark.parametrize("case", VECTORS["api_names"], ids=lambda c: repr(c["name"][:20]))
def test_an_api_name_vector(case):
    if "error" in case:
        with pytest.raises(ValueError, match="empty"):
            api_tool_name(case["name"])
    else:
        assert api_tool_name(case["name"]) == case["api_name"]


@pytest.mark.parametrize("case", VECTORS["sets"], ids=lambda c: f"{c['tools']}{c['prefix'][:8]}")
def test_a_tool_set_vector(case):
    if case.get("error") == "collision":
        with pytest.raises(ValueError) as raised:
            ToolNames(case["tools"], case["prefix"])
        for name in case["naming"]:
            assert f"`{name}`" in str(raised.value)
        return
    if case.get("error") == "empty":
        with pytest.raises(ValueError, match="empty"):
            ToolNames(case["tools"], case["prefix"])
        return
    names = ToolNames(case["tools"], case["prefix"])
    assert dict(names.items()) == case["names"]
    for tool, seen in case["names"].items():
        assert names.model_name(tool) == seen
        assert names.tool(seen) == tool
    for text in case["texts"]:
        assert names.rewrite(text["in"]) == text["out"], text["in"]


def test_the_host_names_its_tools_for_the_model_and_takes_either_name(host):
    host.create_session("s")
    turn = Turn("s", "t1")
    spec = next(t for t in host.tools(turn) if t.name == "session.scratchpad")
    assert spec.api_name == "session_scratchpad"
    assert host.call_tool(turn, "session_scratchpad", {"action": "set_plan", "content": "1. by API name"})
    prompt = host.before_query(Turn("s", "t2"), "go")
    assert "1. by API name" in prompt.render("", "go")[1]
    named = prompt.naming(host.tool_names())
    assert all("session.scratchpad" not in i.text for i in named.injections)
    assert any("session_scratchpad" in i.text for i in named.injections)
    assert host.tool_names("mcp__x__").model_name("session.scratchpad") == "mcp__x__session_scratchpad"


def test_a_prompt_is_joined_and_rendered_by_the_host_rules():
    from scratchpad import Injection

    prompt = Prompt([
        Injection("p", "append-context", "after"),
        Injection("p", "prepend-context", "[block]"),
        Injection("p", "append-system", "guidance"),
        Injection("p", "prepend-context", ""),
    ])
    assert prompt.text("prepend-context") == "[block]"
    assert prompt.render("You are helpful.", "go") == ("You are helpful.\n\nguidance", "[block]\n\ngo\n\nafter")
    assert prompt.render_system_only("You are helpful.") == "You are helpful.\n\nguidance\n\n[block]\n\nafter"
    with pytest.raises(ValueError, match="placement"):
        prompt.text("sideways")
