// A span rule's enqueue carried by the spans file's own commit (issue 33). An OTLP export on the JSON
// store made two durable commits side by side: its spans (traces/spans.jsonl, json-traces.ts) and the
// rules journal's `jobs` line that queues their units (json-eval-rules.ts), one fdatasync each. Now the
// `jobs` line goes to the journal written but not synced (journal.ts, 'written'), and an exact copy of
// it, numbered like every journal line (`{"s":…}`), is appended to spans.jsonl in the same turn as the
// spans, so the spans file's one commit makes both durable; the export is still answered only after it.
//
// What this asks of the rest:
// - every reader of spans.jsonl skips these lines (isCarried): the trace store's load
//   (json-traces.ts readSpanFile) and `tribunal migrate` (migrate-rooms.ts, through the same reader);
// - at start the rule store recovers from them the changes its journal lost (an OS crash before the
//   journal's lazy sync): json-eval-rules-state.ts loadRuleState, which says why that is exact;
// - a rewrite of spans.jsonl (retention, a purge) keeps every carried line whose journal copy is not
//   yet known to be on disk (keptText), so the only durable copy of an answered enqueue is never dropped.
import type { AppendFile } from './append-file.ts';

/**
 * How a carried line starts: a journal line is `{"s":<number>,"k":…}` (its number first). A span
 * record's first key is `trace_id`, so no span line starts like this.
 */
const PREFIX = '{"s":';

export const isCarried = (line: string): boolean => line.startsWith(PREFIX);

export class SpanCarrier {
  /** Carried lines whose journal copy is not known to be on disk yet, by number: a rewrite keeps them. */
  private readonly kept = new Map<number, string>();

  /**
   * `file` is the spans file; `found`, the carried lines its load read (handed to the rule store once,
   * so spans.jsonl is not read twice at start).
   */
  constructor(
    private readonly file: AppendFile,
    private found: string[] | undefined,
  ) {}

  /**
   * `write` runs before each write of the spans file (the rules journal's writePending): the journal
   * lines of the copies it carries are written first, before the export is answered.
   */
  writeFirst(write: () => void): void {
    this.file.beforeWrite = write;
  }

  /** The carried lines read at load, once (later calls answer undefined). */
  takeFound(): string[] | undefined {
    const found = this.found;
    this.found = undefined;
    return found;
  }

  /**
   * Appends the copy of journal line `seq` to the spans file, in this turn's commit (with the spans
   * appended in the same turn); resolves once it is on disk. The line is kept for rewrites until
   * `synced` (the journal's own copy on disk) resolves; if that fails, it is kept for good.
   */
  carry(seq: number, line: string, synced: Promise<void>): Promise<void> {
    this.keep(seq, line, synced);
    return this.file.append(`${line}\n`);
  }

  /** Keeps line `seq` for rewrites until `until` resolves (lines recovered at start: until the snapshot holds them). */
  keep(seq: number, line: string, until: Promise<void>): void {
    this.kept.set(seq, line);
    until.then(
      () => this.kept.delete(seq),
      () => {},
    );
  }

  /** The lines a rewrite of the spans file must hold besides its spans ('' when none). */
  keptText(): string {
    let text = '';
    for (const line of this.kept.values()) text += `${line}\n`;
    return text;
  }
}
