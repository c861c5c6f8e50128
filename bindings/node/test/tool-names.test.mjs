// Tool names as model APIs accept them, from the host's one implementation in Rust: the shared
// vectors (tests/embed/vectors/tool_names.json, SCRATCHPAD_TOOL_NAME_VECTORS; also answered by
// the Rust host and the Python wheel) through `apiToolName` and `ToolNames`, and the host's own
// names (`Host.toolNames`, a tool's `apiName`, calls by the API name, `Prompt.naming`).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { Host, Prompt, ToolNames, apiToolName } from '@scratchpad-dev/host';

const vectors = JSON.parse(readFileSync(process.env.SCRATCHPAD_TOOL_NAME_VECTORS, 'utf8'));

test('every API-name vector is answered exactly', () => {
  for (const c of vectors.api_names) {
    if (c.error) assert.throws(() => apiToolName(c.name), /empty/, JSON.stringify(c));
    else assert.equal(apiToolName(c.name), c.api_name, JSON.stringify(c.name));
  }
});

test('every tool-set vector is answered exactly', () => {
  for (const c of vectors.sets) {
    if (c.error === 'collision') {
      assert.throws(
        () => new ToolNames(c.tools, c.prefix),
        (error) => c.naming.every((name) => error.message.includes(`\`${name}\``)),
      );
      continue;
    }
    if (c.error === 'empty') {
      assert.throws(() => new ToolNames(c.tools, c.prefix), /empty/);
      continue;
    }
    const names = new ToolNames(c.tools, c.prefix);
    assert.deepEqual(Object.fromEntries(names.items()), c.names);
    for (const [tool, seen] of Object.entries(c.names)) {
      assert.equal(names.modelName(tool), seen);
      assert.equal(names.tool(seen), tool);
    }
    for (const t of c.texts) assert.equal(names.rewrite(t.in), t.out, JSON.stringify(t.in));
  }
});

test('the host names its tools for the model and takes either name', async () => {
  const host = await Host.open(join(mkdtempSync(join(tmpdir(), 'scratchpad-names-')), 'agent.db'));
  try {
    await host.createSession('s');
    const turn = { sessionId: 's', turnId: 't1' };
    const spec = (await host.tools(turn)).find((t) => t.name === 'session.scratchpad');
    assert.equal(spec.apiName, 'session_scratchpad');
    await host.callTool(turn, 'session_scratchpad', { action: 'set_plan', content: '1. by API name' });
    const prompt = await host.beforeQuery({ sessionId: 's', turnId: 't2' }, 'go');
    assert.ok(prompt.render('', 'go').user.includes('1. by API name'));
    const named = prompt.naming(host.toolNames());
    assert.ok(named.injections.every((i) => !i.text.includes('session.scratchpad')));
    assert.ok(named.injections.some((i) => i.text.includes('session_scratchpad')));
    assert.equal(host.toolNames('mcp__x__').modelName('session.scratchpad'), 'mcp__x__session_scratchpad');
    const joined = new Prompt([
      { plugin: 'p', placement: 'append-context', text: 'after' },
      { plugin: 'p', placement: 'append-system', text: 'guidance' },
    ]);
    assert.equal(joined.renderSystemOnly('You are helpful.'), 'You are helpful.\n\nguidance\n\nafter');
  } finally {
    host.close();
  }
});
