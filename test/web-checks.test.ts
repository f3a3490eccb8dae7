// The evaluator form's kinds in Chromium (issue 29): choose "check", write the checks, try them on
// an input (scored without saving), then create the evaluator; the same for code, whose compile
// error shows with its line. Skipped where Chromium is missing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';

describe('check and code evaluators in the web form', { skip }, () => {
  let server: TestServer;
  let b: BrowserRig;
  let key: string;
  before(async () => {
    server = await startTestServer({ TRIBUNAL_RATE_LIMIT: '100000' });
    b = await launchBrowser();
    key = (await server.demoUser()).api_key;
  });
  after(async () => {
    await b?.close();
    await server?.close();
  });

  it('writes checks, tries them on an input, and creates the evaluator', async () => {
    const { page } = b;
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByRole('textbox', { name: 'API key' }).fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    await page.goto(`${server.url}/app/evaluators/new`);
    await page.getByRole('heading', { level: 1, name: 'New evaluator' }).waitFor();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Web JSON check');
    await page.getByRole('textbox', { name: 'Intent', exact: true }).fill('Answers in JSON with an answer field.');
    await page.getByLabel('Kind').selectOption('check');
    assert.equal(await page.getByRole('textbox', { name: 'Rubric', exact: true }).isVisible(), false, 'no rubric for a check');
    await page.getByRole('textbox', { name: 'Checks (JSON)' }).fill(JSON.stringify([{ type: 'json_valid' }, { type: 'json_path', path: '$.answer' }]));
    await page.getByRole('textbox', { name: 'Response to score' }).fill('{"other": 1}');
    await page.getByRole('button', { name: 'Try on this input' }).click();
    await page.getByText(/Score 0\.00 — 1 of 2 checks passed.*json_path \$\.answer on response: the path matched nothing/).waitFor();
    await b.screenshot('checks-try');
    await page.getByRole('button', { name: 'Create evaluator' }).click();
    await page.getByText('Evaluator “Web JSON check” created.').waitFor();
    await page.getByRole('heading', { level: 2, name: 'Checks (combine: all)' }).waitFor();
    await page.getByText('"path": "$.answer"').waitFor();
    const listed = await server.request('GET', '/v1/evaluators/Web%20JSON%20check/', { key });
    assert.equal(listed.body.kind, 'check');
    assert.equal(listed.body.checks.length, 2);
    assert.deepEqual(b.errors.splice(0), []);
  });

  it('shows a code compile error with its line, and tries working code', async () => {
    const { page } = b;
    await page.goto(`${server.url}/app/evaluators/new`);
    await page.getByRole('heading', { level: 1, name: 'New evaluator' }).waitFor();
    await page.getByLabel('Kind').selectOption('code');
    await page.getByRole('textbox', { name: 'Code', exact: true }).fill('const n = input.response.length;\nreturn n < 10 ? 1 : (;');
    await page.getByRole('textbox', { name: 'Response to score' }).fill('short');
    await page.getByRole('button', { name: 'Try on this input' }).click();
    await page
      .getByText(/does not compile \(line 2\)/)
      .first()
      .waitFor();
    await page.getByRole('textbox', { name: 'Code', exact: true }).fill('const n = input.response.length;\nreturn n < 10 ? { score: 1, justification: n + " characters" } : 0;');
    await page.getByRole('button', { name: 'Try on this input' }).click();
    await page.getByText('Score 1.00 — 5 characters').waitFor();
    b.errors.splice(0); // the 400 of the first try is logged by the browser as a failed request
  });
});
