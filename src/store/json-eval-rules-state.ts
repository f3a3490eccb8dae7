// The JSON store's evaluation rules, counters and work queue in memory, and how they are read from
// disk: traces/rules.json (a snapshot) and traces/rules.journal.jsonl beside it (every change since,
// one numbered line each; src/store/journal.ts). Every change is a RuleChange applied by `apply`,
// both when it happens and when the journal is replayed at start, so a replay rebuilds exactly what
// the process held. Jobs are never changed in place: a change puts a new object, so a heap entry
// that still points at the old one is stale (lazy-heap.ts) and the indexes stay exact.
import fs from 'node:fs';
import path from 'node:path';
import type { EnqueueCounts, EnqueueOutcome, EvalJob, RuleRecord } from '../traces/rules/types.ts';
import { type JournalFiles, type JournalScan, replayJournals } from './journal.ts';
import { LazyHeap } from './lazy-heap.ts';
import { readSpanFile } from './json-traces.ts';

export interface RuleData {
  rules: Record<string, RuleRecord>;
  counters: Record<string, Record<string, number>>;
  jobs: Record<string, EvalJob>;
}

type Counts = Record<string, number>;

/** What offering one unit did: the unit it shed (`del`), the unit it added or moved (`put`), the counts it added. */
export interface EnqueueStep {
  del?: string;
  put?: EvalJob;
  add: Counts;
}

// Counts are plain objects of a few own keys: for-in, not a spread and Object.entries' pair arrays,
// since they are summed per unit queued (issue 33). The sum's keys are `a`'s then `b`'s new ones, as before.
const plus = (a: Counts, b: Counts): Counts => {
  const out: Counts = {};
  for (const k in a) if (Object.hasOwn(a, k)) out[k] = a[k]!;
  for (const k in b) if (Object.hasOwn(b, k)) out[k] = (out[k] ?? 0) + b[k]!;
  return out;
};

/** One change of the rule data, as the journal holds it. */
export type RuleChange =
  | { k: 'rule'; rule: RuleRecord }
  | { k: 'unrule'; id: string }
  | { k: 'count'; rule_id: string; add: Counts }
  /** An enqueue's effect, one step per unit offered (enqueueStep). */
  | { k: 'jobs'; rule_id: string; steps: EnqueueStep[] }
  | { k: 'claim'; ids: string[]; lease_until: string }
  | { k: 'finish'; id: string; add: Counts }
  | { k: 'postpone'; id: string; run_after: string };

export const RULES_FILES = (dataDir: string): JournalFiles => ({ dir: path.join(dataDir, 'traces'), snapshot: 'rules.json', journal: 'rules.journal.jsonl' });

const CHANGES = new Set(['rule', 'unrule', 'count', 'jobs', 'claim', 'finish', 'postpone']);
function isChangeLine(v: unknown): v is RuleChange & { s: number } {
  return typeof v === 'object' && v !== null && Number.isInteger((v as { s?: unknown }).s) && CHANGES.has((v as { k?: unknown }).k as string);
}

/** Ties of run_after by created_at (ISO instants of one length compare as strings), so a restart keeps their order. */
const dueKey = (j: EvalJob) => `${j.run_after} ${j.created_at}`;

/** Tables keyed by ids from the URL: no prototype, so `toString` or `__proto__` is no rule (h-harden fuzz). */
const table = <T>(rows?: Record<string, T>): Record<string, T> => Object.assign(Object.create(null), rows);

export class RuleState {
  readonly data: RuleData;
  /** The number of the last change applied. */
  seq: number;
  /** Each rule's units (queued and running), and how many of them wait. */
  private readonly byRule = new Map<string, Map<string, EvalJob>>();
  private readonly queuedOf = new Map<string, number>();
  /** Running units: few (the workers' slots), looked through for expired leases. */
  private readonly running = new Set<string>();
  /**
   * No running unit's lease ends before this (a lower bound: a unit that left may have set it), so a
   * claim looks through the running units only once one may have lapsed, not per claim (issue 33).
   */
  private leaseFloor = '';
  private waitingTotal = 0;
  /** Waiting units by run_after, then created_at, then arrival: what a claim takes first. */
  private readonly due = new LazyHeap<EvalJob>((e) => this.waiting(e.value));
  /** Per rule, waiting units by created_at: the one a drop_oldest shed removes. */
  private readonly oldest = new Map<string, LazyHeap<EvalJob>>();

  constructor(snapshot?: Partial<RuleData> & { journal_seq?: number }) {
    this.seq = snapshot?.journal_seq ?? 0;
    this.data = { rules: table(snapshot?.rules), counters: table(snapshot?.counters), jobs: table() };
    // Ordered as a claim would take them, so that ties keep the order they had.
    const jobs = Object.values(snapshot?.jobs ?? {}).sort((a, b) => (a.run_after < b.run_after ? -1 : a.run_after > b.run_after ? 1 : 0));
    for (const j of jobs) this.put(j);
  }

  /** Whether `job` is the unit held now under its id, waiting. */
  private waiting(job: EvalJob): boolean {
    return this.data.jobs[job.id] === job && job.state === 'queued';
  }

  job(id: string): EvalJob | undefined {
    return this.data.jobs[id];
  }

  queued(ruleId: string): number {
    return this.queuedOf.get(ruleId) ?? 0;
  }

  /** The waiting unit of a rule created first (the one drop_oldest sheds). */
  oldestWaiting(ruleId: string): EvalJob | undefined {
    return this.oldest.get(ruleId)?.peek()?.value;
  }

  stats(ruleId: string): { queued: number; running: number; oldest_queued_at: string | null } {
    const queued = this.queued(ruleId);
    return { queued, running: (this.byRule.get(ruleId)?.size ?? 0) - queued, oldest_queued_at: this.oldestWaiting(ruleId)?.created_at ?? null };
  }

  /**
   * Up to `n` due units in claim order (run_after, then arrival): waiting ones due by `now` and
   * running ones whose lease ended. The caller claims every one at once (the claim change, in the
   * same tick): the waiting ones leave the due order here, where they were put back before only to
   * be left stale by the claim's new objects (issue 33).
   */
  dueUnits(n: number, now: string): EvalJob[] {
    const expired = this.lapsed(now);
    const out: EvalJob[] = [];
    let i = 0;
    while (out.length < n) {
      const top = this.due.peek();
      const waiting = top && top.value.run_after <= now ? top.value : undefined;
      const lapsed = expired[i];
      if (waiting && (!lapsed || waiting.run_after <= lapsed.run_after)) {
        this.due.pop();
        out.push(waiting);
      } else if (lapsed) out.push(expired[i++]!);
      else break;
    }
    return out;
  }

  /** Running units whose lease ended by `now`, in run_after order; the lease floor raised to the earliest one left. */
  private lapsed(now: string): EvalJob[] {
    if (!this.running.size || this.leaseFloor > now) return [];
    const out: EvalJob[] = [];
    let floor: string | undefined;
    for (const id of this.running) {
      const j = this.data.jobs[id]!;
      if (j.lease_until === null) continue;
      if (j.lease_until <= now) out.push(j);
      else if (floor === undefined || j.lease_until < floor) floor = j.lease_until;
    }
    // The lapsed ones stay running until claimed again (then their new lease lowers the floor as they are put).
    this.leaseFloor = out.length ? '' : (floor ?? '\uffff');
    return out.sort((a, b) => (a.run_after < b.run_after ? -1 : a.run_after > b.run_after ? 1 : 0));
  }

  /**
   * What offering `job` to its rule's queue does now (read only): merged into the unit waiting under
   * its id (run_after moved to the later), shed when `limit` units wait, or added.
   */
  enqueueStep(job: EvalJob, limit: number, policy: 'drop_oldest' | 'drop_newest', counts: EnqueueCounts): { step: EnqueueStep; outcome: EnqueueOutcome } {
    const existing = this.data.jobs[job.id];
    if (existing) {
      const moved = existing.state === 'queued' && job.run_after > existing.run_after ? { ...existing, run_after: job.run_after } : undefined;
      return { step: { ...(moved ? { put: moved } : {}), add: plus(counts.always, { 'skipped:merged': 1 }) }, outcome: 'waiting' };
    }
    if (this.queued(job.rule_id) >= limit) {
      if (policy === 'drop_newest') return { step: { add: plus(counts.always, { 'skipped:shed_newest': 1 }) }, outcome: 'shed_newest' };
      const oldest = this.oldestWaiting(job.rule_id);
      if (oldest) return { step: { del: oldest.id, put: job, add: plus(plus(counts.always, { 'skipped:shed_oldest': 1 }), counts.queued) }, outcome: 'shed_oldest' };
    }
    return { step: { put: job, add: plus(counts.always, counts.queued) }, outcome: 'queued' };
  }

  /** Applies one enqueue step (enqueueStep's answer, now or on replay). */
  step(ruleId: string, step: EnqueueStep): void {
    if (step.del !== undefined) this.remove(step.del);
    if (step.put) this.put(step.put);
    this.add(ruleId, step.add);
  }

  /** Holds `job` under its id (replacing the unit held there), with every index. */
  private put(job: EvalJob): void {
    this.remove(job.id);
    this.data.jobs[job.id] = job;
    let units = this.byRule.get(job.rule_id);
    if (!units) this.byRule.set(job.rule_id, (units = new Map()));
    units.set(job.id, job);
    if (job.state === 'running') {
      this.running.add(job.id);
      if (job.lease_until !== null && job.lease_until < this.leaseFloor) this.leaseFloor = job.lease_until;
    } else {
      this.queuedOf.set(job.rule_id, this.queued(job.rule_id) + 1);
      this.due.push(dueKey(job), job);
      let heap = this.oldest.get(job.rule_id);
      if (!heap) this.oldest.set(job.rule_id, (heap = new LazyHeap((e) => this.waiting(e.value))));
      heap.push(job.created_at, job);
      // Stale entries (units claimed, moved or shed) are dropped when they outnumber the live ones.
      if (heap.size > 2 * this.queued(job.rule_id) + 1024) heap.compact();
      this.waitingTotal++;
      if (this.due.size > 2 * this.waitingTotal + 1024) this.due.compact();
    }
  }

  private remove(id: string): EvalJob | undefined {
    const job = this.data.jobs[id];
    if (!job) return undefined;
    delete this.data.jobs[id];
    this.byRule.get(job.rule_id)?.delete(id);
    if (job.state === 'running') this.running.delete(id);
    else {
      this.queuedOf.set(job.rule_id, this.queued(job.rule_id) - 1);
      this.waitingTotal--;
    }
    return job;
  }

  private add(ruleId: string, counts: Counts): void {
    const c = (this.data.counters[ruleId] ??= {});
    for (const k in counts) if (Object.hasOwn(counts, k)) c[k] = (c[k] ?? 0) + counts[k]!;
  }

  /** Applies one change (the caller has checked that it may happen); answers its number. */
  apply(change: RuleChange, seq = this.seq + 1): number {
    this.seq = seq;
    const d = this.data;
    switch (change.k) {
      case 'rule':
        d.rules[change.rule.id] = change.rule;
        break;
      case 'unrule':
        delete d.rules[change.id];
        delete d.counters[change.id];
        for (const id of [...(this.byRule.get(change.id)?.keys() ?? [])]) this.remove(id);
        this.byRule.delete(change.id);
        this.oldest.delete(change.id);
        break;
      case 'count':
        this.add(change.rule_id, change.add);
        break;
      case 'jobs':
        for (const step of change.steps) this.step(change.rule_id, step);
        break;
      case 'claim':
        for (const id of change.ids) {
          const j = d.jobs[id];
          if (j) this.put({ ...j, state: 'running', lease_until: change.lease_until, attempts: j.attempts + 1 });
        }
        break;
      case 'finish': {
        const j = this.remove(change.id);
        if (j) this.add(j.rule_id, change.add);
        break;
      }
      case 'postpone': {
        const j = d.jobs[change.id];
        if (j) this.put({ ...j, state: 'queued', lease_until: null, run_after: change.run_after, attempts: Math.max(0, j.attempts - 1) });
        break;
      }
    }
    return seq;
  }

  /** This process is the only one on the data directory: no unit is running in it yet (a start-up step, not journaled). */
  requeueRunning(): void {
    for (const id of [...this.running]) this.put({ ...this.data.jobs[id]!, state: 'queued', lease_until: null });
  }

  /** The snapshot's text: the data and the number of the last change it holds. */
  snapshot(): string {
    return JSON.stringify({ journal_seq: this.seq, ...this.data });
  }
}

/**
 * Reads the snapshot and replays the journals over it, with the changes recovered from their carried
 * copies in traces/spans.jsonl (span-carrier.ts), changing no file; units that were running are
 * waiting again. `carried`: the carried lines, if the caller has read them already (the trace store's
 * load); otherwise spans.jsonl is read here. Also read by `tribunal migrate`.
 *
 * Why the recovery is exact. A carried line is an enqueue (`jobs`) whose journal line was written but
 * not synced when its export was answered; its copy in spans.jsonl was synced first. An OS crash may
 * lose any of the journal's lines written after its last fdatasync, not only a tail (pages reach the
 * disk in any order), and nothing before it (that fdatasync covered them). So the changes that
 * survive are: the snapshot (every change numbered up to its journal_seq), the journal's lines, and
 * the carried lines, each a subset of one numbering in which every change was applied in memory in
 * number order. The changes are applied here as their union in number order: a carried line is
 * applied when its number is above the snapshot's (below, the snapshot holds it: compaction) and the
 * journal holds no line of that number (there, both copies are the same line: never twice), between
 * the journal's lines numbered around it, never after them. So a claim or finish of its unit that
 * did reach the disk comes after the enqueue, as it did in memory; what is still missing is only
 * claims and finishes (carried lines of the journal itself) and unanswered changes, which recovery
 * already makes harmless: every unit read back may have run (json-eval-rules.ts mayHaveRun). The
 * number after a start is the highest seen, so no new change takes a number a carried line still has.
 */
export function loadRuleState(dataDir: string, carried?: string[]): { state: RuleState; scan: JournalScan; recovered: Array<{ s: number; line: string }> } {
  const files = RULES_FILES(dataDir);
  const snapshotFile = path.join(files.dir, files.snapshot);
  const state = new RuleState(fs.existsSync(snapshotFile) ? JSON.parse(fs.readFileSync(snapshotFile, 'utf8')) : undefined);
  const journal: Array<{ s: number; change: RuleChange }> = [];
  const scan = replayJournals(files, state.seq, isChangeLine, (change, s) => journal.push({ s, change }), 'an evaluation rule change');
  const have = new Set(journal.map((j) => j.s));
  const recovered: Array<{ s: number; line: string; change: RuleChange }> = [];
  for (const line of carried ?? readSpanFile(path.join(files.dir, 'spans.jsonl')).carried) {
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      continue; // a line an OS crash damaged: its export was never answered
    }
    if (!isChangeLine(v) || v.s <= state.seq || have.has(v.s)) continue;
    have.add(v.s);
    const { s, ...change } = v;
    recovered.push({ s, line, change: change as RuleChange });
  }
  recovered.sort((a, b) => a.s - b.s);
  // The union, in number order (the journal's lines are in number order already).
  let r = 0;
  for (const j of journal) {
    for (; r < recovered.length && recovered[r]!.s < j.s; r++) state.apply(recovered[r]!.change, recovered[r]!.s);
    state.apply(j.change, j.s);
  }
  for (; r < recovered.length; r++) state.apply(recovered[r]!.change, recovered[r]!.s);
  state.requeueRunning();
  return { state, scan, recovered: recovered.map(({ s, line }) => ({ s, line })) };
}
