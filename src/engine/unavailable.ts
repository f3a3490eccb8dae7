import { TribunalError } from '../errors.ts';
import type { ScoringEngine } from './types.ts';

/** Stand-in until the scoring engine lands: says so instead of inventing a score. */
export const unavailableEngine: ScoringEngine = {
  async runJudge() {
    throw new TribunalError('not_available', 501, 'Scoring is not available yet on this server.');
  },
  async runEvaluator() {
    throw new TribunalError('not_available', 501, 'Scoring is not available yet on this server.');
  },
};
