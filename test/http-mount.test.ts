// The door routers createServer guards by path (src/http/mount.ts): every path one of them answers
// must pass its guard, or that door would answer 404; and a judged call must pass none of them.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { buildServices, stopServices } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { inSeries, type GuardedRouter } from '../src/http/mount.ts';
import { createServer } from '../src/server.ts';
import type { Services } from '../src/tool.ts';
import type { ErrorRequestHandler, NextFunction, Request, RequestHandler, Response } from 'express';
import { openTestStore, tempDir } from './helpers/server.ts';

type Layer = { handle: unknown; route?: { path: string | string[] } };

let services: Services;
let dataDir: string;
let guarded: GuardedRouter[];

before(async () => {
  dataDir = tempDir();
  const config = loadConfig({ TRIBUNAL_DATA_DIR: dataDir, PORT: '0' });
  services = await buildServices(config, await openTestStore(dataDir));
  const app = createServer(services) as unknown as { router: { stack: Layer[] } };
  guarded = app.router.stack.map((l) => l.handle).filter((h): h is GuardedRouter => typeof h === 'function' && 'paths' in h && 'router' in h);
});
after(async () => {
  await stopServices(services, 1000);
  await services.store.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** The paths a route pattern answers, as a client may send them: ids filled in, any case, with or without the trailing slash and a query. */
function samplesOf(pattern: string): string[] {
  const filled = pattern.replace(/:[A-Za-z_]+/g, 'jdg_0123abcd');
  const bare = filled.replace(/\/$/, '');
  return [filled, bare, `${bare}/`, filled.toUpperCase(), `${filled}?limit=1`];
}

test('every door router is guarded, and every route of each passes its guard', () => {
  // demo user, OTLP traces and logs, the judge proxy, dataset streams, judge files, uploads, refine streams
  assert.equal(guarded.length, 8, 'the guarded door routers of createServer');
  let routes = 0;
  for (const g of guarded) {
    for (const layer of (g.router as unknown as { stack: Layer[] }).stack) {
      if (!layer.route) continue;
      for (const pattern of [layer.route.path].flat()) {
        routes++;
        for (const sample of samplesOf(pattern)) assert.ok(g.paths.test(sample), `${sample} (route ${pattern}) does not pass its guard ${g.paths}`);
      }
    }
  }
  assert.ok(routes >= 14, `only ${routes} routes found behind the guards`);
});

test('a judged call and the REST reads pass no guard', () => {
  for (const path of ['/v1/judges/jdg_1/execute/', '/v1/evaluators/preset_clarity/execute/', '/v1/judges/', '/v1/logs/?limit=5', '/healthz']) {
    const entered = guarded.filter((g) => g.paths.test(path)).map((g) => String(g.paths));
    assert.deepEqual(entered, [], `${path} enters ${entered.join(', ')}`);
  }
});

/** Runs a series on a fake request; resolves with what reached the router's next and the steps taken. */
function runSeries(...handlers: Array<RequestHandler | ErrorRequestHandler>): Promise<{ out: unknown; steps: string[] }> {
  const steps: string[] = [];
  const req = { steps } as unknown as Request;
  return new Promise((resolve) => inSeries(...handlers)(req, {} as Response, ((out?: unknown) => resolve({ out, steps })) as NextFunction));
}
const step =
  (name: string): RequestHandler =>
  (req, _res, next) => {
    (req as unknown as { steps: string[] }).steps.push(name);
    next();
  };
const recover =
  (name: string): ErrorRequestHandler =>
  (err, req, _res, next) => {
    (req as unknown as { steps: string[] }).steps.push(`${name}(${(err as Error).message})`);
    next();
  };

test('inSeries runs its middlewares in order and skips error handlers while nothing failed', async () => {
  assert.deepEqual(await runSeries(step('a'), recover('r'), step('b')), { out: undefined, steps: ['a', 'b'] });
});

test('inSeries passes a failure, thrown, rejected or given to next, to the next error handler only', async () => {
  const thrower: RequestHandler = () => {
    throw new Error('thrown');
  };
  assert.deepEqual((await runSeries(step('a'), thrower, step('skipped'), recover('r'), step('b'))).steps, ['a', 'r(thrown)', 'b']);
  const rejecter: RequestHandler = async () => {
    throw new Error('rejected');
  };
  assert.deepEqual((await runSeries(rejecter, step('skipped'), recover('r'))).steps, ['r(rejected)']);
  const failing: RequestHandler = (_req, _res, next) => next(new Error('given'));
  const unhandled = await runSeries(failing, step('skipped'));
  assert.equal((unhandled.out as Error).message, 'given', 'no error handler: the failure goes on to the router');
  assert.deepEqual(unhandled.steps, []);
});
