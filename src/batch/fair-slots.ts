// Batch row slots shared fairly between organizations (h-harden, issue 24 item 5).
//
// TRIBUNAL_BATCH_CONCURRENCY rows may be in flight per instance. A free slot goes straight to
// whoever asks; once rows wait, a freed slot goes to the waiting organization that holds the fewest
// slots (ties: the one served longest ago). So an organization whose model is slow keeps the slots
// it holds until its rows finish, but takes no new one while another organization waits with fewer:
// with k organizations waiting, each ends up holding about 1/k of the slots (max-min fairness).
// Work-conserving: an organization alone may use every slot.

type Grant = () => void;

export class FairSlots {
  private active = 0;
  /** Slots each organization holds now. */
  private readonly held = new Map<string, number>();
  /** Waiting rows per organization, in arrival order; the map's order is the order of service. */
  private readonly waiting = new Map<string, Grant[]>();

  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new Error(`FairSlots max must be a positive integer, got ${max}`);
  }

  /** Slots held now, in all or by one organization. */
  inFlight(orgId?: string): number {
    return orgId === undefined ? this.active : (this.held.get(orgId) ?? 0);
  }

  /** Rows waiting now, in all or of one organization. */
  queued(orgId?: string): number {
    if (orgId !== undefined) return this.waiting.get(orgId)?.length ?? 0;
    let n = 0;
    for (const q of this.waiting.values()) n += q.length;
    return n;
  }

  /** Waits for a slot for a row of `orgId`; resolves to the function that gives it back (idempotent). */
  acquire(orgId: string): Promise<() => void> {
    return new Promise((resolve) => {
      const grant = () => {
        this.active++;
        this.held.set(orgId, (this.held.get(orgId) ?? 0) + 1);
        let released = false;
        resolve(() => {
          if (released) return;
          released = true;
          this.active--;
          const left = (this.held.get(orgId) ?? 1) - 1;
          if (left > 0) this.held.set(orgId, left);
          else this.held.delete(orgId);
          this.next();
        });
      };
      const queue = this.waiting.get(orgId);
      if (queue) queue.push(grant);
      else this.waiting.set(orgId, [grant]);
      this.next();
    });
  }

  private next(): void {
    while (this.active < this.max && this.waiting.size) {
      let pick: string | undefined;
      let fewest = Infinity;
      // The map's order: organizations served longest ago come first, so ties go round-robin.
      for (const org of this.waiting.keys()) {
        const h = this.held.get(org) ?? 0;
        if (h < fewest) [pick, fewest] = [org, h];
      }
      const queue = this.waiting.get(pick!)!;
      const grant = queue.shift()!;
      // Served: to the back of the order (re-inserted), or out of it when it has no more waiting.
      this.waiting.delete(pick!);
      if (queue.length) this.waiting.set(pick!, queue);
      grant();
    }
  }
}
