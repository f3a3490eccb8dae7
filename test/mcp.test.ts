// /mcp over real HTTP with the SDK's own client: instructions, the 14 tools, every tool called,
// failures as isError results, auth, the disabled endpoint, DNS-rebinding protection and limits.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createOrganization } from '../src/domain/orgs.ts';
import { loadConfig } from '../src/config.ts';
import { checkHostAndOrigin, hostPolicy } from '../src/mcp.ts';
import { startFakeAnthropic, type FakeAnthropic } from './helpers/fake-anthropic.ts';
import { connectMcp, initializeBody, MCP_POST_HEADERS, rawRequest, type McpTestClient } from './helpers/mcp-client.ts';
import { startTestServer, type TestServer } from './helpers/server.ts';

const TOOL_NAMES = [
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

describe('MCP endpoint with the SDK client', () => {
  let fake: FakeAnthropic;
  let server: TestServer;
  let demo: Awaited<ReturnType<TestServer['demoUser']>>;
  let mcp: McpTestClient;

  before(async () => {
    fake = await startFakeAnthropic();
    server = await startTestServer({ ANTHROPIC_API_KEY: 'test-dummy-key', ANTHROPIC_BASE_URL: fake.url, TRIBUNAL_MODEL_RETRIES: '0' });
    demo = await server.demoUser();
    mcp = await connectMcp(server.url, demo.api_key);
  });
  after(async () => {
    await mcp?.close();
    await server?.close();
    await fake?.close();
  });

  test('initialize returns instructions that teach the concepts, the loop and who deletes', async () => {
    const info = mcp.client.getServerVersion();
    assert.equal(info?.name, 'tribunal');
    const caps = mcp.client.getServerCapabilities();
    assert.ok(caps?.tools, 'tools capability');
    // issue 26: the list never changes and GET /mcp (the stream a notification would need) is 405.
    assert.equal(caps?.tools?.listChanged, false);
    assert.equal((await rawRequest(`${server.url}/mcp`, { method: 'GET', headers: { accept: 'text/event-stream', authorization: `Bearer ${demo.api_key}` } })).status, 405);
    assert.equal(caps?.prompts, undefined);
    assert.equal(caps?.resources, undefined);
    const instructions = mcp.client.getInstructions() ?? '';
    for (const concept of ['Evaluator', 'Judge', 'Project', 'Execution log', 'justification', 'from 0 to 1', 'higher is better']) {
      assert.ok(instructions.includes(concept), `instructions mention ${concept}`);
    }
    const loop = ['list_judges', 'get_judge', 'run_judge', 'generate_judge', 'create_judge', 'create_evaluator'].map((t) => instructions.indexOf(t));
    assert.ok(
      loop.every((i) => i >= 0),
      'instructions name the tools of the loop',
    );
    assert.ok(loop[0] < loop[1] && loop[1] < loop[2], 'find, inspect, run: in that order');
    assert.match(instructions, /no delete tools/i);
    assert.match(instructions, /person outside MCP/);
  });

  test('lists exactly the 14 tools, each with a title, description, annotations and an output schema', async () => {
    const { tools } = await mcp.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), [...TOOL_NAMES].sort());
    for (const tool of tools) {
      assert.ok(tool.title && tool.title.length > 3, `${tool.name} title`);
      assert.ok((tool.description ?? '').length > 80, `${tool.name} description`);
      assert.equal(tool.inputSchema.type, 'object');
      assert.equal(tool.outputSchema?.type, 'object', `${tool.name} output schema`);
      const a = tool.annotations!;
      assert.equal(a.destructiveHint, false, `${tool.name} destructiveHint`);
      for (const hint of ['readOnlyHint', 'idempotentHint', 'openWorldHint'] as const) assert.equal(typeof a[hint], 'boolean', `${tool.name} ${hint}`);
    }
    const byName = new Map(tools.map((t) => [t.name, t]));
    assert.equal(byName.get('list_judges')!.annotations!.readOnlyHint, true);
    assert.equal(byName.get('run_judge')!.annotations!.readOnlyHint, false);
    assert.equal(byName.get('run_judge')!.annotations!.openWorldHint, true, 'run_judge calls the judge model');
    assert.ok(!tools.some((t) => /delete/.test(t.name)), 'no delete tools');
    const runJudge = byName.get('run_judge')!.inputSchema.properties as Record<string, unknown>;
    assert.ok(runJudge.judge_id && runJudge.judge_name, 'run_judge takes judge_id or judge_name');
    const runEvaluator = byName.get('run_evaluator')!.inputSchema.properties as Record<string, unknown>;
    assert.ok(runEvaluator.evaluator_id && runEvaluator.evaluator_name, 'run_evaluator takes evaluator_id or evaluator_name');
  });

  test('every tool works end to end; results carry structuredContent and the same JSON as text', async () => {
    const called = new Set<string>();
    const ok = async (name: string, args: Record<string, unknown> = {}) => {
      const result = await mcp.call(name, args);
      assert.ok(!result.isError, `${name} failed: ${result.text}`);
      assert.deepEqual(JSON.parse(result.text), result.structuredContent, `${name}: text and structuredContent agree`);
      called.add(name);
      return result.json;
    };

    const projects = await ok('list_projects');
    assert.equal(projects.results.length, 1);
    assert.equal(projects.results[0].is_default, true);

    const presets = await ok('list_evaluators', { is_preset: true, limit: 200 });
    assert.ok(presets.results.length >= 30, 'presets are listed');
    const relevance = await ok('get_evaluator', { evaluator_name: 'Answer Relevance' });
    assert.equal(relevance.is_preset, true);
    assert.ok(relevance.rubric.length > 50);

    const evaluator = await ok('create_evaluator', {
      name: 'Polite refusal',
      intent: 'Checks that refusals are polite and offer an alternative.',
      rubric: 'HIGH: polite and offers an alternative. MIDDLE: polite only. LOW: curt or rude.',
    });
    assert.equal(evaluator.version, 1);
    const edited = await ok('update_evaluator', { evaluator_id: evaluator.id, rubric: 'HIGH: polite, explains why, offers an alternative. LOW: curt.' });
    assert.equal(edited.version, 2);

    const judge = await ok('create_judge', {
      name: 'Support answers',
      intent: 'Answers of a help-desk assistant to customer questions.',
      evaluator_ids: ['Answer Relevance', evaluator.id],
    });
    assert.deepEqual(
      judge.evaluators.map((e: { name: string }) => e.name),
      ['Answer Relevance', 'Polite refusal'],
    );
    const renamed = await ok('update_judge', { judge_id: judge.id, stage: 'final answer' });
    assert.equal(renamed.stage, 'final answer');

    const judges = await ok('list_judges', { search: 'Support' });
    assert.ok(judges.results.some((j: { id: string }) => j.id === judge.id));
    const full = await ok('get_judge', { judge_name: 'Support answers' });
    assert.equal(full.evaluators.length, 2);
    assert.ok(full.evaluators[0].rubric, 'get_judge returns each evaluator in full');

    fake.resetStats();
    const run = await ok('run_judge', {
      judge_name: 'Support answers',
      request: 'Can you reset my password?',
      response: 'Sure: open Settings, then Security, then Reset password.',
      tags: ['mcp-test'],
    });
    assert.equal(run.evaluator_results.length, 2);
    for (const r of run.evaluator_results) {
      assert.ok(r.score >= 0 && r.score <= 1, 'score 0..1');
      assert.ok(r.justification, 'a justification');
    }
    assert.equal(fake.requests.length, 2, 'one judge-model call per evaluator');

    const single = await ok('run_evaluator', { evaluator_id: relevance.id, request: 'Hi?', response: 'Hello! How can I help?' });
    assert.equal(single.evaluator_results.length, 1);

    const logs = await ok('list_execution_logs', { tags: ['mcp-test'] });
    assert.deepEqual(
      logs.results.map((l: { id: string }) => l.id),
      [run.execution_log_id],
    );
    const log = await ok('get_execution_log', { log_id: run.execution_log_id });
    assert.equal(log.judge_id, judge.id);
    assert.equal(log.response, 'Sure: open Settings, then Security, then Reset password.');

    // generate_judge: a judge when generation is available, else a clean isError result.
    const generated = await mcp.call('generate_judge', {
      intent: 'A help-desk assistant answers customer questions about billing and passwords. Evaluate its final answers for relevance and tone.',
      reasoning_effort: 'off',
    });
    called.add('generate_judge');
    if (generated.isError) {
      assert.match(generated.text, /^generate_judge failed \((not_available|model_unavailable|validation_error)\): \S/);
    } else {
      assert.ok(generated.json.judge_id || generated.json.error_code, 'a judge or a follow-up question');
    }

    assert.deepEqual([...called].sort(), [...TOOL_NAMES].sort(), 'every tool was called');
  });

  test('a judge that needs contexts without them: isError saying which evaluator needs what', async () => {
    const judge = await mcp.call('create_judge', { name: 'RAG answers', intent: 'Grounded answers from a knowledge base.', evaluator_ids: ['Faithfulness'] });
    assert.ok(!judge.isError, judge.text);
    fake.resetStats();
    const result = await mcp.call('run_judge', { judge_id: judge.json.id, response: 'Paris is the capital of France.' });
    assert.equal(result.isError, true);
    assert.match(result.text, /evaluator Faithfulness needs `contexts`/);
    assert.match(result.text, /again/, 'says what to do next');
    assert.equal(result.structuredContent, undefined);
    assert.equal(fake.requests.length, 0, 'nothing was sent to the judge model');
  });

  test('bad arguments: isError results that name the fields to fix', async () => {
    const noResponse = await mcp.call('run_judge', { judge_name: 'Support answers' });
    assert.equal(noResponse.isError, true);
    assert.match(noResponse.text, /response/);

    const wrongType = await mcp.call('list_judges', { limit: 'ten' });
    assert.equal(wrongType.isError, true);
    assert.match(wrongType.text, /limit/);

    const overLimit = await mcp.call('list_judges', { limit: 500 });
    assert.equal(overLimit.isError, true);
    assert.match(overLimit.text, /list_judges failed \(validation_error\)/);
    assert.match(overLimit.text, /- limit: at most 200/);

    const neither = await mcp.call('get_judge', {});
    assert.equal(neither.isError, true);
    assert.match(neither.text, /judge_id or judge_name/);
    const problem = JSON.parse((neither.content[1] as { text: string }).text);
    assert.equal(problem.code, 'validation_error');

    const unknownTool = await mcp.client
      .callTool({ name: 'delete_judge', arguments: { judge_id: 'x' } })
      .catch((e: Error) => ({ isError: true, content: [{ type: 'text', text: e.message }] }));
    assert.equal(unknownTool.isError, true);
    assert.match(JSON.stringify(unknownTool.content), /delete_judge/);
  });

  test('ids of another organization: not found, and public ones of others are not editable', async () => {
    const other = await createOrganization(server.store, { name: 'Other org', isDemo: false });
    const otherMcp = await connectMcp(server.url, other.api_key);
    try {
      const privateJudge = await otherMcp.call('create_judge', { name: 'Private judge', intent: 'Internal.', evaluator_ids: ['Clarity'] });
      assert.ok(!privateJudge.isError, privateJudge.text);
      assert.equal(privateJudge.json.visibility, 'private');
      const privateRun = await otherMcp.call('run_evaluator', { evaluator_name: 'Clarity', response: 'Clear enough.' });
      assert.ok(!privateRun.isError, privateRun.text);

      for (const [tool, args] of [
        ['get_judge', { judge_id: privateJudge.json.id }],
        ['run_judge', { judge_id: privateJudge.json.id, response: 'x' }],
        ['update_judge', { judge_id: privateJudge.json.id, intent: 'hijacked' }],
        ['get_execution_log', { log_id: privateRun.json.execution_log_id }],
      ] as const) {
        const result = await mcp.call(tool, args);
        assert.equal(result.isError, true, `${tool} on a foreign id`);
        assert.match(result.text, new RegExp(`^${tool} failed \\(not_found\\)`));
        assert.match(result.text, /list_/, `${tool}: says where to find valid ids`);
      }
      // The demo org's judges are public: readable by the other org, not editable.
      const demoJudge = await otherMcp.call('get_judge', { judge_name: 'Support answers' });
      assert.ok(!demoJudge.isError, demoJudge.text);
      const edit = await otherMcp.call('update_judge', { judge_id: demoJudge.json.id, intent: 'hijacked' });
      assert.equal(edit.isError, true);
      assert.match(edit.text, /permission_denied/);
    } finally {
      await otherMcp.close();
    }
  });

  test('the Api-Key scheme works like Bearer', async () => {
    const viaApiKey = await connectMcp(server.url, demo.api_key, { scheme: 'Api-Key', listTools: false });
    try {
      const result = await viaApiKey.call('list_projects');
      assert.ok(!result.isError);
      assert.equal(result.json.results[0].id, demo.project_id);
    } finally {
      await viaApiKey.close();
    }
  });

  test('without a valid key: 401 with WWW-Authenticate before any MCP processing', async () => {
    for (const authorization of [undefined, 'Bearer trb_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'Bearer not-a-key', 'Basic dXNlcjpwYXNz']) {
      for (const method of ['POST', 'GET', 'DELETE']) {
        const res = await rawRequest(`${server.url}/mcp`, {
          method,
          headers: { ...MCP_POST_HEADERS, ...(authorization ? { authorization } : {}) },
          body: method === 'POST' ? initializeBody() : undefined,
        });
        assert.equal(res.status, 401, `${method} with ${authorization ?? 'no key'}`);
        assert.match(String(res.headers['www-authenticate']), /Bearer/);
        assert.equal(res.json.code, 'not_authenticated');
        assert.equal(res.headers['mcp-session-id'], undefined);
      }
    }
    // The SDK client surfaces the 401 as a connection failure.
    await assert.rejects(connectMcp(server.url, 'trb_0123456789abcdef_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'), /401|Unknown API key|Unauthorized/);
  });

  test('stateless transport: no session id, JSON answers, GET and DELETE are 405', async () => {
    const auth = { authorization: `Bearer ${demo.api_key}` };
    const init = await rawRequest(`${server.url}/mcp`, { headers: { ...MCP_POST_HEADERS, ...auth }, body: initializeBody() });
    assert.equal(init.status, 200);
    assert.equal(init.headers['mcp-session-id'], undefined);
    assert.match(String(init.headers['content-type']), /application\/json/);
    assert.equal(init.json.result.serverInfo.name, 'tribunal');
    // A request with no initialize before it, as another instance behind a load balancer would get it.
    const list = await rawRequest(`${server.url}/mcp`, {
      headers: { ...MCP_POST_HEADERS, ...auth, 'mcp-protocol-version': init.json.result.protocolVersion },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'list_projects', arguments: {} } }),
    });
    assert.equal(list.status, 200);
    assert.equal(list.json.id, 7);
    assert.equal(list.json.result.structuredContent.results[0].id, demo.project_id);
    for (const method of ['GET', 'DELETE']) {
      const res = await rawRequest(`${server.url}/mcp`, { method, headers: { accept: 'text/event-stream', ...auth } });
      assert.equal(res.status, 405, method);
      assert.equal(res.headers.allow, 'POST');
    }
    const badJson = await rawRequest(`${server.url}/mcp`, { headers: { ...MCP_POST_HEADERS, ...auth }, body: '{"jsonrpc": "2.0", ' });
    assert.equal(badJson.status, 400);
    assert.equal(badJson.json.error.code, -32700);
  });

  test('a body over TRIBUNAL_MAX_BODY is refused with 413', async () => {
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: 'run_judge', arguments: { judge_name: 'Support answers', response: 'x'.repeat(server.config.limits.bodyBytes) } },
    });
    const res = await rawRequest(`${server.url}/mcp`, { headers: { ...MCP_POST_HEADERS, authorization: `Bearer ${demo.api_key}` }, body: huge });
    assert.equal(res.status, 413);
    assert.equal(res.json.code, 'payload_too_large');
  });

  test('DNS-rebinding protection: a foreign Host or Origin is refused, loopback ones are served', async () => {
    const port = new URL(server.url).port;
    const headers = { ...MCP_POST_HEADERS, authorization: `Bearer ${demo.api_key}` };
    const evilHost = await rawRequest(`${server.url}/mcp`, { headers: { ...headers, host: `evil.example.com:${port}` }, body: initializeBody() });
    assert.equal(evilHost.status, 403);
    assert.match(evilHost.json.detail, /TRIBUNAL_ALLOWED_HOSTS/);
    const evilOrigin = await rawRequest(`${server.url}/mcp`, { headers: { ...headers, origin: 'http://evil.example.com' }, body: initializeBody() });
    assert.equal(evilOrigin.status, 403);
    assert.match(evilOrigin.json.detail, /TRIBUNAL_ALLOWED_ORIGINS/);
    // Refused before authentication: no key needed to be told no.
    const evilNoKey = await rawRequest(`${server.url}/mcp`, { headers: { ...MCP_POST_HEADERS, host: 'evil.example.com' }, body: initializeBody() });
    assert.equal(evilNoKey.status, 403);
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'localhost']) {
      const res = await rawRequest(`${server.url}/mcp`, { headers: { ...headers, host, origin: `http://${host}` }, body: initializeBody() });
      assert.equal(res.status, 200, host);
    }
  });

  test('per-key rate limit answers 429 with Retry-After', async () => {
    const limited = await startTestServer({ TRIBUNAL_RATE_LIMIT: '2' });
    try {
      const { api_key } = await limited.demoUser();
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 3; i++) {
        last = await rawRequest(`${limited.url}/mcp`, { headers: { ...MCP_POST_HEADERS, authorization: `Bearer ${api_key}` }, body: initializeBody() });
        statuses.push(last.status);
      }
      assert.deepEqual(statuses, [200, 200, 429]);
      assert.ok(Number(last!.headers['retry-after']) >= 1);
      assert.equal(last!.json.code, 'rate_limited');
      // REST and MCP share one counter per key: the key's budget is spent for REST too.
      const rest = await limited.request('GET', '/v1/projects/', { key: api_key });
      assert.equal(rest.status, 429);
    } finally {
      await limited.close();
    }
  });
});

describe('MCP endpoint configuration', () => {
  test('without a judge model, run tools fail with isError that says the operator must configure one', async () => {
    const server = await startTestServer();
    try {
      const { api_key } = await server.demoUser();
      const mcp = await connectMcp(server.url, api_key);
      const result = await mcp.call('run_evaluator', { evaluator_name: 'Clarity', response: 'Paris is the capital of France.' });
      assert.equal(result.isError, true);
      assert.match(result.text, /model_unavailable/);
      assert.match(result.text, /ANTHROPIC_API_KEY/);
      assert.match(result.text, /Retrying will not help/);
      assert.doesNotMatch(result.text, /retry the same call/);
      await mcp.close();
    } finally {
      await server.close();
    }
  });

  test('MCP_ENABLED=false: every method on /mcp answers 404, with or without a key', async () => {
    const server = await startTestServer({ MCP_ENABLED: 'false' });
    try {
      const { api_key } = await server.demoUser();
      for (const method of ['POST', 'GET', 'DELETE', 'PUT', 'PATCH', 'OPTIONS']) {
        for (const authorization of [undefined, `Bearer ${api_key}`]) {
          const res = await rawRequest(`${server.url}/mcp`, {
            method,
            headers: { ...MCP_POST_HEADERS, ...(authorization ? { authorization } : {}) },
            body: method === 'POST' ? initializeBody() : undefined,
          });
          assert.equal(res.status, 404, `${method} ${authorization ? 'with' : 'without'} key`);
          if (method !== 'OPTIONS') assert.match(res.json.detail, /MCP_ENABLED=false/);
        }
      }
      // REST keeps working.
      assert.equal((await server.request('GET', '/v1/projects/', { key: api_key })).status, 200);
    } finally {
      await server.close();
    }
  });

  test('TRIBUNAL_ALLOWED_HOSTS decides which Host names are served', async () => {
    const server = await startTestServer({ TRIBUNAL_ALLOWED_HOSTS: 'mcp.internal, 10.0.0.5:8787' });
    try {
      const { api_key } = await server.demoUser();
      const headers = { ...MCP_POST_HEADERS, authorization: `Bearer ${api_key}` };
      const status = async (host: string, origin?: string) =>
        (await rawRequest(`${server.url}/mcp`, { headers: { ...headers, host, ...(origin ? { origin } : {}) }, body: initializeBody() })).status;
      assert.equal(await status('mcp.internal'), 200);
      assert.equal(await status('mcp.internal:443', 'https://mcp.internal'), 200);
      assert.equal(await status('10.0.0.5:8787'), 200);
      assert.equal(await status('10.0.0.5:9999'), 403, 'an entry with a port matches that port only');
      assert.equal(await status(new URL(server.url).host), 403, 'an explicit list replaces the loopback defaults');
      assert.equal(await status('mcp.internal', 'https://evil.example.com'), 403);
    } finally {
      await server.close();
    }
  });

  test('host policy defaults: loopback, the bound HOST and the public URL; origins follow hosts unless listed', () => {
    const policy = hostPolicy(loadConfig({ HOST: '192.168.1.20', TRIBUNAL_PUBLIC_URL: 'https://tribunal.example.com' }));
    assert.equal(checkHostAndOrigin(policy, 'tribunal.example.com', 'https://tribunal.example.com'), null);
    assert.equal(checkHostAndOrigin(policy, '192.168.1.20:8787', undefined), null);
    assert.equal(checkHostAndOrigin(policy, 'LOCALHOST:8787', 'http://localhost:3000'), null);
    assert.match(checkHostAndOrigin(policy, 'evil.example.com', undefined)!, /not allowed/);
    assert.match(checkHostAndOrigin(policy, undefined, undefined)!, /no Host/);
    assert.match(checkHostAndOrigin(policy, 'localhost', 'null')!, /Origin/);
    const wildcardBind = hostPolicy(loadConfig({ HOST: '0.0.0.0' }));
    assert.match(checkHostAndOrigin(wildcardBind, '0.0.0.0:8787', undefined)!, /not allowed/, 'a wildcard bind address is not a host name');
    const anyHost = hostPolicy(loadConfig({ TRIBUNAL_ALLOWED_HOSTS: '*' }));
    assert.equal(checkHostAndOrigin(anyHost, 'whatever.example', 'https://whatever.example'), null);
    const origins = hostPolicy(loadConfig({ TRIBUNAL_ALLOWED_ORIGINS: 'https://app.example.com' }));
    assert.equal(checkHostAndOrigin(origins, 'localhost', 'https://app.example.com/'), null);
    assert.match(checkHostAndOrigin(origins, 'localhost', 'http://localhost:3000')!, /Origin/, 'an explicit origin list replaces the default');
  });
});
