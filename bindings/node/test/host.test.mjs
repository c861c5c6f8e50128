// @scratchpad-dev/host as installed from its packed packages (tests/tests/node_host.rs puts
// this file in a fresh directory beside node_modules): every method, the error classes, wrong
// types, a closed host, threads and processes on one SQLite file, a plugin that loops
// forever, a worker ended with calls in flight, PostgreSQL (SCRATCHPAD_TEST_POSTGRES: a fresh database on the suite's server), and
// both module systems.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { Worker } from 'node:worker_threads';

import {
  Host,
  PluginError,
  PluginTimeout,
  Prompt,
  ScratchpadError,
  SessionNotFound,
  ToolError,
} from '@scratchpad-dev/host';

const run = promisify(execFile);
const MARKER = 'NODE-PLAN-MARKER-5';
const PLAN = { action: 'set_plan', content: `1. ${MARKER}: fix the parser\n2. test it` };

/** The default plugins and the probe, whose `probe.loop` loops until its deadline. */
const LOOPING_CONFIG =
  '[[plugin]]\nname = "scratchpad"\n[[plugin]]\nname = "probe"\n' +
  `path = ${JSON.stringify(process.env.SCRATCHPAD_PROBE)}\n` +
  'allow_unsigned = true\ngrants = ["config"]\n[plugin.config]\npowers = ["config"]\n';

function dir() {
  return mkdtempSync(join(tmpdir(), 'scratchpad-node-'));
}

async function opened(name = 'agent.db') {
  return Host.open(join(dir(), name));
}

test('every method on a fresh SQLite file', async () => {
  const host = await opened();
  const plugins = host.plugins();
  assert.deepEqual(plugins.map((p) => p.name), ['scratchpad', 'observations']);
  assert.ok(plugins[0].tools.some((t) => t.name === 'session.scratchpad'));

  const guidance = await host.createSession('s1');
  assert.equal(guidance[0].placement, 'append-system');
  assert.match(guidance[0].text, /session\.scratchpad/);
  assert.deepEqual(await host.openSession('s1'), guidance, 'an existing session opens with its guidance');

  const turn = { sessionId: 's1', turnId: 't1' };
  const tools = await host.tools(turn);
  assert.deepEqual(tools.map((t) => t.name), ['session.scratchpad']);
  assert.equal(tools[0].parameters.type, 'object', 'parameters are a JSON Schema object');

  assert.match(await host.callTool(turn, 'session.scratchpad', PLAN), /^Plan set\./);
  assert.match(await host.callTool(turn, 'session.scratchpad', JSON.stringify({ action: 'append_notes', content: 'n1' })), /^Appended to notes/);

  const prompt = await host.beforeQuery({ sessionId: 's1', turnId: 't2', tokensUsed: 10, contextWindow: 1000 }, 'go on');
  assert.ok(prompt instanceof Prompt);
  assert.match(prompt.text('prepend-context'), new RegExp(`## Plan\\n1\\. ${MARKER}`));
  const { system, user } = prompt.render('You are a coding agent.', 'go on');
  assert.ok(system.startsWith('You are a coding agent.\n\n## Session Scratchpad'), system);
  assert.ok(user.endsWith('\n\ngo on') && user.includes(MARKER), user);

  const step1 = { sessionId: 's1', turnId: 't3' };
  assert.deepEqual(await host.beforeToolCall(step1, 'read_file', { path: '/a.txt' }, 1), { path: '/a.txt' });
  assert.equal(await host.afterToolResult(step1, 'read_file', { path: '/a.txt' }, 1, 'small', { path: '/a.txt' }), null);
  const big = 'x'.repeat(60_000);
  const view = JSON.parse(await host.afterToolResult(step1, 'read_file', { path: '/b.txt' }, 2, new TextEncoder().encode(big), { path: '/b.txt' }));
  assert.equal(view.size_bytes, 60_000, 'a large result is offloaded');
  assert.deepEqual(await host.beforeToolCall(step1, 'cat', { file: '{{step2.path}}' }, 3), { file: '/b.txt' });
  assert.ok((await host.tools(step1)).some((t) => t.name === 'scratchpad_read'), 'offered once the turn has an observation');

  await host.afterResponse(step1, 'done');
  assert.ok(Array.isArray(await host.beforeCompaction(step1)));
  await host.afterCompaction(step1);
  const shown = await host.show('s1');
  assert.equal(shown.session.id, 's1');
  assert.ok(shown.state.some((e) => e.plugin === 'scratchpad' && e.text.includes(MARKER)));
  host.close();
});

test('errors are their classes, and a refused call stores nothing', async () => {
  const host = await opened();
  await host.createSession('e');
  const turn = { sessionId: 'e', turnId: 't' };
  await assert.rejects(host.callTool(turn, 'session.scratchpad', {}), (error) => {
    assert.ok(error instanceof ToolError && error instanceof ScratchpadError && error instanceof Error);
    assert.equal(error.name, 'ToolError');
    assert.equal(error.kind, 'invalid-arguments');
    assert.equal(error.code, 'invalid-arguments');
    assert.equal(error.plugin, 'scratchpad');
    assert.equal(error.tool, 'session.scratchpad');
    assert.match(error.message, /`action` is required/);
    return true;
  });
  await assert.rejects(host.callTool(turn, 'session.scratchpad', '{not json'), ToolError);
  assert.deepEqual((await host.show('e')).state, [], 'nothing stored');
  await assert.rejects(host.show('nobody'), (error) => error instanceof SessionNotFound && error.session === 'nobody');
  await assert.rejects(host.createSession('e'), (error) => error instanceof ScratchpadError && error.code === 'session-exists');
  await assert.rejects(host.callTool(turn, 'no.such.tool', {}), (error) => error.code === 'unknown-tool');
  await assert.rejects(
    host.beforeToolCall(turn, 'echo', { text: '{{step9.content}}' }, 2),
    (error) => error instanceof ToolError && /step 9 has not run yet/.test(error.message),
  );
  await assert.rejects(Host.open(join(dir(), 'x.db'), { plugins: ['/nonexistent/plugin.wasm'] }), PluginError);
  await assert.rejects(
    Host.open(join(dir(), 'x.db'), { config: '/nonexistent/scratchpad.toml' }),
    (error) => error instanceof ScratchpadError && error.code === 'invalid-input' && /^config \/nonexistent/.test(error.message),
  );
});

test('wrong argument types throw TypeError naming the argument, and store nothing', async () => {
  const host = await opened();
  await host.createSession('w');
  const turn = { sessionId: 'w', turnId: 't' };
  const cases = [
    [() => host.callTool(turn, 7, {}), /name must be a string, not number/],
    [() => host.callTool(turn, 'session.scratchpad', ['set_plan']), /arguments must be an object or a JSON string, not an array/],
    [() => host.callTool({ sessionId: 'w' }, 'session.scratchpad', PLAN), /turn\.turnId must be a string, not undefined/],
    [() => host.callTool('w', 'session.scratchpad', PLAN), /turn must be an object/],
    [() => host.beforeQuery({ ...turn, tokensUsed: -1 }, 'x'), /turn\.tokensUsed must be a non-negative integer/],
    [() => host.beforeToolCall(turn, 'x', {}, 1.5), /step must be a non-negative integer/],
    [() => host.afterToolResult(turn, 'x', {}, 1, 42), /result must be a string or a Uint8Array, not number/],
    [() => host.afterToolResult(turn, 'x', {}, 1, 'r', 'meta'), /metadata must be an object, not string/],
    [() => host.createSession(null), /sessionId must be a string, not null/],
    [() => Host.open(42), /location must be a string/],
    [() => Host.open('x.db', { plugins: 'a.wasm' }), /options\.plugins must be an array/],
  ];
  for (const [call, message] of cases) {
    await assert.rejects(call, (error) => error instanceof TypeError && message.test(error.message));
  }
  assert.deepEqual((await host.show('w')).state, [], 'nothing stored');
});

test('a closed host gives a clear error, not a crash', async () => {
  const host = await opened();
  await host.createSession('c');
  const pending = host.callTool({ sessionId: 'c', turnId: 't' }, 'session.scratchpad', PLAN);
  host.close();
  assert.match(await pending, /Plan set/, 'a call already running finishes');
  await assert.rejects(host.show('c'), (error) => error instanceof ScratchpadError && error.code === 'closed' && /closed/.test(error.message));
  assert.throws(() => host.plugins(), (error) => error.code === 'closed');
  host.close(); // twice is fine
});

const APPENDS = 40;
// One appender, run as a worker thread (workerData) or as a process (argv).
const APPENDER = `
  const { Host } = require('@scratchpad-dev/host');
  const { parentPort, workerData } = require('node:worker_threads');
  const [file, who, n] = workerData ?? JSON.parse(process.argv[2]);
  (async () => {
    const host = await Host.open(file);
    await host.openSession('shared');
    for (let i = 0; i < n; i++) {
      const turn = { sessionId: 'shared', turnId: who + '-' + i };
      await host.callTool(turn, 'session.scratchpad', { action: 'append_notes', content: who + '-line-' + i });
    }
    host.close();
  })().then(() => parentPort?.postMessage('done'), (error) => { console.error(error); process.exit(1); });
`;

test('two worker threads and two processes append to one SQLite file with no lost line', async () => {
  const file = join(dir(), 'shared.db');
  const setup = await Host.open(file);
  await setup.createSession('shared');
  const script = join(process.cwd(), 'appender.cjs');
  writeFileSync(script, APPENDER);
  const worker = (who) =>
    new Promise((resolve, reject) => {
      const w = new Worker(script, { workerData: [file, who, APPENDS] });
      w.on('error', reject);
      w.on('exit', (status) => (status === 0 ? resolve() : reject(new Error(`worker ${who} exited ${status}`))));
    });
  const proc = (who) => run(process.execPath, [script, JSON.stringify([file, who, APPENDS])], { cwd: process.cwd() });
  await Promise.all([worker('w1'), worker('w2'), proc('p1'), proc('p2')]);
  const notes = (await setup.show('shared')).state.map((e) => e.text).join('\n');
  for (const who of ['w1', 'w2', 'p1', 'p2']) {
    for (let i = 0; i < APPENDS; i++) assert.ok(notes.includes(`${who}-line-${i}\n`) || notes.endsWith(`${who}-line-${i}`), `${who}-line-${i} is kept`);
  }
  setup.close();
});

test('a plugin that loops ends in PluginTimeout off the JavaScript thread while another session’s calls complete', async () => {
  const config = join(dir(), 'config.toml');
  writeFileSync(config, LOOPING_CONFIG);
  const host = await Host.open(join(dir(), 'loop.db'), { config });
  await host.createSession('loop');
  await host.createSession('calm');
  const done = [];
  const started = performance.now();
  const busy = performance.eventLoopUtilization();
  const looping = host.callTool({ sessionId: 'loop', turnId: 't' }, 'probe.loop', {}).then(
    () => assert.fail('the loop returned'),
    (error) => ({ error, ended: performance.now() }),
  );
  for (let i = 0; i < 20; i++) {
    await host.callTool({ sessionId: 'calm', turnId: `t${i}` }, 'session.scratchpad', PLAN);
    done.push(performance.now());
  }
  const { error, ended } = await looping;
  // The loop ran off the JavaScript thread: one epoch tick of it at most (1 ms) before it moved
  // to the runtime, against the 500 ms it looped (the other session's calls are a few ms).
  const { utilization } = performance.eventLoopUtilization(busy);
  assert.ok(utilization < 0.5, `the event loop was busy ${(utilization * 100).toFixed(0)} % of the loop's time`);
  assert.ok(error instanceof PluginTimeout && error instanceof PluginError, String(error));
  assert.equal(error.plugin, 'probe');
  assert.equal(done.length, 20, 'the other session’s calls all completed');
  assert.ok(done.some((t) => started < t && t < ended), 'and some while the plugin looped');
  host.close();
});

// A worker that keeps calls in flight — appends, and a plugin looping to its deadline — until
// it is ended.
const BUSY = `
  const { Host } = require('@scratchpad-dev/host');
  const { parentPort, workerData } = require('node:worker_threads');
  const [file, config] = workerData;
  (async () => {
    const host = await Host.open(file, { config });
    await host.openSession('busy');
    host.callTool({ sessionId: 'busy', turnId: 'loop' }, 'probe.loop', {}).catch(() => {});
    for (let round = 0; ; round++) {
      const calls = [];
      for (let i = 0; i < 8; i++) {
        const turn = { sessionId: 'busy', turnId: round + '-' + i };
        calls.push(host.callTool(turn, 'session.scratchpad', { action: 'append_notes', content: 'busy ' + i }));
      }
      if (round === 1) parentPort.postMessage('busy');
      await Promise.all(calls);
    }
  })();
`;

test('a worker ended with calls in flight leaves the process and the database working', async () => {
  const file = join(dir(), 'ended.db');
  const config = join(dir(), 'config.toml');
  writeFileSync(config, LOOPING_CONFIG);
  const script = join(process.cwd(), 'busy.cjs');
  writeFileSync(script, BUSY);
  const worker = new Worker(script, { workerData: [file, config] });
  await new Promise((resolve, reject) => {
    worker.on('message', resolve);
    worker.on('error', reject);
  });
  assert.equal(await worker.terminate(), 1, 'the worker was ended, not finished');
  // Past the looping call's 500 ms deadline: it and the appends end with no event loop to
  // settle them on.
  await new Promise((resolve) => setTimeout(resolve, 800));
  const host = await Host.open(file);
  await host.callTool({ sessionId: 'busy', turnId: 'after' }, 'session.scratchpad', { action: 'append_notes', content: 'after the worker' });
  const notes = (await host.show('busy')).state.map((e) => e.text).join('\n');
  assert.match(notes, /busy 0/, 'what the worker committed is kept');
  assert.match(notes, /after the worker/);
  host.close();
});

test('PostgreSQL: the plan is kept across hosts', async () => {
  const url = process.env.SCRATCHPAD_TEST_POSTGRES;
  assert.ok(url, 'SCRATCHPAD_TEST_POSTGRES names the database');
  const host = await Host.open(url);
  await host.createSession('pg');
  await host.callTool({ sessionId: 'pg', turnId: 't1' }, 'session.scratchpad', PLAN);
  host.close();
  const again = await Host.open(url);
  const { user } = (await again.beforeQuery({ sessionId: 'pg', turnId: 't2' }, 'go')).render('', 'go');
  assert.ok(user.includes(MARKER), user);
  again.close();
});

test('CommonJS and ES modules load the same classes', () => {
  const require = createRequire(join(process.cwd(), 'package.json'));
  const cjs = require('@scratchpad-dev/host');
  assert.equal(cjs.Host, Host);
  assert.equal(cjs.ToolError, ToolError);
});

test('a platform with no binary gets one line naming those that exist', async () => {
  const preload = join(dir(), 'freebsd.cjs');
  writeFileSync(preload, "Object.defineProperty(process, 'platform', { value: 'freebsd' });\n");
  const result = await run(process.execPath, ['-r', preload, '-e', "try { require('@scratchpad-dev/host') } catch (e) { console.log(e.message) }"], {
    cwd: process.cwd(),
  });
  const lines = result.stdout.trim().split('\n');
  assert.equal(lines.length, 1, result.stdout);
  assert.match(lines[0], /no binary for freebsd-x64; the platforms with one: linux-x64-gnu, linux-arm64-gnu, win32-x64, darwin-x64, darwin-arm64$/);
});
