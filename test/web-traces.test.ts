// The traces and evaluation-rule pages in real Chromium (issue 28), with spans sent by the real
// OpenTelemetry SDK and OTLP exporter: a rule made with the form (filter rows), its live status
// counting the spans sent while the page is open, the test panel, the trace list and its filters,
// the span tree with extracted inputs (or the unreadable reason) and the scores linking to their
// logs, the log page linking back to the trace, and the "falling behind" warning of a full queue.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { chromiumAvailable, launchBrowser, type BrowserRig } from './helpers/browser.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { exportSpans, ExportResultCode, recordSpans } from './helpers/otel-export.ts';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';

const skip = !chromiumAvailable() && 'Chromium is not installed';
const text = async (l: { textContent(): Promise<string | null> }) => (await l.textContent()) ?? '';

const chat = (question: string, answer: string) => ({
  'gen_ai.operation.name': 'chat',
  'gen_ai.request.model': 'gpt-4o-mini',
  'gen_ai.input.messages': JSON.stringify([
    { role: 'system', parts: [{ type: 'text', content: 'Be brief.' }] },
    { role: 'user', parts: [{ type: 'text', content: question }] },
  ]),
  'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: answer }], finish_reason: 'stop' }]),
});

describe('traces and rules pages in Chromium', { skip }, () => {
  let rig: ScoringRig;
  let b: BrowserRig;
  let judgeName: string;

  /** One trace: a root request span and, under it, an LLM call span with GenAI content. */
  async function sendTrace(service: string, question: string, answer: string) {
    const spans = await recordSpans(service, (tracer) => {
      const root = tracer.startSpan('handle request', { attributes: { 'http.route': '/ask' } });
      const ctx = trace.setSpan(ROOT_CONTEXT, root);
      tracer.startSpan('chat gpt-4o-mini', { attributes: chat(question, answer) }, ctx).end();
      root.end();
    });
    const result = await exportSpans({ url: rig.server.url, key: rig.key, encoding: 'protobuf' }, spans);
    assert.equal(result.code, ExportResultCode.SUCCESS, String(result.error));
    return spans;
  }

  before(async () => {
    rig = await startScoringRig({ TRIBUNAL_RATE_LIMIT: '100000' });
    const ev = await rig.createEvaluator(evaluatorBody({ name: 'Web online evaluator' }));
    judgeName = 'Online answers';
    await rig.createJudge({ name: judgeName, intent: 'grade answers', evaluator_ids: [ev.id] });
    b = await launchBrowser();
  });
  after(async () => {
    await b?.close();
    await rig?.close();
  });

  it('a rule made with the form judges spans sent while its page is open; traces, spans, scores and logs link up', async () => {
    const { page } = b;
    await page.goto(`${rig.server.url}/app/sign-in`);
    await page.getByRole('textbox', { name: 'API key' }).fill(rig.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Judges' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });

    // The form: a missing target is refused beside its field, then the rule is created with two filter rows.
    await nav.getByRole('link', { name: 'Rules', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Evaluation rules' }).waitFor();
    await page.getByText('No rules yet').waitFor();
    await page.getByRole('link', { name: 'New rule' }).click();
    await page.getByRole('textbox', { name: 'Name' }).fill('Web chat answers');
    b.expectFailedRequest('/v1/evaluation-rules/', 400);
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.locator('.form-error .error').waitFor();
    assert.match(await text(page.locator('.form-error')), /judge_id|evaluator_id/);
    await page.getByRole('combobox', { name: 'Judged by' }).selectOption({ label: judgeName });
    assert.equal(await page.getByRole('combobox', { name: 'Field 1' }).inputValue(), 'gen_ai.operation.name', 'a first row is offered');
    await page.getByRole('button', { name: 'Add a condition' }).click();
    await page.getByRole('combobox', { name: 'Field 2' }).fill('service.name');
    await page.getByRole('combobox', { name: 'Operator 2' }).selectOption('in');
    await page.getByRole('textbox', { name: 'Value 2' }).fill('web-svc, web-svc-2');
    await page.getByRole('button', { name: 'Add a condition' }).click();
    await page.getByRole('button', { name: 'Remove condition 3' }).click();
    await page.getByRole('button', { name: 'Create rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'Rule: Web chat answers' }).waitFor();
    const rules = (await rig.get('/v1/evaluation-rules/')).body.results;
    assert.equal(rules.length, 1);
    assert.deepEqual(rules[0].filter, [
      { field: 'gen_ai.operation.name', op: 'eq', value: 'chat' },
      { field: 'service.name', op: 'in', value: ['web-svc', 'web-svc-2'] },
    ]);
    const counter = (name: string) => page.locator(`[data-counter="${name}"] dd`);
    assert.equal(await text(counter('matched')), '0');
    await b.screenshot('traces-rule-empty');

    // Spans arrive while the page is open: the counters move without a reload.
    const spans = await sendTrace('web-svc', 'What is 2+2?', 'Four.');
    await sendTrace('other-svc', 'Not for this rule', 'Ignored.');
    const traceId = spans[0]!.spanContext().traceId;
    const llmSpanId = spans.find((s) => s.name.startsWith('chat'))!.spanContext().spanId;
    await page.locator('[data-counter="done"] dd', { hasText: /^1$/ }).waitFor({ timeout: 30_000 });
    assert.equal(await text(counter('matched')), '1', 'only the chat span of web-svc matched');
    assert.equal(await text(counter('failed')), '0');
    assert.equal(await page.locator('.falling-behind').count(), 0, 'no warning while the rule keeps up');

    // The test panel: what the latest matching stored span gives, without a model call.
    const calls = rig.fake.requests.length;
    await page.getByRole('button', { name: 'Test on stored spans' }).click();
    const results = page.getByRole('table', { name: 'Test results' });
    await results.waitFor();
    assert.match(await text(results), /What is 2\+2\?/);
    assert.match(await text(results), /Four\./);
    assert.match(await text(results), /sampled/);
    assert.equal(rig.fake.requests.length, calls, 'testing calls no model');
    await b.screenshot('traces-rule-tested');

    // The traces list and its filters.
    await nav.getByRole('link', { name: 'Traces', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: 'Traces' }).waitFor();
    const table = page.getByRole('table', { name: 'Traces' });
    await table.waitFor();
    assert.equal(await table.locator('tbody tr').count(), 2);
    await page.getByRole('combobox', { name: 'Evaluations' }).selectOption('true');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/has_evaluation=true/);
    // The URL changes before the filtered list replaces the old one: wait until the unjudged trace's row is gone.
    await table.locator('tbody tr', { hasText: 'other-svc' }).waitFor({ state: 'detached' });
    await table.locator('tbody tr').first().waitFor();
    assert.equal(await table.locator('tbody tr').count(), 1, 'only the judged trace');
    assert.match(await text(table.locator('tbody tr')), /web-svc/);
    await page.getByRole('textbox', { name: 'Service' }).fill('nobody');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('No trace matches these filters.').waitFor();
    await page.goto(`${rig.server.url}/app/traces?service=web-svc&span_name=${encodeURIComponent('chat gpt-4o-mini')}`);
    await table.locator('tbody tr').first().waitFor();
    assert.equal(await table.locator('tbody tr').count(), 1);
    await b.screenshot('traces-list');

    // The trace: the span tree, the unreadable root with its reason, the LLM span's inputs and score.
    await table.getByRole('link', { name: 'handle request' }).click();
    await page.getByRole('heading', { level: 1, name: 'Trace: handle request' }).waitFor();
    const root = page.locator('.span-node').nth(0);
    const child = page.locator(`.span-node[data-span-id="${llmSpanId}"]`);
    assert.equal(await page.locator('.span-node').count(), 2);
    assert.equal(await text(root.locator('.span-name')), 'handle request');
    const indent = async (el: typeof root) => el.evaluate((n) => n.getBoundingClientRect().left);
    assert.ok((await indent(child)) > (await indent(root)), 'the child span is indented under its parent');
    await root.getByText('Not readable').click();
    await root.getByText(/Nothing to judge: no known format/).waitFor();
    const inputs = child.locator('.span-inputs');
    assert.equal(await inputs.getAttribute('open'), '', 'a judged span shows its inputs open');
    assert.match(await text(inputs), /Read as gen_ai · model gpt-4o-mini/);
    assert.match(await text(inputs), /System prompt\s*Be brief\./);
    assert.match(await text(inputs), /Request\s*What is 2\+2\?/);
    assert.match(await text(inputs), /Response\s*Four\./);
    const evaluation = child.locator('.span-evaluations li');
    assert.equal(await evaluation.count(), 1);
    assert.match((await evaluation.getByRole('img').getAttribute('aria-label')) ?? '', /score \d\.\d\d of 1/);
    await b.screenshot('traces-trace');

    // Score -> its execution log -> back to the trace.
    await evaluation.getByRole('link', { name: 'Execution log' }).click();
    await page.getByRole('heading', { level: 1, name: `Run of ${judgeName}` }).waitFor();
    assert.match(await text(page.locator('.facts')), new RegExp(`Span\\s*${llmSpanId}`));
    await b.screenshot('traces-log');
    await page.getByRole('link', { name: 'Open the trace' }).click();
    await page.getByRole('heading', { level: 1, name: 'Trace: handle request' }).waitFor();
    // The trace's logs, by the trace_id filter of the logs page.
    await page.getByRole('link', { name: 'Its execution logs' }).click();
    await page.getByRole('heading', { level: 1, name: 'Execution logs' }).waitFor();
    await page.getByRole('table', { name: 'Execution logs' }).waitFor();
    assert.equal(await page.getByRole('table', { name: 'Execution logs' }).locator('tbody tr').count(), 1);
    assert.equal(await page.getByRole('textbox', { name: 'Trace' }).inputValue(), traceId);

    // A log that carries its trace only as a tag (written before trace_id was a field, or a backfill row) links too.
    const judge = (await rig.get('/v1/judges/')).body.results[0];
    const tagged = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'q', response: 'a', tags: [`trace_id:${traceId}`, `span_id:${llmSpanId}`] });
    assert.equal(tagged.status, 200, JSON.stringify(tagged.body));
    await page.goto(`${rig.server.url}/app/logs/${tagged.body.execution_log_id}`);
    await page.getByRole('link', { name: 'Open the trace' }).click();
    await page.getByRole('heading', { level: 1, name: 'Trace: handle request' }).waitFor();
    assert.deepEqual(b.errors, []);
  });

  it('edits a rule with the form, and warns that a rule is falling behind when its queue fills', async () => {
    const { page } = b;
    const judge = (await rig.get('/v1/judges/')).body.results[0];
    const created = await rig.post('/v1/evaluation-rules/', {
      name: 'Slow rule',
      judge_id: judge.id,
      filter: [{ field: 'service.name', op: 'eq', value: 'backlog-svc' }],
      delay_seconds: 3600,
      queue_limit: 2,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    const id = created.body.id;
    await page.goto(`${rig.server.url}/app/rules/${id}`);
    await page.getByRole('heading', { level: 1, name: 'Rule: Slow rule' }).waitFor();
    assert.equal(await page.locator('.falling-behind').count(), 0);
    for (let i = 0; i < 3; i++) await sendTrace('backlog-svc', `question ${i}`, `answer ${i}`);
    // Two spans of each trace match (the filter is on the service); the queue holds 2, the rest are shed.
    const warning = page.locator('.falling-behind');
    await warning.waitFor({ timeout: 15_000 });
    assert.match(
      await text(warning),
      /Falling behind: 2 units wait, 100% of the queue limit 2\. When the queue is full, the oldest waiting unit is dropped and counted as skipped \(4 so far\)\./,
    );
    assert.equal(await text(page.locator('[data-counter="queued"] dd')), '2');
    assert.match(await text(page.locator('[data-reason="shed_oldest"]')), /^4 shed_oldest/);
    await b.screenshot('traces-rule-behind');
    await page.getByRole('link', { name: 'Rules', exact: true }).click();
    await page.getByRole('table', { name: 'Evaluation rules' }).getByText('falling behind').waitFor();

    // Edit: the form comes filled in; a bad sampling rate is refused beside its field; a good one is saved.
    await page.goto(`${rig.server.url}/app/rules/${id}/edit`);
    await page.getByRole('heading', { level: 1, name: 'Edit rule: Slow rule' }).waitFor();
    assert.equal(await page.getByRole('textbox', { name: 'Value 1' }).inputValue(), 'backlog-svc');
    assert.equal(await page.getByRole('spinbutton', { name: 'Delay (seconds)' }).inputValue(), '3600');
    await page.getByRole('spinbutton', { name: 'Sampling rate' }).fill('1.5');
    b.expectFailedRequest(`/v1/evaluation-rules/${id}/`, 400);
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.locator('[data-field="sampling_rate"] .field-error').waitFor();
    await page.getByRole('spinbutton', { name: 'Sampling rate' }).fill('0.25');
    await page.getByRole('spinbutton', { name: 'Runs per day' }).fill('100');
    await page.getByRole('checkbox', { name: 'Active' }).uncheck();
    await page.getByRole('button', { name: 'Save rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'Rule: Slow rule' }).waitFor();
    const saved = (await rig.get(`/v1/evaluation-rules/${id}/`)).body;
    assert.deepEqual([saved.sampling_rate, saved.budget, saved.active, saved.delay_seconds, saved.queue_limit], [0.25, { max_runs_per_day: 100 }, false, 3600, 2]);
    await page.getByText('25% of traces').waitFor();

    // Delete, after a confirmation: back on the list, the rule is gone.
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete rule' }).click();
    await page.getByRole('heading', { level: 1, name: 'Evaluation rules' }).waitFor();
    await page.getByText('Rule Slow rule deleted.').waitFor();
    assert.equal(await page.getByRole('link', { name: 'Slow rule' }).count(), 0);
    assert.equal((await rig.get(`/v1/evaluation-rules/${id}/`)).status, 404);
    assert.deepEqual(b.errors, []);
  });
});
