// src/iso-time.ts answers exactly what Date answers, on its fast paths (the day it knows) and off them.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isoNow, isoOfMs, msOfIso } from '../src/iso-time.ts';

/** A small deterministic generator, so a failure names a value that fails again. */
function* instants(seed: number, n: number, from: number, span: number): Generator<number> {
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    yield from + Math.floor((x / 2 ** 31) * span);
  }
}

test('isoOfMs is toISOString, within a known day, across days, and at the edges', () => {
  const day = Date.UTC(2026, 10, 27);
  const cases = [
    ...instants(7, 20_000, day - 86_400_000, 3 * 86_400_000),
    ...instants(9, 2_000, -62_167_219_200_000, 2 * 253_402_300_799_999),
    day,
    day - 1,
    day + 86_399_999,
    day + 86_400_000,
    0,
    -1,
    253_402_300_799_999,
    253_402_300_800_000,
    -62_167_219_200_000,
    -62_167_219_200_001,
    day + 0.5,
    day + 1234.999,
    -0.5,
  ];
  for (const ms of cases) assert.equal(isoOfMs(ms), new Date(ms).toISOString(), String(ms));
  // Each case again with the day it falls on known (the fast path), then after another day.
  for (const ms of cases) {
    isoOfMs(ms);
    assert.equal(isoOfMs(ms), new Date(ms).toISOString(), String(ms));
  }
  assert.throws(() => isoOfMs(Number.NaN), RangeError);
  assert.throws(() => isoOfMs(8.64e15 + 1), RangeError);
  const before = Date.now();
  const now = Date.parse(isoNow());
  assert.ok(now >= before && now <= Date.now());
});

test('msOfIso is Date.parse, canonical or not, of the known day or another', () => {
  const day = Date.UTC(2026, 10, 27);
  isoOfMs(day + 5);
  const texts: string[] = [];
  for (const ms of instants(3, 5_000, day - 86_400_000, 3 * 86_400_000)) texts.push(new Date(ms).toISOString());
  const odd = [
    '2026-11-27T24:00:00.000Z',
    '2026-11-27T23:60:00.000Z',
    '2026-11-27T23:59:60.000Z',
    '2026-11-27T1a:00:00.000Z',
    '2026-11-27T10:00:00.000+',
    '2026-11-27T10:00:00,000Z',
    '2026-11-27T10:00:00.00aZ',
    '2026-11-27T10:00:00.000',
    '2026-11-27T10:00:00Z',
    '2026-11-27',
    '',
    'not a date',
    '2026-11-27T10:00:00.000z',
    '2026-11-27T-1:00:00.000Z',
  ];
  for (const t of [...texts, ...odd]) {
    isoOfMs(day);
    assert.deepEqual(msOfIso(t), Date.parse(t), t);
  }
});

test('isoOfMs keeps a second day: a cutoff a week back is formatted without Date once its day is seen, and today stays known', async () => {
  // A fresh instance of the module: the tests above leave it knowing other days.
  const { isoOfMs } = (await import(`../src/iso-time.ts?fresh=${Date.now()}`)) as typeof import('../src/iso-time.ts');
  const now = Date.now();
  const weekBack = now - 7 * 86_400_000;
  isoOfMs(now);
  isoOfMs(weekBack);
  const toISOString = Date.prototype.toISOString;
  let calls = 0;
  Date.prototype.toISOString = function (this: Date) {
    calls++;
    return toISOString.call(this);
  };
  try {
    // Same day as weekBack, and same day as now (kept within their days, away from midnight).
    const sameOld = weekBack - (weekBack % 86_400_000) + 43_200_123;
    const sameToday = now - (now % 86_400_000) + 1_000;
    for (const ms of [sameOld, sameToday, sameOld + 1, sameToday + 86_000_000]) assert.equal(isoOfMs(ms), toISOString.call(new Date(ms)), String(ms));
    assert.equal(calls, 0, 'formatted through Date although both days were known');
    // A third day takes the second slot; today's stays.
    const third = now - 30 * 86_400_000;
    assert.equal(isoOfMs(third), toISOString.call(new Date(third)));
    assert.equal(calls, 1);
    assert.equal(isoOfMs(sameToday), toISOString.call(new Date(sameToday)));
    assert.equal(isoOfMs(third + 1), toISOString.call(new Date(third + 1)));
    assert.equal(calls, 1);
  } finally {
    Date.prototype.toISOString = toISOString;
  }
});
