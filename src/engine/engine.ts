// The scoring engine: pure scoring. It takes what to score (the evaluator versions, the prepared
// input or pair, each model's target, the settings) and returns results; it loads nothing, resolves
// no model and writes no log (the runs do: src/runs/). How each evaluator is scored is its kind's
// (kinds/table.ts). A failed model call is part of a result, never an exception.
import type { RequestContext } from '../context.ts';
import type { RunInput } from '../conversation/validate.ts';
import type { EvaluatorRecord } from '../store/types.ts';
import { kindOf, runKinds, type CompareSubject, type Compared, type Scored, type ScoreJob, type ScoreSubject, type Scoring } from './kinds/kind.ts';
import { COMPARING_KINDS, MODEL_CALL_KINDS, SCORING_KINDS } from './kinds/table.ts';
import { compareEvaluatorPair, ruleVerdict, textOf, type PreparedPair } from './pairwise.ts';
import type { JudgeModel } from './providers/model.ts';
import { degenerateInput } from './scoring.ts';
import type { ScoringTarget } from './target.ts';

/** What the runs give for every evaluator of a run: everything of Scoring but the server's model, which is the engine's. */
export type ScoringSettings = Omit<Scoring, 'model'>;

export class Engine {
  constructor(readonly model: JudgeModel) {}

  /** What each evaluator scores: the input, and whether it is degenerate (found once for the run). */
  scoreSubjects(evaluators: EvaluatorRecord[], input: RunInput): ScoreSubject[] {
    const degenerate = degenerateInput(input);
    return evaluators.map((evaluator) => ({ evaluator, input, degenerate }));
  }

  /** What each evaluator compares: the pair, and the verdict of the rules that need no model (found once). */
  compareSubjects(evaluators: EvaluatorRecord[], pair: PreparedPair): CompareSubject[] {
    const rule = ruleVerdict(pair.a, pair.b);
    return evaluators.map((evaluator) => ({ evaluator, pair, rule }));
  }

  /** Whether any of these scores with a judge model: only then are models resolved and a missing one refused. */
  needsModel(subjects: ScoreSubject[] | CompareSubject[]): boolean {
    return subjects.some((s: ScoreSubject | CompareSubject) => ('pair' in s ? kindOf(COMPARING_KINDS, s) : kindOf(SCORING_KINDS, s)).kind.usesModel);
  }

  /** Scores every evaluator at once (the server-wide limit in the model queues the excess); never throws for a model's failure. */
  score(settings: ScoringSettings, subjects: ScoreSubject[]): Promise<Scored[]> {
    // The job written out: on Node 20 an object of two spreads gets a map of its own every time (scoring.ts).
    const { ctx, orgId, targets, cache } = settings;
    return Promise.all(
      subjects.map((s) =>
        runKinds<ScoreSubject, ScoreJob, Scored>(SCORING_KINDS, {
          ctx,
          orgId,
          targets,
          cache,
          evaluator: s.evaluator,
          input: s.input,
          degenerate: s.degenerate,
          model: this.model,
          target: targets.get(s.evaluator.model ?? ''),
        }),
      ),
    );
  }

  /** Compares with every evaluator at once. */
  compare(settings: ScoringSettings, subjects: CompareSubject[]): Promise<Compared[]> {
    if (!subjects.length) return Promise.resolve([]);
    const { pair } = subjects[0];
    const runB: RunInput = { ...pair.run, response: textOf(pair.b), ...(pair.turns_b ? { turns: pair.turns_b } : {}) };
    return Promise.all(subjects.map((s) => runKinds(COMPARING_KINDS, { ...settings, ...s, model: this.model, runB })));
  }

  /** One evaluator, one model call (the tool call or log-probabilities), nothing else: the quality bench's unit. */
  scoreEvaluator(ctx: Pick<RequestContext, 'config'>, evaluator: EvaluatorRecord, input: RunInput, target?: ScoringTarget): Promise<Scored> {
    return runKinds(MODEL_CALL_KINDS, { ctx, model: this.model, orgId: '', targets: new Map(), evaluator, input, degenerate: null, target });
  }

  /** One evaluator compared in both orders with the model (no rules): the quality bench's unit. */
  compareEvaluatorPair(ctx: Pick<RequestContext, 'config'>, evaluator: EvaluatorRecord, pair: PreparedPair, target?: ScoringTarget): Promise<Compared> {
    return compareEvaluatorPair(ctx, this.model, evaluator, pair, target);
  }
}
