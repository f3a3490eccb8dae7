// tribunal models list|add|verify|delete against a real server and the fake OpenAI-compatible
// server: the model's key goes in through an environment variable and never comes out.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { startCliRig, type CliRig } from './helpers/cli.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';

const MODEL_KEY = `sk-cli-${randomBytes(12).toString('hex')}`;
let rig: CliRig;
let fake: FakeOpenAI;
before(async () => {
  fake = await startFakeOpenAI({ apiKey: MODEL_KEY });
  rig = await startCliRig({ TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64') });
});
after(async () => {
  await rig.close();
  await fake.close();
});

test('add (key from --key-env), verify, list and delete a model; the key is never printed', async () => {
  const added = await rig.cli(['models', 'add', 'local', '--provider', 'openai', '--model', 'llama', '--base-url', fake.url, '--key-env', 'MY_MODEL_KEY', '--price', '0.1,0.2'], {
    env: { MY_MODEL_KEY: MODEL_KEY },
  });
  assert.equal(added.code, 0, added.stderr);
  assert.match(added.stdout, /Registered model local/);
  const verified = await rig.cli(['models', 'verify', 'local']);
  assert.equal(verified.code, 0, verified.stderr);
  assert.match(verified.stdout, /forced_tool,json_schema,logprobs/);
  const listed = await rig.cli(['models', 'list', '--json']);
  assert.equal(listed.code, 0, listed.stderr);
  const [model] = JSON.parse(listed.stdout).results;
  assert.deepEqual(model.price, { input: 0.1, output: 0.2 });
  assert.equal(model.api_key_hint, MODEL_KEY.slice(-4));
  const table = await rig.cli(['models', 'list']);
  assert.match(table.stdout, /local\s+openai\s+llama/);
  const deleted = await rig.cli(['models', 'delete', 'local', '--yes']);
  assert.equal(deleted.code, 0, deleted.stderr);
  assert.equal(JSON.parse((await rig.cli(['models', 'list', '--json'])).stdout).results.length, 0);
  for (const r of [added, verified, listed, table, deleted]) assert.ok(!(r.stdout + r.stderr).includes(MODEL_KEY));
});

test('bad usage is a usage error, and an unset --key-env is named', async () => {
  const noProvider = await rig.cli(['models', 'add', 'x', '--model', 'm']);
  assert.notEqual(noProvider.code, 0);
  assert.match(noProvider.stderr, /--provider is required/);
  const unset = await rig.cli(['models', 'add', 'x', '--provider', 'openai', '--model', 'm', '--key-env', 'NOT_SET_ANYWHERE']);
  assert.notEqual(unset.code, 0);
  assert.match(unset.stderr, /NOT_SET_ANYWHERE/);
});
