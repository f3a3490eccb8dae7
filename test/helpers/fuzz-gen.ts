// The seeded generators of test/fuzz.test.ts: a PRNG and the malformed values, bodies, query strings,
// cursors and Authorization headers a client with a bug (or an attacker) sends. Shared with the
// route tables of the fuzz (test/helpers/fuzz-routes.ts) so that every route draws from the same mix.

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function prng(seed: number) {
  let a = seed;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  return { next, int, pick, chance: (p: number) => next() < p };
}
export type Rng = ReturnType<typeof prng>;

export const PROTO_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__', 'isPrototypeOf'];
export const ODD_TEXT = [
  '',
  ' ',
  '\u0000',
  '\u202etxt.exe',
  '\u200b\u200d\ufeff',
  '😀👩‍👩‍👧',
  '\ud800',
  'a'.repeat(5000),
  '../../etc/passwd',
  '<script>alert(1)</script>',
  "'; DROP TABLE judges; --",
  '%s%n%x',
  '\r\nX-Injected: 1',
  'Ω≈ç√∫',
  'null',
  'undefined',
  '0x1F',
  '-0',
  '1e309',
];
// biome-ignore lint/correctness/noPrecisionLoss: a literal past 2^53 is the point of this fuzz value
export const HUGE_NUMBERS = [1e308, -1e308, 2 ** 53 + 1, -(2 ** 63), 1e-320, 0, -0, 99999999999999999999, 0.1 + 0.2];
export const BAD_PERCENT = ['%FF', '%E0%A4%A', '%', '%zz', '%C0%AF', '%ED%A0%80', '%00', '%2e%2e', '%252F', '%u0041'];
export const JUNK_TIMESTAMPS = [
  '0000-01-01T00:00:00.000Z',
  '-000001-01-01T00:00:00.000Z',
  '+275760-09-13T00:00:00.000Z',
  '2026-13-45T99:99:99Z',
  'yesterday',
  '',
  '1970-01-01T00:00:00Z',
];

/** encodeURIComponent, except that a lone surrogate (which it refuses) goes out as its raw UTF-8-ish bytes. */
export function enc(s: string): string {
  try {
    return encodeURIComponent(s);
  } catch {
    return '%ED%A0%80';
  }
}

export function text(r: Rng): string {
  return r.chance(0.5) ? r.pick(ODD_TEXT) : r.pick(PROTO_NAMES);
}

/** Any JSON value, with a bias to the shapes that break parsers and validators. */
export function junkValue(r: Rng, depth = 0): unknown {
  const k = r.int(depth > 3 ? 5 : 8);
  switch (k) {
    case 0:
      return r.pick(HUGE_NUMBERS);
    case 1:
      return text(r);
    case 2:
      return r.pick([true, false, null]);
    case 3:
      return r.int(3) - 1;
    case 4:
      return r.pick(PROTO_NAMES);
    case 5:
      return Array.from({ length: r.int(4) }, () => junkValue(r, depth + 1));
    default:
      return junkObject(r, depth + 1);
  }
}

export function junkObject(r: Rng, depth = 0): Record<string, unknown> {
  const o: Record<string, unknown> = {};
  for (let i = r.int(4); i > 0; i--)
    Object.defineProperty(o, r.chance(0.4) ? r.pick(PROTO_NAMES) : text(r).slice(0, 40), { value: junkValue(r, depth), enumerable: true, configurable: true, writable: true });
  return o;
}

export function randomText(r: Rng, length: number): string {
  return Array.from({ length }, () => String.fromCharCode(33 + r.int(94))).join('');
}

/** A plausible body with one field broken: what a client with a bug sends. */
export function mutate(r: Rng, base: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  const keys = Object.keys(out);
  switch (r.int(5)) {
    case 0:
      if (keys.length) out[r.pick(keys)] = junkValue(r);
      break;
    case 1:
      if (keys.length) delete out[r.pick(keys)];
      break;
    case 2:
      Object.defineProperty(out, r.pick(PROTO_NAMES), { value: junkValue(r), enumerable: true, configurable: true, writable: true });
      break;
    case 3:
      // Random letters: a repeated character would compress below PostgreSQL's index-row limit.
      out.tags = r.pick([[randomText(r, 4000)], Array.from({ length: 200 }, () => randomText(r, 40)), 'prod', [1, 2], [r.pick(PROTO_NAMES)]]);
      break;
    default:
      out[text(r).slice(0, 20) || 'extra'] = junkValue(r);
  }
  return out;
}

const QUERY_FIELDS = [
  'limit',
  'cursor',
  'project_id',
  'search',
  'include_public',
  'judge_id',
  'evaluator_id',
  'min_score',
  'max_score',
  'min_cost',
  'max_cost',
  'tags',
  'date_from',
  'date_to',
  'version',
  ...PROTO_NAMES,
];

/**
 * A query string of up to 3 broken parameters (plus, sometimes, a forged cursor). `fields` are the
 * route's own parameters, drawn as often as the common ones; `plausible` are values that pass
 * validation (an existing id, a status), so that one broken parameter is checked beside valid ones.
 */
export function query(r: Rng, fields: string[] = [], plausible: string[] = []): string {
  const params: string[] = [];
  const names = [...QUERY_FIELDS, ...fields, ...fields];
  for (let i = r.int(4); i > 0; i--) {
    const field = r.pick(names);
    const value = r.pick([
      () => (plausible.length ? enc(r.pick(plausible)) : '1'),
      () => String(r.pick(HUGE_NUMBERS)),
      () => r.pick(['-1', '0', '201', '1.5', 'abc', 'true', 'NaN', 'Infinity', '1e3', ' 5 ']),
      () => enc(r.pick(ODD_TEXT)),
      () => r.pick(BAD_PERCENT),
      () => forgedCursor(r),
      () => enc(r.pick(JUNK_TIMESTAMPS)),
      () => r.pick(PROTO_NAMES),
      () => Array.from({ length: 60 }, (_, j) => `t${j}`).join(','),
    ])();
    params.push(`${r.chance(0.1) ? r.pick(BAD_PERCENT) : field}=${field === 'cursor' && r.chance(0.8) ? forgedCursor(r) : value}`);
  }
  if (r.chance(0.15)) params.push(`cursor=${forgedCursor(r)}`);
  return params.length ? `?${params.join('&')}` : '';
}

export function forgedCursor(r: Rng): string {
  // The row and item cursors of batch results and calibration items: base64url of p<position> / o<offset>.
  if (r.chance(0.2)) return Buffer.from(r.pick(['p-1', 'p1e3', 'p9999999999', 'pNaN', 'p', 'o-5', 'o99999999999', 'o0x1', 'o 1', 'p0\n', 'p2', 'o1'])).toString('base64url');
  const payload = r.pick<unknown>([
    [r.chance(0.5) ? '0000-01-01T00:00:00.000Z' : r.pick(JUNK_TIMESTAMPS), 'log_x'],
    [r.pick(JUNK_TIMESTAMPS), r.pick(PROTO_NAMES)],
    [1, 2],
    { __proto__: 1 },
    ['2026-01-01T00:00:00.000Z'],
    'x',
    null,
  ]);
  return r.chance(0.8) ? Buffer.from(JSON.stringify(payload)).toString('base64url') : r.pick(['!!!', '%%%', '====', 'e30', 'W10']);
}

export function authHeader(r: Rng, keys: { own: string; other: string }): Record<string, string> {
  const roll = r.next();
  if (roll < 0.75) return { authorization: `Api-Key ${keys.own}` };
  if (roll < 0.8) return { authorization: `Bearer ${keys.other}` };
  if (roll < 0.85) return {};
  return {
    authorization: r.pick([
      'Api-Key',
      'Bearer ',
      'Basic dXNlcjpwYXNz',
      `Api-Key ${keys.own}x`,
      `Api-Key ${'k'.repeat(5000)}`,
      'Api-Key trb_\u00e9\u00e9',
      `Bearer ${keys.own} ${keys.own}`,
      'Api-Key __proto__',
    ]),
  };
}
