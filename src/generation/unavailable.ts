import { TribunalError } from '../errors.ts';
import type { JudgeGenerator } from './types.ts';

/** Stand-in until judge generation lands: says so instead of inventing a judge. */
export const unavailableGenerator: JudgeGenerator = {
  async generate() {
    throw new TribunalError('not_available', 501, 'Judge generation is not available yet on this server; create a judge from presets with create_judge.');
  },
};
