// A comparison (SPEC section 9, docs/SCORING.md "Pairwise comparison"). Order: check the inputs (two
// responses, or two conversations that share every turn before the compared assistant turn) and
// each evaluator's declared inputs (no model call) -> (the frame, frame.ts: attachments) -> the
// rules that need no model (identical responses tie, a degenerate response loses to a non-degenerate
// one, two degenerate responses tie) -> refuse when the server's model is needed and not configured
// -> the engine asks every evaluator in both orders, all at once -> one log of type "comparison" ->
// the answer, or model_unavailable when every evaluator failed.
import type { RequestContext } from '../context.ts';
import { loadJudgeEvaluators } from '../domain/judges.ts';
import type { Outcome } from '../engine/outcome.ts';
import { comparisonBase, preparePair, tally, textOf, type PreparedPair } from '../engine/pairwise.ts';
import { sumCosts } from '../engine/providers/cost.ts';
import type { ScoringTarget } from '../engine/target.ts';
import type { ComparisonInput, ComparisonResult, EvaluatorResult } from '../schemas.ts';
import type { EvaluatorRecord, ExecutionLogRecord, JudgeRecord } from '../store/types.ts';
import { checkAttachmentTargets } from './attachments.ts';
import type { RunParts } from './execute.ts';
import { addLogLabels, evaluatorHeader, judgeHeader, logOpening, runFrame, type LogHeader } from './frame.ts';
import { checkRequiredInputs } from './inputs.ts';

const NO_TARGETS: ReadonlyMap<string, ScoringTarget> = new Map();

function compare(
  parts: RunParts,
  ctx: RequestContext,
  evaluators: EvaluatorRecord[],
  input: ComparisonInput,
  prepared: PreparedPair,
  header: LogHeader,
  what: string,
): Promise<Outcome<ComparisonResult>> {
  return runFrame<ComparisonResult>(ctx, {
    what,
    lacks: 'preference',
    logged: 'comparison',
    attachments: input.attachments,
    feedsReview: false,
    score: async (attached) => {
      const pair = { ...prepared, attached };
      const subjects = parts.engine.compareSubjects(evaluators, pair);
      let targets = NO_TARGETS;
      if (parts.engine.needsModel(subjects)) {
        targets = await parts.targets.resolve(ctx, evaluators);
        parts.targets.requireModels(targets);
        checkAttachmentTargets(evaluators, targets, pair.attached);
      }
      const compared = await parts.engine.compare({ ctx, orgId: ctx.caller.org.id, targets }, subjects);
      const results = compared.map((c) => c.result);
      const totals = tally(results.map((r) => r.preference));
      const cost = sumCosts(results.map((r) => r.cost_usd));
      // The log's evaluator results in the shape of a run's (score null), the comparison beside them.
      const scoredShape: EvaluatorResult[] = results.map((r) => ({
        ...comparisonBase(evaluators.find((e) => e.id === r.evaluator_id)!),
        score: null,
        justification: r.justification,
        ...(r.degenerate ? { degenerate: true } : {}),
        model: r.model,
        input_tokens: r.input_tokens,
        output_tokens: r.output_tokens,
        cost_usd: r.cost_usd,
        latency_ms: r.latency_ms,
        ...(r.error ? { error: r.error } : {}),
      }));
      return {
        failures: compared.flatMap((c) => (c.failure ? [c.failure] : [])),
        record: (stamp): ExecutionLogRecord => {
          const material = {
            request: input.request,
            response: textOf(pair.a),
            turns: input.turns_a,
            system_prompt: input.system_prompt,
            contexts: input.contexts,
            expected_output: input.expected_output,
          };
          const record = logOpening(stamp, 'comparison', header, material);
          addLogLabels(record, input);
          if (input.attachments?.length) record.attachments = input.attachments;
          return Object.assign(record, {
            evaluator_results: scoredShape,
            score: null,
            cost_usd: cost,
            latency_ms: stamp.latency_ms,
            created_at: stamp.created_at,
            comparison: {
              response_b: textOf(pair.b),
              ...(pair.turns_b ? { turns_b: pair.turns_b } : {}),
              ...totals,
              evaluators: results.map((r) => ({
                evaluator_id: r.evaluator_id,
                preference: r.preference,
                consistent: r.consistent,
                ...(r.degenerate ? { degenerate: true } : {}),
                orders: r.orders,
              })),
            },
          });
        },
        answer: (record) => ({ execution_log_id: record.id, evaluator_results: results, ...totals, cost_usd: cost, latency_ms: record.latency_ms }),
      };
    },
  });
}

export async function compareJudge(parts: RunParts, ctx: RequestContext, judge: JudgeRecord, input: ComparisonInput): Promise<Outcome<ComparisonResult>> {
  const evaluators = await loadJudgeEvaluators(ctx, judge);
  const pair = preparePair(input, evaluators, ctx.config.limits);
  // What the evaluators declare must be there; the two responses share request (or earlier turns), contexts and expected output.
  checkRequiredInputs(evaluators, pair.run);
  return compare(parts, ctx, evaluators, input, pair, await judgeHeader(ctx, judge), `judge ${judge.name}`);
}

export async function compareEvaluator(
  parts: RunParts,
  ctx: RequestContext,
  evaluator: EvaluatorRecord,
  given: ComparisonInput & { project_id?: string },
): Promise<Outcome<ComparisonResult>> {
  const { project_id, ...input } = given;
  const pair = preparePair(input, [evaluator], ctx.config.limits);
  checkRequiredInputs([evaluator], pair.run);
  return compare(parts, ctx, [evaluator], input, pair, await evaluatorHeader(ctx, evaluator, project_id), `evaluator ${evaluator.name}`);
}
