// The inputs a run's evaluators declare (requires_request, requires_turns, requires_contexts,
// requires_expected_output), checked before anything is spent: every missing one at once.
import { TribunalError, type FieldError } from '../errors.ts';
import { hasRequestMaterial, type RunInput } from '../conversation/validate.ts';
import type { EvaluatorRecord } from '../store/types.ts';

const FIELD_HINTS = {
  request: 'pass the input that prompted the response as `request` (or a conversation as `turns`)',
  turns: 'pass the conversation as `turns`, a list of {role, content} turns ending with the assistant turn to judge',
  contexts: 'pass the retrieved snippets the response should be grounded in, as `contexts` (a list of strings)',
  expected_output: 'pass the reference answer as `expected_output`',
} as const;

/** Every missing input of every evaluator at once, before anything is spent. */
export function checkRequiredInputs(evaluators: EvaluatorRecord[], input: RunInput): void {
  const missing: Array<{ evaluator: EvaluatorRecord; field: keyof typeof FIELD_HINTS }> = [];
  const hasContexts = (input.contexts ?? []).some((c) => c.trim() !== '');
  const hasExpected = input.expected_output !== undefined && input.expected_output.trim() !== '';
  const hasRequest = hasRequestMaterial(input);
  for (const evaluator of evaluators) {
    if (evaluator.requires_turns && !input.turns) missing.push({ evaluator, field: 'turns' });
    else if (evaluator.requires_request && !hasRequest) missing.push({ evaluator, field: 'request' });
    if (evaluator.requires_contexts && !hasContexts) missing.push({ evaluator, field: 'contexts' });
    if (evaluator.requires_expected_output && !hasExpected) missing.push({ evaluator, field: 'expected_output' });
  }
  if (!missing.length) return;
  const detail = missing.map((m) => `evaluator ${m.evaluator.name} needs \`${m.field}\`: ${FIELD_HINTS[m.field]}`).join('; ');
  const errors: FieldError[] = missing.map((m) => ({ field: m.field, message: `required by evaluator ${m.evaluator.name} (${m.evaluator.id})` }));
  throw new TribunalError('missing_field', 400, `Missing input, nothing was run: ${detail}.`, { errors });
}
