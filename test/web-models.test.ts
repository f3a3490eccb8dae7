// The web app's Judge models page in Chromium: register a model against the fake OpenAI-compatible
// server (the key in a password field, never shown again), verify it, see its capabilities, delete it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';
const MODEL_KEY = `sk-web-${randomBytes(12).toString('hex')}`;

describe('Judge models page in Chromium', { skip }, () => {
  let server: TestServer;
  let fake: FakeOpenAI;
  let b: BrowserRig;
  before(async () => {
    fake = await startFakeOpenAI({ apiKey: MODEL_KEY, honours: { tools: false, jsonSchema: true, logprobs: false } });
    server = await startTestServer({ TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64'), TRIBUNAL_RATE_LIMIT: '100000' });
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await server?.close();
    await fake?.close();
  });

  it('registers, verifies and deletes a model; the key never reaches the page again', async () => {
    const { page } = b;
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByRole('button', { name: 'Get a demo key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Judge models', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Judge models' }).waitFor();
    await page.getByText('No models registered yet').waitFor();

    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('local');
    await page.getByRole('textbox', { name: 'Model id' }).fill('llama3.1:8b');
    await page.getByRole('textbox', { name: 'Base URL' }).fill(fake.url);
    await page.getByLabel('Model API key').fill(MODEL_KEY);
    await page.getByRole('checkbox', { name: 'Takes images and PDFs' }).check(); // h-attach
    await page.getByRole('button', { name: 'Register model' }).click();
    const row = page.locator('tr', { hasText: 'llama3.1:8b' });
    await row.getByText('not verified').waitFor();
    await row.getByText('· attachments').waitFor();
    await row.getByText(`…${MODEL_KEY.slice(-4)}`).waitFor();

    await row.getByRole('button', { name: 'Verify model local' }).click();
    await row.getByText('json schema').waitFor();
    assert.equal(fake.requests.at(-1)!.headers.authorization, `Bearer ${MODEL_KEY}`);
    assert.ok(!(await page.content()).includes(MODEL_KEY), 'the key is not on the page');
    await b.screenshot('models-verified');

    await row.getByRole('button', { name: 'Delete model local' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete model' }).click();
    await page.getByText('No models registered yet').waitFor();
    assert.equal((await server.request('GET', '/v1/models/local/', { key: undefined })).status, 401);
    assert.deepEqual(b.errors.splice(0), []);
  });
});

// issue 26 item 12: a server without a secret answers 503 not_available to every registration; the
// form says so before anyone fills it in, and its button is disabled.
describe('Judge models page without a server secret', { skip }, () => {
  let server: TestServer;
  let b: BrowserRig;
  before(async () => {
    server = await startTestServer({ TRIBUNAL_SECRET_KEY: undefined });
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await server?.close();
  });

  it('warns on the form and disables registering; GET /v1/model-registry/ says why', async () => {
    const { page } = b;
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByRole('button', { name: 'Get a demo key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    await page.goto(`${server.url}/app/models`);
    await page.getByRole('heading', { level: 1, name: 'Judge models' }).waitFor();
    const warning = page.locator('form .notice.warn');
    await warning.waitFor();
    assert.match((await warning.textContent()) ?? '', /cannot keep model API keys: the operator sets TRIBUNAL_SECRET_KEY/);
    assert.equal(await page.getByRole('button', { name: 'Register model' }).isDisabled(), true);
    await b.screenshot('models-no-secret');
    // The warning agrees with what registering answers.
    const key = (await server.request('POST', '/create-demo-user/')).body.api_key;
    const registry = await server.request('GET', '/v1/model-registry/', { key });
    assert.deepEqual([registry.status, registry.body.keeps_api_keys], [200, false]);
    const refused = await server.request('POST', '/v1/models/', { key, body: { name: 'local', provider: 'openai', model: 'm', base_url: 'http://127.0.0.1:9/v1' } });
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.code, 'not_available');
  });
});
