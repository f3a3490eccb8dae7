// A binary min-heap whose entries may go stale: an entry is never removed from the middle, it is
// skipped when it reaches the top and its owner says it no longer holds (`isLive`). The JSON rule
// store's queue keeps its due order and each rule's oldest waiting unit this way, so a claim or a
// shed looks at the few units it takes instead of every unit held (issue 33).

export interface HeapEntry<T> {
  /** Compared first (ISO instants compare as strings). */
  key: string;
  /** Then the order of pushing: equal keys leave in the order they came. */
  order: number;
  value: T;
}

export class LazyHeap<T> {
  private items: HeapEntry<T>[] = [];
  private pushed = 0;

  constructor(private readonly isLive: (e: HeapEntry<T>) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  push(key: string, value: T): void {
    const items = this.items;
    items.push({ key, order: this.pushed++, value });
    let i = items.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!less(items[i]!, items[up]!)) break;
      [items[i], items[up]] = [items[up]!, items[i]!];
      i = up;
    }
  }

  /** The smallest live entry, stale ones above it dropped on the way; undefined when none is left. */
  peek(): HeapEntry<T> | undefined {
    while (this.items.length && !this.isLive(this.items[0]!)) this.removeTop();
    return this.items[0];
  }

  pop(): HeapEntry<T> | undefined {
    const top = this.peek();
    if (top) this.removeTop();
    return top;
  }

  /** Drops every stale entry at once (when they have come to outnumber the live ones). */
  compact(): void {
    const live = this.items.filter((e) => this.isLive(e)).sort((a, b) => (less(a, b) ? -1 : 1));
    // A sorted array is a heap already.
    this.items = live;
  }

  private removeTop(): void {
    const items = this.items;
    const last = items.pop()!;
    if (!items.length) return;
    items[0] = last;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < items.length && less(items[l]!, items[m]!)) m = l;
      if (r < items.length && less(items[r]!, items[m]!)) m = r;
      if (m === i) return;
      [items[i], items[m]] = [items[m]!, items[i]!];
      i = m;
    }
  }
}

const less = <T>(a: HeapEntry<T>, b: HeapEntry<T>) => (a.key !== b.key ? a.key < b.key : a.order < b.order);
