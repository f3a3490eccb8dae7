// A queue's sources add runs as they happen (SPEC section 17): real runs through the REST door with
// a fake judge model; and each rule of matchingSource on its own. TRIBUNAL_TEST_STORE=postgres runs
// it on PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { matchingSource } from '../src/review/sources.ts';
import type { ReviewQueueRecord } from '../src/review/types.ts';
import { toolAnswer } from './helpers/fake-anthropic.ts';
import { evaluatorBody, startScoringRig, type ScoringRig } from './helpers/execute.ts';
import { log } from './store-contract.ts';

let rig: ScoringRig;
let grounded: any;
let polite: any;
let judge: any;
const MARK = /says-(\d\.\d+)/;

before(async () => {
  rig = await startScoringRig();
  grounded = await rig.createEvaluator(evaluatorBody({ name: 'Src grounded' }));
  polite = await rig.createEvaluator(evaluatorBody({ name: 'Src polite' }));
  judge = await rig.createJudge({ name: 'Src judge', intent: 'Judges support replies.', evaluator_ids: [grounded.id, polite.id] });
  rig.fake.respondWith((req) => {
    const said = Number(MARK.exec(req.prompt)?.[1] ?? 0.5);
    return toolAnswer({ justification: `It says ${said}.`, score: req.system.includes('Name: Src grounded\n') ? said : 0.9 }, { usage: { input_tokens: 10, output_tokens: 5 } });
  });
});
after(() => rig.close());

const items = async (queueId: string) => (await rig.get(`/v1/review-queues/${queueId}/items/`)).body.results as Array<{ execution_log_id: string; source: string }>;

describe('review queue sources', () => {
  it('adds matching runs as they happen: critical failures, a sample rate, and nothing for a queue without sources', async () => {
    const make = async (body: Record<string, unknown>) => {
      const res = await rig.post('/v1/review-queues/', { name: `src ${Math.random()}`, judge_id: judge.id, ...body });
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.id as string;
    };
    const critical = await make({ sources: { critical_failures: true } });
    const everything = await make({ sources: { sample_rate: 1 } });
    const none = await make({ sources: { sample_rate: 0 } });
    const manual = await make({});
    const logs: string[] = [];
    for (const said of ['0.0', '0.7', '0.4']) {
      const run = await rig.post(`/v1/judges/${judge.id}/execute/`, { request: 'When do you open?', response: `At nine. says-${said}` });
      assert.equal(run.status, 200, JSON.stringify(run.body));
      logs.push(run.body.execution_log_id);
    }
    // Another judge's run never lands in these queues.
    const other = await rig.createJudge({ name: 'Src other', intent: 'Other.', evaluator_ids: [polite.id] });
    assert.equal((await rig.post(`/v1/judges/${other.id}/execute/`, { response: 'x says-0.0' })).status, 200);

    assert.deepEqual(
      (await items(critical)).map((i) => [i.execution_log_id, i.source]),
      [[logs[0], 'critical_failures']],
    );
    assert.deepEqual(
      (await items(everything)).map((i) => i.execution_log_id),
      logs,
    );
    assert.ok((await items(everything)).every((i) => i.source === 'sample_rate'));
    assert.deepEqual(await items(none), []);
    assert.deepEqual(await items(manual), []);
  });

  it('matches each rule on its own', () => {
    const q = (sources: ReviewQueueRecord['sources'], judgeId: string | null = null): ReviewQueueRecord => ({
      id: 'rvq_x',
      org_id: 'org',
      name: 'q',
      judge_id: judgeId,
      evaluator_ids: ['evl_a'],
      annotators_per_item: 1,
      lease_seconds: 600,
      sources,
      show_justification: false,
      created_at: '',
      updated_at: '',
    });
    const r = (over: Record<string, unknown>) => ({
      evaluator_id: 'evl_a',
      evaluator_name: 'A',
      evaluator_version: 1,
      score: 0.8,
      justification: 'j',
      model: 'm',
      input_tokens: 1,
      output_tokens: 1,
      cost_usd: 0,
      latency_ms: 1,
      ...over,
    });
    const l = (over: Record<string, unknown>, extra: Record<string, unknown> = {}) => log('org', { type: 'evaluator', evaluator_results: [r(over)], ...extra } as never);
    assert.equal(matchingSource(q({ jury_spread_above: 0.3 }), l({ spread: 0.5 })), 'jury_spread_above');
    assert.equal(matchingSource(q({ jury_spread_above: 0.3 }), l({ spread: 0.2 })), null);
    assert.equal(matchingSource(q({ confidence_below: 0.6 }), l({ confidence: 0.4 })), 'confidence_below');
    assert.equal(matchingSource(q({ confidence_below: 0.6 }), l({ confidence: 0.9 })), null);
    assert.equal(matchingSource(q({ critical_failures: true }), l({ score: null, error: 'model down' })), 'critical_failures');
    assert.equal(
      matchingSource(q({ sample_rate: 0.25 }), l({}), () => 0.2),
      'sample_rate',
    );
    assert.equal(
      matchingSource(q({ sample_rate: 0.25 }), l({}), () => 0.3),
      null,
    );
    assert.equal(matchingSource(q({ evaluation_rule_ids: ['rule_1'] }), l({}, { evaluation_rule_id: 'rule_1' })), 'evaluation_rule_ids');
    assert.equal(matchingSource(q({ sample_rate: 1 }), l({ evaluator_id: 'evl_other' })), null, 'not one of the queue evaluators');
    assert.equal(matchingSource(q({ sample_rate: 1 }, 'jdg_1'), l({}, { judge_id: 'jdg_2' })), null, "another judge's run");
  });
});
