// Validates the model's tool input. The score comes only from the structured answer, never from
// free text; an answer that is not exactly {justification: non-empty string, score: number in
// 0..1} is malformed, and the engine asks again.
import { z } from 'zod';

const Answer = z.object({
  justification: z.string().trim().min(1, 'justification is empty'),
  score: z.number().finite().min(0, 'score is below 0').max(1, 'score is above 1'),
});

export type ParsedAnswer = { ok: true; justification: string; score: number } | { ok: false; reason: string };

export function parseAnswer(input: unknown): ParsedAnswer {
  const parsed = Answer.safeParse(input);
  if (parsed.success) {
    // Rounded to 4 decimals: the model's float noise (0.7000000000000001) is not signal.
    return { ok: true, justification: parsed.data.justification, score: Math.round(parsed.data.score * 10_000) / 10_000 };
  }
  const reason = parsed.error.issues.map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`).join('; ');
  return { ok: false, reason: `The judge model's answer did not match the answer schema (${reason}).` };
}
