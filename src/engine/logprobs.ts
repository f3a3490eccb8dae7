// Log-probability scoring (G-Eval, Liu et al. 2023): instead of writing a 0..1 score, the model
// writes its justification and then a grade on the integer scale 1-5, and the score is the
// probability-weighted mean of the grade tokens, E[g] = sum g * p(g), mapped to 0..1 as (E[g] - 1) / 4.
// The weighting turns a coarse 5-step scale into a fine one and rewards a model that is unsure
// between two grades with a score between them, rather than a coin flip.
//
// One call, not two. The answer is a JSON object whose LAST field is the grade
// ({"justification": ..., "not_applicable": ..., "grade": 4}), asked for through the JSON-schema
// response format (or JSON in the prompt where that is not honoured; never a tool call, whose
// arguments carry no log-probabilities). The grade token is then found from the end of the text:
// the only digit between `"grade":` and the closing `}`. One call keeps the grade conditioned on the
// justification the model just wrote (the point of writing it first), costs one prompt instead of
// two and one round trip instead of two; a second call with max_tokens 1 would find the token
// trivially but pay the whole prompt again and double the latency. A token may carry more than the
// digit (`:4` or `4}` in some tokenizers): the alternatives are matched with the same text around
// the digit (logprobs.test.ts covers these).
//
// No silent fallback: a provider that returns no log-probabilities fails the result with a clear
// error (kind `rejected`, not retried); evaluator writes refuse models known to lack them
// (domain/evaluator-models.ts).
import { z } from 'zod';
import type { Verdict } from './answer.ts';
import type { JudgeModel, StructuredAnswer, StructuredCall, TokenLogprob } from './providers/model.ts';
import { ModelCallError } from './providers/model-errors.ts';
import { callStructured, type CallOutcome, type Checked, type StructuredCallSpec } from './structured-call.ts';
import type { ModelCapabilities } from '../schemas.ts';
import { SCORE_TOOL } from './prompt.ts';
import { justifiedAnswerTool } from './answer-tool.ts';

/** Alternatives asked for per token: every grade that is not among them has less probability than the least shown. */
export const TOP_LOGPROBS = 10;
export const GRADES = [1, 2, 3, 4, 5] as const;

/** The answer asked for: the justification first, the grade last (so its token is found from the end). */
export const GRADE_TOOL = justifiedAnswerTool({
  name: 'submit_grade',
  description: 'Record your evaluation of the response: the justification first, then the grade from 1 to 5 decided from it.',
  justification: 'Your reasoning, written before the grade: quote the parts of the response that meet or miss the rubric, name the most severe failure, then the band.',
  verdict: {
    not_applicable: { type: 'boolean', description: 'true only when the evaluator does not apply to this response at all; then grade is null.' },
    grade: {
      type: ['integer', 'null'],
      enum: [1, 2, 3, 4, 5, null],
      description: '1 = fails the rubric entirely, 5 = fully meets it; null only when not_applicable is true. Always the last field.',
    },
  },
  required: ['not_applicable', 'grade'],
});

/** Appended to the user prompt, so the system prompt (the cached prefix) stays the same bytes. */
export const GRADE_INSTRUCTION = [
  '',
  '# Answer on the grade scale',
  `For this evaluation, answer through ${GRADE_TOOL.name} instead of ${SCORE_TOOL.name}: a JSON object with the justification first, then not_applicable, then the grade LAST, an integer from 1 to 5 instead of a score from 0 to 1.`,
  'Grade 1 is a score of 0 (fails the rubric entirely), 2 is 0.25, 3 is 0.5, 4 is 0.75, 5 is 1 (fully meets it); a scored example of score s stands for the grade nearest to 1 + 4s.',
].join('\n');

export interface GradeDistribution {
  /** Probability of each grade 1..5, normalised over the grade tokens found. */
  probabilities: Record<string, number>;
  /** E[g] mapped to 0..1: (E[g] - 1) / 4, rounded to 4 decimals. */
  score: number;
}

const round4 = (x: number) => Math.round(x * 10_000) / 10_000;
const squash = (s: string) => s.replace(/\s+/g, '');
/** The grade's digit at the end of the answer text: `"grade": 4}` (optionally closed by a ``` fence). */
const GRADE_AT_END = /"grade"\s*:\s*([1-5])\s*\}\s*(?:```)?\s*$/;

/**
 * The grade distribution from the answer's token log-probabilities, or why it cannot be had.
 * The text is the tokens joined (what the model wrote); the grade token is the one holding the
 * digit of the last field. Its alternatives count for grade g when they read as the same token with
 * g in the digit's place (whitespace aside); their probabilities are summed per grade and normalised.
 */
export function gradeDistribution(tokens: TokenLogprob[]): GradeDistribution | { problem: string } {
  const text = tokens.map((t) => t.token).join('');
  const match = GRADE_AT_END.exec(text);
  if (!match) return { problem: 'the answer text does not end with the grade field ("grade": 1 to 5, then })' };
  const at = match.index + match[0].indexOf(match[1], match[0].indexOf(':'));
  let start = 0;
  let index = 0;
  while (start + tokens[index].token.length <= at) start += tokens[index++].token.length;
  const chosen = tokens[index];
  const prefix = squash(chosen.token.slice(0, at - start));
  const suffix = squash(chosen.token.slice(at - start + 1));
  const mass: Record<string, number> = Object.fromEntries(GRADES.map((g) => [String(g), 0]));
  const seen = new Set<string>();
  for (const alt of [{ token: chosen.token, logprob: chosen.logprob }, ...chosen.top]) {
    if (seen.has(alt.token) || !Number.isFinite(alt.logprob)) continue;
    seen.add(alt.token);
    const body = squash(alt.token);
    if (body.length !== prefix.length + 1 + suffix.length || !body.startsWith(prefix) || !body.endsWith(suffix)) continue;
    const digit = body[prefix.length];
    if (digit in mass) mass[digit] += Math.exp(alt.logprob);
  }
  const total = Object.values(mass).reduce((a, b) => a + b, 0);
  if (!(total > 0)) return { problem: 'the grade token has no probability' };
  const probabilities = Object.fromEntries(Object.entries(mass).map(([g, m]) => [g, round4(m / total)]));
  const expected = Object.entries(mass).reduce((sum, [g, m]) => sum + Number(g) * (m / total), 0);
  return { probabilities, score: round4((expected - 1) / 4) };
}

const GradeAnswer = z
  .object({
    justification: z.string().trim().min(1, 'justification is empty'),
    not_applicable: z.boolean().default(false),
    grade: z.number().int().min(1, 'grade is below 1').max(5, 'grade is above 5').nullable().optional(),
  })
  .refine((a) => a.not_applicable || (a.grade !== null && a.grade !== undefined), { path: ['grade'], message: 'grade is missing: give an integer from 1 to 5' });

// No stated confidence here: the grade distribution is the confidence (confidence.ts).
export type GradedVerdict = Omit<Verdict, 'confidence'> & { grade_probabilities?: Record<string, number> };

/** What the wrapper hands the structured-call loop: the verdict, the score already weighted. */
function checkGraded(input: unknown): Checked<GradedVerdict> {
  const value = input as GradedVerdict;
  return { ok: true, value };
}

/**
 * The judge model with log-probabilities asked for: answers carry the weighted score, or the call
 * fails (no log-probabilities: `rejected`, not retried; an unusable grade answer: `malformed`, asked again).
 */
class LogprobsModel implements JudgeModel {
  readonly configured: boolean;
  constructor(private readonly inner: JudgeModel) {
    this.configured = inner.configured;
  }

  async call(request: StructuredCall, signal?: AbortSignal): Promise<StructuredAnswer> {
    const answer = await this.inner.call({ ...request, topLogprobs: TOP_LOGPROBS }, signal);
    const spent = { usage: answer.usage, model: answer.model };
    if (!answer.logprobs?.length) {
      throw new ModelCallError(
        'rejected',
        `The judge model ${request.model} returned no token log-probabilities, which scoring "logprobs" needs: use a model whose provider returns them (POST /v1/models/{id}/verify/ shows capabilities.logprobs), or set the evaluator's scoring to "direct".`,
        spent,
      );
    }
    const parsed = GradeAnswer.safeParse(answer.input);
    if (!parsed.success) {
      const reason = parsed.error.issues.map((i) => `${i.path.join('.') || 'answer'}: ${i.message}`).join('; ');
      throw new ModelCallError('malformed', `The judge model's answer did not match the grade schema (${reason}).`, spent);
    }
    const { justification, not_applicable, grade } = parsed.data;
    if (not_applicable) return { ...answer, input: { justification, score: null, not_applicable: true } satisfies GradedVerdict };
    const distribution = gradeDistribution(answer.logprobs);
    if ('problem' in distribution) {
      throw new ModelCallError('malformed', `The grade ${grade} could not be found among the answer's log-probabilities: ${distribution.problem}.`, spent);
    }
    const verdict: GradedVerdict = { justification, score: distribution.score, not_applicable: false, grade_probabilities: distribution.probabilities };
    return { ...answer, input: verdict };
  }
}

/**
 * The structured-call loop for an evaluator with scoring "logprobs": the same prompt with the grade
 * instruction appended, answered as JSON text (JSON schema where the model honours it) with
 * log-probabilities, and scored as the weighted mean grade.
 */
export function callLogprobs(model: JudgeModel, spec: StructuredCallSpec<Verdict>, capabilities?: ModelCapabilities | null): Promise<CallOutcome<GradedVerdict>> {
  const strategy = capabilities && !capabilities.json_schema ? 'json' : 'json_schema';
  return callStructured(new LogprobsModel(model), {
    attempts: spec.attempts,
    request: (problems) => {
      const base = spec.request(problems);
      return { ...base, prompt: base.prompt + '\n' + GRADE_INSTRUCTION, tool: GRADE_TOOL, strategy };
    },
    check: checkGraded,
  });
}
