// dayOf (src/budgets/budgets.ts): the UTC day of a run, asked for on every run to key the org's spend.
// It takes epoch ms as well as a Date (a run without a cap makes no Date), and stays right across
// a UTC midnight whichever form it is given, in whatever order days are asked for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { dayOf } from '../src/budgets/budgets.ts';

test('the UTC day of a Date, of epoch ms and of now, across midnight and back', () => {
  const beforeMidnight = Date.UTC(2026, 10, 27, 23, 59, 59, 999);
  const midnight = beforeMidnight + 1;
  assert.equal(dayOf(beforeMidnight), '2026-11-27');
  assert.equal(dayOf(new Date(beforeMidnight)), '2026-11-27');
  assert.equal(dayOf(midnight), '2026-11-28');
  assert.equal(dayOf(new Date(midnight)), '2026-11-28');
  // Back to the day before, then a day far away: each answered for itself, not from the last day kept.
  assert.equal(dayOf(beforeMidnight - 86_400_000), '2026-11-26');
  assert.equal(dayOf(midnight - 86_400_000), '2026-11-27');
  assert.equal(dayOf(Date.UTC(2030, 0, 1, 12)), '2030-01-01');
  assert.equal(dayOf(), new Date().toISOString().slice(0, 10));
  assert.equal(dayOf(Date.now()), new Date().toISOString().slice(0, 10));
});

test('an invalid date is refused, as toISOString refuses it', () => {
  assert.throws(() => dayOf(new Date(Number.NaN)), RangeError);
  assert.throws(() => dayOf(Number.NaN), RangeError);
});
