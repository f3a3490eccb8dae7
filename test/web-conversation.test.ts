// Conversations in the web app, in real headless Chromium: Try it with turns (a bad JSON and a
// both-inputs problem shown beside their fields), the run page showing the conversation with tool
// calls folded, the logs filtered by session, and the session page listing its runs in order.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { startServerWithFakeModel } from './helpers/execute.ts';
import { toolAnswer, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import type { TestServer } from './helpers/server.ts';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';

const TURNS = [
  { role: 'user', content: 'Where is order 48213?' },
  { role: 'assistant', content: '', tool_calls: [{ id: 'c1', name: 'get_order_status', arguments: { order_id: '48213' } }] },
  { role: 'tool', tool_call_id: 'c1', name: 'get_order_status', content: '{"status": "shipped"}' },
  { role: 'assistant', content: 'Order 48213 has shipped.' },
];

describe('conversations in the web app', { skip }, () => {
  let fake: FakeAnthropic;
  let server: TestServer;
  let b: BrowserRig;
  const app = (path: string) => `${server.url}${path}`;

  before(async () => {
    ({ fake, server } = await startServerWithFakeModel());
    fake.respondWith(() => toolAnswer({ justification: 'The fake judge read the conversation.', score: 0.8 }));
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await server?.close();
    await fake?.close();
  });

  it('runs a conversation from Try it, shows it turn by turn, and lists the session in order', async () => {
    const { page } = b;
    await page.goto(app('/app/sign-in'));
    await page.getByRole('button', { name: 'Get a demo key' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();

    await page.goto(app('/app/evaluators/preset_turn_relevance'));
    await page.getByRole('heading', { level: 1, name: 'Turn Relevance' }).waitFor();
    const turns = page.getByRole('textbox', { name: 'Turns (JSON)' });
    await turns.fill('[{"role": "user"');
    await page.getByRole('button', { name: 'Run evaluator' }).click();
    await page.locator('[data-field="turns"] .field-error', { hasText: 'Not valid JSON.' }).waitFor();

    // Turns and a response together: the server's problem names both.
    await turns.fill(JSON.stringify(TURNS));
    await page.getByRole('textbox', { name: 'Response', exact: true }).fill('also a response');
    b.expectFailedRequest('/execute/', 400);
    await page.getByRole('button', { name: 'Run evaluator' }).click();
    await page.getByRole('alert').filter({ hasText: 'not both' }).waitFor();

    await page.getByRole('textbox', { name: 'Response', exact: true }).fill('');
    await page.getByRole('textbox', { name: 'System prompt' }).fill('You are the shop assistant.');
    await page.getByRole('textbox', { name: 'Session id' }).fill('web-session-1');
    await page.getByRole('button', { name: 'Run evaluator' }).click();
    await page.locator('.result').getByRole('img', { name: 'Turn Relevance: score 0.80 of 1' }).waitFor();
    // A second run of the same session.
    await page.getByRole('button', { name: 'Run evaluator' }).click();
    await page.waitForFunction(() => document.querySelectorAll('.result').length === 1);

    await page.locator('.result').getByRole('link', { name: 'Open the execution log' }).click();
    await page.getByRole('heading', { name: 'Conversation' }).waitFor();
    const items = page.locator('ol.turns > li');
    assert.equal(await items.count(), 4);
    assert.equal(await page.locator('li.turn.judged').count(), 1);
    assert.match((await page.locator('li.turn.judged').innerText()).replace(/\s+/g, ' '), /Assistant · judged turn Order 48213 has shipped\./);
    // Tool calls and tool results are folded until opened.
    const call = page.locator('details.tool-call');
    assert.equal(await call.evaluate((d) => (d as HTMLDetailsElement).open), false);
    await call.locator('summary').click();
    await call.getByText('"order_id": "48213"').waitFor();
    assert.equal(await page.locator('details.tool-result').count(), 1);
    assert.equal(await page.locator('details.system-prompt').count(), 1);

    await page.getByRole('link', { name: 'web-session-1' }).click();
    await page.getByRole('heading', { level: 1, name: 'Session web-session-1' }).waitFor();
    const rows = page.locator('table[aria-label="Runs of the session"] tbody tr');
    await rows.nth(1).waitFor();
    assert.equal(await rows.count(), 2);
    assert.equal((await rows.nth(0).locator('td').first().innerText()).trim(), '1');
    await page.getByRole('link', { name: 'Filter the execution logs by it' }).click();
    await page.locator('table[aria-label="Execution logs"] tbody tr').nth(1).waitFor();
    assert.equal(await page.locator('table[aria-label="Execution logs"] tbody tr').count(), 2);
    assert.equal(await page.getByRole('textbox', { name: 'Session' }).inputValue(), 'web-session-1');
    assert.deepEqual(b.errors, []);
  });
});
