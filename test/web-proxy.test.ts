// h-proxy: the judge form's guardrail and the judge page's proxy URL in Chromium; the URL shown is
// then used by the real `openai` SDK.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';

describe('Judge proxy in the web app', { skip }, () => {
  let server: TestServer;
  let b: BrowserRig;
  before(async () => {
    server = await startTestServer({ TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64'), TRIBUNAL_RATE_LIMIT: '100000' });
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await server?.close();
  });

  it('sets a guardrail in the judge form and shows the proxy URL with snippets', async () => {
    const { page } = b;
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByRole('button', { name: 'Get a demo key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    await page.goto(`${server.url}/app/judges/new`);
    await page.getByRole('heading', { level: 1, name: 'New judge from evaluators' }).waitFor();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Inline answers');
    await page.getByRole('textbox', { name: 'Intent', exact: true }).fill('Judges the answers of an assistant inline.');
    await page.getByLabel('Filter evaluators').fill('Helpfulness');
    await page.getByRole('checkbox', { name: /^Helpfulness/ }).check();
    await page.getByLabel('Guardrail action').selectOption('block');
    await page.getByLabel('Guardrail threshold').fill('0.4');
    await page.getByLabel('Block message').fill('Not this time.');
    await page.getByRole('button', { name: 'Create judge' }).click();
    await page.getByRole('heading', { name: 'Inline judging (OpenAI-compatible proxy)' }).waitFor();
    await page.getByText('block below 0.4 (“Not this time.”)').waitFor();
    const url = await page.getByLabel('Proxy base URL').inputValue();
    const id = /\/v1\/judges\/([^/]+)\/openai$/.exec(url)?.[1];
    assert.ok(id, url);
    assert.equal(url, `${server.url}/v1/judges/${id}/openai`);
    await page.getByText('Vercel AI SDK').click();
    await page.getByText(/createOpenAICompatible/).waitFor();
    const judge = (await server.request('GET', `/v1/judges/${id}/`, { headers: { cookie: (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join('; ') } })).body;
    assert.deepEqual(judge.guardrail, { threshold: 0.4, action: 'block', message: 'Not this time.' });
    assert.deepEqual(b.errors.splice(0), []);
  });
});
