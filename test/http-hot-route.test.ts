// The judged call's hot route (src/http/hot-route.ts): it must answer exactly the requests the REST
// routes would have given to a run route, run the /v1 layers as the app runs them, and step aside
// for everything else.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import express, { type ErrorRequestHandler, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { type HotKind, hotRoutes, RUN_PATH } from '../src/http/hot-route.ts';
import { routes, runRoutes } from '../src/rest.ts';

/** The judged call's kind of hot route, with the given routes, layers and routers to step aside for. */
const runKind = (routes: HotKind['routes'], layers: HotKind['layers'], passBy: RegExp[]) => hotRoutes([{ pretest: RUN_PATH, routes, layers, passBy }]);

/** Dispatches a fake request; resolves with the handler that answered (or 'next' and what reached it). */
function dispatch(handler: RequestHandler, method: string, url: string): Promise<{ answered: string; out?: unknown; steps: string[] }> {
  const steps: string[] = [];
  const req = { method, url, headers: {}, steps } as unknown as Request;
  return new Promise((resolve) => {
    const res = { answer: (answered: string) => resolve({ answered, steps }) } as unknown as Response;
    handler(req, res, ((out?: unknown) => resolve({ answered: 'next', out, steps })) as NextFunction);
  });
}
const answer =
  (name: string): RequestHandler =>
  (_req, res) =>
    (res as unknown as { answer: (n: string) => void }).answer(name);
const step =
  (name: string, fail?: Error): RequestHandler =>
  (req, _res, next) => {
    (req as unknown as { steps: string[] }).steps.push(name);
    next(fail);
  };
const recover =
  (name: string): ErrorRequestHandler =>
  (err, req, _res, next) => {
    (req as unknown as { steps: string[] }).steps.push(`${name}(${(err as Error).message})`);
    next();
  };

test('the run routes are the judge and evaluator execute routes', () => {
  assert.deepEqual(
    runRoutes()
      .map((r) => r.path)
      .sort(),
    ['/v1/evaluators/:evaluator_id/execute/', '/v1/judges/:judge_id/execute/'],
  );
});

test('every path the hot route takes is one the REST table gives to the same run route', async () => {
  // All POST routes in table order, as the REST door's POST router tries them.
  const table = express.Router({ strict: false });
  for (const r of routes) if (r.method === 'post') table.post(r.path, answer(r.path));
  const hot = runKind(
    runRoutes().map((r) => ({ path: r.path, handler: answer(r.path) })),
    [],
    [],
  );
  // Every literal segment of the table as an id, in both cases, with and without the trailing slash and a query.
  const literals = new Set(routes.flatMap((r) => r.path.split('/')).filter((s) => s && !s.startsWith(':')));
  const ids = [...literals, 'jdg_0123abcd', 'Support%20replies', 'preset_clarity'];
  let taken = 0;
  for (const kind of ['judges', 'evaluators']) {
    for (const id of ids) {
      for (const url of [`/v1/${kind}/${id}/execute/`, `/v1/${kind}/${id}/execute`, `/V1/${kind.toUpperCase()}/${id}/EXECUTE/`, `/v1/${kind}/${id}/execute/?x=1`]) {
        const viaHot = await dispatch(hot, 'POST', url);
        if (viaHot.answered === 'next') continue;
        taken++;
        assert.equal((await dispatch(table, 'POST', url)).answered, viaHot.answered, url);
      }
    }
  }
  assert.ok(taken >= ids.length * 8 - 8, `only ${taken} paths taken`);
});

test('the hot route steps aside for other methods, other paths and the guarded routers', async () => {
  const hot = runKind([{ path: '/v1/judges/:judge_id/execute/', handler: answer('run') }], [[step('auth')]], [/\/openai(?:[/?]|$)/i, /^\/v1\/judges\/.*\/refine/i]);
  assert.equal((await dispatch(hot, 'POST', '/v1/judges/j1/execute/')).answered, 'run');
  for (const [method, url] of [
    ['GET', '/v1/judges/j1/execute/'],
    ['POST', '/v1/judges/j1/execute/more/'],
    ['POST', '/v1/judges/j1/'],
    ['POST', '/v1/evaluators/e1/execute/'], // not one of the given routes: the router does not match
    ['POST', '/v1/judges/openai/execute/'],
    ['POST', '/v1/judges/%FF/execute/'], // does not decode: the app's own way answers it, after authentication
    ['POST', '/v1/judges/j1/execute/?next=/refine'],
  ]) {
    const out = await dispatch(hot, method, url);
    assert.equal(out.answered, 'next', `${method} ${url}`);
    assert.deepEqual(out.steps, [], `${method} ${url} ran a layer before stepping aside`);
  }
});

test('an error leaving one /v1 layer skips the next layer, its error handlers included, as express does', async () => {
  const hot = runKind(
    [{ path: '/v1/judges/:judge_id/execute/', handler: answer('run') }],
    [
      [step('auth'), step('limit')],
      [step('body'), recover('bodyErrors')],
    ],
    [],
  );
  assert.deepEqual(await dispatch(hot, 'POST', '/v1/judges/j1/execute/'), { answered: 'run', steps: ['auth', 'limit', 'body'] });
  const failing = runKind([{ path: '/v1/judges/:judge_id/execute/', handler: answer('run') }], [[step('auth', new Error('boom'))], [step('body'), recover('bodyErrors')]], []);
  const out = await dispatch(failing, 'POST', '/v1/judges/j1/execute/');
  assert.equal(out.answered, 'next');
  assert.equal((out.out as Error).message, 'boom');
  assert.deepEqual(out.steps, ['auth']);
  // Within a layer, its own error handler still recovers.
  const recovered = runKind(
    [{ path: '/v1/judges/:judge_id/execute/', handler: answer('run') }],
    [[step('auth')], [step('body', new Error('bad json')), recover('bodyErrors')]],
    [],
  );
  assert.deepEqual(await dispatch(recovered, 'POST', '/v1/judges/j1/execute/'), { answered: 'run', steps: ['auth', 'body', 'bodyErrors(bad json)'] });
});

test('through a server: a run path that does not decode is refused as before, authentication first', async () => {
  const { startTestServer } = await import('./helpers/server.ts');
  const server = await startTestServer();
  try {
    const unauthenticated = await server.request('POST', '/v1/judges/%FF/execute/', { body: { response: 'x' } });
    assert.equal(unauthenticated.status, 401);
    const { api_key } = await server.demoUser();
    const malformed = await server.request('POST', '/v1/judges/%FF/execute/', { key: api_key, body: { response: 'x' } });
    assert.equal(malformed.status, 400);
    assert.match(malformed.body.detail, /percent-encoding/);
    const unknownField = await server.request('POST', '/v1/judges/jdg_0123/execute/', { key: api_key, body: { response: 'x', contex: ['y'] } });
    assert.equal(unknownField.status, 400);
    assert.match(JSON.stringify(unknownField.body), /unknown field contex; did you mean contexts\?/);
  } finally {
    await server.close();
  }
});

test('each kind of hot route runs its own layers and steps aside for the routers before its own', async () => {
  const hot = hotRoutes([
    {
      pretest: RUN_PATH,
      routes: [{ path: '/v1/judges/:judge_id/execute/', handler: answer('run') }],
      layers: [[step('v1Auth')], [step('body')]],
      passBy: [/^\/otel\/v1\/traces/i],
    },
    { pretest: /^\/otel\/v1\/traces\/?(?:\?|$)/i, routes: [{ path: '/otel/v1/traces', handler: answer('traces') }], layers: [[step('otlpAuth')]], passBy: [/^\/mcp/i] },
  ]);
  assert.deepEqual(await dispatch(hot, 'POST', '/v1/judges/j1/execute/'), { answered: 'run', steps: ['v1Auth', 'body'] });
  for (const url of ['/otel/v1/traces', '/OTEL/V1/TRACES/', '/otel/v1/traces?x=1'])
    assert.deepEqual(await dispatch(hot, 'POST', url), { answered: 'traces', steps: ['otlpAuth'] }, url);
  for (const [method, url] of [
    ['GET', '/otel/v1/traces'],
    ['PUT', '/otel/v1/traces'],
    ['POST', '/otel/v1/traces/more'],
    ['POST', '/otel/v1/logs'],
  ]) {
    const out = await dispatch(hot, method, url);
    assert.equal(out.answered, 'next', `${method} ${url}`);
    assert.deepEqual(out.steps, [], `${method} ${url} ran a layer before stepping aside`);
  }
  assert.throws(() => hotRoutes([{ pretest: /x/g, routes: [], layers: [], passBy: [] }]), /keeps state/);
});
