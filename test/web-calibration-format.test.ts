// issue 26 item 8 (part): the calibration pages print numbers as they are: a kappa that rounds to
// zero is "0.000", never "-0.000". The web module itself, imported as the browser does.
import assert from 'node:assert/strict';
import { test } from 'node:test';

test('fmtStat never prints a negative zero, and keeps real negatives', async () => {
  const path: string = '../src/web/public/lib/calibration.js';
  const { fmtStat } = (await import(path)) as { fmtStat: (v: number | null, digits?: number) => string };
  assert.equal(fmtStat(-0.0001), '0.000');
  assert.equal(fmtStat(-0), '0.000');
  assert.equal(fmtStat(-0.004, 2), '0.00');
  assert.equal(fmtStat(-0.5), '-0.500');
  assert.equal(fmtStat(0.1224), '0.122');
  assert.equal(fmtStat(null), '—');
});

test('issue 26 item 8: a 0.00 difference is no disagreement; a run counts items, not labels', async () => {
  const path: string = '../src/web/public/lib/calibration.js';
  const lib = (await import(path)) as { isDisagreement: (i: { difference: number | null }) => boolean; itemCount: (m: { n: number }[] | null) => number | null };
  assert.equal(lib.isDisagreement({ difference: 0 }), false);
  assert.equal(lib.isDisagreement({ difference: -0.004 }), false);
  assert.equal(lib.isDisagreement({ difference: 0.005 }), true);
  assert.equal(lib.isDisagreement({ difference: -0.5 }), true);
  assert.equal(lib.isDisagreement({ difference: null }), true, 'not scored stays listed');
  assert.equal(lib.itemCount([{ n: 12 }, { n: 12 }]), 12);
  assert.equal(lib.itemCount(null), null);
});
