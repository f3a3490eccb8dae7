// in-process micro timing of the door pieces
import { startTestServer } from '../test/helpers/server.ts';
import { Authenticator } from '../src/auth.ts';
import { toolInput } from '../src/tool.ts';
import { tools } from '../tools/index.ts';
const s = await startTestServer({ ANTHROPIC_API_KEY: 'sk-ant-x' });
const demo = await s.demoUser();
const auth = new Authenticator(s.store);
const header = 'Api-Key ' + demo.api_key;
const body = { request: 'How do I reset my password?', response: 'Go to Settings > Security and click Reset password. '.repeat(4), judge_id: 'jdg_01a2189217517000b944b63c5085bc88' };
async function time(name: string, n: number, f: () => unknown) {
  for (let i = 0; i < n; i++) await f();
  let best = Infinity;
  for (let r = 0; r < 5; r++) { const t = performance.now(); for (let i = 0; i < n; i++) await f(); best = Math.min(best, (performance.now() - t) / n * 1000); }
  console.log(name.padEnd(30), best.toFixed(2), 'µs');
}
await time('authenticate', 20000, () => auth.authenticate(header));
await time('getApiKeyByPrefix', 20000, () => s.store.getApiKeyByPrefix(demo.api_key.slice(0, 20)));
await time('getOrganization', 20000, () => s.store.getOrganization(demo.organization_id));
await time('toolInput run_judge', 20000, () => toolInput(tools.runJudge, { ...body }, s.services));
await time('JSON.stringify body', 20000, () => JSON.stringify(body));
await s.close();
process.exit(0);
