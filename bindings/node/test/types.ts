// Compiled by `tsc --strict --noEmit` in the package's tests (tests/tests/node_host.rs): the
// published types (index.d.ts, ai-sdk.d.ts) describe the API as the tests use it.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, isStepCount, jsonSchema, tool } from 'ai';
import {
  Host,
  PLACEMENTS,
  PluginTimeout,
  Prompt,
  ScratchpadError,
  ToolError,
  checkProject,
  projectOfDir,
  type Injection,
  type RecallHit,
  type ToolSpec,
  type Turn,
} from '@scratchpad-dev/host';
import { Scratchpad, apiToolName } from '@scratchpad-dev/host/ai-sdk';

export async function everyMethod(path: string): Promise<string> {
  const host: Host = await Host.open(path, { config: null, plugins: [] });
  const guidance: Injection[] = await host.openSession('s');
  const turn: Turn = { sessionId: 's', turnId: 't', tokensUsed: 1, contextWindow: 2 };
  const tools: ToolSpec[] = await host.tools(turn);
  const out: string = await host.callTool(turn, tools[0].name, { action: 'set_plan', content: 'x' });
  const args: Record<string, unknown> = await host.beforeToolCall(turn, 'read', '{}', 1);
  const view: string | null = await host.afterToolResult(turn, 'read', args, 1, new Uint8Array(3), { path: 'a' });
  const prompt: Prompt = await host.beforeQuery(turn, 'hi');
  const { system, user } = prompt.render('sys', 'hi');
  const warnings: string[] = await host.beforeCompaction(turn);
  await host.afterCompaction(turn);
  await host.afterResponse(turn, 'done');
  const shown = await host.show('s');
  const project: string = projectOfDir(path);
  checkProject(project);
  await host.createSession('p', { project });
  await host.openSession('q', { project: null });
  const hits: RecallHit[] = await host.recallSearch(project, 'plan', { limit: 5 });
  const found: string = hits.map((hit) => `${hit.document.kind} ${hit.document.at_ms} ${hit.snippet} ${hit.score}`).join();
  const preview: Prompt = await host.recallPreview(project);
  host.close();
  try {
    await host.callTool(turn, 'x', {});
  } catch (error) {
    if (error instanceof ToolError) return `${error.kind} ${error.plugin} ${error.tool} ${error.code}`;
    if (error instanceof PluginTimeout) return error.plugin;
    if (error instanceof ScratchpadError) return error.code;
  }
  return [guidance.length, out, view, system, user, warnings, shown.state.length, PLACEMENTS[0], host.plugins()[0].name, found,
    preview.renderSystemOnly('')].join();
}

export async function agent(host: Host, baseURL: string): Promise<string> {
  const scratchpad = new Scratchpad(host, { sessionId: 'chat', project: 'acme/web', onError: (error, hook) => console.warn(hook, error) });
  const project: string | null = scratchpad.project;
  const echo = tool({
    description: 'Echoes.',
    inputSchema: jsonSchema<{ text: string }>({ type: 'object', properties: { text: { type: 'string' } } }),
    execute: async ({ text }) => text,
  });
  const turn = await scratchpad.turn({ tools: { echo }, contextWindow: 128_000 });
  const model = createOpenAICompatible({ name: 'p', baseURL }).chatModel('m');
  const result = await generateText({ model: turn.model(model), tools: turn.tools, prompt: 'go', stopWhen: isStepCount(4) });
  await turn.finish(result.text);
  return apiToolName('session.scratchpad') + turn.context.turnId + (project ?? '');
}
