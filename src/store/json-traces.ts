// The JSON store's spans (src/traces/types.ts): traces/spans.jsonl and traces/evaluations.jsonl in
// the data directory, append-only, one JSON line per record, each append group-committed and
// fdatasync'd before it is answered (append-file.ts); held in memory per organization (the
// span cap per organization, TRIBUNAL_TRACE_MAX_SPANS, bounds it). Log events (OTLP logs of GenAI
// events) are traces/log-events.jsonl, bounded by TRIBUNAL_TRACE_MAX_LOG_RECORDS, merged into their
// span when it is read. A torn last line (a crash
// mid-append) is dropped at load; pruning (retention) rewrites the file through a temp file, fsync + rename.
// spans.jsonl also carries the rule store's enqueue lines (span-carrier.ts): skipped by every reader
// (readSpanFile), kept by a rewrite while the journal may not hold them yet.
import fs from 'node:fs';
import path from 'node:path';
import type { Span, SpanEvaluation, SpanLogEvent, SpanRecord, TraceFilter, TracePageQuery, TraceStore, TraceSummary } from '../traces/types.ts';
import { logEventKey, spanKey, spanRecord, withLogEvents } from '../traces/types.ts';
import { AppendFile } from './append-file.ts';
import { isCarried, SpanCarrier } from './span-carrier.ts';

interface OrgSpans {
  traces: Map<string, SpanRecord[]>;
  count: number;
}

/** An organization's log events (traces/log-events.jsonl), by span (trace:span), whether or not the span is stored. */
interface OrgLogEvents {
  bySpan: Map<string, (SpanLogEvent & { key: string })[]>;
  count: number;
}
type LogLine = SpanLogEvent & { org_id: string; key: string };

const nanos = (v: string) => v.padStart(24, '0');
/** A span of an organization, as insertSpans tracks its write until it is on disk. */
const unsyncedKey = (orgId: string, s: Pick<Span, 'trace_id' | 'span_id'>) => `${orgId}:${s.trace_id}:${s.span_id}`;
const logOrder = (a: SpanLogEvent, b: SpanLogEvent) =>
  a.time_unix_nano !== b.time_unix_nano
    ? nanos(a.time_unix_nano) < nanos(b.time_unix_nano)
      ? -1
      : 1
    : a.received_at !== b.received_at
      ? a.received_at < b.received_at
        ? -1
        : 1
      : a.seq - b.seq;

/** One record per line, less those `aside` takes; a torn last line (a crash mid-append) is left out. Also read by `tribunal migrate`. */
export function readLines<T>(file: string, aside?: (line: string) => boolean): T[] {
  if (!fs.existsSync(file)) return [];
  const out: T[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line || aside?.(line)) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      /* a torn line from a crash mid-append: the exporter retried or the span is lost with the crash */
    }
  }
  return out;
}

/** The spans of a spans file, and the rule store's carried lines apart (span-carrier.ts; a torn one fails to parse where it is applied). */
export function readSpanFile(file: string): { spans: SpanRecord[]; carried: string[] } {
  const carried: string[] = [];
  const aside = (line: string): boolean => {
    if (!isCarried(line)) return false;
    carried.push(line);
    return true;
  };
  return { spans: readLines<SpanRecord>(file, aside), carried };
}

export function summarize(traceId: string, spans: SpanRecord[], evaluations: number): TraceSummary {
  const root = spans.find((s) => s.parent_span_id === null) ?? null;
  let start = spans[0].start_time;
  let end = spans[0].end_time;
  for (const s of spans) {
    if (s.start_time < start) start = s.start_time;
    if (s.end_time > end) end = s.end_time;
  }
  return {
    trace_id: traceId,
    root_span_name: root?.name ?? null,
    service_name: (root ?? spans[0]).service_name,
    start_time: start,
    end_time: end,
    span_count: spans.length,
    error_count: spans.filter((s) => s.status.code === 'error').length,
    evaluation_count: evaluations,
  };
}

export function spanMatches(s: SpanRecord, f: TraceFilter): boolean {
  if (f.service_name !== undefined && s.service_name !== f.service_name) return false;
  if (f.span_name !== undefined && s.name !== f.span_name) return false;
  if (f.date_from !== undefined && s.start_time < f.date_from) return false;
  if (f.date_to !== undefined && s.start_time > f.date_to) return false;
  if (f.attribute) {
    if (!(f.attribute.key in s.attributes)) return false;
    if (f.attribute.value !== undefined) {
      const v = s.attributes[f.attribute.key];
      if ((typeof v === 'string' ? v : JSON.stringify(v)) !== f.attribute.value) return false;
    }
  }
  return true;
}

export class JsonTraceStore implements TraceStore {
  private readonly orgs = new Map<string, OrgSpans>();
  private readonly evaluations = new Map<string, SpanEvaluation[]>(); // org:trace -> evaluations
  private readonly logs = new Map<string, OrgLogEvents>();
  private readonly spansFile: AppendFile;
  /** The write each span given but not yet on disk waits for, by unsyncedKey. */
  private readonly unsynced = new Map<string, Promise<void>>();
  private readonly evalFile: AppendFile;
  private readonly logFile: AppendFile;
  /** The rule store's enqueue lines ride this store's spans file (span-carrier.ts). */
  readonly carrier: SpanCarrier;

  constructor(dataDir: string) {
    const dir = path.join(dataDir, 'traces');
    fs.mkdirSync(dir, { recursive: true });
    const [spans, evals, logs] = ['spans.jsonl', 'evaluations.jsonl', 'log-events.jsonl'].map((f) => path.join(dir, f)) as [string, string, string];
    const read = readSpanFile(spans);
    for (const s of read.spans) this.add(s);
    for (const l of readLines<LogLine>(logs)) this.addLog(l.org_id, l);
    for (const e of readLines<SpanEvaluation>(evals)) this.addEval(e);
    this.spansFile = new AppendFile(spans);
    this.carrier = new SpanCarrier(this.spansFile, read.carried);
    this.evalFile = new AppendFile(evals);
    this.logFile = new AppendFile(logs);
  }

  /** Lets the files go once every append is on disk (the JSON store calls this before it releases its lock). */
  async close(): Promise<void> {
    await Promise.all([this.spansFile.close(), this.evalFile.close(), this.logFile.close()]);
  }

  private org(orgId: string): OrgSpans {
    let o = this.orgs.get(orgId);
    if (!o) this.orgs.set(orgId, (o = { traces: new Map(), count: 0 }));
    return o;
  }
  private add(s: SpanRecord): boolean {
    const o = this.org(s.org_id);
    const list = o.traces.get(s.trace_id) ?? [];
    if (list.some((x) => x.span_id === s.span_id)) return false;
    list.push(s);
    o.traces.set(s.trace_id, list);
    o.count++;
    return true;
  }
  /** Takes back a span whose write failed (insertSpans). */
  private remove(s: SpanRecord): void {
    const o = this.org(s.org_id);
    const list = o.traces.get(s.trace_id);
    const at = list?.indexOf(s) ?? -1;
    if (!list || at < 0) return;
    list.splice(at, 1);
    if (!list.length) o.traces.delete(s.trace_id);
    o.count--;
  }
  private orgLogs(orgId: string): OrgLogEvents {
    let o = this.logs.get(orgId);
    if (!o) this.logs.set(orgId, (o = { bySpan: new Map(), count: 0 }));
    return o;
  }
  private addLog(orgId: string, l: SpanLogEvent & { key: string }): boolean {
    const o = this.orgLogs(orgId);
    const k = spanKey(l);
    const list = o.bySpan.get(k) ?? [];
    if (list.some((x) => x.key === l.key)) return false;
    list.push(l);
    o.bySpan.set(k, list);
    o.count++;
    return true;
  }
  /** Spans (already cloned) with their log events merged in. */
  private merged<S extends SpanRecord>(orgId: string, spans: S[]): S[] {
    const o = this.logs.get(orgId);
    if (!o?.count) return spans;
    for (const s of spans) {
      const list = o.bySpan.get(spanKey(s));
      if (list) withLogEvents(s, structuredClone([...list].sort(logOrder).map((l) => l.event)));
    }
    return spans;
  }
  private addEval(e: SpanEvaluation) {
    const k = `${e.org_id}:${e.trace_id}`;
    const list = this.evaluations.get(k) ?? [];
    list.push(e);
    this.evaluations.set(k, list);
  }
  async insertSpans(orgId: string, spans: Span[], maxSpans: number, decided?: (stored: Span[]) => void) {
    const o = this.org(orgId);
    let inserted = 0;
    let duplicates = 0;
    let refused = 0;
    const lines: string[] = [];
    const stored: Span[] = [];
    const added: SpanRecord[] = [];
    // A duplicate of a span whose write is still on its way is answered only when that write is on
    // disk (and fails with it): a retry racing its original must not hear "stored" before it is.
    const originals = new Set<Promise<void>>();
    for (const s of spans) {
      if (o.count >= maxSpans) {
        if (o.traces.get(s.trace_id)?.some((x) => x.span_id === s.span_id)) {
          duplicates++;
          const original = this.unsynced.get(unsyncedKey(orgId, s));
          if (original) originals.add(original);
        } else refused++;
        continue;
      }
      const rec = spanRecord(s, orgId);
      if (this.add(rec)) {
        inserted++;
        stored.push(s);
        added.push(rec);
        lines.push(JSON.stringify(rec));
      } else {
        duplicates++;
        const original = this.unsynced.get(unsyncedKey(orgId, s));
        if (original) originals.add(original);
      }
    }
    if (!lines.length) {
      await Promise.all(originals);
      return { inserted, duplicates, refused, stored };
    }
    const written = this.spansFile.append(`${lines.join('\n')}\n`);
    for (const rec of added) this.unsynced.set(unsyncedKey(orgId, rec), written);
    // The caller's enqueue starts now: its fdatasync runs beside this one (TraceStore.insertSpans).
    decided?.(stored);
    try {
      await written;
    } catch (err) {
      // The write was cut back off the file (append-file.ts): the spans are not stored, so they leave
      // memory too, and the exporter's retry stores them instead of being told they are duplicates.
      for (const rec of added) this.remove(rec);
      throw err;
    } finally {
      for (const rec of added) {
        const key = unsyncedKey(orgId, rec);
        if (this.unsynced.get(key) === written) this.unsynced.delete(key);
      }
    }
    await Promise.all(originals);
    return { inserted, duplicates, refused, stored };
  }

  async insertLogEvents(orgId: string, events: SpanLogEvent[], maxEvents: number) {
    const o = this.orgLogs(orgId);
    let inserted = 0;
    let duplicates = 0;
    let refused = 0;
    const lines: string[] = [];
    for (const e of events) {
      const line: LogLine = { org_id: orgId, key: logEventKey(e), ...e };
      if (o.bySpan.get(spanKey(e))?.some((x) => x.key === line.key)) duplicates++;
      else if (o.count >= maxEvents) refused++;
      else if (this.addLog(orgId, line)) {
        inserted++;
        lines.push(JSON.stringify(line));
      } else duplicates++;
    }
    if (lines.length) await this.logFile.append(`${lines.join('\n')}\n`);
    return { inserted, duplicates, refused };
  }
  async countLogEvents(orgId: string) {
    return this.logs.get(orgId)?.count ?? 0;
  }

  async getTrace(orgId: string, traceId: string) {
    const list = this.orgs.get(orgId)?.traces.get(traceId) ?? [];
    return this.merged(
      orgId,
      structuredClone(list).sort((a, b) => (a.start_time_unix_nano.padStart(20, '0') < b.start_time_unix_nano.padStart(20, '0') ? -1 : 1)),
    );
  }
  /**
   * Read-only (TraceStore.getSpan): the record held, not a copy (a deep copy per judged unit cost about
   * 20 µs, issue 33); with log events, a shallow copy that holds them (withLogEvents sets `events`).
   */
  async getSpan(orgId: string, traceId: string, spanId: string) {
    const s = this.orgs
      .get(orgId)
      ?.traces.get(traceId)
      ?.find((x) => x.span_id === spanId);
    if (!s) return null;
    return this.logs.get(orgId)?.bySpan.has(spanKey(s)) ? this.merged(orgId, [{ ...s }])[0]! : s;
  }

  async listTraces(f: TraceFilter, page: TracePageQuery) {
    const o = this.orgs.get(f.org_id);
    const all: TraceSummary[] = [];
    for (const [traceId, spans] of o?.traces ?? []) {
      if (!spans.some((s) => spanMatches(s, f))) continue;
      const evals = this.evaluations.get(`${f.org_id}:${traceId}`)?.length ?? 0;
      if (f.has_evaluation !== undefined && f.has_evaluation !== evals > 0) continue;
      all.push(summarize(traceId, spans, evals));
    }
    all.sort((a, b) => (a.start_time !== b.start_time ? (a.start_time < b.start_time ? 1 : -1) : a.trace_id < b.trace_id ? 1 : -1));
    const after = page.after;
    const rest = after ? all.filter((t) => t.start_time < after.start_time || (t.start_time === after.start_time && t.trace_id < after.trace_id)) : all;
    const items = rest.slice(0, page.limit);
    const tail = items[items.length - 1];
    return rest.length > page.limit && tail ? { items, last: { start_time: tail.start_time, trace_id: tail.trace_id } } : { items };
  }

  async listSpans(orgId: string, q: { from?: string; to?: string; limit: number; after?: { received_at: string; key: string } }) {
    const rows: SpanRecord[] = [];
    for (const spans of this.orgs.get(orgId)?.traces.values() ?? []) {
      for (const s of spans) {
        if (q.from !== undefined && s.received_at < q.from) continue;
        if (q.to !== undefined && s.received_at >= q.to) continue;
        if (q.after && (s.received_at < q.after.received_at || (s.received_at === q.after.received_at && spanKey(s) <= q.after.key))) continue;
        rows.push(s);
      }
    }
    rows.sort((a, b) => (a.received_at !== b.received_at ? (a.received_at < b.received_at ? -1 : 1) : spanKey(a) < spanKey(b) ? -1 : 1));
    return this.merged(orgId, structuredClone(rows.slice(0, q.limit)));
  }

  async prune(before: string) {
    let removed = 0;
    for (const o of this.orgs.values()) {
      for (const [traceId, spans] of o.traces) {
        const keep = spans.every((s) => s.start_time >= before) ? spans : spans.filter((s) => s.start_time >= before);
        removed += spans.length - keep.length;
        o.count -= spans.length - keep.length;
        if (keep.length) o.traces.set(traceId, keep);
        else o.traces.delete(traceId);
      }
    }
    if (removed) await this.rewrite();
    const beforeNanos = nanos(`${BigInt(Date.parse(before)) * 1_000_000n}`);
    let logsRemoved = 0;
    for (const o of this.logs.values()) {
      for (const [k, list] of o.bySpan) {
        const keep = list.filter((l) => nanos(l.time_unix_nano) >= beforeNanos);
        logsRemoved += list.length - keep.length;
        o.count -= list.length - keep.length;
        if (keep.length) o.bySpan.set(k, keep);
        else o.bySpan.delete(k);
      }
    }
    if (logsRemoved) await this.rewriteLogs();
    return removed;
  }

  /** The log events file rewritten from memory (every line appended so far is there). */
  private rewriteLogs(): Promise<void> {
    return this.logFile.rewrite(() => {
      const lines: string[] = [];
      for (const [orgId, o] of this.logs) for (const list of o.bySpan.values()) for (const l of list) lines.push(JSON.stringify({ org_id: orgId, ...l }));
      return lines.length ? `${lines.join('\n')}\n` : '';
    });
  }

  /**
   * The spans file rewritten from memory, with the carried enqueue lines the rules journal may not
   * hold on disk yet (read when the rewrite runs): an answered enqueue never loses its only durable copy.
   */
  private rewrite(): Promise<void> {
    return this.spansFile.rewrite(() => {
      const lines: string[] = [];
      for (const o of this.orgs.values()) for (const spans of o.traces.values()) for (const s of spans) lines.push(JSON.stringify(s));
      return (lines.length ? `${lines.join('\n')}\n` : '') + this.carrier.keptText();
    });
  }

  async countSpans(orgId: string) {
    return this.orgs.get(orgId)?.count ?? 0;
  }
  /**
   * Listed at once; resolves once its line is on disk. The line is carried (append-file.ts): it starts
   * no fdatasync of its own but rides the file's next commit, at most CARRY_MS later, so links
   * share one sync (issue 33). No client waits on it: the worker (src/traces/rules/run.ts) finishes
   * the unit only after this resolves, so the finish is never durable without the link; a crash
   * before leaves the unit queued, and the link, read again from this file, is not found, so it is judged again.
   * A failed write takes the link back out of memory, as it is not in the file.
   */
  async addEvaluation(e: SpanEvaluation) {
    this.addEval(e);
    try {
      await this.evalFile.appendCarried(`${JSON.stringify(e)}\n`);
    } catch (err) {
      const list = this.evaluations.get(`${e.org_id}:${e.trace_id}`);
      const at = list?.indexOf(e) ?? -1;
      if (list && at >= 0) list.splice(at, 1);
      if (list && !list.length) this.evaluations.delete(`${e.org_id}:${e.trace_id}`);
      throw err;
    }
  }
  async listEvaluations(orgId: string, traceId: string) {
    return structuredClone(this.evaluations.get(`${orgId}:${traceId}`) ?? []);
  }
  async purgeOrganization(orgId: string) {
    if (this.orgs.delete(orgId)) await this.rewrite();
    if (this.logs.delete(orgId)) await this.rewriteLogs();
    for (const k of [...this.evaluations.keys()]) if (k.startsWith(`${orgId}:`)) this.evaluations.delete(k);
  }
}
