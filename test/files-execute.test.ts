// Attachments on runs (SPEC section 16): the exact content parts the judge model receives through
// the real SDKs (Anthropic `image`/`document` blocks; OpenAI-compatible `image_url`/`file` parts), an
// unknown or another organization's file id refused before any call, a registered model without
// `supports_attachments` refused before any call, the result cache keyed by the files' hashes, MCP
// run_judge, and a batch over dataset items that carry attachments. Both stores.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fake-openai.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { connectMcp } from './helpers/mcp-client.ts';
import { pdf, png, upload, webp } from './helpers/attachments.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';

const MODEL_KEY = `sk-test-${randomBytes(8).toString('hex')}`;
let rig: ScoringRig;
let openai: FakeOpenAI;
let pngId: string;
let pdfId: string;
let webpId: string;
let evaluatorId: string;

const userContent = (body: any) => body.messages.find((m: any) => m.role === 'user').content;

before(async () => {
  rig = await startScoringRig({ TRIBUNAL_SECRET_KEY: randomBytes(32).toString('base64') });
  openai = await startFakeOpenAI({ apiKey: MODEL_KEY });
  pngId = (await upload(rig.server.url, rig.key, png(42), 'chart.png')).body.id;
  pdfId = (await upload(rig.server.url, rig.key, pdf(), 'invoice.pdf')).body.id;
  webpId = (await upload(rig.server.url, rig.key, webp(), 'photo.webp')).body.id;
  evaluatorId = (await rig.createEvaluator(evaluatorBody())).id;
});
after(async () => {
  await rig.close();
  await openai.close();
});

describe('attachments on the Anthropic server model', () => {
  it('sends image and document blocks (base64) before the prompt text, and logs the ids', async () => {
    rig.fake.resetStats();
    const res = await rig.post(`/v1/evaluators/${evaluatorId}/execute/`, { request: 'Summarise the invoice', response: 'Total 10 EUR.', attachments: [pngId, pdfId] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(rig.fake.requests.length, 1);
    const content = userContent(rig.fake.requests[0].body);
    assert.equal(content.length, 3);
    assert.deepEqual(content[0], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(42).toString('base64') } });
    assert.deepEqual(content[1], { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf().toString('base64') } });
    assert.equal(content[2].type, 'text');
    assert.match(content[2].text, /# Attachments\nThe material includes 2 attached files/);
    assert.match(content[2].text, /<attachment_[0-9a-f]+ number="1" type="image\/png">\nchart\.png\n/);
    const log = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
    assert.deepEqual(log.body.attachments, [pngId, pdfId]);
  });

  it('a pairwise comparison gives the files to both orders, and logs the ids', async () => {
    rig.fake.resetStats();
    rig.fake.enqueue(toolAnswer({ justification: 'The first reads the chart.', preference: 'A' }), toolAnswer({ justification: 'The second reads the chart.', preference: 'B' }));
    const res = await rig.post(`/v1/evaluators/${evaluatorId}/compare/`, {
      request: 'Describe the chart',
      response_a: 'A rising line.',
      response_b: 'No idea.',
      attachments: [pngId],
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(rig.fake.requests.length, 2, 'one call per order');
    for (const r of rig.fake.requests) {
      const content = userContent(r.body);
      assert.deepEqual(content[0], { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png(42).toString('base64') } });
      assert.match(content.at(-1).text, /# Attachments\nThe material includes 1 attached file/);
    }
    assert.deepEqual((await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`)).body.attachments, [pngId]);
    const unknown = await rig.post(`/v1/evaluators/${evaluatorId}/compare/`, { response_a: 'x y', response_b: 'y z', attachments: ['file_0000000000000000000000000000dead'] });
    assert.equal(unknown.status, 404);
    assert.equal(rig.fake.requests.length, 2, 'no model call for an unknown file');
  });

  it('keeps the prompt a plain string without attachments', async () => {
    rig.fake.resetStats();
    const res = await rig.post(`/v1/evaluators/${evaluatorId}/execute/`, { request: 'Hi', response: 'Hello.' });
    assert.equal(res.status, 200);
    assert.equal(typeof userContent(rig.fake.requests[0].body), 'string');
    assert.ok(!(await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`)).body.attachments);
  });

  it("refuses an unknown file id and another organization's file with a 404 naming it, before any call", async () => {
    rig.fake.resetStats();
    const unknown = await rig.post(`/v1/evaluators/${evaluatorId}/execute/`, { response: 'x y z', attachments: [pngId, 'file_0000000000000000000000000000dead'] });
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.detail, /file_0000000000000000000000000000dead/);
    assert.equal(unknown.body.errors[0].field, 'attachments.1');
    const other = await rig.server.demoUser();
    const theirs = (await upload(rig.server.url, other.api_key, png(77), 'theirs.png')).body.id;
    const foreign = await rig.post(`/v1/evaluators/${evaluatorId}/execute/`, { response: 'x y z', attachments: [theirs] });
    assert.equal(foreign.status, 404);
    assert.match(foreign.body.detail, new RegExp(theirs));
    assert.equal(rig.fake.requests.length, 0);
  });

  it('keys the result cache on the files: other bytes are another result, the same bytes a cached one', async () => {
    const run = (attachments?: string[]) =>
      rig.post(`/v1/evaluators/${evaluatorId}/execute/`, { request: 'Q?', response: 'Cache me.', use_cache: true, ...(attachments ? { attachments } : {}) });
    const cached = (r: any) => r.body.evaluator_results[0].cached === true;
    assert.ok(!cached(await run([webpId])));
    assert.ok(cached(await run([webpId])));
    assert.ok(!cached(await run([pngId])), 'another file');
    assert.ok(!cached(await run()), 'no file');
    assert.ok(cached(await run([pngId])));
  });

  it('MCP run_judge takes attachments', async () => {
    const judge = await rig.createJudge({ name: `Attach judge ${Date.now()}`, intent: 'Judges replies with pictures', stage: 'reply', evaluator_ids: [evaluatorId] });
    const mcp = await connectMcp(rig.server.url, rig.key);
    try {
      rig.fake.resetStats();
      const result = await mcp.call('run_judge', { judge_id: judge.id, response: 'A red square.', attachments: [webpId] });
      assert.ok(!result.isError, result.text);
      assert.deepEqual(userContent(rig.fake.requests[0].body)[0], { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: webp().toString('base64') } });
      const missing = await mcp.call('run_judge', { judge_id: judge.id, response: 'A red square.', attachments: ['file_nope'] });
      assert.ok(missing.isError);
      assert.match(missing.text, /file_nope/);
    } finally {
      await mcp.close();
    }
  });

  it('runs a batch over dataset items that carry attachments', async () => {
    const judge = await rig.createJudge({ name: `Batch attach ${Date.now()}`, intent: 'Judges replies', stage: 'reply', evaluator_ids: [evaluatorId] });
    const ds = await rig.post('/v1/datasets/', { name: `attach set ${Date.now()}` });
    const added = await rig.post(`/v1/datasets/${ds.body.id}/items/`, {
      items: [
        { request: 'What is in the file?', response: 'An invoice.', attachments: [pdfId] },
        { request: 'And here?', response: 'Nothing attached.' },
      ],
    });
    assert.equal(added.status, 201, JSON.stringify(added.body));
    const items = await rig.get(`/v1/datasets/${ds.body.id}/items/`);
    assert.deepEqual(
      items.body.results.map((i: any) => i.attachments ?? null),
      [[pdfId], null],
    );
    rig.fake.resetStats();
    const started = await rig.post(`/v1/judges/${judge.id}/batch-execute/`, { dataset_id: ds.body.id });
    assert.equal(started.status, 202, JSON.stringify(started.body));
    const deadline = Date.now() + 15_000;
    let run: any;
    do {
      await new Promise((r) => setTimeout(r, 50));
      run = (await rig.get(`/v1/judges/batch-executions/${started.body.batch_execution_id}/`)).body;
    } while (!['completed', 'failed', 'cancelled'].includes(run.status) && Date.now() < deadline);
    assert.equal(run.status, 'completed', JSON.stringify(run));
    const contents = rig.fake.requests.map((r) => userContent(r.body));
    const withFile = contents.filter((c) => Array.isArray(c));
    assert.equal(withFile.length, 1);
    assert.deepEqual(withFile[0][0], { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf().toString('base64') } });
    assert.equal(contents.filter((c) => typeof c === 'string').length, 1);
  });
});

describe('attachments on a registered OpenAI-compatible model', () => {
  const register = async (name: string, supports: boolean) => {
    const res = await rig.post('/v1/models/', { name, provider: 'openai', base_url: openai.url, model: 'vision-8b', api_key: MODEL_KEY, supports_attachments: supports });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.supports_attachments, supports);
    return res.body;
  };

  it('sends image_url data URLs and a file part for the PDF', async () => {
    await register('vision', true);
    const ev = await rig.createEvaluator(evaluatorBody({ model: 'vision' }));
    openai.requests.length = 0;
    const res = await rig.post(`/v1/evaluators/${ev.id}/execute/`, { request: 'Describe', response: 'A chart and an invoice.', attachments: [pngId, pdfId, webpId] });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const content = userContent(openai.requests.at(-1)!.body);
    assert.deepEqual(content.slice(0, 3), [
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png(42).toString('base64')}` } },
      { type: 'file', file: { filename: 'invoice.pdf', file_data: `data:application/pdf;base64,${pdf().toString('base64')}` } },
      { type: 'image_url', image_url: { url: `data:image/webp;base64,${webp().toString('base64')}` } },
    ]);
    assert.equal(content[3].type, 'text');
  });

  it('refuses, before any call, a model registered without supports_attachments; PATCH turns it on', async () => {
    const model = await register('text-only', false);
    const ev = await rig.createEvaluator(evaluatorBody({ model: 'text-only' }));
    openai.requests.length = 0;
    const res = await rig.post(`/v1/evaluators/${ev.id}/execute/`, { response: 'A chart.', attachments: [pngId] });
    assert.equal(res.status, 400);
    assert.match(res.body.detail, /scores with vision-8b, which does not take images or documents/);
    assert.match(res.body.detail, /supports_attachments: true/);
    assert.equal(openai.requests.length, 0);
    // Without attachments the same model runs.
    assert.equal((await rig.post(`/v1/evaluators/${ev.id}/execute/`, { response: 'A chart.' })).status, 200);
    const patched = await rig.server.request('PATCH', `/v1/models/${model.id}/`, { key: rig.key, body: { supports_attachments: true } });
    assert.equal(patched.body.supports_attachments, true);
    assert.equal((await rig.post(`/v1/evaluators/${ev.id}/execute/`, { response: 'A chart.', attachments: [pngId] })).status, 200);
  });
});
