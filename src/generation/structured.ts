// One generation step = one structured model call (engine/structured-call.ts, the loop scoring uses
// too) whose answer is validated (zod shape, then the step's own checks) and retried with the
// problems spelled out. A step that still fails after its
// retries is a model_unavailable error: the caller stores nothing.
import { z } from 'zod';
import { TribunalError } from '../errors.ts';
import type { JudgeModel, StructuredCall } from '../engine/providers/model.ts';
import { callStructured, failureStatus, gaveUp } from '../engine/structured-call.ts';

/** Attempts per step: the first answer plus at most two retries. */
export const STEP_ATTEMPTS = 3;

export interface Step<T> {
  tool: string;
  description: string;
  /** The answer's shape; its JSON Schema is the forced tool's input_schema. */
  schema: z.ZodType<T>;
  system: string;
  prompt: string;
  maxTokens: number;
  thinkingBudget: number;
  /** Problems with a well-shaped answer (unknown preset ids, empty lists...); [] when it is usable. */
  check?: (answer: T) => string[];
}

export function toolSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

const describeIssues = (error: z.ZodError) => error.issues.map((i) => `${i.path.length ? i.path.map(String).join('.') : '(answer)'}: ${i.message}`);

export async function runStep<T>(model: JudgeModel, modelName: string, step: Step<T>): Promise<T> {
  const tool = { name: step.tool, description: step.description, input_schema: toolSchema(step.schema) };
  const outcome = await callStructured(model, {
    attempts: STEP_ATTEMPTS,
    request: (problems): StructuredCall => ({
      model: modelName,
      system: step.system,
      prompt: problems.length
        ? `${step.prompt}\n\n<previous_answer_rejected>\nYour previous answer could not be used:\n${problems.map((p) => `- ${p}`).join('\n')}\nCall ${step.tool} again with a corrected, complete answer.\n</previous_answer_rejected>`
        : step.prompt,
      tool,
      // The model adds the thinking budget to max_tokens itself: this is the answer's own allowance.
      maxTokens: step.maxTokens,
      ...(step.thinkingBudget > 0 ? { thinkingBudget: step.thinkingBudget } : {}),
    }),
    check: (input) => {
      const parsed = step.schema.safeParse(input);
      if (!parsed.success) return { ok: false, problems: describeIssues(parsed.error) };
      const problems = step.check?.(parsed.data) ?? [];
      return problems.length ? { ok: false, problems } : { ok: true, value: parsed.data };
    },
  });
  if (outcome.ok) return outcome.value;
  const { failure } = outcome;
  if (failure.kind === 'malformed') {
    throw new TribunalError(
      'model_unavailable',
      failureStatus([failure.kind]),
      `The judge model gave an unusable answer to ${step.tool} ${STEP_ATTEMPTS} times (last problems: ${failure.problems.join('; ')}). ` +
        'Nothing was stored. Try again, or give a clearer intent or a higher reasoning_effort.',
    );
  }
  throw new TribunalError(
    'model_unavailable',
    failureStatus([failure.kind]),
    `Judge generation stopped at step ${step.tool}: ${failure.message}${gaveUp(failure)} Nothing was stored; try again later.`,
  );
}
