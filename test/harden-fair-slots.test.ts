// FairSlots (src/batch/fair-slots.ts, issue 24 item 5): the rule itself, without a server. A freed
// slot goes to the waiting organization holding the fewest; alone, an organization uses them all.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FairSlots } from '../src/batch/fair-slots.ts';

const tick = () => new Promise((r) => setImmediate(r));

test('an organization alone takes every slot; another arriving gets each freed slot until they hold the same', async () => {
  const slots = new FairSlots(4);
  const x: Array<() => void> = [];
  for (let i = 0; i < 4; i++) x.push(await slots.acquire('x'));
  // X asks for 6 more and Y for 3: all wait.
  const xWaiting = Array.from({ length: 6 }, () => slots.acquire('x'));
  const yGot: Array<() => void> = [];
  const yWaiting = Array.from({ length: 3 }, () => slots.acquire('y').then((release) => (yGot.push(release), release)));
  await tick();
  assert.deepEqual([slots.inFlight('x'), slots.inFlight('y'), slots.queued('x'), slots.queued('y')], [4, 0, 6, 3]);
  // Two of X's rows finish: both slots go to Y (it holds fewer), none to X though X asked first.
  x.pop()!();
  x.pop()!();
  await tick();
  assert.deepEqual([slots.inFlight('x'), slots.inFlight('y')], [2, 2]);
  // Equal now: the next freed slot goes in turn; Y was served last, so X gets it.
  x.pop()!();
  await tick();
  assert.deepEqual([slots.inFlight('x'), slots.inFlight('y')], [2, 2]);
  assert.equal(slots.queued('y'), 1);
  // X frees again: X holds 1, Y 2 -> X (fewest).
  x.pop()!();
  await tick();
  assert.deepEqual([slots.inFlight('x'), slots.inFlight('y')], [2, 2]);
  // Y's rows finish: Y's last waiting row gets a slot before X's, X takes the rest.
  for (const release of yGot.splice(0)) release();
  await tick();
  assert.deepEqual([slots.inFlight('y'), slots.queued('y')], [1, 0]);
  assert.equal(slots.inFlight(), 4);
  await Promise.all(yWaiting);
  void xWaiting;
});

test('a release is idempotent and never frees a slot twice', async () => {
  const slots = new FairSlots(1);
  const release = await slots.acquire('a');
  const next = slots.acquire('b');
  release();
  release();
  await next;
  assert.equal(slots.inFlight(), 1);
  assert.throws(() => new FairSlots(0), /positive integer/);
});
