// Answers without a model for degenerate material (../degenerate.ts). Scoring kind "degenerate
// answer": a degenerate response scores 0 with every evaluator (check and code evaluators too).
// Comparing kind "rules": identical responses tie, a degenerate response loses to a non-degenerate
// one, two degenerate responses tie (../pairwise.ts, ruleVerdict).
import { resultBase } from '../../checks/result-base.ts';
import { comparisonBase } from '../pairwise.ts';
import type { ComparingKind, ScoringKind } from './kind.ts';

export const degenerateKind: ScoringKind = {
  name: 'degenerate',
  usesModel: false,
  matches: ({ degenerate }) => degenerate !== null,
  run: async ({ evaluator, degenerate }) => ({
    result: {
      ...resultBase(evaluator, 0, degenerate),
      degenerate: true,
      model: null,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      latency_ms: 0,
    },
  }),
};

export const rulesKind: ComparingKind = {
  name: 'rules',
  usesModel: false,
  matches: ({ rule }) => rule !== null,
  run: async ({ evaluator: e, rule }) => ({
    result: {
      ...comparisonBase(e),
      preference: rule!.preference,
      consistent: true,
      justification: rule!.justification,
      ...(rule!.degenerate ? { degenerate: true } : {}),
      orders: [],
      model: null,
      input_tokens: 0,
      output_tokens: 0,
      cost_usd: 0,
      latency_ms: 0,
    },
  }),
};
