// The fuzz's routes of this round's doors (h-harden, issue 24): the judge proxy (OpenAI's error
// shape), the OTLP receiver /otel/v1/traces (OTLP's Status), evaluation rules, review queues, judges
// as files and budgets, with the fixtures they need (an evaluation rule and a review queue of the
// fuzz's own organization). REST routes answer problem+json like every other; the proxy and the
// receiver have their own doors and checks (fuzz.test.ts, `violation`).
import assert from 'node:assert/strict';
import { enc, mutate, ODD_TEXT, PROTO_NAMES, query, randomText, type Rng } from './fuzz-gen.ts';
import type { TestServer } from './server.ts';

export interface RoundIds {
  ruleId: string;
  queueId: string;
}

type Route = [string, string, () => Record<string, unknown> | undefined];
/** A request of the proxy or OTLP door: method, path, extra headers, raw body. */
export type DoorRoute = { door: 'proxy' | 'otlp'; method: string; path: string; headers: Record<string, string>; body: string };

export async function makeRoundFixtures(server: TestServer, key: string, base: { judgeId: string; evaluatorId: string }): Promise<RoundIds> {
  const post = async (path: string, body: unknown) => {
    const res = await server.request('POST', path, { key, body });
    assert.ok(res.status < 300, `${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const rule = await post('/v1/evaluation-rules/', { name: 'fuzz rule', judge_id: base.judgeId, sampling_rate: 0.5, filter: [{ field: 'service.name', op: 'eq', value: 'fuzz' }] });
  const queue = await post('/v1/review-queues/', { name: 'fuzz queue', evaluator_ids: [base.evaluatorId] });
  return { ruleId: rule.id, queueId: queue.id };
}

const id = (r: Rng, own: string) =>
  r.pick<() => string>([() => own, () => own, () => r.pick(PROTO_NAMES), () => enc(r.pick(ODD_TEXT)).slice(0, 500), () => `${own.slice(0, 4)}${'0'.repeat(r.int(200))}`])();

export function roundRoutes(r: Rng, ids: RoundIds, base: { judgeId: string; evaluatorId: string; logId: string }): { reads: Route[]; writes: Route[] } {
  const q = () => query(r, ['judge_id', 'status', 'service_name', 'trace_id', 'limit', 'cursor', 'from', 'to', 'format'], [base.judgeId, 'pending', 'fuzz', '10', 'yaml']);
  const rule = () => id(r, ids.ruleId);
  const queue = () => id(r, ids.queueId);
  const reads: Route[] = [
    ['GET', `/v1/evaluation-rules/${q()}`, () => undefined],
    ['GET', `/v1/evaluation-rules/${rule()}/`, () => undefined],
    ['GET', `/v1/traces/${q()}`, () => undefined],
    ['GET', `/v1/traces/${id(r, '0af7651916cd43dd8448eb211c80319c')}/`, () => undefined],
    ['GET', `/v1/review-queues/${q()}`, () => undefined],
    ['GET', `/v1/review-queues/${queue()}/`, () => undefined],
    ['GET', `/v1/review-queues/${queue()}/items/${q()}`, () => undefined],
    ['GET', `/v1/review-queues/${queue()}/disagreements/${q()}`, () => undefined],
    ['GET', `/v1/judges/${id(r, base.judgeId)}/export/${q()}`, () => undefined],
    ['GET', `/v1/evaluators/${id(r, base.evaluatorId)}/export/${q()}`, () => undefined],
    ['GET', `/v1/budgets/${q()}`, () => undefined],
  ];
  const filter = () => [
    { field: r.pick(['service.name', 'gen_ai.request.model', '__proto__', '']), op: r.pick(['eq', 'contains', 'regex', 'nope']), value: r.pick(['fuzz', '(a+)+$', 12, null]) },
  ];
  const writes: Route[] = [
    [
      'POST',
      '/v1/evaluation-rules/',
      () => mutate(r, { name: `rule ${r.int(1e6)}`, judge_id: r.pick([base.judgeId, 'jdg_nope', 7]), sampling_rate: r.pick([0, 0.5, 1, 2, -1]), filter: filter() }),
    ],
    ['PATCH', `/v1/evaluation-rules/${rule()}/`, () => mutate(r, { sampling_rate: r.pick([0.2, 5, 'x']), enabled: r.pick([true, 'yes']), filter: filter() })],
    ['POST', `/v1/evaluation-rules/${rule()}/test/`, () => mutate(r, { span: { name: 'x', attributes: { 'service.name': 'fuzz' } } })],
    ['POST', `/v1/evaluation-rules/${rule()}/backfill/`, () => mutate(r, { from: r.pick(['2026-01-01T00:00:00Z', 'yesterday', 0]), limit: r.pick([1, 0, -5, 1e9]) })],
    ['DELETE', `/v1/evaluation-rules/${r.pick([...PROTO_NAMES, 'evr_nope'])}/`, () => undefined],
    [
      'POST',
      '/v1/review-queues/',
      () => mutate(r, { name: `q ${r.int(1e6)}`, evaluator_ids: [r.pick([base.evaluatorId, 'Clarity', '__proto__', 3])], annotators_per_item: r.pick([1, 2, 0, 99, 'x']) }),
    ],
    ['PATCH', `/v1/review-queues/${queue()}/`, () => mutate(r, { name: 'renamed', annotators_per_item: r.pick([1, 3, -1]) })],
    [
      'POST',
      `/v1/review-queues/${queue()}/items/`,
      () => mutate(r, r.chance(0.5) ? { execution_log_ids: [r.pick([base.logId, 'log_nope'])] } : { items: [{ request: 'q', response: 'a' }] }),
    ],
    ['POST', `/v1/review-queues/${queue()}/next/`, () => mutate(r, {})],
    ['POST', `/v1/review-queues/${queue()}/items/${id(r, 'rqi_x')}/annotations/`, () => mutate(r, { scores: { [base.evaluatorId]: r.pick([0.5, 2, 'x']) } })],
    ['POST', `/v1/review-queues/${queue()}/items/${id(r, 'rqi_x')}/skip/`, () => mutate(r, {})],
    ['POST', `/v1/review-queues/${queue()}/calibrate/`, () => mutate(r, { judge_id: r.pick([base.judgeId, 'x']) })],
    ['DELETE', `/v1/review-queues/${r.pick([...PROTO_NAMES, 'rvq_nope'])}/`, () => undefined],
    ['POST', `/v1/budgets/evaluators/${id(r, base.evaluatorId)}/`, () => mutate(r, { daily_usd: r.pick([1, 0, -1, 1e308, 'x', null]) })],
  ];
  return { reads, writes };
}

const YAML = ['name: fuzz judge\nintent: grade\nevaluators: []\n', 'name: [unclosed', '!!js/function "x"', 'a: &a [*a]', `name: ${'x'.repeat(300)}`, '\ufeff---\n...'];

/** A judge file for POST /v1/judges/import/ (a REST route with a YAML body). */
export function importRequest(r: Rng): { path: string; headers: Record<string, string>; body: string } {
  return {
    path: `/v1/judges/import/${r.pick(['', '?dry_run=true', '?dry_run=maybe', '?project_id=__proto__'])}`,
    headers: { 'content-type': r.pick(['application/yaml', 'text/yaml', 'application/json', 'text/plain']) },
    body: r.chance(0.8) ? r.pick(YAML) : randomText(r, r.int(300)),
  };
}

const MESSAGES = () => [{ role: 'user', content: 'Hello?' }];

/** The proxy and OTLP doors: bodies and headers made wrong one way at a time. */
export function doorRoute(r: Rng, judgeId: string): DoorRoute {
  if (r.chance(0.5)) {
    const viaHeader = r.chance(0.4);
    const api = r.pick(['chat/completions', 'responses']);
    const path = viaHeader
      ? `/v1/judges/openai/${api}${r.chance(0.2) ? `?judge_id=${id(r, judgeId)}` : ''}`
      : `/v1/judges/${id(r, judgeId)}/${r.chance(0.15) && api === 'chat/completions' ? 'refine/' : ''}openai/${api}`;
    const base =
      api === 'responses' ? { model: r.pick(['fuzz-model', 'nope', 7]), input: r.pick(['Hello?', [], null]) } : { model: r.pick(['fuzz-model', 'nope', '']), messages: MESSAGES() };
    const json = mutate(r, r.chance(0.3) ? { ...base, stream: r.pick([true, 'yes']) } : base);
    const body = r.chance(0.85) ? JSON.stringify(json) : r.pick(['{', '[]', 'null', '{"messages":', randomText(r, 50)]);
    return { door: 'proxy', method: 'POST', path, headers: { 'content-type': 'application/json', ...(viaHeader ? { 'x-judge-id': id(r, judgeId) } : {}) }, body };
  }
  const span = {
    traceId: r.pick(['0af7651916cd43dd8448eb211c80319c', 'zz', '']),
    spanId: r.pick(['b7ad6b7169203331', 12]),
    name: 'fuzz',
    startTimeUnixNano: r.pick(['1', String(Date.now() * 1e6), -1, 'x']),
    attributes: [{ key: 'service.name', value: { stringValue: 'fuzz' } }],
  };
  const json = mutate(r, { resourceSpans: [{ resource: { attributes: [] }, scopeSpans: [{ spans: [span] }] }] });
  const type = r.pick(['application/json', 'application/json', 'application/x-protobuf', 'text/plain', '']);
  const body = type === 'application/x-protobuf' ? randomText(r, r.int(200)) : r.chance(0.8) ? JSON.stringify(json) : r.pick(['{', 'null', '[]', '{"resourceSpans":{}}']);
  return {
    door: 'otlp',
    method: 'POST',
    path: '/otel/v1/traces',
    headers: { ...(type ? { 'content-type': type } : {}), ...(r.chance(0.1) ? { 'content-encoding': r.pick(['gzip', 'br', 'zstd']) } : {}) },
    body,
  };
}
