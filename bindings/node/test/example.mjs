// The README's Node example (tests/tests/node_host.rs runs it and checks what it prints): a
// plan set in turn 1 is what turn 2 injects before the user's message.
import { Host } from '@scratchpad-dev/host';

const host = await Host.open(process.argv[2] ?? 'agent.db'); // or a postgres:// URL
await host.openSession('s1');
const plan = { action: 'set_plan', content: '1. Fix X\n2. Test Y' };
console.log(await host.callTool({ sessionId: 's1', turnId: 't1' }, 'session.scratchpad', plan));
const prompt = await host.beforeQuery({ sessionId: 's1', turnId: 't2' }, 'continue');
const { user } = prompt.render('You are a coding agent.', 'continue'); // and `system`, with the guidance
console.log(user); // the block, then the user's message untouched
host.close();
