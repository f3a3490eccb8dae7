// The tables of scoring kinds, in the order they are tried: the first kind that matches an
// evaluator scores it (kind.ts). Adding a kind is a file beside this one and an entry here, placed
// before the kinds it should win over (docs/ARCHITECTURE.md, "where a new thing goes").
import { cachedKind } from './cached.ts';
import { checksComparingKind, checksKind } from './checks.ts';
import { degenerateKind, rulesKind } from './degenerate.ts';
import { juryKind } from './jury.ts';
import type { ComparingKind, ScoringKind } from './kind.ts';
import { logprobsKind } from './logprobs.ts';
import { pairwiseKind } from './pairwise.ts';
import { toolKind } from './tool.ts';

/** The kinds that ask a model for one evaluator's verdict: what a juror and a cache miss come down to. */
export const MODEL_CALL_KINDS: readonly ScoringKind[] = [logprobsKind, toolKind];

/**
 * Scoring one response: a degenerate response scores 0 without a model (check and code evaluators
 * too); check and code evaluators score without a model and without the cache; use_cache reuses an
 * earlier result; a jury scores with each juror; then one model call.
 */
export const SCORING_KINDS: readonly ScoringKind[] = [degenerateKind, checksKind, cachedKind, juryKind, ...MODEL_CALL_KINDS];

/** Comparing two responses: the rules that need no model, check and code evaluators, then the model in both orders. */
export const COMPARING_KINDS: readonly ComparingKind[] = [rulesKind, checksComparingKind, pairwiseKind];
