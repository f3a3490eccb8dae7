// The tiny real call `verify` makes on a registered model: a one-field answer, so it costs a few
// tokens. A step that the server refuses (400) or answers unusably means "not supported"; a fault
// that says the model cannot be used at all (key refused, unreachable, rate limited) ends verify
// with that error, so the caller sees the provider's own words.
import { ModelCallError } from './model-errors.ts';

export const PROBE_TOOL = {
  name: 'submit_check',
  description: 'Confirms the judge model can answer in a structured form',
  input_schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'], additionalProperties: false },
};
export const PROBE_SYSTEM = 'You are checking that structured answers work.';
export const PROBE_PROMPT = 'Answer with ok set to true.';

/** True when the step gave a usable answer, false when the server does not support it; other faults throw. */
export async function probeStep(step: () => Promise<unknown>): Promise<boolean> {
  try {
    await step();
    return true;
  } catch (err) {
    if (err instanceof ModelCallError && (err.kind === 'malformed' || err.kind === 'rejected')) return false;
    throw err;
  }
}
