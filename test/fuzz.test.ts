// Fuzz (issue 11): a few thousand malformed REST and MCP requests from a seeded PRNG against a real
// server (JSON store, or PostgreSQL with TRIBUNAL_TEST_STORE=postgres). Never a 5xx; every REST
// error is problem+json with a `code`; every MCP answer is JSON-RPC (a result, possibly an isError
// tool result, or an error with a numeric code) or a problem+json with a `code`.
// Reproduce a run: FUZZ_SEED=<the printed seed> [FUZZ_COUNT=n] node --import tsx --test test/fuzz.test.ts
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { rawRequest, MCP_POST_HEADERS } from './helpers/mcp-client.ts';
import { evaluatorBody, startServerWithFakeModel } from './helpers/execute.ts';
import type { FakeAnthropic } from './helpers/fake-anthropic.ts';
import type { TestServer } from './helpers/server.ts';
import { authHeader, BAD_PERCENT, enc, forgedCursor, HUGE_NUMBERS, junkValue, mutate, ODD_TEXT, PROTO_NAMES, prng, query, randomText, type Rng } from './helpers/fuzz-gen.ts';
import { foreignRequests, FUZZ_ROUTE_ENV, makeFixtures, newRoutes, type NewIds } from './helpers/fuzz-routes.ts';
import { doorRoute, importRequest, makeRoundFixtures, roundRoutes, type RoundIds } from './helpers/fuzz-round.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261123) >>> 0;
const COUNT = Number(process.env.FUZZ_COUNT ?? 2000);
const IN_FLIGHT = 8;

interface Ids {
  judgeId: string;
  judgeName: string;
  evaluatorId: string;
  logId: string;
  keyId: string;
  /** The fixtures of the batch, experiment, annotation, calibration and model routes. */
  extra: NewIds;
  /** h-harden: this round's doors (evaluation rules, review queues). */
  round: RoundIds;
}

function idLike(r: Rng, ids: Ids): string {
  const choices = [
    () => ids.judgeId,
    () => ids.evaluatorId,
    () => enc(ids.judgeName),
    () => ids.logId,
    () => r.pick(PROTO_NAMES),
    () => r.pick(BAD_PERCENT),
    () => `abc${r.pick(BAD_PERCENT)}def`,
    () => enc(r.pick(ODD_TEXT)).slice(0, 3000),
    () => String(r.pick(HUGE_NUMBERS)),
    () => 'jdg_' + '0'.repeat(r.int(300)),
    () => 'Clarity',
  ];
  return r.pick(choices)();
}

interface FuzzRequest {
  label: string;
  door: 'rest' | 'mcp' | 'proxy' | 'otlp';
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function restRequest(r: Rng, ids: Ids, keys: { own: string; other: string }): FuzzRequest {
  const id = idLike(r, ids);
  type Route = [string, string, () => Record<string, unknown> | undefined];
  // Requests that can store something are drawn less often: each one rewrites the JSON store's file.
  const reads: Route[] = [
    ['GET', `/v1/judges/${id}/`, () => undefined],
    ['DELETE', `/v1/judges/${r.pick(PROTO_NAMES)}/`, () => undefined],
    ['POST', `/v1/judges/${id}/execute/`, () => mutate(r, { response: 'An answer.', request: 'A question?', tags: ['fuzz'] })],
    ['GET', `/v1/judges/${id}/versions/`, () => undefined],
    ['GET', `/v1/judges/${id}/${query(r)}`, () => undefined],
    ['GET', `/v1/evaluators/${id}/`, () => undefined],
    ['POST', `/v1/evaluators/${id}/execute/`, () => mutate(r, { response: 'An answer.', contexts: ['c'], expected_output: 'e' })],
    ['GET', `/v1/projects/${query(r)}`, () => undefined],
    ['GET', `/v1/judges/${query(r)}`, () => undefined],
    ['GET', `/v1/evaluators/${query(r)}`, () => undefined],
    ['GET', `/v1/execution-logs/${query(r)}`, () => undefined],
    ['GET', `/v1/execution-logs/${id}/`, () => undefined],
    ['GET', `/v1/api-keys/${query(r)}`, () => undefined],
    ['DELETE', `/v1/api-keys/${r.chance(0.5) ? id : r.pick(PROTO_NAMES)}/`, () => undefined],
    ['PUT', `/v1/judges/${id}/`, () => ({})],
    ['GET', `/v1/${r.pick(PROTO_NAMES)}/`, () => undefined],
    ['GET', `/app/${r.pick([...BAD_PERCENT, ...PROTO_NAMES])}`, () => undefined],
    ['GET', `/v1/judges/${r.pick(BAD_PERCENT)}/`, () => undefined],
    ['GET', `/v1/${r.pick(['execution-logs', 'judges', 'evaluators', 'projects'])}/?cursor=${forgedCursor(r)}`, () => undefined],
    [
      'POST',
      `/v1/judges/${ids.judgeId}/execute/`,
      () => ({ response: 'An answer.', tags: r.chance(0.5) ? [randomText(r, 4000)] : Array.from({ length: 200 }, () => randomText(r, 40)) }),
    ],
  ];
  const writes: Route[] = [
    ['PATCH', `/v1/judges/${id}/`, () => mutate(r, { name: 'renamed', intent: 'x' })],
    ['PATCH', `/v1/evaluators/${id}/`, () => mutate(r, { rubric: 'A new rubric.' })],
    ['POST', '/v1/evaluators/', () => mutate(r, evaluatorBody())],
    ['POST', '/v1/judges/', () => mutate(r, { name: `fuzz ${r.int(1e6)}`, intent: 'x', evaluator_ids: [ids.evaluatorId] })],
    ['POST', '/v1/judges/generate/', () => mutate(r, { intent: 'Judge answers of a support bot.', reasoning_effort: 'off' })],
    ['POST', '/v1/projects/', () => mutate(r, { name: `p ${r.int(1e6)}` })],
  ];
  const added = newRoutes(r, ids.extra, ids);
  reads.push(...added.reads);
  writes.push(...added.writes);
  const round = roundRoutes(r, ids.round, ids);
  reads.push(...round.reads);
  writes.push(...round.writes);
  if (r.chance(0.03)) {
    const imp = importRequest(r);
    return { label: `POST ${imp.path}`, door: 'rest', method: 'POST', path: imp.path, headers: { ...authHeader(r, keys), ...imp.headers }, body: imp.body };
  }
  const [method, path, makeBody] = r.pick(r.chance(0.15) ? writes : reads);
  const headers: Record<string, string> = { ...authHeader(r, keys) };
  let body: string | undefined;
  const json = makeBody();
  if (json !== undefined || r.chance(0.1)) {
    const roll = r.next();
    body =
      roll < 0.6
        ? JSON.stringify(json ?? junkValue(r))
        : roll < 0.75
          ? r.pick(['{', '{"response": }', '[1,2', '\ufeff{"response":"x"}', "{'a':1}", 'null', '"text"', '1e999', `{"response":"${'\\u'}"}`, '{"a":'.repeat(500)])
          : roll < 0.85
            ? JSON.stringify(junkValue(r))
            : JSON.stringify(
                Object.fromEntries([
                  ['__proto__', { admin: true }],
                  ['constructor', { prototype: {} }],
                  ['response', 'x'],
                ]),
              );
    headers['content-type'] = r.chance(0.85)
      ? 'application/json'
      : r.pick([
          'text/plain',
          'application/x-www-form-urlencoded',
          'multipart/form-data; boundary=x',
          'application/json; charset=utf-16',
          'application/json, text/html',
          '',
          'application/merge-patch+json',
          'application/json; charset=nope',
        ]);
  }
  return { label: `${method} ${path}`, door: 'rest', method, path, headers, body };
}

/** h-harden: the judge proxy (OpenAI's error shape) and the OTLP receiver (OTLP's Status). */
function doorRequest(r: Rng, ids: Ids, keys: { own: string; other: string }): FuzzRequest {
  const d = doorRoute(r, ids.judgeId);
  return { label: `${d.door} ${d.method} ${d.path}`, door: d.door, method: d.method, path: d.path, headers: { ...authHeader(r, keys), ...d.headers }, body: d.body };
}

const TOOLS = [
  'list_judges',
  'get_judge',
  'list_evaluators',
  'get_evaluator',
  'list_projects',
  'run_judge',
  'run_evaluator',
  'generate_judge',
  'create_judge',
  'update_judge',
  'create_evaluator',
  'update_evaluator',
  'list_execution_logs',
  'get_execution_log',
];

const READ_TOOLS = TOOLS.filter((t) => /^(list|get|run)_/.test(t));

function toolArguments(r: Rng, tool: string, ids: Ids): unknown {
  const plausible: Record<string, Record<string, unknown>> = {
    get_judge: { judge_id: ids.judgeId },
    get_evaluator: { evaluator_id: ids.evaluatorId },
    run_judge: { judge_name: ids.judgeName, response: 'An answer.' },
    run_evaluator: { evaluator_id: ids.evaluatorId, response: 'An answer.', contexts: ['c'], expected_output: 'e' },
    generate_judge: { intent: 'Judge support answers.', reasoning_effort: 'off' },
    create_judge: { name: `fuzz ${r.int(1e6)}`, intent: 'x', evaluator_ids: [ids.evaluatorId] },
    update_judge: { judge_id: ids.judgeId, intent: 'y' },
    create_evaluator: evaluatorBody(),
    update_evaluator: { evaluator_id: ids.evaluatorId, rubric: 'r' },
    list_execution_logs: { limit: 5, cursor: forgedCursor(r) },
    get_execution_log: { log_id: ids.logId },
  };
  const roll = r.next();
  if (roll < 0.7) return mutate(r, plausible[tool] ?? { limit: r.pick(HUGE_NUMBERS) });
  if (roll < 0.9) return junkValue(r);
  return undefined;
}

function mcpMessage(r: Rng, ids: Ids, id: unknown): unknown {
  const roll = r.next();
  if (roll < 0.55) {
    const tool = r.chance(0.9) ? r.pick(r.chance(0.75) ? READ_TOOLS : TOOLS) : r.pick([...PROTO_NAMES, 'delete_judge', '', 'x'.repeat(500)]);
    return { jsonrpc: '2.0', id, method: 'tools/call', params: { name: tool, arguments: toolArguments(r, tool, ids) } };
  }
  if (roll < 0.65) return { jsonrpc: '2.0', id, method: 'tools/list', params: r.chance(0.5) ? { cursor: forgedCursor(r) } : junkValue(r) };
  if (roll < 0.72)
    return {
      jsonrpc: '2.0',
      id,
      method: 'initialize',
      params: r.chance(0.5) ? { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } } : junkValue(r),
    };
  if (roll < 0.8)
    return {
      jsonrpc: '2.0',
      id,
      method: r.pick(['resources/list', 'prompts/list', 'ping', 'nope', '__proto__', 'tools/call/', 'notifications/initialized', 'logging/setLevel', '']),
      params: junkValue(r),
    };
  if (roll < 0.9) return mutate(r, { jsonrpc: '2.0', id, method: 'tools/list' });
  return junkValue(r);
}

function mcpRequest(r: Rng, ids: Ids, keys: { own: string; other: string }): FuzzRequest {
  const id = r.pick<unknown>([1, 'a', 0, -1, null, 1e308, '__proto__', { x: 1 }, [1], 2 ** 53 + 1, true]);
  let body: string;
  const roll = r.next();
  if (roll < 0.7) body = JSON.stringify(mcpMessage(r, ids, id));
  else if (roll < 0.85) body = JSON.stringify(Array.from({ length: r.int(5) }, (_, i) => mcpMessage(r, ids, i + 1)));
  else body = r.pick(['{', '', '[]', '[{}]', 'null', '{"jsonrpc":"2.0","method":', '\u0000', '{"jsonrpc":"1.0","id":1,"method":"tools/list"}', `[${'['.repeat(300)}`]);
  const headers: Record<string, string> = { ...MCP_POST_HEADERS, ...authHeader(r, keys) };
  if (r.chance(0.1)) headers['content-type'] = r.pick(['text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1']);
  if (r.chance(0.1)) headers.accept = r.pick(['text/html', 'application/json', 'text/event-stream', '*/*']);
  if (r.chance(0.05)) headers['mcp-protocol-version'] = r.pick(['1999-01-01', '__proto__', '%FF']);
  if (r.chance(0.05)) headers['mcp-session-id'] = r.pick(['x', '__proto__', 'a'.repeat(300)]);
  const method = r.chance(0.95) ? 'POST' : r.pick(['GET', 'DELETE', 'PUT', 'PATCH']);
  return { label: `MCP ${method} ${body.slice(0, 80)}`, door: 'mcp', method, path: '/mcp', headers, body };
}

/** Why an answer breaks the rules, or null when it keeps them. */
function violation(req: FuzzRequest, res: { status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any }): string | null {
  if (req.door === 'proxy') return proxyViolation(req, res);
  if (req.door === 'otlp') return otlpViolation(res);
  if (res.status >= 500) return `${res.status} ${res.text.slice(0, 200)}`;
  if (res.status < 400 && req.door === 'rest') return null;
  const type = String(res.headers['content-type'] ?? '');
  const isProblem = type.includes('application/problem+json') && typeof res.json?.code === 'string' && res.json.code.length > 0;
  if (req.door === 'rest') return isProblem ? null : `${res.status} not a problem+json with a code: ${type} ${res.text.slice(0, 200)}`;
  if (isProblem) return null;
  if (res.status === 202 && res.text === '') return null; // notifications only
  const messages = Array.isArray(res.json) ? res.json : res.json === null ? [] : [res.json];
  if (messages.length === 0) return `${res.status} MCP answer is neither JSON-RPC nor a problem: ${type} ${res.text.slice(0, 200)}`;
  for (const m of messages) {
    const isResult = m && typeof m === 'object' && m.jsonrpc === '2.0' && 'result' in m;
    const isError = m && typeof m === 'object' && m.jsonrpc === '2.0' && typeof m.error?.code === 'number' && typeof m.error?.message === 'string';
    if (!isResult && !isError) return `${res.status} MCP message is neither a result nor an error: ${JSON.stringify(m).slice(0, 200)}`;
    if (isResult && m.result?.isError === true && !(Array.isArray(m.result.content) && m.result.content.length > 0)) return 'isError tool result without a message';
  }
  return null;
}

/** The proxy speaks OpenAI's protocol: errors are `{error: {message, type}}`; an unreachable upstream (the fixture model's) is a 502/504, never a 500. */
function proxyViolation(req: FuzzRequest, res: { status: number; text: string; json: any }): string | null {
  if (res.status === 500 || res.status > 504) return `${res.status} ${res.text.slice(0, 200)}`;
  if (res.status < 400) return null;
  const shaped = typeof res.json?.error?.message === 'string' && typeof res.json?.error?.type === 'string';
  if (shaped) return null;
  return `${res.status} not OpenAI's error shape: ${res.text.slice(0, 200)}`;
}

/** The OTLP receiver answers a Status: JSON `{code, message}` or protobuf; never a 5xx. */
function otlpViolation(res: { status: number; headers: Record<string, string | string[] | undefined>; text: string; json: any }): string | null {
  if (res.status >= 500) return `${res.status} ${res.text.slice(0, 200)}`;
  if (res.status < 400) return null;
  const type = String(res.headers['content-type'] ?? '');
  if (type.includes('application/x-protobuf')) return null;
  if (typeof res.json?.code === 'number' && typeof res.json?.message === 'string') return null;
  // Authentication comes before the receiver: a problem+json like every /v1 door.
  if (type.includes('application/problem+json') && typeof res.json?.code === 'string') return null;
  return `${res.status} neither an OTLP Status nor a problem+json: ${type} ${res.text.slice(0, 200)}`;
}

/** The known kinds of failure (issue 11 item 7 and item 4), so that a report groups them. */
function failureClass(failure: string): string {
  const target = failure.split(' ')[2] ?? '';
  const path = target.split('?')[0];
  if (/%(?![0-9A-Fa-f]{2})|%[89A-Fa-f][0-9A-Fa-f]/.test(path)) return 'malformed percent-encoding in the path';
  if (target.includes('cursor=WyIwMDAw')) return 'cursor with year 0000';
  if (/execute/.test(target) && failure.includes('tags')) return 'oversized tags';
  if (PROTO_NAMES.some((n) => target.includes(n))) return 'prototype-named id';
  return 'other';
}

let fake: FakeAnthropic;
let server: TestServer;
let ids: Ids;
let keys: { own: string; other: string };

before(async () => {
  ({ fake, server } = await startServerWithFakeModel({ TRIBUNAL_MAX_BODY: '64kb', ...FUZZ_ROUTE_ENV }));
  const own = await server.demoUser();
  const other = await server.demoUser();
  keys = { own: own.api_key, other: other.api_key };
  const post = async (path: string, body: unknown) => {
    const res = await server.request('POST', path, { key: keys.own, body });
    assert.ok(res.status < 300, `${path}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  };
  const evaluator = await post('/v1/evaluators/', evaluatorBody({ visibility: 'private' }));
  const judge = await post('/v1/judges/', { name: 'Fuzz judge', intent: 'x', evaluator_ids: [evaluator.id, 'Clarity'], visibility: 'private' });
  const run = await post(`/v1/judges/${judge.id}/execute/`, { response: 'An answer.', tags: ['fuzz'] });
  const key = await post('/v1/api-keys/', { name: 'spare' });
  const base = { judgeId: judge.id, evaluatorId: evaluator.id, logId: run.execution_log_id };
  ids = {
    ...base,
    judgeName: judge.name,
    keyId: key.id ?? key.key?.id ?? 'key_x',
    extra: await makeFixtures(server, keys.own, base),
    round: await makeRoundFixtures(server, keys.own, base),
  };
});

after(async () => {
  await server?.close();
  await fake?.close();
});

test("another organization's ids of batch runs, annotations, calibration runs and models: a 404 on every route, and nothing changes", async () => {
  const otherDataset = await server.request('POST', '/v1/datasets/', { key: keys.other, body: { name: 'Theirs' } });
  assert.equal(otherDataset.status, 201);
  // Before the fuzz, which may delete or change these fixtures.
  const before = await server.request('GET', `/v1/annotations/${ids.extra.annotationId}/`, { key: keys.own });
  assert.equal(before.status, 200);
  for (const [method, path, body] of foreignRequests(ids.extra, ids, otherDataset.body.id)) {
    const res = await server.request(method, path, { key: keys.other, body });
    assert.equal(res.status, 404, `${method} ${path}: ${res.status} ${JSON.stringify(res.body)}`);
    assert.equal(res.body.code, 'not_found', `${method} ${path}`);
  }
  const { request_id: _r1, ...kept } = (await server.request('GET', `/v1/annotations/${ids.extra.annotationId}/`, { key: keys.own })).body;
  assert.deepEqual(kept, before.body);
  assert.equal((await server.request('GET', `/v1/models/${ids.extra.modelId}/`, { key: keys.own })).status, 200);
  assert.equal((await server.request('GET', `/v1/datasets/${otherDataset.body.id}/`, { key: keys.other })).body.item_count, 0);
});

test(`${COUNT} malformed REST and MCP requests: no 5xx, every error a problem+json or JSON-RPC error (seed ${SEED})`, async (t) => {
  t.diagnostic(`FUZZ_SEED=${SEED} FUZZ_COUNT=${COUNT} store=${process.env.TRIBUNAL_TEST_STORE ?? 'json'}`);
  console.log(`fuzz: FUZZ_SEED=${SEED} FUZZ_COUNT=${COUNT}`);
  const r = prng(SEED);
  // Drawn up front, in order, so that a seed gives the same requests whatever the timing.
  const requests = Array.from({ length: COUNT }, () => (r.chance(0.12) ? doorRequest(r, ids, keys) : r.chance(0.55) ? restRequest(r, ids, keys) : mcpRequest(r, ids, keys)));
  const failures: string[] = [];
  const byStatus = new Map<number, number>();
  const slowest: Array<[number, string]> = [];
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const i = next++;
      const req = requests[i];
      let res;
      // Framed with content-length: a GET with an unframed body is an HTTP-level error that Node answers before any route.
      const headers = req.body === undefined ? req.headers : { ...req.headers, 'content-length': String(Buffer.byteLength(req.body)) };
      const started = performance.now();
      try {
        res = await rawRequest(server.url + req.path, { method: req.method, headers, body: req.body });
        slowest.push([performance.now() - started, req.label.slice(0, 100)]);
      } catch (err) {
        failures.push(`#${i} ${req.label}: no answer (${(err as Error).message})`);
        continue;
      }
      byStatus.set(res.status, (byStatus.get(res.status) ?? 0) + 1);
      const why = violation(req, res);
      if (why)
        failures.push(
          `#${i} ${req.label.replace(/a{20,}/g, 'a…').slice(0, 400)} [${JSON.stringify(req.headers.authorization ?? '').slice(0, 20)}] body ${JSON.stringify(req.body ?? '').slice(0, 160)} -> ${why}`,
        );
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  if (process.env.FUZZ_TIMES) {
    const sums = new Map<string, [number, number]>();
    for (const [ms, label] of slowest) {
      const k = label.startsWith('MCP') ? label.replace(/^(MCP \w+ ).*?"name":"(\w+)".*$/, '$1$2').slice(0, 40) : label.replace(/^(\w+ \/[^/]+\/[^/?]+).*$/, '$1').slice(0, 40);
      const [n, total] = sums.get(k) ?? [0, 0];
      sums.set(k, [n + 1, total + ms]);
    }
    for (const [k, [n, total]] of [...sums].sort((a, b) => b[1][1] - a[1][1]).slice(0, 25)) t.diagnostic(`${total.toFixed(0)} ms in ${n} x ${k}`);
  }
  t.diagnostic(`statuses: ${JSON.stringify(Object.fromEntries([...byStatus].sort((a, b) => a[0] - b[0])))}`);
  assert.ok(
    [...byStatus.keys()].some((s) => s >= 400),
    'the fuzz reached the error paths',
  );
  assert.ok(
    [...byStatus.keys()].some((s) => s < 300),
    'and the success paths',
  );
  const classes = new Map<string, number>();
  for (const f of failures) classes.set(failureClass(f), (classes.get(failureClass(f)) ?? 0) + 1);
  const summary = [...classes].map(([c, n]) => `${n} x ${c}`).join('; ');
  assert.equal(failures.length, 0, `${failures.length} of ${COUNT} answers broke the rules (FUZZ_SEED=${SEED}): ${summary}\n${failures.slice(0, 400).join('\n')}`);
});
