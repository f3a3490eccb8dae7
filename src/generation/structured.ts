// One generation step = one structured model call whose answer is validated (zod shape, then the
// step's own checks) and retried with the problems spelled out. A step that still fails after its
// retries is a model_unavailable error: the caller stores nothing.
import { z } from 'zod';
import { TribunalError } from '../errors.ts';
import type { JudgeModel, StructuredAnswer, StructuredCall } from '../engine/model.ts';
import { ModelCallError } from '../engine/model-errors.ts';

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

export interface StepUsage {
  calls: number;
  input_tokens: number;
  output_tokens: number;
}

export function toolSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
}

const describeIssues = (error: z.ZodError) =>
  error.issues.map((i) => `${i.path.length ? i.path.map(String).join('.') : '(answer)'}: ${i.message}`);

export async function runStep<T>(model: JudgeModel, modelName: string, step: Step<T>, usage: StepUsage): Promise<T> {
  const tool = { name: step.tool, description: step.description, input_schema: toolSchema(step.schema) };
  let problems: string[] = [];
  for (let attempt = 1; attempt <= STEP_ATTEMPTS; attempt++) {
    const prompt = problems.length
      ? `${step.prompt}\n\n<previous_answer_rejected>\nYour previous answer could not be used:\n${problems.map((p) => `- ${p}`).join('\n')}\nCall ${step.tool} again with a corrected, complete answer.\n</previous_answer_rejected>`
      : step.prompt;
    const call: StructuredCall = {
      model: modelName,
      system: step.system,
      prompt,
      tool,
      // The model adds the thinking budget to max_tokens itself: this is the answer's own allowance.
      maxTokens: step.maxTokens,
      ...(step.thinkingBudget > 0 ? { thinkingBudget: step.thinkingBudget } : {}),
    };
    let answer: StructuredAnswer;
    usage.calls++;
    try {
      answer = await model.call(call);
    } catch (err) {
      const error = err instanceof ModelCallError ? err : new ModelCallError('server_error', `Unexpected failure calling the judge model: ${(err as Error)?.message ?? err}`);
      usage.input_tokens += error.usage.input_tokens;
      usage.output_tokens += error.usage.output_tokens;
      if (error.kind === 'malformed') {
        problems = [error.message];
        continue;
      }
      throw unavailable(step.tool, error);
    }
    usage.input_tokens += answer.usage.input_tokens;
    usage.output_tokens += answer.usage.output_tokens;
    const parsed = step.schema.safeParse(answer.input);
    if (!parsed.success) {
      problems = describeIssues(parsed.error);
      continue;
    }
    problems = step.check?.(parsed.data) ?? [];
    if (!problems.length) return parsed.data;
  }
  throw new TribunalError(
    'model_unavailable',
    502,
    `The judge model gave an unusable answer to ${step.tool} ${STEP_ATTEMPTS} times (last problems: ${problems.join('; ')}). ` +
      'Nothing was stored. Try again, or give a clearer intent or a higher reasoning_effort.',
  );
}

/** A failed call (after the model layer's own retries) as the error the caller sees. */
function unavailable(tool: string, error: ModelCallError): TribunalError {
  const status = error.kind === 'timeout' ? 504 : error.kind === 'rate_limited' || error.kind === 'overloaded' ? 503 : 502;
  const tries = error.attempts > 1 ? ` (gave up after ${error.attempts} attempts)` : '';
  return new TribunalError('model_unavailable', status, `Judge generation stopped at step ${tool}: ${error.message}${tries} Nothing was stored; try again later.`);
}
