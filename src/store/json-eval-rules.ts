// The JSON store's evaluation rules, their counters and their work queue (src/traces/rules/types.ts):
// traces/rules.json in the data directory, rewritten whole (temp file, fsync, rename) with concurrent
// changes grouped into one write. Each change is applied in memory synchronously (the event loop
// serializes them) and answered once it is on disk, so a restart resumes the queue as it was: units
// that were running when the process died are taken again (their lease is void in a new process).
import fs from 'node:fs';
import path from 'node:path';
import type { EnqueueCounts, EnqueueOutcome, EvalJob, RuleRecord, RuleStore } from '../traces/rules/types.ts';

interface Data {
  rules: Record<string, RuleRecord>;
  counters: Record<string, Record<string, number>>;
  jobs: Record<string, EvalJob>;
}

export class JsonRuleStore implements RuleStore {
  private readonly file: string;
  private data: Data = { rules: {}, counters: {}, jobs: {} };
  private dirty = false;
  private loop: Promise<void> | null = null;

  constructor(dataDir: string) {
    const dir = path.join(dataDir, 'traces');
    fs.mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, 'rules.json');
    if (fs.existsSync(this.file)) this.data = JSON.parse(fs.readFileSync(this.file, 'utf8')) as Data;
    // Tables keyed by ids from the URL: no prototype, so `toString` or `__proto__` is no rule (h-harden fuzz).
    for (const t of ['rules', 'counters', 'jobs'] as const) this.data[t] = Object.assign(Object.create(null), this.data[t]);
    // This process is the only one on the data directory: no unit is running in it yet.
    for (const j of Object.values(this.data.jobs)) if (j.state === 'running') Object.assign(j, { state: 'queued', lease_until: null });
  }

  private async writeNow(): Promise<void> {
    const tmp = `${this.file}.tmp`;
    const fh = await fs.promises.open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(this.data));
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fs.promises.rename(tmp, this.file);
  }
  /** Resolves once the state as of this call is on disk; calls made meanwhile share the next write. */
  private save(): Promise<void> {
    this.dirty = true;
    this.loop ??= (async () => {
      try {
        while (this.dirty) {
          this.dirty = false;
          await this.writeNow();
        }
      } finally {
        this.loop = null;
      }
    })();
    return this.loop;
  }

  async createRule(r: RuleRecord) {
    this.data.rules[r.id] = structuredClone(r);
    await this.save();
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
    this.data.rules[r.id] = structuredClone(r);
    await this.save();
    return true;
  }
  async deleteRule(id: string) {
    if (!this.data.rules[id]) return false;
    delete this.data.rules[id];
    delete this.data.counters[id];
    for (const j of Object.values(this.data.jobs)) if (j.rule_id === id) delete this.data.jobs[j.id];
    await this.save();
    return true;
  }
  private add(ruleId: string, counts: Record<string, number>) {
    const c = (this.data.counters[ruleId] ??= {});
    for (const [k, n] of Object.entries(counts)) c[k] = (c[k] ?? 0) + n;
  }
  async count(ruleId: string, counts: Record<string, number>) {
    this.add(ruleId, counts);
    await this.save();
  }
  async counters(ruleId: string) {
    return { ...(this.data.counters[ruleId] ?? {}) };
  }

  async enqueue(job: EvalJob, limit: number, policy: 'drop_oldest' | 'drop_newest', counts: EnqueueCounts = { always: {}, queued: {} }) {
    const outcome = this.enqueueOne(job, limit, policy, counts);
    await this.save();
    return outcome;
  }
  async enqueueMany(_ruleId: string, items: Array<{ job: EvalJob; counts: EnqueueCounts }>, limit: number, policy: 'drop_oldest' | 'drop_newest') {
    const outcomes = items.map(({ job, counts }) => this.enqueueOne(job, limit, policy, counts));
    await this.save();
    return outcomes;
  }
  private enqueueOne(job: EvalJob, limit: number, policy: 'drop_oldest' | 'drop_newest', counts: EnqueueCounts): EnqueueOutcome {
    this.add(job.rule_id, counts.always);
    const existing = this.data.jobs[job.id];
    if (existing) {
      this.add(job.rule_id, { 'skipped:merged': 1 });
      if (existing.state === 'queued' && job.run_after > existing.run_after) existing.run_after = job.run_after;
      return 'waiting';
    }
    const waiting = Object.values(this.data.jobs).filter((j) => j.rule_id === job.rule_id && j.state === 'queued');
    let outcome: 'queued' | 'shed_oldest' = 'queued';
    if (waiting.length >= limit) {
      if (policy === 'drop_newest') {
        this.add(job.rule_id, { 'skipped:shed_newest': 1 });
        return 'shed_newest';
      }
      const oldest = waiting.reduce((a, b) => (b.created_at < a.created_at ? b : a));
      delete this.data.jobs[oldest.id];
      this.add(job.rule_id, { 'skipped:shed_oldest': 1 });
      outcome = 'shed_oldest';
    }
    this.data.jobs[job.id] = structuredClone(job);
    this.add(job.rule_id, counts.queued);
    return outcome;
  }

  async claim(n: number, now: string, leaseUntil: string) {
    const due = Object.values(this.data.jobs)
      .filter((j) => (j.state === 'queued' && j.run_after <= now) || (j.state === 'running' && j.lease_until !== null && j.lease_until <= now))
      .sort((a, b) => (a.run_after < b.run_after ? -1 : 1))
      .slice(0, n);
    for (const j of due) Object.assign(j, { state: 'running', lease_until: leaseUntil, attempts: j.attempts + 1 });
    if (due.length) await this.save();
    return structuredClone(due);
  }
  async finish(jobId: string, counts: Record<string, number>) {
    const j = this.data.jobs[jobId];
    if (!j) return false;
    delete this.data.jobs[jobId];
    this.add(j.rule_id, counts);
    await this.save();
    return true;
  }
  async postpone(jobId: string, runAfter: string) {
    const j = this.data.jobs[jobId];
    if (j?.state !== 'running') return false;
    Object.assign(j, { state: 'queued', lease_until: null, run_after: runAfter, attempts: Math.max(0, j.attempts - 1) });
    await this.save();
    return true;
  }
  async queueStats(ruleId: string) {
    let queued = 0;
    let running = 0;
    let oldest: string | null = null;
    for (const j of Object.values(this.data.jobs)) {
      if (j.rule_id !== ruleId) continue;
      if (j.state === 'running') running++;
      else {
        queued++;
        if (oldest === null || j.created_at < oldest) oldest = j.created_at;
      }
    }
    return { queued, running, oldest_queued_at: oldest };
  }
}
