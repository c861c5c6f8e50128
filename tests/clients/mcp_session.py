"""`scratchpad mcp` driven by the official MCP Python SDK over stdio:
initialize -> tools/list -> tools/call -> resources/read.

Usage: python3 mcp_session.py PATH/TO/scratchpad DB_PATH
"""

import asyncio
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from support import env_for


async def main(binary, db):
    env = env_for(os.path.dirname(db))
    server = StdioServerParameters(command=binary, args=["--db", db, "mcp", "--session", "mcp-py"], env=env)
    checks = 0
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            assert init.serverInfo.name == "scratchpad", init
            assert "session.scratchpad" in (init.instructions or ""), init.instructions
            checks += 1

            tools = await session.list_tools()
            names = [t.name for t in tools.tools]
            assert "session.scratchpad" in names, names
            schema = next(t for t in tools.tools if t.name == "session.scratchpad").inputSchema
            assert schema.get("type") == "object", schema
            checks += 1

            result = await session.call_tool("session.scratchpad", {"action": "set_plan", "content": "1. speak MCP"})
            assert not result.isError, result
            assert "plan" in result.content[0].text.lower(), result
            await session.call_tool("session.scratchpad", {"action": "refs.add", "ref": "docs/protocol.md"})
            refused = await session.call_tool("session.scratchpad", {"action": "refs.remove", "ref": "missing"})
            assert refused.isError and "not-found" in refused.content[0].text, refused
            checks += 1

            resources = await session.list_resources()
            uris = [str(r.uri) for r in resources.resources]
            assert uris == ["scratchpad://session/mcp-py"], uris
            contents = await session.read_resource("scratchpad://session/mcp-py")
            text = contents.contents[0].text
            assert "## Plan\n1. speak MCP" in text and "- docs/protocol.md" in text, text
            checks += 1
    print(f"{checks} passed, 0 failed")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
