// /metrics for traces: spans received and rejected by the OTLP receiver (this instance), and every
// evaluation rule's status counters, read from the store at scrape time (so every instance reports
// the same shared counts on PostgreSQL): the same numbers as a rule's `status`.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Store } from '../store/types.ts';
import { ruleStoreOf } from './rules/store.ts';

const received = new WeakMap<Store, { spans: number; rejected: number }>();
const registered = new WeakSet<Registry>();
/** Log records received on /otel/v1/logs by this instance, by outcome. */
export type LogOutcome = 'kept' | 'duplicate' | 'rejected' | 'ignored' | 'unattached';
const logRecords = new WeakMap<Store, Record<LogOutcome, number>>();

export function countLogRecords(store: Store, counts: Partial<Record<LogOutcome, number>>): void {
  const c = logRecords.get(store) ?? { kept: 0, duplicate: 0, rejected: 0, ignored: 0, unattached: 0 };
  for (const [k, n] of Object.entries(counts) as [LogOutcome, number][]) c[k] += n;
  logRecords.set(store, c);
}

export function countReceived(store: Store, spans: number, rejected: number): void {
  const c = received.get(store) ?? { spans: 0, rejected: 0 };
  c.spans += spans;
  c.rejected += rejected;
  received.set(store, c);
}

export function registerTraceMetrics(registry: Registry, store: Store): void {
  if (registered.has(registry)) return;
  registered.add(registry);
  new Counter({
    name: 'tribunal_otlp_spans_total',
    help: 'Spans received on /otel/v1/traces by this instance, by outcome (stored, rejected).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      const c = received.get(store) ?? { spans: 0, rejected: 0 };
      this.reset();
      this.inc({ outcome: 'stored' }, c.spans);
      this.inc({ outcome: 'rejected' }, c.rejected);
    },
  });
  new Counter({
    name: 'tribunal_otlp_log_records_total',
    help: 'Log records received on /otel/v1/logs by this instance, by outcome: kept (GenAI events of a span), duplicate, rejected, ignored (not GenAI events), unattached (GenAI events naming no span).',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [outcome, n] of Object.entries(logRecords.get(store) ?? {})) this.inc({ outcome }, n);
    },
  });
  // Registered before the age gauge, whose values its collect sets: the registry collects in order.
  let age: Gauge | undefined;
  new Gauge({
    name: 'tribunal_evaluation_rule_units',
    help: 'Evaluation rule counters (matched, sampled, queued, running, done, failed, skipped by reason), as in the rule status.',
    labelNames: ['rule_id', 'state', 'reason'],
    registers: [registry],
    async collect() {
      this.reset();
      age?.reset();
      const rules = await ruleStoreOf(store);
      for (const r of await rules.listAllRules()) {
        const { counters: c, queue: q } = await rules.progress(r.id);
        for (const state of ['matched', 'sampled', 'done', 'failed']) this.set({ rule_id: r.id, state, reason: '' }, c[state] ?? 0);
        this.set({ rule_id: r.id, state: 'queued', reason: '' }, q.queued);
        this.set({ rule_id: r.id, state: 'running', reason: '' }, q.running);
        for (const [k, n] of Object.entries(c)) if (k.startsWith('skipped:')) this.set({ rule_id: r.id, state: 'skipped', reason: k.slice(8) }, n);
        age?.set({ rule_id: r.id }, q.oldest_queued_at ? (Date.now() - Date.parse(q.oldest_queued_at)) / 1000 : 0);
      }
    },
  });
  age = new Gauge({
    name: 'tribunal_evaluation_rule_oldest_queued_age_seconds',
    help: "Age of each rule's oldest waiting unit; a growing age means the queue is not keeping up.",
    labelNames: ['rule_id'],
    registers: [registry],
  });
}
