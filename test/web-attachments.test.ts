// The try-it form's file picker in Chromium (h-attach): files chosen on a judge's page are uploaded
// and given to the run, so the judge model receives them as image/document blocks; a file that is not
// a PDF or image is refused at the field with the server's reason, and nothing is run.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pdf, png } from './helpers/attachments.ts';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { startServerWithFakeModel } from './helpers/execute.ts';
import type { FakeAnthropic } from './helpers/fake-anthropic.ts';
import type { TestServer } from './helpers/server.ts';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';

describe('attachments on the try-it form in Chromium', { skip }, () => {
  let server: TestServer;
  let fake: FakeAnthropic;
  let b: BrowserRig;
  before(async () => {
    ({ server, fake } = await startServerWithFakeModel());
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await server?.close();
    await fake?.close();
  });

  it('uploads the chosen files and runs the judge with them', async () => {
    const key = (await server.demoUser()).api_key;
    const ev = await server.request('POST', '/v1/evaluators/', {
      key,
      body: { name: 'Matches the invoice', intent: 'The reply matches the invoice.', rubric: 'HIGH: matches. LOW: not.' },
    });
    const judge = await server.request('POST', '/v1/judges/', { key, body: { name: 'Invoice replies', intent: 'Replies about invoices', evaluator_ids: [ev.body.id] } });
    assert.equal(judge.status, 201);

    const { page } = b;
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByRole('textbox', { name: 'API key' }).fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    await page.goto(`${server.url}/app/judges/${judge.body.id}`);
    const picker = page.getByLabel('Attachments');
    await picker.waitFor();

    // A text file named .png: refused at the field, no model call.
    fake.resetStats();
    await page.getByRole('textbox', { name: 'Response' }).fill('The total is 10 EUR.');
    await picker.setInputFiles([{ name: 'fake.png', mimeType: 'image/png', buffer: Buffer.from('not a picture\n') }]);
    await page.getByRole('button', { name: /^Run/ }).click();
    await page.locator('[data-field="attachments"] .field-error').waitFor();
    assert.match((await page.locator('[data-field="attachments"] .field-error').textContent()) ?? '', /fake\.png: The file is text, not a PDF, PNG, JPEG or WebP file/);
    assert.equal(fake.requests.length, 0);

    await picker.setInputFiles([
      { name: 'scan.png', mimeType: 'image/png', buffer: png(11) },
      { name: 'invoice.pdf', mimeType: 'application/pdf', buffer: pdf() },
    ]);
    await page.getByRole('button', { name: /^Run/ }).click();
    await page.getByRole('heading', { name: 'Result' }).waitFor();
    assert.equal(fake.requests.length, 1);
    const content = fake.requests[0].body.messages[0].content;
    assert.deepEqual(content[0], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(11).toString('base64') } });
    assert.deepEqual(content[1], { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf().toString('base64') } });
    const files = await server.request('GET', '/v1/files/', { key });
    assert.deepEqual(files.body.results.map((f: { name: string }) => f.name).sort(), ['invoice.pdf', 'scan.png']);
  });
});
