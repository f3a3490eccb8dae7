// Validates the model's tool input. The score comes only from the structured answer, never from
// free text; an answer that is not {justification: non-empty string, score: number in 0..1} or
// {justification, not_applicable: true} is malformed, and the engine asks again. The confidence the
// model states beside its score (SPEC section 16) is read strictly but never fails an answer: a
// missing, non-numeric or out-of-range confidence is null, as one the model did not give.
import { z } from 'zod';
import type { Checked } from './structured-call.ts';

const Answer = z
  .object({
    justification: z.string().trim().min(1, 'justification is empty'),
    not_applicable: z.boolean().default(false),
    score: z.number().finite().min(0, 'score is below 0').max(1, 'score is above 1').nullable().optional(),
    confidence: z.unknown().optional(),
  })
  .refine((a) => a.not_applicable || (a.score !== null && a.score !== undefined), {
    path: ['score'],
    message: 'score is missing: give a number from 0 to 1, or set not_applicable to true',
  });

/** A usable answer: a score, or not applicable (score null). */
export interface Verdict {
  justification: string;
  score: number | null;
  not_applicable: boolean;
  /** The model's stated confidence, 0..1, or null (not given, not a number, or outside 0..1; and always when not applicable). */
  confidence: number | null;
}

/** A stated confidence: a finite number in 0..1 (rounded to 3 decimals), else null. A string such as "0.8" is not taken. */
export function statedConfidence(value: unknown): number | null {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) return null;
  return Math.round(value * 1000) / 1000;
}

/**
 * The answer checked: a well-formed one (nearly every answer) by a few plain tests, anything else
 * by the schema, which also words what is wrong. The plain tests accept exactly what the schema
 * accepts and give the same verdict (test/engine-units.test.ts holds them side by side); they skip
 * the schema's parse, its copy of the answer and its refinement, several microseconds a call.
 */
export function parseAnswer(input: unknown): Checked<Verdict> {
  return wellFormed(input) ?? parseAnswerBySchema(input);
}

/** The verdict of an answer the schema surely accepts, else undefined (the schema then decides). */
function wellFormed(input: unknown): Checked<Verdict> | undefined {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return undefined;
  const answer = input as Record<string, unknown>;
  const given = answer.justification;
  if (typeof given !== 'string') return undefined;
  const justification = given.trim();
  const { not_applicable, score } = answer;
  if (!justification || (not_applicable !== undefined && typeof not_applicable !== 'boolean')) return undefined;
  const scoreOk = typeof score === 'number' && Number.isFinite(score) && score >= 0 && score <= 1;
  if (not_applicable === true) {
    return score === undefined || score === null || scoreOk ? { ok: true, value: { justification, score: null, not_applicable: true, confidence: null } } : undefined;
  }
  if (!scoreOk) return undefined;
  return { ok: true, value: { justification, score: Math.round(score * 10_000) / 10_000, not_applicable: false, confidence: statedConfidence(answer.confidence) } };
}

/** The answer checked by the schema alone (the reference the plain tests are held to). */
export function parseAnswerBySchema(input: unknown): Checked<Verdict> {
  const parsed = Answer.safeParse(input);
  if (parsed.success) {
    const { justification, not_applicable, score } = parsed.data;
    // A score given beside not_applicable is dropped: the result is left out of the mean either way.
    if (not_applicable) return { ok: true, value: { justification, score: null, not_applicable: true, confidence: null } };
    // Rounded to 4 decimals: the model's float noise (0.7000000000000001) is not signal.
    const confidence = statedConfidence(parsed.data.confidence);
    return { ok: true, value: { justification, score: Math.round(score! * 10_000) / 10_000, not_applicable: false, confidence } };
  }
  const reason = parsed.error.issues.map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`).join('; ');
  return { ok: false, problems: [`The judge model's answer did not match the answer schema (${reason}).`] };
}
