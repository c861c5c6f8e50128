// Recall through the installed package (tests/tests/node_host.rs): a session created in a
// project starts, in its first prompt, from what earlier sessions of that project saved with
// the scratchpad's tool — never a private span or a secret, never another project's;
// `recallSearch` and `recallPreview` show what is kept; a bad project key is a
// `ScratchpadError` (code `invalid-input`).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { Host, Prompt, ScratchpadError, SessionNotFound, checkProject, projectOfDir } from '@scratchpad-dev/host';

const KEY = 'sk-proj-Zx8Qw2Lp9Rt5Vb3Nm7Kj4Hg6Fd1Sa0Xc8Yu';
const NOTE = `parse_date drops the offset <private>my home is in Lisbon</private> deploy key ${KEY}`;
const HEADING = '## What earlier sessions of this project left';

function dir() {
  return mkdtempSync(join(tmpdir(), 'scratchpad-node-recall-'));
}

async function firstPrompt(host, session, message) {
  const prompt = await host.beforeQuery({ sessionId: session, turnId: 'first' }, message);
  return prompt.injections.map((i) => i.text).join('\n');
}

test('a new session starts from what earlier sessions of its project left', async () => {
  const root = dir();
  const repo = join(root, 'repo');
  mkdirSync(join(repo, '.git'), { recursive: true });
  writeFileSync(join(repo, '.git', 'HEAD'), 'ref: refs/heads/main\n');
  mkdirSync(join(repo, 'src', 'deep'), { recursive: true });
  const project = projectOfDir(join(repo, 'src', 'deep'));
  assert.equal(project, realpathSync(repo), 'a directory’s project is its checkout’s root');

  const host = await Host.open(join(root, 'agent.db'));
  await host.createSession('a', { project });
  await host.callTool({ sessionId: 'a', turnId: 't1' }, 'session.scratchpad', { action: 'append_notes', content: NOTE });
  assert.equal((await host.show('a')).session.project, project);

  await host.openSession('b', { project });
  assert.equal((await host.show('b')).session.project, project);
  const prompt = await firstPrompt(host, 'b', 'let’s continue on the timezone bug');
  assert.ok(prompt.includes(HEADING), prompt);
  assert.ok(prompt.includes('parse_date drops the offset'), prompt);
  assert.ok(!prompt.includes('Lisbon') && !prompt.includes(KEY), 'no private span, no secret');
  const later = await host.beforeQuery({ sessionId: 'b', turnId: 'second' }, 'go on');
  assert.ok(!later.injections.some((i) => i.text.includes(HEADING)), 'only the first turn carries it');

  const hits = await host.recallSearch(project, 'offset');
  assert.deepEqual(hits.map((hit) => hit.document.session), ['a'], JSON.stringify(hits));
  const { document } = hits[0];
  assert.deepEqual([document.project, document.kind], [project, 'note']);
  assert.ok(document.text.includes('parse_date drops the offset') && hits[0].snippet.includes('offset'));
  assert.ok(!document.text.includes('Lisbon') && !document.text.includes(KEY), document.text);
  assert.equal((await host.recallSearch(project, 'offset', { limit: 1 })).length, 1);

  const preview = await host.recallPreview(project, 'the timezone bug');
  assert.ok(preview instanceof Prompt);
  assert.ok(preview.renderSystemOnly('').includes('parse_date drops the offset'), 'what a new session would receive');

  // Another project sees nothing of it; a session with no project neither.
  await host.createSession('c', { project: 'acme/other' });
  assert.equal((await host.show('c')).session.project, 'acme/other');
  assert.ok(!(await firstPrompt(host, 'c', 'the timezone bug')).includes('parse_date'));
  assert.deepEqual(await host.recallSearch('acme/other', 'offset'), []);
  await host.createSession('loose');
  assert.equal((await host.show('loose')).session.project, null);
  assert.ok(!(await firstPrompt(host, 'loose', 'the timezone bug')).includes('parse_date'));
  host.close();
});

test('a bad project key is a ScratchpadError and creates nothing', async () => {
  const host = await Host.open(join(dir(), 'agent.db'));
  const invalid = (pattern) => (error) => error instanceof ScratchpadError && error.code === 'invalid-input' && pattern.test(error.message);
  await assert.rejects(host.createSession('s', { project: '' }), invalid(/the project key is empty/));
  await assert.rejects(host.show('s'), SessionNotFound);
  await assert.rejects(host.openSession('s', { project: 'a\nb' }), invalid(/control character/));
  await assert.rejects(host.recallSearch('', 'offset'), invalid(/the project key is empty/));
  await assert.rejects(host.recallPreview('  '), invalid(/the project key is empty/));
  assert.throws(() => checkProject(''), invalid(/the project key is empty/));
  checkProject('acme/web');
  assert.throws(() => projectOfDir('relative/dir'), invalid(/not an absolute path/));
  await assert.rejects(host.createSession('s', { project: 7 }), /options\.project must be a string/);
  host.close();
});
