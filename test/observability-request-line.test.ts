// The hand-built request line (src/observability/request-line.ts) is pino's line, byte for byte:
// random values with quotes, backslashes, control characters, unicode, lone surrogates and long
// strings; levels gated as pino gates them; and it is never used where redaction could apply.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { pino } from 'pino';
import { createLogger, REDACTED_PATHS } from '../src/observability/logger.ts';
import { redactionCouldMatch, requestLog, type RequestLineFields, type RequestLineLevel } from '../src/observability/request-line.ts';

function capture() {
  const lines: string[] = [];
  return { lines, destination: { write: (chunk: string) => void lines.push(chunk) } };
}

/** A small seeded generator, so a failure can be replayed. */
function random(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const PIECES = ['a', 'Z', '0', '/', ':', '-', ' ', '"', '\\', '\\"', '\n', '\t', '\u0000', '\u001f', '\u007f', 'é', '日本', '😀', '\ud800', '\udfff', '\u2028', '{', '}', ','];

function randomString(next: () => number): string {
  const pieces = next() < 0.1 ? 60 + Math.floor(next() * 60) : Math.floor(next() * 12); // sometimes over 100 characters
  let s = '';
  for (let i = 0; i < pieces; i++) s += PIECES[Math.floor(next() * PIECES.length)];
  return s;
}

function randomNumber(next: () => number): number {
  const r = next();
  if (r < 0.05) return Number.NaN;
  if (r < 0.1) return Number.POSITIVE_INFINITY;
  if (r < 0.12) return -0;
  if (r < 0.5) return Math.floor(next() * 600);
  return Math.round(next() * 1e6) / 10;
}

function randomFields(next: () => number): RequestLineFields {
  const optional = () => (next() < 0.4 ? undefined : randomString(next));
  return {
    req_id: randomString(next),
    method: randomString(next),
    route: randomString(next),
    status: randomNumber(next),
    latency_ms: randomNumber(next),
    org_id: optional(),
    code: optional(),
    trace_id: optional(),
  };
}

/** Both lines with their time taken out, and the times. */
function split(line: string): { rest: string; time: number } {
  const match = /^(\{"level":\d+),"time":(\d+)(,.*)$/s.exec(line);
  assert.ok(match, `a pino line: ${line}`);
  return { rest: match[1]! + match[3]!, time: Number(match[2]) };
}

test('the hand-built request line is the line pino writes, for random values and every level', async () => {
  const hand = capture();
  const viaPino = capture();
  const handLogger = await createLogger({ logLevel: 'info', logPretty: false }, hand.destination);
  const pinoLogger = await createLogger({ logLevel: 'info', logPretty: false }, viaPino.destination);
  const log = requestLog(handLogger);
  const next = random(20261127);
  const levels: RequestLineLevel[] = ['info', 'warn', 'error'];
  for (let i = 0; i < 3000; i++) {
    const fields = randomFields(next);
    const level = levels[i % 3]!;
    const before = Date.now();
    log(level, fields);
    pinoLogger[level](fields, 'request');
    const after = Date.now();
    assert.equal(hand.lines.length, i + 1, 'one write per line');
    const [h, p] = [split(hand.lines[i]!), split(viaPino.lines[i]!)];
    assert.equal(h.rest, p.rest, `case ${i}: ${JSON.stringify(fields)}`);
    assert.ok(h.time >= before && h.time <= after, 'the time is the time of the call');
  }
});

test('levels are gated as pino gates them, also after the level is changed', async () => {
  const out = capture();
  const logger = await createLogger({ logLevel: 'warn', logPretty: false }, out.destination);
  const log = requestLog(logger);
  const fields: RequestLineFields = { req_id: 'r1', method: 'GET', route: '/x', status: 200, latency_ms: 1.5 };
  log('info', fields);
  log('warn', { ...fields, status: 503, code: 'not_available' });
  assert.deepEqual(
    out.lines.map((l) => JSON.parse(l).level),
    [40],
  );
  logger.level = 'error';
  log('warn', fields);
  log('error', { ...fields, status: 500 });
  logger.level = 'silent';
  log('error', fields);
  assert.deepEqual(
    out.lines.map((l) => JSON.parse(l).level),
    [40, 50],
  );
});

test('no redaction path can match a key of the line, and one that could sends every line through pino', () => {
  assert.equal(redactionCouldMatch(REDACTED_PATHS), false, "the server's own paths leave the line's keys alone");
  for (const path of ['route', 'org_id.x', 'req_id[0]', '*.secret', '*', 'msg']) assert.equal(redactionCouldMatch([path]), true, path);
  assert.equal(redactionCouldMatch(['headers.route', 'authorization']), false);
});

test('a logger createLogger did not make, or a value of another type, is logged by pino itself', async () => {
  const out = capture();
  // pino's own redaction of a key the line has: honoured, since this logger is not one of createLogger's.
  const foreign = pino({ base: undefined, redact: { paths: ['route'], censor: '[redacted]' } }, out.destination);
  requestLog(foreign)('info', { req_id: 'r1', method: 'GET', route: '/secret', status: 200, latency_ms: 1 });
  assert.equal(JSON.parse(out.lines[0]!).route, '[redacted]');
  const child = (await createLogger({ logLevel: 'info', logPretty: false }, out.destination)).child({ part: 'x' });
  requestLog(child)('info', { req_id: 'r2', method: 'GET', route: '/', status: 200, latency_ms: 1 });
  assert.equal(JSON.parse(out.lines[1]!).part, 'x', "a child's bindings are kept");
  const mine = await createLogger({ logLevel: 'info', logPretty: false }, out.destination);
  requestLog(mine)('error', { req_id: 'r3', method: 'GET', route: '/', status: 500, latency_ms: 1, code: 42 as unknown as string });
  assert.match(out.lines[2]!, /"code":42,"msg":"request"\}\n$/);
});
