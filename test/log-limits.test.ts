// Issue 11 item 4: sizes that would not fit a stored log are refused with a clear 400 before any
// model call is paid for; the same limits on both stores (TRIBUNAL_TEST_STORE=postgres runs it on
// PostgreSQL, where a 4,000-character tag once failed the log insert after the model was called).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { connectMcp } from './helpers/mcp-client.ts';

let rig: ScoringRig;
let judgeId: string;
let evaluatorId: string;

before(async () => {
  rig = await startScoringRig();
  const e = await rig.createEvaluator(evaluatorBody());
  evaluatorId = e.id;
  judgeId = (await rig.createJudge({ name: 'Limits judge', intent: 'x', evaluator_ids: [e.id] })).id;
});
after(() => rig.close());

describe('log size limits, checked before the model is called', () => {
  const cases: Array<[string, string[], RegExp]> = [
    ['a 4,000-character tag', ['ok', 't'.repeat(4000)], /tags\.1 is 4000 characters; a tag is at most 200 \(TRIBUNAL_MAX_TAG_CHARS\)/],
    ['200 tags', Array.from({ length: 200 }, (_, i) => `tag-${i}`), /tags has 200 tags; the limit is 50 \(TRIBUNAL_MAX_TAGS\)/],
  ];
  for (const [label, tags, detail] of cases) {
    it(`refuses ${label} on run_judge and run_evaluator over REST and MCP`, async () => {
      const before = rig.fake.requests.length;
      for (const path of [`/v1/judges/${judgeId}/execute/`, `/v1/evaluators/${evaluatorId}/execute/`]) {
        const res = await rig.post(path, { request: 'Q', response: 'A', tags });
        assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 300));
        assert.equal(res.body.code, 'validation_error');
        assert.match(res.body.detail, detail);
      }
      const mcp = await connectMcp(rig.server.url, rig.key);
      try {
        const res = await mcp.call('run_judge', { judge_id: judgeId, request: 'Q', response: 'A', tags });
        assert.equal(res.isError, true);
        assert.match(res.text, detail);
      } finally {
        await mcp.close();
      }
      assert.equal(rig.fake.requests.length, before, 'the model was not called');
    });
  }

  it('refuses a judge of 300 evaluators with a clear 400', async () => {
    const ids = Array.from({ length: 300 }, (_, i) => `evl_${i}`);
    const res = await rig.post('/v1/judges/', { name: 'Too big', intent: 'x', evaluator_ids: ids });
    assert.equal(res.status, 400, JSON.stringify(res.body).slice(0, 300));
    assert.match(res.body.detail, /A judge applies at most 100 evaluators \(TRIBUNAL_MAX_JUDGE_EVALUATORS\) and evaluator_ids has 300/);
    const patch = await rig.server.request('PATCH', `/v1/judges/${judgeId}/`, { key: rig.key, body: { evaluator_ids: ids } });
    assert.equal(patch.status, 400);
    assert.match(patch.body.detail, /at most 100 evaluators/);
  });

  it('runs and stores a log at the limits: 50 tags of 200 three-byte characters', async () => {
    // Random CJK characters (three bytes each in UTF-8) so that PostgreSQL cannot compress the index row.
    const tags = Array.from({ length: 50 }, () => String.fromCharCode(...Array.from({ length: 200 }, () => 0x4e00 + Math.floor(Math.random() * 0x5000))));
    const res = await rig.post(`/v1/judges/${judgeId}/execute/`, { request: 'Q', response: 'A', tags });
    assert.equal(res.status, 200, JSON.stringify(res.body).slice(0, 300));
    const stored = await rig.get(`/v1/execution-logs/${res.body.execution_log_id}/`);
    assert.deepEqual(stored.body.tags, tags);
    const found = await rig.get(`/v1/execution-logs/?tags=${encodeURIComponent(tags[7])}`);
    assert.deepEqual(
      found.body.results.map((l: { id: string }) => l.id),
      [res.body.execution_log_id],
    );
  });
});
