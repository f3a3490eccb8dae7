// issue 26 items 3 and 9: every page of the web app at 1280x800 in real Chromium, with data in it:
// nothing wider than its frame (the page, or a table in its scrolling frame), the header on one
// row, and every text input styled (none left at the browser's default look).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { startServerWithFakeModel } from './helpers/execute.ts';
import type { FakeAnthropic } from './helpers/fake-anthropic.ts';
import type { TestServer } from './helpers/server.ts';
import { exportSpans, recordSpans } from './helpers/otel-export.ts';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';

const skip = chromiumAvailable() || process.env.CI ? false : 'Chromium is not installed at /usr/bin/chromium (apt-get install -y chromium)';

describe('web layout at 1280x800', { skip }, () => {
  let fake: FakeAnthropic;
  let server: TestServer;
  let b: BrowserRig;
  let key: string;
  const pages: string[] = [];
  let comparisonPath = '';

  before(async () => {
    ({ fake, server } = await startServerWithFakeModel({ TRIBUNAL_RATE_LIMIT: '100000' }));
    key = (await server.demoUser()).api_key;
    const req = async (method: string, path: string, body?: unknown) => {
      const res = await server.request(method, path, { key, body });
      assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
      return res.body;
    };
    const judge = await req('POST', '/v1/judges/', {
      name: 'Support answers with a long name for the layout',
      intent: 'Support answers.',
      evaluator_ids: ['Answer Relevance', 'Clarity', 'Conciseness'],
    });
    const dataset = await req('POST', '/v1/datasets/', { name: 'Layout set', description: 'Items for the layout test' });
    await req('POST', `/v1/datasets/${dataset.id}/items/`, { items: Array.from({ length: 4 }, (_, i) => ({ request: `question ${i}`, response: `answer ${i}` })) });
    const run = await req('POST', `/v1/judges/${judge.id}/execute/`, { request: 'q', response: 'a' });
    const compared = await req('POST', `/v1/judges/${judge.id}/compare/`, { request: 'q', response_a: 'first', response_b: 'second' });
    comparisonPath = `/app/logs/${compared.execution_log_id}`;
    const batch = await req('POST', `/v1/judges/${judge.id}/batch-execute/`, { dataset_id: dataset.id, tags: ['layout', 'nightly', 'a-long-tag-for-width'] });
    for (;;) {
      const now = await req('GET', `/v1/judges/batch-executions/${batch.batch_execution_id}/`);
      if (now.status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // issue 28: a received trace (a root span and an LLM call under it) and a rule, for the trace and rule pages.
    const spans = await recordSpans('layout-service-with-a-long-name', (tracer) => {
      const root = tracer.startSpan('POST /api/answer-the-customer-question');
      const messages = [{ role: 'user', parts: [{ type: 'text', content: 'A question '.repeat(40) }] }];
      const answer = [{ role: 'assistant', parts: [{ type: 'text', content: 'An_answer_without_spaces_'.repeat(12) }], finish_reason: 'stop' }];
      const attributes = { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': JSON.stringify(messages), 'gen_ai.output.messages': JSON.stringify(answer) };
      tracer.startSpan('chat gpt-4o-mini', { attributes }, trace.setSpan(ROOT_CONTEXT, root)).end();
      root.end();
    });
    await exportSpans({ url: server.url, key, encoding: 'protobuf' }, spans);
    const rule = await req('POST', '/v1/evaluation-rules/', {
      name: 'Layout rule',
      judge_id: judge.id,
      filter: [{ field: 'gen_ai.operation.name', op: 'in', value: ['chat', 'text_completion', 'generate_content'] }],
      delay_seconds: 3600,
    });
    pages.push(
      '/app/traces',
      `/app/traces/${spans[0]!.spanContext().traceId}`,
      '/app/rules',
      '/app/rules/new',
      `/app/rules/${rule.id}`,
      `/app/rules/${rule.id}/edit`,
      '/app/judges',
      '/app/judges/new',
      '/app/judges/generate',
      `/app/judges/${judge.id}`,
      '/app/evaluators',
      '/app/evaluators/new',
      '/app/evaluators/preset_clarity',
      '/app/logs',
      `/app/logs/${run.execution_log_id}`,
      `/app/logs/${compared.execution_log_id}`,
      '/app/datasets',
      `/app/datasets/${dataset.id}`,
      '/app/batches',
      `/app/batches/${batch.batch_execution_id}`,
      '/app/calibrations',
      '/app/models',
      '/app/keys',
    );
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await server?.close();
    await fake?.close();
  });

  it('no page overflows its frame, the header is one row, and every input is styled', async () => {
    const { page } = b;
    await page.goto(`${server.url}/app/sign-in`);
    await page.getByRole('textbox', { name: 'API key', exact: true }).fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    const problems: string[] = [];
    for (const path of pages) {
      await page.goto(`${server.url}${path}`);
      await page.locator('main h1').first().waitFor();
      await page.waitForLoadState('networkidle');
      const found = await page.evaluate(() => {
        const out: string[] = [];
        const doc = document.documentElement;
        if (doc.scrollWidth > window.innerWidth) out.push(`the page is ${doc.scrollWidth} px wide`);
        for (const wrap of document.querySelectorAll<HTMLElement>('.table-wrap')) {
          if (wrap.scrollWidth > wrap.clientWidth + 1)
            out.push(`a table (${wrap.querySelector('table')?.getAttribute('aria-label') ?? '?'}) is ${wrap.scrollWidth} px in a ${wrap.clientWidth} px frame`);
        }
        const tops = [...document.querySelectorAll<HTMLElement>('.top .brand, #nav a, .account')].map((e) =>
          Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2),
        );
        if (Math.max(...tops) - Math.min(...tops) > 6) out.push(`the header wraps (centres at ${[...new Set(tops)].join(', ')} px)`);
        for (const input of document.querySelectorAll<HTMLInputElement>('main input')) {
          if (['checkbox', 'radio', 'hidden', 'file', 'submit', 'button'].includes(input.type)) continue;
          const style = getComputedStyle(input);
          if (input.offsetParent && (style.borderTopLeftRadius === '0px' || input.getBoundingClientRect().height < 30))
            out.push(`input ${input.name || input.id || input.type} is unstyled (${Math.round(input.getBoundingClientRect().height)} px high)`);
        }
        return out;
      });
      for (const f of found) problems.push(`${path}: ${f}`);
      // issue 26 item 10: a comparison log shows each evaluator's two orders and their reasoning.
      if (path === comparisonPath) {
        const pairs = page.locator('.order-pair');
        assert.equal(await pairs.count(), 3);
        for (const shown of ['Response A shown first', 'Response B shown first']) assert.equal(await page.getByText(shown, { exact: true }).count(), 3);
      }
      await b.screenshot(`layout${path.replace(/\//g, '_')}`);
    }
    assert.deepEqual(problems, []);
    assert.deepEqual(b.errors, []);
  });
});
