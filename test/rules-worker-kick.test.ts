// The evaluation worker's wake-ups (src/traces/rules/worker.ts, issue 33): the wake-ups of one turn of
// the event loop (judge answers read in it, each freeing a slot, and the exports queued in it) share
// one tick and one claim, where each took one before. None is lost: a wake-up while a claim is under
// way still takes another look once it ends, and a stopped worker claims nothing more.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TraceEvaluationWorker } from '../src/traces/rules/worker.ts';
import type { RuleStore } from '../src/traces/rules/types.ts';
import type { TraceStore } from '../src/traces/types.ts';
import type { Services } from '../src/tool.ts';
import { until } from './helpers/wait.ts';

/** A worker over a rule store that only counts its claims (each answers no unit; the first waits for `gate` when given). */
function countingWorker(gate?: Promise<void>) {
  const claims: number[] = [];
  const rules = {
    claim: async (n: number) => {
      claims.push(n);
      if (gate && claims.length === 1) await gate;
      return [];
    },
  } as unknown as RuleStore;
  const services = { config: { batch: { worker: true, leaseMs: 60_000 } } } as unknown as Services;
  return { worker: new TraceEvaluationWorker(services, rules, {} as TraceStore, 4), claims };
}

const turn = () => new Promise((r) => setImmediate(r));

describe('evaluation worker wake-ups', () => {
  it('wake-ups in one turn of the event loop make one claim', async () => {
    const { worker, claims } = countingWorker();
    worker.kick();
    worker.kick();
    worker.kick();
    await turn();
    await turn();
    assert.equal(claims.length, 1);
    await worker.stop(100);
  });

  it('a wake-up during a claim is kept: another claim follows the one under way', async () => {
    let release!: () => void;
    const { worker, claims } = countingWorker(new Promise<void>((r) => (release = r)));
    worker.kick();
    await until('the first claim', () => claims.length === 1, 5000, 1);
    worker.kick();
    await turn();
    await turn();
    assert.equal(claims.length, 1, 'no second claim while the first is under way');
    release();
    await until('the second claim', () => claims.length === 2, 5000, 1);
    await worker.stop(100);
  });

  it('a stopped worker claims nothing, even for a wake-up asked for before it stopped', async () => {
    const { worker, claims } = countingWorker();
    worker.kick();
    await worker.stop(100);
    await turn();
    assert.equal(claims.length, 0);
  });
});
