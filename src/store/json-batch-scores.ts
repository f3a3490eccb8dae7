// The scores of ended batch runs (completed, failed, cancelled), kept in memory in columns by the JSON
// store, so an experiment's compare reads a run's scores without reading its rows file again (2 x 20
// MB for two runs of 10,000 rows) nor parsing each line's scores prefix a second time: `load` already
// parses every prefix to index the file (positionOf), and hands the scores here on the way.
//
// - Columns, not an object per row: a row of three results costs about 330 bytes here (its two id
//   strings, typed columns of numbers, each result's evaluator as a number into the run's names),
//   against about 700 as decoded objects. Measured: docs/BENCHMARKS.md, "Experiments compare".
// - Bounded: KEPT_ROWS rows over all runs, the least recently used run dropped first (then its pages
//   are read from the file as before). A run larger than the cap is not kept at all.
// - Exact: a cancelled or failed run may still record rows that were in flight at its end, so the
//   store adds every row it appends to a kept run here, after its line is fsynced; and a run whose
//   index is dropped is dropped here too, so the two always hold the same positions.
import type { BatchRowScores } from './types.ts';
import type { ScoresLine } from './json-batch-rows.ts';

/** Rows kept over all runs: about 330 bytes each (measured), so some 13 MB at most (four runs of 10,000 rows). */
export const KEPT_ROWS = 40_000;

type Result = BatchRowScores['evaluator_results'][number];
const NOT_APPLICABLE = 1;
const HAS_CONFIDENCE = 2;

/** A column of numbers that grows as rows come: 8 bytes a value, where a JS array of doubles costs 20 or more. */
class Numbers {
  private values = new Float64Array(1024);
  length = 0;
  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
  }
  at(i: number): number {
    return this.values[i];
  }
}

// null is kept as NaN in number columns: JSON has no NaN, so a score or an index is never one.
const orNaN = (v: number | null) => (v === null ? Number.NaN : v);
const orNull = (v: number) => (Number.isNaN(v) ? null : v);

/** One run's scores, a slot per row in the order they were added. */
class RunScores {
  private readonly slotOf = new Map<number, number>();
  private readonly item: Array<string | null> = [];
  private readonly log: Array<string | null> = [];
  private readonly error: Array<string | null> = [];
  private readonly index = new Numbers();
  private readonly score = new Numbers();
  /** Where each slot's results start in the flat columns below (they end where the next slot's start). */
  private readonly from = new Numbers();
  /** Evaluator (id, name) pairs, each once per run; `evaluator` holds their numbers. */
  private readonly names: Array<[string, string]> = [];
  private readonly nameNo = new Map<string, number>();
  private readonly evaluator = new Numbers();
  private readonly resultScore = new Numbers();
  /** NOT_APPLICABLE | HAS_CONFIDENCE per result. */
  private readonly flags = new Numbers();
  private readonly confidence = new Numbers();
  private results = 0;

  get size() {
    return this.from.length;
  }

  add([position, item_id, index, execution_log_id, score, error, results]: ScoresLine): void {
    if (this.slotOf.has(position)) return;
    this.slotOf.set(position, this.from.length);
    this.item.push(item_id);
    this.log.push(execution_log_id);
    this.error.push(error);
    this.index.push(orNaN(index));
    this.score.push(orNaN(score));
    this.from.push(this.results);
    for (const r of results) {
      this.evaluator.push(this.nameOf(r[0], r[1]));
      this.resultScore.push(orNaN(r[2]));
      this.flags.push((r[3] === 1 ? NOT_APPLICABLE : 0) | (r.length === 5 ? HAS_CONFIDENCE : 0));
      this.confidence.push(r.length === 5 ? orNaN(r[4] as number) : 0);
      this.results++;
    }
  }

  /** The number of an evaluator's (id, name): a run has a few, so a scan finds them without building a key per result (done for every row at start). */
  private nameOf(id: string, name: string): number {
    const few = Math.min(this.names.length, 8);
    for (let no = 0; no < few; no++) if (this.names[no][0] === id && this.names[no][1] === name) return no;
    const key = `${id}\n${name}`;
    let no = this.nameNo.get(key);
    if (no === undefined) {
      no = this.names.push([id, name]) - 1;
      this.nameNo.set(key, no);
    }
    return no;
  }

  delete(position: number): void {
    // Only a torn last line is taken back (at load, before anything reads): its slot is the last.
    const slot = this.slotOf.get(position);
    if (slot === undefined) return;
    if (slot !== this.from.length - 1) throw new Error('only the last row added can be taken back');
    this.slotOf.delete(position);
    this.results = this.from.at(slot);
    for (const column of [this.item, this.log, this.error]) column.pop();
    for (const column of [this.index, this.score, this.from]) column.length = slot;
    for (const column of [this.evaluator, this.resultScore, this.flags, this.confidence]) column.length = this.results;
  }

  /** The scores of a row, as parseScores would decode its line; undefined when not kept. */
  get(position: number): BatchRowScores | undefined {
    const slot = this.slotOf.get(position);
    if (slot === undefined) return undefined;
    const end = slot + 1 < this.from.length ? this.from.at(slot + 1) : this.results;
    const evaluator_results: Result[] = [];
    for (let k = this.from.at(slot); k < end; k++) {
      const [evaluator_id, evaluator_name] = this.names[this.evaluator.at(k)];
      const result: Result = { evaluator_id, evaluator_name, score: orNull(this.resultScore.at(k)) };
      const flags = this.flags.at(k);
      if (flags & NOT_APPLICABLE) result.not_applicable = true;
      if (flags & HAS_CONFIDENCE) result.confidence = orNull(this.confidence.at(k)) as number; // as the line had it
      evaluator_results.push(result);
    }
    const index = orNull(this.index.at(slot));
    return { position, item_id: this.item[slot], index, execution_log_id: this.log[slot], score: orNull(this.score.at(slot)), error: this.error[slot], evaluator_results };
  }
}

/** The kept runs, least recently used first. */
export class KeptScores {
  private readonly runs = new Map<string, RunScores>();
  private rows = 0;

  constructor(private readonly cap = KEPT_ROWS) {}

  /** A new, empty keeping of a run (replacing any before), to be filled by `add` as its file is indexed. */
  start(id: string): void {
    this.drop(id);
    this.runs.set(id, new RunScores());
  }

  /** Adds a row's scores to a kept run (nothing when the run is not kept); drops runs over the cap. */
  add(id: string, scores: ScoresLine): void {
    const run = this.runs.get(id);
    if (!run) return;
    const before = run.size;
    try {
      run.add(scores);
    } catch {
      // Scores the columns cannot hold (a line edited by hand): the run is read from its file instead.
      this.rows -= before;
      this.runs.delete(id);
      return;
    }
    this.rows += run.size - before;
    if (this.rows > this.cap) this.trim(id);
  }

  /** Takes back a row added last (a torn line cut off at load). */
  delete(id: string, position: number): void {
    const run = this.runs.get(id);
    if (!run) return;
    const before = run.size;
    run.delete(position);
    this.rows -= before - run.size;
  }

  drop(id: string): void {
    const run = this.runs.get(id);
    if (!run) return;
    this.rows -= run.size;
    this.runs.delete(id);
  }

  /** The scores of these positions in order, or undefined when the run is not kept (read the file). */
  page(id: string, positions: number[]): BatchRowScores[] | undefined {
    const run = this.runs.get(id);
    if (!run) return undefined;
    this.runs.delete(id);
    this.runs.set(id, run); // most recently used last
    const out = new Array<BatchRowScores>(positions.length);
    for (let i = 0; i < positions.length; i++) {
      const scores = run.get(positions[i]);
      if (!scores) return undefined; // not expected (kept with the index); the file answers
      out[i] = scores;
    }
    return out;
  }

  /** Drops the least recently used runs until the rows fit; `adding` goes last, and alone over the cap is dropped too. */
  private trim(adding: string): void {
    for (const [id] of this.runs) {
      if (this.rows <= this.cap) return;
      if (id !== adding) this.drop(id);
    }
    if (this.rows > this.cap) this.drop(adding);
  }
}
