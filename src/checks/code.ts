// A code evaluator: its score(input) run in the sandbox, its answer validated (a number in 0..1, or
// {score, justification}). Every failure is an outcome with an error, never a throw.
import type { Turn } from '../schemas.ts';
import type { CodeSandbox, SandboxFailure } from './sandbox.ts';

/** What score(input) is given. */
export interface CodeInput {
  request: string | null;
  response: string;
  contexts: string[];
  expected_output: string | null;
  turns: Turn[] | null;
  metadata: Record<string, unknown>;
}

export type CodeOutcome = { ok: true; score: number; justification: string } | { ok: false; error: string };

/** A sample to try code on when it is saved. */
export const SAMPLE_INPUT: CodeInput = {
  request: 'What is the capital of France?',
  response: 'The capital of France is Paris.',
  contexts: ['Paris is the capital and largest city of France.'],
  expected_output: 'Paris',
  turns: null,
  metadata: {},
};

export function describeFailure(f: SandboxFailure): string {
  const at = f.line ? ` (line ${f.line})` : '';
  switch (f.kind) {
    case 'throw':
      return `score(input) threw${at}: ${f.message}`;
    case 'compile':
      return `the code does not compile${at}: ${f.message}`;
    default:
      return `score(input) was stopped: ${f.message}`;
  }
}

const RETURN_HINT = 'return a number in 0..1 or {score, justification}';

/** The answer of score(input) (its JSON text) as a score, or why it is not one. */
export function readAnswer(output: string): CodeOutcome {
  if (output === '') return { ok: false, error: `score(input) returned nothing; ${RETURN_HINT}` };
  let value: unknown;
  try {
    value = JSON.parse(output);
  } catch {
    return { ok: false, error: `score(input) returned something that is not JSON; ${RETURN_HINT}` };
  }
  let score: unknown = value;
  let justification = '';
  if (typeof value === 'boolean') score = value ? 1 : 0;
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const o = value as Record<string, unknown>;
    score = typeof o.score === 'boolean' ? (o.score ? 1 : 0) : o.score;
    if (o.justification !== undefined && typeof o.justification !== 'string') return { ok: false, error: 'score(input) returned a justification that is not a string' };
    justification = (o.justification as string | undefined) ?? '';
  }
  if (typeof score !== 'number' || !Number.isFinite(score)) return { ok: false, error: `score(input) returned ${output.slice(0, 100)}; ${RETURN_HINT}` };
  if (score < 0 || score > 1) return { ok: false, error: `score(input) returned ${score}, outside 0..1` };
  return { ok: true, score, justification: justification || `score(input) returned ${score}.` };
}

export async function runCode(sandbox: CodeSandbox, key: string, code: string, input: CodeInput): Promise<CodeOutcome> {
  const outcome = await sandbox.run(key, code, input);
  return outcome.ok ? readAnswer(outcome.output) : { ok: false, error: describeFailure(outcome.error) };
}
