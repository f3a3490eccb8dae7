// The JSON store's in-memory index of execution logs: only what list filters and cursors read, one
// row per log in typed-array columns, with the log's place in logs.jsonl (byte offset and length) so
// that its full record is read from the file when asked for. About 200 bytes per log (100,000 logs:
// ~20 MB) where the parsed records took ~2.5 KB each.
//
// Strings that repeat (org, judge, project, evaluator ids, tags) are interned to integer codes; a
// log's evaluator ids and its tags are interned as whole sets, which all logs of one judge share.
// A judged span's trace and span ids do not repeat (a log each), so they are kept as they are, in
// string columns: interning them cost two inserts into an ever larger map per log, most of the
// index's time in the span door's profile (issue 33), to save nothing.
// To index one more string field: add an Int32Array column next to `session`, fill it with
// `this.codes.code(...)` in add() (-1 for null), copy it in compact(), resize it in grow(), and test
// it in matcher() like session_id.
import { CodeSets, StringCodes } from './log-codes.ts';
import { isAfter, type LogFilter } from './types.ts';

/**
 * session_id and user_id filter logs since the conversations work (issue 19); spelled out here so
 * that the index carries them whether or not LogFilter names them yet.
 */
export type IndexFilter = LogFilter & { session_id?: string; user_id?: string };
/** Log fields whose values can be listed, in bytewise order (PostgreSQL's "C" collation). */
export type ValueField = 'session_id' | 'user_id';

/** A log whose line is not on disk yet: its record is served from memory until the commit. */
export const PENDING = -1;

/** The fields of a log the index reads; anything else in the record stays on disk. */
export interface IndexedLog {
  id: string;
  org_id: string;
  created_at: string;
  judge_id?: unknown;
  evaluator_id?: unknown;
  project_id?: unknown;
  session_id?: unknown;
  batch_execution_id?: unknown;
  type?: unknown; // h-proxy: the type filter
  user_id?: unknown;
  trace_id?: unknown; // issue 28: the judged span's trace and span
  span_id?: unknown;
  score?: unknown;
  cost_usd?: unknown;
  tags: unknown[];
  evaluator_results: unknown[];
}

const str = (v: unknown): v is string => typeof v === 'string';
const num = (v: unknown) => (typeof v === 'number' ? v : NaN);

export class LogIndex {
  private rows = 0;
  private capacity = 0;
  private readonly ids: string[] = [];
  private readonly createdAt: string[] = [];
  private org = new Int32Array(0);
  private judge = new Int32Array(0);
  private project = new Int32Array(0);
  private session = new Int32Array(0);
  private batch = new Int32Array(0);
  private kind = new Int32Array(0); // h-proxy: the log's type
  private user = new Int32Array(0);
  /** null when the log names no trace or span. */
  private readonly traceIds: (string | null)[] = [];
  private readonly spanIds: (string | null)[] = [];
  private evaluators = new Int32Array(0);
  private tags = new Int32Array(0);
  /** NaN for null. */
  private score = new Float64Array(0);
  private cost = new Float64Array(0);
  /** Byte offset of the line in logs.jsonl, or PENDING. Float64: files may pass 4 GB. */
  private offset = new Float64Array(0);
  private length = new Uint32Array(0);
  /** Live rows, oldest -> newest by (created_at, id); a purged row leaves it. */
  private order = new Int32Array(0);
  private orderLength = 0;
  private readonly rowById = new Map<string, number>();
  private readonly codes = new StringCodes();
  private readonly sets = new CodeSets(this.codes);

  /** Live logs. */
  get size(): number {
    return this.orderLength;
  }

  /** Rows ever added, purged ones included (row numbers are below it). */
  get rowCount(): number {
    return this.rows;
  }

  has(id: string): boolean {
    return this.rowById.has(id);
  }

  rowOf(id: string): number | undefined {
    return this.rowById.get(id);
  }

  idOf(row: number): string {
    return this.ids[row]!;
  }

  cursorOf(row: number): { created_at: string; id: string } {
    return { created_at: this.createdAt[row]!, id: this.ids[row]! };
  }

  location(row: number): { offset: number; length: number } {
    return { offset: this.offset[row]!, length: this.length[row]! };
  }

  setLocation(row: number, offset: number, length: number): void {
    this.offset[row] = offset;
    this.length[row] = length;
  }

  /** Indexes a log; `offset` PENDING while its line is not committed. Answers its row. */
  add(log: IndexedLog, offset: number, length: number): number {
    const evaluatorIds: string[] = [];
    for (const r of log.evaluator_results) {
      const id = (r as { evaluator_id?: unknown } | null)?.evaluator_id;
      if (str(id)) evaluatorIds.push(id);
    }
    if (str(log.evaluator_id)) evaluatorIds.push(log.evaluator_id);
    const row = this.newRow(log.id, log.created_at);
    this.org[row] = this.codes.code(log.org_id);
    this.judge[row] = str(log.judge_id) ? this.codes.code(log.judge_id) : -1;
    this.project[row] = str(log.project_id) ? this.codes.code(log.project_id) : -1;
    this.session[row] = str(log.session_id) ? this.codes.code(log.session_id) : -1;
    this.batch[row] = str(log.batch_execution_id) ? this.codes.code(log.batch_execution_id) : -1;
    this.kind[row] = str(log.type) ? this.codes.code(log.type) : -1;
    this.user[row] = str(log.user_id) ? this.codes.code(log.user_id) : -1;
    this.traceIds[row] = str(log.trace_id) ? log.trace_id : null;
    this.spanIds[row] = str(log.span_id) ? log.span_id : null;
    this.evaluators[row] = this.sets.code(evaluatorIds);
    this.tags[row] = this.sets.code(log.tags.filter(str));
    this.score[row] = num(log.score);
    this.cost[row] = num(log.cost_usd);
    this.offset[row] = offset;
    this.length[row] = length;
    this.place(row);
    return row;
  }

  private newRow(id: string, createdAt: string): number {
    if (this.rows === this.capacity) this.grow(Math.max(1024, this.capacity * 2));
    const row = this.rows++;
    this.ids[row] = id;
    this.createdAt[row] = createdAt;
    this.rowById.set(id, row);
    return row;
  }

  private grow(capacity: number): void {
    const resize = <A extends Int32Array | Float64Array | Uint32Array>(a: A): A => {
      const next = new (a.constructor as new (n: number) => A)(capacity);
      next.set(a);
      return next;
    };
    this.org = resize(this.org);
    this.judge = resize(this.judge);
    this.project = resize(this.project);
    this.session = resize(this.session);
    this.batch = resize(this.batch);
    this.kind = resize(this.kind);
    this.user = resize(this.user);
    this.evaluators = resize(this.evaluators);
    this.tags = resize(this.tags);
    this.score = resize(this.score);
    this.cost = resize(this.cost);
    this.offset = resize(this.offset);
    this.length = resize(this.length);
    this.order = resize(this.order);
    this.capacity = capacity;
  }

  /** Newest-first comparison of two rows, as types.ts's newestFirst. */
  private compare(a: number, b: number): number {
    const ca = this.createdAt[a]!;
    const cb = this.createdAt[b]!;
    if (ca !== cb) return ca < cb ? 1 : -1;
    const ia = this.ids[a]!;
    const ib = this.ids[b]!;
    return ia < ib ? 1 : ia > ib ? -1 : 0;
  }

  private place(row: number): void {
    // Appends nearly always land at the end; a run that finished out of order is placed by binary
    // search so that listing stays newest-first without sorting.
    let lo = this.orderLength;
    if (lo > 0 && this.compare(this.order[lo - 1]!, row) < 0) {
      let hi = lo;
      lo = 0;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.compare(this.order[mid]!, row) > 0) lo = mid + 1;
        else hi = mid;
      }
      this.order.copyWithin(lo + 1, lo, this.orderLength);
    }
    this.order[lo] = row;
    this.orderLength++;
  }

  /** Drops every log of `orgId` from the index; answers how many. */
  removeOrg(orgId: string): number {
    const code = this.codes.find(orgId);
    if (code < 0) return 0;
    let kept = 0;
    for (let i = 0; i < this.orderLength; i++) {
      const row = this.order[i]!;
      if (this.org[row] === code) this.rowById.delete(this.ids[row]!);
      else this.order[kept++] = row;
    }
    const removed = this.orderLength - kept;
    this.orderLength = kept;
    return removed;
  }

  /** Live rows whose line is on disk, in file order (for a rewrite of the file). */
  committedRowsInFileOrder(): number[] {
    const rows: number[] = [];
    for (let i = 0; i < this.orderLength; i++) if (this.offset[this.order[i]!]! !== PENDING) rows.push(this.order[i]!);
    return rows.sort((a, b) => this.offset[a]! - this.offset[b]!);
  }

  /**
   * A fresh index of the live rows only (purged rows and their interned strings let go), placed by
   * `where(row)`: the row's new [offset, length], or undefined to keep it PENDING.
   */
  compact(where: (row: number) => [number, number] | undefined): LogIndex {
    const next = new LogIndex();
    next.grow(Math.max(1024, this.orderLength));
    const code = (c: number) => (c < 0 ? -1 : next.codes.code(this.codes.strings[c]!));
    const setCodes = new Map<number, number>();
    const setCode = (s: number) => {
      let c = setCodes.get(s);
      if (c === undefined) setCodes.set(s, (c = next.sets.code(Array.from(this.sets.sets[s]!, (m) => this.codes.strings[m]!))));
      return c;
    };
    for (let i = 0; i < this.orderLength; i++) {
      const row = this.order[i]!;
      const r = next.newRow(this.ids[row]!, this.createdAt[row]!);
      next.org[r] = code(this.org[row]!);
      next.judge[r] = code(this.judge[row]!);
      next.project[r] = code(this.project[row]!);
      next.session[r] = code(this.session[row]!);
      next.batch[r] = code(this.batch[row]!);
      next.kind[r] = code(this.kind[row]!);
      next.user[r] = code(this.user[row]!);
      next.traceIds[r] = this.traceIds[row]!;
      next.spanIds[r] = this.spanIds[row]!;
      next.evaluators[r] = setCode(this.evaluators[row]!);
      next.tags[r] = setCode(this.tags[row]!);
      next.score[r] = this.score[row]!;
      next.cost[r] = this.cost[row]!;
      const at = where(row);
      next.offset[r] = at ? at[0] : PENDING;
      next.length[r] = at ? at[1] : 0;
      next.order[next.orderLength++] = r;
    }
    return next;
  }

  /** Position in `order` of the first row not older than the cursor (rows before it are older). */
  private olderThan(after: { created_at: string; id: string }): number {
    let lo = 0;
    let hi = this.orderLength;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (isAfter(this.cursorOf(this.order[mid]!), after)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Rows matching `filter`, newest first, strictly after the cursor, at most `max` of them. */
  find(filter: IndexFilter, after: { created_at: string; id: string } | undefined, max: number): number[] {
    const found: number[] = [];
    const matches = this.matcher(filter);
    if (!matches) return found;
    let i = after ? this.olderThan(after) : this.orderLength;
    if (filter.date_to !== undefined) {
      // Everything newer than date_to is skipped by a binary search, not a scan.
      let lo = 0;
      let hi = i;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (this.createdAt[this.order[mid]!]! <= filter.date_to) lo = mid + 1;
        else hi = mid;
      }
      i = lo;
    }
    const from = filter.date_from;
    for (i--; i >= 0 && found.length < max; i--) {
      const row = this.order[i]!;
      if (from !== undefined && this.createdAt[row]! < from) break; // the rest are older still
      if (matches(row)) found.push(row);
    }
    return found;
  }

  /** The filter as a test on a row, or null when no log can match (an unknown id or tag). */
  private matcher(f: IndexFilter): ((row: number) => boolean) | null {
    const org = this.codes.find(f.org_id);
    const judge = f.judge_id === undefined ? undefined : this.codes.find(f.judge_id);
    const project = f.project_id === undefined ? undefined : this.codes.find(f.project_id);
    const session = f.session_id === undefined ? undefined : this.codes.find(f.session_id);
    const batch = f.batch_execution_id === undefined ? undefined : this.codes.find(f.batch_execution_id);
    const user = f.user_id === undefined ? undefined : this.codes.find(f.user_id);
    const kind = f.type === undefined ? undefined : this.codes.find(f.type);
    const { trace_id: trace, span_id: span } = f;
    const evaluator = f.evaluator_id === undefined ? undefined : this.codes.find(f.evaluator_id);
    const tags = f.tags?.length ? f.tags.map((t) => this.codes.find(t)) : undefined;
    if (org < 0 || judge === -1 || project === -1 || session === -1 || batch === -1 || kind === -1 || user === -1 || evaluator === -1 || tags?.includes(-1)) return null;
    // Many rows share a set: each set is tested once per query (0 not yet, 1 yes, 2 no).
    const memo = (test: (set: Int32Array) => boolean) => {
      const known = new Uint8Array(this.sets.sets.length);
      return (s: number) => {
        if (!known[s]) known[s] = test(this.sets.sets[s]!) ? 1 : 2;
        return known[s] === 1;
      };
    };
    const hasEvaluator = evaluator === undefined ? undefined : memo((set) => set.includes(evaluator));
    const hasTags = tags === undefined ? undefined : memo((set) => tags.every((t) => set.includes(t)));
    const { min_score, max_score, min_cost, max_cost, date_from, date_to } = f;
    return (row) =>
      this.org[row] === org &&
      (judge === undefined || this.judge[row] === judge) &&
      (project === undefined || this.project[row] === project) &&
      (session === undefined || this.session[row] === session) &&
      (batch === undefined || this.batch[row] === batch) &&
      (f.in_batch === undefined || this.batch[row]! >= 0 === f.in_batch) &&
      (user === undefined || this.user[row] === user) &&
      (kind === undefined || this.kind[row] === kind) &&
      (trace === undefined || this.traceIds[row] === trace) &&
      (span === undefined || this.spanIds[row] === span) &&
      (hasEvaluator === undefined || hasEvaluator(this.evaluators[row]!)) &&
      // A null score or cost is NaN here, and NaN fails every comparison: it matches no bound.
      (min_score === undefined || this.score[row]! >= min_score) &&
      (max_score === undefined || this.score[row]! <= max_score) &&
      (min_cost === undefined || this.cost[row]! >= min_cost) &&
      (max_cost === undefined || this.cost[row]! <= max_cost) &&
      (hasTags === undefined || hasTags(this.tags[row]!)) &&
      (date_from === undefined || this.createdAt[row]! >= date_from) &&
      (date_to === undefined || this.createdAt[row]! <= date_to);
  }

  /**
   * The organization's distinct values of `field` (at most 200 characters, as PostgreSQL's index
   * holds them), bytewise ascending, after `after`, starting with `starts_with`.
   */
  values(orgId: string, field: ValueField, query: { limit: number; after?: string; starts_with?: string }): { values: string[]; more: boolean } {
    const org = this.codes.find(orgId);
    const column = field === 'session_id' ? this.session : this.user;
    const seen = new Set<number>();
    for (let i = 0; i < this.orderLength; i++) {
      const row = this.order[i]!;
      if (this.org[row] === org && column[row]! >= 0) seen.add(column[row]!);
    }
    const values = [...seen]
      .map((c) => this.codes.strings[c]!)
      .filter((v) => v.length <= 200 && (!query.starts_with || v.startsWith(query.starts_with)) && (query.after === undefined || bytewise(v, query.after) > 0))
      .sort(bytewise);
    return { values: values.slice(0, query.limit), more: values.length > query.limit };
  }
}

/** Bytewise (UTF-8) order, PostgreSQL's "C" collation, so both stores list values alike. */
const bytewise = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));
