// `tribunal batch run` and cost (room h-cost): --dry-run prints the estimate and starts nothing; a
// large run waits for a yes (TRIBUNAL_INTERACTIVE=1 feeds the answer), refuses without a terminal
// unless --yes; --budget caps the run. The real command in a child process against a real server.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startCliRig, type CliRig } from './helpers/cli.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';

let rig: CliRig;
const runs = async () => (await rig.server.request('GET', '/v1/judges/batch-executions/', { key: rig.key })).body.results.length as number;

before(async () => {
  rig = await startCliRig({ TRIBUNAL_RATE_LIMIT: '100000' });
  rig.fake.respondWith(() => toolAnswer({ justification: 'ok', score: 0.9 }, { usage: { input_tokens: 1000, output_tokens: 100 } }));
  const judge = await rig.server.request('POST', '/v1/judges/', {
    key: rig.key,
    body: { name: 'cost judge', intent: 'Support answers.', evaluator_ids: ['Answer Relevance', 'Clarity'] },
  });
  assert.equal(judge.status, 201, JSON.stringify(judge.body));
  await rig.server.request('POST', '/v1/datasets/', { key: rig.key, body: { name: 'cost set' } }).then(async (ds) => {
    const items = Array.from({ length: 5 }, (_, i) => ({ request: `question ${i}`, response: `answer ${i}` }));
    assert.equal((await rig.server.request('POST', `/v1/datasets/${ds.body.id}/items/`, { key: rig.key, body: { items } })).status, 201);
  });
});
after(() => rig?.close());

test('--dry-run prints the estimate and starts nothing', async () => {
  rig.fake.resetStats();
  const r = await rig.cli(['batch', 'run', '--judge', 'cost judge', '--dataset', 'cost set', '--dry-run']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /Estimate: 10 model calls/);
  assert.match(r.stdout, /cost live \$[\d.]+, with prompt caching \$[\d.]+, with provider batches \$[\d.]+/);
  const json = await rig.cli(['batch', 'run', '--judge', 'cost judge', '--dataset', 'cost set', '--dry-run', '--json']);
  assert.equal(JSON.parse(json.stdout).calls, 10);
  assert.equal(await runs(), 0);
  assert.equal(rig.fake.requests.length, 0);
});

test('a large run asks first: no terminal refuses, "n" does not start, --yes starts', async () => {
  const large = { TRIBUNAL_CONFIRM_CALLS: '5' };
  const refused = await rig.cli(['batch', 'run', '--judge', 'cost judge', '--dataset', 'cost set'], { env: large });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(refused.stderr, /--yes/);
  const no = await rig.cli(['batch', 'run', '--judge', 'cost judge', '--dataset', 'cost set'], { env: { ...large, TRIBUNAL_INTERACTIVE: '1' }, input: 'n\n' });
  assert.notEqual(no.code, 0);
  assert.match(no.stdout, /Estimate: 10 model calls/);
  assert.equal(await runs(), 0);
  const yes = await rig.cli(['batch', 'run', '--judge', 'cost judge', '--dataset', 'cost set'], { env: { ...large, TRIBUNAL_INTERACTIVE: '1' }, input: 'y\n' });
  assert.equal(yes.code, 0, yes.stderr);
  assert.match(yes.stdout, /Started batch/);
  const skip = await rig.cli(['batch', 'run', '--judge', 'cost judge', '--dataset', 'cost set', '--yes', '--budget', '0.01', '--wait', '--poll-interval', '0.1', '--quiet'], {
    env: large,
  });
  assert.equal(await runs(), 2);
  const latest = (await rig.server.request('GET', '/v1/judges/batch-executions/', { key: rig.key })).body.results[0];
  assert.equal(latest.status, 'failed', skip.stdout + skip.stderr);
  assert.match(latest.error, /^budget_exceeded/);
  assert.ok(latest.done < 5, `${latest.done} of 5 rows scored under a $0.01 cap`);
});

test('keys budget sets, shows and clears an organization daily cap on the store', async () => {
  const { tempDir } = await import('./helpers/server.ts');
  const fs = await import('node:fs');
  const dir = tempDir();
  // No server owns this directory (PORT points nowhere that answers): the command writes it directly.
  const env = { TRIBUNAL_DATA_DIR: dir, PORT: '9', TRIBUNAL_ORG_DAILY_BUDGET_USD: '3' };
  try {
    assert.equal((await rig.cli(['keys', 'create', '--org', 'acme'], { env })).code, 0);
    const shown = await rig.cli(['keys', 'budget', '--org', 'acme'], { env });
    assert.equal(shown.code, 0, shown.stderr);
    assert.match(shown.stdout, /acme: daily cap \$3 \(server default\), spent today \$0/);
    const set = await rig.cli(['keys', 'budget', '--org', 'acme', '--daily-usd', '12.5', '--json'], { env });
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual([JSON.parse(set.stdout).org.daily_cap_usd, JSON.parse(set.stdout).org.cap_source], [12.5, 'organization']);
    const cleared = await rig.cli(['keys', 'budget', '--org', 'acme', '--daily-usd', 'none', '--json'], { env });
    assert.deepEqual([JSON.parse(cleared.stdout).org.daily_cap_usd, JSON.parse(cleared.stdout).org.cap_source], [3, 'server_default']);
    assert.equal((await rig.cli(['keys', 'budget', '--org', 'acme', '--daily-usd', '-1'], { env })).code, 2);
    assert.equal((await rig.cli(['keys', 'budget', '--org', 'nobody'], { env })).code, 5);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
