// Group commit for the store's hottest writes (issue 33): the writes that arrive while earlier ones
// of the same kind are on their way to the database go together, in one multi-row statement, as soon
// as a statement slot frees up. An interactive write that finds a slot free is sent alone at once,
// so an idle server answers as before; only a batch run's writes may wait a few ms for others to
// join (BATCH_HOLD_MS). A busy server (a batch run's rows finishing together) sends one statement
// for many, and spends its CPU on rows rather than round trips.
//
// Each write is answered only when the statement that carried it has committed (every statement
// here is one autocommitted statement), with its own outcome: a write the group refused on its own
// account (a conflict) gets its own error, and a statement that failed for a reason other than a lost
// connection is retried write by write, so one bad write never fails the writes grouped with it.
import { StoreUnavailableError } from '../types.ts';

/**
 * How long a batch run's write (its row's log, the row) waits for others to share its statement:
 * a row's answer comes this much later, which a run with dozens of rows in flight does not feel
 * (a row takes its model's latency, and it holds no model slot, a run's bottleneck, while it is
 * written). A run of 64 rows in flight on a 300 ms model writes about 130 logs and rows a second:
 * 5 ms gathered fewer than two writes a statement (0.83 statements a row), where every statement
 * costs this process a round trip's syscalls (about 0.15 ms) and the database a commit.
 */
export const BATCH_HOLD_MS = 25;

/** Each write's outcome, in the order of the writes given: a value, or the error of that write alone. */
export type GroupOutcome<R> = Array<{ ok: R } | { error: unknown }>;

export interface GroupCommitOptions<T, R> {
  /** Writes the group in one statement. */
  many: (items: T[]) => Promise<GroupOutcome<R>>;
  /** Writes one item alone (a group of one, and the fallback of a failed group). */
  one: (item: T) => Promise<R>;
  /** Writes per statement at most (bounded by the statement's parameters). */
  maxGroup: number;
  /** Statements of this kind on their way at once (the others queue and group). */
  maxInFlight: number;
  /** Two writes that must not share a statement (the same key twice): the later one waits for the next. */
  key?: (item: T) => string;
  /**
   * How long a write that finds a slot free may wait for others to join it (0: sent at once). Only
   * for writes nobody waits on interactively (a batch run's rows); a write that may not wait sends
   * the held ones with it, and a full group goes at once.
   */
  holdMs?: (item: T) => number;
}

interface Pending<T, R> {
  item: T;
  resolve: (value: R) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<T, R> {
  private queue: Array<Pending<T, R>> = [];
  private inFlight = 0;
  private held: NodeJS.Timeout | null = null;
  /** The keys of the writes in statements on their way (only with opts.key). */
  private readonly keysInFlight = new Set<string>();

  constructor(private readonly opts: GroupCommitOptions<T, R>) {}

  write(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      const hold = this.opts.holdMs?.(item) ?? 0;
      if (hold <= 0 || this.queue.length >= this.opts.maxGroup) return this.pump();
      this.held ??= setTimeout(() => this.pump(), hold);
    });
  }

  private pump(): void {
    if (this.held) clearTimeout(this.held);
    this.held = null;
    while (this.inFlight < this.opts.maxInFlight && this.queue.length) {
      const group = this.take();
      // Every queued write waits on a key in flight: the statement carrying it pumps again when done.
      if (!group.length) return;
      this.inFlight++;
      this.send(group).finally(() => {
        this.inFlight--;
        const { key } = this.opts;
        if (key) for (const p of group) this.keysInFlight.delete(key(p.item));
        this.pump();
      });
    }
  }

  /**
   * The next group: the oldest writes, up to maxGroup, no key twice, and no key of a statement still
   * on its way (two statements in flight may commit in either order, and the first write of a key
   * must be the one that wins: it waits for the next group instead).
   */
  private take(): Array<Pending<T, R>> {
    const { key, maxGroup } = this.opts;
    if (!key) return this.queue.splice(0, maxGroup);
    const group: Array<Pending<T, R>> = [];
    const rest: Array<Pending<T, R>> = [];
    const keys = new Set<string>();
    for (const p of this.queue) {
      const k = key(p.item);
      if (group.length < maxGroup && !keys.has(k) && !this.keysInFlight.has(k)) group.push(p);
      else rest.push(p);
      keys.add(k);
    }
    this.queue = rest;
    for (const p of group) this.keysInFlight.add(key(p.item));
    return group;
  }

  private async send(group: Array<Pending<T, R>>): Promise<void> {
    if (group.length === 1) return settleOne(group[0], this.opts.one);
    let outcomes: GroupOutcome<R>;
    try {
      outcomes = await this.opts.many(group.map((p) => p.item));
    } catch (err) {
      // A lost connection may have taken the statement with it or not: as with a write alone, each
      // caller hears of it (writes are never retried blind). Any other failure: each write alone.
      if (err instanceof StoreUnavailableError) return group.forEach((p) => p.reject(err));
      await Promise.all(group.map((p) => settleOne(p, this.opts.one)));
      return;
    }
    group.forEach((p, i) => {
      const o = outcomes[i];
      if ('ok' in o) p.resolve(o.ok);
      else p.reject(o.error);
    });
  }
}

async function settleOne<T, R>(p: Pending<T, R>, one: (item: T) => Promise<R>): Promise<void> {
  try {
    p.resolve(await one(p.item));
  } catch (err) {
    p.reject(err);
  }
}
