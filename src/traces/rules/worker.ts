// The evaluation worker each server process starts: it hears of new spans (the receiver's hook),
// queues units through intake, and takes due units from the durable queue (the rule store) with
// bounded concurrency. On PostgreSQL several instances share the queue (each unit is claimed by one;
// a dead worker's unit is taken again when its lease ends); on the JSON store the queue is the data
// directory's rules.json, resumed at start. Nothing here holds more than `concurrency` units being
// judged in memory, and at most MAX_SETTLING judged ones whose link waits for its shared sync (run.ts).
import type { Services } from '../../tool.ts';
import { onRulesChanged, onSpansStored } from '../hooks.ts';
import { traceStoreOf } from '../store.ts';
import type { TraceStore } from '../types.ts';
import { dueBase, intake } from './intake.ts';
import { runUnit } from './run.ts';
import { ruleStoreOf } from './store.ts';
import type { RuleRecord, RuleStore } from './types.ts';
import { log } from '../../log.ts';
import { isoOfMs } from '../../iso-time.ts';

const POLL_MS = 500;
/** Wake-up instants are rounded up to this, so a stream of spans makes a few timers, not one per span. */
const WAKE_STEP_MS = 50;
/** At most this many distinct wake-ups are remembered; beyond, the poll alone finds due units. */
const MAX_WAKES = 1000;
const RULE_CACHE_MS = 2000;
/**
 * Judged units whose link and finish are still on their way (run.ts `settle`): they hold no slot, and
 * there are about CARRY_MS of throughput of them at a time. Each keeps its run's objects (the span's
 * content, the result) until it ends, so a stalled disk stops new claims here rather than let them grow.
 */
const MAX_SETTLING = 1000;
const workers = new WeakMap<object, TraceEvaluationWorker>();

export class TraceEvaluationWorker {
  private timer?: NodeJS.Timeout;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly settling = new Set<Promise<void>>();
  private ticking = false;
  private kickAgain = false;
  private stopped = false;
  /** An organization's rules as read, and the active ones among them (filtered once per read, not per export). */
  private readonly ruleCache = new Map<string, { at: number; rules: RuleRecord[]; active: RuleRecord[] }>();
  /** Instants (ms) when units queued here fall due, ascending; the timer is set for the first. */
  private readonly wakes: number[] = [];
  private wakeTimer?: NodeJS.Timeout;
  /** The tick kick() asked for, until it runs. */
  private tickSoon?: NodeJS.Immediate;

  constructor(
    private readonly services: Services,
    private readonly rules: RuleStore,
    private readonly traces: TraceStore,
    private readonly concurrency: number,
  ) {}

  static async start(services: Services): Promise<TraceEvaluationWorker> {
    const [rules, traces] = await Promise.all([ruleStoreOf(services.store), traceStoreOf(services.store)]);
    const w = new TraceEvaluationWorker(services, rules, traces, Math.max(1, Math.min(services.config.batch.concurrency, 32)));
    workers.set(services.store, w);
    onSpansStored(services.store, async (caller, spans) => {
      const active = await w.activeRules(caller.org.id);
      if (!active.length || !(await intake(rules, active, spans))) return;
      w.kick();
      // The units just queued fall due after their rule's delay: wake then rather than at the next poll.
      // Those due by now are the kick's (its tick claims every unit due when it runs): no timer for
      // them, where a rule without a delay set one for every 50 ms step of exports (issue 33).
      const now = new Date();
      const nowMs = now.getTime();
      for (const r of active) {
        const delay = r.delay_seconds * 1000;
        if (delay <= 0) continue;
        // From the earliest delay start to the latest: the first and last units of the batch.
        // Only span scope starts a delay before now (dueBase): the other scopes skip the loop.
        let first = nowMs;
        if (r.scope === 'span') for (const s of spans) first = Math.min(first, dueBase(r, s, now));
        if (first + delay > nowMs) w.wakeAt(first + delay);
        w.wakeAt(nowMs + delay);
      }
    });
    onRulesChanged(services.store, (orgId) => w.forget(orgId));
    if (services.config.batch.worker) {
      w.timer = setInterval(() => w.kick(), POLL_MS);
      w.timer.unref();
      w.kick();
    }
    return w;
  }

  /** The worker of a store (for the rule operations: to forget cached rules after a change). */
  static of(store: object): TraceEvaluationWorker | undefined {
    return workers.get(store);
  }

  forget(orgId: string): void {
    this.ruleCache.delete(orgId);
  }

  /** The organization's active rules (read again after RULE_CACHE_MS or a change). */
  private async activeRules(orgId: string): Promise<RuleRecord[]> {
    const hit = this.ruleCache.get(orgId);
    if (hit && Date.now() - hit.at < RULE_CACHE_MS) return hit.active;
    const rules = await this.rules.listRules(orgId);
    const active = rules.filter((r) => r.active);
    this.ruleCache.set(orgId, { at: Date.now(), rules, active });
    return active;
  }

  /**
   * Takes work at `at` (ms since the epoch): when a unit queued by this instance falls due, so the lag
   * after a rule's delay is not up to a whole poll interval. Units queued by other instances are found
   * by the poll.
   */
  wakeAt(at: number): void {
    if (this.stopped || !this.services.config.batch.worker) return;
    const t = Math.ceil(at / WAKE_STEP_MS) * WAKE_STEP_MS;
    let i = this.wakes.length;
    while (i > 0 && this.wakes[i - 1] > t) i--;
    if (this.wakes[i - 1] === t || this.wakes.length >= MAX_WAKES) return;
    this.wakes.splice(i, 0, t);
    if (i === 0) this.armWake();
  }

  private armWake(): void {
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    this.wakeTimer = undefined;
    const next = this.wakes[0];
    if (next === undefined || this.stopped) return;
    this.wakeTimer = setTimeout(
      () => {
        const now = Date.now();
        while (this.wakes.length && this.wakes[0] <= now) this.wakes.shift();
        this.kick();
        this.armWake();
      },
      Math.max(0, next - Date.now()),
    );
    this.wakeTimer.unref();
  }

  /**
   * Asks for a tick at the end of this turn of the event loop (setImmediate): the wake-ups of one turn
   * (the judge answers read in it, each freeing a slot, and the exports queued in it) share one tick
   * and one claim of all the units they make due, where each took a tick of its own, most of them
   * claiming nothing (issue 33).
   */
  kick(): void {
    if (this.stopped || !this.services.config.batch.worker) return;
    if (this.ticking) {
      // A wake-up during a claim is kept, not lost: the claim may have run just before a unit fell due.
      this.kickAgain = true;
      return;
    }
    this.tickSoon ??= setImmediate(this.tickNow);
  }

  /**
   * The tick kick() asked for: one function made with the worker, not a closure per turn (tsx names
   * each one made). Never entered during a tick: kick() asks for it only when no tick runs, and only
   * this function starts one.
   */
  private readonly tickNow = (): void => {
    this.tickSoon = undefined;
    if (this.stopped) return;
    this.ticking = true;
    this.kickAgain = false;
    void this.tick()
      .catch((err) => {
        if (!this.stopped) log.error('evaluation rules: could not take work', { err });
      })
      .finally(() => {
        this.ticking = false;
        if (this.kickAgain) this.kick();
      });
  };

  private async tick(): Promise<void> {
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0 || this.settling.size >= MAX_SETTLING) return;
    const now = new Date();
    const jobs = await this.rules.claim(free, isoOfMs(now.getTime()), isoOfMs(now.getTime() + this.services.config.batch.leaseMs));
    for (const job of jobs) {
      const hit = this.ruleCache.get(job.org_id);
      const cached = hit && Date.now() - hit.at < RULE_CACHE_MS ? hit.rules.find((r) => r.id === job.rule_id) : undefined;
      const p = runUnit(this.services, this.rules, this.traces, job, cached, (rest) => this.settle(job.id, rest))
        .catch((err) => log.error(`evaluation rules: unit ${job.id} failed`, { err }))
        .finally(() => {
          this.inFlight.delete(p);
          this.kick();
        });
      this.inFlight.add(p);
    }
  }

  /** Keeps a judged unit's last steps (run.ts) until they end, outside the slots. */
  private settle(jobId: string, rest: Promise<void>): void {
    const p = rest
      .catch((err) => log.error(`evaluation rules: unit ${jobId} failed`, { err }))
      .finally(() => {
        this.settling.delete(p);
        if (this.settling.size === MAX_SETTLING - 1) this.kick();
      });
    this.settling.add(p);
  }

  /** Stops taking work and waits up to `ms` for the units in flight and settling (the rest are taken again after a restart). */
  async stop(ms = 5000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.wakeTimer) clearTimeout(this.wakeTimer);
    if (this.tickSoon) clearImmediate(this.tickSoon);
    this.tickSoon = undefined;
    const ended = (async () => {
      await Promise.allSettled([...this.inFlight]);
      await Promise.allSettled([...this.settling]);
    })();
    await Promise.race([ended, new Promise((r) => setTimeout(r, ms).unref())]);
  }
}
