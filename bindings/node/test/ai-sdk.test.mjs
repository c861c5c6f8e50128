// @scratchpad-dev/host/ai-sdk in real AI SDK agent loops (`ai` 7, `generateText` and
// `streamText` with tools over several steps) against a scripted OpenAI-compatible Chat
// Completions server on loopback (tests/scripted/chat.py, SCRATCHPAD_SCRIPTED_CHAT), reached
// through `@ai-sdk/openai-compatible`: the real wire. The model saves a plan with the
// scratchpad tool, reads the large-observation store's 89 KB reference log through a tool of the caller's (offloaded: the
// model sees the synthetic observation), reads line 2096 back with `scratchpad_read`, and
// makes a call a plugin blocks.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before, test } from 'node:test';

import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, isStepCount, jsonSchema, streamText, tool } from 'ai';
import { Host } from '@scratchpad-dev/host';
import { Scratchpad, apiToolName } from '@scratchpad-dev/host/ai-sdk';

const MARKER = 'AISDK-PLAN-9';
const BLOCK = '[Session Scratchpad';

/** The large-observation store's reference log: exactly 89,042 bytes, its last line the one to find. */
function bigLog() {
  const pad = (n) => String(n).padStart(2, '0');
  let log = '';
  for (let i = 0; i < 2095; i++) {
    const t = 10 * 3600 + i + 1;
    const level = i % 100 === 50 ? 'ERROR' : 'INFO';
    log += `${level} 2026-04-26 ${pad(Math.floor(t / 3600))}:${pad(Math.floor(t / 60) % 60)}:${pad(t % 60)} event number ${i}\n`;
  }
  log += 'ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT\n';
  assert.equal(log.length, 89_042);
  return log;
}

// The first rule whose `when` is in the last turn's text (the user's message, or the tool
// results since the model's last reply) answers.
const SCRIPT = {
  rules: [
    { when: '"match_count"', reply: [{ tool_use: { name: 'echo', input: { text: '{{step9.content}}' } } }] },
    {
      when: 'Large observation saved',
      capture: '"scratchpad_id":"([0-9a-f]+)"',
      reply: [{ tool_use: { name: 'scratchpad_read', input: { scratchpad_id: '$1', mode: 'grep', pattern: 'LAST_CRITICAL_EVENT' } } }],
    },
    { when: 'Plan set.', reply: [{ tool_use: { name: 'read_log', input: { path: '/var/log/app.log' } } }] },
    { when: 'has not run yet', reply: [{ text: 'AISDK-DONE: the last line is LAST_CRITICAL_EVENT.' }] },
    {
      when: 'AISDK-START',
      reply: [{ tool_use: { name: 'session_scratchpad', input: { action: 'set_plan', content: `1. ${MARKER}: read the log\n2. report` } } }],
    },
    { when: 'AISDK-STREAM', reply: [{ text: 'AISDK-STREAMED' }] },
  ],
};

let server;
let requestsFile;
let baseURL;

before(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'scratchpad-ai-sdk-'));
  const script = join(dir, 'script.json');
  requestsFile = join(dir, 'requests.jsonl');
  writeFileSync(script, JSON.stringify(SCRIPT));
  writeFileSync(requestsFile, '');
  server = spawn('python3', [process.env.SCRATCHPAD_SCRIPTED_CHAT, script, requestsFile], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [port] = await new Promise((resolve, reject) => {
    server.on('error', reject);
    createInterface({ input: server.stdout }).once('line', (line) => resolve([line.trim()]));
  });
  baseURL = `http://127.0.0.1:${port}/v1`;
});

after(() => server?.kill());

function requests() {
  return readFileSync(requestsFile, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

function model() {
  return createOpenAICompatible({ name: 'scripted', baseURL, apiKey: 'test' }).chatModel('scripted-model');
}

/** The text of a Chat Completions message's content. */
function text(message) {
  if (typeof message.content === 'string') return message.content;
  return (message.content ?? []).map((part) => part.text ?? '').join('\n');
}

const offered = (request) => (request.tools ?? []).map((t) => t.function.name);

test('generateText: plan, offload, read-back and a blocked call through the middleware', async () => {
  const host = await Host.open(join(mkdtempSync(join(tmpdir(), 'scratchpad-ai-sdk-')), 'agent.db'));
  const scratchpad = new Scratchpad(host, { sessionId: 'chat-1', project: 'acme/ai-sdk', strict: true });
  const ran = [];
  const read_log = tool({
    description: 'Reads a log file.',
    inputSchema: jsonSchema({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }),
    execute: async ({ path }) => {
      ran.push(['read_log', path]);
      return bigLog();
    },
  });
  const echo = tool({
    description: 'Echoes its text.',
    inputSchema: jsonSchema({ type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }),
    execute: async ({ text: t }) => {
      ran.push(['echo', t]);
      return `echo: ${t}`;
    },
  });
  const turn = await scratchpad.turn({ tools: { read_log, echo } });
  const messages = [{ role: 'user', content: 'AISDK-START: find the last critical event' }];
  const before = JSON.stringify(messages);
  const result = await generateText({
    model: turn.model(model()),
    system: 'You are a careful agent.',
    tools: turn.tools,
    messages,
    stopWhen: isStepCount(8),
  });
  await turn.finish(result.text);

  assert.equal(result.text, 'AISDK-DONE: the last line is LAST_CRITICAL_EVENT.');
  const sent = requests();
  assert.equal(sent.length, 5, 'five model calls: plan, log, read, blocked echo, answer');

  // Injected on every call, never persisted.
  for (const request of sent) {
    const system = request.messages.find((m) => m.role === 'system');
    assert.ok(system && text(system).startsWith('You are a careful agent.'), 'the caller’s system prompt first');
    assert.equal(text(system).split('## Session Scratchpad').length, 2, 'the guidance once');
    assert.ok(text(system).includes('session_scratchpad'), 'tools named as the model is offered them');
  }
  const user = (request) => text(request.messages.find((m) => m.role === 'user'));
  assert.ok(!user(sent[0]).includes(MARKER), 'no plan before it was set');
  for (const request of sent.slice(1)) {
    assert.match(user(request), new RegExp(`## Plan\\n1\\. ${MARKER}`), 'the plan on every later call');
    assert.ok(user(request).endsWith('AISDK-START: find the last critical event'), 'the user’s message untouched, after the block');
  }
  assert.equal(JSON.stringify(messages), before, 'the caller’s messages are unchanged');
  const history = JSON.stringify(result.response.messages);
  assert.ok(!history.includes(BLOCK), 'the step history never holds the injected block');

  // Tools: the plugins' by API-safe names (recall's, the session being in a project);
  // scratchpad_read once the turn has an observation.
  assert.deepEqual(offered(sent[0]).sort(), ['echo', 'read_log', 'recall_read', 'recall_search', 'session_scratchpad']);
  assert.ok(offered(sent[2]).includes('scratchpad_read'));

  // The log reached the model as the large-observation store's synthetic observation, and was read back.
  const toolText = (request) => request.messages.filter((m) => m.role === 'tool').map(text).join('\n');
  const observation = toolText(sent[2]);
  assert.ok(observation.length < 20_000 && observation.includes('Large observation saved'), observation.slice(0, 200));
  assert.ok(toolText(sent[3]).includes('{"line":2096,"text":"ERROR 2026-04-26 23:59:59 LAST_CRITICAL_EVENT"}'), toolText(sent[3]));

  // The blocked call never ran; the model read why.
  assert.match(toolText(sent[4]), /step 9 has not run yet/);
  assert.deepEqual(ran, [['read_log', '/var/log/app.log']], 'echo never ran');

  const shown = await host.show('chat-1');
  assert.ok(shown.state.some((e) => e.text.includes(MARKER)), 'the plan is stored');
  assert.equal(shown.session.project, 'acme/ai-sdk', 'the session is in the Scratchpad’s project');

  // Recall: a new session of the project starts, in its first model call, from what chat-1 saved.
  const next = await new Scratchpad(host, { sessionId: 'chat-next', project: 'acme/ai-sdk', strict: true }).turn();
  const seen = requests().length;
  const stream = streamText({ model: next.model(model()), tools: next.tools, prompt: 'AISDK-STREAM recall', stopWhen: isStepCount(2) });
  assert.equal(await stream.text, 'AISDK-STREAMED');
  const first = JSON.stringify(requests()[seen].messages);
  assert.ok(first.includes('What earlier sessions of this project left') && first.includes(MARKER), first);
  assert.equal((await host.show('chat-next')).session.project, 'acme/ai-sdk');
  assert.throws(() => new Scratchpad(host, { sessionId: 'x', project: '' }), /project key is empty/);
  host.close();
});

test('streamText: a later turn of the session gets the plan, and a failing host never breaks it', async () => {
  const host = await Host.open(join(mkdtempSync(join(tmpdir(), 'scratchpad-ai-sdk-')), 'agent.db'));
  await host.createSession('chat-2');
  await host.callTool({ sessionId: 'chat-2', turnId: 'earlier' }, 'session.scratchpad', { action: 'set_plan', content: `1. ${MARKER}` });
  const errors = [];
  const scratchpad = new Scratchpad(host, { sessionId: 'chat-2', onError: (error, hook) => errors.push(hook) });
  const turn = await scratchpad.turn();
  const seen = requests().length;
  const stream = streamText({ model: turn.model(model()), tools: turn.tools, prompt: 'AISDK-STREAM please', stopWhen: isStepCount(3) });
  assert.equal(await stream.text, 'AISDK-STREAMED');
  const request = requests()[seen];
  assert.match(text(request.messages.find((m) => m.role === 'user')), new RegExp(`## Plan\\n1\\. ${MARKER}`));

  // The host closes under the turn: the model call goes on without the plugins' part.
  host.close();
  const again = streamText({ model: turn.model(model()), tools: turn.tools, prompt: 'AISDK-STREAM again', stopWhen: isStepCount(3) });
  assert.equal(await again.text, 'AISDK-STREAMED');
  assert.deepEqual(errors, ['beforeQuery', 'tools'], 'each failure reported once');
  await turn.finish('AISDK-STREAMED');
  assert.deepEqual(errors.slice(2), ['afterResponse']);

  // A turn started on the closed host still runs, with the caller's tools alone.
  const later = await scratchpad.turn({ tools: { noop: tool({ inputSchema: jsonSchema({ type: 'object' }), execute: async () => 'ok' }) } });
  assert.deepEqual(Object.keys(later.tools), ['noop']);
  assert.deepEqual(errors.slice(3), ['plugins']);
  const last = streamText({ model: later.model(model()), tools: later.tools, prompt: 'AISDK-STREAM last', stopWhen: isStepCount(3) });
  assert.equal(await last.text, 'AISDK-STREAMED');
});

test('API-safe tool names', () => {
  assert.equal(apiToolName('session.scratchpad'), 'session_scratchpad');
  assert.equal(apiToolName('a'.repeat(70)).length, 64);
  assert.throws(() => new Scratchpad({}, { sessionId: 'x' }), TypeError);
  assert.throws(() => new Scratchpad(null, { sessionId: 'x' }), /host must be a Host/);
});
