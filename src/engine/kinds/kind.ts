// The one signature every scoring kind has (docs/ARCHITECTURE.md, "where a new thing goes"). A kind
// says which evaluators it scores (`matches`, from what is scored alone, so the runs know before any
// model is resolved whether one is needed) and scores one of them (`run`). The tables (table.ts)
// list the kinds in order; the first that matches scores, and `next` hands the job to the kinds after
// it (a cache wraps whatever scores on a miss; a jury scores each juror with the model-call kinds).
// A kind never throws for a failed model call: the failure is part of what it returns.
import type { RequestContext } from '../../context.ts';
import type { RunInput } from '../../conversation/validate.ts';
import type { EvaluatorResult } from '../../schemas.ts';
import type { EvaluatorRecord } from '../../store/types.ts';
import type { Compared, PreparedPair, RuleVerdict } from '../pairwise.ts';
import type { JudgeModel } from '../providers/model.ts';
import type { ModelErrorKind } from '../providers/model-errors.ts';
import type { ResultCacheOptions } from '../result-cache.ts';
import type { ScoringTarget } from '../target.ts';

export interface Kind<Subject, Job extends Subject, Result> {
  readonly name: string;
  /** Whether it calls a judge model: the runs resolve the models (and refuse a missing one) only when a kind of the run does. */
  readonly usesModel: boolean;
  matches(subject: Subject): boolean;
  run(job: Job, next: (job: Job) => Promise<Result>): Promise<Result>;
}

/** What the scoring tools share for every evaluator of one run. */
export interface Scoring {
  ctx: Pick<RequestContext, 'config'>;
  /** The server's judge model: an evaluator without a target scores with it. */
  model: JudgeModel;
  /** The organization whose code evaluators run (their sandbox) and whose result cache is read. */
  orgId: string;
  /** Each model name's target (a jury's jurors have one each). */
  targets: ReadonlyMap<string, ScoringTarget>;
  /** The result cache, for the runs that ask for it (use_cache). */
  cache?: ResultCacheOptions;
}

/** One evaluator scoring one response. */
export interface ScoreSubject {
  evaluator: EvaluatorRecord;
  input: RunInput;
  /** Why the judged text is degenerate (degenerate.ts), found once per run; null when it is not. */
  degenerate: string | null;
}

export interface ScoreJob extends ScoreSubject, Scoring {
  /** The target this evaluator scores with (a juror's, inside a jury). */
  target?: ScoringTarget;
}

/** One scored evaluator: the result, and why it failed when it did. */
export interface Scored {
  result: EvaluatorResult;
  failure?: ModelErrorKind;
}

/** One evaluator comparing two responses. */
export interface CompareSubject {
  evaluator: EvaluatorRecord;
  pair: PreparedPair;
  /** The verdict the rules give without a model (identical or degenerate responses), found once per comparison. */
  rule: RuleVerdict | null;
}

export interface CompareJob extends CompareSubject, Scoring {
  /** Response b as a run's input (response a's is pair.run): code and check evaluators score each side. */
  runB: RunInput;
}

export type { Compared } from '../pairwise.ts';

export type ScoringKind = Kind<ScoreSubject, ScoreJob, Scored>;
export type ComparingKind = Kind<CompareSubject, CompareJob, Compared>;

/** The first kind of the table that matches. */
export function kindOf<S, J extends S, R>(table: ReadonlyArray<Kind<S, J, R>>, subject: S, from = 0): { kind: Kind<S, J, R>; at: number } {
  for (let at = from; at < table.length; at++) if (table[at].matches(subject)) return { kind: table[at], at };
  // The tables end with a kind that matches everything (table.ts), so this is a table's mistake.
  throw new Error(`no scoring kind after position ${from} matches`);
}

/** Scores the job with the first kind that matches; its `next` goes on with the kinds after it. */
export function runKinds<S, J extends S, R>(table: ReadonlyArray<Kind<S, J, R>>, job: J, from = 0): Promise<R> {
  const { kind, at } = kindOf(table, job, from);
  return kind.run(job, (next) => runKinds(table, next, at + 1));
}
