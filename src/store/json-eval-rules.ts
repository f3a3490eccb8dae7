// The JSON store's evaluation rules, their counters and their work queue (src/traces/rules/types.ts):
// traces/rules.json (a snapshot) and traces/rules.journal.jsonl (every change since, one line each;
// json-eval-rules-state.ts reads them, journal.ts writes them). Each change is applied in memory
// synchronously (the event loop serializes them), its line written in the same tick, and answered
// once an fdatasync begun after it has ended: concurrent changes share one (group commit), where the
// whole file was rewritten per enqueue, claim and finish before (issue 33). A restart resumes the
// queue as it was: units that were running when the process died are taken again (their lease is
// void in a new process). The journal is compacted into the snapshot at start, when it has grown
// past the snapshot's size (at least 4 MiB), and at close.
//
// Claims and finishes are `carried` (journal.ts): their lines go out with the next enqueue's commit
// (or within 200 ms), so a unit costs no fdatasync of its own beyond its enqueue. A crash may forget
// them, which recovery already makes harmless: a forgotten claim leaves the unit waiting, as a
// running one is put back at start anyway; a forgotten finish leaves it to be taken again, and
// every unit read from disk at start is one that may have run (`mayHaveRun`), so the worker looks
// for its linked result before judging it again (src/traces/rules/run.ts).
//
// Enqueues, when the store is given the trace store's carrier (src/traces/rules/store.ts), are not
// synced by the journal either: their line is written as the spans file's commit writes its exact
// copy (that commit takes the turn's spans with it: span-carrier.ts), so an OTLP export pays one
// fdatasync, not two, and the journal one write(2) a commit, not one a turn; the
// enqueue resolves once that copy is on disk. At start, the copies the journal lost are recovered
// (loadRuleState says why exactly) and the snapshot takes them at once.
import fs from 'node:fs';
import { Journal } from './journal.ts';
import type { SpanCarrier } from './span-carrier.ts';
import { type EnqueueStep, loadRuleState, RULES_FILES, type RuleChange, type RuleState } from './json-eval-rules-state.ts';
import type { EnqueueCounts, EnqueueOutcome, EvalJob, RuleRecord, RuleStore } from '../traces/rules/types.ts';

export class JsonRuleStore implements RuleStore {
  private readonly state: RuleState;
  private readonly journal: Journal;
  /** Units read from disk at start: one may have been judged already, its finish lost with a crash. */
  private readonly recovered: Set<string>;

  /** Carries the enqueues' lines in the spans file's commits, when given. */
  private readonly carrier?: SpanCarrier;

  /**
   * `compactBytes`: the journal size that triggers a compaction (tests). `carrier`: the trace store's
   * (JsonTraceStore.carrier), which the enqueues ride; without it they are synced by the journal.
   */
  constructor(dataDir: string, opts: { compactBytes?: number; carrier?: SpanCarrier } = {}) {
    fs.mkdirSync(RULES_FILES(dataDir).dir, { recursive: true });
    this.carrier = opts.carrier;
    const { state, scan, recovered } = loadRuleState(dataDir, opts.carrier?.takeFound());
    this.state = state;
    this.recovered = new Set(Object.keys(state.data.jobs));
    this.journal = new Journal(RULES_FILES(dataDir), scan, () => state.snapshot(), opts.compactBytes);
    // The enqueues' lines are written as the spans file writes their copies: one write(2) a commit.
    opts.carrier?.writeFirst(() => this.journal.writePending());
    // Lines replayed, enqueues recovered from spans.jsonl, or units that were running put back: the
    // snapshot takes them now, so the journal starts empty and a start replays little.
    if (scan.whole > 0 || recovered.length) {
      const compacted = this.journal.compact();
      compacted.catch(() => {});
      // Until the snapshot holds them, their copies in spans.jsonl are their only ones on disk.
      for (const r of recovered) this.carrier?.keep(r.s, r.line, compacted);
    }
  }

  /**
   * Applies a change in memory and hands its journal line over at once; resolves when the line is
   * on disk, or at once for a claim or a finish (carried by the next commit).
   */
  private change(change: RuleChange): Promise<void> {
    const seq = this.state.apply(change);
    return this.journal.append(JSON.stringify({ s: seq, ...change }), change.k === 'claim' || change.k === 'finish' ? 'carried' : true);
  }

  mayHaveRun(job: EvalJob): boolean {
    return job.attempts > 1 || this.recovered.has(job.id);
  }

  /** Writes the snapshot and lets the files go (the JSON store calls this before it releases its lock). */
  close(): Promise<void> {
    return this.journal.close();
  }

  private get data() {
    return this.state.data;
  }

  async createRule(r: RuleRecord) {
    await this.change({ k: 'rule', rule: structuredClone(r) });
  }
  async getRule(id: string) {
    return structuredClone(this.data.rules[id] ?? null);
  }
  async listRules(orgId: string) {
    return structuredClone(Object.values(this.data.rules).filter((r) => r.org_id === orgId)).sort((a, b) => (a.created_at < b.created_at ? 1 : -1));
  }
  async listAllRules() {
    return structuredClone(Object.values(this.data.rules));
  }
  async updateRule(r: RuleRecord) {
    if (!this.data.rules[r.id]) return false;
    await this.change({ k: 'rule', rule: structuredClone(r) });
    return true;
  }
  async deleteRule(id: string) {
    if (!this.data.rules[id]) return false;
    await this.change({ k: 'unrule', id });
    return true;
  }
  async count(ruleId: string, counts: Record<string, number>) {
    await this.change({ k: 'count', rule_id: ruleId, add: { ...counts } });
  }
  async counters(ruleId: string) {
    return this.countersOf(ruleId);
  }
  /** A copy of the rule's counters (the caller may keep it while units go on counting). */
  private countersOf(ruleId: string): Record<string, number> {
    return { ...(this.data.counters[ruleId] ?? {}) };
  }

  async enqueue(job: EvalJob, limit: number, policy: 'drop_oldest' | 'drop_newest', counts: EnqueueCounts = { always: {}, queued: {} }) {
    return (await this.enqueueMany(job.rule_id, [{ job, counts }], limit, policy))[0]!;
  }
  /** Each unit is decided against the queue as the ones before it left it; one journal line for all. */
  async enqueueMany(ruleId: string, items: Array<{ job: EvalJob; counts: EnqueueCounts }>, limit: number, policy: 'drop_oldest' | 'drop_newest') {
    const steps: EnqueueStep[] = [];
    const outcomes: EnqueueOutcome[] = [];
    for (const { job, counts } of items) {
      const { step, outcome } = this.state.enqueueStep({ ...job }, limit, policy, counts);
      this.state.step(ruleId, step);
      steps.push(step);
      outcomes.push(outcome);
    }
    // Applied step by step above; recorded as one change, replayed the same way.
    const seq = ++this.state.seq;
    const line = JSON.stringify({ s: seq, k: 'jobs', rule_id: ruleId, steps } satisfies RuleChange & { s: number });
    if (!this.carrier || !this.journal.open) await this.journal.append(line, true);
    else await this.carrier.carry(seq, line, this.journal.append(line, 'written'));
    return outcomes;
  }

  async claim(n: number, now: string, leaseUntil: string) {
    const due = this.state.dueUnits(n, now);
    if (!due.length) return [];
    const written = this.change({ k: 'claim', ids: due.map((j) => j.id), lease_until: leaseUntil });
    // The units as claimed (running, leased, attempts counted), copied before anything else can change them.
    const claimed = due.map((j) => ({ ...this.state.job(j.id)! }));
    await written;
    return claimed;
  }
  async finish(jobId: string, counts: Record<string, number>) {
    if (!this.state.job(jobId)) return false;
    this.recovered.delete(jobId);
    await this.change({ k: 'finish', id: jobId, add: { ...counts } });
    return true;
  }
  async postpone(jobId: string, runAfter: string) {
    if (this.state.job(jobId)?.state !== 'running') return false;
    await this.change({ k: 'postpone', id: jobId, run_after: runAfter });
    return true;
  }
  // Both from memory in one synchronous step: nothing changes between them.
  async progress(ruleId: string) {
    return { counters: this.countersOf(ruleId), queue: this.state.stats(ruleId) };
  }
}
